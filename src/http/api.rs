//! The REST API's wire shapes: every request and response body of `/v1`, with its OpenAPI
//! schema. The server serialises them and the CLI deserialises the same types, so the two cannot
//! drift apart.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use std::collections::BTreeMap;

use crate::core::provenance::Provenance;
use crate::core::records::{AuditRecord, FileRecord, TokenRecord};
use crate::core::scan::{Finding, Summary};
use crate::core::{Action, SkillUri, Timestamp, Warning};
use crate::registry::{self, FindingsItem, Published, Revocation, SkillDetail, VersionDetail};

/// The error body.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case code: branch on this, never on the message.
    pub code: String,
    pub message: String,
    /// With `content_blocked`: the findings the scan policy blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<FindingView>>,
}

/// One content-scan finding.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FindingView {
    /// The rule's id (`skillreg scan --rules`).
    pub rule: String,
    /// info, low, medium, high or critical.
    pub severity: String,
    /// The file, relative to the skill.
    pub file: String,
    /// 1-based; 0 when the finding is about the whole file.
    pub line: u32,
    /// A short excerpt of the line, invisible and control characters written as `\u{…}`.
    pub excerpt: String,
}

impl From<Finding> for FindingView {
    fn from(f: Finding) -> Self {
        Self {
            rule: f.rule,
            severity: f.severity.to_string(),
            file: f.file,
            line: f.line,
            excerpt: f.excerpt,
        }
    }
}

