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
    #[error("{0}")]
    InvalidArchive(#[from] crate::archive::ArchiveError),
    #[error("a valid bearer token is required")]
    Unauthorized,
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("this token may not act on namespace {0:?}")]
    NamespaceNotAllowed(String),
    #[error("unsupported content type {0:?}; send application/gzip (a .tar.gz) or application/zip")]
    UnsupportedMediaType(String),
    #[error("the request body is larger than {0} bytes")]
    BodyTooLarge(usize),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("integrity failure: {0}")]
    Integrity(String),
    #[error("the request took longer than {0} s")]
    Timeout(u64),
    #[error("search is not available in this process")]
    SearchUnavailable,
    #[error("{0}")]
    Search(String),
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
            Self::InvalidArchive(e) => e.code(),
            Self::Unauthorized => "unauthorized",
            Self::Forbidden(_) => "forbidden",
            Self::NamespaceNotAllowed(_) => "namespace_not_allowed",
            Self::UnsupportedMediaType(_) => "unsupported_media_type",
            Self::BodyTooLarge(_) => "body_too_large",
            Self::InvalidRequest(_) => "invalid_request",
            Self::Timeout(_) => "request_timeout",
            Self::Integrity(_) => "integrity_error",
            Self::SearchUnavailable => "search_unavailable",
            Self::Search(_) => "search_error",
            Self::Storage(e) => e.code(),
        }
    }

    /// HTTP status for REST answers.
    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidBundle(_)
            | Self::InvalidNamespace { .. }
            | Self::NameMismatch { .. }
            | Self::InvalidVersion(_) => 422,
            Self::InvalidUri { .. } | Self::InvalidCursor | Self::InvalidRequest(_) => 400,
            Self::InvalidArchive(_) => 422,
            Self::Unauthorized => 401,
            Self::Forbidden(_) | Self::NamespaceNotAllowed(_) => 403,
            Self::UnsupportedMediaType(_) => 415,
            Self::BodyTooLarge(_) => 413,
            Self::VersionExists { .. } => 409,
            Self::NotFound(_) | Self::NotADirectory(_) => 404,
            Self::SearchUnavailable => 503,
            Self::Timeout(_) => 408,
            Self::Storage(e) => e.status(),
            Self::Search(_) | Self::Integrity(_) => 500,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
