//! The use cases every transport calls, behind one typed API, as services that each own their
//! state; `Registry` is a thin façade that builds them, hands them out and runs the operations on
//! the whole registry (health, stats, verify, backup, copy, close):
//!
//! | service | what | state |
//! | --- | --- | --- |
//! | [`Reads`] (`reads/`) | `skills/list`, `skills/get`, reads, directory reads, the REST and web views, exports, completion, discovery, search | manifests, file bytes, exports, archive digests, serialized entries |
//! | [`Publisher`] (`publish/`) | publish, bulk import, sources (Git, other SEP-2640 servers through the [`Upstream`] port) | the scan policy, the upstream reader |
//! | [`Trust`] (`trust/`) | findings, rescans, the revocation feed; yank, revoke, deprecate, review, private namespaces | the scan policy |
//! | [`Access`] (`access.rs`) | authentication, tokens, the audit log | the admin token's hash |
//! | [`Index`] (`index/`) | the search index kept in step with storage, its task, the change feed | the index and its lock |
//! | [`Sessions`] (`sessions.rs`) | 2025-era MCP sessions kept for any process sharing the storage | none |
//! | [`Usage`] (`usage.rs`) | counting reads per version, day and kind; flushing them in the background | the counters not flushed yet |
//!
//! The services share two things: `current::Current`, what is current (resolutions,
//! completions, private namespaces, cached for at most [`RESOLVE_TTL`], or [`FEED_RESOLVE_TTL`]
//! when storage announces every change) and the one signal every change sends (those caches
//! dropped, the indexer woken, subscribers told); and `Heavy`, which bounds CPU work. A skill
//! another process imports into the same data directory is served by the next request, and a new
//! version of an existing skill within [`RESOLVE_TTL`]. A transport that keeps its own answers
//! about what is current (the MCP surface keeps `skills/list` pages as served) follows the same
//! rule through [`Registry::current_stamp`] and [`Kept`]. Every cache of the process, the transports'
//! included, is built from one memory budget ([`Registry::caches`]); [`cache`] lists them with
//! their weights and what invalidates each.
//!
//! Inputs are parsed at the edge into core types ([`crate::core::SkillRef`],
//! [`crate::core::VersionRef`], [`crate::core::SkillUri`]); outputs are core types and the views
//! the services declare. Storage is reached through `store::Store` and `store::Blobs` only.

mod access;
pub mod cache;
mod current;
mod events;
mod facets;
mod heavy;
mod index;
mod packs;
mod page;
mod publish;
mod reads;
mod requires;
mod sessions;
mod trust;
mod trustpub;
mod usage;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::config::Storage;
use crate::core::records::{CopyReport, Stats, VerifyReport};
use crate::core::scan::Policy;
use crate::error::{Error, Result};
use crate::search::SearchIndex;
use crate::store::{Backend, Location, Store};

pub use crate::core::Status;
pub use access::{Access, NewTokenRequest};
pub use current::{Kept, Stamp};
pub use events::{EventSettings, Events, FeedPage};
pub use facets::Counts;
use heavy::Heavy;
pub use index::{Index, SearchHealth, SnapshotInfo};
pub use packs::Packs;
pub use page::Page;
pub use publish::{
    ImportLine, ImportOptions, ImportOutcome, ImportSummary, MirrorItem, Prepared, PublishRequest,
    Published, Publisher, ReadLimits, SourceRead, SourceRun, Upstream,
};
pub use reads::{
    Artifact, Browse, Completion, DayCount, DirChild, DiscoveryEntry, DiscoveryScope, EntryCodec,
    FileContent, Keep, Listed, ListedSkill, Located, MAX_COMPLETIONS, MAX_SAME_NAME,
    MAX_STATS_DAYS, Reads, SearchHit, Served, SkillDetail, SkillEntry, SkillMdResource, SkillStats,
    SkillSummary, SkillView, VersionDetail, VersionView, cursor_after, today,
};
pub use requires::{Dependent, Resolved, ResolvedSkill};
pub use sessions::Sessions;
pub use trust::{FindingsItem, RescanReport, Revocation, Trust};
pub use trustpub::{Exchanged, NewTrustedPublisher, TrustSettings, TrustedPublishing};
pub use usage::Usage;

/// Default number of skills on one `skills/list` / `resources/list` page.
pub const DEFAULT_PAGE_SIZE: u32 = 100;
/// How long a resolved (namespace, name, version) stays cached when nothing changes locally.
pub const RESOLVE_TTL: Duration = Duration::from_secs(1);
/// The same, when storage announces every change (a change heard drops the cache at once; the
/// limit only bounds what a missed announcement could leave stale).
pub const FEED_RESOLVE_TTL: Duration = Duration::from_secs(30);

