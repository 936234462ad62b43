//! [`Maintenance`]: the change feed (the catalog generation, and the skills changed after one,
//! which keeps each search index and cache current, also across processes and replicas), row
//! counts, the scrub that re-hashes every stored byte, and copying a whole store. Written once
//! for both engines: each compiles this module with its own `dialect`; what only one engine has
//! (SQLite's derived columns and its integrity check, backups) is in the engine's `maintenance`.

use std::path::Path;

use super::dialect::{Engine, Pool, differs, int8, is_unset, limit};
use crate::store::copy::{Batch, Key, Table};
use crate::store::rows::{self, ChangedRow, Scrub, decode_all};
use crate::store::{ChangedSkill, Maintenance, Result, SkillId, Stats, VerifyReport};

#[async_trait::async_trait]
impl Maintenance for Engine {
    async fn generation(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'generation'")
                .fetch_one(self.read())
                .await?,
        )
    }

    async fn catalog_id(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'catalog_id'")
                .fetch_one(self.read())
                .await?,
        )
    }

    async fn changed_since(
        &self,
        since: i64,
        after_id: SkillId,
        limit: u32,
    ) -> Result<Vec<ChangedSkill>> {
        let rows: Vec<ChangedRow> = sqlx::query_as(concat!(
            "SELECT s.id AS skill_id, n.name AS namespace, s.name,
                    v.id AS version_id, v.version, s.current_version_id IS NULL AS yanked_only,
                    s.deprecated_at IS NOT NULL AS deprecated, s.deprecation_message
             FROM skills s
             JOIN namespaces n ON n.id = s.namespace_id
             LEFT JOIN versions v ON v.id = coalesce(s.current_version_id,
                 (SELECT id FROM versions WHERE skill_id = s.id AND revoked_at IS NULL AND ",
            is_unset!("pending"),
            "
                  ORDER BY published_at DESC, id DESC LIMIT 1))
             WHERE s.updated_gen > $1 AND s.id > $2
             ORDER BY s.id ",
            limit!("$3")
        ))
        .bind(since)
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(self.read())
        .await?;
        decode_all(rows, ChangedRow::decode)
    }

    async fn stats(&self) -> Result<Stats> {
        stats(self.read()).await
    }

    async fn verify(&self, progress: &(dyn Fn(u64) + Send + Sync)) -> Result<VerifyReport> {
        verify(self.read(), progress).await
    }

    async fn backup(&self, path: &Path) -> Result<()> {
        super::checks::backup(self.read(), path).await
    }

    async fn export_rows(&self, table: Table, after: &Key, limit: u32) -> Result<Batch> {
        super::copy::export(self.read(), table, after, limit).await
    }

    async fn import_rows(&self, rows: tokio::sync::mpsc::Receiver<Batch>) -> Result<u64> {
        super::copy::import(self.write(), rows).await
    }

    fn connections(&self) -> (u32, usize) {
        (self.read().size(), self.read().num_idle())
    }

    async fn close(&self) {
        self.read().close().await;
        self.write().close().await;
    }
}

async fn stats(pool: &Pool) -> Result<Stats> {
    let counters = sqlx::query_as("SELECT key, value FROM meta WHERE key LIKE 'count_%'")
        .fetch_all(pool)
        .await?;
    Ok(rows::stats(counters))
}

/// The same numbers counted from the tables (what the counters must equal).
async fn counted(pool: &Pool) -> Result<Stats> {
    let row = sqlx::query_as(concat!(
        "SELECT (SELECT count(*) FROM namespaces), (SELECT count(*) FROM skills),
                (SELECT count(*) FROM versions), (SELECT count(*) FROM version_files),
                (SELECT count(*) FROM blobs), (SELECT ",
        int8!("coalesce(sum(size), 0)"),
        " FROM blobs),
                (SELECT count(*) FROM audit_log), (SELECT count(*) FROM tokens)"
    ))
    .fetch_one(pool)
    .await?;
    Ok(rows::counted(row))
}

/// Scrub the whole store: every blob re-hashed against its digest and size, every file row
/// pointing at an existing blob, every version with its root entry and the content digest its
/// files give, every listing row at a current version, the counters against the tables, and
/// what the engine adds. `progress` is called after each blob.
async fn verify(pool: &Pool, progress: &(dyn Fn(u64) + Send + Sync)) -> Result<VerifyReport> {
    let mut scrub = Scrub::default();
    let mut after = String::new();
    loop {
        let blobs: Vec<(String, i64, Vec<u8>)> = sqlx::query_as(
            "SELECT digest, size, data FROM blobs WHERE digest > $1 ORDER BY digest LIMIT 64",
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
    let versions: i64 = sqlx::query_scalar("SELECT count(*) FROM versions")
        .fetch_one(pool)
        .await?;
    scrub.report.versions_checked = versions.unsigned_abs();
    let mut after = 0i64;
    loop {
        let rows: Vec<(i64, String, String, i64, String)> = sqlx::query_as(
            "SELECT v.id, v.content_digest, f.path, f.mode, f.digest
             FROM versions v JOIN version_files f ON f.version_id = v.id
             WHERE v.id IN (SELECT id FROM versions WHERE id > $1 ORDER BY id LIMIT 500)
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
    super::checks::derived(pool, &mut scrub).await?;
    scrub.stale_listing(
        sqlx::query_scalar(concat!(
            "SELECT l.uri FROM listing l JOIN skills s ON s.id = l.skill_id WHERE ",
            differs!("s.current_version_id", "l.version_id")
        ))
        .fetch_all(pool)
        .await?,
    );
    scrub.counters(stats(pool).await?, counted(pool).await?);
    super::checks::integrity(pool, &mut scrub).await?;
    Ok(scrub.report)
}
