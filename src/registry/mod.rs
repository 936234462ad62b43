//! The use-cases every transport calls: publish, list, get, read, read a directory.
//!
//! `Registry` orders the work between `core` (rules) and `store` (SQLite). It is a cheap `Clone`.
//! What a published version contains never changes, so manifests are cached by version id. What
//! is *current* (and a version's yank and deprecation state) is cached for at most
//! [`RESOLVE_TTL`] and dropped at once on every change this process makes: a skill another
//! process imports into the same data directory is served by the next request, and a new
//! version of an existing skill within [`RESOLVE_TTL`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::core::uri::{SCHEME_PREFIX, SKILL_MD};
use crate::core::{
    self, InputFile, Namespace, SkillName, SkillUri, SkillVersion, Target, Warning, mime,
};
use crate::error::{Error, Result};
use crate::search::{Hit, SearchIndex};
use crate::store::{Manifest, NewVersion, PublishOutcome, ResolvedVersion, Store};

mod admin;
mod browse;
mod indexer;

pub use browse::{Completion, MAX_COMPLETIONS};

pub use admin::{CatalogItem, ManifestFile, SkillDetail, TokenInfo, VersionDetail, VersionSummary};

/// Default number of skills on one `skills/list` / `resources/list` page.
pub const DEFAULT_PAGE_SIZE: u32 = 100;
/// Manifests kept in memory; the cache is cleared when it grows past this.
const MANIFEST_CACHE_LIMIT: usize = 20_000;
/// How long a resolved (namespace, name, version) stays cached when nothing changes locally.
pub const RESOLVE_TTL: std::time::Duration = std::time::Duration::from_secs(1);
/// Resolutions kept at most (the cache is dropped whole when full).
const RESOLVE_CACHE_LIMIT: usize = 50_000;

/// Resolutions of skill URIs to versions, valid for [`RESOLVE_TTL`] from `filled_at`.
struct ResolveCache {
    filled_at: std::time::Instant,
    map: HashMap<(String, String, Option<String>), ResolvedVersion>,
}

#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    page_size: u32,
    manifests: RwLock<HashMap<i64, Arc<Manifest>>>,
    resolved: RwLock<ResolveCache>,
    changes: broadcast::Sender<()>,
    /// Verified file bytes, by digest.
    blobs: BlobCache,
    /// The search index, when this process owns it (the server does; imports do not).
    search: Option<Arc<SearchIndex>>,
    /// Serialises index updates.
    index_lock: tokio::sync::Mutex<()>,
    /// Wakes the indexer task after a local change.
    wake_indexer: Option<Arc<tokio::sync::Notify>>,
}

/// A skill entry as `skills/list` and `skills/get` return it.
#[derive(Debug, Clone)]
pub struct SkillEntry {
    pub uri: String,
    pub frontmatter: Map<String, Value>,
    pub resources: Vec<FileRef>,
    pub version: String,
    pub pinned: bool,
    /// The deprecation message when the skill is deprecated.
    pub deprecation: Option<String>,
    /// The yank reason when this (pinned) version is yanked.
    pub yank_reason: Option<String>,
}

/// A file of a skill with its integrity data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRef {
    pub uri: String,
    pub digest: String,
    pub size: u64,
}

/// A file read back, bytes exactly as published.
#[derive(Debug, Clone)]
pub struct FileContent {
    pub uri: String,
    pub mime_type: String,
    pub bytes: Vec<u8>,
    pub pinned: bool,
}

impl FileContent {
    /// The bytes as text when the file is served as `text`: a textual MIME type and UTF-8.
    pub fn text(&self) -> Option<&str> {
        if mime::is_textual(&self.mime_type) {
            std::str::from_utf8(&self.bytes).ok()
        } else {
            None
        }
    }
}

/// One direct child of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirChild {
    pub uri: String,
    pub name: String,
    /// `inode/directory` for subdirectories.
    pub mime_type: String,
    /// `None` for directories.
    pub size: Option<u64>,
}

