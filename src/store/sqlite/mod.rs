//! The embedded engine: one SQLite database file (`skillreg.db`, WAL mode) in the data directory.
//!
//! Writes go through a single-connection pool and `BEGIN IMMEDIATE` transactions, so a publish is
//! atomic and never deadlocks against another writer (another process included); reads use a
//! separate pool and never block on writes. The table groups both engines share are in
//! `store/sql` (compiled here with this engine's `dialect`); this engine's own are `skills`
//! (skills, versions, files, entries, the listing with its derived columns and kept entries),
//! `completion`, `blobs`, `checks` (the scrub of derived columns, backup) and `copy`; `write`
//! holds what every write shares.
//!
//! A statement binds its row limit as `LIMIT +$N` (`LIMIT +?N` in this engine's own modules),
//! never `LIMIT $N`: this SQLite plans a bare bound limit with its value, so it prepares such a
//! statement again every time the limit is bound, that is on every execution (a tenth of a
//! `skills/list` page's CPU time went to it). The unary plus makes the limit an expression,
//! planned once. The dialect's `limit!` spells it so, and a store test holds every statement
//! here and in `store/sql` to it.
//!
//! Derived columns. Rows a read would otherwise gather from several tables are kept beside their
//! record and never replace it; `skillreg verify` checks each against the tables of record:
//! - each version's manifest (files, then entries) as one JSON value on its `versions` row,
//!   written at publish, filled by the migration that added it and by `skillreg migrate` for rows
//!   copied in (`skills::FILL_MANIFESTS`), so a `skills/list` page reads one row per version;
//! - each listing row's entry name and description and a copy of its skill and version
//!   (namespace id, skill name, deprecation, version, verdict and findings), brought up to date
//!   whenever the listing rows are written and in `write::touch`, which every other change to a
//!   skill or its versions ends with; a page is then one range of listing rows and the
//!   namespaces (`store/sql/listing.rs`, which PostgreSQL shares);
//! - each listing row's serialized entry, in `listing_entries` (a rowid table filled in URI order,
//!   its ids given out by `meta.last_entry_id` so that none is given twice; a trigger drops a row's
//!   entry with the row; `skillreg migrate` copies none, and the background fill makes them again).
//!
//! PostgreSQL keeps the listing's copies too, and reads the tables of record for the rest.

mod across;
mod blobs;
mod checks;
mod copy;
mod dialect;
pub(in crate::store) mod skills;
pub(in crate::store) mod write;

// The table groups written once for both engines (`store/sql`), with this engine's `dialect`.
#[path = "../sql/access.rs"]
mod access;
#[path = "../sql/catalog.rs"]
pub(in crate::store) mod catalog;
#[path = "../sql/completion.rs"]
mod completion;
#[path = "../sql/events.rs"]
mod events;
#[path = "../sql/lifecycle.rs"]
mod lifecycle;
#[path = "../sql/listing.rs"]
pub(in crate::store) mod listing;
#[path = "../sql/maintenance.rs"]
mod maintenance;
#[path = "../sql/packs.rs"]
mod packs;
#[path = "../sql/requires.rs"]
pub(super) mod requires;
#[path = "../sql/sessions.rs"]
mod sessions;
#[path = "../sql/signing.rs"]
mod signing;
#[path = "../sql/sources.rs"]
mod sources;
#[path = "../sql/trustpub.rs"]
mod trustpub;
#[path = "../sql/usage.rs"]
mod usage;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::{Result, StoreError};

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "skillreg.db";

/// The SQLite engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    read: SqlitePool,
    write: SqlitePool,
}

impl SqliteStore {
    /// Open (creating if needed) the database in `data_dir` and apply pending migrations. A data
    /// directory on read-only storage is served read-only.
    pub async fn open(data_dir: &Path) -> Result<Self> {
        create_private_dir(data_dir)?;
        let path = data_dir.join(DB_FILE);
        if path.exists() && !writable(data_dir) {
            return Self::open_read_only(&path).await;
        }
        create_private_db(&path)?;
        warn_if_readable(data_dir, "data directory");
        warn_if_readable(&path, "database");
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
        sqlx::migrate!("./migrations/sqlite").run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.read_only(true))
            .await?;
        Ok(Self { read, write })
    }

    /// Serve a database on read-only storage: every read works, every write fails with
    /// `storage_read_only`. `immutable` because WAL locking needs a writable directory.
    async fn open_read_only(path: &Path) -> Result<Self> {
        tracing::warn!(path = %path.display(), "the data directory is read-only: serving reads only");
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .read_only(true)
            .immutable(true);
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options.clone())
            .await?;
        let migrator = sqlx::migrate!("./migrations/sqlite");
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
        Ok(Self { read, write })
    }

    /// The pool reads use.
    fn read(&self) -> &SqlitePool {
        &self.read
    }

    /// The single writer.
    fn write(&self) -> &SqlitePool {
        &self.write
    }
}

/// Create the data directory readable by its owner only (it holds token hashes and the audit
/// log); an existing directory keeps its mode.
fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| StoreError::Io {
            context: format!("creating data directory {}", dir.display()),
            source: e,
        })
}

/// Create an empty database file readable and writable by its owner only, so that SQLite opens
/// it instead of creating it with the default mode; the `-wal` and `-shm` files SQLite creates
/// take the database file's mode. An existing file keeps its mode.
fn create_private_db(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(StoreError::Io {
            context: format!("creating database {}", path.display()),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Warn when `path` (the data directory or the database) can be read by its group or by anyone:
/// it holds token hashes, the audit log and private skills.
fn warn_if_readable(path: &Path, what: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o044 != 0
    {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{:o}", meta.permissions().mode() & 0o777),
            "the {what} is readable by other users; `chmod go-rwx` it",
        );
    }
}

/// Whether files can be created in `dir` (false on a read-only mount, whoever we are).
pub fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".skillreg-write-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(_) => false,
    }
}
