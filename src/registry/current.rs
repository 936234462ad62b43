//! What is current, and how every service hears that it changed.
//!
//! What a published version contains never changes; what is *current* (which version a skill
//! resolves to, its yank and deprecation state, completions, the private namespaces) does. Those
//! answers are cached here for at most the current TTL ([`RESOLVE_TTL`], or [`FEED_RESOLVE_TTL`]
//! when storage announces every change) and dropped at once on every change this process makes or
//! hears ([`Current::changed`]). A service that keeps its own answers about what is current (the
//! MCP surface's served pages) follows the same rule through [`Current::epoch`].
//!
//! [`RESOLVE_TTL`]: super::RESOLVE_TTL
//! [`FEED_RESOLVE_TTL`]: super::FEED_RESOLVE_TTL

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, broadcast};

use super::cache::{Budget, Cache, CacheId};
use super::facets::Facets;
use super::requires::Graph;
use crate::core::{Namespace, SkillRef, SkillVersion, Visibility};
use crate::error::Result;
use crate::store::{Resolution, ResolvedVersion, Store, VersionId};

type ResolveKey = (SkillRef, Option<SkillVersion>);
/// Namespace or name completion: which, within which namespace, the prefix, and who asks.
pub(super) type CompletionKey = (Completing, Option<Namespace>, String, Visibility);

/// What a cached completion completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Completing {
    Namespace,
    Name,
}

/// The answers about what is current, and the signals a change sends.
pub(super) struct Current {
    store: Arc<dyn Store>,
    resolved: Cache<ResolveKey, ResolvedVersion>,
    /// Namespace and name completions, kept and dropped like resolutions.
    pub(super) completions: Cache<CompletionKey, (Vec<String>, u64)>,
    private: Cache<(), Arc<HashSet<Namespace>>>,
    /// The requirement graph, resolved (`super::requires`).
    requirements: Cache<(), Arc<Graph>>,
    /// The web catalog's counts (`super::facets`) with the catalog generation they were read
    /// at, and the lock that reads them once at a time (a scan of every skill).
    facets: Cache<(), (i64, Arc<Facets>)>,
    reading_facets: Arc<tokio::sync::Mutex<()>>,
    /// The generation storage was last seen at, with the epoch and time it was read at: while
    /// neither moved on, it is the generation still (as resolutions are the same).
    generation_seen: std::sync::Mutex<Option<(i64, u64, std::time::Instant)>>,
    /// Bumped whenever the caches above are dropped: an answer about what is current, kept
    /// elsewhere with the epoch it was made in, is stale once the epoch moved.
    epoch: AtomicU64,
    /// How long an answer about what is current may be kept when nothing is heard.
    ttl: Duration,
    changes: broadcast::Sender<()>,
    /// Wakes the indexer task after a change, when this process keeps an index.
    wake_indexer: Option<Arc<Notify>>,
}

impl Current {
    pub(super) fn new(
        store: Arc<dyn Store>,
        budget: &Budget,
        ttl: Duration,
        wake_indexer: Option<Arc<Notify>>,
    ) -> Self {
        Self {
            store,
            resolved: budget.cache(CacheId::Resolutions, |(skill, _), r| {
                skill.namespace.as_str().len()
                    + skill.name.as_str().len()
                    + r.yanked.as_ref().map_or(0, String::len)
                    + r.deprecation.as_ref().map_or(0, String::len)
                    + r.revoked.as_ref().map_or(0, String::len)
                    + 64
            }),
            completions: budget.cache(CacheId::Completions, |(_, ns, prefix, _), (v, _)| {
                ns.as_ref().map_or(0, |n| n.as_str().len())
                    + prefix.len()
                    + v.iter().map(|s| s.len() + 24).sum::<usize>()
            }),
            private: budget.cache(CacheId::PrivateNamespaces, |_, set| {
                set.iter().map(|n| n.as_str().len() + 32).sum()
            }),
            requirements: budget.cache(CacheId::Requirements, |_, graph| graph.weight()),
            facets: budget.cache(CacheId::Facets, |_, (_, facets)| facets.weight()),
            reading_facets: Arc::default(),
            generation_seen: std::sync::Mutex::new(None),
            epoch: AtomicU64::new(0),
            ttl,
            changes: broadcast::channel(16).0,
            wake_indexer,
        }
    }

    /// What `skill` resolves to (current, or the pinned `version`), with what the store read in
    /// the same statement (never for a cached resolution): its version's manifest when `wanted`
    /// said so of its id, the bytes of the file at `file`. Misses are not cached: a skill
    /// another process publishes is served at once.
    pub(super) async fn resolve(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
        wanted: &(dyn Fn(VersionId) -> bool + Send + Sync),
        file: Option<&str>,
    ) -> Result<Option<Resolution>> {
        let key = (skill.clone(), version.cloned());
        if let Some(resolved) = self.resolved.get(&key) {
            return Ok(Some(Resolution {
                resolved,
                manifest: None,
                file: None,
            }));
        }
        let Some(resolution) = self
            .store
            .resolve_with_manifest(skill, version, wanted, file)
            .await?
        else {
            return Ok(None);
        };
        self.resolved.insert(key, resolution.resolved.clone());
        Ok(Some(resolution))
    }

    /// The private namespaces.
    pub(super) async fn private_namespaces(&self) -> Result<Arc<HashSet<Namespace>>> {
        if let Some(set) = self.private.get(&()) {
            return Ok(set);
        }
        let set = Arc::new(
            self.store
                .private_namespaces()
                .await?
                .into_iter()
                .collect::<HashSet<_>>(),
        );
        self.private.insert((), set.clone());
        Ok(set)
    }

