//! The `search_skills` tool: its typed arguments and result, whose JSON schemas are derived from
//! the types (so the declared `inputSchema`/`outputSchema` cannot drift from what is accepted and
//! sent).

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::registry::SearchHit;

/// Name of the search tool.
pub const SEARCH_TOOL: &str = "search_skills";

/// The tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What the skill should help with, in plain words.
    pub query: String,
    /// Only skills of this namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// How many hits, 1 to 50.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
}

fn default_limit() -> u32 {
    10
}

/// The tool's result (`structuredContent`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    /// The skills that match, best first.
    pub hits: Vec<Hit>,
}

/// One ranked skill.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hit {
    /// skill:// URI of the SKILL.md: read it next.
    pub uri: String,
    /// The namespace the skill is published in.
    pub namespace: String,
    /// The skill's name (its SKILL.md's `name`).
    pub name: String,
    /// The version a read of `uri` serves.
    pub version: String,
    /// What the skill does and when to use it (its SKILL.md's `description`).
    pub description: String,
    /// Relevance to the query: higher is better; comparable within one answer only.
    pub score: f32,
    /// Active skills rank first; deprecated ones and those whose every version is yanked say
    /// so here.
    pub status: HitStatus,
    /// The deprecation message, when deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<String>,
}

/// Whether the skill is in use: `active`, `deprecated` (its `deprecation` says why) or
/// `yanked` (every version withdrawn).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HitStatus {
    Active,
    Deprecated,
    Yanked,
}

impl From<SearchHit> for Hit {
    fn from(h: SearchHit) -> Self {
        use crate::core::Status;
        Self {
            status: match h.status {
                Status::Active => HitStatus::Active,
                Status::Deprecated => HitStatus::Deprecated,
                Status::Yanked => HitStatus::Yanked,
            },
            uri: h.uri().to_string(),
            namespace: h.skill.namespace.to_string(),
            name: h.skill.name.to_string(),
            version: h.version.to_string(),
            description: h.description,
            score: h.score,
            deprecation: h.deprecation,
        }
    }
}

/// The tool as `tools/list` declares it.
pub fn tool() -> Tool {
    use rmcp::handler::server::common::{schema_for_output, schema_for_type};
    let mut tool = Tool::new(
        SEARCH_TOOL,
        "Find skills in this registry by what they do. Returns ranked hits with the skill:// URI of \
         each SKILL.md; read the best one with resources/read. Active skills rank above deprecated \
         and yanked ones, which say so in `status`.",
        schema_for_type::<SearchArgs>(),
    );
    tool.title = Some("Search skills".to_owned());
    tool.output_schema = Some(schema_for_output::<SearchOutput>());
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(true);
    annotations.open_world_hint = Some(false);
    tool.annotations = Some(annotations);
    tool
}

/// Parse the tool's arguments: a missing, mistyped or unknown argument is an error naming it.
pub fn parse_args(arguments: Option<rmcp::model::JsonObject>) -> Result<SearchArgs, String> {
    let args: SearchArgs =
        serde_json::from_value(serde_json::Value::Object(arguments.unwrap_or_default()))
            .map_err(|e| e.to_string())?;
    if args.query.trim().is_empty() {
        return Err("`query` must be a non-empty string".to_owned());
    }
    if !(1..=50).contains(&args.limit) {
        return Err("`limit` must be an integer from 1 to 50".to_owned());
    }
    Ok(args)
}

/// Shared so that a server need not rebuild the tool per request.
pub fn cached_tool() -> Arc<Tool> {
    static TOOL: std::sync::OnceLock<Arc<Tool>> = std::sync::OnceLock::new();
    TOOL.get_or_init(|| Arc::new(tool())).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_by_type() {
        let parse = |v: serde_json::Value| parse_args(v.as_object().cloned());
        let ok = parse(serde_json::json!({"query": "pdf", "limit": 5})).unwrap();
        assert_eq!(
            (ok.query.as_str(), ok.limit, ok.namespace),
            ("pdf", 5, None)
        );
        assert_eq!(
            parse(serde_json::json!({"query": "pdf"})).unwrap().limit,
            10
        );
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"query": "  "}),
            serde_json::json!({"query": 7}),
            serde_json::json!({"query": "pdf", "limit": 0}),
            serde_json::json!({"query": "pdf", "limit": 51}),
            serde_json::json!({"query": "pdf", "limit": "5"}),
            serde_json::json!({"query": "pdf", "namespace": 3}),
            serde_json::json!({"query": "pdf", "extra": true}),
        ] {
            assert!(parse(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_schemas_describe_the_types() {
        let t = tool();
        let input = serde_json::Value::Object(t.input_schema.as_ref().clone());
        assert_eq!(input["required"], serde_json::json!(["query"]));
        assert_eq!(input["additionalProperties"], false);
        let output = serde_json::Value::Object(t.output_schema.unwrap().as_ref().clone());
        assert!(output.to_string().contains("\"yanked\""), "{output}");
    }
}
