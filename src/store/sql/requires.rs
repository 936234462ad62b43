//! [`Requirements`]: what each version requires (migrations `requires`), kept as rows in its
//! publish's transaction ([`insert`], called by each engine's publish) and read whole by the
//! registry, which resolves them in memory. Written once for both engines: each compiles this
//! module with its own `dialect`.

use std::collections::BTreeMap;

use super::dialect::{Conn, Engine, is_unset};
use crate::core::requires::{McpRequirement, Requires, SkillRequirement};
use crate::core::{Namespace, Requirement, SkillName, SkillRef, SkillVersion};
use crate::store::{RequiredSkill, Requirements, RequiringVersion, Result, StoreError};

/// Keep what version `version_id` requires (its publish's transaction): its skills, then its
/// MCP servers, in declaration order.
pub(in crate::store) async fn insert(
    tx: &mut Conn,
    version_id: i64,
    requires: &Requires,
) -> Result<()> {
    let skills = requires.skills.iter().map(|r| {
        (
            Some(r.skill.namespace.as_str()),
            r.skill.name.as_str(),
            Some(r.range.to_string()),
        )
    });
    let servers = requires
        .mcp_servers
        .iter()
        .map(|m| (None, m.name.as_str(), m.registry.clone()));
    for (position, (namespace, name, requirement)) in skills.chain(servers).enumerate() {
        sqlx::query(
            "INSERT INTO version_requires (version_id, position, namespace, name, requirement)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(version_id)
        .bind(position as i64)
        .bind(namespace)
        .bind(name)
        .bind(requirement)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// A row of `version_requires` with its version: id, namespace, name, version, current, then
/// the requirement's namespace, name and requirement.
type RequireRow = (
    i64,
    String,
    String,
    String,
    bool,
    Option<String>,
    String,
    Option<String>,
);

#[async_trait::async_trait]
impl Requirements for Engine {
    async fn requiring_versions(&self) -> Result<Vec<RequiringVersion>> {
        let rows: Vec<RequireRow> = sqlx::query_as(
            "SELECT v.id, ns.name, s.name, v.version,
                    COALESCE(s.current_version_id = v.id, false),
                    r.namespace, r.name, r.requirement
             FROM version_requires r
             JOIN versions v ON v.id = r.version_id
             JOIN skills s ON s.id = v.skill_id
             JOIN namespaces ns ON ns.id = s.namespace_id
             WHERE v.revoked_at IS NULL
             ORDER BY r.version_id, r.position",
        )
        .fetch_all(self.read())
        .await?;
        let mut out: Vec<RequiringVersion> = Vec::new();
        for (id, namespace, name, version, current, req_ns, req_name, requirement) in rows {
            if out.last().is_none_or(|v| v.version_id != id) {
                out.push(RequiringVersion {
                    version_id: id,
                    skill: skill_ref(&namespace, &name)?,
                    version: SkillVersion::parse(&version).map_err(|_| corrupt(&version))?,
                    current,
                    requires: Requires::default(),
                });
            }
            let requires = &mut out.last_mut().expect("pushed above").requires;
            match req_ns {
                Some(ns) => requires.skills.push(SkillRequirement {
                    skill: skill_ref(&ns, &req_name)?,
                    range: Requirement::parse(requirement.as_deref().unwrap_or_default())
                        .map_err(|_| corrupt(requirement.as_deref().unwrap_or_default()))?,
                }),
                None => requires.mcp_servers.push(McpRequirement {
                    name: req_name,
                    registry: requirement,
                }),
            }
        }
        Ok(out)
    }

    async fn required_skills(&self) -> Result<Vec<RequiredSkill>> {
        let rows: Vec<(String, String, bool, String)> = sqlx::query_as(concat!(
            "SELECT ns.name, s.name, ns.private, v.version
             FROM (SELECT DISTINCT namespace, name FROM version_requires
                   WHERE namespace IS NOT NULL) t
             JOIN namespaces ns ON ns.name = t.namespace
             JOIN skills s ON s.namespace_id = ns.id AND s.name = t.name
             JOIN versions v ON v.skill_id = s.id
             WHERE v.yanked_at IS NULL AND v.revoked_at IS NULL AND ",
            is_unset!("v.pending"),
        ))
        .fetch_all(self.read())
        .await?;
        let mut by_skill: BTreeMap<SkillRef, RequiredSkill> = BTreeMap::new();
        for (namespace, name, private, version) in rows {
            let skill = skill_ref(&namespace, &name)?;
            let version = SkillVersion::parse(&version).map_err(|_| corrupt(&version))?;
            by_skill
                .entry(skill.clone())
                .or_insert_with(|| RequiredSkill {
                    skill,
                    private,
                    versions: Vec::new(),
                })
                .versions
                .push(version);
        }
        Ok(by_skill
            .into_values()
            .map(|mut r| {
                r.versions.sort_by(|a, b| b.cmp(a));
                r
            })
            .collect())
    }
}

fn skill_ref(namespace: &str, name: &str) -> Result<SkillRef> {
    Namespace::new(namespace)
        .ok()
        .zip(SkillName::new(name).ok())
        .map(|(ns, name)| SkillRef::new(ns, name))
        .ok_or_else(|| corrupt(&format!("{namespace}/{name}")))
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!(
        "a requirement row that does not decode: {what:.200}"
    ))
}