/// Where a data directory keeps its search index.
pub fn search_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("search-index")
}

/// Whether `data_dir` holds a registry's database.
pub fn holds_registry(data_dir: &Path) -> bool {
    crate::store::holds_catalog(data_dir)
}

/// Make the snapshot at `from` the index in `dir` unless `dir` holds one already; a snapshot
/// that is missing or does not restore is logged, and the index is then built from storage.
async fn restore_snapshot(from: PathBuf, dir: PathBuf) {
    use crate::search::snapshot;
    if snapshot::exists(&dir) {
        tracing::debug!(dir = %dir.display(), "a search index exists: the snapshot is not needed");
        return;
    }
    let started = std::time::Instant::now();
    let (shown, target) = (from.display().to_string(), dir.clone());
    match tokio::task::spawn_blocking(move || snapshot::restore(&from, &target)).await {
        Ok(Ok(())) => tracing::info!(
            snapshot = shown,
            seconds = started.elapsed().as_secs_f64(),
            "search index restored from a snapshot; catching up from its generation"
        ),
        Ok(Err(e)) => tracing::warn!(
            snapshot = shown,
            error = %e,
            "the index snapshot did not restore: building the index from storage"
        ),
        Err(e) => tracing::warn!(error = %e, "restoring the index snapshot failed"),
    }
}

/// The registry: a cheap `Clone` handle on its services, each with its own state.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    /// Storage, for the operations on the whole registry (health, stats, verify, backup, copy).
    store: Arc<dyn Store>,
    /// The caches' memory budget: every cache of the process is built from it ([`cache`]).
    budget: cache::Budget,
    heavy: Arc<Heavy>,
    current: Arc<current::Current>,
    reads: Arc<Reads>,
    publisher: Publisher,
    trust: Trust,
    access: Access,
    trustpub: TrustedPublishing,
    packs: packs::Packs,
    sessions: Sessions,
    usage: Arc<Usage>,
    events: Arc<Events>,
    index: Arc<Index>,
    /// Stops the background tasks ([`Registry::close`]).
    stop: CancellationToken,
    /// The indexer, the change-feed listener and the usage flusher.
    tasks: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// How to open a registry.
pub struct RegistryBuilder {
    /// Where the search index lives, and the SQLite database unless `database` says otherwise.
    data_dir: PathBuf,
    database: Option<Location>,
    page_size: u32,
    search: bool,
    index_snapshot: Option<PathBuf>,
    admin_token: Option<String>,
    policy: Policy,
    cache_bytes: usize,
    /// The key versions are signed with; `None` stores them unsigned.
    signing_key: Option<PathBuf>,
    /// The Sigstore trusted root keyless author signatures are checked against; `None`: the
    /// embedded production root.
    sigstore_root: Option<PathBuf>,
    /// Count reads, and flush the counts this often (`None`: no counting).
    usage: Option<Duration>,
    /// Rank search by relevance times popularity.
    popularity: bool,
    trustpub: TrustSettings,
    events: EventSettings,
    /// Deliver webhooks and prune old events in the background.
    deliver: bool,
}

impl RegistryBuilder {
    /// What trusted publishing's exchange checks and gives (`trusted_publishing_audience`,
    /// `trusted_publishing_token_secs`).
    pub fn trusted_publishing(mut self, settings: TrustSettings) -> Self {
        self.trustpub = settings;
        self
    }

    /// Count reads per version, day and kind, flushed to storage every `flush_every`
    /// (`usage_counting`, `usage_flush_secs`); `None` counts nothing. On by default, every
    /// [`usage::DEFAULT_FLUSH`].
    pub fn usage_counting(mut self, flush_every: Option<Duration>) -> Self {
        self.usage = flush_every.map(|every| every.max(Duration::from_millis(10)));
        self
    }

    /// Keep the events feed as `settings` say, and deliver webhooks and prune old events in
    /// the background (`serve`). Without it the feed is kept with the default settings and
    /// nothing is delivered or pruned.
    pub fn events(mut self, settings: EventSettings) -> Self {
        self.events = settings;
        self.deliver = true;
        self
    }

    /// Rank search results by relevance times a popularity factor from each skill's recent
    /// reads (`search_popularity`; [`usage::popularity`]). Off by default.
    pub fn search_popularity(mut self, on: bool) -> Self {
        self.popularity = on;
        self
    }

