//! The MCP surface (rmcp): the SEP-2640 skills methods, the base resources methods, resource
//! templates with completion, and the `search_skills` tool.
//!
//! Every MCP wire shape of the crate is built here, from registry types: skill entries and their
//! `_meta`, resource contents, errors (through the error-code table), the legacy discovery index
//! and FastMCP's manifest ([`compat`]), and the search tool ([`search_tool`]). The surface is
//! read-only: nothing reachable over MCP changes the catalog.

pub mod compat;
pub mod entries;
pub mod envelope;
pub mod events;
pub mod params;
pub mod search_tool;
pub mod slots;
pub mod stdio;
pub mod subscriptions;
pub mod upstream;

use std::future::Future;
use std::sync::Arc;

use axum::body::Bytes;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
    CompleteResult, CompletionInfo, ErrorData, GetSkillRequestParams, GetSkillResult,
    Implementation, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::core::Digest;
use crate::core::scan::Summary;
use crate::core::uri::{
    FASTMCP_MANIFEST, INDEX_JSON, TEMPLATE_FILE, TEMPLATE_PINNED_FILE, TEMPLATE_PINNED_SKILL_MD,
    TEMPLATE_SKILL_MD,
};
use crate::core::usage;
use crate::core::{Code, McpKind, SkillUri, Visibility, mime, signature};
use crate::error::{Error, NotFound};
use crate::registry::cache::{self, Budget, Cache, CacheId};
use crate::registry::{Keep, Kept, Located, Registry};
pub use entries::Codec;
use entries::Entries;
use entries::scan_meta;
pub use search_tool::SEARCH_TOOL;
pub use slots::{ContentSlot, Port, SkillsSlot};

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

/// The name clients show for this server (`serverInfo.title`, the server card).
pub const TITLE: &str = "skillreg: Agent Skills registry";
/// What this server does, in one line (`serverInfo.description`; the server card allows 100
/// characters).
pub const DESCRIPTION: &str =
    "Versioned Agent Skills to discover, read and install, as skill:// resources";

/// How the MCP surface is exposed.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// Reads need a token: every namespace is private, and every result says
    /// `cacheScope: "private"` so shared caches do not keep it.
    pub reads_need_token: bool,
    /// Catalog size up to which `skill://index.json` lists every skill.
    pub index_max_skills: usize,
    /// `serverInfo.websiteUrl`, when the operator set one (`website_url`).
    pub website_url: Option<String>,
    /// The icon's URI (`icon_url`); `None`: skillreg's own ([`identity`]).
    pub icon_url: Option<String>,
    /// Resources one session or one listen may follow (`max_subscriptions_per_session`).
    pub max_subscriptions: usize,
    /// `events/stream` requests open at once in the process (`max_event_streams`).
    pub max_event_streams: usize,
    /// 2025-era clients keep a session (stdio; HTTP unless `--no-mcp-sessions`), which
    /// `resources/subscribe` needs: without one there is no stream to notify it on.
    pub sessions: bool,
}

/// Who this server is, as `initialize` and `server/discover` tell it (`serverInfo`) and the
/// server card repeats: name, title, version, description, website and icon.
pub fn identity(website_url: Option<&str>, icon_url: Option<&str>) -> Implementation {
    let icon = match icon_url {
        Some(url) => rmcp::model::Icon::new(url),
        None => {
            use base64::Engine as _;
            let svg = base64::engine::general_purpose::STANDARD.encode(include_bytes!("icon.svg"));
            rmcp::model::Icon::new(format!("data:image/svg+xml;base64,{svg}"))
                .with_mime_type("image/svg+xml")
                .with_sizes(vec!["any".to_owned()])
        }
    };
    let info = Implementation::new("skillreg", env!("CARGO_PKG_VERSION"))
        .with_title(TITLE)
        .with_description(DESCRIPTION)
        .with_icons(vec![icon]);
    match website_url {
        Some(url) => info.with_website_url(url),
        None => info,
    }
}

/// The rmcp handler. Cheap to clone: one per MCP session, sharing [`Shared`].
#[derive(Clone)]
pub struct SkillServer {
    registry: Registry,
    reads_need_token: bool,
    index_max_skills: usize,
    max_subscriptions: usize,
    sessions: bool,
    shared: Arc<Shared>,
    /// The session's resource subscriptions (2025 era; `subscriptions`).
    session: Arc<subscriptions::Session>,
}

/// How a file's bytes travel in a `resources/read` result: as its `text`, or as the base64
/// text of its `blob`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Carried {
    Text,
    Base64,
}

