//! The MCP surface (rmcp): SEP-2640 skills methods plus the base resources methods.
//!
//! Every MCP wire shape of the crate is built here from registry types. The surface is read-only:
//! nothing reachable over MCP changes the catalog.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{
    CacheScope, ErrorData, GetSkillRequestParams, GetSkillResult, Implementation,
    ListResourcesResult, ListSkillsResult, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Skill, SkillFrontmatter, SkillResource, SkillResources,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value};

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
}

impl SkillServer {
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            cache_scope: CacheScope::Public,
        }
    }

    /// Mark every result `cacheScope: "private"` (reads need a token, so shared caches must not
    /// keep them).
    pub fn with_private_cache(mut self) -> Self {
        self.cache_scope = CacheScope::Private;
        self
    }
}

fn to_mcp(err: Error) -> ErrorData {
    let data = Some(serde_json::json!({ "code": err.code() }));
    match err {
        Error::Storage(_) => {
            tracing::error!(error = %err, "request failed");
            ErrorData::internal_error("internal storage error", data)
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
            .enable_resources()
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

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
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

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let file = self
            .registry
            .read(&request.uri)
            .await
            .map_err(|e| match e {
                Error::Storage(_) => to_mcp(e),
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

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
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

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let page = self
            .registry
            .list_skill_mds(cursor.as_deref())
            .await
            .map_err(to_mcp)?;
        let resources = page
            .items
            .into_iter()
            .map(|s| {
                Resource::new(s.uri, s.name)
                    .with_description(s.description)
                    .with_mime_type(crate::core::mime::MARKDOWN)
                    .with_size(s.size)
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources)
            .with_ttl_ms(CURRENT_TTL_MS)
            .with_cache_scope(self.cache_scope);
        result.next_cursor = page.next_cursor;
        Ok(result)
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
