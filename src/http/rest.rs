//! The REST admin API under `/v1`: JSON in and out, errors as `{"error":{"code","message"}}`.
//!
//! Handlers parse the request, authenticate the caller and call the registry; every rule lives
//! below. The OpenAPI 3.1 document is generated from the annotations here (`/v1/openapi.json`).

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, OpenApi, ToSchema};

use crate::auth::{Action, Authenticator, Principal};
use crate::error::Error;
use crate::registry::{
    CatalogItem, ManifestFile, Published, Registry, SkillDetail, TokenInfo, VersionDetail,
    VersionSummary,
};

/// Shared state of the REST routes.
#[derive(Clone)]
pub struct RestState {
    pub registry: Registry,
    pub auth: Authenticator,
    pub require_read_token: bool,
    pub max_upload_bytes: usize,
}

/// An error answered as `{"error":{"code","message"}}` with its HTTP status.
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

/// The error body.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case code: branch on this, never on the message.
    code: String,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        crate::metrics::error(self.0.code());
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let message = match &self.0 {
            Error::Storage(e) => {
                tracing::error!(error = %e, "request failed");
                match e.code() {
                    "storage_full" => {
                        "the registry's storage is full; nothing was stored".to_owned()
                    }
                    "storage_read_only" => {
                        "the registry's storage is read-only; nothing was stored".to_owned()
                    }
                    "storage_busy" => "the registry's storage is busy; try again".to_owned(),
                    _ => "internal storage error".to_owned(),
                }
            }
            other => other.to_string(),
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.0.code().to_owned(),
                message,
            },
        };
        let mut resp = (status, axum::Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

type ApiResult<T> = Result<T, ApiError>;

async fn principal(state: &RestState, headers: &HeaderMap) -> ApiResult<Principal> {
    let value = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| Error::Unauthorized)?),
    };
    Ok(state.auth.authenticate(value).await?)
}

/// The caller, refused when reads require a token and none was given.
async fn reader(state: &RestState, headers: &HeaderMap) -> ApiResult<Principal> {
    let p = principal(state, headers).await?;
    if state.require_read_token && !p.may_read() {
        return Err(Error::Unauthorized.into());
    }
    Ok(p)
}

/// Read a body of at most `limit` bytes. Past the limit the rest is read and discarded (up to
/// 4× the limit; the request time limit bounds slow senders) so the client, which is usually
/// still writing, receives the 413 instead of a reset connection.
async fn read_capped(body: Body, limit: usize) -> ApiResult<Vec<u8>> {
    use http_body_util::BodyExt as _;
    let mut body = body;
    let mut bytes = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Error::InvalidRequest(format!("reading the body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if seen <= limit {
            bytes.extend_from_slice(&data);
        } else if seen > limit.saturating_mul(4) {
            break;
        }
    }
    if seen > limit {
        return Err(Error::BodyTooLarge(limit).into());
    }
    Ok(bytes)
}

/// Largest JSON request body (yank reasons, deprecation messages, token requests).
const MAX_JSON_BODY: usize = 64 * 1024;

async fn json_body<T: for<'de> Deserialize<'de>>(body: Body) -> ApiResult<T> {
    let bytes = read_capped(body, MAX_JSON_BODY).await?;
    let bytes: &[u8] = if bytes.is_empty() { b"{}" } else { &bytes };
    serde_json::from_slice(bytes).map_err(|e| Error::InvalidRequest(e.to_string()).into())
}

// ---- wire shapes ------------------------------------------------------------------------------

#[derive(Serialize, ToSchema)]
pub struct CatalogPage {
    items: Vec<CatalogEntry>,
    /// Pass back as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct CatalogEntry {
    namespace: String,
    name: String,
    /// `skill://` URI of the current version's SKILL.md.
    uri: String,
    /// `null` when every version is yanked.
    current_version: Option<String>,
    description: Option<String>,
    deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecation_message: Option<String>,
}

