//! The write path shared by every table: the single-writer transaction, the audit row (written
//! once, in `store/sql/access.rs`), the generation stamp, and the current version with its
//! listing rows.

use sqlx::{QueryBuilder, SqliteConnection, SqlitePool};

pub(super) use super::access::audit;
use crate::core::SkillRef;
use crate::store::Result;
pub(super) use crate::store::rows::{Target, json_text, pow2_chunks};
use crate::store::rows::{current_version, listing_rows};

/// A write transaction on the single writer connection, `BEGIN IMMEDIATE` so it never deadlocks
/// against another writer. Dropped without [`WriteTx::commit`] (an error anywhere, a full disk at
/// commit), its connection is closed rather than returned to the pool: SQLite rolls back on
/// close, and the next writer starts from a clean connection whatever state the failure left.
pub(super) struct WriteTx {
    conn: sqlx::pool::PoolConnection<sqlx::Sqlite>,
    done: bool,
}

impl WriteTx {
    pub(super) async fn begin(pool: &SqlitePool) -> Result<Self> {
        let mut conn = pool.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        Ok(Self { conn, done: false })
    }

    pub(super) async fn commit(mut self) -> Result<()> {
        sqlx::query("COMMIT").execute(&mut *self.conn).await?;
        self.done = true;
        Ok(())
    }

    /// Undo everything (used when nothing needs writing after all).
    pub(super) async fn rollback(mut self) {
        if sqlx::query("ROLLBACK")
            .execute(&mut *self.conn)
            .await
            .is_ok()
        {
            self.done = true;
        }
    }
}

impl std::ops::Deref for WriteTx {
    type Target = SqliteConnection;
    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        if !self.done {
            self.conn.close_on_drop();
        }
    }
}

/// A write transaction ([`WriteTx::begin`]).
pub(super) async fn begin(pool: &SqlitePool) -> Result<WriteTx> {
    WriteTx::begin(pool).await
}

/// Bump the catalog generation, inside `tx`, and return it.
pub(super) async fn next_generation(tx: &mut SqliteConnection) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "UPDATE meta SET value = value + 1 WHERE key = 'generation' RETURNING value",
    )
    .fetch_one(&mut *tx)
    .await?)
}

/// Bump the catalog generation and stamp the skill with it, inside `tx`.
pub(super) async fn touch(tx: &mut SqliteConnection, skill_id: i64) -> Result<i64> {
    let generation = next_generation(tx).await?;
    sqlx::query("UPDATE skills SET updated_gen = ?1 WHERE id = ?2")
        .bind(generation)
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    copy_listing_version(tx, skill_id).await?;
    Ok(generation)
}

/// A version being published, as [`refresh_current`] needs it.
pub(super) struct Published<'a> {
    pub version_id: i64,
    /// Its entries (not read back when it becomes current).
    pub entries: &'a [crate::core::Entry],
    /// The generation to stamp the skill with, with the publish time `at` (one for a batch: it
    /// commits at once).
    pub generation: i64,
    pub at: &'a str,
    /// Stored pending review: the publish time stays unstamped until it is approved, so that
    /// nobody learns of the pending version from the skill's recency.
    pub pending: bool,
}