    /// Memory for the caches of the process, all together (`cache_memory_mib`), split by
    /// [`cache::CACHES`].
    pub fn cache_memory_mib(mut self, mib: usize) -> Self {
        self.cache_bytes = mib.saturating_mul(1 << 20);
        self
    }

    /// Sign each version stored with the key at `path` (made there on first use); `None`
    /// stores versions unsigned. The default: `signing-key.pem` in the data directory.
    pub fn signing_key(mut self, path: Option<&Path>) -> Self {
        self.signing_key = path.map(Path::to_path_buf);
        self
    }

    /// Verify keyless author signatures against the Sigstore trusted root at `path`
    /// (`trusted_root.json`); `None`: the public-good production root, embedded.
    pub fn sigstore_trusted_root(mut self, path: Option<&Path>) -> Self {
        self.sigstore_root = path.map(Path::to_path_buf);
        self
    }

    /// The scan policy every publish is judged by (`core::scan`; the default: each rule's own).
    pub fn scan_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Skills per `skills/list` and `resources/list` page.
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Keep a search index (in the data directory's `search-index/`) and keep it current. Only
    /// one process can own an index directory; another one searches it read-only.
    pub fn search(mut self) -> Self {
        self.search = true;
        self
    }

    /// The admin bearer token (`None` disables admin operations).
    pub fn admin_token(mut self, token: Option<&str>) -> Self {
        self.admin_token = token.filter(|t| !t.is_empty()).map(str::to_owned);
        self
    }

    /// Start from the index snapshot at `path` when the data directory has no search index yet
    /// (with [`RegistryBuilder::search`]). A snapshot that is missing or does not restore is
    /// logged and skipped: the index is then built from storage.
    pub fn index_snapshot(mut self, path: Option<&Path>) -> Self {
        self.index_snapshot = path.map(Path::to_path_buf);
        self
    }

    /// Keep the catalog at `location` instead of the data directory's embedded database (with
    /// a database elsewhere, the data directory holds only the search index).
    pub fn at(mut self, location: Location) -> Self {
        self.database = Some(location);
        self
    }

    pub async fn open(self) -> Result<Registry> {
        let location = self
            .database
            .clone()
            .unwrap_or_else(|| Location::Sqlite(self.data_dir.clone()));
        let backend = crate::store::open(&location).await?;
        let search = if self.search {
            let dir = search_dir(&self.data_dir);
            if let Some(snapshot) = self.index_snapshot.clone() {
                restore_snapshot(snapshot, dir.clone()).await;
            }
            let index = SearchIndex::open(&dir)?;
            if !index.is_writable() {
                tracing::warn!(dir = %dir.display(), "search index owned by another process: searching read-only");
            }
            Some(Arc::new(index))
        } else {
            None
        };
        Ok(Registry::assemble(backend, search, &self))
    }
}

impl Registry {
    /// Open the registry stored in `data_dir`: no search index, the default page size.
    pub async fn open(data_dir: &Path) -> Result<Self> {
        Self::builder(data_dir).open().await
    }

    /// The registry at `storage` (the `data_dir` and `database_url` settings), judging
    /// publishes by its `scan_policy`.
    pub fn builder_for(storage: &Storage) -> Result<RegistryBuilder> {
        let policy = Policy::parse(&storage.scanning.scan_policy)
            .map_err(|e| Error::InvalidRequest(format!("scan_policy: {e}")))?;
        let builder =
            match Location::of(storage).map_err(|e| Error::InvalidRequest(e.to_string()))? {
                Location::Sqlite(dir) => Self::builder(&dir),
                elsewhere => Self::builder(&storage.data_dir).at(elsewhere),
            };
        let key = storage.signing.signing.then(|| {
            storage
                .signing
                .signing_key
                .clone()
                .unwrap_or_else(|| storage.data_dir.join(publish::DEFAULT_KEY_FILE))
        });
        Ok(builder
            .scan_policy(policy)
            .signing_key(key.as_deref())
            .sigstore_trusted_root(storage.signing.sigstore_trusted_root.as_deref()))
    }

    pub fn builder(data_dir: &Path) -> RegistryBuilder {
        RegistryBuilder {
            data_dir: data_dir.to_path_buf(),
            database: None,
            page_size: DEFAULT_PAGE_SIZE,
            search: false,
            index_snapshot: None,
            admin_token: None,
            policy: Policy::default(),
            cache_bytes: cache::DEFAULT_BUDGET_MIB << 20,
            signing_key: Some(data_dir.join(publish::DEFAULT_KEY_FILE)),
            sigstore_root: None,
            usage: Some(usage::DEFAULT_FLUSH),
            popularity: false,
            trustpub: TrustSettings::default(),
            events: EventSettings::default(),
            deliver: false,
        }
    }