/// Findings per severity, only those that occur.
fn severity_counts(summary: &Summary) -> BTreeMap<String, u32> {
    summary
        .counts
        .iter()
        .map(|(severity, n)| (severity.to_string(), *n))
        .collect()
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CatalogPage {
    pub items: Vec<CatalogEntry>,
    /// Pass back as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CatalogEntry {
    pub namespace: String,
    pub name: String,
    /// `skill://` URI of the current version's SKILL.md.
    pub uri: String,
    /// `null` when every version is yanked.
    pub current_version: Option<String>,
    pub description: Option<String>,
    pub deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_message: Option<String>,
}

impl From<registry::SkillView> for CatalogEntry {
    fn from(i: registry::SkillView) -> Self {
        Self {
            uri: i.skill.skill_md_uri().to_string(),
            namespace: i.skill.namespace.to_string(),
            name: i.skill.name.to_string(),
            current_version: i.current_version.map(|v| v.to_string()),
            description: i.description,
            deprecated: i.deprecation.is_some(),
            deprecation_message: i.deprecation,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SkillView {
    pub namespace: String,
    pub name: String,
    pub uri: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    pub current_version: Option<String>,
    pub deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub deprecated_at: Option<Timestamp>,
    /// Newest first.
    pub versions: Vec<VersionView>,
    /// The current versions of other skills that require this one (those the caller sees),
    /// with the range each declares and what it resolves to now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_by: Vec<DependentView>,
}

/// A current version of another skill that requires this one.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DependentView {
    /// `namespace/name`.
    pub skill: String,
    pub version: String,
    /// The range it declares.
    pub range: String,
    /// The version that range resolves to now; absent when none satisfies it any more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
}

impl From<registry::Dependent> for DependentView {
    fn from(d: registry::Dependent) -> Self {
        Self {
            skill: d.skill.to_string(),
            version: d.version.to_string(),
            range: d.range.to_string(),
            resolved: d.resolved.map(|v| v.to_string()),
        }
    }
}

/// What a version requires (declared in its SKILL.md's `metadata`), resolved now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RequiresView {
    pub skills: Vec<RequiredSkillView>,
    /// MCP servers it expects the agent to have: reported to installers, never installed.
    pub mcp_servers: Vec<McpServerView>,
}

/// One required skill: its range as declared and the version it resolves to now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RequiredSkillView {
    /// `namespace/name`.
    pub skill: String,
    pub range: String,
    /// Absent when no installable version satisfies the range any more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
}

/// An MCP server a skill expects.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct McpServerView {
    pub name: String,
    /// Where it is registered, when the author said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

impl From<registry::Resolved> for RequiresView {
    fn from(r: registry::Resolved) -> Self {
        Self {
            skills: r
                .skills
                .into_iter()
                .map(|s| RequiredSkillView {
                    skill: s.skill.to_string(),
                    range: s.range.to_string(),
                    resolved: s.resolved.map(|v| v.to_string()),
                })
                .collect(),
            mcp_servers: r
                .mcp_servers
                .into_iter()
                .map(|m| McpServerView {
                    name: m.name,
                    registry: m.registry,
                })
                .collect(),
        }
    }
}

impl From<SkillDetail> for SkillView {
    fn from(d: SkillDetail) -> Self {
        let skill = d.skill;
        Self {
            uri: skill.skill.skill_md_uri().to_string(),
            namespace: skill.skill.namespace.to_string(),
            name: skill.skill.name.to_string(),
            created_at: skill.created_at,
            current_version: skill.current_version.map(|v| v.to_string()),
            deprecated: skill.deprecation.is_some(),
            deprecation_message: skill.deprecation,
            deprecated_at: d.deprecated_at,
            versions: d.versions.into_iter().map(VersionView::from).collect(),
            required_by: d.required_by.into_iter().map(DependentView::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct VersionView {
    pub version: String,
    /// Pinned `skill://` URI of this version's SKILL.md.
    pub uri: String,
    pub content_digest: String,
    pub file_count: u64,
    pub total_size: u64,
    #[schema(value_type = String, format = DateTime)]
    pub published_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_by: Option<String>,
    pub yanked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub yanked_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yank_reason: Option<String>,
    /// Revoked versions are served to nobody.
    pub revoked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoke_reason: Option<String>,
    /// The content scan's verdict: clean, flagged, blocked or unscanned.
    pub verdict: String,
    /// Findings per severity (only severities that occur).
    pub finding_counts: BTreeMap<String, u32>,
    /// Waiting for review (`POST …/approve`); never served over MCP until approved.
    pub pending: bool,
}

impl From<registry::VersionView> for VersionView {
    fn from(v: registry::VersionView) -> Self {
        Self {
            uri: v.version.skill_md_uri().to_string(),
            version: v.version.version.to_string(),
            content_digest: v.content_digest.to_string(),
            file_count: v.file_count,
            total_size: v.total_size,
            published_at: v.published_at,
            published_by: v.published_by,
            yanked: v.yanked_at.is_some(),
            yanked_at: v.yanked_at,
            yank_reason: v.yank_reason,
            revoked: v.revoked_at.is_some(),
            revoked_at: v.revoked_at,
            revoke_reason: v.revoke_reason,
            verdict: v.scan.verdict.to_string(),
            finding_counts: severity_counts(&v.scan),
            pending: v.pending,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ManifestView {
    #[serde(flatten)]
    pub version: VersionView,
    /// The SKILL.md frontmatter, verbatim.
    #[schema(value_type = Object)]
    pub frontmatter: Map<String, Value>,
    pub warnings: Vec<WarningView>,
    /// What the content scan found.
    pub findings: Vec<FindingView>,
    pub files: Vec<FileView>,
    /// Where the registry read this version from (`import git`, `mirror`, `sync`); absent for
    /// versions uploaded or imported from a directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceView>,
    /// Who signed this version (the same list MCP serves in `_meta` as
    /// `dev.skillreg/signatures`); the bundles are at `…/{version}/signatures`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<SignedView>,
    /// Who published this version from CI (trusted publishing): provider, issuer, repository,
    /// workflow, ref, commit and run, as the CI's token said (the object MCP serves in `_meta`
    /// as `dev.skillreg/publisher`); absent for versions published otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub publisher: Option<Map<String, Value>>,
    /// What this version requires, resolved now (the object MCP serves in `_meta` as
    /// `dev.skillreg/requires`); absent when it requires nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<RequiresView>,
}

/// One signature of a version: who made it, with which key, and whether the registry verified
/// it against a key it trusts for the namespace.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedView {
    /// `registry` (made at publish) or `author` (uploaded with the version).
    pub by: String,
    /// The sha256 of the key's PEM text, hex: the bundle's `publicKey.hint` (with a
    /// certificate, keyless or not, its key's).
    pub key_id: String,
    /// Whose registered key it is (an author's); with a certificate, the leaf's email or URI
    /// name its CA's policy accepted; keyless, the Fulcio certificate's email or URI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    pub verified: bool,
    /// With a certificate: its subject and the registered CA it chains to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<SignedCertificateView>,
    /// Keyless (a Sigstore Fulcio certificate and Rekor entry): the OIDC issuer and the log
    /// entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyless: Option<SignedKeylessView>,
}

/// What a keyless signature was verified with.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedKeylessView {
    /// The OIDC issuer the Fulcio certificate names.
    pub issuer: String,
    /// The Rekor entry's log index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_index: Option<u64>,
    /// When the log (or a timestamp authority) says it was signed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<String>,
}

/// The certificate a version was signed with.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SignedCertificateView {
    /// The leaf's subject (RFC 4514).
    pub subject: String,
    /// The sha256 of the CA certificate (DER) it chains to, hex: its id among the namespace's
    /// keys.
    pub ca: String,
}

impl From<crate::core::signature::Signed> for SignedView {
    fn from(s: crate::core::signature::Signed) -> Self {
        Self {
            by: s.by.as_str().to_owned(),
            key_id: s.key_id,
            identity: s.identity,
            verified: s.verified,
            certificate: s.certificate.map(|c| SignedCertificateView {
                subject: c.subject,
                ca: c.ca,
            }),
            keyless: s.keyless.map(|k| SignedKeylessView {
                issuer: k.issuer,
                log_index: k.log_index,
                signed_at: k.signed_at,
            }),
        }
    }
}

/// A version's signatures with their bundles (`GET …/{version}/signatures`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SignaturesView {
    pub signatures: Vec<SignatureView>,
}

/// One signature and its Sigstore bundle, as stored.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignatureView {
    pub by: String,
    pub key_id: String,
    /// The Model Signing bundle (Sigstore bundle v0.3 JSON).
    #[schema(value_type = Object)]
    pub bundle: Box<serde_json::value::RawValue>,
}

/// A namespace's author keys and whether it requires their signature (admin).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceKeysView {
    pub signature_required: bool,
    pub keys: Vec<NamespaceKeyView>,
}

/// An author key, a CA for certificate-signed bundles (`kind` `ca`), or a keyless identity
/// (`kind` `keyless`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceKeyView {
    /// A key's hint (sha256 of its PEM text), a CA certificate's sha256 (DER), or a keyless
    /// identity's id (sha256 of `keyless`, its issuer and identity, one a line), hex.
    pub key_id: String,
    /// `key`, `ca` or `keyless`.
    pub kind: String,
    /// A key's owner; for a CA, the policy its leaf certificates' email or URI names must meet
    /// (`*` any, `prefix*`, or a value); keyless, that policy for the Fulcio certificate's name.
    pub identity: String,
    /// PEM `SubjectPublicKeyInfo`, or the CA certificate (PEM); empty for a keyless identity.
    pub public_key: String,
    /// Keyless: the OIDC issuer its Fulcio certificates must name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
}

/// Register an author key of a namespace, a CA its authors' certificates chain to, or a keyless
/// identity (admin): exactly one of `publicKey`, `certificate` and `issuer`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceKeyRequest {
    /// With a key: whose key it is, served with the versions it signs (e.g.
    /// `release@acme.example`). With a certificate: the policy for its leaves' subject
    /// alternative names (email or URI): `*` any, `prefix*` one starting with the prefix, or a
    /// value one must equal. With an issuer: that policy for the Fulcio certificate's email or
    /// URI name (e.g. `https://github.com/acme/skills/.github/workflows/release.yml@*`).
    pub identity: String,
    /// PEM `SubjectPublicKeyInfo`, ECDSA P-256 or P-384.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// A PEM CA certificate: bundles made by `model_signing sign certificate` whose chain leads
    /// to it verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// A keyless identity's OIDC issuer, exactly as Fulcio certificates name it (e.g.
    /// `https://token.actions.githubusercontent.com`): keyless Sigstore bundles (`model_signing
    /// sign sigstore`) whose certificate names it and an `identity` the policy accepts verify,
    /// offline, against the registry's Sigstore trusted root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

/// The public keys the registry signs versions with (`/.well-known/skillreg/signing-keys.json`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeysView {
    /// The key new versions are signed with, when signing is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// Every key the registry has signed with, oldest first: older signatures stay verifiable.
    pub keys: Vec<SigningKeyView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeyView {
    pub key_id: String,
    /// PEM `SubjectPublicKeyInfo` (`model_signing verify key --public_key`).
    pub public_key: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
}

/// Where a version was read from: a Git repository at one commit, or an upstream SEP-2640
/// server (the same object MCP serves in `_meta` as `dev.skillreg/source`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SourceView {
    Git {
        repository: String,
        #[serde(rename = "ref")]
        reference: String,
        /// The full commit id.
        commit: String,
        /// The skill's directory in the repository (`""` at its root).
        path: String,
    },
    Mcp {
        /// The upstream's URL, or `stdio:<command>`.
        server: String,
        /// The skill's `SKILL.md` URI upstream.
        uri: String,
    },
}

