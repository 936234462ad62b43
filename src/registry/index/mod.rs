//! Keeps the search index in step with storage: one task, woken after every local change and
//! every two seconds (to see changes other processes, such as an import, made), indexes every
//! skill whose generation stamp is newer than the index's. The same task then serializes the
//! listing entries the store keeps (`reads/entries.rs`). `feed.rs` hears the changes other
//! processes commit, when storage announces them.

pub(super) mod feed;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use super::current::Current;
use super::reads::Reads;
use crate::core::{Status, frontmatter};
use crate::error::{Error, Result};
use crate::search::{Mark, SearchDoc, SearchError, SearchIndex};
use crate::store::{Blobs, ChangedSkill, Manifests, Store};

/// How often the indexer looks for changes made by other processes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Skills read per batch while catching up.
const BATCH: u32 = 500;
/// Documents per index commit while catching up (a commit costs a segment and an fsync).
const COMMIT_EVERY: usize = 20_000;
/// Characters of a SKILL.md body that are indexed.
const MAX_BODY_CHARS: usize = 64 * 1024;

/// Run until the registry is dropped or closed.
pub(super) async fn run(index: std::sync::Weak<Index>, wake: Arc<Notify>, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = wake.notified() => {}
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
        let Some(index) = index.upgrade() else {
            return;
        };
        match index.catch_up_search().await {
            Ok(true) => {
                index.current.dropped();
                index.current.announce();
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "search index update failed; retrying"),
        }
        // Then the entries the store keeps serialized (`reads/entries.rs`), a bounded amount
        // at a time, so the index never waits long behind a large fill.
        match index.reads.serialize_entries().await {
            Ok(true) => wake.notify_one(),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "serializing listing entries failed; retrying"),
        }
    }
}

/// The search index, kept in step with storage.
pub struct Index {
    store: Arc<dyn Store>,
    blobs: Arc<dyn Blobs>,
    current: Arc<Current>,
    reads: Arc<Reads>,
    /// The index, when this process keeps one (the server does; imports do not).
    search: Option<Arc<SearchIndex>>,
    /// Serialises index updates. Holds whether an update failed since the last full build: the
    /// index is then rebuilt from storage, since a failed commit (a full disk) may have lost
    /// documents that the next commit's generation would claim.
    lock: tokio::sync::Mutex<IndexState>,
    /// Whether the index has caught up with storage once since this process started
    /// (`/readyz` answers 503 until it has).
    caught_up: AtomicBool,
}

/// What the indexer knows about its index beyond the generation it records.
#[derive(Debug, Default)]
struct IndexState {
    /// An update failed: rebuild from storage before trusting the index again.
    damaged: bool,
    /// The storage's catalog id, once read (it never changes).
    catalog: Option<i64>,
}

/// A search index snapshot as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SnapshotInfo {
    /// The catalog generation it reflects: a replica starting from it catches up from there.
    pub generation: u64,
    pub skills: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchHealth {
    NotConfigured,
    /// Open, and not yet caught up with storage since this process started (a new replica
    /// building its index, or one restarted after falling behind).
    CatchingUp {
        generation: u64,
    },
    Ok {
        generation: u64,
    },
    Failing,
}

impl Index {
    pub(super) fn new(
        store: Arc<dyn Store>,
        blobs: Arc<dyn Blobs>,
        current: Arc<Current>,
        reads: Arc<Reads>,
        search: Option<Arc<SearchIndex>>,
    ) -> Self {
        Self {
            store,
            blobs,
            current,
            reads,
            search,
            lock: Default::default(),
            caught_up: AtomicBool::new(false),
        }
    }

    /// How the index is doing, for `/readyz`.
    pub fn health(&self) -> SearchHealth {
        match &self.search {
            None => SearchHealth::NotConfigured,
            Some(index) => match index.healthy() {
                Ok(generation) if !self.caught_up.load(Ordering::Relaxed) => {
                    SearchHealth::CatchingUp { generation }
                }
                Ok(generation) => SearchHealth::Ok { generation },
                Err(e) => {
                    tracing::warn!(error = %e, "readiness: the search index is failing");
                    SearchHealth::Failing
                }
            },
        }
    }

