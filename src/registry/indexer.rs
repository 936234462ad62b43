//! Keeps the search index in step with storage: one task, woken after every local change and
//! every two seconds (to see changes other processes, such as an import, made), indexes every
//! skill whose generation stamp is newer than the index's. The same task then serializes the
//! listing entries the store keeps (`entries.rs`).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Registry;
use crate::core::{Status, frontmatter};
use crate::error::{Error, Result};
use crate::search::{Mark, SearchDoc, SearchError};
use crate::store::{ChangedSkill, Manifests};

/// How often the indexer looks for changes made by other processes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Skills read per batch while catching up.
const BATCH: u32 = 500;
/// Documents per index commit while catching up (a commit costs a segment and an fsync).
const COMMIT_EVERY: usize = 20_000;
/// Characters of a SKILL.md body that are indexed.
const MAX_BODY_CHARS: usize = 64 * 1024;

/// Run until the registry is dropped or closed.
pub(super) async fn run(
    registry: std::sync::Weak<super::Inner>,
    wake: Arc<tokio::sync::Notify>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = wake.notified() => {}
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
        let Some(inner) = registry.upgrade() else {
            return;
        };
        let registry = Registry { inner };
        match registry.catch_up_search().await {
            Ok(true) => {
                registry.drop_current();
                let _ = registry.inner.changes.send(());
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "search index update failed; retrying"),
        }
        // Then the entries the store keeps serialized (`entries.rs`), a bounded amount at a
        // time, so the index never waits long behind a large fill.
        match registry.serialize_entries().await {
            Ok(true) => wake.notify_one(),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "serializing listing entries failed; retrying"),
        }
    }
}

impl Registry {
    /// The catalog generation the search index reflects, when this process has one.
    pub fn search_generation(&self) -> Option<u64> {
        self.inner.search.as_ref().map(|s| s.generation())
    }

    /// Every indexed skill as `(uri, version, status)`, ordered by URI.
    pub fn search_documents(&self) -> Result<Vec<(String, String, Status)>> {
        let index = self.inner.search.as_ref().ok_or(Error::SearchUnavailable)?;
        Ok(index
            .all()?
            .into_iter()
            .map(|h| (h.uri, h.version, h.status))
            .collect())
    }

    /// Index every skill changed since the index's generation. Returns whether anything changed.
    pub async fn catch_up_search(&self) -> Result<bool> {
        let caught_up = || {
            (self.inner.search_caught_up).store(true, std::sync::atomic::Ordering::Relaxed);
        };
        let Some(index) = self.inner.search.clone().filter(|i| i.is_writable()) else {
            // Another process keeps this index current.
            caught_up();
            return Ok(false);
        };
        let mut state = self.inner.index_lock.lock().await;
        let db_gen = self.store().generation().await?;
        let catalog = match state.catalog {
            Some(catalog) => catalog,
            None => *state.catalog.insert(self.store().catalog_id().await?),
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
            let rows = self.store().changed_since(since, after_id, BATCH).await?;
            let done = rows.len() < BATCH as usize;
            if let Some(last) = rows.last() {
                after_id = last.skill_id;
            }
            // Read straight from the store: a bulk catch-up must not flush the serving cache.
            let ids: Vec<i64> = rows
                .iter()
                .filter_map(|r| r.version.as_ref().map(|v| v.0))
                .collect();
            let manifests = self.store().manifests(&ids).await?;
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
        let Some(index) = self.inner.search.clone() else {
            return Err(Error::SearchUnavailable);
        };
        if !index.is_writable() {
            return Err(SearchError::ReadOnly.into());
        }
        {
            let _state = self.inner.index_lock.lock().await;
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
            .ok_or_else(|| super::no_manifest(*version_id))?;
        let body = match manifest.skill_md() {
            // Not through the serving cache either (see above).
            Some(file) => body_of(
                &self
                    .inner
                    .blobs
                    .get(&file.digest)
                    .await?
                    .unwrap_or_default(),
            ),
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
