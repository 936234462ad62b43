//! Every row of every table, out in key order and in inside one transaction (`skillreg migrate`).

use sqlx::query_builder::Separated;
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, QueryBuilder, Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::mpsc;

use super::write::{WriteTx, pow2_chunks};
use crate::store::Result;
use crate::store::copy::{self, Batch, Importer, Key, Table};

/// Up to `limit` rows of `table` after `after`. Every statement is given `?1` (the integer key),
/// `?2` (the text key), `?3` (the limit) and `?4` (the second integer key), and reads
/// the keys its table has.
pub(super) async fn export(
    pool: &SqlitePool,
    table: Table,
    after: &Key,
    limit: u32,
) -> Result<Batch> {
    async fn page<R>(
        pool: &SqlitePool,
        sql: &'static str,
        after: &Key,
        limit: u32,
    ) -> Result<Vec<R>>
    where
        R: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
    {
        Ok(sqlx::query_as(sql)
            .bind(after.int)
            .bind(&after.text)
            .bind(i64::from(limit))
            .bind(after.int2)
            .fetch_all(pool)
            .await?)
    }
    Ok(match table {
        Table::Namespaces => Batch::Namespaces(
            page(
                pool,
                "SELECT id, name, created_at, last_published_at, private, review_required FROM namespaces
                 WHERE id > ?1 ORDER BY id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Skills => Batch::Skills(
            page(
                pool,
                "SELECT id, namespace_id, name, created_at, current_version_id, deprecated_at,
                        deprecation_message, updated_gen, last_published_at
                 FROM skills WHERE id > ?1 ORDER BY id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Blobs => Batch::Blobs(
            page(
                pool,
                "SELECT digest, size, data FROM blobs
                 WHERE digest > ?2 ORDER BY digest LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Versions => Batch::Versions(
            page(
                pool,
                "SELECT id, skill_id, version, content_digest, file_count, total_size, warnings,
                        published_at, published_by, yanked_at, yank_reason, verdict, findings,
                        revoked_at, revoke_reason, pending, provenance
                 FROM versions WHERE id > ?1 ORDER BY id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Files => Batch::Files(
            page(
                pool,
                "SELECT version_id, path, digest, size, mode FROM version_files
                 WHERE (version_id, path) > (?1, ?2) ORDER BY version_id, path LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Entries => Batch::Entries(
            page(
                pool,
                "SELECT version_id, subpath, name, description, frontmatter FROM version_entries
                 WHERE (version_id, subpath) > (?1, ?2) ORDER BY version_id, subpath LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Listing => Batch::Listing(
            page(
                pool,
                "SELECT uri, skill_id, version_id, subpath FROM listing
                 WHERE uri > ?2 ORDER BY uri LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Tokens => Batch::Tokens(
            page(
                pool,
                "SELECT id, hash, description, namespaces, actions, created_at, revoked_at
                 FROM tokens WHERE id > ?2 ORDER BY id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Audit => Batch::Audit(
            page(
                pool,
                "SELECT id, at, actor, action, namespace, name, version, details
                 FROM audit_log WHERE id > ?1 ORDER BY id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Sources => Batch::Sources(
            page(
                pool,
                "SELECT id, namespace_id, kind, location, reference, subpath, fix != 0 AS fix, created_at,
                        synced_at, revision
                 FROM sources WHERE id > ?1 ORDER BY id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
        Table::SourceSkills => Batch::SourceSkills(
            page(
                pool,
                "SELECT source_id, skill_id, removed_at FROM source_skills
                 WHERE (source_id, skill_id) > (?1, ?4) ORDER BY source_id, skill_id LIMIT +?3",
                after,
                limit,
            )
            .await?,
        ),
    })
}

pub(super) async fn import(pool: &SqlitePool, rows: mpsc::Receiver<Batch>) -> Result<u64> {
    copy::import(SqliteImport(WriteTx::begin(pool).await?), rows).await
}

struct SqliteImport(WriteTx);

/// Insert `rows` with multi-row INSERTs after `head` (the table and its columns).
async fn insert<'a, T: Sync>(
    tx: &mut SqliteConnection,
    head: &'static str,
    rows: &'a [T],
    bind: impl Fn(&mut Separated<'_, Sqlite, &'static str>, &'a T),
) -> Result<()> {
    for chunk in pow2_chunks(rows) {
        let mut insert = QueryBuilder::new(head);
        insert.push_values(chunk, |mut row, r| bind(&mut row, r));
        insert.build().execute(&mut *tx).await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl Importer for SqliteImport {
    async fn is_empty(&mut self) -> Result<bool> {
        let any: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM namespaces) OR EXISTS (SELECT 1 FROM tokens)
                 OR EXISTS (SELECT 1 FROM audit_log) OR EXISTS (SELECT 1 FROM blobs)",
        )
        .fetch_one(&mut *self.0)
        .await?;
        Ok(!any)
    }

    async fn insert(&mut self, batch: Batch) -> Result<()> {
        let tx = &mut *self.0;
        match &batch {
            Batch::Namespaces(rows) => {
                insert(
                    tx,
                    "INSERT INTO namespaces (id, name, created_at, last_published_at, private, review_required) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.id)
                            .push_bind(&r.name)
                            .push_bind(&r.created_at)
                            .push_bind(&r.last_published_at)
                            .push_bind(r.private)
                            .push_bind(r.review_required);
                    },
                )
                .await
            }
            Batch::Skills(rows) => {
                insert(
                    tx,
                    "INSERT INTO skills (id, namespace_id, name, created_at, current_version_id,
                        deprecated_at, deprecation_message, updated_gen, last_published_at) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.id)
                            .push_bind(r.namespace_id)
                            .push_bind(&r.name)
                            .push_bind(&r.created_at)
                            .push_bind(None::<i64>)
                            .push_bind(&r.deprecated_at)
                            .push_bind(&r.deprecation_message)
                            .push_bind(r.updated_gen)
                            .push_bind(&r.last_published_at);
                    },
                )
                .await
            }
            Batch::Blobs(rows) => {
                insert(
                    tx,
                    "INSERT INTO blobs (digest, size, data) ",
                    rows,
                    |row, r| {
                        row.push_bind(&r.digest)
                            .push_bind(r.size)
                            .push_bind(r.data.as_slice());
                    },
                )
                .await
            }
            Batch::Versions(rows) => {
                insert(
                    tx,
                    "INSERT INTO versions (id, skill_id, version, content_digest, file_count,
                        total_size, warnings, published_at, published_by, yanked_at, yank_reason,
                        verdict, findings, revoked_at, revoke_reason, pending, provenance) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.id)
                            .push_bind(r.skill_id)
                            .push_bind(&r.version)
                            .push_bind(&r.content_digest)
                            .push_bind(r.file_count)
                            .push_bind(r.total_size)
                            .push_bind(&r.warnings)
                            .push_bind(&r.published_at)
                            .push_bind(&r.published_by)
                            .push_bind(&r.yanked_at)
                            .push_bind(&r.yank_reason)
                            .push_bind(&r.verdict)
                            .push_bind(&r.findings)
                            .push_bind(&r.revoked_at)
                            .push_bind(&r.revoke_reason)
                            .push_bind(r.pending)
                            .push_bind(&r.provenance);
                    },
                )
                .await
            }
            Batch::Files(rows) => {
                insert(
                    tx,
                    "INSERT INTO version_files (version_id, path, digest, size, mode) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.version_id)
                            .push_bind(&r.path)
                            .push_bind(&r.digest)
                            .push_bind(r.size)
                            .push_bind(r.mode);
                    },
                )
                .await
            }
            Batch::Entries(rows) => {
                insert(
                    tx,
                    "INSERT INTO version_entries (version_id, subpath, name, description,
                        frontmatter) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.version_id)
                            .push_bind(&r.subpath)
                            .push_bind(&r.name)
                            .push_bind(&r.description)
                            .push_bind(&r.frontmatter);
                    },
                )
                .await
            }
            Batch::Listing(rows) => {
                insert(
                    tx,
                    "INSERT INTO listing (uri, skill_id, version_id, subpath) ",
                    rows,
                    |row, r| {
                        row.push_bind(&r.uri)
                            .push_bind(r.skill_id)
                            .push_bind(r.version_id)
                            .push_bind(&r.subpath);
                    },
                )
                .await
            }
            Batch::Tokens(rows) => {
                insert(
                    tx,
                    "INSERT INTO tokens (id, hash, description, namespaces, actions, created_at,
                        revoked_at) ",
                    rows,
                    |row, r| {
                        row.push_bind(&r.id)
                            .push_bind(&r.hash)
                            .push_bind(&r.description)
                            .push_bind(&r.namespaces)
                            .push_bind(&r.actions)
                            .push_bind(&r.created_at)
                            .push_bind(&r.revoked_at);
                    },
                )
                .await
            }
            Batch::Audit(rows) => {
                insert(
                    tx,
                    "INSERT INTO audit_log (id, at, actor, action, namespace, name, version,
                        details) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.id)
                            .push_bind(&r.at)
                            .push_bind(&r.actor)
                            .push_bind(&r.action)
                            .push_bind(&r.namespace)
                            .push_bind(&r.name)
                            .push_bind(&r.version)
                            .push_bind(&r.details);
                    },
                )
                .await
            }
            Batch::Sources(rows) => {
                insert(
                    tx,
                    "INSERT INTO sources (id, namespace_id, kind, location, reference, subpath, fix,
                        created_at, synced_at, revision) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.id)
                            .push_bind(r.namespace_id)
                            .push_bind(&r.kind)
                            .push_bind(&r.location)
                            .push_bind(&r.reference)
                            .push_bind(&r.subpath)
                            .push_bind(r.fix)
                            .push_bind(&r.created_at)
                            .push_bind(&r.synced_at)
                            .push_bind(&r.revision);
                    },
                )
                .await
            }
            Batch::SourceSkills(rows) => {
                insert(
                    tx,
                    "INSERT INTO source_skills (source_id, skill_id, removed_at) ",
                    rows,
                    |row, r| {
                        row.push_bind(r.source_id)
                            .push_bind(r.skill_id)
                            .push_bind(&r.removed_at);
                    },
                )
                .await
            }
            Batch::End { .. } => Ok(()),
        }
    }

    async fn set_current(&mut self, current: &[(i64, i64)]) -> Result<()> {
        for (skill, version) in current {
            sqlx::query("UPDATE skills SET current_version_id = ?2 WHERE id = ?1")
                .bind(skill)
                .bind(version)
                .execute(&mut *self.0)
                .await?;
        }
        Ok(())
    }

    async fn finish(mut self, generation: i64, catalog_id: i64) -> Result<()> {
        // Derived from the files and entries copied in: SQLite's alone.
        for fill in [
            super::skills::FILL_MANIFESTS,
            super::write::FILL_LISTING,
            super::write::FILL_LISTING_VERSION,
        ] {
            sqlx::query(fill).execute(&mut *self.0).await?;
        }
        // AUTOINCREMENT ids (the audit log's) already follow the largest one inserted.
        sqlx::query(
            "UPDATE meta SET value = CASE key WHEN 'generation' THEN ?1 ELSE ?2 END
             WHERE key IN ('generation', 'catalog_id')",
        )
        .bind(generation)
        .bind(catalog_id)
        .execute(&mut *self.0)
        .await?;
        self.0.commit().await
    }
}
