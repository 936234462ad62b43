//! The crate's one error type. Every variant maps to exactly one row of the error-code table
//! ([`Code`]), which gives its HTTP status, its MCP kind and whether its text is internal.
//! Transports map errors to the wire only through [`Error::code`] and [`Error::public_message`].

use crate::core::scan::Finding;
use crate::core::trustpub::TrustpubError;
use crate::core::{
    AccessError, BundleError, Code, RefError, SkillName, SkillRef, SkillVersion, UriError,
    VersionError, VersionRef,
};
use crate::search::SearchError;
use crate::source::ArchiveError;
use crate::source::git::GitError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidBundle(#[from] BundleError),
    #[error("{0}")]
    InvalidArchive(#[from] ArchiveError),
    #[error("{0}")]
    InvalidRef(#[from] RefError),
    #[error("{0}")]
    Access(#[from] AccessError),
    #[error("{0}")]
    Trustpub(#[from] TrustpubError),
    #[error("{0}")]
    Webhook(#[from] crate::core::event::WebhookError),
    #[error("the SKILL.md names {found:?}, but the skill is published as {expected:?}")]
    NameMismatch {
        expected: SkillName,
        found: SkillName,
    },
    #[error("{0}")]
    InvalidVersion(#[from] VersionError),
    #[error("{0}")]
    Signature(#[from] crate::core::signature::SignatureError),
    /// With the version a changed skill can be published as: the next patch after the newest
    /// stored one.
    #[error("{version} already exists with different content{hint}", version = .0, hint = next_free(.1.as_deref()))]
    VersionExists(VersionRef, Option<Box<SkillVersion>>),
    #[error("{version} is refused: {}", blocked_summary(findings))]
    Blocked {
        version: VersionRef,
        /// The findings the scan policy blocks.
        findings: Vec<Finding>,
    },
    #[error(
        "more than one namespace has a skill named {name:?}: {}",
        list_skills(matches)
    )]
    AmbiguousSkill {
        name: SkillName,
        /// Each skill of that name the caller sees.
        matches: Vec<SkillRef>,
    },
    #[error("{uri:?} is not a valid skill URI: it {error}")]
    InvalidUri { uri: String, error: UriError },
    #[error("{0}")]
    NotFound(#[from] NotFound),
    #[error("{version} was revoked for security reasons: {reason}")]
    Revoked { version: VersionRef, reason: String },
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("invalid cursor")]
    InvalidCursor,
    #[error("unsupported content type {0:?}; send application/gzip (a .tar.gz) or application/zip")]
    UnsupportedMediaType(String),
    #[error("the request body is larger than {0} bytes")]
    BodyTooLarge(usize),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("the message is not JSON: {0}")]
    ParseError(String),
    #[error("the message is not a JSON-RPC 2.0 request, notification or response: {0}")]
    InvalidMessage(String),
    #[error("the request took longer than {0} s")]
    Timeout(u64),
    #[error("too many requests; retry in {0} s")]
    RateLimited(u64),
    #[error("the registry holds as many MCP sessions as it may; retry later")]
    TooManySessions,
    #[error("the registry has as many event streams open as it may; retry later or poll")]
    TooManyEventStreams,
    #[error("the request body did not arrive within {0} s")]
    BodyReadTimeout(u64),
    #[error("the server holds as many request bodies as it may; retry shortly")]
    ServerBusy,
    #[error("integrity failure: {0}")]
    Integrity(String),
    #[error("search is not available in this process")]
    SearchUnavailable,
    #[error("search failed: {0}")]
    Search(#[source] SearchError),
    #[error("storage failure: {0}")]
    Storage(#[source] StoreError),
    #[error("{0}")]
    Git(#[from] GitError),
    /// A source named wrongly or that could not be read (its code: `invalid_source` or
    /// `source_unavailable`).
    #[error("{message}")]
    Source { code: Code, message: String },
    /// A publish refused by a rule of its own code (a requirement the graph cannot meet,
    /// `dependency_*`; a pack, `pack_*`); the message names what broke it.
    #[error("{message}")]
    Refused { code: Code, message: String },
    #[error("internal error: {0}")]
    Internal(String),
}

/// What was not found: one code per kind of thing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotFound {
    #[error("no skill {0}")]
    Skill(SkillRef),
    #[error("no skill named {0:?}")]
    SkillNamed(SkillName),
    #[error("no version {} of {}", .0.version, .0.skill)]
    Version(VersionRef),
    #[error("no file {path:?} in {version}")]
    File { version: VersionRef, path: String },
    #[error("No skill is served at {0}")]
    SkillUri(String),
    #[error("No resource at {0}")]
    Resource(String),
    #[error("no live token {0}")]
    Token(String),
    #[error("no trusted publisher {0}")]
    TrustedPublisher(String),
    #[error("no pack {0}")]
    Pack(String),
    #[error("no such endpoint")]
    Endpoint,
}

impl NotFound {
    pub fn code(&self) -> Code {
        match self {
            Self::Skill(_) | Self::SkillNamed(_) | Self::SkillUri(_) => Code::SkillNotFound,
            Self::Version(_) => Code::VersionNotFound,
            Self::File { .. } | Self::Resource(_) => Code::FileNotFound,
            Self::Token(_) => Code::TokenNotFound,
            Self::Pack(_) => Code::PackNotFound,
            Self::TrustedPublisher(_) => Code::TrustedPublisherNotFound,
            Self::Endpoint => Code::EndpointNotFound,
        }
    }
}

impl From<StoreError> for Error {
    /// A request storage cannot carry out as asked (a backup on PostgreSQL, a copy into a store
    /// that is not empty) is the caller's to change, not a storage failure.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unsupported(message) => Self::InvalidRequest(message),
            e => Self::Storage(e),
        }
    }
}

impl From<SearchError> for Error {
    fn from(e: SearchError) -> Self {
        Self::Search(e)
    }
}

impl Error {
    /// The row of the error-code table this error is reported with.
    pub fn code(&self) -> Code {
        match self {
            Self::InvalidBundle(e) => e.code(),
            Self::InvalidArchive(e) => e.code(),
            Self::InvalidRef(e) => e.code(),
            Self::Access(e) => e.code(),
            Self::Trustpub(e) => e.code(),
            Self::Webhook(e) => e.code(),
            Self::NameMismatch { .. } => Code::NameMismatch,
            Self::InvalidVersion(_) => Code::InvalidVersion,
            Self::Signature(e) => e.code(),
            Self::VersionExists(..) => Code::VersionExists,
            Self::Blocked { .. } => Code::ContentBlocked,
            Self::AmbiguousSkill { .. } => Code::AmbiguousSkill,
            Self::InvalidUri { .. } => Code::InvalidUri,
            Self::NotFound(e) => e.code(),
            Self::NotADirectory(_) => Code::NotADirectory,
            Self::Revoked { .. } => Code::VersionRevoked,
            Self::InvalidCursor => Code::InvalidCursor,
            Self::UnsupportedMediaType(_) => Code::UnsupportedMediaType,
            Self::BodyTooLarge(_) => Code::BodyTooLarge,
            Self::InvalidRequest(_) => Code::InvalidRequest,
            Self::ParseError(_) => Code::ParseError,
            Self::InvalidMessage(_) => Code::InvalidMessage,
            Self::Timeout(_) => Code::RequestTimeout,
            Self::RateLimited(_) => Code::RateLimited,
            Self::TooManySessions => Code::TooManySessions,
            Self::TooManyEventStreams => Code::TooManyEventStreams,
            Self::BodyReadTimeout(_) => Code::BodyReadTimeout,
            Self::ServerBusy => Code::ServerBusy,
            Self::Integrity(_) => Code::IntegrityError,
            Self::SearchUnavailable => Code::SearchUnavailable,
            Self::Search(_) => Code::SearchError,
            Self::Storage(e) => e.code(),
            Self::Git(e) => e.code(),
            Self::Source { code, .. } | Self::Refused { code, .. } => *code,
            Self::Internal(_) => Code::InternalError,
        }
    }

    /// The message a client may see: the error's own text, or for an internal code the table's
    /// public message (the detail is logged here, once, where it is hidden).
    pub fn public_message(&self) -> String {
        match self.code().public_message() {
            Some(public) => {
                tracing::error!(code = %self.code(), error = %self, "request failed");
                public.to_owned()
            }
            None => self.to_string(),
        }
    }

    /// An invalid `skill://` URI (the input is kept, bounded, for the message).
    pub fn invalid_uri(uri: &str, error: UriError) -> Self {
        Self::InvalidUri {
            uri: uri.chars().take(200).collect(),
            error,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `acme/x, other/x`.
fn list_skills(skills: &[SkillRef]) -> String {
    skills
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// "the scan policy blocks N findings: rule (severity) at file:line, …" (the first five).
fn blocked_summary(findings: &[Finding]) -> String {
    let shown: Vec<String> = findings
        .iter()
        .take(5)
        .map(|f| {
            let at = if f.line > 0 {
                format!("{}:{}", f.file, f.line)
            } else {
                f.file.clone()
            };
            format!("{} ({}) at {at}", f.rule, f.severity)
        })
        .collect();
    let more = findings.len().saturating_sub(shown.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "the scan policy blocks {} finding{}: {}{more}",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// What to publish a changed skill as, for [`Error::VersionExists`].
fn next_free(next: Option<&SkillVersion>) -> String {
    next.map_or_else(String::new, |next| {
        format!("; versions never change: publish the changed skill as {next} (the next patch after the newest)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Code;

    /// The public error contract, rendered as a table: a change to any row shows in review.
    #[test]
    fn the_error_code_table_matches_its_snapshot() {
        let mut actual =
            String::from("| code | HTTP | MCP | message |\n| --- | --- | --- | --- |\n");
        for code in Code::ALL {
            actual.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                code.as_str(),
                code.http_status(),
                code.mcp_kind().as_str(),
                code.public_message().map_or_else(
                    || "the error's own".to_owned(),
                    |m| format!("internal: \"{m}\"")
                )
            ));
        }
        crate::testing::assert_snapshot("error-codes.md", &actual, "the error-code table changed");
    }

    #[test]
    fn internal_errors_hide_their_detail() {
        let e = Error::Integrity("the stored bytes of sha256:abc do not match".into());
        assert_eq!(e.code(), Code::IntegrityError);
        assert!(!e.public_message().contains("sha256"));
        let e = Error::NotFound(NotFound::Token("tok_1".into()));
        assert_eq!(
            (e.code(), e.public_message().as_str()),
            (Code::TokenNotFound, "no live token tok_1")
        );
    }
}
