//! The REST API under `/v1`: JSON in and out, errors as `{"error":{"code","message"}}`.
//!
//! Handlers name their caller with an extractor ([`Caller`], [`Reader`]), take their path as
//! validated references ([`SkillPath`], [`VersionPath`], in `extract`), call the registry, and answer one of
//! the wire shapes of [`super::api`]. Errors map to the wire only through the error-code table.
//! The OpenAPI 3.1 document is generated from the annotations here (`/v1/openapi.json`).

use std::collections::HashMap;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use utoipa::OpenApi;

use super::api::*;
use super::app::{ApiError, AppState};
use super::auth::{Caller, Reader};
use super::extract::{SkillPath, VersionPath, json_body, param, read_capped, upload_parts};
use crate::core::archive::Format;
use crate::core::refs::parse_namespace;
use crate::core::usage::Kind;
use crate::error::{Error, NotFound};
use crate::registry::NewTokenRequest;

type ApiResult<T> = Result<T, ApiError>;

/// A response body over bytes the registry keeps (cached), without copying them.
fn shared_body(bytes: std::sync::Arc<Vec<u8>>) -> Body {
    struct Shared(std::sync::Arc<Vec<u8>>);
    impl AsRef<[u8]> for Shared {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    Body::from(axum::body::Bytes::from_owner(Shared(bytes)))
}

// ---- handlers ---------------------------------------------------------------------------------

/// List skills, paginated by cursor.
#[utoipa::path(get, path = "/v1/skills", params(CatalogQuery), tag = "skills",
    responses((status = 200, body = CatalogPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
async fn list_skills(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<CatalogQuery>,
) -> ApiResult<axum::Json<CatalogPage>> {
    let namespace = q.namespace.as_deref().map(parse_namespace).transpose()?;
    let page = s
        .registry
        .reads()
        .catalog(
            &reader.visibility,
            namespace.as_ref(),
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
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<SearchQuery>,
) -> ApiResult<axum::Json<SearchResults>> {
    if q.q.trim().is_empty() {
        return Err(Error::InvalidRequest("the query `q` is empty".to_owned()).into());
    }
    let namespace = q.namespace.as_deref().map(parse_namespace).transpose()?;
    let hits = s
        .registry
        .reads()
        .search(
            &reader.visibility,
            &q.q,
            namespace.as_ref(),
            q.limit.unwrap_or(10).clamp(1, 50),
        )
        .await?;
    Ok(axum::Json(SearchResults {
        hits: hits.into_iter().map(SearchHit::from).collect(),
    }))
}

/// One skill with its versions and status.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path)),
    responses((status = 200, body = SkillView), (status = 404, body = ErrorBody)))]
async fn get_skill(
    State(s): State<AppState>,
    reader: Reader,
    SkillPath(skill): SkillPath,
) -> ApiResult<axum::Json<SkillView>> {
    Ok(axum::Json(
        s.registry
            .reads()
            .skill_detail(&reader.visibility, &skill)
            .await?
            .into(),
    ))
}

/// How often a skill was read over its last days (default 30): totals, a series by day and
/// totals by version, each by kind (`get`, `skill_md`, `file`, `archive`, `well_known`,
/// `clawhub_install`, `client_install`). Counts reach storage within `usage_flush_secs`. A
/// skill the caller cannot see is unknown, as for its other reads.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/stats", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), StatsQuery),
    responses((status = 200, body = StatsView), (status = 404, body = ErrorBody)))]
async fn get_stats(
    State(s): State<AppState>,
    reader: Reader,
    SkillPath(skill): SkillPath,
    Query(q): Query<StatsQuery>,
) -> ApiResult<axum::Json<StatsView>> {
    Ok(axum::Json(
        s.registry
            .reads()
            .skill_stats(&reader.visibility, &skill, q.days.unwrap_or(30))
            .await?
            .into(),
    ))
}

