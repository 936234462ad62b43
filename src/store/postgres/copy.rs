//! Every row of every table, out in key order and in inside one transaction (`skillreg migrate`).

use sqlx::{PgPool, Postgres, QueryBuilder, Transaction};
use tokio::sync::mpsc;

use super::write;
use crate::store::Result;
use crate::store::copy::{self, Batch, CopyRow, Export, Importer, Key, Table};

/// Up to `limit` rows of `table` after `after`.
pub(super) async fn export(pool: &PgPool, table: Table, after: &Key, limit: u32) -> Result<Batch> {
    copy::export(pool, table, after, limit).await
}

#[async_trait::async_trait]
impl Export for PgPool {
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

    /// One INSERT of one array per column.
    async fn insert<R: CopyRow>(&mut self, rows: &[R]) -> Result<()> {
        let mut insert = QueryBuilder::new(R::INSERT);
        insert.push("SELECT * FROM UNNEST(");
        R::bind_postgres(rows, &mut insert.separated(", "));
        insert.push(")");
        insert.build().execute(&mut *self.0).await?;
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
        // Derived from the rows copied in.
        for fill in [
            super::skills::FILL_MANIFESTS,
            super::listing::FILL_LISTING,
            super::listing::FILL_LISTING_VERSION,
        ] {
            sqlx::query(fill).execute(&mut *self.0).await?;
        }
        sqlx::query(
            "UPDATE meta SET value = CASE key WHEN 'generation' THEN $1 ELSE $2 END
             WHERE key IN ('generation', 'catalog_id')",
        )
        .bind(generation)
        .bind(catalog_id)
        .execute(&mut *self.0)
        .await?;
        // New rows take ids after the copied ones.
        for next_id in Table::ALL.into_iter().filter_map(Table::next_id) {
            sqlx::query(next_id).execute(&mut *self.0).await?;
        }
        write::announce(&mut self.0, generation).await?;
        self.0.commit().await?;
        Ok(())
    }
}
