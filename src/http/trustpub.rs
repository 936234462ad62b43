//! Trusted publishing over REST: each namespace's trusted publishers and its "trusted
//! publishing only" setting (admin), and the exchange of a CI's OIDC token for a short-lived
//! publish token at crates.io's path, `/api/v1/trusted_publishing/tokens` (`POST {"jwt"}`
//! answers `{"token", "expires_at"}`; `DELETE` with that token as bearer revokes it). The checks
//! are `registry::trustpub`'s.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};

use super::api::*;
use super::app::{ApiError, AppState};
use super::auth::Caller;
use super::extract::json_body;
use crate::core::refs::parse_namespace;
use crate::core::trustpub::{Constraints, Provider, TrustpubError};
use crate::registry::NewTrustedPublisher;

type ApiResult<T> = Result<T, ApiError>;

/// A namespace's trusted publishers (admin only).
#[utoipa::path(get, path = "/v1/namespaces/{namespace}/trusted-publishers", tag = "trusted publishing",
    params(("namespace" = String, Path)),
    responses((status = 200, body = TrustedPublisherList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn list_publishers(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<TrustedPublisherList>> {
    let namespace = parse_namespace(&namespace)?;
    let (publishers, trusted_only) = s
        .registry
        .trusted_publishing()
        .list(&caller, &namespace)
        .await?;
    Ok(axum::Json(TrustedPublisherList {
        trusted_publishers: publishers.into_iter().map(Into::into).collect(),
        trusted_only,
    }))
}

/// Register a trusted publisher for a namespace (admin only): an OIDC issuer and the claims its
/// tokens must carry. Audited.
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/trusted-publishers", tag = "trusted publishing",
    params(("namespace" = String, Path)), request_body = TrustedPublisherRequest,
    responses((status = 201, body = TrustedPublisherView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn add_publisher(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    caller.require_admin()?;
    let namespace = parse_namespace(&namespace)?;
    let req: TrustedPublisherRequest = json_body(body).await?;
    let provider = Provider::from_name(&req.provider).ok_or_else(|| {
        TrustpubError::InvalidPublisher(format!(
            "provider {:?} is not github or gitlab",
            req.provider
        ))
    })?;
    let publisher = s
        .registry
        .trusted_publishing()
        .add(
            &caller,
            &namespace,
            NewTrustedPublisher {
                provider,
                issuer: req.issuer,
                constraints: Constraints {
                    repository: req.repository,
                    workflow: req.workflow,
                    environment: req.environment,
                    git_ref: req.git_ref,
                },
            },
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(TrustedPublisherView::from(publisher)),
    )
        .into_response())
}

/// Remove a trusted publisher (admin only). Tokens it was exchanged for live until they expire.
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/trusted-publishers/{id}", tag = "trusted publishing",
    params(("namespace" = String, Path), ("id" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
pub(super) async fn remove_publisher(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path((namespace, id)): Path<(String, String)>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trusted_publishing()
        .remove(&caller, &namespace, &id)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Accept versions in a namespace only from its trusted publishers (and the admin): ordinary
/// tokens are refused with `trusted_publishing_only` (admin only).
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/trusted-only", tag = "trusted publishing",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn trusted_only_on(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trusted_publishing()
        .set_trusted_only(&caller, &namespace, true)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Accept versions from any token allowed to publish in the namespace again (admin only).
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/trusted-only", tag = "trusted publishing",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn trusted_only_off(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trusted_publishing()
        .set_trusted_only(&caller, &namespace, false)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Exchange a CI's OIDC token for a short-lived token that may publish to the namespaces whose
/// trusted publisher its claims match. Each OIDC token is exchanged once.
#[utoipa::path(post, path = "/api/v1/trusted_publishing/tokens", tag = "trusted publishing",
    request_body = ExchangeRequest,
    responses((status = 200, body = ExchangeView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 502, body = ErrorBody)))]
pub(super) async fn exchange(
    State(s): State<AppState>,
    body: Body,
) -> ApiResult<axum::Json<ExchangeView>> {
    let req: ExchangeRequest = json_body(body).await?;
    let exchanged = s.registry.trusted_publishing().exchange(&req.jwt).await?;
    Ok(axum::Json(ExchangeView {
        token: exchanged.token,
        expires_at: crate::core::Timestamp::from_epoch_secs(exchanged.expires_at),
    }))
}

/// Revoke the exchanged token sent as the bearer (a CI job's last step).
#[utoipa::path(delete, path = "/api/v1/trusted_publishing/tokens", tag = "trusted publishing",
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn revoke(
    State(s): State<AppState>,
    Caller(caller): Caller,
) -> ApiResult<StatusCode> {
    s.registry.trusted_publishing().revoke(&caller).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The trusted publishing routes.
pub fn routes(state: AppState) -> Router {
    Router::new()
        .route(
            "/v1/namespaces/{namespace}/trusted-publishers",
            get(list_publishers).post(add_publisher),
        )
        .route(
            "/v1/namespaces/{namespace}/trusted-publishers/{id}",
            delete(remove_publisher),
        )
        .route(
            "/v1/namespaces/{namespace}/trusted-only",
            post(trusted_only_on).delete(trusted_only_off),
        )
        .route(
            "/api/v1/trusted_publishing/tokens",
            post(exchange).delete(revoke),
        )
        .with_state(state)
}
