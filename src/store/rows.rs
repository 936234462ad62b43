//! What both engines share below their SQL: the rows their queries return (the same columns on
//! SQLite and PostgreSQL, decoded by one `FromRow` derive each) and their decoding into records,
//! the current-version and listing rules of a write, and the checks of a scrub. The statements
//! are in `store/sql` (both engines) and in each engine's own modules.

use serde_json::Value;

use super::records::decode;
use super::{
    AuditRecord, CatalogRecord, ChangedSkill, EntryRecord, FacetRecord, FileRecord, FindingsRecord,
    ListingRecord, Manifest, Manifests, Resolution, ResolvedVersion, Result, RevocationRecord,
    ScanTarget, SkillRecord, SourceMember, SourceRecord, Stats, StoreError, TokenRecord,
    VerifyReport, VersionRecord, Withdrawal,
};
use crate::core::provenance::SourceSpec;
use crate::core::scan::Scan;
use crate::core::version::pick_current;
use crate::core::{Digest, SkillRef, SkillVersion, Timestamp, VersionRef, Visibility};

/// A listing row: from columns (PostgreSQL), or from a JSON object of the same fields (SQLite
/// returns a whole page as one JSON array).
#[derive(sqlx::FromRow, serde::Deserialize)]
pub(super) struct ListingRow {
    uri: String,
    namespace: String,
    skill: String,
    version_id: i64,
    subpath: String,
    name: String,
    description: String,
    version: String,
    deprecation_message: Option<String>,
    deprecated: bool,
    verdict: String,
    findings: String,
    /// Only SQLite keeps serialized entries.
    #[sqlx(default)]
    #[serde(default)]
    entry_id: Option<i64>,
}

/// A [`ListingRow`]'s columns by position, as a statement selects them in its field order
/// (without the entry id): read by position, a 100-row page skips a lookup of each column by
/// name, and of the missing `entry_id` (an error made for every row).
pub(super) type ListingColumns = (
    String,
    String,
    String,
    i64,
    String,
    String,
    String,
    String,
    Option<String>,
    bool,
    String,
    String,
);

impl ListingRow {
    pub(super) fn of_columns(columns: ListingColumns) -> Self {
        let (
            uri,
            namespace,
            skill,
            version_id,
            subpath,
            name,
            description,
            version,
            deprecation_message,
            deprecated,
            verdict,
            findings,
        ) = columns;
        Self {
            uri,
            namespace,
            skill,
            version_id,
            subpath,
            name,
            description,
            version,
            deprecation_message,
            deprecated,
            verdict,
            findings,
            entry_id: None,
        }
    }

