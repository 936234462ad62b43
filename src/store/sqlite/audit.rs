//! Reading the append-only audit log (rows are written by each change, in its transaction).

use sqlx::SqlitePool;

use crate::store::rows::{AuditRow, decode_all};
use crate::store::{AuditRecord, Result};

pub(super) async fn page(pool: &SqlitePool, after: i64, limit: u32) -> Result<Vec<AuditRecord>> {
    let rows: Vec<AuditRow> = sqlx::query_as(
        "SELECT id, at, actor, action, namespace, name, version, details
         FROM audit_log WHERE id > ?1 ORDER BY id LIMIT +?2",
    )
    .bind(after)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    decode_all(rows, AuditRow::decode)
}
