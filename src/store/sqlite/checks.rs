//! What only SQLite's maintenance has (the rest is `store/sql/maintenance.rs`): the checks of
//! its derived columns and of the file's integrity, and online backup.

use std::path::Path;

use sqlx::SqlitePool;

use crate::store::rows::Scrub;
use crate::store::{Result, StoreError};

/// The scrub of the columns derived from the tables of record (manifests, the listing's copies,
/// kept serialized entries).
pub(super) async fn derived(pool: &SqlitePool, scrub: &mut Scrub) -> Result<()> {
    for version_id in sqlx::query_scalar::<_, i64>(super::skills::STALE_MANIFESTS)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "version {version_id}: its manifest column differs from its files and entries"
        ));
    }
    super::listing::scrub(pool, scrub).await?;
    for uri in sqlx::query_scalar::<_, String>(super::write::DANGLING_LISTING_ENTRIES)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "listing {uri}: it names a serialized entry that is not kept"
        ));
    }
    let orphans = sqlx::query_scalar::<_, i64>(super::write::ORPHAN_LISTING_ENTRIES)
        .fetch_all(pool)
        .await?;
    if !orphans.is_empty() {
        scrub.problem(format!(
            "{} serialized entries belong to no listing row (the first: {})",
            orphans.len(),
            orphans[0]
        ));
    }
    let (last, given): (i64, Option<i64>) = sqlx::query_as(super::write::ENTRY_IDS)
        .fetch_one(pool)
        .await?;
    if let Some(given) = given.filter(|&given| given > last) {
        scrub.problem(format!(
            "a serialized entry id ({given}) is past meta.last_entry_id ({last}): an id may be \
             given twice"
        ));
    }
    Ok(())
}

/// SQLite's own check of the database file.
pub(super) async fn integrity(pool: &SqlitePool, scrub: &mut Scrub) -> Result<()> {
    let check: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(pool)
        .await?;
    if check != "ok" {
        scrub.problem(format!("SQLite quick_check: {check}"));
    }
    Ok(())
}

/// A consistent copy of the database at `path` (which must not exist), taken while the
/// registry keeps serving and publishing: SQLite `VACUUM INTO` reads one snapshot. The copy
/// holds what the database holds, so it is created readable by its owner only, like the
/// database: empty first (which `VACUUM INTO` fills), never over an existing file.
pub(super) async fn backup(pool: &SqlitePool, path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let target = path.to_str().ok_or_else(|| StoreError::Io {
        context: "backing up".to_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the target path is not UTF-8",
        ),
    })?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| StoreError::Io {
            context: format!("backing up to {}", path.display()),
            source: if source.kind() == std::io::ErrorKind::AlreadyExists {
                std::io::Error::new(source.kind(), "the target already exists")
            } else {
                source
            },
        })?;
    let copied = sqlx::query("VACUUM INTO ?1")
        .bind(target)
        .execute(pool)
        .await;
    if copied.is_err() {
        let _ = std::fs::remove_file(path);
    }
    copied?;
    Ok(())
}
