//! What can go wrong on the consumer side, each with a stable code the CLI prints
//! (`error[digest_mismatch]: …`) and the exit status it maps to.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// A malformed argument: a skill path, a version range, an agent, a source.
    Usage,
    /// The source did not answer as an MCP server with the skills extension.
    SourceUnreachable,
    /// The source serves no skill at that path.
    SkillNotServed,
    /// The source serves the skill, but no version it offers satisfies the request.
    NoMatchingVersion,
    /// The locked version was revoked by its publisher: it is refused.
    VersionRevoked,
    /// The source's content scan flagged the version: installed only with `--force`.
    Flagged,
    /// An entry the source sent breaks SEP-2640 (dynamic resources, a file outside the skill,
    /// a file listed twice, a digest that is not `sha256:<hex>`).
    BadEntry,
    /// A file read from the source does not have the digest or size its entry announced.
    DigestMismatch,
    /// The lockfile cannot be read.
    LockInvalid,
    /// `install --frozen` would install something other than the lockfile.
    LockMismatch,
    /// The skill is not in the lockfile.
    NotLocked,
    /// Two skills would be installed into the same folder.
    InstallConflict,
    /// A `stdio:` source that was not typed on this command line (a lock entry's) would start a
    /// command; that needs `--allow-stdio-sources`.
    StdioNotAllowed,
    /// An agent folder leaves the project (or home), or passes through a symbolic link.
    UnsafeFolder,
    /// A source sent more than a listing or a skill may hold (pages, entries, files, bytes).
    LimitExceeded,
    /// `--require-signed`: the version carries no signature the policy accepts (none, none by
    /// a trusted key, or not the `--identity` asked for). Nothing was written.
    Unsigned,
    /// A signature that should cover the version does not: its statement is over other files
    /// or it does not verify with the key it names. Nothing was written.
    SignatureInvalid,
    /// The skills asked for require versions of one skill that no version satisfies together;
    /// the message names both requirers. Nothing was written.
    DependencyConflict,
    /// `remove` of a skill another installed skill requires; remove that one too (or first).
    StillRequired,
    /// Reading or writing the local files failed.
    Io,
}

impl Code {
    /// Every code, in declaration order (snapshotted with the server's table).
    pub const ALL: &'static [Code] = &[
        Code::Usage,
        Code::SourceUnreachable,
        Code::SkillNotServed,
        Code::NoMatchingVersion,
        Code::VersionRevoked,
        Code::Flagged,
        Code::BadEntry,
        Code::DigestMismatch,
        Code::LockInvalid,
        Code::LockMismatch,
        Code::NotLocked,
        Code::InstallConflict,
        Code::StdioNotAllowed,
        Code::UnsafeFolder,
        Code::LimitExceeded,
        Code::Unsigned,
        Code::SignatureInvalid,
        Code::DependencyConflict,
        Code::StillRequired,
        Code::Io,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Usage => "usage",
            Code::SourceUnreachable => "source_unreachable",
            Code::SkillNotServed => "skill_not_served",
            Code::NoMatchingVersion => "no_matching_version",
            Code::VersionRevoked => "version_revoked",
            Code::Flagged => "flagged",
            Code::BadEntry => "bad_entry",
            Code::DigestMismatch => "digest_mismatch",
            Code::LockInvalid => "lock_invalid",
            Code::LockMismatch => "lock_mismatch",
            Code::NotLocked => "not_locked",
            Code::InstallConflict => "install_conflict",
            Code::StdioNotAllowed => "stdio_not_allowed",
            Code::UnsafeFolder => "unsafe_folder",
            Code::LimitExceeded => "limit_exceeded",
            Code::Unsigned => "unsigned",
            Code::SignatureInvalid => "signature_invalid",
            Code::DependencyConflict => "dependency_conflict",
            Code::StillRequired => "still_required",
            Code::Io => "io_error",
        }
    }

    /// 2 for usage, connection and local I/O failures and a stdio source not allowed; 1 for a
    /// refusal.
    pub fn exit_status(self) -> u8 {
        match self {
            Code::Usage | Code::SourceUnreachable | Code::StdioNotAllowed | Code::Io => 2,
            _ => 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: Code,
    pub message: String,
}

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn io(context: impl fmt::Display, err: std::io::Error) -> Self {
        Self::new(Code::Io, format!("{context}: {err}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The install client's error contract (code and exit status), rendered as a table: a change
    /// to any row shows in review.
    #[test]
    fn the_consumer_error_code_table_matches_its_snapshot() {
        // A new variant does not compile here until it is listed in `Code::ALL`.
        let listed = |code: Code| match code {
            Code::Usage
            | Code::SourceUnreachable
            | Code::SkillNotServed
            | Code::NoMatchingVersion
            | Code::VersionRevoked
            | Code::Flagged
            | Code::BadEntry
            | Code::DigestMismatch
            | Code::LockInvalid
            | Code::LockMismatch
            | Code::NotLocked
            | Code::InstallConflict
            | Code::StdioNotAllowed
            | Code::UnsafeFolder
            | Code::LimitExceeded
            | Code::Unsigned
            | Code::SignatureInvalid
            | Code::DependencyConflict
            | Code::StillRequired
            | Code::Io => Code::ALL.contains(&code),
        };
        let mut actual = String::from("| code | exit status |\n| --- | --- |\n");
        for &code in Code::ALL {
            assert!(listed(code));
            actual.push_str(&format!(
                "| `{}` | {} |\n",
                code.as_str(),
                code.exit_status()
            ));
        }
        crate::testing::assert_snapshot(
            "consumer-error-codes.md",
            &actual,
            "the consumer's error-code table changed",
        );
    }
}