/// What every MCP session of a process shares: wire bytes computed once, since what they are
/// made of never changes (a version's entry; a file's bytes, addressed by their digest).
pub struct Shared {
    entries: Entries,
    /// A stored file's content as served over HTTP, by its digest and the MIME type its name
    /// gives (`None`: its bytes decide): the one cache of what is read this way, so a hit reads
    /// no bytes, and a miss does not have the registry keep them.
    contents: Cache<(Digest, Option<String>), Content>,
    /// `skills/list` pages as served, by who asks and from where: a page of the current
    /// catalog is the same bytes until the catalog changes, so it is kept like the registry's
    /// resolutions ([`Registry::current_stamp`]).
    pages: Cache<(Visibility, Option<String>), Arc<Kept<ServedPage>>>,
    /// What `initialize` answers of the server (rmcp asks on every stateless request).
    info: ServerConfig,
    /// What resource subscriptions resolve after a change, shared ([`subscriptions::Answers`]).
    answers: Arc<subscriptions::Answers>,
    /// The places of open `events/stream` requests (`max_event_streams`).
    event_streams: Arc<tokio::sync::Semaphore>,
}

/// A `skills/list` page as served: its entries serialized, and its cursor.
struct ServedPage {
    entries: Bytes,
    next_cursor: Option<String>,
}

/// A file's content as `resources/read` serves it over HTTP.
#[derive(Clone)]
struct Content {
    mime_type: Arc<str>,
    carried: Carried,
    /// The inside of the JSON string that carries the file: its text escaped, when it is served
    /// as text, else the base64 text of its bytes.
    body: Bytes,
}

impl Content {
    fn of(mime_type: &str, bytes: &[u8]) -> Self {
        let (carried, body) = match mime::as_text(mime_type, bytes) {
            // Copied to its length: escaping grows the buffer it is written into, up to twice
            // what it holds, and the cache weighs what is held.
            Some(text) => (
                Carried::Text,
                Bytes::copy_from_slice(&slots::json_string_body(text)),
            ),
            None => (Carried::Base64, Bytes::from(STANDARD.encode(bytes))),
        };
        Self {
            mime_type: mime_type.into(),
            carried,
            body,
        }
    }
}

impl Shared {
    /// The caches every session shares, sized from the registry's budget; made once per
    /// process, then cloned into every session.
    pub fn new(budget: &Budget, options: &McpOptions) -> Self {
        Self {
            info: server_config(options),
            answers: Arc::default(),
            event_streams: Arc::new(tokio::sync::Semaphore::new(options.max_event_streams)),
            entries: Entries::new(budget),
            contents: budget.cache(CacheId::Contents, |(_, mime), c| {
                mime.as_ref().map_or(0, cache::string_bytes)
                    + cache::arc_bytes(c.mime_type.len())
                    + cache::allocated(c.body.len())
            }),
            pages: budget.cache(CacheId::Pages, |(_, cursor), p| {
                cursor.as_ref().map_or(0, cache::string_bytes)
                    + cache::arc_bytes(size_of::<Kept<ServedPage>>())
                    + cache::arc_bytes(p.value.entries.len())
                    + p.value.next_cursor.as_ref().map_or(0, cache::string_bytes)
            }),
        }
    }
}

/// A file `resources/read` serves: made up per request (`index.json`, FastMCP's manifest), or
/// stored (its bytes not read yet).
enum Found {
    Made {
        uri: String,
        mime_type: String,
        bytes: Vec<u8>,
        pinned: bool,
    },
    Stored(Located),
}

impl SkillServer {
    /// A handler for one session; `shared` is made once per process ([`Shared::new`]), then
    /// cloned into every session.
    pub fn new(registry: Registry, options: &McpOptions, shared: Arc<Shared>) -> Self {
        Self {
            registry,
            reads_need_token: options.reads_need_token,
            index_max_skills: options.index_max_skills,
            max_subscriptions: options.max_subscriptions,
            sessions: options.sessions,
            shared,
            session: Arc::default(),
        }
    }

    /// A `skills/list` page as `viewer` is served it from `cursor`: kept from an earlier request
    /// while nothing changed, else read and serialized now.
    async fn served_page(
        &self,
        viewer: Visibility,
        cursor: Option<String>,
    ) -> Result<Arc<Kept<ServedPage>>, ErrorData> {
        let stamp = self.registry.current_stamp();
        let key = (viewer, cursor);
        if let Some(page) = self.shared.pages.get(&key)
            && page.fresh(&stamp)
        {
            return Ok(page);
        }
        let page = self
            .registry
            .reads()
            .list_entries(&key.0, key.1.as_deref())
            .await
            .map_err(|e| to_mcp(e, None))?;
        let served = Arc::new(Kept::new(
            stamp,
            ServedPage {
                entries: Entries::page(&page.items).into(),
                next_cursor: page.next_cursor,
            },
        ));
        self.shared.pages.insert(key, served.clone());
        Ok(served)
    }

