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
        if path.exists() && !writable(data_dir) {
            return Self::open_read_only(&path).await;
        }
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

    /// Serve a database on read-only storage: every read works, every write fails with
    /// `storage_read_only`. `immutable` because WAL locking needs a writable directory.
    async fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        tracing::warn!(path = %path.display(), "the data directory is read-only: serving reads only");
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .read_only(true)
            .immutable(true);
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options.clone())
            .await?;
        let migrator = sqlx::migrate!("./migrations");
        let applied: i64 = sqlx::query_scalar(
            "SELECT coalesce(max(version), 0) FROM _sqlx_migrations WHERE success",
        )
        .fetch_one(&read)
        .await?;
        let latest = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        if applied < latest {
            return Err(StoreError::Corrupt(format!(
                "the read-only database is at schema version {applied}; this build needs {latest}"
            )));
        }
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        Ok(Self {
            read,
            write,
            path: path.to_path_buf(),
        })
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

/// Whether files can be created in `dir` (false on a read-only mount, whoever we are).
fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".skillreg-write-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(_) => false,
    }
}