/// Publish a version: the skill directory as a `.tar.gz` (`application/gzip`) or `.zip`
/// (`application/zip`) with SKILL.md at the archive root; or, with an author's signature,
/// `multipart/form-data` with the parts `archive` and `signature` (a Model Signing bundle).
/// 201 when stored, 200 when the identical content was already published (a no-op), 409
/// `version_exists` otherwise.
#[utoipa::path(put, path = "/v1/skills/{namespace}/{name}/{version}", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path, description = "semver")),
    request_body(content = Vec<u8>, content_type = "application/gzip"),
    responses((status = 201, body = PublishedView), (status = 200, body = PublishedView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
async fn publish(
    State(s): State<AppState>,
    Caller(caller): Caller,
    VersionPath(target): VersionPath,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    // Check the scope and the format before reading an upload the caller may not make.
    s.registry
        .publisher()
        .require_publish(&caller, target.namespace())
        .await?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let unsupported = || Error::UnsupportedMediaType(content_type.chars().take(100).collect());
    let multipart = multer::parse_boundary(content_type).ok();
    let format = match &multipart {
        Some(_) => None,
        None => Some(Format::from_content_type(content_type).ok_or_else(unsupported)?),
    };
    let client_warnings = match headers.get(CLIENT_WARNINGS_HEADER) {
        Some(value) => decode_client_warnings(value.as_bytes()).map_err(Error::InvalidRequest)?,
        None => Vec::new(),
    };
    let bytes = read_capped(body, s.config.max_upload_bytes).await?;
    let (format, bytes, signature) = match (format, multipart) {
        (Some(format), _) => (format, bytes, None),
        (None, Some(boundary)) => upload_parts(bytes, boundary).await?,
        (None, None) => return Err(unsupported().into()),
    };
    let published = s
        .registry
        .publisher()
        .publish_archive(&caller, &target, format, &bytes, client_warnings, signature)
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
    State(s): State<AppState>,
    reader: Reader,
    VersionPath(version): VersionPath,
) -> ApiResult<axum::Json<ManifestView>> {
    Ok(axum::Json(
        s.registry
            .reads()
            .version_detail(&reader.visibility, &version)
            .await?
            .into(),
    ))
}

/// One file's exact bytes. `ETag` is the file's digest; `If-None-Match` gives 304.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}/files/{path}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path), ("path" = String, Path)),
    responses((status = 200, content_type = "application/octet-stream", body = Vec<u8>), (status = 304), (status = 404, body = ErrorBody)))]
async fn get_file(
    State(s): State<AppState>,
    reader: Reader,
    VersionPath(version): VersionPath,
    Path(params): Path<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let path = param(&params, "path");
    let file = s
        .registry
        .reads()
        .version_file(&reader.visibility, &version, path, Some(Kind::WellKnown))
        .await?;
    let etag = format!("\"{}\"", file.digest);
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut resp = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let ct = if crate::core::mime::is_textual(&file.mime_type) {
            format!("{}; charset=utf-8", file.mime_type)
        } else {
            file.mime_type.clone()
        };
        let mut r = Response::new(shared_body(file.bytes));
        if let Ok(v) = HeaderValue::from_str(&ct) {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        r
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    // The bytes never change; who may fetch them can. An answer that depends on the caller
    // (a token was needed, or may see more than anyone) is for the caller's cache only.
    if reader.caller_specific {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, max-age=31536000, immutable"),
        );
        h.insert(header::VARY, HeaderValue::from_static("authorization"));
    } else {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        );
    }
    super::app::stored_bytes_headers(h, path, &file.mime_type, false);
    Ok(resp)
}

