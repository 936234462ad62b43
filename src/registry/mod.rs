//! The use cases every transport calls, behind one typed API: publishing and import; reading
//! (`skills/list`, `skills/get`, reads, directory reads, the REST catalog views, exports);
//! lifecycle (yank, deprecate); access (authentication, tokens, the audit log); search and
//! completion; and operations (health, stats, verify, backup, close).
//!
//! `Registry` orders the work between `core` (rules), `store` (storage, behind its interfaces) and
//! `search` (the derived index). It is a cheap `Clone`. Inputs are parsed at the edge into core
//! types ([`SkillRef`], [`VersionRef`], [`SkillUri`]); outputs are core types and the views
//! declared here.
//!
//! What a published version contains never changes, so manifests are cached by version id. What
//! is *current* (and a version's yank and deprecation state) is cached for at most
//! [`RESOLVE_TTL`] and dropped at once on every change this process makes: a skill another
//! process imports into the same data directory is served by the next request, and a new version
//! of an existing skill within [`RESOLVE_TTL`]. When storage announces every change (PostgreSQL's
//! change feed), resolutions are dropped when a change is heard and kept for up to
//! [`FEED_RESOLVE_TTL`] otherwise. A transport that keeps its own answers about what is current
//! (the MCP surface keeps `skills/list` pages as served) follows the same rule through
//! [`Registry::current_epoch`]. Every cache of the process, the transports' included, is built
//! from one memory budget ([`Registry::caches`]); [`cache`] lists them with their weights and
//! what invalidates each.

mod access;
pub mod cache;
mod catalog;
mod complete;
mod discovery;
mod entries;
mod feed;
mod import;
mod indexer;
mod lifecycle;
mod publish;
mod read;
mod sources;
mod trust;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::config::Storage;
use crate::core::scan::Policy;
use crate::core::{Digest, Namespace, Principal, SkillRef, SkillVersion, Visibility};
use crate::error::{Error, Result};
use crate::search::SearchIndex;
use crate::store::{Backend, Blobs, Location, Manifest, ResolvedVersion, Store};

pub use crate::core::Status;
pub use crate::store::{CopyReport, SourceRecord, Stats, VerifyReport, VersionId};
pub use access::{AuditEntry, NewTokenRequest, TokenInfo};
pub use catalog::{
    CatalogItem, MAX_SAME_NAME, ManifestFile, SkillDetail, VersionDetail, VersionSummary,
};
pub use complete::{Completion, MAX_COMPLETIONS};
pub use discovery::{Artifact, DiscoveryEntry, DiscoveryScope};
pub use entries::{EntryCodec, Listed};
pub use import::{ImportLine, ImportOptions, ImportOutcome, ImportSummary};
pub use publish::{Prepared, PublishRequest, Published};
pub use read::{
    DirChild, FileContent, FileRef, Keep, Located, SearchHit, SkillEntry, SkillMdResource,
    SkillSummary, cursor_after,
};
pub use sources::{MirrorItem, ReadLimits, SourceRead, SourceRun, Upstream};
pub use trust::{FindingsItem, RescanReport, Revocation};

/// Default number of skills on one `skills/list` / `resources/list` page.
pub const DEFAULT_PAGE_SIZE: u32 = 100;
/// How long a resolved (namespace, name, version) stays cached when nothing changes locally.
pub const RESOLVE_TTL: Duration = Duration::from_secs(1);
/// The same, when storage announces every change (a change heard drops the cache at once; the
/// limit only bounds what a missed announcement could leave stale).
pub const FEED_RESOLVE_TTL: Duration = Duration::from_secs(30);
/// Blobs up to this size are verified on the async worker that reads them; larger ones on a
/// blocking thread (hashing 1 MiB takes about a millisecond).
const HASH_INLINE_BYTES: usize = 256 * 1024;

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

/// `rows` fetched as `limit + 1`: the page's rows, and the cursor after its last row when the
/// extra row shows that more follow.
fn split_page<R>(
    mut rows: Vec<R>,
    limit: u32,
    cursor_of: impl Fn(&R) -> String,
) -> (Vec<R>, Option<String>) {
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next = more.then(|| rows.last().map(cursor_of)).flatten();
    (rows, next)
}

/// A page of results and the cursor of the next one.
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

/// The registry. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

