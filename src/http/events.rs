//! The events feed and webhooks over REST: `GET /v1/events` (every change to the catalog the
//! caller may see, by cursor) and each namespace's webhooks (`/v1/namespaces/{ns}/webhooks`,
//! the `webhook` action). The rules are `registry::Events`'s.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};

use super::api::*;
use super::app::{ApiError, AppState};
use super::auth::{Caller, Reader};
use super::extract::json_body;
use crate::core::event::{EventKind, WebhookError};
use crate::core::refs::parse_namespace;

type ApiResult<T> = Result<T, ApiError>;

/// The changes to the catalog the caller may see, oldest first, after the cursor `after`:
/// publishes (a version pending review only for those who see it), yanks, deprecations,
/// revocations, approvals, scan changes and source reads. `truncated` says `after` was from
/// before the retention window.
#[utoipa::path(get, path = "/v1/events", params(EventsQuery), tag = "events",
    responses((status = 200, body = EventsPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub(super) async fn list_events(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<EventsQuery>,
) -> ApiResult<Response> {
    let kind = q
        .kind
        .as_deref()
        .map(|k| EventKind::parse(k).ok_or_else(|| WebhookError::UnknownKind(k.to_owned())))
        .transpose()
        .map_err(crate::error::Error::from)?;
    let namespace = q.namespace.as_deref().map(parse_namespace).transpose()?;
    let page = s
        .registry
        .events()
        .feed(
            &reader.visibility,
            q.after.as_deref(),
            q.limit,
            kind,
            namespace.as_ref(),
        )
        .await?;
    let mut response = axum::Json(EventsPage {
        events: page.events.into_iter().map(EventView::from).collect(),
        next: page.next,
        truncated: page.truncated,
    })
    .into_response();
    // A feed moves: never kept by a cache.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// The webhooks of a namespace, with their delivery state (the `webhook` action there).
#[utoipa::path(get, path = "/v1/namespaces/{namespace}/webhooks", tag = "events",
    params(("namespace" = String, Path)),
    responses((status = 200, body = WebhookList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn list_webhooks(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<WebhookList>> {
    let namespace = parse_namespace(&namespace)?;
    let hooks = s.registry.events().webhooks(&caller, &namespace).await?;
    Ok(axum::Json(WebhookList {
        webhooks: hooks
            .into_iter()
            .map(|h| WebhookView::of(h, false))
            .collect(),
    }))
}

/// Register a webhook of a namespace (the `webhook` action there): its events, of the types
/// given (none: every type), are POSTed to the URL signed as Standard Webhooks says. The answer
/// holds the signing secret, shown this once. Audited.
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/webhooks", tag = "events",
    params(("namespace" = String, Path)), request_body = WebhookRequest,
    responses((status = 201, body = WebhookView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn add_webhook(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let namespace = parse_namespace(&namespace)?;
    let req: WebhookRequest = json_body(body).await?;
    let hook = s
        .registry
        .events()
        .add_webhook(&caller, &namespace, &req.url, &req.types)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(WebhookView::of(hook, true))).into_response())
}

/// Remove a webhook (the `webhook` action in its namespace); its pending deliveries are dropped.
/// Audited.
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/webhooks/{id}", tag = "events",
    params(("namespace" = String, Path), ("id" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
pub(super) async fn remove_webhook(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path((namespace, id)): Path<(String, String)>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .events()
        .remove_webhook(&caller, &namespace, &id)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// Make a paused webhook active again (the `webhook` action in its namespace): its queued
/// deliveries are tried again; the events of its pause are not delivered. Audited.
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/webhooks/{id}/resume", tag = "events",
    params(("namespace" = String, Path), ("id" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
pub(super) async fn resume_webhook(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path((namespace, id)): Path<(String, String)>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .events()
        .resume_webhook(&caller, &namespace, &id)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// The events and webhook routes.
pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/v1/events", get(list_events))
        .route(
            "/v1/namespaces/{namespace}/webhooks",
            get(list_webhooks).post(add_webhook),
        )
        .route(
            "/v1/namespaces/{namespace}/webhooks/{id}",
            delete(remove_webhook),
        )
        .route(
            "/v1/namespaces/{namespace}/webhooks/{id}/resume",
            post(resume_webhook),
        )
        .with_state(state)
}
