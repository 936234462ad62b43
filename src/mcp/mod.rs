//! The MCP surface (rmcp): SEP-2640 skills methods plus the base resources methods.
//!
//! Every MCP wire shape of the crate is built here from registry types. The surface is read-only:
//! nothing reachable over MCP changes the catalog.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
    CompleteResult, CompletionInfo, ErrorData, GetSkillRequestParams, GetSkillResult,
    Implementation, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig, Skill, SkillFrontmatter, SkillResource, SkillResources, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value};

use crate::core::uri::{
    INDEX_JSON, TEMPLATE_FILE, TEMPLATE_PINNED_FILE, TEMPLATE_PINNED_SKILL_MD, TEMPLATE_SKILL_MD,
};
use crate::error::Error;
use crate::registry::{Registry, SkillEntry};

/// Freshness hint for anything addressed by a current-version URI: it changes on publish/yank.
pub const CURRENT_TTL_MS: u64 = 60_000;
/// Freshness hint for pinned-version URIs: their content never changes.
pub const PINNED_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// Prefix of this server's `_meta` keys (reverse-domain form, as SEP-2640 asks).
pub const META_PREFIX: &str = "dev.skillreg/";

const INSTRUCTIONS: &str = "This server is skillreg, a registry of Agent Skills. Every skill is \
served at skill://<namespace>/<name>/SKILL.md (its current version) and at \
skill://<namespace>/@<version>/<name>/SKILL.md (one pinned, immutable version); the files of a \
skill sit beside its SKILL.md. Call skills/list to page through the catalog, skills/get for one \
skill's manifest, resources/read to read a file and resources/directory/read to browse a skill's \
directories. Start with the skills in the `skillreg` namespace: they explain how to find, pin and \
publish skills here.";

/// The rmcp handler. Cheap to clone: one per MCP session.
#[derive(Clone)]
pub struct SkillServer {
    registry: Registry,
    cache_scope: CacheScope,
    index_max_skills: usize,
}

/// Catalog size up to which `skill://index.json` lists every skill.
pub const DEFAULT_INDEX_MAX_SKILLS: usize = 1000;

impl SkillServer {
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            cache_scope: CacheScope::Public,
            index_max_skills: DEFAULT_INDEX_MAX_SKILLS,
        }
    }

    /// Above this many skills, `skill://index.json` is partial.
    pub fn with_index_max_skills(mut self, max: usize) -> Self {
        self.index_max_skills = max;
        self
    }

    /// Mark every result `cacheScope: "private"` (reads need a token, so shared caches must not
    /// keep them).
    pub fn with_private_cache(mut self) -> Self {
        self.cache_scope = CacheScope::Private;
        self
    }
}

fn to_mcp(err: Error) -> ErrorData {
    crate::metrics::error(err.code());
    let data = Some(serde_json::json!({ "code": err.code() }));
    match err {
        Error::Storage(_) | Error::Integrity(_) | Error::Search(_) | Error::Timeout(_) => {
            tracing::error!(error = %err, "request failed");
            ErrorData::internal_error(format!("internal error ({})", err.code()), data)
        }
        other => ErrorData::invalid_params(other.to_string(), data),
    }
}

fn skill(entry: SkillEntry) -> Skill {
    let mut extra = entry.frontmatter;
    let name = take_string(&mut extra, "name");
    let description = take_string(&mut extra, "description");
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = extra;
    let resources = entry
        .resources
        .into_iter()
        .map(|r| SkillResource::new(r.uri, r.digest, r.size))
        .collect();
    let mut meta = Map::new();
    meta.insert(
        format!("{META_PREFIX}version"),
        Value::String(entry.version),
    );
    if let Some(message) = entry.deprecation {
        meta.insert(
            format!("{META_PREFIX}deprecated"),
            serde_json::json!({ "message": message }),
        );
    }
    if let Some(reason) = entry.yank_reason {
        meta.insert(
            format!("{META_PREFIX}yanked"),
            serde_json::json!({ "reason": reason }),
        );
    }
    Skill::new(entry.uri, frontmatter, SkillResources::Files(resources))
        .with_meta(rmcp::model::MetaObject(meta))
}