type ResolveKey = (SkillRef, Option<SkillVersion>);
/// Namespace or name completion: which, within which namespace, the prefix, and who asks.
type CompletionKey = (complete::Completing, Option<Namespace>, String, Visibility);

struct Inner {
    store: Arc<dyn Store>,
    blobs: Arc<dyn Blobs>,
    page_size: u32,
    /// The caches' memory budget: every cache of the process is built from it ([`cache`]).
    budget: cache::Budget,
    manifests: cache::Cache<VersionId, Arc<Manifest>>,
    resolved: cache::Cache<ResolveKey, ResolvedVersion>,
    /// Namespace and name completions, kept and dropped like resolutions.
    completions: cache::Cache<CompletionKey, (Vec<String>, u64)>,
    /// Verified file bytes, by digest.
    blob_cache: cache::Cache<Digest, Arc<Vec<u8>>>,
    /// Exported archives, by version and format.
    exports: cache::Cache<(VersionId, crate::core::archive::Format), Arc<Vec<u8>>>,
    /// Digests of exported archives, by version (what discovery indexes announce).
    archive_digests: cache::Cache<VersionId, Digest>,
    /// Bounds CPU-heavy work (packing archives, rendering pages): it runs on blocking threads,
    /// at most this many at once, so it never holds up the async workers serving requests.
    heavy: tokio::sync::Semaphore,
    /// The private namespaces, for filtering search hits (refreshed like resolutions).
    private: cache::Cache<(), Arc<std::collections::HashSet<Namespace>>>,
    /// Bumped whenever the short-lived caches are dropped: an answer about what is current,
    /// kept by a transport with the epoch it was made in, is stale once the epoch moved.
    epoch: std::sync::atomic::AtomicU64,
    /// How long an answer about what is current may be kept when nothing is heard.
    current_ttl: Duration,
    changes: broadcast::Sender<()>,
    /// The search index, when this process keeps one (the server does; imports do not).
    search: Option<Arc<SearchIndex>>,
    /// Serialises index updates. Holds whether an update failed since the last full build: the
    /// index is then rebuilt from storage, since a failed commit (a full disk) may have lost
    /// documents that the next commit's generation would claim.
    index_lock: tokio::sync::Mutex<IndexState>,
    /// Wakes the indexer task after a change.
    wake_indexer: Option<Arc<tokio::sync::Notify>>,
    /// Whether the search index has caught up with storage once since this process started
    /// (`/readyz` answers 503 until it has).
    search_caught_up: std::sync::atomic::AtomicBool,
    /// Stops the background tasks ([`Registry::close`]).
    stop: CancellationToken,
    /// The indexer and the change-feed listener.
    tasks: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The admin token's hash, when one is configured.
    admin_hash: Option<Digest>,
    /// What scan findings do to a version.
    policy: Policy,
    /// How the serving transport serializes entries for the store to keep, once registered.
    codec: entries::Codec,
    /// How MCP sources are read, once registered ([`Registry::read_upstreams_with`]).
    upstream: std::sync::OnceLock<Arc<dyn sources::Upstream>>,
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
}