    /// `resources/read`, for whichever transport asks: `port` is the HTTP transport's (`None`
    /// over stdio), where the content goes around rmcp's serializer (`slots`), made once.
    /// `install`: the request's `_meta` says its reader installs the skill
    /// ([`usage::INSTALL_META`]), which counts its `SKILL.md` read as an install.
    pub async fn read(
        &self,
        port: Option<&Port>,
        request: ReadResourceRequestParams,
        install: bool,
    ) -> Result<ReadResourceResponse, ErrorData> {
        observed("resources/read", async {
            let (viewer, cache_scope) = self.caller(port);
            let slot = port.and_then(|port| port.content.as_ref());
            let (contents, pinned) = async {
                let found = self.find(&viewer, &request.uri, install).await?;
                match slot {
                    Some(slot) => self.spliced_contents(found, slot).await,
                    None => self.whole_contents(found).await,
                }
            }
            .await
            .map_err(|e| to_mcp(e, Some(&request.uri)))?;
            Ok(ReadResourceResult::new(vec![contents])
                .with_ttl_ms(ttl(pinned))
                .with_cache_scope(cache_scope)
                .into())
        })
        .await
    }

    /// `resources/directory/read`, for whichever transport asks (`port` as for [`Self::read`]).
    pub async fn read_dir(
        &self,
        port: Option<&Port>,
        request: ReadResourceDirectoryRequestParams,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        observed("resources/directory/read", async {
            if request.cursor.is_some() {
                // Directories are answered in one page, so no cursor of ours exists.
                return Err(to_mcp(Error::InvalidCursor, None));
            }
            let (viewer, _) = self.caller(port);
            let children = async {
                let uri = parse_uri(&request.uri)?;
                self.registry.reads().read_dir(&viewer, &uri).await
            }
            .await
            .map_err(|e| to_mcp(e, None))?;
            let resources = children
                .into_iter()
                .map(|c| {
                    let r = Resource::new(c.uri.to_string(), c.name).with_mime_type(c.mime_type);
                    match c.size {
                        Some(size) => r.with_size(size),
                        None => r,
                    }
                })
                .collect();
            Ok(ListResourcesResult::with_all_items(resources))
        })
        .await
    }

    /// Who is asking: over HTTP, the principal the transport authenticated for this request
    /// (stored in the request's extensions); over stdio, the operator who started the process,
    /// who sees everything. And whether shared caches may keep the answer.
    fn caller(&self, port: Option<&Port>) -> (Visibility, CacheScope) {
        let visibility = match port {
            None => Visibility::All,
            Some(port) => port.principal.visibility(self.reads_need_token),
        };
        let scope = if self.reads_need_token || visibility.is_caller_specific() {
            CacheScope::Private
        } else {
            CacheScope::Public
        };
        (visibility, scope)
    }

    /// Open an `events/stream` for the request `id` (its parameters `params`) from the caller
    /// `port` names (`None`: stdio), within `max_event_streams`.
    pub async fn open_event_stream(
        &self,
        port: Option<&Port>,
        id: serde_json::Value,
        params: Option<&serde_json::Value>,
    ) -> Result<events::EventStream, ErrorData> {
        let permit = self
            .shared
            .event_streams
            .clone()
            .try_acquire_owned()
            .map_err(|_| to_mcp(Error::TooManyEventStreams, None))?;
        let (viewer, _) = self.caller(port);
        observed(events::STREAM, async {
            events::EventStream::open(&self.registry, viewer, params, id, permit)
                .await
                .map_err(|e| to_mcp(e, None))
        })
        .await
    }
}

/// Run one MCP method and record its outcome and latency.
///
/// The work is boxed as it is handed over: rmcp's request future holds the future of whichever
/// handler it calls, so it is as large as the largest of them, and it is moved several times
/// per request (into its task, then the task's cell). A box keeps that a pointer, whatever a
/// handler awaits.
fn observed<'a, T: 'a>(
    method: &'static str,
    work: impl Future<Output = Result<T, ErrorData>> + Send + 'a,
) -> impl Future<Output = Result<T, ErrorData>> + Send + 'a {
    let work = Box::pin(work);
    async move {
        let started = std::time::Instant::now();
        let result = work.await;
        crate::metrics::mcp(method, result.is_ok(), started);
        result
    }
}