    fn assemble(
        backend: Backend,
        search: Option<Arc<SearchIndex>>,
        settings: &RegistryBuilder,
    ) -> Self {
        let RegistryBuilder {
            page_size,
            ref admin_token,
            ref policy,
            cache_bytes,
            ref signing_key,
            ref sigstore_root,
            usage: usage_flush,
            popularity,
            ref trustpub,
            ref events,
            deliver,
            ..
        } = *settings;
        let (admin_token, policy, signing_key) =
            (admin_token.as_deref(), policy.clone(), signing_key.clone());
        let ttl = if backend.feed.is_some() {
            FEED_RESOLVE_TTL
        } else {
            RESOLVE_TTL
        };
        let budget = cache::Budget::new(cache_bytes, ttl);
        let wake = search
            .as_ref()
            .filter(|s| s.is_writable())
            .map(|_| Arc::new(tokio::sync::Notify::new()));
        let store = backend.store;
        let heavy = Arc::new(Heavy::new());
        let usage = Arc::new(Usage::new(store.clone(), usage_flush.is_some(), popularity));
        let current = Arc::new(current::Current::new(
            store.clone(),
            &budget,
            ttl,
            wake.clone(),
        ));
        let reads = Arc::new(Reads::new(
            store.clone(),
            backend.blobs.clone(),
            current.clone(),
            heavy.clone(),
            &budget,
            page_size,
            search.clone(),
            usage.clone(),
        ));
        let index = Arc::new(Index::new(
            store.clone(),
            backend.blobs.clone(),
            current.clone(),
            reads.clone(),
            search,
        ));
        let stop = CancellationToken::new();
        let mut tasks = Vec::new();
        if let Some(wake) = wake {
            tasks.push(tokio::spawn(index::run(
                Arc::downgrade(&index),
                wake.clone(),
                stop.clone(),
            )));
            // Catch up at once (the index may be missing or behind after a crash).
            wake.notify_one();
        }
        if let Some(every) = usage_flush {
            tasks.push(tokio::spawn(usage::run(
                Arc::downgrade(&usage),
                every,
                stop.clone(),
            )));
        }
        let events = Arc::new(Events::new(store.clone(), events.clone()));
        if deliver {
            tasks.push(tokio::spawn(events::run(
                Arc::downgrade(&events),
                current.subscribe(),
                stop.clone(),
            )));
        }
        if let Some(feed) = backend.feed {
            tasks.push(tokio::spawn(index::feed::run(
                Arc::downgrade(&current),
                feed,
                stop.clone(),
            )));
        }
        Self {
            inner: Arc::new(Inner {
                publisher: Publisher::new(
                    store.clone(),
                    backend.blobs,
                    current.clone(),
                    policy.clone(),
                    signing_key,
                    sigstore_root.clone(),
                ),
                trust: Trust::new(
                    store.clone(),
                    current.clone(),
                    reads.clone(),
                    heavy.clone(),
                    policy,
                ),
                access: Access::new(store.clone(), admin_token),
                trustpub: TrustedPublishing::new(store.clone(), trustpub.clone()),
                packs: packs::Packs::new(store.clone()),
                sessions: Sessions::new(store.clone()),
                usage,
                events,
                store,
                budget,
                heavy,
                current,
                reads,
                index,
                stop,
                tasks: std::sync::Mutex::new(tasks),
            }),
        }
    }

    /// Reading the catalog: MCP's reads, the REST and web views, completion, discovery, search.
    pub fn reads(&self) -> &Reads {
        &self.inner.reads
    }

    /// Publishing, importing and reading sources.
    pub fn publisher(&self) -> &Publisher {
        &self.inner.publisher
    }

    /// Scans, revocations, and every other lifecycle change of published versions.
    pub fn trust(&self) -> &Trust {
        &self.inner.trust
    }

    /// Packs: sets of exact skill versions, published and read.
    pub fn packs(&self) -> &packs::Packs {
        &self.inner.packs
    }

    /// Authentication, tokens and the audit log.
    pub fn access(&self) -> &Access {
        &self.inner.access
    }

    /// The kept 2025-era MCP sessions.
    /// Trusted publishers, and the exchange of a CI's OIDC token for a short-lived token.
    pub fn trusted_publishing(&self) -> &TrustedPublishing {
        &self.inner.trustpub
    }

    pub fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    /// The usage counters and their flush.
    pub fn usage(&self) -> &Usage {
        &self.inner.usage
    }

    /// The events feed and webhooks.
    pub fn events(&self) -> &Events {
        &self.inner.events
    }