impl RegistryBuilder {
    /// Memory for the caches of the process, all together (`cache_memory_mib`), split by
    /// [`cache::CACHES`].
    pub fn cache_memory_mib(mut self, mib: usize) -> Self {
        self.cache_bytes = mib.saturating_mul(1 << 20);
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
            .unwrap_or_else(|| Location::Sqlite(self.data_dir.clone()));
        let backend = crate::store::open(&location).await?;
        let search = if self.search {
            let dir = search_dir(&self.data_dir);
            if let Some(snapshot) = self.index_snapshot {
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
        Ok(Registry::assemble(
            backend,
            self.page_size,
            search,
            self.admin_token.as_deref(),
            self.policy,
            self.cache_bytes,
        ))
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
        Ok(builder.scan_policy(policy))
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
        }
    }

    fn assemble(
        backend: Backend,
        page_size: u32,
        search: Option<Arc<SearchIndex>>,
        admin_token: Option<&str>,
        policy: Policy,
        cache_bytes: usize,
    ) -> Self {
        let (changes, _) = broadcast::channel(16);
        let resolve_ttl = if backend.feed.is_some() {
            FEED_RESOLVE_TTL
        } else {
            RESOLVE_TTL
        };
        let budget = cache::Budget::new(cache_bytes, resolve_ttl);
        use cache::CacheId;
        let wake = search
            .as_ref()
            .filter(|s| s.is_writable())
            .map(|_| Arc::new(tokio::sync::Notify::new()));
        let registry = Self {
            inner: Arc::new(Inner {
                store: backend.store,
                blobs: backend.blobs,
                page_size,
                manifests: budget.cache(CacheId::Manifests, |_, m| cache::manifest_bytes(m)),
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
                blob_cache: budget.cache(CacheId::Blobs, |_, b| cache::vec_bytes(b)),
                exports: budget.cache(CacheId::Exports, |_, b| cache::vec_bytes(b)),
                archive_digests: budget.cache(CacheId::ArchiveDigests, |_, _| 0),
                heavy: tokio::sync::Semaphore::new(
                    std::thread::available_parallelism().map_or(1, |n| n.get()),
                ),
                private: budget.cache(CacheId::PrivateNamespaces, |_, set| {
                    set.iter().map(|n| n.as_str().len() + 32).sum()
                }),
                epoch: std::sync::atomic::AtomicU64::new(0),
                current_ttl: resolve_ttl,
                changes,
                search,
                index_lock: tokio::sync::Mutex::new(IndexState::default()),
                wake_indexer: wake.clone(),
                search_caught_up: false.into(),
                stop: CancellationToken::new(),
                tasks: std::sync::Mutex::new(Vec::new()),
                admin_hash: admin_token.map(|t| Digest::of(t.as_bytes())),
                policy,
                codec: entries::Codec::new(&budget),
                budget,
                upstream: std::sync::OnceLock::new(),
            }),
        };
        let mut tasks = Vec::new();
        if let Some(wake) = wake {
            tasks.push(tokio::spawn(indexer::run(
                Arc::downgrade(&registry.inner),
                wake.clone(),
                registry.inner.stop.clone(),
            )));
            // Catch up at once (the index may be missing or behind after a crash).
            wake.notify_one();
        }
        if let Some(feed) = backend.feed {
            tasks.push(tokio::spawn(feed::run(
                Arc::downgrade(&registry.inner),
                feed,
                registry.inner.stop.clone(),
            )));
        }
        *registry
            .inner
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = tasks;
        registry
    }

    fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    /// The scan policy publishes are judged by.
    pub fn scan_policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The caches' memory budget: a transport builds its caches from it, so that every cache of
    /// the process shares one `cache_memory_mib` and shows in `/metrics`.
    pub fn caches(&self) -> &cache::Budget {
        &self.inner.budget
    }

    /// A receiver that gets `()` after every change to the current catalog.
    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.inner.changes.subscribe()
    }

    /// Drop every cached answer about what is current (resolutions, completions, the private
    /// namespaces); manifests and file bytes never change and stay.
    fn drop_current(&self) {
        self.inner
            .epoch
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.inner.resolved.clear();
        self.inner.completions.clear();
        self.inner.private.clear();
    }

    /// Which generation of answers about what is current this process is at, and how long one
    /// may be kept: a transport that keeps such an answer (a `skills/list` page as served) may
    /// serve it again while the epoch is the same and it is younger than the duration, as the
    /// registry does with its own resolutions.
    pub fn current_epoch(&self) -> (u64, Duration) {
        (
            self.inner.epoch.load(std::sync::atomic::Ordering::Acquire),
            self.inner.current_ttl,
        )
    }

    /// After a change (made here, or announced by another process): drop the short-lived
    /// caches, and let the indexer catch up (it then tells subscribers), or tell subscribers
    /// directly when this process keeps no index.
    fn notify_changed(&self) {
        self.drop_current();
        match &self.inner.wake_indexer {
            Some(wake) => wake.notify_one(),
            None => {
                let _ = self.inner.changes.send(());
            }
        }
    }

