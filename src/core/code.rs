//! The one table of error codes: every failure the registry reports has exactly one row here,
//! giving its stable snake_case name, its HTTP status, how MCP reports it, and whether its
//! message is internal.
//!
//! Every transport maps errors to the wire through this table and nothing else: REST answers
//! `{"error":{"code","message"}}` with the row's status; MCP answers the row's JSON-RPC kind with
//! `data.code`; the web page shows the status; the CLI prints the code. An internal code never
//! shows its detail to a client (digests, SQL, index internals): the row's public message is sent
//! instead, and the detail goes to the log. A test snapshots the whole table, so any change to this
//! public contract shows in review.
//!
//! Clients branch on codes, never on messages.

use std::fmt;

/// How an MCP answer reports an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpKind {
    /// `-32602` Invalid params: the request named something malformed or unknown.
    InvalidParams,
    /// Nothing is served at the URI: `-32002` (resource not found) from `resources/read` on
    /// 2025-era sessions, `-32602` everywhere else (SEP-2640 §Error Handling).
    NotFound,
    /// `-32600` Invalid request: the caller may not do this, or sent it the wrong way.
    InvalidRequest,
    /// `-32603` Internal error: the server failed; the request may be retried.
    Internal,
    /// `-32601` Method not found: the server does not answer this JSON-RPC method.
    MethodNotFound,
    /// `-32700` Parse error: the message is not JSON.
    ParseError,
}

impl McpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidParams => "invalid_params",
            Self::NotFound => "not_found",
            Self::InvalidRequest => "invalid_request",
            Self::Internal => "internal",
            Self::MethodNotFound => "method_not_found",
            Self::ParseError => "parse_error",
        }
    }
}

macro_rules! error_codes {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal, $status:literal, $mcp:ident $(, internal $public:literal)?;
    )*) => {
        /// A stable error code. See the module documentation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The stable snake_case name clients branch on.
            pub const fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The HTTP status a REST (or web) answer carries.
            pub const fn http_status(self) -> u16 {
                match self { $( Code::$variant => $status, )* }
            }

            /// How an MCP answer reports it.
            pub const fn mcp_kind(self) -> McpKind {
                match self { $( Code::$variant => McpKind::$mcp, )* }
            }

            /// For an internal code, the message clients get instead of the error's own text.
            pub const fn public_message(self) -> Option<&'static str> {
                match self { $( Code::$variant => error_codes!(@public $($public)?), )* }
            }
        }
    };
    (@public) => { None };
    (@public $public:literal) => { Some($public) };
}