/// Recompute a skill's current version and rewrite its listing rows (those of another version),
/// inside `tx`. For a publish, also stamp the skill's generation and publish time in the same
/// statement, and take the new version's entries from the caller instead of reading them back.
pub(super) async fn refresh_current(
    tx: &mut SqliteConnection,
    skill_id: i64,
    skill: &SkillRef,
    published: Option<Published<'_>>,
) -> Result<()> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, version FROM versions
         WHERE skill_id = ?1 AND yanked_at IS NULL AND revoked_at IS NULL AND pending = 0",
    )
    .bind(skill_id)
    .fetch_all(&mut *tx)
    .await?;
    let current = current_version(rows)?;
    match &published {
        Some(p) => sqlx::query(
            "UPDATE skills SET current_version_id = ?1, updated_gen = ?3,
                    last_published_at = CASE WHEN ?4 THEN last_published_at ELSE ?5 END
             WHERE id = ?2",
        )
        .bind(current)
        .bind(skill_id)
        .bind(p.generation)
        .bind(p.pending)
        .bind(p.at),
        None => sqlx::query("UPDATE skills SET current_version_id = ?1 WHERE id = ?2")
            .bind(current)
            .bind(skill_id),
    }
    .execute(&mut *tx)
    .await?;
    // Rows that list the current version already stay, with their serialized entries
    // (migrations/sqlite/0013); the trigger drops those of the rows deleted.
    sqlx::query("DELETE FROM listing WHERE skill_id = ?1 AND version_id IS NOT ?2")
        .bind(skill_id)
        .bind(current)
        .execute(&mut *tx)
        .await?;
    let Some(version_id) = current else {
        return Ok(());
    };
    // Each entry's subpath, name and description: the listing row carries the last two.
    let entries: Vec<(String, String, String)> = match published {
        Some(Published {
            version_id: known_id,
            entries,
            ..
        }) if known_id == version_id => entries
            .iter()
            .map(|e| (e.subpath.clone(), e.name.to_string(), e.description.clone()))
            .collect(),
        _ => {
            sqlx::query_as(
                "SELECT subpath, name, description FROM version_entries WHERE version_id = ?1",
            )
            .bind(version_id)
            .fetch_all(&mut *tx)
            .await?
        }
    };
    let (subpaths, texts): (Vec<String>, Vec<(String, String)>) = entries
        .into_iter()
        .map(|(subpath, name, description)| (subpath, (name, description)))
        .unzip();
    let rows: Vec<_> = listing_rows(skill, subpaths)
        .into_iter()
        .zip(texts)
        .collect();
    for chunk in pow2_chunks(&rows) {
        let mut insert = QueryBuilder::new(
            "INSERT INTO listing (uri, skill_id, version_id, subpath, name, description) ",
        );
        insert.push_values(chunk, |mut row, ((uri, subpath), (name, description))| {
            row.push_bind(uri.as_str())
                .push_bind(skill_id)
                .push_bind(version_id)
                .push_bind(subpath.as_str())
                .push_bind(name.as_str())
                .push_bind(description.as_str());
        });
        insert.push(" ON CONFLICT (uri) DO NOTHING");
        insert.build().execute(&mut *tx).await?;
    }
    copy_listing_version(tx, skill_id).await
}

/// Bring a skill's listing rows' copy of it and its current version up to date
/// (migrations/sqlite/0012): after they are written, and in [`touch`], which every other change
/// to a skill or its versions ends with.
async fn copy_listing_version(tx: &mut SqliteConnection, skill_id: i64) -> Result<()> {
    sqlx::query(super::listing::COPY_LISTING_VERSION)
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Listing rows naming a serialized entry that is not kept (`skillreg verify`).
pub(super) const DANGLING_LISTING_ENTRIES: &str = "SELECT l.uri FROM listing l
     WHERE l.entry_id IS NOT NULL AND NOT EXISTS
       (SELECT 1 FROM listing_entries e WHERE e.id = l.entry_id)
     ORDER BY l.uri";

/// Serialized entries no listing row names (`skillreg verify`).
/// (`NOT IN` a subquery SQLite builds once: listing has no index by `entry_id`.)
pub(super) const ORPHAN_LISTING_ENTRIES: &str = "SELECT id FROM listing_entries
     WHERE id NOT IN (SELECT entry_id FROM listing WHERE entry_id IS NOT NULL) ORDER BY id";

/// The last serialized entry id given out, and the largest kept (`skillreg verify`: never more).
pub(super) const ENTRY_IDS: &str = "SELECT (SELECT value FROM meta WHERE key = 'last_entry_id'),
            (SELECT max(id) FROM listing_entries)";
