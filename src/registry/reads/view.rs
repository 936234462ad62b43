//! The read model: one vocabulary for a skill, a version and a file, which every transport maps
//! its own wire shape from (REST in `http/api.rs`, ClawHub in `http/clawhub.rs`, the web page,
//! and MCP).
//!
//! - [`SkillView`]: a skill, as a catalog page lists it and as its detail heads it;
//! - [`VersionView`]: one version with its state (yank, revocation, review, scan);
//! - [`SkillDetail`], [`VersionDetail`]: a skill with its versions, a version with its manifest;
//! - a file is [`FileRecord`] (path, digest, size, mode) everywhere: in a manifest, a publish's
//!   answer, a version's detail and MCP's entries.
//!
//! MCP's `skills/list` and `skills/get` serve [`super::SkillEntry`] instead of a `VersionView`:
//! an entry is built on the hot path from a listing row or a cached resolution and the version's
//! manifest, and reads no version row (no publisher, times or digest, which MCP never shows). Its
//! state fields (`version`, `yanked`, `deprecation`, `scan`) mean what they mean here.

use serde_json::{Map, Value};

use crate::core::provenance::Provenance;
use crate::core::records::FileRecord;
use crate::core::scan::{Finding, Summary};
use crate::core::{Digest, SkillRef, SkillVersion, Timestamp, VersionRef, Warning};
use crate::store::{CatalogRecord, SkillRecord, VersionRecord};

/// A skill as every transport shows it.
#[derive(Debug, Clone)]
pub struct SkillView {
    pub skill: SkillRef,
    /// `None` when every version is yanked.
    pub current_version: Option<SkillVersion>,
    /// The current version's description.
    pub description: Option<String>,
    /// The deprecation message when the skill is deprecated (empty when none was given).
    pub deprecation: Option<String>,
    /// When the skill was first published.
    pub created_at: Timestamp,
    /// When a version of it was last published (not counting versions pending review).
    pub last_published_at: Option<Timestamp>,
    /// When the current version was published.
    pub current_published_at: Option<Timestamp>,
}

impl SkillView {
    pub(super) fn listed(r: CatalogRecord) -> Self {
        Self {
            skill: r.skill,
            current_version: r.current_version,
            description: r.description,
            deprecation: r.deprecation,
            created_at: r.created_at,
            last_published_at: r.last_published_at,
            current_published_at: r.current_published_at,
        }
    }

    /// A stored skill, with its current version's `description` (from its manifest).
    pub(super) fn stored(r: SkillRecord, description: Option<String>) -> Self {
        Self {
            deprecation: r
                .deprecated_at
                .as_ref()
                .map(|_| r.deprecation_message.unwrap_or_default()),
            skill: r.skill,
            current_version: r.current_version,
            description,
            created_at: r.created_at,
            last_published_at: r.last_published_at,
            current_published_at: r.current_published_at,
        }
    }
}

/// A skill as a page of the web catalog lists it: with its current version's verdict and
/// where that version came from.
#[derive(Debug, Clone)]
pub struct ListedSkill {
    pub skill: SkillView,
    /// The current version's scan verdict (`None` when every version is yanked).
    pub verdict: Option<crate::core::scan::Verdict>,
    /// Where the current version was read from (`None`: published directly).
    pub provenance: Option<Provenance>,
    /// The current version was published from CI (trusted publishing).
    pub from_ci: bool,
    /// Its reads counted so far (a page of the catalog; 0 in search results' rows).
    pub reads: u64,
}

impl ListedSkill {
    pub(super) fn listed(mut r: CatalogRecord) -> Self {
        let (verdict, provenance, from_ci, reads) = (
            r.current_verdict.take(),
            r.current_provenance.take(),
            r.current_from_ci,
            r.reads,
        );
        Self {
            skill: SkillView::listed(r),
            verdict,
            provenance,
            from_ci,
            reads,
        }
    }
}

/// A skill with all its versions.
#[derive(Debug, Clone)]
pub struct SkillDetail {
    pub skill: SkillView,
    pub deprecated_at: Option<Timestamp>,
    /// The current versions of other skills that require it, those the caller sees.
    pub required_by: Vec<crate::registry::Dependent>,
    /// Newest first by semver precedence; those the caller sees.
    pub versions: Vec<VersionView>,
}

/// One version of a skill, with its state.
#[derive(Debug, Clone)]
pub struct VersionView {
    pub version: VersionRef,
    pub content_digest: Digest,
    pub file_count: u64,
    pub total_size: u64,
    pub published_at: Timestamp,
    pub published_by: Option<String>,
    pub yanked_at: Option<Timestamp>,
    pub yank_reason: Option<String>,
    pub revoked_at: Option<Timestamp>,
    pub revoke_reason: Option<String>,
    pub scan: Summary,
    /// Waiting for review (shown only to holders of the namespace's tokens).
    pub pending: bool,
}

impl VersionView {
    pub(super) fn new(skill: &SkillRef, row: &VersionRecord) -> Self {
        Self {
            version: skill.clone().at(row.version.clone()),
            content_digest: row.content_digest,
            file_count: row.file_count,
            total_size: row.total_size,
            published_at: row.published_at,
            published_by: row.published_by.clone(),
            yanked_at: row.yanked_at,
            yank_reason: row.yank_reason.clone(),
            revoked_at: row.revoked_at,
            revoke_reason: row.revoke_reason.clone(),
            scan: row.scan.summary(),
            pending: row.pending,
        }
    }
}

/// One version with its manifest.
#[derive(Debug, Clone)]
pub struct VersionDetail {
    pub version: VersionView,
    pub frontmatter: Map<String, Value>,
    pub warnings: Vec<Warning>,
    /// What the content scan found (the verdict is in `version.scan`).
    pub findings: Vec<Finding>,
    pub files: Vec<FileRecord>,
    /// Where the registry read the version from, when it read it itself.
    pub provenance: Option<Provenance>,
    /// Who signed it (the bundles: [`super::Reads::signatures`]).
    pub signatures: Vec<crate::core::signature::Signed>,
    /// Who published it from CI (trusted publishing).
    pub publisher: Option<Map<String, Value>>,
    /// What it requires, resolved now; `None` when it requires nothing.
    pub requires: Option<crate::registry::Resolved>,
}
