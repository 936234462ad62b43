//! What storage hands back: typed records, decoded from rows inside the store. A row that cannot
//! be decoded is a [`StoreError::Corrupt`]; nothing is ever defaulted.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::StoreError;
use crate::core::provenance::{Provenance, SourceKind};
pub use crate::core::records::{
    AuditRecord, FileRecord, NamespaceKeyRecord, NamespaceSigning, SignatureRecord,
    SigningKeyRecord, SourceId, SourceRecord, Stats, TokenRecord, VerifyReport, VersionId,
};
use crate::core::scan::{Counts, Scan, Severity, Summary, Verdict};
use crate::core::signature::Signed;
use crate::core::uri::SKILL_MD;
use crate::core::{
    Action, Bundle, Digest, Namespace, Scope, SkillName, SkillRef, SkillVersion, Timestamp,
    VersionRef, Warning,
};

pub type SkillId = i64;
/// A serialized entry the store keeps: it names those bytes and no others, ever (an id is never
/// given twice), so a row read with it and the bytes read by it later agree.
pub type EntryId = i64;

/// A validated version to store. Its blobs are stored first, through [`super::Blobs`].
#[derive(Clone, Copy)]
pub struct NewVersion<'a> {
    pub namespace: &'a Namespace,
    pub bundle: &'a Bundle,
    pub version: &'a SkillVersion,
    /// The audit actor.
    pub published_by: &'a str,
    /// The content scan stored with the version.
    pub scan: &'a Scan,
    /// Stored pending review (its namespace requires review): never current until approved.
    pub pending: bool,
    /// Where the registry read the bytes from, when it read them itself.
    pub provenance: Option<&'a Provenance>,
    /// Who signed it, each with the Sigstore bundle as made or uploaded (`core::signature`).
    pub signatures: &'a [(Signed, String)],
    /// Who published it from CI (trusted publishing): the claims, JSON text.
    pub publisher: Option<&'a str>,
}

/// What a publish did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishOutcome {
    /// A new version was stored.
    Created,
    /// The identical version was already stored; nothing changed.
    Unchanged,
}

/// One skill entry of the current catalog, in URI order.
#[derive(Debug, Clone)]
pub struct ListingRecord {
    /// The listing URI of the entry's SKILL.md (the sort key and cursor).
    pub uri: String,
    pub skill: SkillRef,
    pub version_id: VersionId,
    /// `""` for the root skill, else the nested skill's directory.
    pub subpath: String,
    pub name: SkillName,
    pub description: String,
    pub version: SkillVersion,
    /// The deprecation message when the skill is deprecated.
    pub deprecation: Option<String>,
    pub scan: Summary,
    /// The serialized entry the store keeps for the row, if it keeps one (SQLite).
    pub entry: Option<EntryId>,
}

/// The serialized entry of a listing row, to be kept with it while the row lists `version_id`.
/// The bytes are opaque to the store: one line of JSON text (no newline), as the transport that
/// serves them wrote it.
#[derive(Debug, Clone)]
pub struct SerializedEntry {
    pub uri: String,
    pub version_id: VersionId,
    pub body: String,
}

/// A skill version found by reference: the current one, or one pinned version.
#[derive(Debug, Clone)]
pub struct ResolvedVersion {
    pub skill_id: SkillId,
    pub version_id: VersionId,
    pub version: SkillVersion,
    /// The yank reason when the version is yanked.
    pub yanked: Option<String>,
    /// The deprecation message when the skill is deprecated.
    pub deprecation: Option<String>,
    /// Whether the skill's namespace is private.
    pub private: bool,
    pub scan: Summary,
    /// The revocation reason when the (pinned) version is revoked.
    pub revoked: Option<String>,
    /// Waiting for review: never served over MCP.
    pub pending: bool,
}

/// How a version is withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withdrawal {
    /// Left out of the current version; still served at its pinned URIs.
    Yank,
    /// Withdrawn for security reasons: served to nobody, announced in the revocation feed.
    Revoke,
}

/// A version with its scan, as `GET /v1/findings` lists it.
#[derive(Debug, Clone)]
pub struct FindingsRecord {
    pub version_id: VersionId,
    pub version: VersionRef,
    pub content_digest: Digest,
    pub published_at: Timestamp,
    pub scan: Scan,
    pub pending: bool,
}

/// A stored version to scan again (`skillreg rescan`), with its scan so far.
#[derive(Debug, Clone)]
pub struct ScanTarget {
    pub version_id: VersionId,
    pub version: VersionRef,
    pub scan: Scan,
}

