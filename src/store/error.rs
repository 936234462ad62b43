//! Storage failures, and how each engine's failures map onto the error-code table.

use sqlx::postgres::PgDatabaseError;

use crate::core::Code;

/// Storage failures. A domain conflict (a different version already stored) has a variant of its
/// own; everything else is the engine's or the file system's.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlx(sqlx::Error),
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
    #[error("{0}")]
    Unsupported(String),
}

impl From<sqlx::Error> for StoreError {
    /// A column that does not decode into its field's type (a stored time that does not
    /// parse) is a corrupt row, like any other row that does not decode.
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::ColumnDecode { index, source } => {
                Self::corrupt(format_args!("column {index}"), source)
            }
            other => Self::Sqlx(other),
        }
    }
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

    /// The code this failure is reported with: a full disk, read-only storage, a busy engine and
    /// an unreachable database are told apart from every other failure.
    pub fn code(&self) -> Code {
        match self {
            Self::Unsupported(_) => Code::InvalidRequest,
            Self::Sqlx(sqlx::Error::Database(e)) => match e.try_downcast_ref::<PgDatabaseError>() {
                Some(pg) => postgres_code(pg.code()),
                None => sqlite_code(e.code().as_deref()),
            },
            Self::Sqlx(
                sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::Protocol(_),
            ) => Code::StorageUnavailable,
            _ => Code::StorageError,
        }
    }
}

fn sqlite_code(code: Option<&str>) -> Code {
    match code.and_then(|c| c.parse::<i64>().ok()).map(|c| c & 0xff) {
        Some(sqlite_code::FULL) => Code::StorageFull,
        Some(sqlite_code::READONLY) => Code::StorageReadOnly,
        Some(sqlite_code::BUSY | sqlite_code::LOCKED) => Code::StorageBusy,
        _ => Code::StorageError,
    }
}

/// PostgreSQL SQLSTATEs we tell apart (<https://www.postgresql.org/docs/current/errcodes-appendix.html>).
fn postgres_code(sqlstate: &str) -> Code {
    match sqlstate {
        // disk_full
        "53100" => Code::StorageFull,
        // read_only_sql_transaction: a standby, or a primary being demoted
        "25006" => Code::StorageReadOnly,
        // serialization_failure, deadlock_detected, lock_not_available, query_canceled
        // (statement_timeout), too_many_connections
        "40001" | "40P01" | "55P03" | "57014" | "53300" => Code::StorageBusy,
        // admin_shutdown, crash_shutdown, cannot_connect_now, and the connection_exception class
        "57P01" | "57P02" | "57P03" => Code::StorageUnavailable,
        s if s.starts_with("08") => Code::StorageUnavailable,
        _ => Code::StorageError,
    }
}
