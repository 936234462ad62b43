//! Packs over REST: publish a pack version (`PUT /v1/packs/{namespace}/{name}/{version}` with
//! `{"description", "members": ["ns/name@version", …]}`, the `pack` action), list packs, and read
//! one pack's versions or one version. The checks are `registry::packs`'.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use super::api::*;
use super::app::{ApiError, AppState};
use super::auth::{Caller, Reader};
use super::extract::json_body;
use crate::core::SkillVersion;
use crate::core::pack::PackRef;
use crate::core::refs::{parse_name, parse_namespace};

type ApiResult<T> = Result<T, ApiError>;

fn pack_ref(namespace: &str, name: &str) -> Result<PackRef, ApiError> {
    Ok(PackRef::new(parse_namespace(namespace)?, parse_name(name)?))
}

fn version(text: &str) -> Result<SkillVersion, ApiError> {
    Ok(SkillVersion::parse(text).map_err(crate::error::Error::from)?)
}

/// Publish a version of a pack: exact versions of skills, installed as one (`skillreg add
/// <namespace>/<name>`, `npx skills add <registry>/p/<namespace>/<name>`). Needs the `pack`
/// action. 201 when stored, 200 when the same members are stored under that version already.
#[utoipa::path(put, path = "/v1/packs/{namespace}/{name}/{version}", tag = "packs",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = PackRequest,
    responses((status = 201, body = PackView), (status = 200, body = PackView), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn publish_pack(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path((namespace, name, v)): Path<(String, String, String)>,
    body: Body,
) -> ApiResult<Response> {
    let pack = pack_ref(&namespace, &name)?;
    let v = version(&v)?;
    let req: PackRequest = json_body(body).await?;
    let created = s
        .registry
        .packs()
        .publish(&caller, &pack, &v, &req.description, &req.members)
        .await?;
    let stored = s
        .registry
        .packs()
        .get(&caller.visibility(false), &pack, Some(&v))
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, axum::Json(PackView::from(stored))).into_response())
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub(super) struct PackQuery {
    /// Only this namespace's packs.
    namespace: Option<String>,
}

/// The newest version of every pack the caller sees.
#[utoipa::path(get, path = "/v1/packs", tag = "packs", params(PackQuery),
    responses((status = 200, body = PackList)))]
pub(super) async fn list_packs(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<PackQuery>,
) -> ApiResult<axum::Json<PackList>> {
    let namespace = q.namespace.as_deref().map(parse_namespace).transpose()?;
    let packs = s
        .registry
        .packs()
        .list(&reader.visibility, namespace.as_ref())
        .await?;
    Ok(axum::Json(PackList {
        packs: packs.into_iter().map(PackView::from).collect(),
    }))
}

/// Every version of one pack, newest first.
#[utoipa::path(get, path = "/v1/packs/{namespace}/{name}", tag = "packs",
    params(("namespace" = String, Path), ("name" = String, Path)),
    responses((status = 200, body = PackList), (status = 404, body = ErrorBody)))]
pub(super) async fn pack_versions(
    State(s): State<AppState>,
    reader: Reader,
    Path((namespace, name)): Path<(String, String)>,
) -> ApiResult<axum::Json<PackList>> {
    let pack = pack_ref(&namespace, &name)?;
    let versions = s
        .registry
        .packs()
        .versions(&reader.visibility, &pack)
        .await?;
    Ok(axum::Json(PackList {
        packs: versions.into_iter().map(PackView::from).collect(),
    }))
}

/// One version of a pack.
#[utoipa::path(get, path = "/v1/packs/{namespace}/{name}/{version}", tag = "packs",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = PackView), (status = 404, body = ErrorBody)))]
pub(super) async fn get_pack(
    State(s): State<AppState>,
    reader: Reader,
    Path((namespace, name, v)): Path<(String, String, String)>,
) -> ApiResult<axum::Json<PackView>> {
    let pack = pack_ref(&namespace, &name)?;
    let v = version(&v)?;
    let found = s
        .registry
        .packs()
        .get(&reader.visibility, &pack, Some(&v))
        .await?;
    Ok(axum::Json(found.into()))
}

pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/v1/packs", get(list_packs))
        .route("/v1/packs/{namespace}/{name}", get(pack_versions))
        .route(
            "/v1/packs/{namespace}/{name}/{version}",
            get(get_pack).put(publish_pack),
        )
        .with_state(state)
}