/// An error as MCP reports it: the kind and message its row of the error-code table gives, with
/// the code in `data.code`. In `resources/read`, anything that is not a server failure is "no
/// such resource" (`-32002` on 2025-era sessions; rmcp answers `-32602` to 2026-07-28 peers).
fn to_mcp(err: Error, uri_of_read: Option<&str>) -> ErrorData {
    let code = err.code();
    crate::metrics::error(code.as_str());
    let message = err.public_message();
    match uri_of_read {
        Some(uri) if code.mcp_kind() != McpKind::Internal => {
            let data = serde_json::json!({
                "code": code.as_str(),
                "uri": uri.chars().take(200).collect::<String>(),
            });
            ErrorData::resource_not_found(message, Some(data))
        }
        _ => error_data(code, message),
    }
}

/// A request this layer refuses by itself (an unknown tool, template or method; arguments that
/// do not parse), reported through `code`'s row like every other error.
fn refused(code: Code, message: String) -> ErrorData {
    crate::metrics::error(code.as_str());
    error_data(code, message)
}

/// The JSON-RPC error for `code`'s row: the row's kind, `data.code`, and `message` (or, for an
/// internal code, the row's public message). The one place an MCP error number is chosen.
pub(crate) fn error_data(code: Code, message: String) -> ErrorData {
    let message = code
        .public_message()
        .map_or(message, std::borrow::ToOwned::to_owned);
    let data = Some(serde_json::json!({ "code": code.as_str() }));
    match code.mcp_kind() {
        McpKind::Internal => ErrorData::internal_error(message, data),
        McpKind::InvalidRequest => ErrorData::invalid_request(message, data),
        McpKind::InvalidParams | McpKind::NotFound => ErrorData::invalid_params(message, data),
        McpKind::MethodNotFound => {
            ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, message, data)
        }
        McpKind::ParseError => ErrorData::parse_error(message, data),
    }
}

/// A list answered in one page has no cursor of its own: any cursor a client sends is not one
/// this server gave (`invalid_cursor`, as every paginated method answers an unknown one).
fn one_page(request: Option<PaginatedRequestParams>) -> Result<(), ErrorData> {
    match request.and_then(|r| r.cursor) {
        Some(_) => Err(to_mcp(Error::InvalidCursor, None)),
        None => Ok(()),
    }
}

fn parse_uri(uri: &str) -> Result<SkillUri, Error> {
    SkillUri::parse(uri).map_err(|e| Error::invalid_uri(uri, e))
}

fn ttl(pinned: bool) -> u64 {
    if pinned {
        PINNED_TTL_MS
    } else {
        CURRENT_TTL_MS
    }
}

/// A pack version as `resources/read` of `skillreg://packs/…` answers it: `{"pack", "version",
/// "description", "members": [{"skill", "version", "uri"}]}`, each `uri` the member's pinned
/// SKILL.md.
fn pack_json(pack: &crate::core::pack::PackRecord) -> serde_json::Value {
    let members: Vec<serde_json::Value> = pack
        .contents
        .members
        .iter()
        .map(|m| {
            serde_json::json!({
                "skill": m.skill.to_string(),
                "version": m.version.to_string(),
                "uri": m.skill_md_uri().to_string(),
            })
        })
        .collect();
    serde_json::json!({
        "pack": pack.pack.to_string(),
        "version": pack.version.to_string(),
        "description": pack.contents.description,
        "members": members,
    })
}

