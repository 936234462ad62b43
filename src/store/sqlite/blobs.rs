//! File bytes, stored once per digest in the `blobs` table.

use sqlx::QueryBuilder;

use super::dialect::Engine;
use super::write::{WriteTx, pow2_chunks};
use crate::core::Digest;
use crate::store::{Blobs, Result};

#[async_trait::async_trait]
impl Blobs for Engine {
    async fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        Ok(
            sqlx::query_scalar("SELECT data FROM blobs WHERE digest = ?1")
                .bind(digest.to_string())
                .fetch_optional(self.read())
                .await?,
        )
    }

    /// Insert the blobs not stored yet, in one transaction.
    async fn put_if_absent(&self, items: &[(Digest, &[u8])]) -> Result<()> {
        let pool = self.write();
        if items.is_empty() {
            return Ok(());
        }
        let mut tx = WriteTx::begin(pool).await?;
        for chunk in pow2_chunks(items) {
            let mut insert = QueryBuilder::new("INSERT INTO blobs (digest, size, data) ");
            insert.push_values(chunk, |mut row, (digest, bytes)| {
                row.push_bind(digest.to_string())
                    .push_bind(bytes.len() as i64)
                    .push_bind(*bytes);
            });
            insert.push(" ON CONFLICT (digest) DO NOTHING");
            insert.build().execute(&mut *tx).await?;
        }
        tx.commit().await
    }
}
