//! The Agent Skills well-known discovery index (0.2.0) that file-installing clients read
//! (`npx skills add https://registry/s/<namespace>`): which current skills a scope holds, and
//! for each the artifact to download with the digest of its exact bytes. A single-file skill is
//! its SKILL.md; any other is its deterministic `.tar.gz` export, whose digest is computed once
//! per version and cached (the bytes of a version never change, so neither does its digest).

use super::Reads;
use crate::core::{Digest, Namespace, SkillRef, SkillVersion, VersionRef, Visibility};
use crate::error::{Error, Result};

/// What one index lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscoveryScope {
    /// Every current skill the caller sees.
    Catalog,
    Namespace(Namespace),
    Skill(SkillRef),
    /// A pack's members, each at its exact version.
    Pack(Vec<VersionRef>),
}

/// How a skill is downloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Artifact {
    /// The SKILL.md itself (the skill has no other file).
    SkillMd { digest: Digest },
    /// The version's `.tar.gz` export (`GET /v1/skills/…/archive`).
    Archive { digest: Digest },
}

/// One skill of an index: its current version, description and artifact.
#[derive(Debug, Clone)]
pub struct DiscoveryEntry {
    pub version: VersionRef,
    pub description: String,
    pub artifact: Artifact,
    /// What the version requires, resolved now (none for most skills).
    pub requires: Option<std::sync::Arc<crate::registry::Resolved>>,
}

/// Skills read per page while an index is built.
const PAGE: u32 = 500;

impl Reads {
    /// The current skills of `scope` that `viewer` sees, in (namespace, name) order; at most
    /// `max` (an index of more is refused: a client would download every one of them).
    pub async fn discovery(
        &self,
        viewer: &Visibility,
        scope: &DiscoveryScope,
        max: usize,
    ) -> Result<Vec<DiscoveryEntry>> {
        let skills: Vec<(SkillRef, Option<SkillVersion>, String)> = match scope {
            DiscoveryScope::Pack(members) => {
                let mut out = Vec::with_capacity(members.len());
                for member in members {
                    let uri = member.skill_md_uri();
                    let entry = self.get_skill(viewer, &uri).await?;
                    let description = entry
                        .frontmatter()
                        .get("description")
                        .and_then(|d| d.as_str())
                        .unwrap_or_default()
                        .to_owned();
                    out.push((
                        member.skill.clone(),
                        Some(member.version.clone()),
                        description,
                    ));
                }
                out
            }
            DiscoveryScope::Skill(skill) => {
                let entry = self.get_skill(viewer, &skill.skill_md_uri()).await?;
                let description = entry
                    .frontmatter()
                    .get("description")
                    .and_then(|d| d.as_str())
                    .unwrap_or_default()
                    .to_owned();
                vec![(skill.clone(), None, description)]
            }
            DiscoveryScope::Catalog | DiscoveryScope::Namespace(_) => {
                let namespace = match scope {
                    DiscoveryScope::Namespace(ns) => Some(ns),
                    _ => None,
                };
                let mut out = Vec::new();
                let mut cursor = None;
                loop {
                    let page = self
                        .catalog(viewer, namespace, cursor.as_deref(), PAGE)
                        .await?;
                    out.extend(
                        page.items
                            .into_iter()
                            .filter(|i| i.current_version.is_some())
                            .map(|i| (i.skill, None, i.description.unwrap_or_default())),
                    );
                    if out.len() > max {
                        return Err(Error::InvalidRequest(format!(
                            "this index would list more than {max} skills; install one \
                             namespace (/s/<namespace>) or one skill (/s/<namespace>/<name>)"
                        )));
                    }
                    match page.next_cursor {
                        Some(next) => cursor = Some(next),
                        None => break,
                    }
                }
                out
            }
        };
        let mut entries = Vec::with_capacity(skills.len());
        let graph = self.current.requirements().await?;
        for (skill, pinned, description) in skills {
            // The current (or the pack's pinned) version as MCP serves it (pending and revoked
            // ones never are).
            let Some((resolved, manifest)) = self
                .resolve_visible(viewer, &skill, pinned.as_ref())
                .await?
            else {
                continue;
            };
            let version = skill.at(resolved.version);
            let artifact = match manifest.files.as_slice() {
                [only] => Artifact::SkillMd {
                    digest: only.digest,
                },
                _ => Artifact::Archive {
                    digest: self
                        .archive_digest(viewer, &version, manifest.version_id)
                        .await?,
                },
            };
            entries.push(DiscoveryEntry {
                version,
                description,
                artifact,
                requires: graph.of(manifest.version_id),
            });
        }
        Ok(entries)
    }

    /// The digest of `version`'s export (packed once, then remembered).
    async fn archive_digest(
        &self,
        viewer: &Visibility,
        version: &VersionRef,
        version_id: crate::store::VersionId,
    ) -> Result<Digest> {
        if let Some(digest) = self.archive_digests.get(&version_id) {
            return Ok(digest);
        }
        let bytes = self.export(viewer, version).await?;
        let digest = self.heavy.run(move || Digest::of(&bytes)).await?;
        self.archive_digests.insert(version_id, digest);
        Ok(digest)
    }
}
