//! Keeps the search index in step with SQLite: one task, woken after every local change and
//! every two seconds (to see changes other processes, such as an import, made), indexes every
//! skill whose generation stamp is newer than the index's.

use std::sync::Arc;
use std::time::Duration;

use super::Registry;
use crate::core::uri::SKILL_MD;
use crate::core::{Namespace, SkillName, SkillUri};
use crate::error::{Error, Result};
use crate::search::{SearchDoc, Status};
use crate::store::SearchSource;

/// How often the indexer looks for changes made by other processes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Skills read per batch while catching up.
const BATCH: u32 = 500;
/// Documents per index commit while catching up (a commit costs a segment and an fsync).
const COMMIT_EVERY: usize = 20_000;
/// Characters of a SKILL.md body that are indexed.
const MAX_BODY_CHARS: usize = 64 * 1024;

/// Run until the registry is dropped.
pub(super) async fn run(registry: std::sync::Weak<super::Inner>, wake: Arc<tokio::sync::Notify>) {
    loop {
        tokio::select! {
            () = wake.notified() => {}
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
        let Some(inner) = registry.upgrade() else {
            return;
        };
        let registry = Registry { inner };
        match registry.catch_up_search().await {
            Ok(true) => {
                registry.forget_resolved();
                let _ = registry.inner.changes.send(());
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "search index update failed; retrying"),
        }
    }
}

impl Registry {
    /// Index every skill changed since the index's generation. Returns whether anything changed.
    pub async fn catch_up_search(&self) -> Result<bool> {
        let Some(index) = self.inner.search.clone().filter(|i| i.is_writable()) else {
            return Ok(false);
        };
        let _guard = self.inner.index_lock.lock().await;
        let db_gen = self.store().generation().await?;
        let mut since = index.generation() as i64;
        if since == db_gen {
            return Ok(false);
        }
        if since > db_gen {
            // The database is older than the index (restored from a backup): start over.
            let i = index.clone();
            blocking(move || i.clear()).await?;
            since = 0;
        }
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
            let ids: Vec<i64> = rows.iter().filter_map(|r| r.version_id).collect();
            let manifests = self.store().manifests(&ids).await?;
            for row in rows {
                match self.search_doc(&row, &manifests).await? {
                    Some(doc) => docs.push(doc),
                    None => removed.push((row.namespace, row.name)),
                }
            }
            if !done && docs.len() + removed.len() < COMMIT_EVERY {
                continue;
            }
            // Intermediate commits keep the old generation: a crash mid-way resumes correctly.
            let generation = if done { db_gen } else { since } as u64;
            let update = crate::search::Update { fresh, last: done };
            let (d, r, i) = (
                std::mem::take(&mut docs),
                std::mem::take(&mut removed),
                index.clone(),
            );
            blocking(move || i.apply(&d, &r, generation, update)).await?;
            if done {
                break;
            }
        }
        Ok(true)
    }

    /// Drop the index and rebuild it from SQLite.
    pub async fn rebuild_search(&self) -> Result<u64> {
        let Some(index) = self.inner.search.clone() else {
            return Err(Error::SearchUnavailable);
        };
        if !index.is_writable() {
            return Err(Error::Search(
                crate::search::SearchError::ReadOnly.to_string(),
            ));
        }
        {
            let _guard = self.inner.index_lock.lock().await;
            let i = index.clone();
            blocking(move || i.clear()).await?;
        }
        self.catch_up_search().await?;
        Ok(index.len())
    }

    async fn search_doc(
        &self,
        row: &SearchSource,
        manifests: &std::collections::HashMap<i64, crate::store::Manifest>,
    ) -> Result<Option<SearchDoc>> {
        let (Some(version_id), Some(version)) = (row.version_id, &row.version) else {
            return Ok(None);
        };
        let manifest = manifests
            .get(&version_id)
            .ok_or_else(|| super::no_manifest(version_id))?;
        let root = &manifest.entries[0];
        let skill_md = manifest
            .files
            .iter()
            .find(|f| f.path == SKILL_MD)
            .map(|f| f.digest.clone());
        let body = match skill_md {
            // Not through the serving cache either (see above).
            Some(digest) => body_of(&self.store().blob(&digest).await?.unwrap_or_default()),
            None => String::new(),
        };
        let uri = match (Namespace::new(&row.namespace), SkillName::new(&row.name)) {
            (Ok(ns), Ok(name)) => SkillUri::join(&SkillUri::root(&ns, &name, None), SKILL_MD),
            _ => return Ok(None),
        };
        let status = if row.yanked_only {
            Status::Yanked
        } else if row.deprecated {
            Status::Deprecated
        } else {
            Status::Active
        };
        Ok(Some(SearchDoc {
            namespace: row.namespace.clone(),
            name: row.name.clone(),
            uri,
            version: version.clone(),
            description: root.description.clone(),
            body,
            paths: manifest
                .files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            status,
            deprecation: row
                .deprecated
                .then(|| row.deprecation_message.clone().unwrap_or_default()),
        }))
    }
}

/// The SKILL.md text after its frontmatter, capped.
fn body_of(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.split_inclusive('\n');
    let mut offset = 0;
    if let Some(first) = lines.next() {
        offset += first.len();
        if first.trim_start_matches('\u{feff}').trim_end() == "---" {
            for line in lines {
                offset += line.len();
                if line.trim_end() == "---" {
                    break;
                }
            }
        } else {
            offset = 0;
        }
    }
    text[offset.min(text.len())..]
        .chars()
        .take(MAX_BODY_CHARS)
        .collect()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, crate::search::SearchError> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Search(e.to_string()))?
        .map_err(|e| Error::Search(e.to_string()))
}
