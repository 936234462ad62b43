//! Wire shapes older or other clients read besides SEP-2640: the legacy discovery index at
//! `skill://index.json` (April 2026 SEP-2640 draft, Agent Skills discovery 0.2.0), and FastMCP's
//! per-skill `_manifest` resource.

use serde_json::{Value, json};

use crate::core::SkillName;
use crate::core::records::FileRecord;
use crate::core::uri::{TEMPLATE_PINNED_SKILL_MD, TEMPLATE_SKILL_MD};
use crate::registry::SkillSummary;

/// Skills listed in a partial `skill://index.json`.
pub const PARTIAL_INDEX_SKILLS: usize = 20;
/// `$schema` of the discovery index (Agent Skills discovery 0.2.0).
pub use crate::core::uri::DISCOVERY_INDEX_SCHEMA as INDEX_SCHEMA;

/// The legacy discovery index: every current skill while there are at most `max_skills`
/// (`skills` holds up to `max_skills + 1`), otherwise a partial index: the templates plus the
/// first skills in URI order.
pub fn index_json(skills: Vec<SkillSummary>, max_skills: usize) -> Value {
    let partial = skills.len() > max_skills;
    let shown = if partial {
        PARTIAL_INDEX_SKILLS.min(max_skills)
    } else {
        skills.len()
    };
    let mut entries: Vec<Value> = skills
        .into_iter()
        .take(shown)
        .map(|s| {
            json!({
                "name": s.name.as_str(),
                "type": "skill-md",
                "description": s.description,
                "url": s.uri.to_string(),
            })
        })
        .collect();
    entries.push(json!({
        "type": "mcp-resource-template",
        "description": "The current version of any skill: complete namespace, then name.",
        "url": TEMPLATE_SKILL_MD,
    }));
    entries.push(json!({
        "type": "mcp-resource-template",
        "description": "One pinned version of any skill: complete namespace, name, then version.",
        "url": TEMPLATE_PINNED_SKILL_MD,
    }));
    json!({ "$schema": INDEX_SCHEMA, "skills": entries })
}

/// FastMCP's manifest of a skill: `{"skill": name, "files": [{"path", "size", "hash"}]}`.
pub fn fastmcp_manifest(name: &SkillName, files: &[FileRecord]) -> Vec<u8> {
    let files: Vec<Value> = files
        .iter()
        .map(|f| json!({"path": f.path, "size": f.size, "hash": f.digest.to_string()}))
        .collect();
    serde_json::to_vec_pretty(&json!({ "skill": name.as_str(), "files": files }))
        .expect("a JSON value serialises")
}
