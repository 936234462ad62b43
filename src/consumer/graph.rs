//! Installing a skill with what it requires: the whole graph resolved against one source
//! (`core::requires::resolve`, one version per skill), fetching only what the resolver asks for.
//!
//! The resolver is pure and asks for data by failing with what it needs; [`plan`] fetches that
//! (a skill's versions by completion, a version's entry by its pinned URI) and runs it again.
//! Each fetch adds one fact, so the loop ends. A version that turns out yanked, revoked or not
//! served is dropped from the skill's versions, and the resolver picks again.

use std::collections::HashMap;

use super::error::{Code, Error, Result};
use super::remote::{Entry, Found, Remote};
use crate::core::requires::{self, Catalog, Member, SkillRequirement, Unresolved};
use crate::core::{Requirement, SkillRef, SkillVersion};

/// One member of a planned install: the skill, the version chosen, who requires it, and the
/// entry to install it from (pinned where the source pins versions).
pub struct Planned {
    pub member: Member,
    pub entry: Entry,
}

/// What has been fetched from the source so far.
#[derive(Default)]
struct Fetched {
    versions: HashMap<SkillRef, Vec<SkillVersion>>,
    entries: HashMap<(SkillRef, SkillVersion), Entry>,
    requires: HashMap<(SkillRef, SkillVersion), Vec<SkillRequirement>>,
}

impl Catalog for Fetched {
    fn versions(&self, skill: &SkillRef) -> Option<&[SkillVersion]> {
        self.versions.get(skill).map(Vec::as_slice)
    }

    fn requires(&self, skill: &SkillRef, version: &SkillVersion) -> Option<&[SkillRequirement]> {
        self.requires
            .get(&(skill.clone(), version.clone()))
            .map(Vec::as_slice)
    }
}

/// The most facts one plan fetches: every version of a large graph.
const MAX_FETCHES: usize = 10_000;

/// Resolve the graph below `roots` at `remote`; `known` are entries already read (the roots'),
/// used instead of fetching them again.
pub async fn plan(
    remote: &Remote,
    roots: &[(SkillRef, Requirement)],
    known: Vec<Entry>,
) -> Result<Vec<Planned>> {
    let mut fetched = Fetched::default();
    for entry in known {
        if let (Some(skill), Some(version)) = (skill_of(&entry), entry.version.clone()) {
            fetched.requires.insert(
                (skill.clone(), version.clone()),
                entry.requires.skills.clone(),
            );
            fetched.entries.insert((skill, version), entry);
        }
    }
    for _ in 0..MAX_FETCHES {
        match requires::resolve(roots, &fetched) {
            Ok(members) => {
                return members
                    .into_iter()
                    .map(|member| {
                        let key = (member.skill.clone(), member.version.clone());
                        let entry = fetched.entries.remove(&key).ok_or_else(|| {
                            Error::new(
                                Code::BadEntry,
                                format!("{}@{}: no entry was read", key.0, key.1),
                            )
                        })?;
                        Ok(Planned { member, entry })
                    })
                    .collect();
            }
            Err(Unresolved::NeedVersions(skill)) => {
                let mut versions = remote
                    .versions(skill.namespace.as_str(), skill.name.as_str())
                    .await;
                if versions.is_empty() {
                    // A source without version completion: its current version only.
                    if let Found::Entry(e) = remote.get(&skill.skill_md_uri().to_string()).await?
                        && e.yanked.is_none()
                        && let Some(v) = e.version.clone()
                    {
                        versions.push(v.clone());
                        fetched
                            .requires
                            .insert((skill.clone(), v.clone()), e.requires.skills.clone());
                        fetched.entries.insert((skill.clone(), v), e);
                    }
                }
                fetched.versions.insert(skill, versions);
            }
            Err(Unresolved::NeedRequires(skill, version)) => {
                let uri = skill.clone().at(version.clone()).skill_md_uri().to_string();
                match remote.get(&uri).await? {
                    Found::Entry(e) if e.yanked.is_none() => {
                        fetched
                            .requires
                            .insert((skill.clone(), version.clone()), e.requires.skills.clone());
                        fetched.entries.insert((skill, version), e);
                    }
                    // Yanked, revoked or gone: not a version to install; choose again.
                    _ => {
                        if let Some(all) = fetched.versions.get_mut(&skill) {
                            all.retain(|v| v != &version);
                        } else {
                            fetched.versions.insert(skill, Vec::new());
                        }
                    }
                }
            }
            Err(Unresolved::Conflict { message, .. }) => {
                return Err(Error::new(
                    Code::DependencyConflict,
                    format!("{message}; nothing was written"),
                ));
            }
        }
    }
    Err(Error::new(
        Code::LimitExceeded,
        format!("the graph needed more than {MAX_FETCHES} reads of the source"),
    ))
}

/// The skill an entry serves, when its URI is a two-segment skillreg path (current or pinned).
pub fn skill_of(entry: &Entry) -> Option<SkillRef> {
    let rest = entry
        .uri
        .strip_prefix("skill://")?
        .strip_suffix("/SKILL.md")?;
    let mut parts: Vec<&str> = rest.split('/').collect();
    if parts.len() == 3 && parts[1].starts_with('@') {
        parts.remove(1);
    }
    match parts.as_slice() {
        [ns, name] => SkillRef::parse(ns, name).ok(),
        _ => None,
    }
}
