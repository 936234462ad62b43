//! Reads: every view of the catalog the transports serve, with the caches that make them cheap.
//!
//! - `skills.rs`: the MCP hosts' reads (`skills/list` pages, one skill's entry, a file's bytes, a
//!   directory's children) and search;
//! - `catalog.rs`: the REST, ClawHub and web views (skills with every version, a version's
//!   manifest, one file, an export), in the read model of `view.rs`;
//! - `entries.rs`: listing entries serialized once by the transport's codec;
//! - `complete.rs`: completion for the resource templates;
//! - `discovery.rs`: the well-known discovery index;
//! - `usage.rs`: usage counts (a skill's daily series, totals), as storage holds them.
//!
//! A version's manifest, file bytes, archives and archive digest never change, so they are cached
//! by version id or digest here and never invalidated; what is current comes from [`Current`].

mod catalog;
mod complete;
mod discovery;
mod entries;
mod skills;
mod usage;
mod view;

use std::collections::HashMap;
use std::sync::Arc;

use super::cache::{self, Budget, Cache, CacheId};
use super::current::Current;
use super::heavy::{HASH_INLINE_BYTES, Heavy};
use super::usage::Usage;
use crate::core::{Digest, SkillRef, SkillVersion, Visibility};
use crate::error::{Error, Result};
use crate::search::SearchIndex;
use crate::store::{Blobs, Manifest, Resolution, ResolvedVersion, Store, VersionId};

pub use catalog::{Browse, MAX_SAME_NAME};
pub use complete::{Completion, MAX_COMPLETIONS};
pub use discovery::{Artifact, DiscoveryEntry, DiscoveryScope};
pub use entries::{EntryCodec, Listed};
pub use skills::{
    DirChild, FileContent, Keep, Located, SearchHit, Served, SkillEntry, SkillMdResource,
    SkillSummary, cursor_after,
};
pub use usage::{DayCount, MAX_STATS_DAYS, SkillStats, today};
pub use view::{ListedSkill, SkillDetail, SkillView, VersionDetail, VersionView};

/// The read side of the registry.
pub struct Reads {
    store: Arc<dyn Store>,
    blobs: Arc<dyn Blobs>,
    current: Arc<Current>,
    heavy: Arc<Heavy>,
    /// Skills per `skills/list` and `resources/list` page.
    page_size: u32,
    manifests: Cache<VersionId, Arc<Manifest>>,
    /// Verified file bytes, by digest.
    blobs_kept: Cache<Digest, Arc<Vec<u8>>>,
    /// Exported archives, by version and format.
    exports: Cache<(VersionId, crate::core::archive::Format), Arc<Vec<u8>>>,
    /// Digests of exported archives, by version (what discovery indexes announce).
    archive_digests: Cache<VersionId, Digest>,
    /// How the serving transport serializes entries for the store to keep, once registered.
    codec: entries::Codec,
    /// The search index, when this process keeps one.
    search: Option<Arc<SearchIndex>>,
    /// Where reads are counted.
    usage: Arc<Usage>,
}

