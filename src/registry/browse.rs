//! Browsing large catalogs: completion for the resource templates, the legacy
//! `skill://index.json`, and FastMCP's `_manifest`.

use serde_json::{Value, json};

use super::Registry;
use crate::core::uri::{TEMPLATE_PINNED_SKILL_MD, TEMPLATE_SKILL_MD};
use crate::core::{Namespace, SkillName, SkillVersion};
use crate::error::{Error, Result};

/// Most values one completion returns (MCP caps it at 100).
pub const MAX_COMPLETIONS: usize = 100;
/// Skills listed in a partial `skill://index.json`.
pub const PARTIAL_INDEX_SKILLS: usize = 20;
/// `$schema` of the discovery index (Agent Skills discovery 0.2.0).
pub const INDEX_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Completion values with the total number of matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub values: Vec<String>,
    pub total: u64,
}

impl Completion {
    pub fn has_more(&self) -> bool {
        self.total > self.values.len() as u64
    }

    fn empty() -> Self {
        Self {
            values: Vec::new(),
            total: 0,
        }
    }
}

/// Exact match first, then the rest in the order given, capped.
fn exact_first(mut values: Vec<String>, value: &str) -> Vec<String> {
    if let Some(i) = values.iter().position(|v| v == value) {
        let exact = values.remove(i);
        values.insert(0, exact);
    }
    values.truncate(MAX_COMPLETIONS);
    values
}

impl Registry {
    /// Complete template variable `argument` from the typed `value` and the variables already
    /// resolved in `context`. Unknown or invalid context gives no values (never an error).
    pub async fn complete(
        &self,
        argument: &str,
        value: &str,
        context: &std::collections::HashMap<String, String>,
    ) -> Result<Completion> {
        let started = std::time::Instant::now();
        let result = self.complete_inner(argument, value, context).await;
        crate::metrics::completion(started);
        result
    }

    async fn complete_inner(
        &self,
        argument: &str,
        value: &str,
        context: &std::collections::HashMap<String, String>,
    ) -> Result<Completion> {
        let namespace = context
            .get("namespace")
            .and_then(|n| Namespace::new(n).ok());
        let name = context.get("name").and_then(|n| SkillName::new(n).ok());
        let limit = MAX_COMPLETIONS as u32;
        match argument {
            "namespace" => {
                if value.len() > 64 {
                    return Ok(Completion::empty());
                }
                let (values, total) = self.store().complete_namespaces(value, limit).await?;
                Ok(Completion {
                    values: exact_first(values, value),
                    total: total as u64,
                })
            }
            "name" => {
                if value.len() > 64 || (context.contains_key("namespace") && namespace.is_none()) {
                    return Ok(Completion::empty());
                }
                let ns = namespace.as_ref().map(Namespace::as_str);
                let (values, total) = self.store().complete_names(ns, value, limit).await?;
                Ok(Completion {
                    values: exact_first(values, value),
                    total: total as u64,
                })
            }
            "version" => {
                let (Some(ns), Some(name)) = (namespace, name) else {
                    return Ok(Completion::empty());
                };
                let Some(skill) = self.store().skill(ns.as_str(), name.as_str()).await? else {
                    return Ok(Completion::empty());
                };
                let mut versions: Vec<SkillVersion> = self
                    .store()
                    .versions(skill.id)
                    .await?
                    .into_iter()
                    .filter(|v| v.version.starts_with(value))
                    .filter_map(|v| SkillVersion::parse(&v.version).ok())
                    .collect();
                versions.sort_by(|a, b| b.cmp(a));
                let total = versions.len() as u64;
                let values = versions.iter().map(ToString::to_string).collect();
                Ok(Completion {
                    values: exact_first(values, value),
                    total,
                })
            }
            "path" => {
                let (Some(ns), Some(name)) = (namespace, name) else {
                    return Ok(Completion::empty());
                };
                let version = context
                    .get("version")
                    .map(|v| SkillVersion::parse(v))
                    .transpose();
                let Ok(version) = version else {
                    return Ok(Completion::empty());
                };
                let uri = crate::core::SkillUri {
                    namespace: ns,
                    name,
                    version,
                    target: crate::core::Target::Root,
                };
                let Some((_, manifest)) = self.resolve(&uri).await? else {
                    return Ok(Completion::empty());
                };
                let matching: Vec<String> = manifest
                    .files
                    .iter()
                    .filter(|f| f.path.starts_with(value))
                    .map(|f| f.path.clone())
                    .collect();
                let total = matching.len() as u64;
                Ok(Completion {
                    values: exact_first(matching, value),
                    total,
                })
            }
            other => Err(Error::InvalidRequest(format!(
                "no template variable named {other:?}"
            ))),
        }
    }

    /// The legacy discovery index: every current skill while there are at most `max_skills`,
    /// otherwise a partial index (the templates plus the first skills in URI order).
    pub async fn index_json(&self, max_skills: usize) -> Result<Value> {
        let rows = self
            .store()
            .list_page("", (max_skills + 1).min(u32::MAX as usize) as u32)
            .await?;
        let partial = rows.len() > max_skills;
        let shown = if partial {
            PARTIAL_INDEX_SKILLS.min(max_skills)
        } else {
            rows.len()
        };
        let mut skills: Vec<Value> = rows
            .into_iter()
            .take(shown)
            .map(|r| json!({"name": r.name, "type": "skill-md", "description": r.description, "url": r.uri}))
            .collect();
        skills.push(json!({
            "type": "mcp-resource-template",
            "description": "The current version of any skill: complete namespace, then name.",
            "url": TEMPLATE_SKILL_MD,
        }));
        skills.push(json!({
            "type": "mcp-resource-template",
            "description": "One pinned version of any skill: complete namespace, name, then version.",
            "url": TEMPLATE_PINNED_SKILL_MD,
        }));
        Ok(json!({ "$schema": INDEX_SCHEMA, "skills": skills }))
    }

    /// FastMCP's manifest of the skill at `uri` (`skill://ns/name/_manifest`, current or pinned):
    /// `{"skill": name, "files": [{"path", "size", "hash"}]}`.
    pub(super) async fn fastmcp_manifest(
        &self,
        uri: &crate::core::SkillUri,
    ) -> Result<Option<Vec<u8>>> {
        let Some((_, manifest)) = self.resolve(uri).await? else {
            return Ok(None);
        };
        let files: Vec<Value> = manifest
            .files
            .iter()
            .map(|f| json!({"path": f.path, "size": f.size, "hash": f.digest}))
            .collect();
        let body = json!({ "skill": uri.name.as_str(), "files": files });
        Ok(Some(serde_json::to_vec_pretty(&body).unwrap_or_default()))
    }
}