    /// Whether this process keeps (or searches) an index.
    pub(super) fn keeps_index(&self) -> bool {
        self.search.is_some()
    }

    /// The generation and number of documents of the committed index, when this process keeps
    /// one.
    pub(super) fn committed_len(&self) -> Option<(u64, u64)> {
        self.search.as_ref()?.committed_len()
    }

    /// Bring the search index up to date with storage, then write it to `to` as a snapshot that
    /// new replicas start from ([`RegistryBuilder::index_snapshot`]). The index's writer is
    /// given up first (a snapshot is taken of an index nobody writes), so call this last, as a
    /// job does.
    ///
    /// [`RegistryBuilder::index_snapshot`]: super::RegistryBuilder::index_snapshot
    pub async fn write_snapshot(&self, to: &Path) -> Result<SnapshotInfo> {
        let Some(index) = self.search.clone() else {
            return Err(Error::SearchUnavailable);
        };
        if !index.is_writable() {
            return Err(SearchError::ReadOnly.into());
        }
        self.catch_up_search().await?;
        let _state = self.lock.lock().await;
        let to = to.to_path_buf();
        let (generation, skills) = (index.generation(), index.len());
        let bytes = tokio::task::spawn_blocking(move || index.write_snapshot(&to))
            .await
            .map_err(|e| SearchError::Task(e.to_string()))??;
        Ok(SnapshotInfo {
            generation,
            skills,
            bytes,
        })
    }

    /// Give up the index's writer (when the process closes).
    pub(super) async fn release(&self) {
        if let Some(index) = &self.search {
            let index = index.clone();
            let _ = tokio::task::spawn_blocking(move || index.release_writer()).await;
        }
    }

    /// The catalog generation the search index reflects, when this process has one.
    pub fn search_generation(&self) -> Option<u64> {
        self.search.as_ref().map(|s| s.generation())
    }

    /// Every indexed skill as `(uri, version, status)`, ordered by URI.
    pub fn search_documents(&self) -> Result<Vec<(String, String, Status)>> {
        let index = self.search.as_ref().ok_or(Error::SearchUnavailable)?;
        Ok(index
            .all()?
            .into_iter()
            .map(|h| (h.uri, h.version, h.status))
            .collect())
    }

    /// Index every skill changed since the index's generation. Returns whether anything changed.
    pub async fn catch_up_search(&self) -> Result<bool> {
        let caught_up = || {
            self.caught_up.store(true, Ordering::Relaxed);
        };
        let Some(index) = self.search.clone().filter(|i| i.is_writable()) else {
            // Another process keeps this index current.
            caught_up();
            return Ok(false);
        };
        let mut state = self.lock.lock().await;
        let db_gen = self.store.generation().await?;
        let catalog = match state.catalog {
            Some(catalog) => catalog,
            None => *state.catalog.insert(self.store.catalog_id().await?),
        };
        let mark = index.mark();
        let mut since = mark.generation as i64;
        // Built from another database (a snapshot or a data directory that belongs elsewhere).
        let foreign = mark.catalog.is_some_and(|c| c != catalog);
        if since == db_gen && !state.damaged && !foreign {
            caught_up();
            return Ok(false);
        }
        if since > db_gen || state.damaged || foreign {
            // The database is older than the index (restored from a backup), an update failed
            // half-way, or the index describes another catalog: start over from storage.
            if foreign {
                tracing::warn!(
                    index_catalog = mark.catalog,
                    catalog,
                    "the search index was built from another database: rebuilding it"
                );
            }
            let i = index.clone();
            blocking(move || i.clear()).await?;
            since = 0;
        }
        let result = self
            .index_since(
                &index,
                since,
                Mark {
                    generation: db_gen as u64,
                    catalog: Some(catalog),
                },
            )
            .await;
        // A storage failure leaves the index as it was; a failed index update may not.
        state.damaged = matches!(result, Err(Error::Search(_)));
        result.map(|()| {
            caught_up();
            true
        })
    }