/// The whole version as a `.tar.gz` (SKILL.md at the root; re-publishing it is a no-op).
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}/archive", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, content_type = "application/gzip", body = Vec<u8>), (status = 404, body = ErrorBody)))]
async fn get_archive(
    State(s): State<AppState>,
    reader: Reader,
    VersionPath(version): VersionPath,
) -> ApiResult<Response> {
    let bytes = s
        .registry
        .reads()
        .export_as(
            &reader.visibility,
            &version,
            Format::TarGz,
            Some(Kind::Archive),
        )
        .await?;
    let disposition = format!("{}-{}.tar.gz", version.name(), version.version);
    let mut r = Response::new(shared_body(bytes));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/gzip"),
    );
    super::app::stored_bytes_headers(r.headers_mut(), &disposition, "application/gzip", true);
    Ok(r)
}

/// Yank a version: it is never current again but stays readable by its pinned URI.
#[utoipa::path(post, path = "/v1/skills/{namespace}/{name}/{version}/yank", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = YankRequest, responses((status = 200, body = WithdrawnView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
async fn yank(
    State(s): State<AppState>,
    Caller(caller): Caller,
    VersionPath(version): VersionPath,
    body: Body,
) -> ApiResult<axum::Json<WithdrawnView>> {
    let req: YankRequest = json_body(body).await?;
    let reason = req.reason.unwrap_or_default();
    let dependents = s
        .registry
        .trust()
        .set_yanked(&caller, &version, Some(&reason))
        .await?;
    Ok(axum::Json(dependents.into()))
}

/// Undo a yank.
#[utoipa::path(delete, path = "/v1/skills/{namespace}/{name}/{version}/yank", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = WithdrawnView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn unyank(
    State(s): State<AppState>,
    Caller(caller): Caller,
    VersionPath(version): VersionPath,
) -> ApiResult<axum::Json<WithdrawnView>> {
    let dependents = s
        .registry
        .trust()
        .set_yanked(&caller, &version, None)
        .await?;
    Ok(axum::Json(dependents.into()))
}

/// Revoke a version for security reasons: it is served to nobody (pinned URIs included),
/// leaves the listing, and is announced in `GET /v1/revocations`. Needs the `revoke` action.
#[utoipa::path(post, path = "/v1/skills/{namespace}/{name}/{version}/revoke", tag = "trust",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = RevokeRequest, responses((status = 200, body = WithdrawnView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
async fn revoke(
    State(s): State<AppState>,
    Caller(caller): Caller,
    VersionPath(version): VersionPath,
    body: Body,
) -> ApiResult<axum::Json<WithdrawnView>> {
    let req: RevokeRequest = json_body(body).await?;
    let dependents = s
        .registry
        .trust()
        .set_revoked(&caller, &version, Some(&req.reason))
        .await?;
    Ok(axum::Json(dependents.into()))
}

/// Reverse a revocation (admin only).
#[utoipa::path(delete, path = "/v1/skills/{namespace}/{name}/{version}/revoke", tag = "trust",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = WithdrawnView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn unrevoke(
    State(s): State<AppState>,
    Caller(caller): Caller,
    VersionPath(version): VersionPath,
) -> ApiResult<axum::Json<WithdrawnView>> {
    let dependents = s
        .registry
        .trust()
        .set_revoked(&caller, &version, None)
        .await?;
    Ok(axum::Json(dependents.into()))
}

/// Approve a version waiting for review (the `approve` action): it may become current and is
/// served over MCP from then on.
#[utoipa::path(post, path = "/v1/skills/{namespace}/{name}/{version}/approve", tag = "trust",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = StatusView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn approve(
    State(s): State<AppState>,
    Caller(caller): Caller,
    VersionPath(version): VersionPath,
) -> ApiResult<axum::Json<StatusView>> {
    s.registry.trust().approve(&caller, &version).await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Make new versions of a namespace wait for review (admin only).
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/review", tag = "trust",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn require_review(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trust()
        .set_review_required(&caller, &namespace, true)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Publish into a namespace without review again (admin only); versions already pending stay
/// pending until approved.
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/review", tag = "trust",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn review_off(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trust()
        .set_review_required(&caller, &namespace, false)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Versions with what the content scan found, paginated, of one verdict or any.
#[utoipa::path(get, path = "/v1/findings", params(FindingsQuery), tag = "trust",
    responses((status = 200, body = FindingsPage), (status = 400, body = ErrorBody)))]