/// A revoked version, as the revocation feed announces it.
#[derive(Debug, Clone)]
pub struct RevocationRecord {
    pub version_id: VersionId,
    pub version: VersionRef,
    pub content_digest: Digest,
    pub revoked_at: Timestamp,
    pub reason: String,
    /// Revoked while pending review: only holders of the namespace's tokens see it.
    pub pending: bool,
}

/// One skill served by a version: the root one (`subpath == ""`) or a nested one.
#[derive(Debug, Clone)]
pub struct EntryRecord {
    pub subpath: String,
    pub name: SkillName,
    pub description: String,
    pub frontmatter: Map<String, Value>,
}

/// Everything immutable about a version except file bytes.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub version_id: VersionId,
    /// Sorted by path.
    pub files: Vec<FileRecord>,
    /// Sorted by subpath; never empty, the root entry (`""`) first.
    pub entries: Vec<EntryRecord>,
    /// Where the registry read the version from, when it read it itself.
    pub provenance: Option<Provenance>,
    /// Who signed it (the bundles are kept apart: [`crate::store::Signing`]).
    pub signatures: Vec<Signed>,
    /// Who published it from CI (trusted publishing): provider, repository, workflow, ref,
    /// commit, run (`core::trustpub::publisher_claims`).
    pub publisher: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Manifest {
    /// The root skill's entry.
    pub fn root(&self) -> &EntryRecord {
        &self.entries[0]
    }

    /// The file at `path`, by binary search.
    pub fn file(&self, path: &str) -> Option<&FileRecord> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    /// The root SKILL.md.
    pub fn skill_md(&self) -> Option<&FileRecord> {
        self.file(SKILL_MD)
    }

    /// Check the invariants every stored manifest holds.
    pub(super) fn checked(self) -> Result<Self, StoreError> {
        if self.entries.first().is_none_or(|e| !e.subpath.is_empty()) {
            return Err(StoreError::Corrupt(format!(
                "version {} has no root entry",
                self.version_id
            )));
        }
        Ok(self)
    }
}

/// Manifests by version id.
pub type Manifests = HashMap<VersionId, Manifest>;

/// A skill's own record.
#[derive(Debug, Clone)]
pub struct SkillRecord {
    pub id: SkillId,
    pub skill: SkillRef,
    pub created_at: Timestamp,
    pub current_version: Option<SkillVersion>,
    /// When a version of it was last published (not counting versions pending review).
    pub last_published_at: Option<Timestamp>,
    /// When the current version was published.
    pub current_published_at: Option<Timestamp>,
    pub deprecated_at: Option<Timestamp>,
    pub deprecation_message: Option<String>,
    /// Whether the skill's namespace is private.
    pub private: bool,
}

/// One version of a skill.
#[derive(Debug, Clone)]
pub struct VersionRecord {
    pub id: VersionId,
    pub version: SkillVersion,
    pub content_digest: Digest,
    pub file_count: u64,
    pub total_size: u64,
    pub warnings: Vec<Warning>,
    pub published_at: Timestamp,
    pub published_by: Option<String>,
    pub yanked_at: Option<Timestamp>,
    pub yank_reason: Option<String>,
    pub scan: Scan,
    pub revoked_at: Option<Timestamp>,
    pub revoke_reason: Option<String>,
    pub pending: bool,
}

/// A skill a source holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMember {
    pub name: SkillName,
    /// No longer found at the source (and deprecated for it).
    pub removed: bool,
}

/// One skill as the REST catalog lists it.
#[derive(Debug, Clone)]
pub struct CatalogRecord {
    pub skill: SkillRef,
    pub current_version: Option<SkillVersion>,
    pub description: Option<String>,
    pub deprecation: Option<String>,
    /// Every version is pending review (only holders of the namespace's tokens may see it).
    pub pending_only: bool,
    /// When the skill was first published.
    pub created_at: Timestamp,
    /// When a version of it was last published.
    pub last_published_at: Option<Timestamp>,
    /// When the current version was published.
    pub current_published_at: Option<Timestamp>,
    /// The current version's scan verdict.
    pub current_verdict: Option<Verdict>,
    /// Where the current version was read from (`None`: published directly).
    pub current_provenance: Option<Provenance>,
    /// The current version was published from CI (trusted publishing).
    pub current_from_ci: bool,
    /// Its reads counted so far, every version's but those pending review (read by the web
    /// catalog's pages only; 0 elsewhere).
    pub reads: u64,
}

