//! Maintenance: row counts, the scrub that re-hashes every stored byte, and online backup.

use std::path::Path;

use sqlx::SqlitePool;

use crate::store::{Result, Stats, StoreError, VerifyReport};

pub(super) async fn stats(pool: &SqlitePool) -> Result<Stats> {
    let counts: Vec<(String, i64)> =
        sqlx::query_as("SELECT key, value FROM meta WHERE key LIKE 'count_%'")
            .fetch_all(pool)
            .await?;
    let mut stats = Stats::default();
    for (key, value) in counts {
        let slot = match key.as_str() {
            "count_namespaces" => &mut stats.namespaces,
            "count_skills" => &mut stats.skills,
            "count_versions" => &mut stats.versions,
            "count_files" => &mut stats.files,
            "count_blobs" => &mut stats.blobs,
            "count_blob_bytes" => &mut stats.blob_bytes,
            "count_audit_entries" => &mut stats.audit_entries,
            "count_tokens" => &mut stats.tokens,
            _ => continue,
        };
        *slot = value;
    }
    Ok(stats)
}

/// The same numbers counted from the tables (what the counters must equal).
async fn counted(pool: &SqlitePool) -> Result<Stats> {
    let (namespaces, skills, versions, files, blobs, blob_bytes, audit_entries, tokens) =
        sqlx::query_as(
            "SELECT (SELECT count(*) FROM namespaces), (SELECT count(*) FROM skills),
                    (SELECT count(*) FROM versions), (SELECT count(*) FROM version_files),
                    (SELECT count(*) FROM blobs), (SELECT coalesce(sum(size), 0) FROM blobs),
                    (SELECT count(*) FROM audit_log), (SELECT count(*) FROM tokens)",
        )
        .fetch_one(pool)
        .await?;
    Ok(Stats {
        namespaces,
        skills,
        versions,
        files,
        blobs,
        blob_bytes,
        audit_entries,
        tokens,
    })
}

/// Scrub the whole store: every blob re-hashed against its digest and size, every file row
/// pointing at an existing blob, every version with its root entry, every listing row at a
/// current version. `progress` is called after each blob.
pub(super) async fn verify(
    pool: &SqlitePool,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    let mut after = String::new();
    loop {
        let rows: Vec<(String, i64, Vec<u8>)> = sqlx::query_as(
            "SELECT digest, size, data FROM blobs WHERE digest > ?1 ORDER BY digest LIMIT 64",
        )
        .bind(&after)
        .fetch_all(pool)
        .await?;
        let Some(last) = rows.last() else { break };
        after = last.0.clone();
        for (digest, size, data) in rows {
            report.blobs_checked += 1;
            report.bytes_checked += data.len() as u64;
            let actual = crate::core::Digest::of(&data).to_string();
            if actual != digest {
                report
                    .problems
                    .push(format!("blob {digest}: its bytes hash to {actual}"));
            } else if data.len() as i64 != size {
                report.problems.push(format!(
                    "blob {digest}: {} bytes, recorded as {size}",
                    data.len()
                ));
            }
            progress(report.blobs_checked);
        }
    }
    let dangling: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT f.version_id, f.path, f.digest FROM version_files f
             LEFT JOIN blobs b ON b.digest = f.digest WHERE b.digest IS NULL",
    )
    .fetch_all(pool)
    .await?;
    for (version, path, digest) in dangling {
        report.problems.push(format!(
            "version {version}: {path} points at missing blob {digest}"
        ));
    }
    let size_mismatch: Vec<(i64, String)> = sqlx::query_as(
            "SELECT f.version_id, f.path FROM version_files f JOIN blobs b ON b.digest = f.digest WHERE b.size != f.size",
        )
        .fetch_all(pool)
        .await?;
    for (version, path) in size_mismatch {
        report.problems.push(format!(
            "version {version}: {path} has a size different from its blob"
        ));
    }
    report.versions_checked = sqlx::query_scalar("SELECT count(*) FROM versions")
        .fetch_one(pool)
        .await?;
    let rootless: Vec<i64> = sqlx::query_scalar(
            "SELECT v.id FROM versions v WHERE NOT EXISTS
               (SELECT 1 FROM version_entries e WHERE e.version_id = v.id AND e.subpath = '')
             OR NOT EXISTS (SELECT 1 FROM version_files f WHERE f.version_id = v.id AND f.path = 'SKILL.md')",
        )
        .fetch_all(pool)
        .await?;
    for v in rootless {
        report
            .problems
            .push(format!("version {v} has no SKILL.md or no root entry"));
    }
    let file_counts: Vec<i64> = sqlx::query_scalar(
            "SELECT v.id FROM versions v WHERE v.file_count != (SELECT count(*) FROM version_files f WHERE f.version_id = v.id)",
        )
        .fetch_all(pool)
        .await?;
    for v in file_counts {
        report
            .problems
            .push(format!("version {v} does not have the files it recorded"));
    }
    let stale_listing: Vec<String> = sqlx::query_scalar(
        "SELECT l.uri FROM listing l JOIN skills s ON s.id = l.skill_id
             WHERE s.current_version_id IS NOT l.version_id",
    )
    .fetch_all(pool)
    .await?;
    for uri in stale_listing {
        report.problems.push(format!(
            "listing {uri} does not point at the current version"
        ));
    }
    let (kept, real) = (stats(pool).await?, counted(pool).await?);
    if kept != real {
        report.problems.push(format!(
            "the catalog counters say {kept:?}, the tables hold {real:?}"
        ));
    }
    let check: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(pool)
        .await?;
    if check != "ok" {
        report.problems.push(format!("SQLite quick_check: {check}"));
    }
    Ok(report)
}

/// A consistent copy of the database at `path` (which must not exist), taken while the
/// registry keeps serving and publishing: SQLite `VACUUM INTO` reads one snapshot.
pub(super) async fn backup(pool: &SqlitePool, path: &Path) -> Result<()> {
    if path.exists() {
        return Err(StoreError::Io {
            context: format!("backing up to {}", path.display()),
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "the target already exists",
            ),
        });
    }
    let target = path.to_str().ok_or_else(|| StoreError::Io {
        context: "backing up".to_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the target path is not UTF-8",
        ),
    })?;
    sqlx::query("VACUUM INTO ?1")
        .bind(target)
        .execute(pool)
        .await?;
    Ok(())
}
