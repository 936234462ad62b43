//! The write path shared by every table: the writer lock, the audit row (written once, in
//! `store/sql/access.rs`), the generation stamp, and the current version with its listing rows.

use std::collections::HashMap;

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

/// Bump the catalog generation and stamp the skill with it, inside `tx`; and bring its listing
/// rows' copy of it and its current version up to date (every change to a skill or its versions
/// but a publish ends here).
pub(super) async fn touch(tx: &mut PgConnection, skill_id: i64) -> Result<i64> {
    let generation = next_generation(tx).await?;
    sqlx::query("UPDATE skills SET updated_gen = $1 WHERE id = $2")
        .bind(generation)
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(super::listing::COPY_LISTING_VERSION)
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    Ok(generation)
}

/// What a publish wrote to one skill, as [`refresh_current_many`] needs it.
pub(super) struct Published<'a> {
    /// The versions stored by this write, each with its entries' subpaths (not read back when
    /// one becomes current).
    pub versions: Vec<(i64, &'a [String])>,
    /// The generation to stamp the skill with, with the publish time `at` (one for a batch: it
    /// commits at once).
    pub generation: i64,
    pub at: &'a str,
    /// Every version stored pending review: the publish time stays unstamped until one is
    /// approved, so that nobody learns of a pending version from the skill's recency.
    pub pending: bool,
}

/// Recompute a skill's current version and rewrite its listing rows, inside `tx`.
pub(super) async fn refresh_current(
    tx: &mut PgConnection,
    skill_id: i64,
    skill: &SkillRef,
    published: Option<Published<'_>>,
) -> Result<()> {
    refresh_current_many(tx, vec![(skill_id, skill, published)]).await
}

/// Recompute the current version of each skill and rewrite their listing rows, inside `tx`, in
/// five statements whatever their number. For a publish, also stamp each skill's generation and
/// publish time in the same statement, and take the new versions' entries from the caller
/// instead of reading them back.
pub(super) async fn refresh_current_many(
    tx: &mut PgConnection,
    skills: Vec<(i64, &SkillRef, Option<Published<'_>>)>,
) -> Result<()> {
    let ids: Vec<i64> = skills.iter().map(|(id, _, _)| *id).collect();
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT skill_id, id, version FROM versions
         WHERE skill_id = ANY($1) AND yanked_at IS NULL AND revoked_at IS NULL AND NOT pending",
    )
    .bind(&ids)
    .fetch_all(&mut *tx)
    .await?;
    let mut candidates: HashMap<i64, Vec<(i64, String)>> = HashMap::new();
    for (skill_id, id, version) in rows {
        candidates.entry(skill_id).or_default().push((id, version));
    }
    let mut currents = Vec::with_capacity(skills.len());
    let mut generations = Vec::with_capacity(skills.len());
    let mut stamped = Vec::with_capacity(skills.len());
    let mut ats = Vec::with_capacity(skills.len());
    for (id, _, published) in &skills {
        currents.push(current_version(candidates.remove(id).unwrap_or_default())?);
        generations.push(published.as_ref().map(|p| p.generation));
        stamped.push(published.as_ref().is_some_and(|p| !p.pending));
        ats.push(published.as_ref().map(|p| p.at));
    }
    sqlx::query(
        "UPDATE skills s SET current_version_id = u.current,
                updated_gen = coalesce(u.generation, s.updated_gen),
                last_published_at = CASE WHEN u.stamped THEN u.at ELSE s.last_published_at END
         FROM UNNEST($1::int8[], $2::int8[], $3::int8[], $4::bool[], $5::text[])
              AS u (id, current, generation, stamped, at)
         WHERE s.id = u.id",
    )
    .bind(&ids)
    .bind(&currents)
    .bind(&generations)
    .bind(&stamped)
    .bind(&ats)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM listing WHERE skill_id = ANY($1)")
        .bind(&ids)
        .execute(&mut *tx)
        .await?;
    // The entries of current versions this write did not store are read back, in one statement.
    let known = |i: usize, version_id: i64| {
        skills[i].2.as_ref().and_then(|p| {
            p.versions
                .iter()
                .find(|(id, _)| *id == version_id)
                .map(|(_, subpaths)| *subpaths)
        })
    };
    let unknown: Vec<i64> = currents
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.filter(|&v| known(i, v).is_none()))
        .collect();
    let mut read_back: HashMap<i64, Vec<String>> = HashMap::new();
    if !unknown.is_empty() {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT version_id, subpath FROM version_entries WHERE version_id = ANY($1)",
        )
        .bind(&unknown)
        .fetch_all(&mut *tx)
        .await?;
        for (version_id, subpath) in rows {
            read_back.entry(version_id).or_default().push(subpath);
        }
    }
    let (mut uris, mut skill_ids, mut version_ids, mut subpaths) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, current) in currents.iter().enumerate() {
        let Some(version_id) = *current else {
            continue;
        };
        let entries = match known(i, version_id) {
            Some(subpaths) => subpaths.to_vec(),
            None => read_back.remove(&version_id).unwrap_or_default(),
        };
        for (uri, subpath) in listing_rows(skills[i].1, entries) {
            uris.push(uri);
            skill_ids.push(skills[i].0);
            version_ids.push(version_id);
            subpaths.push(subpath);
        }
    }
    if uris.is_empty() {
        return Ok(());
    }
    // With what a page shows of each row's entry, skill, version and namespace
    // (store/sql/listing.rs), all written above in this transaction.
    sqlx::query(
        "INSERT INTO listing (uri, skill_id, version_id, subpath, name, description, namespace_id,
                              skill, version, verdict, findings, deprecated, deprecation_message,
                              namespace, private)
         SELECT u.uri, u.skill_id, u.version_id, u.subpath, e.name, e.description, s.namespace_id,
                s.name, v.version, v.verdict, v.findings, s.deprecated_at IS NOT NULL,
                s.deprecation_message, n.name, n.private
         FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::text[])
              AS u (uri, skill_id, version_id, subpath)
         JOIN versions v ON v.id = u.version_id
         JOIN skills s ON s.id = u.skill_id
         JOIN namespaces n ON n.id = s.namespace_id
         LEFT JOIN version_entries e ON e.version_id = u.version_id AND e.subpath = u.subpath",
    )
    .bind(&uris)
    .bind(&skill_ids)
    .bind(&version_ids)
    .bind(&subpaths)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
