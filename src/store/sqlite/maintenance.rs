//! Maintenance: row counts, the scrub that re-hashes every stored byte, and online backup.

use std::path::Path;

use sqlx::SqlitePool;

use crate::store::rows::{self, Scrub};
use crate::store::{Result, Stats, StoreError, VerifyReport};

pub(super) async fn stats(pool: &SqlitePool) -> Result<Stats> {
    let counters = sqlx::query_as("SELECT key, value FROM meta WHERE key LIKE 'count_%'")
        .fetch_all(pool)
        .await?;
    Ok(rows::stats(counters))
}

/// The same numbers counted from the tables (what the counters must equal).
async fn counted(pool: &SqlitePool) -> Result<Stats> {
    let row = sqlx::query_as(
        "SELECT (SELECT count(*) FROM namespaces), (SELECT count(*) FROM skills),
                (SELECT count(*) FROM versions), (SELECT count(*) FROM version_files),
                (SELECT count(*) FROM blobs), (SELECT coalesce(sum(size), 0) FROM blobs),
                (SELECT count(*) FROM audit_log), (SELECT count(*) FROM tokens)",
    )
    .fetch_one(pool)
    .await?;
    Ok(rows::counted(row))
}

/// Scrub the whole store: every blob re-hashed against its digest and size, every file row
/// pointing at an existing blob, every version with its root entry and the content digest its
/// files give, every listing row at a current version. `progress` is called after each blob.
pub(super) async fn verify(
    pool: &SqlitePool,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<VerifyReport> {
    let mut scrub = Scrub::default();
    let mut after = String::new();
    loop {
        let blobs: Vec<(String, i64, Vec<u8>)> = sqlx::query_as(
            "SELECT digest, size, data FROM blobs WHERE digest > ?1 ORDER BY digest LIMIT 64",
        )
        .bind(&after)
        .fetch_all(pool)
        .await?;
        let Some(last) = blobs.last() else { break };
        after = last.0.clone();
        for (digest, size, data) in blobs {
            scrub.blob(&digest, size, &data);
            progress(scrub.report.blobs_checked);
        }
    }
    scrub.dangling(
        sqlx::query_as(
            "SELECT f.version_id, f.path, f.digest FROM version_files f
             LEFT JOIN blobs b ON b.digest = f.digest WHERE b.digest IS NULL",
        )
        .fetch_all(pool)
        .await?,
    );
    scrub.size_mismatch(
        sqlx::query_as(
            "SELECT f.version_id, f.path FROM version_files f
             JOIN blobs b ON b.digest = f.digest WHERE b.size != f.size",
        )
        .fetch_all(pool)
        .await?,
    );
    scrub.report.versions_checked = sqlx::query_scalar("SELECT count(*) FROM versions")
        .fetch_one(pool)
        .await?;
    let mut after = 0i64;
    loop {
        let rows: Vec<(i64, String, String, i64, String)> = sqlx::query_as(
            "SELECT v.id, v.content_digest, f.path, f.mode, f.digest
             FROM versions v JOIN version_files f ON f.version_id = v.id
             WHERE v.id IN (SELECT id FROM versions WHERE id > ?1 ORDER BY id LIMIT 500)
             ORDER BY v.id, f.path",
        )
        .bind(after)
        .fetch_all(pool)
        .await?;
        match scrub.content_digests(&rows) {
            Some(last) => after = last,
            None => break,
        }
    }
    scrub.rootless(
        sqlx::query_scalar(
            "SELECT v.id FROM versions v WHERE NOT EXISTS
               (SELECT 1 FROM version_entries e WHERE e.version_id = v.id AND e.subpath = '')
             OR NOT EXISTS
               (SELECT 1 FROM version_files f WHERE f.version_id = v.id AND f.path = 'SKILL.md')",
        )
        .fetch_all(pool)
        .await?,
    );
    scrub.file_counts(
        sqlx::query_scalar(
            "SELECT v.id FROM versions v WHERE v.file_count !=
               (SELECT count(*) FROM version_files f WHERE f.version_id = v.id)",
        )
        .fetch_all(pool)
        .await?,
    );
    for version_id in sqlx::query_scalar::<_, i64>(super::skills::STALE_MANIFESTS)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "version {version_id}: its manifest column differs from its files and entries"
        ));
    }
    for uri in sqlx::query_scalar::<_, String>(super::write::STALE_LISTING_TEXT)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "listing {uri}: its name or description differs from its entry's"
        ));
    }
    for uri in sqlx::query_scalar::<_, String>(super::write::STALE_LISTING_VERSION)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "listing {uri}: its copy of the skill and version differs from theirs"
        ));
    }
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
    scrub.stale_listing(
        sqlx::query_scalar(
            "SELECT l.uri FROM listing l JOIN skills s ON s.id = l.skill_id
             WHERE s.current_version_id IS NOT l.version_id",
        )
        .fetch_all(pool)
        .await?,
    );
    scrub.counters(stats(pool).await?, counted(pool).await?);
    let check: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(pool)
        .await?;
    if check != "ok" {
        scrub.problem(format!("SQLite quick_check: {check}"));
    }
    Ok(scrub.report)
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