/// A SKILL.md as `resources/list` shows it.
#[derive(Debug, Clone)]
pub struct SkillMdResource {
    pub uri: String,
    pub name: String,
    pub description: String,
    pub size: u64,
}

/// What a publish did.
#[derive(Debug, Clone)]
pub struct Published {
    pub namespace: Namespace,
    pub name: SkillName,
    pub version: SkillVersion,
    pub created: bool,
    pub uri: String,
    pub pinned_uri: String,
    pub files: Vec<FileRef>,
    pub warnings: Vec<Warning>,
}

/// A validated version waiting to be stored ([`Registry::prepare`]).
pub struct Prepared {
    namespace: Namespace,
    bundle: core::Bundle,
    version: SkillVersion,
    published_by: Option<String>,
}

impl Prepared {
    fn new_version(&self) -> NewVersion<'_> {
        NewVersion {
            namespace: &self.namespace,
            bundle: &self.bundle,
            version: &self.version,
            published_by: self.published_by.as_deref(),
        }
    }

    fn store_error(&self, e: crate::store::StoreError) -> Error {
        match e {
            crate::store::StoreError::VersionExists { .. } => {
                crate::metrics::publish("refused");
                Error::VersionExists {
                    namespace: self.namespace.to_string(),
                    name: self.bundle.name.to_string(),
                    version: self.version.to_string(),
                }
            }
            other => Error::Storage(other),
        }
    }

    fn published(self, outcome: PublishOutcome) -> Published {
        let created = matches!(outcome, PublishOutcome::Created { .. });
        crate::metrics::publish(if created { "created" } else { "unchanged" });
        let current_root = SkillUri::root(&self.namespace, &self.bundle.name, None);
        let pinned_root = SkillUri::root(&self.namespace, &self.bundle.name, Some(&self.version));
        Published {
            uri: SkillUri::join(&current_root, SKILL_MD),
            pinned_uri: SkillUri::join(&pinned_root, SKILL_MD),
            files: self
                .bundle
                .files
                .iter()
                .map(|f| FileRef {
                    uri: SkillUri::join(&pinned_root, f.path.as_str()),
                    digest: f.digest.to_string(),
                    size: f.bytes.len() as u64,
                })
                .collect(),
            warnings: self.bundle.warnings,
            namespace: self.namespace,
            name: self.bundle.name,
            version: self.version,
            created,
        }
    }
}

/// A page of results and the cursor of the next one.
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

impl Registry {
    /// Open the registry stored in `data_dir`.
    pub async fn open(data_dir: &Path) -> Result<Self> {
        let store = Store::open(data_dir).await?;
        Ok(Self::with_store(store, DEFAULT_PAGE_SIZE))
    }

    pub fn with_store(store: Store, page_size: u32) -> Self {
        Self::build(store, page_size, None)
    }

    fn build(store: Store, page_size: u32, search: Option<Arc<SearchIndex>>) -> Self {
        let (changes, _) = broadcast::channel(16);
        let wake = search
            .as_ref()
            .filter(|s| s.is_writable())
            .map(|_| Arc::new(tokio::sync::Notify::new()));
        let registry = Self {
            inner: Arc::new(Inner {
                store,
                page_size: page_size.max(1),
                manifests: RwLock::new(HashMap::new()),
                resolved: RwLock::new(ResolveCache {
                    filled_at: std::time::Instant::now(),
                    map: HashMap::new(),
                }),
                changes,
                blobs: BlobCache::default(),
                search,
                index_lock: tokio::sync::Mutex::new(()),
                wake_indexer: wake.clone(),
            }),
        };
        if let Some(wake) = wake {
            tokio::spawn(indexer::run(Arc::downgrade(&registry.inner), wake.clone()));
            // Catch up at once (the index may be missing or behind after a crash).
            wake.notify_one();
        }
        registry
    }

    pub fn with_page_size(self, page_size: u32) -> Self {
        Self::build(
            self.inner.store.clone(),
            page_size,
            self.inner.search.clone(),
        )
    }

