//! The crate's one error type: every failure has a stable snake_case code and an HTTP status.
//!
//! Clients branch on codes, never on messages. The MCP transport maps these onto JSON-RPC codes
//! in `mcp/`; the REST transport onto `{"error":{"code","message"}}`.

use crate::core::{BundleError, NameError, UriError, VersionError};
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidBundle(#[from] BundleError),
    #[error("invalid namespace {name:?}: it {error}")]
    InvalidNamespace { name: String, error: NameError },
    #[error("the SKILL.md names {found:?}, but the skill is published as {expected:?}")]
    NameMismatch { expected: String, found: String },
    #[error("{0}")]
    InvalidVersion(#[from] VersionError),
    #[error("{namespace}/{name} {version} already exists with different content")]
    VersionExists {
        namespace: String,
        name: String,
        version: String,
    },
    #[error("{uri:?} is not a valid skill URI: it {error}")]
    InvalidUri { uri: String, error: UriError },
    #[error("{0}")]
    NotFound(String),
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("invalid cursor")]
    InvalidCursor,
    #[error("storage failure: {0}")]
    Storage(StoreError),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Self::Storage(e)
    }
}

impl Error {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidBundle(e) => e.code(),
            Self::InvalidNamespace { .. } => "invalid_namespace",
            Self::NameMismatch { .. } => "name_mismatch",
            Self::InvalidVersion(_) => "invalid_version",
            Self::VersionExists { .. } => "version_exists",
            Self::InvalidUri { .. } => "invalid_uri",
            Self::NotFound(_) => "not_found",
            Self::NotADirectory(_) => "not_a_directory",
            Self::InvalidCursor => "invalid_cursor",
            Self::Storage(_) => "storage_error",
        }
    }

    /// HTTP status for REST answers.
    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidBundle(_)
            | Self::InvalidNamespace { .. }
            | Self::NameMismatch { .. }
            | Self::InvalidVersion(_) => 422,
            Self::InvalidUri { .. } | Self::InvalidCursor => 400,
            Self::VersionExists { .. } => 409,
            Self::NotFound(_) | Self::NotADirectory(_) => 404,
            Self::Storage(_) => 500,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