impl SkillServer {
    async fn find(&self, viewer: &Visibility, raw: &str, install: bool) -> Result<Found, Error> {
        if raw == INDEX_JSON {
            let summaries = self
                .registry
                .reads()
                .skill_summaries(
                    viewer,
                    (self.index_max_skills + 1).min(u32::MAX as usize) as u32,
                )
                .await?;
            let index = compat::index_json(summaries, self.index_max_skills);
            return Ok(Found::Made {
                uri: INDEX_JSON.to_owned(),
                mime_type: "application/json".to_owned(),
                bytes: index.to_string().into_bytes(),
                pinned: false,
            });
        }
        if raw == signature::SIGNING_KEYS_URI {
            let current = self.registry.publisher().signing_key().await?;
            let keys = self.registry.reads().signing_keys().await?;
            let keys: Vec<_> = keys
                .into_iter()
                .map(|k| {
                    serde_json::json!({
                        "keyId": k.key_id, "publicKey": k.public_key, "createdAt": k.created_at,
                    })
                })
                .collect();
            let body = serde_json::json!({"current": current.map(|k| k.key_id()), "keys": keys});
            return Ok(Found::Made {
                uri: raw.to_owned(),
                mime_type: "application/json".to_owned(),
                bytes: body.to_string().into_bytes(),
                pinned: false,
            });
        }
        if let Some((pack, version)) = crate::core::pack::parse_uri(raw) {
            let found = self
                .registry
                .packs()
                .get(viewer, &pack, version.as_ref())
                .await?;
            return Ok(Found::Made {
                uri: raw.to_owned(),
                mime_type: "application/json".to_owned(),
                bytes: pack_json(&found).to_string().into_bytes(),
                pinned: version.is_some(),
            });
        }
        if let Some((version, by)) = signature::parse_bundle_uri(raw) {
            let bundle = self
                .registry
                .reads()
                .signatures(viewer, &version)
                .await?
                .into_iter()
                .find(|s| s.signer == by.as_str())
                .ok_or_else(|| {
                    Error::NotFound(NotFound::Resource(raw.chars().take(200).collect()))
                })?;
            return Ok(Found::Made {
                uri: raw.to_owned(),
                mime_type: signature::BUNDLE_MEDIA_TYPE.to_owned(),
                bytes: bundle.bundle.into_bytes(),
                pinned: true,
            });
        }
        let uri = parse_uri(raw)?;
        match self.registry.reads().locate(viewer, &uri, install).await {
            Ok(file) => Ok(Found::Stored(file)),
            // FastMCP reads `_manifest` beside SKILL.md, unless a real file has that name.
            Err(e) if e.code() == Code::FileNotFound && uri.path() == FASTMCP_MANIFEST => {
                let files = self
                    .registry
                    .reads()
                    .files_of(viewer, &uri)
                    .await?
                    .ok_or(e)?;
                Ok(Found::Made {
                    uri: uri.to_string(),
                    mime_type: "application/json".to_owned(),
                    bytes: compat::fastmcp_manifest(&uri.name, &files),
                    pinned: uri.is_pinned(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// A stored file's content as served over HTTP: kept, else its bytes read (and not kept by
    /// the registry: this is the one layer that holds them) and made into it.
    async fn stored_content(&self, file: &Located) -> Result<Content, Error> {
        let key = (file.digest, mime::by_name(file.path()));
        if let Some(content) = self.shared.contents.get(&key) {
            return Ok(content);
        }
        let read = self
            .registry
            .reads()
            .read_located(file.clone(), Keep::Nothing)
            .await?;
        let content = Content::of(&read.mime_type, &read.bytes);
        self.shared.contents.insert(key, content.clone());
        Ok(content)
    }

    /// The contents of a `resources/read` result for `found` over HTTP, and whether its version
    /// is pinned: empty, with the content put into `slot`, to go around rmcp's serializer
    /// (`slots`).
    async fn spliced_contents(
        &self,
        found: Found,
        slot: &ContentSlot,
    ) -> Result<(ResourceContents, bool), Error> {
        let (uri, mime_type, content, pinned, scan) = match found {
            Found::Stored(file) => {
                let content = self.stored_content(&file).await?;
                let mime_type = content.mime_type.to_string();
                let (uri, pinned) = (file.uri.to_string(), file.is_pinned());
                (uri, mime_type, content, pinned, Some(file.scan))
            }
            Found::Made {
                uri,
                mime_type,
                bytes,
                pinned,
            } => {
                let content = Content::of(&mime_type, &bytes);
                (uri, mime_type, content, pinned, None)
            }
        };
        // An empty file has nothing to go around the serializer.
        let marker = if content.body.is_empty() {
            ""
        } else {
            slot.marker()
        };
        if !content.body.is_empty() {
            slot.fill(content.body);
        }
        let contents = match content.carried {
            Carried::Text => ResourceContents::text(marker, &uri),
            Carried::Base64 => ResourceContents::blob(marker, &uri),
        };
        Ok((with_scan(contents.with_mime_type(&mime_type), scan), pinned))
    }

    /// The contents of a `resources/read` result for `found`, whole (over stdio), and whether
    /// its version is pinned.
    async fn whole_contents(&self, found: Found) -> Result<(ResourceContents, bool), Error> {
        let (uri, mime_type, bytes, pinned, scan) = match found {
            Found::Stored(file) => {
                let read = self
                    .registry
                    .reads()
                    .read_located(file, Keep::Bytes)
                    .await?;
                let (uri, pinned) = (read.uri.to_string(), read.is_pinned());
                (uri, read.mime_type, read.bytes, pinned, Some(read.scan))
            }
            Found::Made {
                uri,
                mime_type,
                bytes,
                pinned,
            } => (uri, mime_type, Arc::new(bytes), pinned, None),
        };
        let contents = match mime::as_text(&mime_type, &bytes) {
            Some(text) => ResourceContents::text(text, &uri),
            None => ResourceContents::blob(STANDARD.encode(&*bytes), &uri),
        };
        Ok((with_scan(contents.with_mime_type(&mime_type), scan), pinned))
    }
}

/// `contents` with the version's scan in its `_meta`, for a stored file.
fn with_scan(contents: ResourceContents, scan: Option<Summary>) -> ResourceContents {
    match scan {
        Some(scan) => {
            // The key, made once rather than formatted for each read.
            static KEY: std::sync::LazyLock<String> =
                std::sync::LazyLock::new(|| format!("{META_PREFIX}scan"));
            let mut meta = Map::new();
            meta.insert(KEY.clone(), scan_meta(&scan));
            contents.with_meta(rmcp::model::MetaObject(meta))
        }
        None => contents,
    }
}

/// The server's capabilities and identity. The one tool never changes (`tools.listChanged`
/// false); the catalog does (`resources.listChanged`), and a skill's resources can be
/// subscribed to (`resources.subscribe`, [`subscriptions`]).
fn server_config(options: &McpOptions) -> ServerConfig {
    let mut capabilities = ServerCapabilities::builder()
        .enable_completions()
        .enable_resources()
        .enable_tools()
        .enable_resources_list_changed()
        .enable_resources_subscribe()
        .enable_skills_with_directory_read()
        .build();
    if let Some(tools) = capabilities.tools.as_mut() {
        tools.list_changed = Some(false);
    }
    // The Events extension (SEP-3415): poll delivery of the catalog's changes.
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(events::EXTENSION_ID.to_owned(), Map::new());
    let identity = identity(options.website_url.as_deref(), options.icon_url.as_deref());
    ServerConfig::new(capabilities)
        .with_server_info(identity)
        .with_instructions(INSTRUCTIONS)
}

impl ServerHandler for SkillServer {
    /// Built once per process ([`Shared`]): rmcp asks for it on every stateless request.
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        observed("skills/list", async {
            let port = slots::of(&ctx);
            let (viewer, cache_scope) = self.caller(port);
            let cursor = request.and_then(|r| r.cursor);
            // Over HTTP the transport splices the serialized entries into the response.
            let (skills, next_cursor) = match port.and_then(|port| port.skills.as_ref()) {
                Some(slot) => {
                    let page = self.served_page(viewer, cursor).await?;
                    (
                        vec![slot.page(page.value.entries.clone())],
                        page.value.next_cursor.clone(),
                    )
                }
                None => {
                    let page = self
                        .registry
                        .reads()
                        .list_skills(&viewer, cursor.as_deref())
                        .await
                        .map_err(|e| to_mcp(e, None))?;
                    let skills = page.items.iter().map(entries::skill).collect();
                    (skills, page.next_cursor)
                }
            };
            let mut result = ListSkillsResult::with_all_items(skills)
                .with_ttl_ms(CURRENT_TTL_MS)
                .with_cache_scope(cache_scope);
            result.next_cursor = next_cursor;
            Ok(result)
        })
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        observed("skills/get", async {
            let port = slots::of(&ctx);
            let (viewer, cache_scope) = self.caller(port);
            let entry = async {
                let uri = parse_uri(&request.uri)?;
                let entry = self.registry.reads().get_skill(&viewer, &uri).await?;
                // Only the canonical spelling of a URI names a skill: hosts compare URIs as
                // strings.
                if entry.uri().to_string() != request.uri {
                    return Err(Error::NotFound(crate::error::NotFound::SkillUri(
                        request.uri.chars().take(200).collect(),
                    )));
                }
                // Counted once the answer is certain (the one place both transports call).
                self.registry
                    .usage()
                    .count(entry.version_id, usage::Kind::Get);
                Ok(entry)
            }
            .await
            .map_err(|e| to_mcp(e, None))?;
            let pinned = entry.is_pinned();
            // Over HTTP the transport splices the serialized entry into the response.
            let skill = match port.and_then(|port| port.skills.as_ref()) {
                Some(slot) => {
                    let name = entry.frontmatter().get("name").and_then(|n| n.as_str());
                    let bytes = self.shared.entries.serialized(&entry).into();
                    slot.entry(bytes, &request.uri, name.unwrap_or_default())
                }
                None => entries::skill(&entry),
            };
            Ok(GetSkillResult::new(skill)
                .with_ttl_ms(ttl(pinned))
                .with_cache_scope(cache_scope))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let install = ctx.meta.contains_key(usage::INSTALL_META);
        self.read(slots::of(&ctx), request, install).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.read_dir(slots::of(&ctx), request).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        observed("resources/list", async {
            let (viewer, cache_scope) = self.caller(slots::of(&ctx));
            let cursor = request.and_then(|r| r.cursor);
            let page = self
                .registry
                .reads()
                .list_skill_mds(&viewer, cursor.as_deref())
                .await
                .map_err(|e| to_mcp(e, None))?;
            let index = cursor.is_none().then(|| {
                Resource::new(INDEX_JSON, "index.json")
                    .with_title("Discovery index")
                    .with_description(
                        "Discovery index of this registry's skills (legacy SEP-2640 draft format)",
                    )
                    .with_mime_type("application/json")
            });
            let resources = index
                .into_iter()
                .chain(page.items.into_iter().map(|s| {
                    // Shown as where the skill sits: one name may be in several namespaces.
                    let title = format!("{}/{}", s.uri.namespace, s.name);
                    Resource::new(s.uri.to_string(), s.name.to_string())
                        .with_title(title)
                        .with_description(s.description)
                        .with_mime_type(mime::MARKDOWN)
                        .with_size(s.size)
                }))
                .collect();
            let mut result = ListResourcesResult::with_all_items(resources)
                .with_ttl_ms(CURRENT_TTL_MS)
                .with_cache_scope(cache_scope);
            result.next_cursor = page.next_cursor;
            Ok(result)
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        observed("resources/templates/list", async {
            one_page(request)?;
            let templates = [
                (
                    TEMPLATE_SKILL_MD,
                    "skill",
                    "Skill",
                    "The SKILL.md of a skill's current version",
                ),
                (
                    TEMPLATE_FILE,
                    "skill-file",
                    "Skill file",
                    "A file of a skill's current version",
                ),
                (
                    TEMPLATE_PINNED_SKILL_MD,
                    "pinned-skill",
                    "Pinned skill version",
                    "The SKILL.md of one published version",
                ),
                (
                    TEMPLATE_PINNED_FILE,
                    "pinned-skill-file",
                    "File of a pinned skill version",
                    "A file of one published version",
                ),
            ]
            .into_iter()
            .map(|(uri, name, title, description)| {
                let t = ResourceTemplate::new(uri, name)
                    .with_title(title)
                    .with_description(description);
                if uri.ends_with("SKILL.md") {
                    t.with_mime_type(mime::MARKDOWN)
                } else {
                    t
                }
            })
            .collect();
            let (_, cache_scope) = self.caller(slots::of(&ctx));
            Ok(ListResourceTemplatesResult::with_all_items(templates)
                .with_ttl_ms(PINNED_TTL_MS)
                .with_cache_scope(cache_scope))
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        observed("completion/complete", async {
            let Reference::Resource(template) = &request.r#ref else {
                return Err(refused(
                    Code::InvalidRequest,
                    "this server has no prompts to complete".to_owned(),
                ));
            };
            let variables: &[&str] = match template.uri.as_str() {
                TEMPLATE_SKILL_MD => &["namespace", "name"],
                TEMPLATE_FILE => &["namespace", "name", "path"],
                TEMPLATE_PINNED_SKILL_MD => &["namespace", "version", "name"],
                TEMPLATE_PINNED_FILE => &["namespace", "version", "name", "path"],
                other => {
                    return Err(refused(
                        Code::InvalidRequest,
                        format!(
                            "unknown resource template {}",
                            other.chars().take(200).collect::<String>()
                        ),
                    ));
                }
            };
            let argument = request.argument.name.as_str();
            if !variables.contains(&argument) {
                return Err(refused(
                    Code::InvalidRequest,
                    format!(
                        "template {} has no variable {}",
                        template.uri,
                        argument.chars().take(64).collect::<String>()
                    ),
                ));
            }
            let context = request
                .context
                .and_then(|c| c.arguments)
                .unwrap_or_default();
            let (viewer, _) = self.caller(slots::of(&ctx));
            let completion = self
                .registry
                .reads()
                .complete(&viewer, argument, &request.argument.value, &context)
                .await
                .map_err(|e| to_mcp(e, None))?;
            let has_more = completion.has_more();
            let total = u32::try_from(completion.total).unwrap_or(u32::MAX);
            let info = CompletionInfo::with_pagination(completion.values, Some(total), has_more)
                .map_err(|e| to_mcp(Error::Internal(e), None))?;
            Ok(CompleteResult::new(info))
        })
        .await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        observed("tools/list", async {
            one_page(request)?;
            Ok(ListToolsResult::with_all_items(vec![
                search_tool::cached_tool().as_ref().clone(),
            ]))
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        observed("tools/call", async {
            if request.name != SEARCH_TOOL {
                return Err(refused(
                    Code::InvalidRequest,
                    format!(
                        "unknown tool {}",
                        request.name.chars().take(64).collect::<String>()
                    ),
                ));
            }
            let args = search_tool::parse_args(request.arguments)
                .map_err(|message| refused(Code::InvalidRequest, message))?;
            let hits = async {
                let namespace = args
                    .namespace
                    .as_deref()
                    .map(crate::core::refs::parse_namespace)
                    .transpose()?;
                let (viewer, _) = self.caller(slots::of(&ctx));
                self.registry
                    .reads()
                    .search(
                        &viewer,
                        &args.query,
                        namespace.as_ref(),
                        args.limit as usize,
                    )
                    .await
            }
            .await
            .map_err(|e| to_mcp(e, None))?;
            let output = search_tool::SearchOutput {
                hits: hits.into_iter().map(search_tool::Hit::from).collect(),
            };
            let value = serde_json::to_value(output)
                .map_err(|e| to_mcp(Error::Internal(e.to_string()), None))?;
            Ok(CallToolResult::structured(value).into())
        })
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        observed("resources/subscribe", async {
            if !self.sessions {
                return Err(refused(
                    Code::MethodNotFound,
                    "resources/subscribe needs a session, and this server serves the 2025 era \
                     without sessions: use subscriptions/listen (2026-07-28)"
                        .to_owned(),
                ));
            }
            let (viewer, _) = self.caller(slots::of(&ctx));
            self.session
                .subscribe(
                    &self.registry,
                    &self.shared.answers,
                    &ctx.peer,
                    viewer,
                    &request.uri,
                    self.max_subscriptions,
                )
                .await
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        observed("resources/unsubscribe", async {
            self.session.unsubscribe(&request.uri);
            Ok(())
        })
        .await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted(requested, self.max_subscriptions))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let (viewer, _) = self.caller(slots::of(context.request_context()));
        subscriptions::listen(&self.registry, &self.shared.answers, viewer, context).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        let method = request.method.as_str();
        // The Events extension's methods (`events`).
        if method == events::LIST {
            return observed(events::LIST, async {
                Ok(rmcp::model::CustomResult::new(events::list()))
            })
            .await;
        }
        if method == events::POLL {
            return observed(events::POLL, async {
                let (viewer, _) = self.caller(slots::of(&ctx));
                events::poll(&self.registry, &viewer, request.params.as_ref())
                    .await
                    .map(rmcp::model::CustomResult::new)
                    .map_err(|e| to_mcp(e, None))
            })
            .await;
        }
        if method == events::STREAM {
            // Over HTTP the front answers it (`http::events_stream`): one that reaches rmcp
            // there (a session header with sessions off) has no stream to be carried on. Over
            // stdio the frames go out through the peer while the request stays open.
            if slots::of(&ctx).is_some() {
                return Err(refused(
                    Code::InvalidRequest,
                    "events/stream is answered without a session header on a server without \
                     sessions, or within a session the server holds"
                        .to_owned(),
                ));
            }
            let id = serde_json::to_value(&ctx.id).unwrap_or_default();
            let mut stream = self
                .open_event_stream(None, id, request.params.as_ref())
                .await?;
            loop {
                let frame = tokio::select! {
                    frame = stream.next() => frame,
                    () = ctx.ct.cancelled() => None,
                };
                let Some(mut frame) = frame else {
                    return Ok(rmcp::model::CustomResult::new(json!({"_meta": {}})));
                };
                let Some(method) = frame
                    .get("method")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                else {
                    // The result: the stream is done.
                    return Ok(rmcp::model::CustomResult::new(frame["result"].take()));
                };
                let notification = rmcp::model::CustomNotification::new(
                    method,
                    frame.get_mut("params").map(Value::take),
                );
                if ctx
                    .peer
                    .send_notification(rmcp::model::ServerNotification::CustomNotification(
                        notification,
                    ))
                    .await
                    .is_err()
                {
                    return Ok(rmcp::model::CustomResult::new(json!({"_meta": {}})));
                }
            }
        }
        // A known method lands here only when its parameters did not decode.
        if params::is_known(method) {
            let message = params::check(method, request.params.as_ref())
                .err()
                .unwrap_or_else(|| format!("invalid parameters for {method}"));
            return Err(refused(Code::InvalidRequest, message));
        }
        Err(refused(
            Code::MethodNotFound,
            format!(
                "unknown method {}",
                method.chars().take(64).collect::<String>()
            ),
        ))
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