    pub(super) fn decode(self) -> Result<ListingRecord> {
        Ok(ListingRecord {
            skill: decode::skill(&self.namespace, &self.skill)?,
            name: decode::name(&self.name)?,
            version: decode::version(&self.version)?,
            deprecation: decode::deprecation(self.deprecated, self.deprecation_message),
            scan: decode::summary(&self.verdict, &self.findings)?,
            uri: self.uri,
            version_id: self.version_id,
            subpath: self.subpath,
            description: self.description,
            entry: self.entry_id,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct ResolvedRow {
    skill_id: i64,
    version_id: i64,
    version: String,
    yanked: bool,
    yank_reason: Option<String>,
    deprecation_message: Option<String>,
    deprecated: bool,
    private: bool,
    verdict: String,
    findings: String,
    revoked: bool,
    revoke_reason: Option<String>,
    pending: bool,
}

impl ResolvedRow {
    pub(super) fn decode(self) -> Result<ResolvedVersion> {
        Ok(ResolvedVersion {
            skill_id: self.skill_id,
            version_id: self.version_id,
            version: decode::version(&self.version)?,
            yanked: decode::deprecation(self.yanked, self.yank_reason),
            deprecation: decode::deprecation(self.deprecated, self.deprecation_message),
            private: self.private,
            scan: decode::summary(&self.verdict, &self.findings)?,
            revoked: decode::deprecation(self.revoked, self.revoke_reason),
            pending: self.pending,
        })
    }
}

/// A resolution with its version's manifest columns (`Browse::resolve_with_manifest`).
#[derive(sqlx::FromRow)]
pub(super) struct ResolvedManifestRow {
    #[sqlx(flatten)]
    resolved: ResolvedRow,
    manifest: Option<String>,
    provenance: Option<String>,
    signatures: Option<String>,
    publisher: Option<String>,
    file: Option<Vec<u8>>,
}

impl ResolvedManifestRow {
    /// The resolution, the file's bytes, and the manifest when `wanted` says so of the version
    /// (decoded only then: the caller may hold it already).
    pub(super) fn decode(
        self,
        wanted: &(dyn Fn(super::VersionId) -> bool + Send + Sync),
    ) -> Result<Resolution> {
        let resolved = self.resolved.decode()?;
        let version_id = resolved.version_id;
        let manifest = if wanted(version_id) {
            let manifest = self
                .manifest
                .map(|text| decode::json("a version's manifest column", &text))
                .transpose()?;
            let manifest = manifests_of_columns(vec![(
                version_id,
                manifest,
                self.provenance,
                self.signatures,
                self.publisher,
            )])?
            .remove(&version_id)
            .ok_or_else(|| StoreError::Corrupt(format!("version {version_id} has no files")))?;
            Some(manifest)
        } else {
            None
        };
        Ok(Resolution {
            resolved,
            manifest,
            file: self.file,
        })
    }
}

/// A file row: (version id, path, digest, size, mode).
pub(super) type FileRow = (i64, String, String, i64, i64);
/// An entry row: (version id, subpath, name, description, frontmatter, the version's
/// columns of its own text: [`VersionText`]).
pub(super) type EntryRow = (i64, String, String, String, String, VersionText);

/// A version's own text columns, carried with each of its entry rows (JSON, `NULL` when
/// absent): where it was read from, who signed it, who published it from CI.
#[derive(Debug, Clone, Default)]
pub(super) struct VersionText {
    pub provenance: Option<String>,
    pub signatures: Option<String>,
    pub publisher: Option<String>,
}

/// A version's manifest as one JSON value on its row (SQLite's `versions.manifest`): its files
/// `(path, digest, size, mode)` by path, then its entries `(subpath, name, description,
/// frontmatter as JSON text)` by subpath.
pub(super) type ManifestColumn = (
    Vec<(String, String, i64, i64)>,
    Vec<(String, String, String, String)>,
);

/// The manifest column of a version about to be stored.
pub(super) fn manifest_column(new: &super::NewVersion<'_>) -> Result<String> {
    let files = new
        .bundle
        .files
        .iter()
        .map(|f| {
            (
                f.path.to_string(),
                f.digest.to_string(),
                f.bytes.len() as i64,
                i64::from(f.mode),
            )
        })
        .collect();
    let entries = new
        .bundle
        .entries
        .iter()
        .map(|e| {
            Ok((
                e.subpath.clone(),
                e.name.to_string(),
                e.description.clone(),
                json_text(&e.frontmatter)?,
            ))
        })
        .collect::<Result<_>>()?;
    let column: ManifestColumn = (files, entries);
    json_text(&column)
}

/// A version's manifest columns as SQLite's `manifests` reads them: (version id, manifest,
/// provenance, signatures, publisher).
pub(super) type VersionColumns = (
    i64,
    Option<ManifestColumn>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The manifests of versions from their manifest columns.
pub(super) fn manifests_of_columns(columns: Vec<VersionColumns>) -> Result<Manifests> {
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for (version_id, column, provenance, signatures, publisher) in columns {
        let text = VersionText {
            provenance,
            signatures,
            publisher,
        };
        let Some((version_files, version_entries)) = column else {
            return Err(StoreError::Corrupt(format!(
                "version {version_id} has no manifest"
            )));
        };
        files.extend(
            version_files
                .into_iter()
                .map(|(path, digest, size, mode)| (version_id, path, digest, size, mode)),
        );
        entries.extend(version_entries.into_iter().map(
            |(subpath, name, description, frontmatter)| {
                (
                    version_id,
                    subpath,
                    name,
                    description,
                    frontmatter,
                    text.clone(),
                )
            },
        ));
    }
    manifests(files, entries)
}

/// The manifests of versions from their file and entry rows (both ordered by version).
pub(super) fn manifests(files: Vec<FileRow>, entries: Vec<EntryRow>) -> Result<Manifests> {
    let mut manifests = Manifests::new();
    for (version_id, path, digest, size, mode) in files {
        manifests
            .entry(version_id)
            .or_insert_with(|| Manifest {
                version_id,
                files: Vec::new(),
                entries: Vec::new(),
                provenance: None,
                signatures: Vec::new(),
                publisher: None,
            })
            .files
            .push(FileRecord {
                path,
                digest: decode::digest(&digest)?,
                size: decode::size("file size", size)?,
                mode: u32::try_from(mode).map_err(|e| StoreError::corrupt("file mode", e))?,
            });
    }
    for (version_id, subpath, name, description, frontmatter, text) in entries {
        let Some(manifest) = manifests.get_mut(&version_id) else {
            return Err(StoreError::Corrupt(format!(
                "version {version_id} has no files"
            )));
        };
        if manifest.entries.is_empty() {
            manifest.provenance = decode::provenance(text.provenance.as_deref())?;
            manifest.signatures = decode::signatures(text.signatures.as_deref())?;
            manifest.publisher = text
                .publisher
                .map(|p| decode::json("stored publisher", &p))
                .transpose()?;
        }
        manifest.entries.push(EntryRecord {
            subpath,
            name: decode::name(&name)?,
            description,
            frontmatter: decode::json("stored frontmatter", &frontmatter)?,
        });
    }
    manifests
        .into_iter()
        .map(|(id, m)| Ok((id, m.checked()?)))
        .collect()
}

#[derive(sqlx::FromRow)]
pub(super) struct SkillRow {
    id: i64,
    namespace: String,
    name: String,
    created_at: Timestamp,
    current_version: Option<String>,
    last_published_at: Option<Timestamp>,
    current_published_at: Option<Timestamp>,
    deprecated_at: Option<Timestamp>,
    deprecation_message: Option<String>,
    private: bool,
}

impl SkillRow {
    pub(super) fn decode(self) -> Result<SkillRecord> {
        Ok(SkillRecord {
            id: self.id,
            skill: decode::skill(&self.namespace, &self.name)?,
            created_at: self.created_at,
            current_version: decode::opt_version(self.current_version)?,
            last_published_at: self.last_published_at,
            current_published_at: self.current_published_at,
            deprecated_at: self.deprecated_at,
            deprecation_message: self.deprecation_message,
            private: self.private,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct VersionRow {
    id: i64,
    version: String,
    content_digest: String,
    file_count: i64,
    total_size: i64,
    warnings: String,
    published_at: Timestamp,
    published_by: Option<String>,
    yanked_at: Option<Timestamp>,
    yank_reason: Option<String>,
    verdict: String,
    findings: String,
    revoked_at: Option<Timestamp>,
    revoke_reason: Option<String>,
    pending: bool,
}

impl VersionRow {
    pub(super) fn decode(self) -> Result<VersionRecord> {
        Ok(VersionRecord {
            id: self.id,
            version: decode::version(&self.version)?,
            content_digest: decode::digest(&self.content_digest)?,
            file_count: decode::size("file count", self.file_count)?,
            total_size: decode::size("total size", self.total_size)?,
            warnings: decode::json("stored warnings", &self.warnings)?,
            published_at: self.published_at,
            published_by: self.published_by,
            yanked_at: self.yanked_at,
            yank_reason: self.yank_reason,
            scan: decode::scan(&self.verdict, &self.findings)?,
            revoked_at: self.revoked_at,
            revoke_reason: self.revoke_reason,
            pending: self.pending,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct CatalogRow {
    namespace: String,
    name: String,
    current_version: Option<String>,
    description: Option<String>,
    deprecated: bool,
    deprecation_message: Option<String>,
    pending_only: bool,
    created_at: Timestamp,
    last_published_at: Option<Timestamp>,
    current_published_at: Option<Timestamp>,
    current_verdict: Option<String>,
    current_provenance: Option<String>,
    current_from_ci: bool,
    /// Only the web catalog's pages read it.
    #[sqlx(default)]
    reads: Option<i64>,
}

impl CatalogRow {
    pub(super) fn decode(self) -> Result<CatalogRecord> {
        Ok(CatalogRecord {
            skill: decode::skill(&self.namespace, &self.name)?,
            current_version: decode::opt_version(self.current_version)?,
            description: self.description,
            deprecation: decode::deprecation(self.deprecated, self.deprecation_message),
            pending_only: self.pending_only,
            created_at: self.created_at,
            last_published_at: self.last_published_at,
            current_published_at: self.current_published_at,
            current_verdict: self
                .current_verdict
                .map(|v| {
                    crate::core::scan::Verdict::parse(&v)
                        .ok_or_else(|| StoreError::Corrupt(format!("verdict {v:?}")))
                })
                .transpose()?,
            current_provenance: decode::provenance(self.current_provenance.as_deref())?,
            current_from_ci: self.current_from_ci,
            reads: self.reads.map_or(0, |n| u64::try_from(n).unwrap_or(0)),
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct FacetRow {
    namespace: String,
    private: bool,
    verdict: Option<String>,
    /// `git` or `mcp` (the provenance's tag), `''` published directly, NULL no current version.
    source: Option<String>,
    pending_only: bool,
    skills: i64,
}

impl FacetRow {
    pub(super) fn decode(self) -> Result<FacetRecord> {
        use crate::core::provenance::SourceKind;
        let current = match (self.verdict, self.source) {
            (None, _) => None,
            (Some(v), source) => {
                let verdict = crate::core::scan::Verdict::parse(&v)
                    .ok_or_else(|| StoreError::Corrupt(format!("verdict {v:?}")))?;
                let source = match source.as_deref() {
                    None | Some("") => None,
                    Some(kind) => Some(SourceKind::parse(kind).ok_or_else(|| {
                        StoreError::Corrupt(format!("provenance of kind {kind:?}"))
                    })?),
                };
                Some((verdict, source))
            }
        };
        Ok(FacetRecord {
            namespace: decode::namespace(&self.namespace)?,
            private: self.private,
            current,
            pending_only: self.pending_only,
            skills: u64::try_from(self.skills).unwrap_or(0),
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct ChangedRow {
    skill_id: i64,
    namespace: String,
    name: String,
    version_id: Option<i64>,
    version: Option<String>,
    yanked_only: bool,
    deprecated: bool,
    deprecation_message: Option<String>,
}

impl ChangedRow {
    pub(super) fn decode(self) -> Result<ChangedSkill> {
        let version = match (self.version_id, self.version) {
            (Some(id), Some(v)) => Some((id, decode::version(&v)?)),
            _ => None,
        };
        Ok(ChangedSkill {
            skill_id: self.skill_id,
            skill: decode::skill(&self.namespace, &self.name)?,
            version,
            yanked_only: self.yanked_only,
            deprecation: decode::deprecation(self.deprecated, self.deprecation_message),
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct TokenRow {
    id: String,
    description: String,
    namespaces: String,
    actions: String,
    created_at: Timestamp,
    revoked_at: Option<Timestamp>,
    expires_at: Option<i64>,
    publisher: Option<String>,
    claims: Option<String>,
}

impl TokenRow {
    pub(super) fn decode(self) -> Result<TokenRecord> {
        Ok(TokenRecord {
            scope: decode::scope(&self.namespaces)?,
            actions: decode::actions(&self.actions)?,
            id: self.id,
            description: self.description,
            created_at: self.created_at,
            revoked_at: self.revoked_at,
            expires_at: self.expires_at,
            publisher: self.publisher,
            claims: self.claims,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct AuditRow {
    id: i64,
    at: Timestamp,
    actor: String,
    action: String,
    namespace: Option<String>,
    name: Option<String>,
    version: Option<String>,
    details: String,
}

impl AuditRow {
    pub(super) fn decode(self) -> Result<AuditRecord> {
        Ok(AuditRecord {
            details: decode::json("audit details", &self.details)?,
            id: self.id,
            at: self.at,
            actor: self.actor,
            action: self.action,
            namespace: self.namespace,
            name: self.name,
            version: self.version,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct SourceRow {
    id: i64,
    namespace: String,
    kind: String,
    location: String,
    reference: String,
    subpath: String,
    fix: bool,
    created_at: Timestamp,
    synced_at: Option<Timestamp>,
    revision: Option<String>,
}

impl SourceRow {
    pub(super) fn decode(self) -> Result<SourceRecord> {
        Ok(SourceRecord {
            id: self.id,
            namespace: decode::namespace(&self.namespace)?,
            spec: SourceSpec {
                kind: decode::source_kind(&self.kind)?,
                location: self.location,
                reference: Some(self.reference).filter(|r| !r.is_empty()),
                subpath: self.subpath,
                fix: self.fix,
            },
            created_at: self.created_at,
            synced_at: self.synced_at,
            revision: self.revision,
        })
    }
}

/// A source's skill: (name, removed).
pub(super) type SourceMemberRow = (String, bool);

pub(super) fn source_member((name, removed): SourceMemberRow) -> Result<SourceMember> {
    Ok(SourceMember {
        name: decode::name(&name)?,
        removed,
    })
}

/// The provenance column of a new version.
pub(super) fn provenance_text(new: &super::NewVersion<'_>) -> Result<Option<String>> {
    new.provenance
        .map(|p| serde_json::to_string(p).map_err(|e| StoreError::corrupt("provenance", e)))
        .transpose()
}

/// A version's signatures column: `NULL` when it was stored unsigned.
pub(super) fn signatures_text(new: &super::NewVersion<'_>) -> Result<Option<String>> {
    if new.signatures.is_empty() {
        return Ok(None);
    }
    let signed: Vec<_> = new.signatures.iter().map(|(signed, _)| signed).collect();
    json_text(&signed).map(Some)
}

/// Decode every row of a query.
pub(super) fn decode_all<R, T>(rows: Vec<R>, decode: impl Fn(R) -> Result<T>) -> Result<Vec<T>> {
    rows.into_iter().map(decode).collect()
}

/// A version with its scan (`findings_page`, `scan_targets`) or its revocation
/// (`revocations`): the columns each query selects.
#[derive(sqlx::FromRow)]
pub(super) struct TrustRow {
    version_id: i64,
    namespace: String,
    name: String,
    version: String,
    content_digest: String,
    published_at: Timestamp,
    verdict: String,
    findings: String,
    revoked_at: Option<Timestamp>,
    revoke_reason: Option<String>,
    pending: bool,
}

impl TrustRow {
    fn version(&self) -> Result<VersionRef> {
        Ok(decode::skill(&self.namespace, &self.name)?.at(decode::version(&self.version)?))
    }

    pub(super) fn findings(self) -> Result<FindingsRecord> {
        Ok(FindingsRecord {
            version: self.version()?,
            version_id: self.version_id,
            content_digest: decode::digest(&self.content_digest)?,
            scan: decode::scan(&self.verdict, &self.findings)?,
            published_at: self.published_at,
            pending: self.pending,
        })
    }

    pub(super) fn target(self) -> Result<ScanTarget> {
        Ok(ScanTarget {
            version: self.version()?,
            version_id: self.version_id,
            scan: decode::scan(&self.verdict, &self.findings)?,
        })
    }

    pub(super) fn revocation(self) -> Result<RevocationRecord> {
        Ok(RevocationRecord {
            version: self.version()?,
            version_id: self.version_id,
            content_digest: decode::digest(&self.content_digest)?,
            revoked_at: self
                .revoked_at
                .ok_or_else(|| StoreError::Corrupt("a revocation without a time".into()))?,
            reason: self.revoke_reason.unwrap_or_default(),
            pending: self.pending,
        })
    }
}

/// The audit action and details of a withdrawal (`reason: None` reverses it).
pub(super) fn withdrawal_audit(kind: Withdrawal, reason: Option<&str>) -> (&'static str, Value) {
    match (kind, reason) {
        (Withdrawal::Yank, Some(r)) => ("yank", serde_json::json!({ "reason": r })),
        (Withdrawal::Yank, None) => ("unyank", serde_json::json!({})),
        (Withdrawal::Revoke, Some(r)) => ("revoke", serde_json::json!({ "reason": r })),
        (Withdrawal::Revoke, None) => ("unrevoke", serde_json::json!({})),
    }
}

/// The audit action of turning a namespace's review gate on or off.
pub(super) fn review_audit(required: bool) -> &'static str {
    if required {
        "namespace_review_required"
    } else {
        "namespace_review_off"
    }
}

/// The audit details of a rescan that changed a version's verdict or findings.
pub(super) fn rescan_audit(before: &Scan, after: &Scan) -> Value {
    serde_json::json!({
        "from": before.verdict,
        "to": after.verdict,
        "findings_before": before.findings.len(),
        "findings": after.findings.len(),
    })
}

// ---- writes -------------------------------------------------------------------------------------

/// What an audit row is about.
pub(super) enum Target<'a> {
    None,
    Skill(&'a SkillRef),
    Version(&'a SkillRef, &'a str),
}

impl Target<'_> {
    /// The audit row's (namespace, name, version) columns.
    pub(super) fn columns(&self) -> (Option<&str>, Option<&str>, Option<&str>) {
        match self {
            Self::None => (None, None, None),
            Self::Skill(s) => (Some(s.namespace.as_str()), Some(s.name.as_str()), None),
            Self::Version(s, v) => (Some(s.namespace.as_str()), Some(s.name.as_str()), Some(v)),
        }
    }
}

/// The content digests of `len` versions asked for together, from the `(position, digest)` of
/// those that exist ([`crate::store::Catalog::content_digests`]).
pub(super) fn digests_by_position(
    len: usize,
    found: impl IntoIterator<Item = (usize, String)>,
) -> Result<Vec<Option<Digest>>> {
    let mut out = vec![None; len];
    for (i, digest) in found {
        let slot = out
            .get_mut(i)
            .ok_or_else(|| StoreError::Corrupt(format!("content digest of version {i}")))?;
        *slot = Some(decode::digest(&digest)?);
    }
    Ok(out)
}

/// The current version among a skill's non-yanked `(id, version)` rows.
pub(super) fn current_version(rows: Vec<(i64, String)>) -> Result<Option<i64>> {
    let parsed: Vec<(i64, SkillVersion)> = rows
        .into_iter()
        .map(|(id, v)| Ok((id, decode::version(&v)?)))
        .collect::<Result<_>>()?;
    Ok(pick_current(parsed.iter().map(|(_, v)| v))
        .and_then(|best| parsed.iter().find(|(_, v)| v == best))
        .map(|(id, _)| *id))
}

/// The listing rows `(uri, subpath)` of a skill's entries: the URI of each entry's SKILL.md.
pub(super) fn listing_rows(skill: &SkillRef, subpaths: Vec<String>) -> Vec<(String, String)> {
    use crate::core::uri::SKILL_MD;
    let root = skill.root_uri(None);
    subpaths
        .into_iter()
        .map(|subpath| {
            let uri = if subpath.is_empty() {
                root.join(SKILL_MD).to_string()
            } else {
                root.join(&format!("{subpath}/{SKILL_MD}")).to_string()
            };
            (uri, subpath)
        })
        .collect()
}

/// A JSON column's text (serialising our own values cannot fail; a failure is reported, not
/// defaulted).
pub(super) fn json_text(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::corrupt("encoding a JSON column", e))
}

/// The audit details of a publish: the content digest and every file's digest and size.
pub(super) fn publish_details(new: &super::NewVersion<'_>) -> Value {
    let mut details = serde_json::json!({
        "content_digest": new.bundle.content_digest.to_string(),
        "files": new.bundle.files.iter().map(|f| serde_json::json!({
            "path": f.path.as_str(), "digest": f.digest.to_string(), "size": f.bytes.len(),
        })).collect::<Vec<_>>(),
    });
    if let Some(p) = new.provenance {
        details["source"] = serde_json::json!(p);
    }
    details
}

/// The event of a publish (`version`: the version's text): its content digest, and its source
/// when a source stored it.
pub(super) fn publish_event<'a>(
    new: &super::NewVersion<'_>,
    skill: &'a crate::core::SkillRef,
    version: &'a str,
) -> crate::core::event::NewEvent<'a> {
    let mut payload = serde_json::json!({
        "content_digest": new.bundle.content_digest.to_string(),
    });
    if let Some(p) = new.provenance {
        payload["source"] = serde_json::json!(p);
    }
    crate::core::event::NewEvent {
        kind: crate::core::event::EventKind::Published,
        namespace: skill.namespace.as_str(),
        name: Some(skill.name.as_str()),
        version: Some(version),
        pending: new.pending,
        payload,
    }
}

/// The parameters of a visibility condition: the mode (2 every namespace, 1 the public ones
/// and the named, 0 the named only) and the named namespaces.
pub(super) fn visibility_mode(visibility: &Visibility) -> (i64, Vec<&str>) {
    let mode = match visibility {
        Visibility::All => 2,
        Visibility::Public { .. } => 1,
        Visibility::Only(_) => 0,
    };
    (
        mode,
        visibility.named().iter().map(|n| n.as_str()).collect(),
    )
}

/// Split `rows` into runs whose lengths are powers of two (at most 64): multi-row INSERTs of
/// those sizes need only a handful of distinct prepared statements, whatever the row count.
pub(super) fn pow2_chunks<T>(mut rows: &[T]) -> impl Iterator<Item = &[T]> {
    const MAX: usize = 64;
    std::iter::from_fn(move || {
        if rows.is_empty() {
            return None;
        }
        let size = if rows.len() >= MAX {
            MAX
        } else {
            1 << rows.len().ilog2()
        };
        let (head, tail) = rows.split_at(size);
        rows = tail;
        Some(head)
    })
}

// ---- completion ---------------------------------------------------------------------------------

/// Completion ranks at most this many prefix matches (name order) by recency.
pub(super) const CANDIDATES: i64 = 500;
/// Completion totals count at most this many matches.
pub(super) const COUNT_CAP: i64 = super::COMPLETION_COUNT_CAP as i64;

/// How name completion across namespaces applies what a caller sees. A caller who sees only a
/// few named namespaces is answered namespace by namespace, on `(namespace_id, name)`; any other
/// caller by one scan in name order that skips the namespaces it may not see (the private ones
/// it holds no token for, or every one beyond its few).
pub(super) fn namespace_by_namespace(visibility: &Visibility) -> bool {
    /// Beyond this many named namespaces a scan in name order finds its matches sooner.
    const FEW: usize = 16;
    matches!(visibility, Visibility::Only(named) if named.len() <= FEW)
}

/// `[lo, hi)` covering every ASCII name that starts with `prefix` (names are ASCII).
pub(super) fn prefix_range(prefix: &str) -> (String, String) {
    (
        prefix.to_owned(),
        prefix_upper(prefix).unwrap_or_else(|| "\u{7f}".to_owned()),
    )
}

/// The smallest string greater than every string starting with `prefix` (names are ASCII), or
/// `None` for the empty prefix.
fn prefix_upper(prefix: &str) -> Option<String> {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0x7f {
            bytes.push(last + 1);
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

pub(super) fn count(total: i64) -> Result<u64> {
    u64::try_from(total).map_err(|e| StoreError::corrupt("a count", e))
}

// ---- maintenance --------------------------------------------------------------------------------

/// The catalog counters from their `(key, value)` rows.
pub(super) fn stats(counters: Vec<(String, i64)>) -> Stats {
    let mut stats = Stats::default();
    for (key, value) in counters {
        let slot = match key.as_str() {
            "count_namespaces" => &mut stats.namespaces,
            "count_skills" => &mut stats.skills,
            "count_versions" => &mut stats.versions,
            "count_files" => &mut stats.files,
            "count_blobs" => &mut stats.blobs,
            "count_blob_bytes" => &mut stats.blob_bytes,
            "count_audit_entries" => &mut stats.audit_entries,
            "count_tokens" => &mut stats.tokens,
            _ => continue,
        };
        *slot = value;
    }
    stats
}

/// The same eight numbers counted from the tables, as one row.
pub(super) type Counted = (i64, i64, i64, i64, i64, i64, i64, i64);

pub(super) fn counted(row: Counted) -> Stats {
    let (namespaces, skills, versions, files, blobs, blob_bytes, audit_entries, tokens) = row;
    Stats {
        namespaces,
        skills,
        versions,
        files,
        blobs,
        blob_bytes,
        audit_entries,
        tokens,
    }
}

/// The findings of a scrub, whichever engine ran its queries: each check adds its problems
/// in the same words.
#[derive(Default)]
pub(super) struct Scrub {
    pub(super) report: VerifyReport,
}

impl Scrub {
    /// A stored blob: its bytes must hash to its digest and have its recorded size.
    pub(super) fn blob(&mut self, digest: &str, size: i64, data: &[u8]) {
        let report = &mut self.report;
        report.blobs_checked += 1;
        report.bytes_checked += data.len() as u64;
        let actual = crate::core::Digest::of(data).to_string();
        if actual != digest {
            report
                .problems
                .push(format!("blob {digest}: its bytes hash to {actual}"));
        } else if data.len() as i64 != size {
            report.problems.push(format!(
                "blob {digest}: {} bytes, recorded as {size}",
                data.len()
            ));
        }
    }

    /// File rows `(version, path, digest)` whose blob is missing.
    pub(super) fn dangling(&mut self, rows: Vec<(i64, String, String)>) {
        for (version, path, digest) in rows {
            self.report.problems.push(format!(
                "version {version}: {path} points at missing blob {digest}"
            ));
        }
    }

    /// File rows `(version, path)` whose size differs from their blob's.
    pub(super) fn size_mismatch(&mut self, rows: Vec<(i64, String)>) {
        for (version, path) in rows {
            self.report.problems.push(format!(
                "version {version}: {path} has a size different from its blob"
            ));
        }
    }

    /// A run of file rows `(version, content digest, path, mode, file digest)` in version and
    /// path order: each version's recorded content digest must be the one its files give.
    /// Returns the last version seen, where the next run starts.
    pub(super) fn content_digests(
        &mut self,
        rows: &[(i64, String, String, i64, String)],
    ) -> Option<i64> {
        for version in rows.chunk_by(|a, b| a.0 == b.0) {
            let (id, recorded) = (version[0].0, &version[0].1);
            let files: Result<Vec<(&str, u32, crate::core::Digest)>> = version
                .iter()
                .map(|(_, _, path, mode, digest)| {
                    Ok((path.as_str(), *mode as u32, decode::digest(digest)?))
                })
                .collect();
            let actual = files.map(|files| {
                crate::core::bundle::content_digest(files.iter().map(|(p, m, d)| (*p, *m, d)))
                    .to_string()
            });
            match actual {
                Ok(actual) if actual == *recorded => {}
                Ok(actual) => self.report.problems.push(format!(
                    "version {id}: its files give content digest {actual}, recorded as {recorded}"
                )),
                Err(e) => self.report.problems.push(format!("version {id}: {e}")),
            }
        }
        rows.last().map(|r| r.0)
    }

    /// Versions without a SKILL.md or a root entry.
    pub(super) fn rootless(&mut self, versions: Vec<i64>) {
        for v in versions {
            self.report
                .problems
                .push(format!("version {v} has no SKILL.md or no root entry"));
        }
    }

    /// Versions whose file count differs from their file rows'.
    pub(super) fn file_counts(&mut self, versions: Vec<i64>) {
        for v in versions {
            self.report
                .problems
                .push(format!("version {v} does not have the files it recorded"));
        }
    }

    /// Listing rows that do not point at their skill's current version.
    pub(super) fn stale_listing(&mut self, uris: Vec<String>) {
        for uri in uris {
            self.report.problems.push(format!(
                "listing {uri} does not point at the current version"
            ));
        }
    }

    /// The counters kept by triggers against the tables' real counts.
    pub(super) fn counters(&mut self, kept: Stats, real: Stats) {
        if kept != real {
            self.report.problems.push(format!(
                "the catalog counters say {kept:?}, the tables hold {real:?}"
            ));
        }
    }

    pub(super) fn problem(&mut self, problem: String) {
        self.report.problems.push(problem);
    }
}

#[cfg(test)]
mod tests {
    use super::{pow2_chunks, prefix_range, prefix_upper};

    #[test]
    fn pow2_chunks_cover_every_row_in_power_of_two_runs() {
        for n in 0..200usize {
            let rows: Vec<usize> = (0..n).collect();
            let chunks: Vec<&[usize]> = pow2_chunks(&rows).collect();
            assert_eq!(chunks.concat(), rows, "n = {n}");
            assert!(
                chunks
                    .iter()
                    .all(|c| c.len().is_power_of_two() && c.len() <= 64),
                "n = {n}"
            );
        }
    }

    #[test]
    fn prefix_ranges_cover_exactly_the_names_with_the_prefix() {
        assert_eq!(prefix_upper("ab"), Some("ac".to_owned()));
        assert_eq!(prefix_upper("a\u{7f}"), Some("b".to_owned()));
        assert_eq!(prefix_upper(""), None);
        let (lo, hi) = prefix_range("pdf");
        for (name, inside) in [
            ("pdf", true),
            ("pdf-tools", true),
            ("pde", false),
            ("pdg", false),
        ] {
            assert_eq!(name >= lo.as_str() && name < hi.as_str(), inside, "{name}");
        }
        let (lo, hi) = prefix_range("");
        assert!("a" >= lo.as_str() && "zz-9" < hi.as_str());
    }
}