    /// The requirement graph, resolved as things are now.
    pub(super) async fn requirements(&self) -> Result<Arc<Graph>> {
        if let Some(graph) = self.requirements.get(&()) {
            return Ok(graph);
        }
        let versions = self.store.requiring_versions().await?;
        let required = if versions.is_empty() {
            Vec::new()
        } else {
            self.store.required_skills().await?
        };
        let graph = Arc::new(Graph::build(versions, required));
        self.requirements.insert((), graph.clone());
        Ok(graph)
    }

    /// The web catalog's counts: read again when the catalog generation moved (every change
    /// of storage bumps it, made by any process), not when the current TTL runs out. After a
    /// change, the counts read before it are served while a background task reads them again
    /// (one at a time), so no page waits for the scan, except the first ever (or after the
    /// budget dropped them) and one after a namespace's privacy changed (the old counts would
    /// show the new private namespace's skills to anyone).
    pub(super) async fn facets(self: &Arc<Self>) -> Result<Arc<Facets>> {
        let generation = self.generation().await?;
        if let Some((at, facets)) = self.facets.get(&()) {
            if at >= generation {
                return Ok(facets);
            }
            if facets.same_privacy(&*self.private_namespaces().await?) {
                if let Ok(reading) = self.reading_facets.clone().try_lock_owned() {
                    let current = self.clone();
                    tokio::spawn(async move {
                        let _reading = reading;
                        if let Err(e) = current.read_facets(generation).await {
                            tracing::warn!(error = %e, "counting the catalog's facets failed");
                        }
                    });
                }
                return Ok(facets);
            }
        }
        let _reading = self.reading_facets.lock().await;
        if let Some((at, facets)) = self.facets.get(&())
            && at >= generation
        {
            return Ok(facets);
        }
        self.read_facets(generation).await
    }

    /// Read the counts (at `generation` or later: a newer generation's pages read them again).
    async fn read_facets(&self, generation: i64) -> Result<Arc<Facets>> {
        let facets = Arc::new(Facets::new(self.store.catalog_facets().await?));
        self.facets.insert((), (generation, facets.clone()));
        Ok(facets)
    }

    /// The catalog generation, read from storage at most once per epoch and current TTL.
    async fn generation(&self) -> Result<i64> {
        let epoch = self.epoch.load(Ordering::Acquire);
        let seen = *self
            .generation_seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((generation, at_epoch, at)) = seen
            && at_epoch == epoch
            && at.elapsed() < self.ttl
        {
            return Ok(generation);
        }
        let generation = self.store.generation().await?;
        *self
            .generation_seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((generation, epoch, std::time::Instant::now()));
        Ok(generation)
    }

    /// Drop every answer about what is current; what never changes stays elsewhere.
    pub(super) fn dropped(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.resolved.clear();
        self.completions.clear();
        self.private.clear();
        self.requirements.clear();
    }

    /// After a change (made here, or announced by another process): drop the answers about what
    /// is current, and let the indexer catch up (it then tells subscribers), or tell subscribers
    /// directly when this process keeps no index.
    pub(super) fn changed(&self) {
        self.dropped();
        match &self.wake_indexer {
            Some(wake) => wake.notify_one(),
            None => self.announce(),
        }
    }

    /// Tell subscribers that the current catalog changed.
    pub(super) fn announce(&self) {
        let _ = self.changes.send(());
    }

    /// Wake the indexer task, when this process keeps an index.
    pub(super) fn wake_indexer(&self) {
        if let Some(wake) = &self.wake_indexer {
            wake.notify_one();
        }
    }

    /// A receiver that gets `()` after every change to the current catalog.
    pub(super) fn subscribe(&self) -> broadcast::Receiver<()> {
        self.changes.subscribe()
    }

    /// The epoch answers about what is current are at, and how long one may be kept, now.
    pub(super) fn stamp(&self) -> Stamp {
        Stamp {
            epoch: self.epoch.load(Ordering::Acquire),
            ttl: self.ttl,
            at: Instant::now(),
        }
    }
}

/// When an answer about what is current began to be made: the epoch of such answers then, and
/// how long one may be kept ([`super::Registry::current_stamp`]). Taken before the answer is
/// made, so that a change while it is made leaves it stale at once.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    epoch: u64,
    ttl: Duration,
    at: Instant,
}

/// An answer about what is current that a service or transport keeps (a `skills/list` page as
/// served, a web catalog page), with the [`Stamp`] it was made at. It is served again while
/// nothing changed and it is younger than the current TTL: the rule the registry's own
/// resolutions follow.
pub struct Kept<T> {
    stamp: Stamp,
    pub value: T,
}

impl Stamp {
    /// The epoch alone, for what is kept per epoch whatever its age.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
}

impl<T> Kept<T> {
    pub fn new(stamp: Stamp, value: T) -> Self {
        Self { stamp, value }
    }

    /// Whether it may be served to a request stamped `now`.
    pub fn fresh(&self, now: &Stamp) -> bool {
        self.stamp.epoch == now.epoch && now.at.saturating_duration_since(self.stamp.at) < now.ttl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_answer_is_fresh_until_the_epoch_moves_or_the_ttl_runs_out() {
        let at = Instant::now();
        let made = Stamp {
            epoch: 3,
            ttl: Duration::from_secs(1),
            at,
        };
        let kept = Kept::new(made, "page");
        let later = |ms| Stamp {
            at: at + Duration::from_millis(ms),
            ..made
        };
        assert!(kept.fresh(&made));
        assert!(kept.fresh(&later(999)));
        assert!(!kept.fresh(&later(1000)), "the TTL ran out");
        assert!(!kept.fresh(&Stamp { epoch: 4, ..made }), "a change");
        assert_eq!(made.epoch(), 3);
    }
}