    /// The search index and its upkeep.
    pub fn index(&self) -> &Index {
        &self.inner.index
    }

    /// The caches' memory budget: a transport builds its caches from it, so that every cache of
    /// the process shares one `cache_memory_mib` and shows in `/metrics`.
    pub fn caches(&self) -> &cache::Budget {
        &self.inner.budget
    }

    /// A receiver that gets `()` after every change to the current catalog.
    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.inner.current.subscribe()
    }

    /// Which generation of answers about what is current this process is at, and how long one
    /// may be kept, now: a transport that keeps such an answer (a `skills/list` page as served)
    /// keeps it as a [`Kept`] made with the stamp taken before the answer, and serves it again
    /// while [`Kept::fresh`], as the registry does with its own resolutions.
    pub fn current_stamp(&self) -> Stamp {
        self.inner.current.stamp()
    }

    /// Run CPU-heavy `work` on a blocking thread, at most as many at once as there are cores.
    pub async fn heavy<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        self.inner.heavy.run(work).await
    }

    // ---- operations on the whole registry ------------------------------------------------------

    /// Whether the storage answers, the generation it is at, and the search index's. Costs the
    /// same at any catalog size (anyone may ask).
    pub async fn health(&self) -> Health {
        let generation = self.inner.store.generation().await;
        Health {
            generation: generation
                .inspect_err(|e| tracing::warn!(error = %e, "readiness: storage is failing"))
                .ok(),
            search: self.inner.index.health(),
        }
    }

    /// The catalog generation: how many changes storage has applied.
    pub async fn generation(&self) -> Result<i64> {
        Ok(self.inner.store.generation().await?)
    }

    /// Connections of the storage pool that reads use: open, and idle among them.
    pub fn connections(&self) -> (u32, usize) {
        self.inner.store.connections()
    }

    /// Row counts and stored bytes.
    pub async fn stats(&self) -> Result<Stats> {
        Ok(self.inner.store.stats().await?)
    }

    /// Scrub the whole store (every blob re-hashed, every row checked) and, when this process
    /// keeps a search index that is current, check that it holds every skill.
    pub async fn verify(&self, progress: &(dyn Fn(u64) + Send + Sync)) -> Result<VerifyReport> {
        let store = &self.inner.store;
        let mut report = store.verify(progress).await?;
        let index = &self.inner.index;
        if index.keeps_index() {
            index.catch_up_search().await.ok();
            let generation = store.generation().await?;
            // An index another process owns may lag a moment behind; compare only a current one.
            if let Some((indexed, docs)) = index.committed_len()
                && indexed == generation as u64
            {
                let expected = store.stats().await?.skills;
                if docs as i64 != expected {
                    report.problems.push(format!(
                        "search index holds {docs} skills, the database {expected}"
                    ));
                }
            }
        }
        Ok(report)
    }

    /// A consistent copy of the store at `path` (which must not exist), taken while serving.
    pub async fn backup(&self, path: &Path) -> Result<()> {
        Ok(self.inner.store.backup(path).await?)
    }

    /// Copy this whole registry into `target`, which must be empty (a new data directory or
    /// database), whatever the two engines: every row, id, time and blob, in one transaction of
    /// the target. `progress` is called with the rows copied so far. Check the target with
    /// [`Registry::verify`] afterwards.
    pub async fn copy_to(
        &self,
        target: &Registry,
        progress: &(dyn Fn(u64) + Send + Sync),
    ) -> Result<CopyReport> {
        let (from, to) = (self.inner.store.as_ref(), target.inner.store.as_ref());
        Ok(crate::store::copy::copy(from, to, progress).await?)
    }

    /// Stop the background tasks, flush the usage counts, release the search index and close
    /// storage. Pending index updates are dropped (the next owner catches up from the
    /// generation).
    pub async fn close(&self) {
        self.inner.stop.cancel();
        let tasks =
            std::mem::take(&mut *self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for task in tasks {
            let _ = task.await;
        }
        if let Err(e) = self.inner.usage.flush().await {
            tracing::warn!(error = %e, "the last usage counts were not flushed: they are lost");
        }
        self.inner.index.release().await;
        self.inner.store.close().await;
    }
}

/// What `/readyz` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// The storage's generation, `None` when storage is failing.
    pub generation: Option<i64>,
    pub search: SearchHealth,
}

impl Health {
    pub fn ready(&self) -> bool {
        self.generation.is_some()
            && matches!(
                self.search,
                SearchHealth::NotConfigured | SearchHealth::Ok { .. }
            )
    }
}

#[cfg(test)]
mod tests;