impl From<CatalogItem> for CatalogEntry {
    fn from(i: CatalogItem) -> Self {
        Self {
            namespace: i.namespace,
            name: i.name,
            uri: i.uri,
            current_version: i.current_version,
            description: i.description,
            deprecated: i.deprecation.is_some(),
            deprecation_message: i.deprecation,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SkillView {
    namespace: String,
    name: String,
    uri: String,
    created_at: String,
    current_version: Option<String>,
    deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecation_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated_at: Option<String>,
    /// Newest first.
    versions: Vec<VersionView>,
}

impl From<SkillDetail> for SkillView {
    fn from(d: SkillDetail) -> Self {
        Self {
            namespace: d.namespace,
            name: d.name,
            uri: d.uri,
            created_at: d.created_at,
            current_version: d.current_version,
            deprecated: d.deprecation.is_some(),
            deprecation_message: d.deprecation,
            deprecated_at: d.deprecated_at,
            versions: d.versions.into_iter().map(VersionView::from).collect(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct VersionView {
    version: String,
    /// Pinned `skill://` URI of this version's SKILL.md.
    uri: String,
    content_digest: String,
    file_count: u64,
    total_size: u64,
    published_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    published_by: Option<String>,
    yanked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    yanked_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    yank_reason: Option<String>,
}

impl From<VersionSummary> for VersionView {
    fn from(v: VersionSummary) -> Self {
        Self {
            version: v.version,
            uri: v.pinned_uri,
            content_digest: v.content_digest,
            file_count: v.file_count,
            total_size: v.total_size,
            published_at: v.published_at,
            published_by: v.published_by,
            yanked: v.yanked_at.is_some(),
            yanked_at: v.yanked_at,
            yank_reason: v.yank_reason,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct ManifestView {
    #[serde(flatten)]
    version: VersionView,
    /// The SKILL.md frontmatter, verbatim.
    #[schema(value_type = Object)]
    frontmatter: Map<String, Value>,
    warnings: Vec<WarningView>,
    files: Vec<FileView>,
}

#[derive(Serialize, ToSchema)]
pub struct WarningView {
    code: String,
    message: String,
}

#[derive(Serialize, ToSchema)]
pub struct FileView {
    path: String,
    uri: String,
    /// `sha256:<64 lowercase hex>` of the exact bytes.
    digest: String,
    size: u64,
    /// Unix mode: 420 (0644) or 493 (0755).
    mode: u32,
}

impl From<ManifestFile> for FileView {
    fn from(f: ManifestFile) -> Self {
        Self {
            path: f.path,
            uri: f.uri,
            digest: f.digest,
            size: f.size,
            mode: f.mode,
        }
    }
}

impl From<VersionDetail> for ManifestView {
    fn from(d: VersionDetail) -> Self {
        Self {
            version: d.summary.into(),
            frontmatter: d.frontmatter,
            warnings: d
                .warnings
                .into_iter()
                .map(|w| WarningView {
                    code: w.code,
                    message: w.message,
                })
                .collect(),
            files: d.files.into_iter().map(FileView::from).collect(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct PublishedView {
    namespace: String,
    name: String,
    version: String,
    /// `false` when identical content was already published under this version (a no-op).
    created: bool,
    /// Current-version URI of the SKILL.md.
    uri: String,
    /// Pinned URI of this version's SKILL.md.
    pinned_uri: String,
    files: Vec<PublishedFile>,
    warnings: Vec<WarningView>,
}

#[derive(Serialize, ToSchema)]
pub struct PublishedFile {
    uri: String,
    digest: String,
    size: u64,
}

impl From<Published> for PublishedView {
    fn from(p: Published) -> Self {
        Self {
            namespace: p.namespace.to_string(),
            name: p.name.to_string(),
            version: p.version.to_string(),
            created: p.created,
            uri: p.uri,
            pinned_uri: p.pinned_uri,
            files: p
                .files
                .into_iter()
                .map(|f| PublishedFile {
                    uri: f.uri,
                    digest: f.digest,
                    size: f.size,
                })
                .collect(),
            warnings: p
                .warnings
                .into_iter()
                .map(|w| WarningView {
                    code: w.code,
                    message: w.message,
                })
                .collect(),
        }
    }
}

#[derive(Deserialize, ToSchema)]
pub struct YankRequest {
    /// Why the version is yanked.
    reason: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct DeprecateRequest {
    /// What users should do instead.
    message: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct StatusView {
    ok: bool,
}

#[derive(Deserialize, ToSchema)]
pub struct TokenRequest {
    description: String,
    /// Namespaces the token may act on; `"*"` for all.
    namespaces: Vec<String>,
    actions: Vec<Action>,
}

#[derive(Serialize, ToSchema)]
pub struct TokenView {
    id: String,
    description: String,
    namespaces: Vec<String>,
    actions: Vec<Action>,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    revoked_at: Option<String>,
    /// The secret: returned once, at creation, and never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
}

impl From<TokenInfo> for TokenView {
    fn from(t: TokenInfo) -> Self {
        Self {
            id: t.id,
            description: t.description,
            namespaces: t.namespaces,
            actions: t.actions,
            created_at: t.created_at,
            revoked_at: t.revoked_at,
            token: None,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct TokenList {
    tokens: Vec<TokenView>,
}

#[derive(Serialize, ToSchema)]
pub struct AuditPage {
    entries: Vec<AuditEntry>,
    /// Pass back as `after` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_after: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct AuditEntry {
    id: i64,
    at: String,
    actor: String,
    action: String,
    namespace: Option<String>,
    name: Option<String>,
    version: Option<String>,
    #[schema(value_type = Object)]
    details: Value,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CatalogQuery {
    /// Only skills of this namespace.
    namespace: Option<String>,
    cursor: Option<String>,
    /// Page size, 1–1000 (default 100).
    limit: Option<u32>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Free text: what the skill should do.
    q: String,
    /// Only skills of this namespace.
    namespace: Option<String>,
    /// 1–50 (default 10).
    limit: Option<usize>,
}

#[derive(Serialize, ToSchema)]
pub struct SearchResults {
    hits: Vec<SearchHit>,
}

/// One ranked hit; deprecated and yanked-only skills rank below active ones and say so.
#[derive(Serialize, ToSchema)]
pub struct SearchHit {
    uri: String,
    namespace: String,
    name: String,
    version: String,
    description: String,
    score: f32,
    /// `active`, `deprecated` or `yanked`.
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecation: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries with an id greater than this.
    after: Option<i64>,
    limit: Option<u32>,
}

// ---- handlers ---------------------------------------------------------------------------------

/// List skills, paginated by cursor.
#[utoipa::path(get, path = "/v1/skills", params(CatalogQuery), tag = "skills",
    responses((status = 200, body = CatalogPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
async fn list_skills(
    State(s): State<RestState>,
    headers: HeaderMap,
    Query(q): Query<CatalogQuery>,
) -> ApiResult<axum::Json<CatalogPage>> {
    reader(&s, &headers).await?;
    let page = s
        .registry
        .catalog(
            q.namespace.as_deref(),
            q.cursor.as_deref(),
            q.limit.unwrap_or(100),
        )
        .await?;
    Ok(axum::Json(CatalogPage {
        items: page.items.into_iter().map(CatalogEntry::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

/// Full-text search (BM25 over name, description, SKILL.md body and file paths).
#[utoipa::path(get, path = "/v1/search", params(SearchQuery), tag = "skills",
    responses((status = 200, body = SearchResults), (status = 400, body = ErrorBody)))]
async fn search(
    State(s): State<RestState>,
    headers: HeaderMap,
    Query(q): Query<SearchQuery>,
) -> ApiResult<axum::Json<SearchResults>> {
    reader(&s, &headers).await?;
    if q.q.trim().is_empty() {
        return Err(Error::InvalidRequest("the query `q` is empty".to_owned()).into());
    }
    let hits = s
        .registry
        .search(
            &q.q,
            q.namespace.as_deref(),
            q.limit.unwrap_or(10).clamp(1, 50),
        )
        .await?;
    Ok(axum::Json(SearchResults {
        hits: hits
            .into_iter()
            .map(|h| SearchHit {
                status: serde_json::to_value(h.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                uri: h.uri,
                namespace: h.namespace,
                name: h.name,
                version: h.version,
                description: h.description,
                score: h.score,
                deprecation: h.deprecation,
            })
            .collect(),
    }))
}

/// One skill with its versions and status.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path)),
    responses((status = 200, body = SkillView), (status = 404, body = ErrorBody)))]
async fn get_skill(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name)): Path<(String, String)>,
) -> ApiResult<axum::Json<SkillView>> {
    reader(&s, &headers).await?;
    Ok(axum::Json(
        s.registry.skill_detail(&ns, &name).await?.into(),
    ))
}

/// Publish a version: the skill directory as a `.tar.gz` (`application/gzip`) or `.zip`
/// (`application/zip`) with SKILL.md at the archive root. 201 when stored, 200 when the
/// identical content was already published (a no-op), 409 `version_exists` otherwise.
#[utoipa::path(put, path = "/v1/skills/{namespace}/{name}/{version}", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path, description = "semver")),
    request_body(content = Vec<u8>, content_type = "application/gzip"),
    responses((status = 201, body = PublishedView), (status = 200, body = PublishedView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
async fn publish(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name, version)): Path<(String, String, String)>,
    body: Body,
) -> ApiResult<Response> {
    let p = principal(&s, &headers).await?;
    // Check the scope before reading an upload the caller may not make.
    p.require(Action::Publish, &ns)?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if crate::archive::Format::from_content_type(content_type.unwrap_or("")).is_none() {
        return Err(Error::UnsupportedMediaType(
            content_type.unwrap_or("").chars().take(100).collect(),
        )
        .into());
    }
    let bytes = read_capped(body, s.max_upload_bytes).await?;
    let published = s
        .registry
        .publish_archive(&p, &ns, &name, &version, content_type, &bytes)
        .await?;
    let status = if published.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(PublishedView::from(published))).into_response())
}

/// One version's manifest: files with digests and sizes, frontmatter, warnings, status.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = ManifestView), (status = 404, body = ErrorBody)))]
async fn get_version(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name, version)): Path<(String, String, String)>,
) -> ApiResult<axum::Json<ManifestView>> {
    reader(&s, &headers).await?;
    Ok(axum::Json(
        s.registry
            .version_detail(&ns, &name, &version)
            .await?
            .into(),
    ))
}

/// One file's exact bytes. `ETag` is the file's digest; `If-None-Match` gives 304.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}/files/{path}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path), ("path" = String, Path)),
    responses((status = 200, content_type = "application/octet-stream", body = Vec<u8>), (status = 304), (status = 404, body = ErrorBody)))]
async fn get_file(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name, version, path)): Path<(String, String, String, String)>,
) -> ApiResult<Response> {
    reader(&s, &headers).await?;
    let (file, digest) = s.registry.version_file(&ns, &name, &version, &path).await?;
    let etag = format!("\"{digest}\"");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut resp = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = Response::new(Body::from(file.bytes));
        let ct = if crate::core::mime::is_textual(&file.mime_type) {
            format!("{}; charset=utf-8", file.mime_type)
        } else {
            file.mime_type.clone()
        };
        if let Ok(v) = HeaderValue::from_str(&ct) {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        r
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    // Skill files are untrusted: an .html or .svg must not run script on the registry's origin.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(resp)
}

/// The whole version as a `.tar.gz` (SKILL.md at the root; re-publishing it is a no-op).
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}/archive", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, content_type = "application/gzip", body = Vec<u8>), (status = 404, body = ErrorBody)))]
async fn get_archive(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name, version)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    reader(&s, &headers).await?;
    let bytes = s.registry.export(&ns, &name, &version).await?;
    let disposition = format!("attachment; filename=\"{name}-{version}.tar.gz\"");
    let mut r = Response::new(Body::from(bytes));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/gzip"),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(r)
}

/// Yank a version: it is never current again but stays readable by its pinned URI.
#[utoipa::path(post, path = "/v1/skills/{namespace}/{name}/{version}/yank", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = YankRequest, responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
async fn yank(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name, version)): Path<(String, String, String)>,
    body: Body,
) -> ApiResult<axum::Json<StatusView>> {
    let p = principal(&s, &headers).await?;
    let req: YankRequest = json_body(body).await?;
    let reason = req.reason.unwrap_or_default();
    s.registry
        .set_yanked(&p, &ns, &name, &version, Some(&reason))
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Undo a yank.
#[utoipa::path(delete, path = "/v1/skills/{namespace}/{name}/{version}/yank", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn unyank(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name, version)): Path<(String, String, String)>,
) -> ApiResult<axum::Json<StatusView>> {
    let p = principal(&s, &headers).await?;
    s.registry
        .set_yanked(&p, &ns, &name, &version, None)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Deprecate a skill: it stays listed and says so (in `_meta` over MCP).
#[utoipa::path(post, path = "/v1/skills/{namespace}/{name}/deprecate", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path)),
    request_body = DeprecateRequest, responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
async fn deprecate(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name)): Path<(String, String)>,
    body: Body,
) -> ApiResult<axum::Json<StatusView>> {
    let p = principal(&s, &headers).await?;
    let req: DeprecateRequest = json_body(body).await?;
    let message = req.message.unwrap_or_default();
    s.registry
        .set_deprecated(&p, &ns, &name, Some(&message))
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Undo a deprecation.
#[utoipa::path(delete, path = "/v1/skills/{namespace}/{name}/deprecate", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn undeprecate(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path((ns, name)): Path<(String, String)>,
) -> ApiResult<axum::Json<StatusView>> {
    let p = principal(&s, &headers).await?;
    s.registry.set_deprecated(&p, &ns, &name, None).await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Create a token (admin only). The secret is in the response, once.
#[utoipa::path(post, path = "/v1/tokens", tag = "tokens", request_body = TokenRequest,
    responses((status = 201, body = TokenView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn create_token(
    State(s): State<RestState>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let p = principal(&s, &headers).await?;
    p.require_admin()?;
    let req: TokenRequest = json_body(body).await?;
    let (info, secret) = s
        .registry
        .create_token(&p, &req.description, &req.namespaces, &req.actions)
        .await?;
    let mut view = TokenView::from(info);
    view.token = Some(secret);
    Ok((StatusCode::CREATED, axum::Json(view)).into_response())
}

/// List tokens (admin only; never their secrets).
#[utoipa::path(get, path = "/v1/tokens", tag = "tokens",
    responses((status = 200, body = TokenList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_tokens(
    State(s): State<RestState>,
    headers: HeaderMap,
) -> ApiResult<axum::Json<TokenList>> {
    let p = principal(&s, &headers).await?;
    let tokens = s.registry.tokens(&p).await?;
    Ok(axum::Json(TokenList {
        tokens: tokens.into_iter().map(TokenView::from).collect(),
    }))
}

/// Revoke a token (admin only).
#[utoipa::path(delete, path = "/v1/tokens/{id}", tag = "tokens", params(("id" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn revoke_token(
    State(s): State<RestState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let p = principal(&s, &headers).await?;
    s.registry.revoke_token(&p, &id).await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// The audit log, oldest first (admin only).
#[utoipa::path(get, path = "/v1/audit", tag = "tokens", params(AuditQuery),
    responses((status = 200, body = AuditPage), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn audit(
    State(s): State<RestState>,
    headers: HeaderMap,
    Query(q): Query<AuditQuery>,
) -> ApiResult<axum::Json<AuditPage>> {
    let p = principal(&s, &headers).await?;
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let rows = s.registry.audit(&p, q.after.unwrap_or(0), limit).await?;
    let next_after = (rows.len() == limit as usize)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    Ok(axum::Json(AuditPage {
        entries: rows
            .into_iter()
            .map(|r| AuditEntry {
                id: r.id,
                at: r.at,
                actor: r.actor,
                action: r.action,
                namespace: r.namespace,
                name: r.name,
                version: r.version,
                details: serde_json::from_str(&r.details).unwrap_or(Value::Null),
            })
            .collect(),
        next_after,
    }))
}

#[derive(OpenApi)]
#[openapi(
    info(title = "skillreg admin API", description = "Publish, version, yank and deprecate Agent Skills. Agents read them over MCP at /mcp."),
    paths(list_skills, search, get_skill, publish, get_version, get_file, get_archive, yank, unyank, deprecate, undeprecate,
          create_token, list_tokens, revoke_token, audit),
    modifiers(&BearerAuth),
    tags((name = "skills", description = "Reading the catalog"), (name = "publishing", description = "Publishing and lifecycle"),
         (name = "tokens", description = "Tokens and audit (admin)"))
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The OpenAPI 3.1 document, as served at `/v1/openapi.json`.
pub fn openapi_json() -> String {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc.to_pretty_json().unwrap_or_default()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], openapi_json()).into_response()
}

async fn not_found() -> ApiError {
    ApiError(Error::NotFound("no such endpoint".to_owned()))
}

/// The `/v1` routes.
pub fn routes(state: RestState) -> Router {
    Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/skills", get(list_skills))
        .route("/v1/search", get(search))
        .route("/v1/skills/{namespace}/{name}", get(get_skill))
        .route(
            "/v1/skills/{namespace}/{name}/deprecate",
            post(deprecate).delete(undeprecate),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}",
            put(publish).get(get_version),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}/archive",
            get(get_archive),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}/files/{*path}",
            get(get_file),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}/yank",
            post(yank).delete(unyank),
        )
        .route("/v1/tokens", post(create_token).get(list_tokens))
        .route("/v1/tokens/{id}", axum::routing::delete(revoke_token))
        .route("/v1/audit", get(audit))
        .route("/v1/{*rest}", axum::routing::any(not_found))
        .with_state(state)
}