/// Which skills a browse page holds (the web catalog); each part optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct CatalogFilter<'a> {
    pub namespace: Option<&'a Namespace>,
    /// The current version's verdict is this one.
    pub verdict: Option<Verdict>,
    /// Where the current version came from: `Some(None)` published directly, `Some(Some(kind))`
    /// read from a source of that kind.
    pub source: Option<Option<SourceKind>>,
}

/// How many skills of one namespace share what the web catalog's facets look at: what is
/// counted once per change of the catalog, never per page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FacetRecord {
    pub namespace: Namespace,
    pub private: bool,
    /// The current version's verdict and where it was read from (`None`: published directly);
    /// `None` when there is no current version.
    pub current: Option<(Verdict, Option<SourceKind>)>,
    /// Every version is pending review.
    pub pending_only: bool,
    pub skills: u64,
}

/// Where a browse page starts: after this key of the order the page is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogKey {
    /// By (namespace, name).
    Name(SkillRef),
    /// Most recently published first: by (last published, namespace, name), descending. Lists
    /// only skills with a published version.
    Recent {
        published_at: String,
        skill: SkillRef,
    },
}

/// Which skill names a by-name catalog page holds.
#[derive(Debug, Clone, Copy)]
pub enum NameMatch<'a> {
    /// Exactly this name (the skill in every namespace that has it).
    Exact(&'a crate::core::SkillName),
    /// Names starting with this text.
    Prefix(&'a str),
}

impl NameMatch<'_> {
    /// The byte range `[from, to)` of names that match. Names are ASCII without control
    /// characters: `"\x01"` sorts below every character of a name, `"\x7f"` above.
    pub(super) fn range(&self) -> (String, String) {
        match self {
            Self::Exact(name) => (name.as_str().to_owned(), format!("{}\x01", name.as_str())),
            Self::Prefix(prefix) => ((*prefix).to_owned(), format!("{prefix}\x7f")),
        }
    }
}

/// A token to store: its hash only, never the secret.
#[derive(Debug, Clone, Copy)]
pub struct NewToken<'a> {
    pub id: &'a str,
    pub hash: &'a Digest,
    pub description: &'a str,
    pub scope: &'a Scope,
    pub actions: &'a [Action],
    pub actor: &'a str,
}

/// A token exchanged for a CI's verified OIDC token ([`super::TrustedPublishing::exchange_token`]).
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// The token; its actor is the trusted publisher's id.
    pub token: NewToken<'a>,
    /// The trusted publisher matched (`tp_…`).
    pub publisher: &'a str,
    /// Seconds the token lives, from now by the database's clock.
    pub ttl_secs: i64,
    pub issuer: &'a str,
    /// The OIDC token's `jti` and its expiry (Unix seconds).
    pub jti: &'a str,
    pub jti_expires_at: i64,
    /// The audit row's details: the issuer and the claims used.
    pub details: &'a serde_json::Value,
    /// What versions published with the token record (JSON text).
    pub claims: &'a str,
}

/// A skill that changed after some generation: what the search index needs to know about it.
#[derive(Debug, Clone)]
pub struct ChangedSkill {
    pub skill_id: SkillId,
    pub skill: SkillRef,
    /// The current version, or the newest one when every version is yanked; `None` when the
    /// skill has no version at all.
    pub version: Option<(VersionId, SkillVersion)>,
    pub yanked_only: bool,
    pub deprecation: Option<String>,
}

/// Decoders shared by every engine: stored text into core types, failing as corrupt.
pub(super) mod decode {
    use super::*;

    pub fn version(s: &str) -> Result<SkillVersion, StoreError> {
        SkillVersion::parse(s).map_err(|e| StoreError::corrupt(format!("version {s:?}"), e))
    }

    pub fn digest(s: &str) -> Result<Digest, StoreError> {
        s.parse()
            .map_err(|e| StoreError::corrupt("stored digest", e))
    }

    pub fn namespace(s: &str) -> Result<Namespace, StoreError> {
        Namespace::new(s).map_err(|e| StoreError::corrupt(format!("namespace {s:?}"), e))
    }

    pub fn name(s: &str) -> Result<SkillName, StoreError> {
        SkillName::new(s).map_err(|e| StoreError::corrupt(format!("skill name {s:?}"), e))
    }

    pub fn skill(namespace: &str, name: &str) -> Result<SkillRef, StoreError> {
        Ok(SkillRef::new(
            self::namespace(namespace)?,
            self::name(name)?,
        ))
    }

    pub fn json<T: serde::de::DeserializeOwned>(what: &str, s: &str) -> Result<T, StoreError> {
        serde_json::from_str(s).map_err(|e| StoreError::corrupt(what, e))
    }

