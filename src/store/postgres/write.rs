//! The write path shared by every table: the writer lock, the audit row (written once, in
//! `store/sql/access.rs`), the generation stamp, and the current version with its listing rows.

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

pub(super) use super::access::audit;
use crate::core::SkillRef;
use crate::store::Result;
pub(super) use crate::store::rows::{Target, json_text};
use crate::store::rows::{current_version, listing_rows};

/// The key of the advisory lock every write transaction holds: writes apply one at a time,
/// across every replica, as on SQLite's single writer.
const WRITER_LOCK: i64 = 0x736b_696c_6c72_6567; // "skillreg"

/// A write transaction holding the writer lock until it commits or rolls back (dropped
/// without commit, it rolls back).
pub(super) async fn begin(pool: &PgPool) -> Result<Transaction<'static, Postgres>> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(WRITER_LOCK)
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}

/// The channel every replica listens on: a change to the catalog (the payload is the new
/// generation and the time it was sent, `GENERATION SENT_MS`). Tokens need none: they are never cached, so a revocation holds on every replica
/// at its next request.
pub const CHANGES_CHANNEL: &str = "skillreg_changes";

/// Bump the catalog generation, inside `tx`, and return it; every replica hears of it when the
/// transaction commits.
pub(super) async fn next_generation(tx: &mut PgConnection) -> Result<i64> {
    let generation: i64 = sqlx::query_scalar(
        "UPDATE meta SET value = value + 1 WHERE key = 'generation' RETURNING value",
    )
    .fetch_one(&mut *tx)
    .await?;
    announce(tx, generation).await?;
    Ok(generation)
}

/// Tell every listening replica, when (and only if) `tx` commits, that the catalog is at
/// `generation`.
pub(super) async fn announce(tx: &mut PgConnection, generation: i64) -> Result<()> {
    // "GENERATION SENT_MS": the listener measures how late it hears it.
    sqlx::query(
        "SELECT pg_notify($1, $2 || ' ' || floor(extract(epoch FROM clock_timestamp()) * 1000))",
    )
    .bind(CHANGES_CHANNEL)
    .bind(generation.to_string())
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Bump the catalog generation and stamp the skill with it, inside `tx`.
pub(super) async fn touch(tx: &mut PgConnection, skill_id: i64) -> Result<i64> {
    let generation = next_generation(tx).await?;
    sqlx::query("UPDATE skills SET updated_gen = $1 WHERE id = $2")
        .bind(generation)
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    Ok(generation)
}

/// A version being published, as [`refresh_current`] needs it.
pub(super) struct Published<'a> {
    pub version_id: i64,
    /// Its entries' subpaths (not read back when it becomes current).
    pub subpaths: &'a [String],
    /// The generation to stamp the skill with, with the publish time.
    pub generation: i64,
    /// Stored pending review: the publish time stays unstamped until it is approved, so that
    /// nobody learns of the pending version from the skill's recency.
    pub pending: bool,
}

/// Recompute a skill's current version and rewrite its listing rows, inside `tx`. For a publish,
/// also stamp the skill's generation and publish time in the same statement, and take the new
/// version's entries from the caller instead of reading them back.
pub(super) async fn refresh_current(
    tx: &mut PgConnection,
    skill_id: i64,
    skill: &SkillRef,
    published: Option<Published<'_>>,
) -> Result<()> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, version FROM versions
         WHERE skill_id = $1 AND yanked_at IS NULL AND revoked_at IS NULL AND NOT pending",
    )
    .bind(skill_id)
    .fetch_all(&mut *tx)
    .await?;
    let current = current_version(rows)?;
    match &published {
        Some(p) => sqlx::query(
            "UPDATE skills SET current_version_id = $1, updated_gen = $3,
                    last_published_at = CASE WHEN $4 THEN last_published_at ELSE skillreg_now() END
             WHERE id = $2",
        )
        .bind(current)
        .bind(skill_id)
        .bind(p.generation)
        .bind(p.pending),
        None => sqlx::query("UPDATE skills SET current_version_id = $1 WHERE id = $2")
            .bind(current)
            .bind(skill_id),
    }
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM listing WHERE skill_id = $1")
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    let Some(version_id) = current else {
        return Ok(());
    };
    let subpaths: Vec<String> = match published {
        Some(p) if p.version_id == version_id => p.subpaths.to_vec(),
        _ => {
            sqlx::query_scalar("SELECT subpath FROM version_entries WHERE version_id = $1")
                .bind(version_id)
                .fetch_all(&mut *tx)
                .await?
        }
    };
    let (uris, subpaths): (Vec<String>, Vec<String>) =
        listing_rows(skill, subpaths).into_iter().unzip();
    sqlx::query(
        "INSERT INTO listing (uri, skill_id, version_id, subpath)
         SELECT uri, $1, $2, subpath FROM UNNEST($3::text[], $4::text[]) AS t (uri, subpath)",
    )
    .bind(skill_id)
    .bind(version_id)
    .bind(&uris)
    .bind(&subpaths)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