impl From<Provenance> for SourceView {
    fn from(p: Provenance) -> Self {
        match p {
            Provenance::Git {
                repository,
                reference,
                commit,
                path,
            } => Self::Git {
                repository,
                reference,
                commit,
                path,
            },
            Provenance::Mcp { server, uri } => Self::Mcp { server, uri },
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WarningView {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FileView {
    pub path: String,
    pub uri: String,
    /// `sha256:<64 lowercase hex>` of the exact bytes.
    pub digest: String,
    pub size: u64,
    /// Unix mode: 420 (0644) or 493 (0755).
    pub mode: u32,
}

impl FileView {
    fn new(root: &SkillUri, f: FileRecord) -> Self {
        Self {
            uri: root.join(&f.path).to_string(),
            path: f.path,
            digest: f.digest.to_string(),
            size: f.size,
            mode: f.mode,
        }
    }
}

impl From<VersionDetail> for ManifestView {
    fn from(d: VersionDetail) -> Self {
        let root = d.version.version.root_uri();
        Self {
            version: d.version.into(),
            frontmatter: d.frontmatter,
            warnings: d.warnings.into_iter().map(WarningView::from).collect(),
            findings: d.findings.into_iter().map(FindingView::from).collect(),
            files: d
                .files
                .into_iter()
                .map(|f| FileView::new(&root, f))
                .collect(),
            source: d.provenance.map(SourceView::from),
            signatures: d.signatures.into_iter().map(SignedView::from).collect(),
            publisher: d.publisher,
            requires: d.requires.map(RequiresView::from),
        }
    }
}

impl From<Warning> for WarningView {
    fn from(w: Warning) -> Self {
        Self {
            code: w.code,
            message: w.message,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PublishedView {
    pub namespace: String,
    pub name: String,
    pub version: String,
    /// `false` when identical content was already published under this version (a no-op).
    pub created: bool,
    /// Current-version URI of the SKILL.md.
    pub uri: String,
    /// Pinned URI of this version's SKILL.md.
    pub pinned_uri: String,
    pub files: Vec<PublishedFile>,
    pub warnings: Vec<WarningView>,
    /// The content scan's verdict (`flagged` versions are stored and served with it).
    pub verdict: String,
    pub findings: Vec<FindingView>,
    /// Stored pending review: served once a token with the `approve` action approves it.
    pub pending: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PublishedFile {
    pub uri: String,
    pub digest: String,
    pub size: u64,
}

impl From<Published> for PublishedView {
    fn from(p: Published) -> Self {
        let root = p.version.root_uri();
        Self {
            uri: p.uri().to_string(),
            pinned_uri: p.pinned_uri().to_string(),
            namespace: p.version.namespace().to_string(),
            name: p.version.name().to_string(),
            version: p.version.version.to_string(),
            created: p.created,
            files: p
                .files
                .into_iter()
                .map(|f| PublishedFile {
                    uri: root.join(&f.path).to_string(),
                    digest: f.digest.to_string(),
                    size: f.size,
                })
                .collect(),
            warnings: p.warnings.into_iter().map(WarningView::from).collect(),
            verdict: p.scan.verdict.to_string(),
            findings: p.scan.findings.into_iter().map(FindingView::from).collect(),
            pending: p.pending,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RevokeRequest {
    /// Why the version is revoked: shown to every reader refused, and in the feed.
    pub reason: String,
}

#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FindingsQuery {
    /// Only versions with this verdict: clean, flagged, blocked or unscanned.
    pub verdict: Option<String>,
    pub cursor: Option<String>,
    /// Page size, 1–1000 (default 100).
    pub limit: Option<u32>,
}

/// Versions with their scans, oldest publish first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FindingsPage {
    pub items: Vec<FindingsEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FindingsEntry {
    pub namespace: String,
    pub name: String,
    pub version: String,
    /// Pinned `skill://` URI of the version's SKILL.md.
    pub uri: String,
    pub content_digest: String,
    #[schema(value_type = String, format = DateTime)]
    pub published_at: Timestamp,
    pub verdict: String,
    pub finding_counts: BTreeMap<String, u32>,
    pub findings: Vec<FindingView>,
}

impl From<FindingsItem> for FindingsEntry {
    fn from(i: FindingsItem) -> Self {
        Self {
            namespace: i.version.namespace().to_string(),
            name: i.version.name().to_string(),
            version: i.version.version.to_string(),
            uri: i.version.skill_md_uri().to_string(),
            content_digest: i.content_digest.to_string(),
            published_at: i.published_at,
            verdict: i.scan.verdict.to_string(),
            finding_counts: severity_counts(&i.scan.summary()),
            findings: i.scan.findings.into_iter().map(FindingView::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RevocationsQuery {
    /// Only versions revoked after this time (as the feed writes them, e.g.
    /// `2026-12-01T10:00:00.000Z`).
    pub since: Option<String>,
    pub cursor: Option<String>,
    /// Page size, 1–1000 (default 100).
    pub limit: Option<u32>,
}

/// Revoked versions, oldest revocation first: quarantine any copy whose digest matches.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RevocationsPage {
    pub items: Vec<RevocationEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RevocationEntry {
    pub namespace: String,
    pub name: String,
    pub version: String,
    /// Pinned `skill://` URI of the version's SKILL.md.
    pub uri: String,
    /// Identifies the revoked content wherever a copy of it is.
    pub content_digest: String,
    #[schema(value_type = String, format = DateTime)]
    pub revoked_at: Timestamp,
    pub reason: String,
}

impl From<Revocation> for RevocationEntry {
    fn from(r: Revocation) -> Self {
        Self {
            namespace: r.version.namespace().to_string(),
            name: r.version.name().to_string(),
            version: r.version.version.to_string(),
            uri: r.version.skill_md_uri().to_string(),
            content_digest: r.content_digest.to_string(),
            revoked_at: r.revoked_at,
            reason: r.reason,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct YankRequest {
    /// Why the version is yanked.
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DeprecateRequest {
    /// What users should do instead.
    pub message: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StatusView {
    pub ok: bool,
}

/// A version yanked, revoked, or restored: `ok`, and the current versions of other skills whose
/// requirement resolved to it, with what each resolves to now (allowed, but worth knowing).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WithdrawnView {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependents: Vec<DependentView>,
}

impl From<Vec<registry::Dependent>> for WithdrawnView {
    fn from(dependents: Vec<registry::Dependent>) -> Self {
        Self {
            ok: true,
            dependents: dependents.into_iter().map(DependentView::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenRequest {
    pub description: String,
    /// Namespaces the token may act on; `"*"` for all.
    pub namespaces: Vec<String>,
    #[schema(value_type = Vec<ActionSchema>)]
    pub actions: Vec<Action>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenView {
    pub id: String,
    pub description: String,
    pub namespaces: Vec<String>,
    #[schema(value_type = Vec<ActionSchema>)]
    pub actions: Vec<Action>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<Timestamp>,
    /// When a token exchanged by trusted publishing stops being accepted (RFC 3339); ordinary
    /// tokens do not expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<Timestamp>,
    /// The trusted publisher a token was exchanged for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// The secret: returned once, at creation, and never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl From<TokenRecord> for TokenView {
    fn from(t: TokenRecord) -> Self {
        Self {
            id: t.id,
            description: t.description,
            namespaces: t.scope.names(),
            actions: t.actions,
            created_at: t.created_at,
            revoked_at: t.revoked_at,
            expires_at: t.expires_at.map(Timestamp::from_epoch_secs),
            publisher: t.publisher,
            token: None,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenList {
    pub tokens: Vec<TokenView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// Pass back as `after` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_after: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    pub id: i64,
    #[schema(value_type = String, format = DateTime)]
    pub at: Timestamp,
    pub actor: String,
    pub action: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    #[schema(value_type = Object)]
    pub details: Value,
}

#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CatalogQuery {
    /// Only skills of this namespace.
    pub namespace: Option<String>,
    pub cursor: Option<String>,
    /// Page size, 1–1000 (default 100).
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Free text: what the skill should do.
    pub q: String,
    /// Only skills of this namespace.
    pub namespace: Option<String>,
    /// 1–50 (default 10).
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
}

/// One ranked hit; deprecated and yanked-only skills rank below active ones and say so.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SearchHit {
    pub uri: String,
    pub namespace: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub score: f32,
    /// `active`, `deprecated` or `yanked`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries with an id greater than this.
    pub after: Option<i64>,
    pub limit: Option<u32>,
}

impl From<registry::SearchHit> for SearchHit {
    fn from(h: registry::SearchHit) -> Self {
        Self {
            status: h.status.as_str().to_owned(),
            uri: h.uri().to_string(),
            namespace: h.skill.namespace.to_string(),
            name: h.skill.name.to_string(),
            version: h.version.to_string(),
            description: h.description,
            score: h.score,
            deprecation: h.deprecation,
        }
    }
}

impl From<AuditRecord> for AuditEntry {
    fn from(r: AuditRecord) -> Self {
        Self {
            id: r.id,
            at: r.at,
            actor: r.actor,
            action: r.action,
            namespace: r.namespace,
            name: r.name,
            version: r.version,
            details: r.details,
        }
    }
}

// The schema of `core::Action` (the wire type), declared here because `core` knows no OpenAPI.
/// What a token may do.
#[derive(ToSchema)]
#[schema(as = Action, rename_all = "snake_case")]
#[expect(
    dead_code,
    reason = "only its schema is used: the wire type is core::Action"
)]
enum ActionSchema {
    Publish,
    Yank,
    Deprecate,
    Read,
}

/// The request header of a publish that carries what the client changed while reading the
/// skill (`--fix`, links packed as files): a JSON array of `{code, message}`, ASCII only. The
/// server stores them with the version as warnings.
pub const CLIENT_WARNINGS_HEADER: &str = "skillreg-client-warnings";

/// The value of [`CLIENT_WARNINGS_HEADER`]: compact JSON with every non-ASCII character
/// escaped (`\uXXXX`), as a header value must be.
pub fn encode_client_warnings(warnings: &[Warning]) -> String {
    let json = serde_json::to_string(warnings).expect("warnings serialize");
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// Read a [`CLIENT_WARNINGS_HEADER`] value (the registry then checks what it says).
pub fn decode_client_warnings(value: &[u8]) -> Result<Vec<Warning>, String> {
    serde_json::from_slice(value).map_err(|e| {
        format!("the {CLIENT_WARNINGS_HEADER} header is not a JSON list of warnings: {e}")
    })
}

/// `GET /v1/skills/{namespace}/{name}/stats`'s query.
#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatsQuery {
    /// The last this many UTC days, today included: 1–366 (default 30).
    pub days: Option<u32>,
}

/// Reads of one kind each (`core::usage`): what was counted, never who read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageCountsView {
    /// MCP `skills/get`.
    pub get: u64,
    /// MCP `resources/read` of a skill's SKILL.md.
    pub skill_md: u64,
    /// MCP `resources/read` of any other file.
    pub file: u64,
    /// REST archive downloads.
    pub archive: u64,
    /// REST file downloads (what discovery indexes announce).
    pub well_known: u64,
    /// ClawHub downloads (`clawhub install`).
    pub clawhub_install: u64,
    /// `skillreg add`/`install`/`update` installs.
    pub client_install: u64,
}

impl From<crate::core::usage::Totals> for UsageCountsView {
    fn from(t: crate::core::usage::Totals) -> Self {
        use crate::core::usage::Kind;
        Self {
            get: t.get(Kind::Get),
            skill_md: t.get(Kind::SkillMd),
            file: t.get(Kind::File),
            archive: t.get(Kind::Archive),
            well_known: t.get(Kind::WellKnown),
            clawhub_install: t.get(Kind::ClawhubInstall),
            client_install: t.get(Kind::ClientInstall),
        }
    }
}

/// A skill's usage over its last days: totals, a series by day and totals by version.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StatsView {
    pub namespace: String,
    pub name: String,
    /// The first day counted (UTC, `YYYY-MM-DD`).
    pub from: String,
    /// The last day counted: today (UTC).
    pub to: String,
    pub totals: UsageCountsView,
    /// The days with any read, oldest first.
    pub days: Vec<DayStatsView>,
    /// The versions with any read, newest first.
    pub versions: Vec<VersionStatsView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DayStatsView {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    pub counts: UsageCountsView,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct VersionStatsView {
    pub version: String,
    pub counts: UsageCountsView,
}

impl From<registry::SkillStats> for StatsView {
    fn from(s: registry::SkillStats) -> Self {
        use crate::core::usage::Totals;
        let mut days: BTreeMap<i64, Totals> = BTreeMap::new();
        let mut versions: BTreeMap<crate::core::SkillVersion, Totals> = BTreeMap::new();
        for c in &s.counts {
            days.entry(c.day.0).or_default().add(c.kind, c.count);
            versions
                .entry(c.version.clone())
                .or_default()
                .add(c.kind, c.count);
        }
        Self {
            namespace: s.skill.namespace.to_string(),
            name: s.skill.name.to_string(),
            from: s.from.date(),
            to: s.to.date(),
            totals: s.totals().into(),
            days: days
                .into_iter()
                .map(|(day, t)| DayStatsView {
                    date: crate::core::usage::Day(day).date(),
                    counts: t.into(),
                })
                .collect(),
            versions: versions
                .into_iter()
                .rev()
                .map(|(version, t)| VersionStatsView {
                    version: version.to_string(),
                    counts: t.into(),
                })
                .collect(),
        }
    }
}

/// A trusted publisher of a namespace: the OIDC issuer and the claims its tokens must carry.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrustedPublisherView {
    /// `tp_…`
    pub id: String,
    pub namespace: String,
    /// `github` or `gitlab`: whose claim shape.
    pub provider: String,
    pub issuer: String,
    /// GitHub: `owner/repo`; GitLab: the project path.
    pub repository: String,
    /// GitHub: the workflow file in `.github/workflows`; GitLab: the pipeline file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
}

impl From<crate::core::trustpub::TrustedPublisher> for TrustedPublisherView {
    fn from(p: crate::core::trustpub::TrustedPublisher) -> Self {
        Self {
            id: p.id,
            namespace: p.namespace.to_string(),
            provider: p.provider.as_str().to_owned(),
            issuer: p.issuer,
            repository: p.constraints.repository,
            workflow: p.constraints.workflow,
            environment: p.constraints.environment,
            git_ref: p.constraints.git_ref,
            created_at: p.created_at,
        }
    }
}

/// A trusted publisher to register (admin only).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrustedPublisherRequest {
    /// `github` or `gitlab`.
    pub provider: String,
    /// The issuer, exactly as its tokens' `iss`; absent: the provider's hosted service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    pub repository: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
}

/// A namespace's trusted publishers.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TrustedPublisherList {
    pub trusted_publishers: Vec<TrustedPublisherView>,
    /// Whether the namespace accepts versions only from them (and the admin).
    pub trusted_only: bool,
}

/// A CI's OIDC token to exchange (crates.io's shape).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExchangeRequest {
    pub jwt: String,
}

/// A short-lived token that may publish to the matched namespace.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExchangeView {
    /// The secret, shown once: send it as `Authorization: Bearer <token>`.
    pub token: String,
    /// When it stops being accepted (RFC 3339).
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: Timestamp,
}

/// A pack version to publish.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PackRequest {
    #[serde(default)]
    pub description: String,
    /// Exact versions: `namespace/name@version`, each skill once.
    pub members: Vec<String>,
}

/// A pack version: exact versions of skills, installed as one.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PackView {
    pub namespace: String,
    pub name: String,
    pub version: String,
    pub description: String,
    /// `namespace/name@version`, sorted.
    pub members: Vec<String>,
    #[schema(value_type = String, format = DateTime)]
    pub published_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_by: Option<String>,
    /// Where MCP clients read it (`resources/read`).
    pub uri: String,
}

impl From<crate::core::pack::PackRecord> for PackView {
    fn from(p: crate::core::pack::PackRecord) -> Self {
        Self {
            uri: p.pack.uri(Some(&p.version)),
            namespace: p.pack.namespace.to_string(),
            name: p.pack.name.to_string(),
            version: p.version.to_string(),
            description: p.contents.description,
            members: p.contents.members.iter().map(ToString::to_string).collect(),
            published_at: p.published_at,
            published_by: p.published_by,
        }
    }
}

/// `GET /v1/events`'s query.
#[derive(Debug, Serialize, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// The `next` of the previous page; without it, the oldest event kept.
    pub after: Option<String>,
    /// Events per page: 1–500 (default 100).
    pub limit: Option<u32>,
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub kind: Option<String>,
    /// Only events of this namespace.
    pub namespace: Option<String>,
}

/// One change to the catalog.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// The event's id, stable (as a string: a cursor for `after`).
    pub id: String,
    /// `published`, `yanked`, `unyanked`, `deprecated`, `undeprecated`, `revoked`,
    /// `unrevoked`, `approved`, `scan_changed` or `source_synced`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When the change committed (RFC 3339, UTC).
    #[schema(value_type = String, format = DateTime)]
    pub at: Timestamp,
    pub namespace: String,
    /// The skill, for all but `source_synced`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The version, for all but deprecation and `source_synced`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A version stored pending review (seen only by those who see pending versions).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// What changed, by type: `content_digest` (and `source`), `reason`, `message`,
    /// `verdict_before` and `verdict`, `source` and `revision`.
    #[schema(value_type = Object)]
    pub payload: Value,
}

impl From<crate::core::event::EventRecord> for EventView {
    fn from(e: crate::core::event::EventRecord) -> Self {
        Self {
            id: e.id.to_string(),
            kind: e.kind.as_str().to_owned(),
            at: e.at,
            namespace: e.namespace,
            name: e.name,
            version: e.version,
            pending: e.pending,
            payload: e.payload,
        }
    }
}

/// Packs (`GET /v1/packs`, or one pack's versions).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PackList {
    pub packs: Vec<PackView>,
}

/// A page of the events feed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EventsPage {
    /// Oldest first.
    pub events: Vec<EventView>,
    /// The cursor to pass as `after` next (also when the page is empty).
    pub next: String,
    /// `after` was from before the retention window (`event_retention_days`): events were
    /// missed.
    pub truncated: bool,
}

/// `POST /v1/namespaces/{namespace}/webhooks`'s body.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookRequest {
    /// Where deliveries are POSTed: http or https; a host that is or resolves to a loopback,
    /// private or link-local address is refused unless the operator allows it.
    pub url: String,
    /// The event types delivered (none: every type).
    #[serde(default)]
    pub types: Vec<String>,
}

/// A webhook of a namespace, its delivery state included.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookView {
    /// `wh_…`
    pub id: String,
    pub namespace: String,
    pub url: String,
    /// The event types delivered (empty: every type).
    pub types: Vec<String>,
    /// `active`, or `paused` after `webhook_pause_after` consecutive failed deliveries.
    pub state: String,
    /// Consecutive failed deliveries.
    pub failures: i64,
    /// The HTTP status of the last delivery attempt (absent: none yet, or no answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_attempt_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub paused_at: Option<Timestamp>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    pub created_by: String,
    /// The signing secret (`whsec_…`, Standard Webhooks): shown once, when the webhook is
    /// created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl WebhookView {
    /// The view of `hook`, with its secret when it was just created.
    pub fn of(hook: crate::core::event::WebhookRecord, with_secret: bool) -> Self {
        Self {
            state: if hook.paused_at.is_some() {
                "paused"
            } else {
                "active"
            }
            .to_owned(),
            types: hook.kinds.iter().map(|k| k.as_str().to_owned()).collect(),
            secret: with_secret.then_some(hook.secret),
            id: hook.id,
            namespace: hook.namespace,
            url: hook.url,
            failures: hook.failures,
            last_status: hook.last_status,
            last_attempt_at: hook.last_attempt_at,
            paused_at: hook.paused_at,
            created_at: hook.created_at,
            created_by: hook.created_by,
        }
    }
}

/// The webhooks of a namespace.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<WebhookView>,
}
