//! Reading the append-only audit log (rows are written by each change, in its transaction).

use sqlx::SqlitePool;

use crate::store::records::decode;
use crate::store::{AuditRecord, Result};

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: i64,
    at: String,
    actor: String,
    action: String,
    namespace: Option<String>,
    name: Option<String>,
    version: Option<String>,
    details: String,
}

pub(super) async fn page(pool: &SqlitePool, after: i64, limit: u32) -> Result<Vec<AuditRecord>> {
    let rows: Vec<AuditRow> = sqlx::query_as(
        "SELECT id, at, actor, action, namespace, name, version, details
         FROM audit_log WHERE id > ?1 ORDER BY id LIMIT ?2",
    )
    .bind(after)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(AuditRecord {
                details: decode::json("audit details", &r.details)?,
                id: r.id,
                at: r.at,
                actor: r.actor,
                action: r.action,
                namespace: r.namespace,
                name: r.name,
                version: r.version,
            })
        })
        .collect()
}