    /// Open the search index in `dir` (creating or rebuilding it as needed) and keep it current
    /// from now on. Only one process can own an index directory.
    pub fn with_search(self, dir: &Path) -> Result<Self> {
        let index = SearchIndex::open(dir).map_err(|e| Error::Search(e.to_string()))?;
        if !index.is_writable() {
            tracing::warn!(dir = %dir.display(), "search index owned by another process: searching read-only");
        }
        Ok(Self::build(
            self.inner.store.clone(),
            self.inner.page_size,
            Some(Arc::new(index)),
        ))
    }

    /// The catalog generation the search index reflects, when this process has one.
    pub fn search_generation(&self) -> Option<u64> {
        self.inner.search.as_ref().map(|s| s.generation())
    }

    /// Every indexed skill, ordered by URI.
    pub fn search_documents(&self) -> Result<Vec<Hit>> {
        let index = self.inner.search.as_ref().ok_or(Error::SearchUnavailable)?;
        index.all().map_err(|e| Error::Search(e.to_string()))
    }

    /// Ranked skills for a free-text query. The search runs on a blocking thread (it takes
    /// milliseconds on a large catalog and fans out over the index's search threads), so it
    /// never holds up the async workers serving other requests.
    pub async fn search(
        &self,
        query: &str,
        namespace: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Hit>> {
        let index = self.inner.search.clone().ok_or(Error::SearchUnavailable)?;
        let (query, namespace) = (query.to_owned(), namespace.map(str::to_owned));
        let started = std::time::Instant::now();
        let hits = tokio::task::spawn_blocking(move || {
            index
                .search(&query, namespace.as_deref(), limit)
                .map_err(|e| Error::Search(e.to_string()))
        })
        .await
        .map_err(|e| Error::Search(format!("search task failed: {e}")))?;
        crate::metrics::search(started);
        hits
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// After a local change: let the indexer catch up (it then tells subscribers), or tell
    /// subscribers directly when this process keeps no index.
    fn notify_changed(&self) {
        self.forget_resolved();
        match &self.inner.wake_indexer {
            Some(wake) => wake.notify_one(),
            None => {
                let _ = self.inner.changes.send(());
            }
        }
    }

    /// The bytes stored under `digest`, verified: bytes that no longer hash to their digest are
    /// never served (`integrity_error`). Verified blobs are kept in a bounded cache.
    async fn blob(&self, digest: &str) -> Result<Vec<u8>> {
        if let Some(bytes) = self.inner.blobs.get(digest) {
            return Ok(bytes.as_ref().clone());
        }
        let bytes = self
            .inner
            .store
            .blob(digest)
            .await?
            .ok_or_else(|| Error::Integrity(format!("blob {digest} is missing")))?;
        if crate::core::Digest::of(&bytes).to_string() != digest {
            tracing::error!(
                digest,
                "stored bytes do not match their digest; refusing to serve them"
            );
            return Err(Error::Integrity(format!(
                "the stored bytes of {digest} do not match their digest"
            )));
        }
        let bytes = Arc::new(bytes);
        self.inner.blobs.insert(digest, bytes.clone());
        Ok(Arc::unwrap_or_clone(bytes))
    }

    /// A receiver that gets `()` after every change to the current catalog.
    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.inner.changes.subscribe()
    }

    /// Validate one skill version for storing (CPU work, no I/O: bulk loaders run it on other
    /// threads while the previous batch is written).
    ///
    /// `expected_name` (from a URL) must equal the frontmatter name when given. The version is
    /// `version`, else the frontmatter's semver `version`/`metadata.version`, else `0.1.0`.
    pub fn prepare(
        namespace: Namespace,
        files: Vec<InputFile>,
        expected_name: Option<&SkillName>,
        version: Option<SkillVersion>,
        published_by: Option<&str>,
    ) -> Result<Prepared> {
        let bundle =
            core::bundle::validate(files).inspect_err(|_| crate::metrics::publish("refused"))?;
        if let Some(expected) = expected_name
            && expected != &bundle.name
        {
            crate::metrics::publish("refused");
            return Err(Error::NameMismatch {
                expected: expected.to_string(),
                found: bundle.name.to_string(),
            });
        }
        let version = version
            .or_else(|| bundle.declared_version.clone())
            .unwrap_or_else(SkillVersion::initial);
        Ok(Prepared {
            namespace,
            bundle,
            version,
            published_by: published_by.map(str::to_owned),
        })
    }

    /// Validate and store one skill version (see [`Registry::prepare`]).
    pub async fn publish(
        &self,
        namespace: &Namespace,
        files: Vec<InputFile>,
        expected_name: Option<&SkillName>,
        version: Option<SkillVersion>,
        published_by: Option<&str>,
    ) -> Result<Published> {
        let prepared = Self::prepare(
            namespace.clone(),
            files,
            expected_name,
            version,
            published_by,
        )?;
        let outcome = self
            .inner
            .store
            .publish(prepared.new_version())
            .await
            .map_err(|e| prepared.store_error(e))?;
        if matches!(outcome, PublishOutcome::Created { .. }) {
            self.notify_changed();
        }
        Ok(prepared.published(outcome))
    }

    /// Store prepared versions with one commit (bulk loading). Each gets its own result: a
    /// conflicting version is refused alone; a storage failure fails the whole batch, and then
    /// nothing of it is stored.
    pub async fn publish_prepared(&self, items: Vec<Prepared>) -> Result<Vec<Result<Published>>> {
        let outcomes = self
            .inner
            .store
            .publish_many(items.iter().map(Prepared::new_version).collect())
            .await?;
        if outcomes
            .iter()
            .any(|o| matches!(o, Ok(PublishOutcome::Created { .. })))
        {
            self.notify_changed();
        }
        Ok(items
            .into_iter()
            .zip(outcomes)
            .map(|(prepared, outcome)| match outcome {
                Ok(outcome) => Ok(prepared.published(outcome)),
                Err(e) => Err(prepared.store_error(e)),
            })
            .collect())
    }

    /// One page of the listing table after `cursor`, and the cursor of the next page.
    async fn listing_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<crate::store::ListingRow>, Option<String>)> {
        let after = decode_cursor(cursor)?;
        let page_size = self.inner.page_size as usize;
        let mut rows = self
            .inner
            .store
            .list_page(&after, self.inner.page_size + 1)
            .await?;
        let more = rows.len() > page_size;
        rows.truncate(page_size);
        let next_cursor = more
            .then(|| rows.last().map(|r| encode_cursor(&r.uri)))
            .flatten();
        Ok((rows, next_cursor))
    }