impl Reads {
    #[expect(
        clippy::too_many_arguments,
        reason = "what every read shares, handed over once when the registry is assembled"
    )]
    pub(super) fn new(
        store: Arc<dyn Store>,
        blobs: Arc<dyn Blobs>,
        current: Arc<Current>,
        heavy: Arc<Heavy>,
        budget: &Budget,
        page_size: u32,
        search: Option<Arc<SearchIndex>>,
        usage: Arc<Usage>,
    ) -> Self {
        Self {
            store,
            blobs,
            current,
            heavy,
            page_size,
            manifests: budget.cache(CacheId::Manifests, |_, m| cache::manifest_bytes(m)),
            blobs_kept: budget.cache(CacheId::Blobs, |_, b| cache::vec_bytes(b)),
            exports: budget.cache(CacheId::Exports, |_, b| cache::vec_bytes(b)),
            archive_digests: budget.cache(CacheId::ArchiveDigests, |_, _| 0),
            codec: entries::Codec::new(budget),
            search,
            usage,
        }
    }

    /// The bytes stored under `digest`, verified: bytes that no longer hash to their digest are
    /// never served (`integrity_error`). Verified blobs are kept in a bounded cache when `keep`.
    pub(super) async fn blob(&self, digest: &Digest, keep: bool) -> Result<Arc<Vec<u8>>> {
        if let Some(bytes) = self.blobs_kept.get(digest) {
            return Ok(bytes);
        }
        let bytes = self
            .blobs
            .get(digest)
            .await?
            .ok_or_else(|| Error::Integrity(format!("blob {digest} is missing")))?;
        self.verified(digest, Arc::new(bytes), keep).await
    }

    /// [`Self::blob`], given the bytes the store read as stored under `digest` with something
    /// else (a resolution's statement).
    pub(super) async fn stored_blob(
        &self,
        digest: &Digest,
        bytes: Arc<Vec<u8>>,
        keep: bool,
    ) -> Result<Arc<Vec<u8>>> {
        match self.blobs_kept.get(digest) {
            Some(kept) => Ok(kept),
            None => self.verified(digest, bytes, keep).await,
        }
    }

    /// `bytes` read as stored under `digest`, once they are seen to hash to it (kept when
    /// `keep`).
    async fn verified(
        &self,
        digest: &Digest,
        bytes: Arc<Vec<u8>>,
        keep: bool,
    ) -> Result<Arc<Vec<u8>>> {
        // Hashing a large file is CPU work: off the async workers, like other heavy work.
        let (bytes, intact) = if bytes.len() > HASH_INLINE_BYTES {
            let expected = *digest;
            self.heavy
                .run(move || {
                    let intact = Digest::of(&bytes) == expected;
                    (bytes, intact)
                })
                .await?
        } else {
            let intact = Digest::of(&bytes) == *digest;
            (bytes, intact)
        };
        if !intact {
            return Err(Error::Integrity(format!(
                "the stored bytes of {digest} do not match their digest"
            )));
        }
        if keep {
            self.blobs_kept.insert(*digest, bytes.clone());
        }
        Ok(bytes)
    }

    /// What `skill` resolves to for `viewer` (current, or the pinned `version`), with its
    /// manifest: `None` when it does not exist or `viewer` may not see it (the two are never
    /// told apart, and a version pending review is one nobody sees here); `version_revoked`
    /// when it is a revoked version.
    async fn resolve_visible(
        &self,
        viewer: &Visibility,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
    ) -> Result<Option<(ResolvedVersion, Arc<Manifest>)>> {
        Ok(self
            .resolve_visible_with(viewer, skill, version, None)
            .await?
            .map(|(resolved, manifest, _)| (resolved, manifest)))
    }

    /// [`Self::resolve_visible`], and the stored bytes of the file at `file` when the store
    /// read them with the resolution (unverified: see [`Self::verified`]).
    async fn resolve_visible_with(
        &self,
        viewer: &Visibility,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
        file: Option<&str>,
    ) -> Result<Option<(ResolvedVersion, Arc<Manifest>, Option<Vec<u8>>)>> {
        // A version pending review is never served over MCP, whoever asks.
        // The manifest comes with the resolution when the store reads both at once and it is
        // not cached (manifests never change: a cached one is the same).
        let uncached = |version_id: VersionId| !self.manifests.contains(&version_id);
        let Some(Resolution {
            resolved,
            manifest,
            file: stored,
        }) = self
            .current
            .resolve(skill, version, &uncached, file)
            .await?
            .filter(|r| viewer.sees(&skill.namespace, r.resolved.private))
            .filter(|r| !r.resolved.pending)
        else {
            return Ok(None);
        };
        // Only a pinned version can be revoked (the current one never is); nobody reads it.
        if let Some(reason) = &resolved.revoked {
            return Err(Error::Revoked {
                version: skill.clone().at(resolved.version.clone()),
                reason: reason.clone(),
            });
        }
        let manifest = match manifest {
            Some(manifest) => {
                let manifest = Arc::new(manifest);
                self.manifests.insert(resolved.version_id, manifest.clone());
                manifest
            }
            None => self.manifest(resolved.version_id).await?,
        };
        Ok(Some((resolved, manifest, stored)))
    }

    /// Manifests of many versions: cached ones, and the misses read in one go (then cached).
    async fn manifests(
        &self,
        version_ids: &[VersionId],
    ) -> Result<HashMap<VersionId, Arc<Manifest>>> {
        let mut found = HashMap::with_capacity(version_ids.len());
        let mut missing = Vec::new();
        for id in version_ids {
            match self.manifests.get(id) {
                Some(m) => {
                    found.insert(*id, m);
                }
                None => missing.push(*id),
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        for (id, manifest) in self.store.manifests(&missing).await? {
            let manifest = Arc::new(manifest);
            self.manifests.insert(id, manifest.clone());
            found.insert(id, manifest);
        }
        Ok(found)
    }

    pub(super) async fn manifest(&self, version_id: VersionId) -> Result<Arc<Manifest>> {
        self.manifests(&[version_id])
            .await?
            .remove(&version_id)
            .ok_or_else(|| no_manifest(version_id))
    }
}

/// A version the catalog points at has no stored files.
pub(super) fn no_manifest(version_id: VersionId) -> Error {
    Error::Storage(crate::store::StoreError::Corrupt(format!(
        "version {version_id} has no files"
    )))
}
