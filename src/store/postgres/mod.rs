//! The engine for more than one replica: every table in one PostgreSQL database, blobs as
//! `bytea` (a skill is at most 16 MiB). Any number of `skillreg serve` processes may share it.
//!
//! Writes take one transaction-scoped advisory lock ([`write::begin`]), so they apply one at a
//! time across every replica, exactly as on SQLite's single writer: concurrent publishes of one
//! version from two replicas end with one stored and the other unchanged or refused. Reads run
//! on the pool in parallel and never wait for writes. The table groups both engines share are in
//! `store/sql` (compiled here with this engine's `dialect`); this engine's own modules mirror
//! the SQLite engine's (`skills`, `completion`, `blobs`, `checks`, `copy`), with the rows and
//! their decoding (`store::rows`) shared.

mod across;
mod blobs;
mod checks;
mod copy;
mod dialect;
mod feed;
pub(in crate::store) mod skills;
mod write;

// The table groups written once for both engines (`store/sql`), with this engine's `dialect`
// (the SQLite engine compiles them too).
#[path = "../sql/access.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod access;
#[path = "../sql/catalog.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod catalog;
#[path = "../sql/completion.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod completion;
#[path = "../sql/events.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod events;
#[path = "../sql/lifecycle.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod lifecycle;
#[path = "../sql/listing.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
pub(in crate::store) mod listing;
#[path = "../sql/maintenance.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod maintenance;
#[path = "../sql/packs.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod packs;
#[path = "../sql/requires.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
pub(super) mod requires;
#[path = "../sql/sessions.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod sessions;
#[path = "../sql/signing.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod signing;
#[path = "../sql/sources.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod sources;
#[path = "../sql/trustpub.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod trustpub;
#[path = "../sql/usage.rs"]
#[expect(
    clippy::duplicate_mod,
    reason = "written once, compiled for each engine with its dialect"
)]
mod usage;

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection as _, PgConnection, PgPool};

use super::Result;
pub use feed::PgFeed;
pub use write::CHANGES_CHANNEL;

/// How a replica uses the database.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Connections in the pool.
    pub max_connections: u32,
    /// Longest a statement may run before the server cancels it.
    pub statement_timeout: Duration,
    /// Longest a request waits for a connection (while the database is unreachable, requests
    /// fail after this with `storage_unavailable`).
    pub acquire_timeout: Duration,
}

impl From<&crate::config::Storage> for PgOptions {
    /// The `database_*` settings.
    fn from(storage: &crate::config::Storage) -> Self {
        Self {
            max_connections: storage.database_pool_size,
            statement_timeout: Duration::from_secs(storage.database_statement_timeout_secs),
            acquire_timeout: Duration::from_secs(storage.database_acquire_timeout_secs),
        }
    }
}

impl Default for PgOptions {
    /// The settings' declared defaults.
    fn default() -> Self {
        Self::from(&crate::config::Storage::default())
    }
}

/// A pooled connection idle longer than this is pinged before it is used.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// The PostgreSQL engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connect to the database at `url` (`postgres://…`) and apply pending migrations (one
    /// replica at a time: the migrator holds an advisory lock).
    pub async fn connect(url: &str, options: &PgOptions) -> Result<Self> {
        let millis = options.statement_timeout.as_millis().to_string();
        let connect = PgConnectOptions::from_str(url)?
            .application_name("skillreg")
            .options([("statement_timeout", millis.as_str())]);
        // One connection first: its error names the cause (refused, authentication, no such
        // database), where the pool's would only say that it timed out.
        PgConnection::connect_with(&connect).await?.close().await?;
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            // A connection the server dropped (a restart, a failover) is replaced, not reused:
            // one idle for a while is pinged before use. One in steady use is not (a ping per
            // request would double the round trips of most reads); if the server went away
            // under it, its request fails with `storage_unavailable` and it is closed.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for > IDLE_BEFORE_PING {
                        conn.ping().await?;
                    }
                    Ok(true)
                })
            })
            .connect_with(connect)
            .await?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        Ok(Self { pool })
    }

    /// The pool (for the change listener and pool metrics).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The pool reads use: the one pool.
    fn read(&self) -> &PgPool {
        &self.pool
    }

    /// The pool writes use: the one pool (each write takes the writer lock, [`write::begin`]).
    fn write(&self) -> &PgPool {
        &self.pool
    }
}
