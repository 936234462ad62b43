//! Storage failures, and how each engine's failures map onto the error-code table.

use crate::core::Code;

/// Storage failures. A domain conflict (a different version already stored) has a variant of its
/// own; everything else is the engine's or the file system's.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("version {version} already exists with different content ({existing})")]
    VersionExists { version: String, existing: String },
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
}

/// SQLite primary result codes we tell apart (<https://sqlite.org/rescode.html>). Extended codes
/// carry the primary code in their low byte (`SQLITE_BUSY_SNAPSHOT` is 517 = 5 | 2 << 8).
mod sqlite_code {
    pub const BUSY: i64 = 5;
    pub const LOCKED: i64 = 6;
    pub const READONLY: i64 = 8;
    pub const FULL: i64 = 13;
}

impl StoreError {
    /// A row that cannot be decoded into its record: the one policy for corrupt rows is to fail
    /// the request with `storage_error` (and log the detail), never to substitute a default.
    pub fn corrupt(what: impl std::fmt::Display, error: impl std::fmt::Display) -> Self {
        Self::Corrupt(format!("{what}: {error}"))
    }

    /// The code this failure is reported with: a full disk, read-only storage and a busy engine
    /// are told apart from every other failure.
    pub fn code(&self) -> Code {
        let Self::Sqlx(sqlx::Error::Database(e)) = self else {
            return Code::StorageError;
        };
        let Some(primary) = e
            .code()
            .and_then(|c| c.parse::<i64>().ok())
            .map(|c| c & 0xff)
        else {
            return Code::StorageError;
        };
        match primary {
            sqlite_code::FULL => Code::StorageFull,
            sqlite_code::READONLY => Code::StorageReadOnly,
            sqlite_code::BUSY | sqlite_code::LOCKED => Code::StorageBusy,
            _ => Code::StorageError,
        }
    }
}