error_codes! {
    // A skill's files (publish, import) and the archive they came in: 422.
    TooManyFiles = "too_many_files", 422, InvalidParams;
    SkillTooLarge = "skill_too_large", 422, InvalidParams;
    UnsafePath = "unsafe_path", 422, InvalidParams;
    NotARegularFile = "not_a_regular_file", 422, InvalidParams;
    DuplicatePath = "duplicate_path", 422, InvalidParams;
    PathConflict = "path_conflict", 422, InvalidParams;
    /// Two paths that are one on a case-insensitive, normalizing file system (macOS, Windows).
    PathCollision = "path_collision", 422, InvalidParams;
    MissingSkillMd = "missing_skill_md", 422, InvalidParams;
    InvalidArchive = "invalid_archive", 422, InvalidParams;
    ArchiveTooLarge = "archive_too_large", 422, InvalidParams;
    // SKILL.md and its frontmatter: 422.
    SkillMdNotUtf8 = "skill_md_not_utf8", 422, InvalidParams;
    FrontmatterMissing = "frontmatter_missing", 422, InvalidParams;
    FrontmatterTooLarge = "frontmatter_too_large", 422, InvalidParams;
    FrontmatterInvalidYaml = "frontmatter_invalid_yaml", 422, InvalidParams;
    FrontmatterDuplicateKey = "frontmatter_duplicate_key", 422, InvalidParams;
    /// A `__proto__` key, anywhere: JavaScript clients would set an object's prototype from it.
    FrontmatterUnsafeKey = "frontmatter_unsafe_key", 422, InvalidParams;
    FrontmatterMissingField = "frontmatter_missing_field", 422, InvalidParams;
    FrontmatterInvalidField = "frontmatter_invalid_field", 422, InvalidParams;
    InvalidSkillName = "invalid_skill_name", 422, InvalidParams;
    InvalidDescription = "invalid_description", 422, InvalidParams;
    InvalidCompatibility = "invalid_compatibility", 422, InvalidParams;
    ReservedMetadataKey = "reserved_metadata_key", 422, InvalidParams;
    /// `metadata.dev.skillreg/requires` or `requires-mcp` does not parse (`core::requires`).
    RequiresInvalid = "requires_invalid", 422, InvalidParams;
    // Where and as what a version is published.
    InvalidNamespace = "invalid_namespace", 422, InvalidParams;
    NameMismatch = "name_mismatch", 422, InvalidParams;
    InvalidVersion = "invalid_version", 422, InvalidParams;
    VersionExists = "version_exists", 409, InvalidParams;
    /// The content scan's policy blocks the version; the error lists the findings that do.
    ContentBlocked = "content_blocked", 422, InvalidParams;
    // A requirement the graph cannot meet at publish (`core::requires`); the message names the
    // edge. Nothing is stored.
    /// A required skill that does not exist.
    DependencyNotFound = "dependency_not_found", 422, InvalidParams;
    /// A required skill some readers of the requiring skill may not see (a public skill
    /// requiring a private one).
    DependencyNotVisible = "dependency_not_visible", 422, InvalidParams;
    /// No version that is neither yanked, revoked nor pending satisfies the range.
    DependencyUnsatisfiable = "dependency_unsatisfiable", 422, InvalidParams;
    /// The requirement leads back to the requiring skill.
    DependencyCycle = "dependency_cycle", 422, InvalidParams;
    // Packs (`core::pack`): nothing is stored when one is refused.
    /// A pack's members or description do not parse.
    PackInvalid = "pack_invalid", 422, InvalidParams;
    /// A member that does not exist, is revoked or pending, or that some reader of the pack may
    /// not see.
    PackMemberUnavailable = "pack_member_unavailable", 422, InvalidParams;
    /// The namespace has a skill of the pack's name.
    PackNameTaken = "pack_name_taken", 409, InvalidParams;
    // A signature sent with a version (`publish --signature`): nothing is stored when one fails.
    /// Not a Model Signing bundle this registry reads (or a kind it does not accept yet).
    SignatureMalformed = "signature_malformed", 422, InvalidParams;
    /// The bundle's statement is over other files, other bytes, or another version.
    SignatureMismatch = "signature_mismatch", 422, InvalidParams;
    /// The signature does not verify with the key it names.
    SignatureInvalid = "signature_invalid", 422, InvalidParams;
    /// No key registered for the version's namespace verifies it.
    SignatureUntrusted = "signature_untrusted", 422, InvalidParams;
    /// A certificate-signed bundle whose chain does not lead to a CA registered for the
    /// namespace, or whose leaf may not sign (key usage, extended key usage).
    SignatureCertificateUntrusted = "signature_certificate_untrusted", 422, InvalidParams;
    /// A certificate of the bundle's chain is expired or not yet valid.
    SignatureCertificateExpired = "signature_certificate_expired", 422, InvalidParams;
    /// The signing certificate's names (email, URI) do not satisfy its CA's identity policy,
    /// or a keyless certificate's issuer and identity none of the namespace's keyless policies.
    SignatureIdentityMismatch = "signature_identity_mismatch", 422, InvalidParams;
    /// A keyless bundle's transparency log entry (its signed entry timestamp, inclusion proof
    /// or checkpoint) or signed timestamp does not verify against the trusted root, or does not
    /// describe the bundle.
    SignatureTlogInvalid = "signature_tlog_invalid", 422, InvalidParams;
    /// The namespace requires an author's signature and the version has none.
    SignatureRequired = "signature_required", 422, InvalidParams;
    // Webhooks (`/v1/namespaces/{ns}/webhooks`) and the events feed.
    /// Not an http(s) URL the registry calls (malformed, credentials in it, too long).
    InvalidWebhookUrl = "invalid_webhook_url", 422, InvalidParams;
    /// The webhook's host is (or resolves to) an address the egress policy refuses
    /// (loopback, private, link-local; `webhook_allow_hosts` allows some).
    WebhookUrlRefused = "webhook_url_refused", 422, InvalidParams;
    /// An event filter naming an event type that does not exist.
    InvalidEventType = "invalid_event_type", 422, InvalidParams;
    // Malformed requests: 400.
    InvalidUri = "invalid_uri", 400, InvalidParams;
    InvalidCursor = "invalid_cursor", 400, InvalidParams;
    InvalidRequest = "invalid_request", 400, InvalidParams;
    // A skill named without its namespace (the ClawHub API's bare slug), when more than one
    // namespace has a skill of that name: 409, with the candidates.
    AmbiguousSkill = "ambiguous_skill", 409, InvalidParams;
    // Nothing there: 404, one code per kind of thing.
    SkillNotFound = "skill_not_found", 404, NotFound;
    VersionNotFound = "version_not_found", 404, NotFound;
    FileNotFound = "file_not_found", 404, NotFound;
    NotADirectory = "not_a_directory", 404, NotFound;
    /// Withdrawn for security reasons: served to nobody; the message gives the reason.
    VersionRevoked = "version_revoked", 410, NotFound;
    TokenNotFound = "token_not_found", 404, NotFound;
    PackNotFound = "pack_not_found", 404, NotFound;
    TrustedPublisherNotFound = "trusted_publisher_not_found", 404, NotFound;
    WebhookNotFound = "webhook_not_found", 404, NotFound;
    EndpointNotFound = "endpoint_not_found", 404, NotFound;
    /// An MCP request naming a method this server does not answer.
    MethodNotFound = "method_not_found", 404, MethodNotFound;
    // Who is asking, and how often.
    Unauthorized = "unauthorized", 401, InvalidRequest;
    Forbidden = "forbidden", 403, InvalidRequest;
    NamespaceNotAllowed = "namespace_not_allowed", 403, InvalidRequest;
    /// An ordinary token publishing into a namespace that accepts versions only from its
    /// trusted publishers.
    TrustedPublishingOnly = "trusted_publishing_only", 403, InvalidRequest;
    // Trusted publishing: a CI's OIDC token refused by the exchange.
    /// The token's issuer is no namespace's trusted publisher.
    OidcIssuerUnknown = "oidc_issuer_unknown", 401, InvalidRequest;
    /// Malformed, signed by no key of its issuer, for another audience, expired or not yet valid.
    OidcTokenInvalid = "oidc_token_invalid", 401, InvalidRequest;
    /// A valid token whose claims match none of its issuer's trusted publishers.
    OidcClaimsMismatch = "oidc_claims_mismatch", 403, InvalidRequest;
    /// A token exchanged once already.
    OidcTokenReplayed = "oidc_token_replayed", 401, InvalidRequest;
    /// The issuer's discovery document or keys could not be fetched.
    OidcIssuerUnavailable = "oidc_issuer_unavailable", 502, InvalidRequest;
    // How it was sent.
    /// An MCP message that is not JSON (`-32700`).
    ParseError = "parse_error", 400, ParseError;
    /// JSON that is no JSON-RPC 2.0 message: a batch, no `"jsonrpc": "2.0"`, a `method` that is
    /// not a string, an id that is neither a string nor a number (`-32600`).
    InvalidMessage = "invalid_message", 400, InvalidRequest;
    UnsupportedMediaType = "unsupported_media_type", 415, InvalidRequest;
    BodyTooLarge = "body_too_large", 413, InvalidRequest;
    RequestTimeout = "request_timeout", 408, Internal;
    RateLimited = "rate_limited", 429, InvalidRequest;
    TooManySessions = "too_many_sessions", 503, InvalidRequest;
    /// As many `events/stream` requests are open as `max_event_streams` allows.
    TooManyEventStreams = "too_many_event_streams", 503, InvalidRequest;
    /// A request body did not arrive within `body_read_timeout_secs` of its headers.
    BodyReadTimeout = "body_read_timeout", 408, InvalidRequest;
    /// The server holds as many request bodies as `max_body_bytes_in_flight` allows; retry
    /// after `Retry-After`.
    ServerBusy = "server_busy", 503, InvalidRequest;
    // The registry failed. Internal ones never show their detail.
    IntegrityError = "integrity_error", 500, Internal,
        internal "stored data failed its integrity check; it is not served";
    SearchUnavailable = "search_unavailable", 503, Internal;
    /// A 2025-era session's stream, resumed (`Last-Event-ID`), would send a response again
    /// whose bytes went around rmcp's serializer the first time (a file's content, a
    /// `skills/list` page) and are not kept for a resend: the request is to be sent again.
    ResponseNotResent = "response_not_resent", 503, Internal;
    SearchError = "search_error", 500, Internal, internal "the search index failed";
    StorageFull = "storage_full", 507, Internal,
        internal "the registry's storage is full; nothing was stored";
    StorageReadOnly = "storage_read_only", 503, Internal,
        internal "the registry's storage is read-only; nothing was stored";
    StorageBusy = "storage_busy", 503, Internal, internal "the registry's storage is busy; try again";
    /// The database cannot be reached (PostgreSQL restarting or failing over); the replica
    /// reconnects by itself.
    StorageUnavailable = "storage_unavailable", 503, Internal,
        internal "the registry's storage is unavailable; try again";
    StorageError = "storage_error", 500, Internal, internal "internal storage error";
    InternalError = "internal_error", 500, Internal, internal "internal error";
    /// Reading local files (import, publish from a directory); never sent by the server.
    IoError = "io_error", 500, Internal;
    /// A Git repository or upstream server named in a way the registry does not read (`import
    /// git`, `sync`, `mirror`): a command-running transport, credentials in the URL, a bad ref;
    /// never sent by the server.
    InvalidSource = "invalid_source", 400, InvalidParams;
    /// A Git repository or upstream server could not be read (unreachable, unknown ref, git not
    /// installed); never sent by the server.
    SourceUnavailable = "source_unavailable", 502, Internal;
    /// A Git checkout larger than `--max-checkout-mib`; never sent by the server.
    SourceTooLarge = "source_too_large", 413, InvalidParams;
}

impl Code {
    /// Whether clients get [`Code::public_message`] instead of the error's own text.
    pub const fn is_internal(self) -> bool {
        self.public_message().is_some()
    }

    /// The code with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{name}"
            );
            assert_eq!(Code::from_name(name), Some(code));
            assert!((400..600).contains(&code.http_status()), "{name}");
            // A server-side failure is an internal MCP error, and only those hide their text.
            if code.is_internal() {
                assert_eq!(code.mcp_kind(), McpKind::Internal, "{name}");
                assert!(code.http_status() >= 500, "{name}");
            }
        }
    }
}
