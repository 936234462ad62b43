//! The embedded engine: one SQLite database file (`skillreg.db`, WAL mode) in the data directory.
//!
//! Writes go through a single-connection pool and `BEGIN IMMEDIATE` transactions, so a publish is
//! atomic and never deadlocks against another writer (another process included); reads use a
//! separate pool and never block on writes. Each table group's queries live in a module of its
//! own: `skills` (skills, versions, files, entries, the listing), `tokens`, `audit`, `completion`,
//! `changes` (the feed the search index follows), `maintenance` (stats, verify, backup) and
//! `blobs`; `write` holds what every write shares.

mod audit;
mod blobs;
mod changes;
mod completion;
mod maintenance;
mod skills;
mod tokens;
mod write;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::{
    AuditRecord, Blobs, CatalogRecord, ChangedSkill, Manifests, NewToken, NewVersion,
    PublishOutcome, ResolvedVersion, Result, SkillId, SkillRecord, Stats, Store, StoreError,
    TokenRecord, VerifyReport, VersionId, VersionRecord,
};
use crate::core::{Digest, Namespace, SkillRef, SkillVersion, VersionRef, Visibility};

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "skillreg.db";

/// The SQLite engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    read: SqlitePool,
    write: SqlitePool,
}

impl SqliteStore {
    /// Open (creating if needed) the database in `data_dir` and apply pending migrations. A data
    /// directory on read-only storage is served read-only.
    pub async fn open(data_dir: &Path) -> Result<Self> {
        create_private_dir(data_dir)?;
        let path = data_dir.join(DB_FILE);
        if path.exists() && !writable(data_dir) {
            return Self::open_read_only(&path).await;
        }
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: an acknowledged publish survives power loss, not only a process crash.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.read_only(true))
            .await?;
        Ok(Self { read, write })
    }

    /// Serve a database on read-only storage: every read works, every write fails with
    /// `storage_read_only`. `immutable` because WAL locking needs a writable directory.
    async fn open_read_only(path: &Path) -> Result<Self> {
        tracing::warn!(path = %path.display(), "the data directory is read-only: serving reads only");
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .read_only(true)
            .immutable(true);
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options.clone())
            .await?;
        let migrator = sqlx::migrate!("./migrations/sqlite");
        let applied: i64 = sqlx::query_scalar(
            "SELECT coalesce(max(version), 0) FROM _sqlx_migrations WHERE success",
        )
        .fetch_one(&read)
        .await?;
        let latest = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        if applied < latest {
            return Err(StoreError::Corrupt(format!(
                "the read-only database is at schema version {applied}; this build needs {latest}"
            )));
        }
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        Ok(Self { read, write })
    }
}

/// Create the data directory readable by its owner only (it holds token hashes and the audit
/// log); an existing directory keeps its mode.
fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| StoreError::Io {
            context: format!("creating data directory {}", dir.display()),
            source: e,
        })
}

/// Whether files can be created in `dir` (false on a read-only mount, whoever we are).
pub fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".skillreg-write-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(_) => false,
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn publish(&self, new: NewVersion<'_>) -> Result<PublishOutcome> {
        skills::publish(&self.write, new).await
    }

    async fn publish_many(
        &self,
        versions: Vec<NewVersion<'_>>,
    ) -> Result<Vec<Result<PublishOutcome>>> {
        skills::publish_many(&self.write, versions).await
    }

    async fn content_digests(&self, versions: &[VersionRef]) -> Result<Vec<Option<Digest>>> {
        skills::content_digests(&self.read, versions).await
    }

    async fn list_page(
        &self,
        after: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<super::ListingRecord>> {
        skills::list_page(&self.read, after, limit, visibility).await
    }

    async fn resolve(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
    ) -> Result<Option<ResolvedVersion>> {
        skills::resolve(&self.read, skill, version).await
    }

    async fn manifests(&self, version_ids: &[VersionId]) -> Result<Manifests> {
        skills::manifests(&self.read, version_ids).await
    }

    async fn skill(&self, skill: &SkillRef) -> Result<Option<SkillRecord>> {
        skills::skill(&self.read, skill).await
    }

    async fn versions(&self, skill_id: SkillId) -> Result<Vec<VersionRecord>> {
        skills::versions(&self.read, skill_id).await
    }

    async fn version(
        &self,
        skill_id: SkillId,
        version: &SkillVersion,
    ) -> Result<Option<VersionRecord>> {
        skills::version(&self.read, skill_id, version).await
    }

    async fn catalog_page(
        &self,
        namespace: Option<&Namespace>,
        after: Option<&SkillRef>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>> {
        skills::catalog_page(&self.read, namespace, after, limit, visibility).await
    }

    async fn set_private(&self, namespace: &Namespace, private: bool, actor: &str) -> Result<()> {
        skills::set_private(&self.write, namespace, private, actor).await
    }

    async fn private_namespaces(&self) -> Result<Vec<Namespace>> {
        skills::private_namespaces(&self.read).await
    }

    async fn set_yanked(
        &self,
        version: &VersionRef,
        reason: Option<&str>,
        actor: &str,
    ) -> Result<bool> {
        skills::set_yanked(&self.write, version, reason, actor).await
    }

    async fn set_deprecated(
        &self,
        skill: &SkillRef,
        message: Option<&str>,
        actor: &str,
    ) -> Result<bool> {
        skills::set_deprecated(&self.write, skill, message, actor).await
    }

    async fn create_token(&self, token: NewToken<'_>) -> Result<TokenRecord> {
        tokens::create(&self.write, token).await
    }

    async fn revoke_token(&self, id: &str, actor: &str) -> Result<bool> {
        tokens::revoke(&self.write, id, actor).await
    }

    async fn token_by_hash(&self, hash: &Digest) -> Result<Option<TokenRecord>> {
        tokens::by_hash(&self.read, hash).await
    }

    async fn tokens(&self) -> Result<Vec<TokenRecord>> {
        tokens::all(&self.read).await
    }

    async fn audit_page(&self, after: i64, limit: u32) -> Result<Vec<AuditRecord>> {
        audit::page(&self.read, after, limit).await
    }

    async fn complete_namespaces(
        &self,
        prefix: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<(Vec<String>, u64)> {
        completion::namespaces(&self.read, prefix, limit, visibility).await
    }

    async fn complete_names(
        &self,
        namespace: Option<&Namespace>,
        prefix: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<(Vec<String>, u64)> {
        completion::names(&self.read, namespace, prefix, limit, visibility).await
    }

    async fn generation(&self) -> Result<i64> {
        changes::generation(&self.read).await
    }

    async fn changed_since(
        &self,
        since: i64,
        after_id: SkillId,
        limit: u32,
    ) -> Result<Vec<ChangedSkill>> {
        changes::since(&self.read, since, after_id, limit).await
    }

    async fn stats(&self) -> Result<Stats> {
        maintenance::stats(&self.read).await
    }

    async fn verify(&self, progress: &(dyn Fn(u64) + Send + Sync)) -> Result<VerifyReport> {
        maintenance::verify(&self.read, progress).await
    }

    async fn backup(&self, path: &Path) -> Result<()> {
        maintenance::backup(&self.read, path).await
    }

    async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }
}

#[async_trait]
impl Blobs for SqliteStore {
    async fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        blobs::get(&self.read, digest).await
    }

    async fn put_if_absent(&self, items: &[(Digest, &[u8])]) -> Result<()> {
        blobs::put_if_absent(&self.write, items).await
    }
}

#[cfg(test)]
mod tests;