/// `name` and `description` are checked strings in every stored frontmatter.
fn take_string(map: &mut Map<String, Value>, key: &str) -> String {
    match map.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn ttl(pinned: bool) -> u64 {
    if pinned {
        PINNED_TTL_MS
    } else {
        CURRENT_TTL_MS
    }
}

impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_resources()
            .enable_tools()
            .enable_resources_list_changed()
            .enable_skills_with_directory_read()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("skillreg", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<ListSkillsResult, ErrorData> = async {
            let cursor = request.and_then(|r| r.cursor);
            let page = self
                .registry
                .list_skills(cursor.as_deref())
                .await
                .map_err(to_mcp)?;
            let mut result =
                ListSkillsResult::with_all_items(page.items.into_iter().map(skill).collect())
                    .with_ttl_ms(CURRENT_TTL_MS)
                    .with_cache_scope(self.cache_scope);
            result.next_cursor = page.next_cursor;
            Ok(result)
        }
        .await;
        crate::metrics::mcp("skills/list", result.is_ok(), started);
        result
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<GetSkillResult, ErrorData> = async {
            let entry = self
                .registry
                .get_skill(&request.uri)
                .await
                .map_err(to_mcp)?;
            let pinned = entry.pinned;
            Ok(GetSkillResult::new(skill(entry))
                .with_ttl_ms(ttl(pinned))
                .with_cache_scope(self.cache_scope))
        }
        .await;
        crate::metrics::mcp("skills/get", result.is_ok(), started);
        result
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<ReadResourceResponse, ErrorData> = async {
            if request.uri == INDEX_JSON {
                let index = self
                    .registry
                    .index_json(self.index_max_skills)
                    .await
                    .map_err(to_mcp)?;
                let contents = ResourceContents::text(index.to_string(), INDEX_JSON)
                    .with_mime_type("application/json");
                return Ok(ReadResourceResult::new(vec![contents])
                    .with_ttl_ms(CURRENT_TTL_MS)
                    .with_cache_scope(self.cache_scope)
                    .into());
            }
            let file = self
                .registry
                .read(&request.uri)
                .await
                .map_err(|e| match e {
                    Error::Storage(_) | Error::Integrity(_) => to_mcp(e),
                    // -32002 on 2025-era sessions; rmcp turns it into -32602 for 2026-07-28 peers.
                    other => ErrorData::resource_not_found(
                        other.to_string(),
                        Some(serde_json::json!({ "code": other.code(), "uri": request.uri })),
                    ),
                })?;
            let contents = match file.text() {
                Some(text) => ResourceContents::text(text, &file.uri),
                None => ResourceContents::blob(STANDARD.encode(&file.bytes), &file.uri),
            }
            .with_mime_type(&file.mime_type);
            Ok(ReadResourceResult::new(vec![contents])
                .with_ttl_ms(ttl(file.pinned))
                .with_cache_scope(self.cache_scope)
                .into())
        }
        .await;
        crate::metrics::mcp("resources/read", result.is_ok(), started);
        result
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<ReadResourceDirectoryResult, ErrorData> = async {
            if request.cursor.is_some() {
                // Directories are answered in one page, so no cursor of ours exists.
                return Err(ErrorData::invalid_params("invalid cursor", None));
            }
            let children = self.registry.read_dir(&request.uri).await.map_err(to_mcp)?;
            let resources = children
                .into_iter()
                .map(|c| {
                    let r = Resource::new(c.uri, c.name).with_mime_type(c.mime_type);
                    match c.size {
                        Some(size) => r.with_size(size),
                        None => r,
                    }
                })
                .collect();
            Ok(ListResourcesResult::with_all_items(resources))
        }
        .await;
        crate::metrics::mcp("resources/directory/read", result.is_ok(), started);
        result
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<ListResourcesResult, ErrorData> = async {
            let cursor = request.and_then(|r| r.cursor);
            let page = self
                .registry
                .list_skill_mds(cursor.as_deref())
                .await
                .map_err(to_mcp)?;
            let index = cursor.is_none().then(|| {
                Resource::new(INDEX_JSON, "index.json")
                    .with_description(
                        "Discovery index of this registry's skills (legacy SEP-2640 draft format)",
                    )
                    .with_mime_type("application/json")
            });
            let resources = index
                .into_iter()
                .chain(page.items.into_iter().map(|s| {
                    Resource::new(s.uri, s.name)
                        .with_description(s.description)
                        .with_mime_type(crate::core::mime::MARKDOWN)
                        .with_size(s.size)
                }))
                .collect();
            let mut result = ListResourcesResult::with_all_items(resources)
                .with_ttl_ms(CURRENT_TTL_MS)
                .with_cache_scope(self.cache_scope);
            result.next_cursor = page.next_cursor;
            Ok(result)
        }
        .await;
        crate::metrics::mcp("resources/list", result.is_ok(), started);
        result
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<ListResourceTemplatesResult, ErrorData> = async {
            let templates = [
                (
                    TEMPLATE_SKILL_MD,
                    "skill",
                    "The SKILL.md of a skill's current version",
                ),
                (
                    TEMPLATE_FILE,
                    "skill-file",
                    "A file of a skill's current version",
                ),
                (
                    TEMPLATE_PINNED_SKILL_MD,
                    "pinned-skill",
                    "The SKILL.md of one published version",
                ),
                (
                    TEMPLATE_PINNED_FILE,
                    "pinned-skill-file",
                    "A file of one published version",
                ),
            ]
            .into_iter()
            .map(|(uri, name, description)| {
                let t = ResourceTemplate::new(uri, name).with_description(description);
                if uri.ends_with("SKILL.md") {
                    t.with_mime_type(crate::core::mime::MARKDOWN)
                } else {
                    t
                }
            })
            .collect();
            Ok(ListResourceTemplatesResult::with_all_items(templates)
                .with_ttl_ms(PINNED_TTL_MS)
                .with_cache_scope(self.cache_scope))
        }
        .await;
        crate::metrics::mcp("resources/templates/list", result.is_ok(), started);
        result
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<CompleteResult, ErrorData> = async {
            let Reference::Resource(template) = &request.r#ref else {
                return Err(ErrorData::invalid_params(
                    "this server has no prompts to complete",
                    None,
                ));
            };
            let variables: &[&str] = match template.uri.as_str() {
                TEMPLATE_SKILL_MD => &["namespace", "name"],
                TEMPLATE_FILE => &["namespace", "name", "path"],
                TEMPLATE_PINNED_SKILL_MD => &["namespace", "version", "name"],
                TEMPLATE_PINNED_FILE => &["namespace", "version", "name", "path"],
                other => {
                    return Err(ErrorData::invalid_params(
                        format!("unknown resource template {other}"),
                        None,
                    ));
                }
            };
            let argument = request.argument.name.as_str();
            if !variables.contains(&argument) {
                return Err(ErrorData::invalid_params(
                    format!("template {} has no variable {argument}", template.uri),
                    None,
                ));
            }
            let context = request
                .context
                .and_then(|c| c.arguments)
                .unwrap_or_default();
            let completion = self
                .registry
                .complete(argument, &request.argument.value, &context)
                .await
                .map_err(to_mcp)?;
            let has_more = completion.has_more();
            let total = u32::try_from(completion.total).unwrap_or(u32::MAX);
            let info = CompletionInfo::with_pagination(completion.values, Some(total), has_more)
                .map_err(|e| ErrorData::internal_error(e, None))?;
            Ok(CompleteResult::new(info))
        }
        .await;
        crate::metrics::mcp("completion/complete", result.is_ok(), started);
        result
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<ListToolsResult, ErrorData> =
            async { Ok(ListToolsResult::with_all_items(vec![search_tool()])) }.await;
        crate::metrics::mcp("tools/list", result.is_ok(), started);
        result
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let result: Result<CallToolResponse, ErrorData> = async {
            if request.name != SEARCH_TOOL {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {}", request.name),
                    None,
                ));
            }
            let args = request.arguments.unwrap_or_default();
            let query = match args.get("query") {
                Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
                _ => {
                    return Err(ErrorData::invalid_params(
                        "`query` must be a non-empty string",
                        None,
                    ));
                }
            };
            let namespace = match args.get("namespace") {
                None | Some(Value::Null) => None,
                Some(Value::String(n)) => Some(n.clone()),
                Some(_) => {
                    return Err(ErrorData::invalid_params(
                        "`namespace` must be a string",
                        None,
                    ));
                }
            };
            let limit = match args.get("limit") {
                None | Some(Value::Null) => 10,
                Some(v) => match v.as_u64() {
                    Some(n @ 1..=50) => n as usize,
                    _ => {
                        return Err(ErrorData::invalid_params(
                            "`limit` must be an integer from 1 to 50",
                            None,
                        ));
                    }
                },
            };
            let hits = self
                .registry
                .search(&query, namespace.as_deref(), limit)
                .await
                .map_err(to_mcp)?;
            Ok(CallToolResult::structured(serde_json::json!({ "hits": hits })).into())
        }
        .await;
        crate::metrics::mcp("tools/call", result.is_ok(), started);
        result
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // 2025-era sessions learn about publishes through notifications/resources/list_changed.
        let mut changes = self.registry.subscribe();
        let peer = context.peer;
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            // A lagged receiver missed some changes: one notification covers them all.
            while let Ok(()) | Err(RecvError::Lagged(_)) = changes.recv().await {
                if peer.notify_resource_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }
}

