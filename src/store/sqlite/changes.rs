//! The change feed: the catalog generation, and the skills changed after one, which is what keeps
//! the search index (derived data) current, also across processes.

use sqlx::SqlitePool;

use crate::store::rows::{ChangedRow, decode_all};
use crate::store::{ChangedSkill, Result};

pub(super) async fn generation(pool: &SqlitePool) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT value FROM meta WHERE key = 'generation'")
            .fetch_one(pool)
            .await?,
    )
}

pub(super) async fn catalog_id(pool: &SqlitePool) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT value FROM meta WHERE key = 'catalog_id'")
            .fetch_one(pool)
            .await?,
    )
}

pub(super) async fn since(
    pool: &SqlitePool,
    since: i64,
    after_id: i64,
    limit: u32,
) -> Result<Vec<ChangedSkill>> {
    let rows: Vec<ChangedRow> = sqlx::query_as(
        "SELECT s.id AS skill_id, n.name AS namespace, s.name,
                v.id AS version_id, v.version, s.current_version_id IS NULL AS yanked_only,
                s.deprecated_at IS NOT NULL AS deprecated, s.deprecation_message
         FROM skills s
         JOIN namespaces n ON n.id = s.namespace_id
         LEFT JOIN versions v ON v.id = coalesce(s.current_version_id,
             (SELECT id FROM versions WHERE skill_id = s.id AND revoked_at IS NULL AND pending = 0
              ORDER BY published_at DESC, id DESC LIMIT 1))
         WHERE s.updated_gen > ?1 AND s.id > ?2
         ORDER BY s.id LIMIT +?3",
    )
    .bind(since)
    .bind(after_id)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    decode_all(rows, ChangedRow::decode)
}
