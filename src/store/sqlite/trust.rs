//! Trust: the scans stored with versions (`GET /v1/findings`, `skillreg rescan`), the review
//! gate (namespaces that require review, approving pending versions) and the revocation feed.
//! Revoking itself is a withdrawal, beside yanking in `skills`.

use sqlx::SqlitePool;

use super::write::{self, Target, WriteTx, json_text, visibility_args, visible};
use crate::core::scan::{Scan, Verdict};
use crate::core::{Namespace, VersionRef, Visibility};
use crate::store::records::decode;
use crate::store::rows::{self, TrustRow, decode_all};
use crate::store::{FindingsRecord, Result, RevocationRecord, ScanTarget};

/// The columns of a [`TrustRow`], from versions `v`, skills `s` and namespaces `n`.
macro_rules! trust_sql {
    ($rest:literal) => {
        concat!(
            "SELECT v.id AS version_id, n.name AS namespace, s.name, v.version, v.content_digest,
                    v.published_at, v.verdict, v.findings, v.revoked_at, v.revoke_reason,
                    v.pending != 0 AS pending
             FROM versions v
             JOIN skills s ON s.id = v.skill_id
             JOIN namespaces n ON n.id = s.namespace_id ",
            $rest
        )
    };
}

pub(super) async fn findings_page(
    pool: &SqlitePool,
    verdict: Option<Verdict>,
    after: i64,
    limit: u32,
    visibility: &Visibility,
) -> Result<Vec<FindingsRecord>> {
    let (mode, names) = visibility_args(visibility)?;
    let rows: Vec<TrustRow> = sqlx::query_as(concat!(
        trust_sql!("WHERE v.id > ?1 AND (?2 IS NULL OR v.verdict = ?2) AND "),
        visible!("n", "?4", "?5"),
        " ORDER BY v.id LIMIT +?3"
    ))
    .bind(after)
    .bind(verdict.map(Verdict::as_str))
    .bind(i64::from(limit))
    .bind(mode)
    .bind(names)
    .fetch_all(pool)
    .await?;
    decode_all(rows, TrustRow::findings)
}

pub(super) async fn scan_targets(
    pool: &SqlitePool,
    after: i64,
    limit: u32,
) -> Result<Vec<ScanTarget>> {
    let rows: Vec<TrustRow> = sqlx::query_as(trust_sql!("WHERE v.id > ?1 ORDER BY v.id LIMIT +?2"))
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await?;
    decode_all(rows, TrustRow::target)
}

pub(super) async fn set_scans(
    pool: &SqlitePool,
    changes: &[(ScanTarget, Scan)],
    actor: &str,
) -> Result<()> {
    let mut tx = WriteTx::begin(pool).await?;
    for (target, scan) in changes {
        let skill_id: i64 = sqlx::query_scalar(
            "UPDATE versions SET verdict = ?2, findings = ?3 WHERE id = ?1 RETURNING skill_id",
        )
        .bind(target.version_id)
        .bind(scan.verdict.as_str())
        .bind(json_text(&scan.findings)?)
        .fetch_one(&mut *tx)
        .await?;
        write::touch(&mut tx, skill_id).await?;
        let version = target.version.version.to_string();
        write::audit(
            &mut tx,
            actor,
            "rescan",
            Target::Version(&target.version.skill, &version),
            &rows::rescan_audit(&target.scan, scan),
        )
        .await?;
    }
    tx.commit().await
}

pub(super) async fn revocations(
    pool: &SqlitePool,
    after: (&str, i64),
    limit: u32,
    visibility: &Visibility,
) -> Result<Vec<RevocationRecord>> {
    let (mode, names) = visibility_args(visibility)?;
    let rows: Vec<TrustRow> = sqlx::query_as(concat!(
        trust_sql!("WHERE v.revoked_at IS NOT NULL AND (v.revoked_at, v.id) > (?1, ?2) AND "),
        visible!("n", "?4", "?5"),
        " ORDER BY v.revoked_at, v.id LIMIT +?3"
    ))
    .bind(after.0)
    .bind(after.1)
    .bind(i64::from(limit))
    .bind(mode)
    .bind(names)
    .fetch_all(pool)
    .await?;
    decode_all(rows, TrustRow::revocation)
}

pub(super) async fn set_review_required(
    pool: &SqlitePool,
    namespace: &Namespace,
    required: bool,
    actor: &str,
) -> Result<()> {
    let mut tx = WriteTx::begin(pool).await?;
    sqlx::query(
        "INSERT INTO namespaces (name, review_required) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET review_required = excluded.review_required",
    )
    .bind(namespace.as_str())
    .bind(required)
    .execute(&mut *tx)
    .await?;
    let details = serde_json::json!({ "namespace": namespace.as_str() });
    write::audit(
        &mut tx,
        actor,
        rows::review_audit(required),
        Target::None,
        &details,
    )
    .await?;
    tx.commit().await
}

pub(super) async fn review_namespaces(pool: &SqlitePool) -> Result<Vec<Namespace>> {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT name FROM namespaces WHERE review_required != 0 ORDER BY name")
            .fetch_all(pool)
            .await?;
    names.iter().map(|n| decode::namespace(n)).collect()
}

pub(super) async fn approve(pool: &SqlitePool, version: &VersionRef, actor: &str) -> Result<bool> {
    let mut tx = WriteTx::begin(pool).await?;
    let v = version.version.to_string();
    let skill_id: Option<i64> = sqlx::query_scalar(
        "UPDATE versions SET pending = 0
         WHERE pending != 0 AND version = ?3 AND skill_id = (
             SELECT s.id FROM skills s JOIN namespaces n ON n.id = s.namespace_id
             WHERE n.name = ?1 AND s.name = ?2)
         RETURNING skill_id",
    )
    .bind(version.namespace().as_str())
    .bind(version.name().as_str())
    .bind(&v)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(skill_id) = skill_id else {
        return Ok(false);
    };
    write::refresh_current(&mut tx, skill_id, &version.skill, None).await?;
    // Its publish is seen now: stamp the skill's and its namespace's recency, which a pending
    // publish left alone.
    sqlx::query(concat!(
        "UPDATE skills SET last_published_at = ",
        write::now!(),
        " WHERE id = ?1"
    ))
    .bind(skill_id)
    .execute(&mut *tx)
    .await?;
    sqlx::query(concat!(
        "UPDATE namespaces SET last_published_at = ",
        write::now!(),
        " WHERE id = (SELECT namespace_id FROM skills WHERE id = ?1)"
    ))
    .bind(skill_id)
    .execute(&mut *tx)
    .await?;
    write::touch(&mut tx, skill_id).await?;
    write::audit(
        &mut tx,
        actor,
        "approve",
        Target::Version(&version.skill, &v),
        &serde_json::json!({}),
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}
