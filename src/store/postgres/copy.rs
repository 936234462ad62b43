//! Every row of every table, out in key order and in inside one transaction (`skillreg migrate`).

use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgPool, Postgres, Transaction};
use tokio::sync::mpsc;

use super::write;
use crate::store::Result;
use crate::store::copy::{self, Batch, Importer, Key, Table};

/// Up to `limit` rows of `table` after `after`. Every statement is given `$1` (the integer key),
/// `$2` (the text key), `$3` (the limit) and `$4` (the second integer key), and reads the
/// keys its table has.
pub(super) async fn export(pool: &PgPool, table: Table, after: &Key, limit: u32) -> Result<Batch> {
    async fn page<R>(pool: &PgPool, sql: &'static str, after: &Key, limit: u32) -> Result<Vec<R>>
    where
        R: for<'r> FromRow<'r, PgRow> + Send + Unpin,
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
                 WHERE id > $1 ORDER BY id LIMIT $3",
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
                 FROM skills WHERE id > $1 ORDER BY id LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Blobs => Batch::Blobs(
            page(
                pool,
                "SELECT digest, size, data FROM blobs
                 WHERE digest > $2 ORDER BY digest LIMIT $3",
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
                 FROM versions WHERE id > $1 ORDER BY id LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Files => Batch::Files(
            page(
                pool,
                "SELECT version_id, path, digest, size, mode FROM version_files
                 WHERE (version_id, path) > ($1, $2) ORDER BY version_id, path LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Entries => Batch::Entries(
            page(
                pool,
                "SELECT version_id, subpath, name, description, frontmatter FROM version_entries
                 WHERE (version_id, subpath) > ($1, $2) ORDER BY version_id, subpath LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Listing => Batch::Listing(
            page(
                pool,
                "SELECT uri, skill_id, version_id, subpath FROM listing
                 WHERE uri > $2 ORDER BY uri LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Tokens => Batch::Tokens(
            page(
                pool,
                "SELECT id, hash, description, namespaces, actions, created_at, revoked_at
                 FROM tokens WHERE id > $2 ORDER BY id LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Audit => Batch::Audit(
            page(
                pool,
                "SELECT id, at, actor, action, namespace, name, version, details
                 FROM audit_log WHERE id > $1 ORDER BY id LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::Sources => Batch::Sources(
            page(
                pool,
                "SELECT id, namespace_id, kind, location, reference, subpath, fix, created_at,
                        synced_at, revision
                 FROM sources WHERE id > $1 ORDER BY id LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
        Table::SourceSkills => Batch::SourceSkills(
            page(
                pool,
                "SELECT source_id, skill_id, removed_at FROM source_skills
                 WHERE (source_id, skill_id) > ($1, $4) ORDER BY source_id, skill_id LIMIT $3",
                after,
                limit,
            )
            .await?,
        ),
    })
}

pub(super) async fn import(pool: &PgPool, rows: mpsc::Receiver<Batch>) -> Result<u64> {
    copy::import(PgImport(write::begin(pool).await?), rows).await
}

/// The import's transaction, holding the writer lock.
struct PgImport(Transaction<'static, Postgres>);

/// One column of `rows`, as an array parameter.
fn col<'a, T, U>(rows: &'a [T], f: impl Fn(&'a T) -> U) -> Vec<U> {
    rows.iter().map(f).collect()
}

#[async_trait::async_trait]
impl Importer for PgImport {
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
        let query = match &batch {
            Batch::Namespaces(rows) => sqlx::query(
                "INSERT INTO namespaces (id, name, created_at, last_published_at, private,
                    review_required)
                 SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::text[], $5::bool[],
                    $6::bool[])",
            )
            .bind(col(rows, |r| r.id))
            .bind(col(rows, |r| r.name.as_str()))
            .bind(col(rows, |r| r.created_at.as_str()))
            .bind(col(rows, |r| r.last_published_at.as_deref()))
            .bind(col(rows, |r| r.private))
            .bind(col(rows, |r| r.review_required)),
            Batch::Skills(rows) => sqlx::query(
                "INSERT INTO skills (id, namespace_id, name, created_at, deprecated_at,
                    deprecation_message, updated_gen, last_published_at)
                 SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[],
                    $6::text[], $7::int8[], $8::text[])",
            )
            .bind(col(rows, |r| r.id))
            .bind(col(rows, |r| r.namespace_id))
            .bind(col(rows, |r| r.name.as_str()))
            .bind(col(rows, |r| r.created_at.as_str()))
            .bind(col(rows, |r| r.deprecated_at.as_deref()))
            .bind(col(rows, |r| r.deprecation_message.as_deref()))
            .bind(col(rows, |r| r.updated_gen))
            .bind(col(rows, |r| r.last_published_at.as_deref())),
            Batch::Blobs(rows) => sqlx::query(
                "INSERT INTO blobs (digest, size, data)
                 SELECT * FROM UNNEST($1::text[], $2::int8[], $3::bytea[])",
            )
            .bind(col(rows, |r| r.digest.as_str()))
            .bind(col(rows, |r| r.size))
            .bind(col(rows, |r| r.data.as_slice())),
            Batch::Versions(rows) => sqlx::query(
                "INSERT INTO versions (id, skill_id, version, content_digest, file_count,
                    total_size, warnings, published_at, published_by, yanked_at, yank_reason,
                    verdict, findings, revoked_at, revoke_reason, pending, provenance)
                 SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::text[], $4::text[], $5::int8[],
                    $6::int8[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                    $12::text[], $13::text[], $14::text[], $15::text[], $16::bool[], $17::text[])",
            )
            .bind(col(rows, |r| r.id))
            .bind(col(rows, |r| r.skill_id))
            .bind(col(rows, |r| r.version.as_str()))
            .bind(col(rows, |r| r.content_digest.as_str()))
            .bind(col(rows, |r| r.file_count))
            .bind(col(rows, |r| r.total_size))
            .bind(col(rows, |r| r.warnings.as_str()))
            .bind(col(rows, |r| r.published_at.as_str()))
            .bind(col(rows, |r| r.published_by.as_deref()))
            .bind(col(rows, |r| r.yanked_at.as_deref()))
            .bind(col(rows, |r| r.yank_reason.as_deref()))
            .bind(col(rows, |r| r.verdict.as_str()))
            .bind(col(rows, |r| r.findings.as_str()))
            .bind(col(rows, |r| r.revoked_at.as_deref()))
            .bind(col(rows, |r| r.revoke_reason.as_deref()))
            .bind(col(rows, |r| r.pending))
            .bind(col(rows, |r| r.provenance.as_deref())),
            Batch::Files(rows) => sqlx::query(
                "INSERT INTO version_files (version_id, path, digest, size, mode)
                 SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::int8[], $5::int8[])",
            )
            .bind(col(rows, |r| r.version_id))
            .bind(col(rows, |r| r.path.as_str()))
            .bind(col(rows, |r| r.digest.as_str()))
            .bind(col(rows, |r| r.size))
            .bind(col(rows, |r| r.mode)),
            Batch::Entries(rows) => sqlx::query(
                "INSERT INTO version_entries (version_id, subpath, name, description, frontmatter)
                 SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[])",
            )
            .bind(col(rows, |r| r.version_id))
            .bind(col(rows, |r| r.subpath.as_str()))
            .bind(col(rows, |r| r.name.as_str()))
            .bind(col(rows, |r| r.description.as_str()))
            .bind(col(rows, |r| r.frontmatter.as_str())),
            Batch::Listing(rows) => sqlx::query(
                "INSERT INTO listing (uri, skill_id, version_id, subpath)
                 SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::text[])",
            )
            .bind(col(rows, |r| r.uri.as_str()))
            .bind(col(rows, |r| r.skill_id))
            .bind(col(rows, |r| r.version_id))
            .bind(col(rows, |r| r.subpath.as_str())),
            Batch::Tokens(rows) => sqlx::query(
                "INSERT INTO tokens (id, hash, description, namespaces, actions, created_at,
                    revoked_at)
                 SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                    $6::text[], $7::text[])",
            )
            .bind(col(rows, |r| r.id.as_str()))
            .bind(col(rows, |r| r.hash.as_str()))
            .bind(col(rows, |r| r.description.as_str()))
            .bind(col(rows, |r| r.namespaces.as_str()))
            .bind(col(rows, |r| r.actions.as_str()))
            .bind(col(rows, |r| r.created_at.as_str()))
            .bind(col(rows, |r| r.revoked_at.as_deref())),
            Batch::Audit(rows) => sqlx::query(
                "INSERT INTO audit_log (id, at, actor, action, namespace, name, version, details)
                 SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[],
                    $6::text[], $7::text[], $8::text[])",
            )
            .bind(col(rows, |r| r.id))
            .bind(col(rows, |r| r.at.as_str()))
            .bind(col(rows, |r| r.actor.as_str()))
            .bind(col(rows, |r| r.action.as_str()))
            .bind(col(rows, |r| r.namespace.as_deref()))
            .bind(col(rows, |r| r.name.as_deref()))
            .bind(col(rows, |r| r.version.as_deref()))
            .bind(col(rows, |r| r.details.as_str())),
            Batch::Sources(rows) => sqlx::query(
                "INSERT INTO sources (id, namespace_id, kind, location, reference, subpath, fix,
                    created_at, synced_at, revision)
                 SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[],
                    $6::text[], $7::bool[], $8::text[], $9::text[], $10::text[])",
            )
            .bind(col(rows, |r| r.id))
            .bind(col(rows, |r| r.namespace_id))
            .bind(col(rows, |r| r.kind.as_str()))
            .bind(col(rows, |r| r.location.as_str()))
            .bind(col(rows, |r| r.reference.as_str()))
            .bind(col(rows, |r| r.subpath.as_str()))
            .bind(col(rows, |r| r.fix))
            .bind(col(rows, |r| r.created_at.as_str()))
            .bind(col(rows, |r| r.synced_at.as_deref()))
            .bind(col(rows, |r| r.revision.as_deref())),
            Batch::SourceSkills(rows) => sqlx::query(
                "INSERT INTO source_skills (source_id, skill_id, removed_at)
                 SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::text[])",
            )
            .bind(col(rows, |r| r.source_id))
            .bind(col(rows, |r| r.skill_id))
            .bind(col(rows, |r| r.removed_at.as_deref())),
            Batch::End { .. } => return Ok(()),
        };
        query.execute(&mut *self.0).await?;
        Ok(())
    }

    async fn set_current(&mut self, current: &[(i64, i64)]) -> Result<()> {
        for chunk in current.chunks(10_000) {
            sqlx::query(
                "UPDATE skills s SET current_version_id = c.version_id
                 FROM UNNEST($1::int8[], $2::int8[]) AS c (skill_id, version_id)
                 WHERE s.id = c.skill_id",
            )
            .bind(col(chunk, |c| c.0))
            .bind(col(chunk, |c| c.1))
            .execute(&mut *self.0)
            .await?;
        }
        Ok(())
    }

    async fn finish(mut self, generation: i64, catalog_id: i64) -> Result<()> {
        sqlx::query(
            "UPDATE meta SET value = CASE key WHEN 'generation' THEN $1 ELSE $2 END
             WHERE key IN ('generation', 'catalog_id')",
        )
        .bind(generation)
        .bind(catalog_id)
        .execute(&mut *self.0)
        .await?;
        // New rows take ids after the copied ones.
        sqlx::query(
            "SELECT setval(pg_get_serial_sequence(t, 'id'), m + 1, false)
             FROM (VALUES
                 ('namespaces', (SELECT coalesce(max(id), 0) FROM namespaces)),
                 ('skills', (SELECT coalesce(max(id), 0) FROM skills)),
                 ('versions', (SELECT coalesce(max(id), 0) FROM versions)),
                 ('sources', (SELECT coalesce(max(id), 0) FROM sources)),
                 ('audit_log', (SELECT coalesce(max(id), 0) FROM audit_log))) AS s (t, m)",
        )
        .execute(&mut *self.0)
        .await?;
        write::announce(&mut self.0, generation).await?;
        self.0.commit().await?;
        Ok(())
    }
}
