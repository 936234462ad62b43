//! Completion for the resource templates: a host types a few letters of a namespace, a name, a
//! version or a path, and gets the matching values, however large the catalog.

use std::collections::HashMap;

use super::Reads;
use crate::core::{Namespace, SkillName, SkillRef, SkillVersion, Visibility};
use crate::error::{Error, Result};
use crate::registry::current::Completing;

/// Most values one completion returns (MCP caps it at 100).
pub const MAX_COMPLETIONS: usize = 100;

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

    /// The exact match first, then the rest in the order given, capped.
    fn exact_first(mut values: Vec<String>, value: &str, total: u64) -> Self {
        if let Some(i) = values.iter().position(|v| v == value) {
            let exact = values.remove(i);
            values.insert(0, exact);
        }
        values.truncate(MAX_COMPLETIONS);
        Self { values, total }
    }
}

/// Longest namespace or name prefix worth looking up (names are at most 64 characters).
const MAX_PREFIX: usize = 64;

impl Reads {
    /// Complete template variable `argument` from the typed `value` and the variables already
    /// resolved in `context`. Unknown or invalid context gives no values (never an error).
    pub async fn complete(
        &self,
        viewer: &Visibility,
        argument: &str,
        value: &str,
        context: &HashMap<String, String>,
    ) -> Result<Completion> {
        let started = std::time::Instant::now();
        let result = self.complete_inner(viewer, argument, value, context).await;
        crate::metrics::completion(started);
        result
    }

    async fn complete_inner(
        &self,
        viewer: &Visibility,
        argument: &str,
        value: &str,
        context: &HashMap<String, String>,
    ) -> Result<Completion> {
        let namespace = context
            .get("namespace")
            .and_then(|n| Namespace::new(n).ok());
        let name = context.get("name").and_then(|n| SkillName::new(n).ok());
        let limit = MAX_COMPLETIONS as u32;
        match argument {
            "namespace" => {
                if value.len() > MAX_PREFIX {
                    return Ok(Completion::empty());
                }
                let key = (
                    Completing::Namespace,
                    None,
                    value.to_owned(),
                    viewer.clone(),
                );
                let fetch = self.store.complete_namespaces(value, limit, viewer);
                let (values, total) = self.cached_completion(key, fetch).await?;
                Ok(Completion::exact_first(values, value, total))
            }
            "name" => {
                if value.len() > MAX_PREFIX
                    || (context.contains_key("namespace") && namespace.is_none())
                {
                    return Ok(Completion::empty());
                }
                let key = (
                    Completing::Name,
                    namespace.clone(),
                    value.to_owned(),
                    viewer.clone(),
                );
                let fetch = self
                    .store
                    .complete_names(namespace.as_ref(), value, limit, viewer);
                let (values, total) = self.cached_completion(key, fetch).await?;
                Ok(Completion::exact_first(values, value, total))
            }
            "version" => {
                let (Some(ns), Some(name)) = (namespace, name) else {
                    return Ok(Completion::empty());
                };
                let Some(skill) = self
                    .store
                    .skill(&SkillRef::new(ns, name))
                    .await?
                    .filter(|s| viewer.sees(&s.skill.namespace, s.private))
                else {
                    return Ok(Completion::empty());
                };
                let mut versions: Vec<SkillVersion> = self
                    .store
                    .versions(skill.id)
                    .await?
                    .into_iter()
                    // A version pending review is never served over MCP, whoever asks.
                    .filter(|v| !v.pending)
                    .map(|v| v.version)
                    .filter(|v| v.to_string().starts_with(value))
                    .collect();
                versions.sort_by(|a, b| b.cmp(a));
                let total = versions.len() as u64;
                let values = versions.iter().map(ToString::to_string).collect();
                Ok(Completion::exact_first(values, value, total))
            }
            "path" => {
                let (Some(ns), Some(name)) = (namespace, name) else {
                    return Ok(Completion::empty());
                };
                let Ok(version) = context
                    .get("version")
                    .map(|v| SkillVersion::parse(v))
                    .transpose()
                else {
                    return Ok(Completion::empty());
                };
                let Some((_, manifest)) = self
                    .resolve_visible(viewer, &SkillRef::new(ns, name), version.as_ref())
                    .await?
                else {
                    return Ok(Completion::empty());
                };
                let matching: Vec<String> = manifest
                    .files
                    .iter()
                    .filter(|f| f.path.starts_with(value))
                    .map(|f| f.path.clone())
                    .collect();
                let total = matching.len() as u64;
                Ok(Completion::exact_first(matching, value, total))
            }
            other => Err(Error::InvalidRequest(format!(
                "no template variable named {:?}",
                other.chars().take(64).collect::<String>()
            ))),
        }
    }

    /// A namespace or name completion from the cache, or from `fetch` (then cached; dropped with
    /// every change, like resolutions).
    async fn cached_completion(
        &self,
        key: crate::registry::current::CompletionKey,
        fetch: impl std::future::Future<Output = crate::store::Result<(Vec<String>, u64)>>,
    ) -> Result<(Vec<String>, u64)> {
        if let Some(hit) = self.current.completions.get(&key) {
            return Ok(hit);
        }
        let found = fetch.await?;
        self.current.completions.insert(key, found.clone());
        Ok(found)
    }
}