async fn findings(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<FindingsQuery>,
) -> ApiResult<axum::Json<FindingsPage>> {
    let verdict = q
        .verdict
        .as_deref()
        .map(|v| {
            crate::core::scan::Verdict::parse(v).ok_or_else(|| {
                Error::InvalidRequest(format!(
                    "verdict {v:?} is not one of clean, flagged, blocked, unscanned"
                ))
            })
        })
        .transpose()?;
    let page = s
        .registry
        .trust()
        .findings(
            &reader.visibility,
            verdict,
            q.cursor.as_deref(),
            q.limit.unwrap_or(100),
        )
        .await?;
    Ok(axum::Json(FindingsPage {
        items: page.items.into_iter().map(FindingsEntry::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

/// The public revocation feed: revoked versions (with their content digests) so that
/// installers and hosts can quarantine copies they already have.
#[utoipa::path(get, path = "/v1/revocations", params(RevocationsQuery), tag = "trust",
    responses((status = 200, body = RevocationsPage), (status = 400, body = ErrorBody)))]
async fn revocations(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<RevocationsQuery>,
) -> ApiResult<axum::Json<RevocationsPage>> {
    let page = s
        .registry
        .trust()
        .revocations(
            &reader.visibility,
            q.since.as_deref(),
            q.cursor.as_deref(),
            q.limit.unwrap_or(100),
        )
        .await?;
    Ok(axum::Json(RevocationsPage {
        items: page.items.into_iter().map(RevocationEntry::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

/// Deprecate a skill: it stays listed and says so (in `_meta` over MCP).
#[utoipa::path(post, path = "/v1/skills/{namespace}/{name}/deprecate", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path)),
    request_body = DeprecateRequest, responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
async fn deprecate(
    State(s): State<AppState>,
    Caller(caller): Caller,
    SkillPath(skill): SkillPath,
    body: Body,
) -> ApiResult<axum::Json<StatusView>> {
    let req: DeprecateRequest = json_body(body).await?;
    let message = req.message.unwrap_or_default();
    s.registry
        .trust()
        .set_deprecated(&caller, &skill, Some(&message))
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Undo a deprecation.
#[utoipa::path(delete, path = "/v1/skills/{namespace}/{name}/deprecate", tag = "publishing",
    params(("namespace" = String, Path), ("name" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn undeprecate(
    State(s): State<AppState>,
    Caller(caller): Caller,
    SkillPath(skill): SkillPath,
) -> ApiResult<axum::Json<StatusView>> {
    s.registry
        .trust()
        .set_deprecated(&caller, &skill, None)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Make a namespace private (admin only): its skills are then visible only to tokens that may
/// read it, on every surface. Works before the namespace holds any skill.
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/private", tag = "publishing",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn make_private(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trust()
        .set_private(&caller, &namespace, true)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Make a namespace public again (admin only).
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/private", tag = "publishing",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn make_public(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trust()
        .set_private(&caller, &namespace, false)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Create a token (admin only). The secret is in the response, once.
#[utoipa::path(post, path = "/v1/tokens", tag = "tokens", request_body = TokenRequest,
    responses((status = 201, body = TokenView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn create_token(
    State(s): State<AppState>,
    Caller(caller): Caller,
    body: Body,
) -> ApiResult<Response> {
    caller.require_admin()?;
    let req: TokenRequest = json_body(body).await?;
    let (info, secret) = s
        .registry
        .access()
        .create_token(
            &caller,
            &NewTokenRequest {
                description: req.description,
                namespaces: req.namespaces,
                actions: req.actions,
            },
        )
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
    State(s): State<AppState>,
    Caller(caller): Caller,
) -> ApiResult<axum::Json<TokenList>> {
    let tokens = s.registry.access().tokens(&caller).await?;
    Ok(axum::Json(TokenList {
        tokens: tokens.into_iter().map(TokenView::from).collect(),
    }))
}

/// Revoke a token (admin only).
#[utoipa::path(delete, path = "/v1/tokens/{id}", tag = "tokens", params(("id" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
async fn revoke_token(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    s.registry.access().revoke_token(&caller, &id).await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// The audit log, oldest first (admin only).
#[utoipa::path(get, path = "/v1/audit", tag = "tokens", params(AuditQuery),
    responses((status = 200, body = AuditPage), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
async fn audit(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Query(q): Query<AuditQuery>,
) -> ApiResult<axum::Json<AuditPage>> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let entries = s
        .registry
        .access()
        .audit(&caller, q.after.unwrap_or(0), limit)
        .await?;
    let next_after = (entries.len() == limit as usize)
        .then(|| entries.last().map(|r| r.id))
        .flatten();
    Ok(axum::Json(AuditPage {
        entries: entries.into_iter().map(AuditEntry::from).collect(),
        next_after,
    }))
}

#[derive(OpenApi)]
#[openapi(
    info(title = "skillreg admin API", description = "Publish, version, yank and deprecate Agent Skills. Agents read them over MCP at /mcp."),
    paths(list_skills, search, get_skill, get_stats, publish, get_version, get_file, get_archive, yank, unyank, deprecate, undeprecate,
          revoke, unrevoke, approve, require_review, review_off, findings, revocations,
          make_private, make_public, create_token, list_tokens, revoke_token, audit,
          super::signing::signatures, super::signing::signature, super::signing::namespace_keys,
          super::signing::add_namespace_key, super::signing::remove_namespace_key,
          super::signing::require_signature, super::signing::signature_optional,
          super::trustpub::list_publishers, super::trustpub::add_publisher,
          super::trustpub::remove_publisher, super::trustpub::trusted_only_on,
          super::trustpub::trusted_only_off, super::trustpub::exchange, super::trustpub::revoke,
          super::packs::publish_pack, super::packs::list_packs, super::packs::pack_versions,
          super::packs::get_pack,
          super::events::list_events, super::events::list_webhooks, super::events::add_webhook,
          super::events::remove_webhook, super::events::resume_webhook),
    modifiers(&BearerAuth),
    tags((name = "skills", description = "Reading the catalog"), (name = "publishing", description = "Publishing and lifecycle"),
         (name = "trust", description = "Content findings and revocations"),
         (name = "tokens", description = "Tokens and audit (admin)"),
         (name = "trusted publishing", description = "Publishing from CI with its OIDC token"),
         (name = "packs", description = "Sets of exact skill versions installed as one"),
         (name = "events", description = "The events feed and webhooks"))
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
    ApiError(Error::NotFound(NotFound::Endpoint))
}

/// The `/v1` routes.
pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/skills", get(list_skills))
        .route("/v1/search", get(search))
        .route("/v1/skills/{namespace}/{name}", get(get_skill))
        .route("/v1/skills/{namespace}/{name}/stats", get(get_stats))
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
        .route(
            "/v1/skills/{namespace}/{name}/{version}/revoke",
            post(revoke).delete(unrevoke),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}/approve",
            post(approve),
        )
        .route(
            "/v1/namespaces/{namespace}/review",
            post(require_review).delete(review_off),
        )
        .route("/v1/findings", get(findings))
        .route("/v1/revocations", get(revocations))
        .route(
            "/v1/namespaces/{namespace}/private",
            post(make_private).delete(make_public),
        )
        .route("/v1/tokens", post(create_token).get(list_tokens))
        .route("/v1/tokens/{id}", axum::routing::delete(revoke_token))
        .route("/v1/audit", get(audit))
        .route("/v1/{*rest}", axum::routing::any(not_found))
        .with_state(state)
}
