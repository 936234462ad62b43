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