    /// Rows that came back as one JSON array (SQLite's `json_group_array`, which answers `[]`
    /// over no rows; `NULL` is read as no rows too).
    pub fn json_rows<T: serde::de::DeserializeOwned>(
        what: &str,
        s: Option<&str>,
    ) -> Result<Vec<T>, StoreError> {
        s.map_or_else(|| Ok(Vec::new()), |s| json(what, s))
    }

    /// A version's provenance column: `NULL` or a [`Provenance`] as JSON.
    pub fn provenance(s: Option<&str>) -> Result<Option<Provenance>, StoreError> {
        s.map(|s| json("stored provenance", s)).transpose()
    }

    /// A version's signatures column: `NULL` (unsigned) or a JSON array of [`Signed`].
    pub fn signatures(s: Option<&str>) -> Result<Vec<Signed>, StoreError> {
        Ok(s.map(|s| json("stored signatures", s))
            .transpose()?
            .unwrap_or_default())
    }

    pub fn source_kind(s: &str) -> Result<SourceKind, StoreError> {
        SourceKind::parse(s).ok_or_else(|| StoreError::Corrupt(format!("source kind {s:?}")))
    }

    pub fn opt_version(s: Option<String>) -> Result<Option<SkillVersion>, StoreError> {
        s.as_deref().map(version).transpose()
    }

    pub fn size(what: &str, n: i64) -> Result<u64, StoreError> {
        u64::try_from(n).map_err(|e| StoreError::corrupt(what, e))
    }

    pub fn scope(s: &str) -> Result<Scope, StoreError> {
        let names: Vec<String> = json("token namespaces", s)?;
        Scope::from_names(&names).map_err(|e| StoreError::corrupt("token namespaces", e))
    }

    pub fn actions(s: &str) -> Result<Vec<Action>, StoreError> {
        json("token actions", s)
    }

    pub fn scan(verdict: &str, findings: &str) -> Result<Scan, StoreError> {
        Ok(Scan {
            verdict: Verdict::parse(verdict)
                .ok_or_else(|| StoreError::Corrupt(format!("verdict {verdict:?}")))?,
            findings: json("stored findings", findings)?,
        })
    }

    /// A version's verdict and findings per severity, without decoding the findings' text (a
    /// listing page needs only the counts of each of its versions).
    pub fn summary(verdict: &str, findings: &str) -> Result<Summary, StoreError> {
        #[derive(serde::Deserialize)]
        struct SeverityOf {
            severity: Severity,
        }
        let verdict = Verdict::parse(verdict)
            .ok_or_else(|| StoreError::Corrupt(format!("verdict {verdict:?}")))?;
        let findings: Vec<SeverityOf> = json("stored findings", findings)?;
        let mut counts = Counts::new();
        for f in findings {
            *counts.entry(f.severity).or_default() += 1;
        }
        Ok(Summary { verdict, counts })
    }

    /// The message of a deprecation: `Some` exactly when the skill is deprecated.
    pub fn deprecation(deprecated: bool, message: Option<String>) -> Option<String> {
        deprecated.then(|| message.unwrap_or_default())
    }
}

/// Reads of one version on one day, of one kind, counted in memory and added by a flush.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageCount {
    pub version_id: VersionId,
    pub day: crate::core::usage::Day,
    pub kind: crate::core::usage::Kind,
    pub count: u64,
}

/// A stored count of one version of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRecord {
    pub version: SkillVersion,
    /// The version waits for review (its counts are shown only to who sees it).
    pub pending: bool,
    pub day: crate::core::usage::Day,
    pub kind: crate::core::usage::Kind,
    pub count: u64,
}

/// A skill's total of one kind (`None`: the skill has no count at all in the period asked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUsage {
    pub skill: SkillRef,
    pub kind: Option<crate::core::usage::Kind>,
    pub count: u64,
}

/// A version that declares requirements ([`crate::store::Requirements`]).
#[derive(Debug, Clone)]
pub struct RequiringVersion {
    pub version_id: VersionId,
    pub skill: SkillRef,
    pub version: SkillVersion,
    /// It is its skill's current version.
    pub current: bool,
    pub requires: crate::core::requires::Requires,
}

/// A required skill and the versions of it that can be installed, newest first.
#[derive(Debug, Clone)]
pub struct RequiredSkill {
    pub skill: SkillRef,
    pub private: bool,
    pub versions: Vec<SkillVersion>,
}

pub use crate::core::pack::PackRecord;