/// Name of the search tool.
pub const SEARCH_TOOL: &str = "search_skills";

fn search_tool() -> Tool {
    let input = serde_json::json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the skill should help with, in plain words."},
            "namespace": {"type": "string", "description": "Only skills of this namespace."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let output = serde_json::json!({
        "type": "object",
        "properties": {
            "hits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string", "description": "skill:// URI of the SKILL.md: read it next."},
                        "namespace": {"type": "string"},
                        "name": {"type": "string"},
                        "version": {"type": "string"},
                        "description": {"type": "string"},
                        "score": {"type": "number"},
                        "status": {"type": "string", "enum": ["active", "deprecated", "yanked"]},
                        "deprecation": {"type": "string"}
                    },
                    "required": ["uri", "namespace", "name", "version", "description", "score", "status"]
                }
            }
        },
        "required": ["hits"]
    });
    let object = |v: Value| match v {
        Value::Object(m) => std::sync::Arc::new(m),
        _ => std::sync::Arc::new(Map::new()),
    };
    let mut tool = Tool::new(
        SEARCH_TOOL,
        "Find skills in this registry by what they do. Returns ranked hits with the skill:// URI of \
         each SKILL.md; read the best one with resources/read. Active skills rank above deprecated \
         and yanked ones, which say so in `status`.",
        object(input),
    );
    tool.output_schema = Some(object(output));
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(true);
    annotations.open_world_hint = Some(false);
    tool.annotations = Some(annotations);
    tool
}
