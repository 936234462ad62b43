//! Every row of every table, out in key order and in inside one transaction (`skillreg migrate`).

use sqlx::{QueryBuilder, SqlitePool};
use tokio::sync::mpsc;

use super::write::{WriteTx, pow2_chunks};
use crate::store::Result;
use crate::store::copy::{self, Batch, CopyRow, Export, Importer, Key, Table};

/// Up to `limit` rows of `table` after `after`.
pub(super) async fn export(
    pool: &SqlitePool,
    table: Table,
    after: &Key,
    limit: u32,
) -> Result<Batch> {
    copy::export(pool, table, after, limit).await
}

#[async_trait::async_trait]
impl Export for SqlitePool {
    async fn page<R: CopyRow>(&self, after: &Key, limit: u32) -> Result<Vec<R>> {
        Ok(sqlx::query_as(R::SELECT)
            .bind(after.int)
            .bind(&after.text)
            .bind(i64::from(limit))
            .bind(after.int2)
            .fetch_all(self)
            .await?)
    }
}

pub(super) async fn import(pool: &SqlitePool, rows: mpsc::Receiver<Batch>) -> Result<u64> {
    copy::import(SqliteImport(WriteTx::begin(pool).await?), rows).await
}

struct SqliteImport(WriteTx);

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

    /// Multi-row INSERTs of a few sizes (prepared once each).
    async fn insert<R: CopyRow>(&mut self, rows: &[R]) -> Result<()> {
        for chunk in pow2_chunks(rows) {
            let mut insert = QueryBuilder::new(R::INSERT);
            insert.push_values(chunk, |mut row, r| r.bind_sqlite(&mut row));
            insert.build().execute(&mut *self.0).await?;
        }
        Ok(())
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
            super::listing::FILL_LISTING,
            super::listing::FILL_LISTING_VERSION,
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