    /// The bytes stored under `digest`, verified: bytes that no longer hash to their digest are
    /// never served (`integrity_error`). Verified blobs are kept in a bounded cache when `keep`.
    async fn blob(&self, digest: &Digest, keep: bool) -> Result<Arc<Vec<u8>>> {
        if let Some(bytes) = self.inner.blob_cache.get(digest) {
            return Ok(bytes);
        }
        let bytes = self
            .inner
            .blobs
            .get(digest)
            .await?
            .ok_or_else(|| Error::Integrity(format!("blob {digest} is missing")))?;
        // Hashing a large file is CPU work: off the async workers, like other heavy work.
        let (bytes, intact) = if bytes.len() > HASH_INLINE_BYTES {
            let expected = *digest;
            self.heavy(move || {
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
        let bytes = Arc::new(bytes);
        if keep {
            self.inner.blob_cache.insert(*digest, bytes.clone());
        }
        Ok(bytes)
    }

    /// The private namespaces (cached like resolutions).
    async fn private_namespaces(&self) -> Result<Arc<std::collections::HashSet<Namespace>>> {
        if let Some(set) = self.inner.private.get(&()) {
            return Ok(set);
        }
        let set = Arc::new(
            self.store()
                .private_namespaces()
                .await?
                .into_iter()
                .collect::<std::collections::HashSet<_>>(),
        );
        self.inner.private.insert((), set.clone());
        Ok(set)
    }

    /// Make `namespace` private (its skills visible only to tokens that may read it) or public
    /// again. Admin only; audited.
    pub async fn set_private(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        private: bool,
    ) -> Result<()> {
        caller.require_admin()?;
        self.store()
            .set_private(namespace, private, &caller.actor())
            .await?;
        self.notify_changed();
        Ok(())
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
        // A version pending review is never served over MCP, whoever asks.
        let found = self
            .resolve(skill, version)
            .await?
            .filter(|(resolved, _)| viewer.sees(&skill.namespace, resolved.private))
            .filter(|(resolved, _)| !resolved.pending);
        // Only a pinned version can be revoked (the current one never is); nobody reads it.
        if let Some((resolved, _)) = &found
            && let Some(reason) = &resolved.revoked
        {
            return Err(Error::Revoked {
                version: skill.clone().at(resolved.version.clone()),
                reason: reason.clone(),
            });
        }
        Ok(found)
    }

    /// What `skill` resolves to (current, or the pinned `version`), with its manifest.
    async fn resolve(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
    ) -> Result<Option<(ResolvedVersion, Arc<Manifest>)>> {
        let key = (skill.clone(), version.cloned());
        let resolved = match self.inner.resolved.get(&key) {
            Some(resolved) => resolved,
            None => {
                // Misses are not cached: a skill another process publishes is served at once.
                let Some(resolved) = self.store().resolve(skill, version).await? else {
                    return Ok(None);
                };
                self.inner.resolved.insert(key, resolved.clone());
                resolved
            }
        };
        let manifest = self.manifest(resolved.version_id).await?;
        Ok(Some((resolved, manifest)))
    }

    /// Manifests of many versions: cached ones, and the misses read in one go (then cached).
    async fn manifests(
        &self,
        version_ids: &[VersionId],
    ) -> Result<std::collections::HashMap<VersionId, Arc<Manifest>>> {
        let mut found = std::collections::HashMap::with_capacity(version_ids.len());
        let mut missing = Vec::new();
        for id in version_ids {
            match self.inner.manifests.get(id) {
                Some(m) => {
                    found.insert(*id, m);
                }
                None => missing.push(*id),
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        for (id, manifest) in self.store().manifests(&missing).await? {
            let manifest = Arc::new(manifest);
            self.inner.manifests.insert(id, manifest.clone());
            found.insert(id, manifest);
        }
        Ok(found)
    }

    async fn manifest(&self, version_id: VersionId) -> Result<Arc<Manifest>> {
        self.manifests(&[version_id])
            .await?
            .remove(&version_id)
            .ok_or_else(|| no_manifest(version_id))
    }

    /// Run CPU-heavy `work` on a blocking thread, at most as many at once as there are cores.
    pub async fn heavy<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let _permit = self
            .inner
            .heavy
            .acquire()
            .await
            .map_err(|e| Error::Internal(e.to_string()))?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Error::Internal(format!("a blocking task failed: {e}")))
    }

    // ---- operations ---------------------------------------------------------------------------

    /// Whether the storage answers, the generation it is at, and the search index's. Costs the
    /// same at any catalog size (anyone may ask).
    pub async fn health(&self) -> Health {
        let generation = self.store().generation().await;
        let search = match &self.inner.search {
            None => SearchHealth::NotConfigured,
            Some(index) => match index.healthy() {
                Ok(generation)
                    if !self
                        .inner
                        .search_caught_up
                        .load(std::sync::atomic::Ordering::Relaxed) =>
                {
                    SearchHealth::CatchingUp { generation }
                }
                Ok(generation) => SearchHealth::Ok { generation },
                Err(e) => {
                    tracing::warn!(error = %e, "readiness: the search index is failing");
                    SearchHealth::Failing
                }
            },
        };
        Health {
            generation: generation
                .inspect_err(|e| tracing::warn!(error = %e, "readiness: storage is failing"))
                .ok(),
            search,
        }
    }

    /// The catalog generation: how many changes storage has applied.
    pub async fn generation(&self) -> Result<i64> {
        Ok(self.store().generation().await?)
    }

    /// Connections of the storage pool that reads use: open, and idle among them.
    pub fn connections(&self) -> (u32, usize) {
        self.store().connections()
    }

    /// Row counts and stored bytes.
    pub async fn stats(&self) -> Result<Stats> {
        Ok(self.store().stats().await?)
    }

    /// Scrub the whole store (every blob re-hashed, every row checked) and, when this process
    /// keeps a search index that is current, check that it holds every skill.
    pub async fn verify(&self, progress: &(dyn Fn(u64) + Send + Sync)) -> Result<VerifyReport> {
        let mut report = self.store().verify(progress).await?;
        if let Some(index) = &self.inner.search {
            self.catch_up_search().await.ok();
            let generation = self.store().generation().await?;
            // An index another process owns may lag a moment behind; compare only a current one.
            if let Some((indexed, docs)) = index.committed_len()
                && indexed == generation as u64
            {
                let expected = self.store().stats().await?.skills;
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
        Ok(self.store().backup(path).await?)
    }

    /// Bring the search index up to date with storage, then write it to `to` as a snapshot that
    /// new replicas start from ([`RegistryBuilder::index_snapshot`]). The index's writer is
    /// given up first (a snapshot is taken of an index nobody writes), so call this last, as a
    /// job does.
    pub async fn write_search_snapshot(&self, to: &Path) -> Result<SnapshotInfo> {
        let Some(index) = self.inner.search.clone() else {
            return Err(Error::SearchUnavailable);
        };
        if !index.is_writable() {
            return Err(crate::search::SearchError::ReadOnly.into());
        }
        self.catch_up_search().await?;
        let _state = self.inner.index_lock.lock().await;
        let to = to.to_path_buf();
        let (generation, skills) = (index.generation(), index.len());
        let bytes = tokio::task::spawn_blocking(move || index.write_snapshot(&to))
            .await
            .map_err(|e| crate::search::SearchError::Task(e.to_string()))??;
        Ok(SnapshotInfo {
            generation,
            skills,
            bytes,
        })
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
        Ok(crate::store::copy::copy(self.store(), target.store(), progress).await?)
    }

    /// Stop the indexer, release the search index and close storage. Pending index updates are
    /// dropped (the next owner catches up from the generation).
    pub async fn close(&self) {
        self.inner.stop.cancel();
        let tasks =
            std::mem::take(&mut *self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for task in tasks {
            let _ = task.await;
        }
        if let Some(index) = &self.inner.search {
            let index = index.clone();
            let _ = tokio::task::spawn_blocking(move || index.release_writer()).await;
        }
        self.store().close().await;
    }
}

/// A search index snapshot as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SnapshotInfo {
    /// The catalog generation it reflects: a replica starting from it catches up from there.
    pub generation: u64,
    pub skills: u64,
    pub bytes: u64,
}

/// What the indexer knows about its index beyond the generation it records.
#[derive(Debug, Default)]
struct IndexState {
    /// An update failed: rebuild from storage before trusting the index again.
    damaged: bool,
    /// The storage's catalog id, once read (it never changes).
    catalog: Option<i64>,
}

/// What `/readyz` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// The storage's generation, `None` when storage is failing.
    pub generation: Option<i64>,
    pub search: SearchHealth,
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

impl Health {
    pub fn ready(&self) -> bool {
        self.generation.is_some()
            && matches!(
                self.search,
                SearchHealth::NotConfigured | SearchHealth::Ok { .. }
            )
    }
}

/// A version the catalog points at has no stored files.
fn no_manifest(version_id: VersionId) -> Error {
    Error::Storage(crate::store::StoreError::Corrupt(format!(
        "version {version_id} has no files"
    )))
}

#[cfg(test)]
mod tests;