    /// Index every skill changed after generation `since`, recording `done` at the end.
    async fn index_since(
        &self,
        index: &std::sync::Arc<crate::search::SearchIndex>,
        since: i64,
        done_mark: Mark,
    ) -> Result<()> {
        // Every changed skill appears once below, so an empty index needs no deletes.
        let fresh = index.is_empty();
        let mut after_id = 0;
        let mut docs = Vec::new();
        let mut removed = Vec::new();
        loop {
            let rows = self.store.changed_since(since, after_id, BATCH).await?;
            let done = rows.len() < BATCH as usize;
            if let Some(last) = rows.last() {
                after_id = last.skill_id;
            }
            // Read straight from the store: a bulk catch-up must not flush the serving cache.
            let ids: Vec<i64> = rows
                .iter()
                .filter_map(|r| r.version.as_ref().map(|v| v.0))
                .collect();
            let manifests = self.store.manifests(&ids).await?;
            for row in rows {
                match self.search_doc(&row, &manifests).await? {
                    Some(doc) => docs.push(doc),
                    None => {
                        removed.push((row.skill.namespace.to_string(), row.skill.name.to_string()));
                    }
                }
            }
            if !done && docs.len() + removed.len() < COMMIT_EVERY {
                continue;
            }
            // Intermediate commits keep the old generation: a crash mid-way resumes correctly.
            let mark = if done {
                done_mark
            } else {
                Mark {
                    generation: since as u64,
                    ..done_mark
                }
            };
            let update = crate::search::Update { fresh, last: done };
            let (d, r, i) = (
                std::mem::take(&mut docs),
                std::mem::take(&mut removed),
                index.clone(),
            );
            blocking(move || i.apply(&d, &r, mark, update)).await?;
            if done {
                break;
            }
        }
        Ok(())
    }

    /// Drop the index and rebuild it from storage. Returns the number of skills indexed.
    pub async fn rebuild_search(&self) -> Result<u64> {
        let Some(index) = self.search.clone() else {
            return Err(Error::SearchUnavailable);
        };
        if !index.is_writable() {
            return Err(SearchError::ReadOnly.into());
        }
        {
            let _state = self.lock.lock().await;
            let i = index.clone();
            blocking(move || i.clear()).await?;
        }
        self.catch_up_search().await?;
        Ok(index.len())
    }

    async fn search_doc(
        &self,
        row: &ChangedSkill,
        manifests: &Manifests,
    ) -> Result<Option<SearchDoc>> {
        let Some((version_id, version)) = &row.version else {
            return Ok(None);
        };
        let manifest = manifests
            .get(version_id)
            .ok_or_else(|| super::reads::no_manifest(*version_id))?;
        let body = match manifest.skill_md() {
            // Not through the serving cache either (see above).
            Some(file) => body_of(&self.blobs.get(&file.digest).await?.unwrap_or_default()),
            None => String::new(),
        };
        let status = if row.yanked_only {
            Status::Yanked
        } else if row.deprecation.is_some() {
            Status::Deprecated
        } else {
            Status::Active
        };
        Ok(Some(SearchDoc {
            namespace: row.skill.namespace.to_string(),
            name: row.skill.name.to_string(),
            uri: row.skill.skill_md_uri().to_string(),
            version: version.to_string(),
            description: manifest.root().description.clone(),
            body,
            paths: manifest
                .files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            status,
            deprecation: row.deprecation.clone(),
        }))
    }
}

/// The SKILL.md text after its frontmatter, capped.
fn body_of(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    frontmatter::body(&text)
        .chars()
        .take(MAX_BODY_CHARS)
        .collect()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, SearchError> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Search(SearchError::Task(e.to_string())))?
        .map_err(Error::Search)
}
