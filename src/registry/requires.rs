//! The requirement graph: what each version requires (`core::requires`), what that resolves to
//! now, and what requires each skill.
//!
//! The declarations never change (a version is immutable); what they resolve to does, with every
//! publish, yank, revocation or approval of a required skill. So the whole graph is read from
//! storage in two statements ([`crate::store::Requirements`]) when first needed, resolved once,
//! and kept as one item of the `requirements` cache, which is dropped on every change made or
//! heard, like every other answer about what is current ([`super::current`]). Skills without
//! requirements cost a lookup in an empty map.
//!
//! A requirement resolves to the newest version of the required skill that anyone who sees the
//! requiring skill may install: neither yanked, revoked nor pending review, and in a public
//! namespace or the requiring skill's own.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::requires::{self, McpRequirement, Requires};
use crate::core::{Namespace, Requirement, SkillRef, SkillVersion, Visibility};
use crate::store::{RequiredSkill, RequiringVersion, VersionId};

/// A version's requirements, each with what it resolves to now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub skills: Vec<ResolvedSkill>,
    pub mcp_servers: Vec<McpRequirement>,
}

/// One required skill: the range as declared, and the version it resolves to now (`None`: no
/// installable version satisfies it any more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSkill {
    pub skill: SkillRef,
    pub range: Requirement,
    pub resolved: Option<SkillVersion>,
}

/// A current version that requires a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependent {
    pub skill: SkillRef,
    pub version: SkillVersion,
    pub range: Requirement,
    /// What the range resolves to now.
    pub resolved: Option<SkillVersion>,
}

/// The whole graph, resolved.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every version that is not revoked and declares requirements, resolved.
    by_version: HashMap<VersionId, Arc<Resolved>>,
    /// Each skill's current version's required skills (the edges a cycle is looked for along).
    current: HashMap<SkillRef, Vec<SkillRef>>,
    /// The current versions that require each skill.
    dependents: HashMap<SkillRef, Vec<Dependent>>,
    /// The installable versions of every required skill, newest first, and its privacy.
    required: HashMap<SkillRef, RequiredSkill>,
}

impl Graph {
    pub(super) fn build(versions: Vec<RequiringVersion>, required: Vec<RequiredSkill>) -> Self {
        let mut graph = Graph {
            required: required.into_iter().map(|r| (r.skill.clone(), r)).collect(),
            ..Graph::default()
        };
        for v in versions {
            let resolved = graph.resolve(&v.skill.namespace, &v.requires);
            if v.current {
                graph.current.insert(
                    v.skill.clone(),
                    v.requires.skills.iter().map(|r| r.skill.clone()).collect(),
                );
                for r in &resolved.skills {
                    graph
                        .dependents
                        .entry(r.skill.clone())
                        .or_default()
                        .push(Dependent {
                            skill: v.skill.clone(),
                            version: v.version.clone(),
                            range: r.range.clone(),
                            resolved: r.resolved.clone(),
                        });
                }
            }
            graph.by_version.insert(v.version_id, Arc::new(resolved));
        }
        graph
    }

    /// Byte weight for the cache budget.
    pub(super) fn weight(&self) -> usize {
        let resolved: usize = self
            .by_version
            .values()
            .map(|r| 96 + r.skills.len() * 160 + r.mcp_servers.len() * 96)
            .sum();
        let required: usize = self
            .required
            .values()
            .map(|r| 96 + r.versions.len() * 48)
            .sum();
        let dependents: usize = self.dependents.values().map(|d| 64 + d.len() * 160).sum();
        resolved + required + dependents + self.current.len() * 96
    }

    /// What `requires` (of a version in `namespace`) resolves to now.
    pub fn resolve(&self, namespace: &Namespace, requires: &Requires) -> Resolved {
        Resolved {
            skills: requires
                .skills
                .iter()
                .map(|r| ResolvedSkill {
                    skill: r.skill.clone(),
                    range: r.range.clone(),
                    resolved: self.newest(namespace, &r.skill, &r.range),
                })
                .collect(),
            mcp_servers: requires.mcp_servers.clone(),
        }
    }

    /// The newest installable version of `skill` within `range` that whoever sees a skill of
    /// `namespace` may install.
    fn newest(
        &self,
        namespace: &Namespace,
        skill: &SkillRef,
        range: &Requirement,
    ) -> Option<SkillVersion> {
        let required = self.required.get(skill)?;
        if required.private && &skill.namespace != namespace {
            return None;
        }
        required.versions.iter().find(|v| range.matches(v)).cloned()
    }

    /// What version `version_id` requires, resolved; `None` when it requires nothing.
    pub fn of(&self, version_id: VersionId) -> Option<Arc<Resolved>> {
        if self.by_version.is_empty() {
            return None;
        }
        self.by_version.get(&version_id).cloned()
    }

    /// Every current version whose requirement resolves to `version` now.
    pub(super) fn needing(&self, version: &crate::core::VersionRef) -> Vec<Dependent> {
        self.dependents
            .get(&version.skill)
            .map(|all| {
                all.iter()
                    .filter(|d| d.resolved.as_ref() == Some(&version.version))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The current versions requiring `skill` that `viewer` sees.
    pub fn dependents(
        &self,
        skill: &SkillRef,
        viewer: &Visibility,
        private: &std::collections::HashSet<Namespace>,
    ) -> Vec<Dependent> {
        self.dependents
            .get(skill)
            .map(|all| {
                all.iter()
                    .filter(|d| {
                        viewer.sees(&d.skill.namespace, private.contains(&d.skill.namespace))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A path from `skill` back to itself if `skill` required `requires` (its other edges as
    /// its current version has them, every other skill's as its current version has them).
    pub(super) fn cycle_through(
        &self,
        skill: &SkillRef,
        requires: &[SkillRef],
        extra: &HashMap<SkillRef, Vec<SkillRef>>,
    ) -> Option<Vec<SkillRef>> {
        requires::find_cycle(skill, |at| {
            if at == skill {
                return requires.to_vec();
            }
            extra
                .get(at)
                .or_else(|| self.current.get(at))
                .cloned()
                .unwrap_or_default()
        })
    }
}
