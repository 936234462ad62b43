//! What only PostgreSQL's maintenance has (the rest is `store/sql/maintenance.rs`). Backups of a
//! PostgreSQL registry are PostgreSQL's own (`pg_dump`, base backups).

use std::path::Path;

use sqlx::PgPool;

use crate::store::rows::Scrub;
use crate::store::{Result, StoreError};

/// The scrub of the columns derived from the tables of record (manifests, the listing's copies).
pub(super) async fn derived(pool: &PgPool, scrub: &mut Scrub) -> Result<()> {
    for version_id in sqlx::query_scalar::<_, i64>(super::skills::STALE_MANIFESTS)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "version {version_id}: its manifest column differs from its files and entries"
        ));
    }
    super::listing::scrub(pool, scrub).await
}

/// PostgreSQL checks its own pages (with checksums on): nothing to add.
pub(super) async fn integrity(_pool: &PgPool, _scrub: &mut Scrub) -> Result<()> {
    Ok(())
}

pub(super) async fn backup(_pool: &PgPool, path: &Path) -> Result<()> {
    Err(StoreError::Unsupported(format!(
        "cannot back up a PostgreSQL registry to {}: `skillreg backup` copies SQLite's \
         database; back PostgreSQL up with pg_dump",
        path.display()
    )))
}
