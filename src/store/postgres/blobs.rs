//! File bytes, stored once per digest in the `blobs` table (bytea).

use super::dialect::Engine;
use super::write;
use crate::core::Digest;
use crate::store::{Blobs, Result};

#[async_trait::async_trait]
impl Blobs for Engine {
    async fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        Ok(
            sqlx::query_scalar("SELECT data FROM blobs WHERE digest = $1")
                .bind(digest.to_string())
                .fetch_optional(self.read())
                .await?,
        )
    }

    /// Insert the blobs not stored yet, in one statement and one transaction. Under the writer lock,
    /// like every write: two replicas storing overlapping blobs never wait on each other's rows.
    async fn put_if_absent(&self, items: &[(Digest, &[u8])]) -> Result<()> {
        let pool = self.write();
        if items.is_empty() {
            return Ok(());
        }
        let digests: Vec<String> = items.iter().map(|(d, _)| d.to_string()).collect();
        let sizes: Vec<i64> = items.iter().map(|(_, b)| b.len() as i64).collect();
        let data: Vec<&[u8]> = items.iter().map(|(_, b)| *b).collect();
        let mut tx = write::begin(pool).await?;
        sqlx::query(
            "INSERT INTO blobs (digest, size, data)
         SELECT * FROM UNNEST($1::text[], $2::int8[], $3::bytea[])
         ON CONFLICT (digest) DO NOTHING",
        )
        .bind(&digests)
        .bind(&sizes)
        .bind(&data)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