    /// One page of current skills (root and nested), in URI order.
    pub async fn list_skills(&self, cursor: Option<&str>) -> Result<Page<SkillEntry>> {
        let (rows, next_cursor) = self.listing_page(cursor).await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.version_id).collect();
        let manifests = self.manifests(&ids).await?;
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            let uri = SkillUri::parse(&row.uri).map_err(|error| Error::InvalidUri {
                uri: row.uri.clone(),
                error,
            })?;
            let manifest = manifests
                .get(&row.version_id)
                .cloned()
                .ok_or_else(|| no_manifest(row.version_id))?;
            let root = SkillUri::root(&uri.namespace, &uri.name, None);
            let frontmatter = parse_frontmatter(&row.frontmatter)?;
            let mut skill = entry(
                &root,
                &manifest,
                &row.subpath,
                frontmatter,
                row.version,
                false,
            );
            if row.deprecated {
                skill.deprecation = Some(row.deprecation_message.unwrap_or_default());
            }
            items.push(skill);
        }
        Ok(Page { items, next_cursor })
    }

    /// The skill whose SKILL.md is at `uri` (current or pinned).
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry> {
        let not_found = || Error::NotFound(format!("No skill is served at {uri}"));
        let parsed = parse_uri(uri)?;
        let Target::Path(path) = &parsed.target else {
            return Err(not_found());
        };
        let subpath = if path == SKILL_MD {
            ""
        } else {
            path.strip_suffix(&format!("/{SKILL_MD}"))
                .ok_or_else(not_found)?
        };
        let (resolved, manifest) = self.resolve(&parsed).await?.ok_or_else(not_found)?;
        let manifest_entry = manifest
            .entries
            .iter()
            .find(|e| e.subpath == subpath)
            .ok_or_else(not_found)?;
        let pinned = parsed.version.is_some();
        let root = SkillUri::root(&parsed.namespace, &parsed.name, parsed.version.as_ref());
        let frontmatter = parse_frontmatter(&manifest_entry.frontmatter)?;
        let mut skill = entry(
            &root,
            &manifest,
            subpath,
            frontmatter,
            resolved.version,
            pinned,
        );
        if resolved.deprecated {
            skill.deprecation = Some(resolved.deprecation_message.unwrap_or_default());
        }
        if resolved.yanked {
            skill.yank_reason = Some(resolved.yank_reason.unwrap_or_default());
        }
        // Only the canonical spelling of a URI names a skill (hosts compare URIs as strings).
        if skill.uri != uri {
            return Err(not_found());
        }
        Ok(skill)
    }

    /// The bytes of the file at `uri`.
    pub async fn read(&self, uri: &str) -> Result<FileContent> {
        let not_found = || Error::NotFound(format!("No resource at {uri}"));
        let parsed = parse_uri(uri)?;
        let Target::Path(path) = &parsed.target else {
            return Err(not_found());
        };
        let (_, manifest) = self.resolve(&parsed).await?.ok_or_else(not_found)?;
        let Ok(i) = manifest
            .files
            .binary_search_by(|f| f.path.as_str().cmp(path))
        else {
            if path == crate::core::uri::FASTMCP_MANIFEST
                && let Some(bytes) = self.fastmcp_manifest(&parsed).await?
            {
                return Ok(FileContent {
                    uri: parsed.to_string(),
                    mime_type: "application/json".to_owned(),
                    bytes,
                    pinned: parsed.version.is_some(),
                });
            }
            return Err(not_found());
        };
        let file = &manifest.files[i];
        let bytes = self.blob(&file.digest).await?;
        let mime_type = mime::for_file(path, || mime::looks_like_text(&bytes));
        Ok(FileContent {
            uri: parsed.to_string(),
            mime_type,
            bytes,
            pinned: parsed.version.is_some(),
        })
    }

    /// The direct children of the directory at `uri`: a skill root or a subdirectory.
    pub async fn read_dir(&self, uri: &str) -> Result<Vec<DirChild>> {
        let parsed = parse_uri(uri)?;
        let (_, manifest) = self
            .resolve(&parsed)
            .await?
            .ok_or_else(|| Error::NotADirectory(uri.to_owned()))?;
        let prefix = match &parsed.target {
            Target::Root => String::new(),
            Target::Path(p) => format!("{p}/"),
        };
        let root = SkillUri::root(&parsed.namespace, &parsed.name, parsed.version.as_ref());
        let mut children: Vec<DirChild> = Vec::new();
        let mut last_dir: Option<&str> = None;
        for file in manifest
            .files
            .iter()
            .filter(|f| f.path.starts_with(&prefix))
        {
            let rest = &file.path[prefix.len()..];
            match rest.split_once('/') {
                Some((dir, _)) => {
                    if last_dir == Some(dir) {
                        continue;
                    }
                    last_dir = Some(dir);
                    children.push(DirChild {
                        uri: SkillUri::join(&root, &format!("{prefix}{dir}")),
                        name: dir.to_owned(),
                        mime_type: mime::DIRECTORY.to_owned(),
                        size: None,
                    });
                }
                None => children.push(DirChild {
                    uri: SkillUri::join(&root, &file.path),
                    name: rest.to_owned(),
                    mime_type: mime::for_file(&file.path, || true),
                    size: Some(file.size as u64),
                }),
            }
        }
        if children.is_empty() {
            return Err(Error::NotADirectory(uri.to_owned()));
        }
        children.sort_by(|a, b| a.uri.cmp(&b.uri));
        children.dedup_by(|a, b| a.uri == b.uri);
        Ok(children)
    }

    /// One page of current SKILL.md resources, in URI order.
    pub async fn list_skill_mds(&self, cursor: Option<&str>) -> Result<Page<SkillMdResource>> {
        let (rows, next_cursor) = self.listing_page(cursor).await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.version_id).collect();
        let manifests = self.manifests(&ids).await?;
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            let manifest = manifests
                .get(&row.version_id)
                .cloned()
                .ok_or_else(|| no_manifest(row.version_id))?;
            let path = if row.subpath.is_empty() {
                SKILL_MD.to_owned()
            } else {
                format!("{}/{SKILL_MD}", row.subpath)
            };
            let size = manifest
                .files
                .iter()
                .find(|f| f.path == path)
                .map_or(0, |f| f.size as u64);
            items.push(SkillMdResource {
                uri: row.uri,
                name: row.name,
                description: row.description,
                size,
            });
        }
        Ok(Page { items, next_cursor })
    }

    async fn resolve(&self, uri: &SkillUri) -> Result<Option<(ResolvedVersion, Arc<Manifest>)>> {
        let key = (
            uri.namespace.to_string(),
            uri.name.to_string(),
            uri.version.as_ref().map(ToString::to_string),
        );
        let cached = {
            let cache = self.inner.resolved.read().expect("resolve cache");
            (cache.filled_at.elapsed() < RESOLVE_TTL)
                .then(|| cache.map.get(&key).cloned())
                .flatten()
        };
        let resolved = match cached {
            Some(resolved) => resolved,
            None => {
                // Misses are not cached: a skill another process publishes is served at once.
                let Some(resolved) = self
                    .inner
                    .store
                    .resolve(&key.0, &key.1, key.2.as_deref())
                    .await?
                else {
                    return Ok(None);
                };
                let mut cache = self.inner.resolved.write().expect("resolve cache");
                if cache.filled_at.elapsed() >= RESOLVE_TTL
                    || cache.map.len() >= RESOLVE_CACHE_LIMIT
                {
                    cache.map.clear();
                    cache.filled_at = std::time::Instant::now();
                }
                cache.map.insert(key, resolved.clone());
                resolved
            }
        };
        let manifest = self.manifest(resolved.version_id).await?;
        Ok(Some((resolved, manifest)))
    }

    /// Drop every cached resolution (after a change to the catalog).
    fn forget_resolved(&self) {
        let mut cache = self.inner.resolved.write().expect("resolve cache");
        cache.map.clear();
        cache.filled_at = std::time::Instant::now();
    }

    /// Manifests of many versions: cached ones, and the misses read in one go (then cached).
    async fn manifests(&self, version_ids: &[i64]) -> Result<HashMap<i64, Arc<Manifest>>> {
        let mut found = HashMap::with_capacity(version_ids.len());
        let mut missing = Vec::new();
        {
            let cache = self.inner.manifests.read().expect("manifest cache");
            for id in version_ids {
                match cache.get(id) {
                    Some(m) => {
                        found.insert(*id, m.clone());
                    }
                    None => missing.push(*id),
                }
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        let loaded = self.inner.store.manifests(&missing).await?;
        let mut cache = self.inner.manifests.write().expect("manifest cache");
        if cache.len() + loaded.len() > MANIFEST_CACHE_LIMIT {
            cache.clear();
        }
        for (id, manifest) in loaded {
            let manifest = Arc::new(manifest);
            cache.insert(id, manifest.clone());
            found.insert(id, manifest);
        }
        Ok(found)
    }

    async fn manifest(&self, version_id: i64) -> Result<Arc<Manifest>> {
        self.manifests(&[version_id])
            .await?
            .remove(&version_id)
            .ok_or_else(|| no_manifest(version_id))
    }
}

/// A version the catalog points at has no stored files.
fn no_manifest(version_id: i64) -> Error {
    Error::Storage(crate::store::StoreError::Corrupt(format!(
        "version {version_id} has no files"
    )))
}

/// Build the entry of the skill at `subpath` of a version whose root URI is `root`.
fn entry(
    root: &str,
    manifest: &Manifest,
    subpath: &str,
    frontmatter: Map<String, Value>,
    version: String,
    pinned: bool,
) -> SkillEntry {
    let prefix = if subpath.is_empty() {
        String::new()
    } else {
        format!("{subpath}/")
    };
    let resources = manifest
        .files
        .iter()
        .filter(|f| f.path.starts_with(&prefix))
        .map(|f| FileRef {
            uri: SkillUri::join(root, &f.path),
            digest: f.digest.clone(),
            size: f.size as u64,
        })
        .collect();
    SkillEntry {
        uri: SkillUri::join(root, &format!("{prefix}{SKILL_MD}")),
        frontmatter,
        resources,
        version,
        pinned,
        deprecation: None,
        yank_reason: None,
    }
}

fn parse_uri(uri: &str) -> Result<SkillUri> {
    SkillUri::parse(uri).map_err(|error| Error::InvalidUri {
        uri: uri.chars().take(200).collect(),
        error,
    })
}

fn parse_frontmatter(json: &str) -> Result<Map<String, Value>> {
    serde_json::from_str(json).map_err(|e| {
        Error::Storage(crate::store::StoreError::Corrupt(format!(
            "stored frontmatter: {e}"
        )))
    })
}

fn encode_cursor(last_uri: &str) -> String {
    URL_SAFE_NO_PAD.encode(last_uri)
}

fn decode_cursor(cursor: Option<&str>) -> Result<String> {
    let Some(cursor) = cursor else {
        return Ok(String::new());
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::InvalidCursor)?;
    let uri = String::from_utf8(bytes).map_err(|_| Error::InvalidCursor)?;
    if !uri.starts_with(SCHEME_PREFIX) {
        return Err(Error::InvalidCursor);
    }
    Ok(uri)
}

type BlobMap = HashMap<String, Arc<Vec<u8>>>;

/// Verified blobs kept in memory, up to [`BLOB_CACHE_BYTES`]; cleared when full.
#[derive(Default)]
struct BlobCache {
    /// Bytes by digest, and their total size.
    map: RwLock<(BlobMap, usize)>,
}

/// Memory for cached file bytes.
const BLOB_CACHE_BYTES: usize = 64 * 1024 * 1024;
/// Files larger than this are not cached.
const BLOB_CACHE_MAX_ITEM: usize = 1024 * 1024;

impl BlobCache {
    fn get(&self, digest: &str) -> Option<Arc<Vec<u8>>> {
        self.map.read().ok()?.0.get(digest).cloned()
    }

    fn insert(&self, digest: &str, bytes: Arc<Vec<u8>>) {
        if bytes.len() > BLOB_CACHE_MAX_ITEM {
            return;
        }
        let Ok(mut guard) = self.map.write() else {
            return;
        };
        let (map, size) = &mut *guard;
        if *size + bytes.len() > BLOB_CACHE_BYTES {
            map.clear();
            *size = 0;
        }
        *size += bytes.len();
        map.insert(digest.to_owned(), bytes);
    }
}

/// Cursor over (namespace, name) keys for the REST catalog.
fn encode_key_cursor(namespace: &str, name: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{namespace}/{name}"))
}

fn decode_key_cursor(cursor: &str) -> Result<(String, String)> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::InvalidCursor)?;
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidCursor)?;
    let (ns, name) = text.split_once('/').ok_or(Error::InvalidCursor)?;
    Ok((ns.to_owned(), name.to_owned()))
}

/// The `skills/list` cursor that continues after `uri` (for benchmarks and tests).
pub fn cursor_after(uri: &str) -> String {
    encode_cursor(uri)
}
