//! Opening the database: pools, pragmas, migrations.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::StoreError;

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "skillreg.db";

/// Handle to the catalog database. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pub(super) read: SqlitePool,
    pub(super) write: SqlitePool,
    path: PathBuf,
}

impl Store {
    /// Open (creating if needed) the database in `data_dir` and apply pending migrations.
    pub async fn open(data_dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| StoreError::Io {
            context: format!("creating data directory {}", data_dir.display()),
            source: e,
        })?;
        let path = data_dir.join(DB_FILE);
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: an acknowledged publish survives power loss, not only a process crash.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations").run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.read_only(true))
            .await?;
        Ok(Self { read, write, path })
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Close both pools, checkpointing the WAL.
    pub async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }
}

/// A write transaction on the single writer connection, `BEGIN IMMEDIATE` so it never deadlocks
/// against another writer. Dropped without [`WriteTx::commit`] (an error anywhere, a full disk at
/// commit), its connection is closed rather than returned to the pool: SQLite rolls back on
/// close, and the next writer starts from a clean connection whatever state the failure left.
pub(super) struct WriteTx {
    conn: sqlx::pool::PoolConnection<sqlx::Sqlite>,
    done: bool,
}

impl WriteTx {
    pub(super) async fn begin(pool: &SqlitePool) -> Result<Self, StoreError> {
        let mut conn = pool.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        Ok(Self { conn, done: false })
    }

    pub(super) async fn commit(mut self) -> Result<(), StoreError> {
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
    type Target = sqlx::SqliteConnection;
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
