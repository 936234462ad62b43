//! What only PostgreSQL's maintenance has (the rest is `store/sql/maintenance.rs`). Backups of a
//! PostgreSQL registry are PostgreSQL's own (`pg_dump`, base backups).

use std::path::Path;

use sqlx::PgPool;

use crate::store::rows::Scrub;
use crate::store::{Result, StoreError};

/// PostgreSQL derives no columns from the tables of record: nothing to check.
pub(super) async fn derived(_pool: &PgPool, _scrub: &mut Scrub) -> Result<()> {
    Ok(())
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
