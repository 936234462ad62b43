//! The HTTP server: MCP over Streamable HTTP at `/mcp`, the REST API at `/v1`, the web catalog at
//! `/`, and `/healthz`, `/readyz` and `/metrics` for operators.
//!
//! [`router`] builds the application from a [`Registry`] and the [`Config`]; [`serve`] runs it on
//! a listener until a shutdown token is cancelled (tests bind port 0 and serve the same way).

pub mod api;
mod app;
mod auth;
pub mod rest;
mod web;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::error::Error;
use crate::mcp::{McpOptions, SkillServer};
use crate::registry::{Registry, SearchHealth};
use app::{ApiError, AppState};
use auth::Reader;

/// The loopback names every Host allow-list accepts.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The application router.
pub fn router(registry: Registry, config: &Config, shutdown: CancellationToken) -> Router {
    let state = AppState {
        registry: registry.clone(),
        config: Arc::new(config.clone()),
    };
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_cancellation_token(shutdown);
    if config.allowed_hosts.iter().any(|h| h == "*") {
        mcp_config = mcp_config.disable_allowed_hosts();
    } else if !config.allowed_hosts.is_empty() {
        let hosts = LOOPBACK_HOSTS
            .into_iter()
            .map(str::to_owned)
            .chain(config.allowed_hosts.iter().cloned());
        mcp_config = mcp_config.with_allowed_hosts(hosts);
    }
    if !config.allowed_origins.is_empty() {
        mcp_config = mcp_config.with_allowed_origins(config.allowed_origins.iter().cloned());
    }
    let options = McpOptions {
        private: config.require_read_token,
        index_max_skills: config.index_json_max_skills,
    };
    let mcp_registry = registry.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(SkillServer::new(mcp_registry.clone(), options)),
        LocalSessionManager::default().into(),
        mcp_config,
    );
    let mut mcp_routes = Router::new().nest_service("/mcp", mcp);
    let mut web = web::routes(registry.clone(), config);
    if config.require_read_token {
        // MCP and the catalog page read too: the same rule as REST reads.
        let guard = middleware::from_fn_with_state(state.clone(), require_reader);
        mcp_routes = mcp_routes.layer(guard.clone());
        web = web.layer(guard);
    }
    let timeout = std::time::Duration::from_secs(config.request_timeout_secs);
    let rest = rest::routes(state).layer(middleware::from_fn(move |req: Request, next: Next| {
        time_limit(timeout, req, next)
    }));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz).with_state(registry.clone()))
        .route("/metrics", get(metrics).with_state(registry))
        .merge(web)
        .merge(rest)
        .merge(mcp_routes)
        .layer(middleware::from_fn(observe))
}

/// Refuse a request from a caller who may not read (when reads require a token).
async fn require_reader(_: Reader, request: Request, next: Next) -> Response {
    next.run(request).await
}

/// One log line and metrics per request, and an `x-request-id` on every response (the caller's,
/// when it sent a sane one). Headers are never logged: they carry tokens.
async fn observe(request: Request, next: Next) -> Response {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| route_of(request.uri().path()), |p| p.as_str().to_owned());
    let mcp_method = request
        .headers()
        .get("mcp-method")
        .and_then(|v| v.to_str().ok())
        .map(|m| m.chars().take(64).collect::<String>());
    let request_id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map_or_else(
            || {
                format!(
                    "{:08x}{:08x}",
                    std::process::id(),
                    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                )
            },
            str::to_owned,
        );
    let mut response = next.run(request).await;
    let status = response.status().as_u16();
    crate::metrics::http(method.as_str(), &route, status, started);
    tracing::info!(
        target: "skillreg::http",
        request_id = %request_id,
        method = %method,
        route = %route,
        mcp_method = mcp_method.as_deref().unwrap_or(""),
        status,
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    if let Ok(v) = axum::http::HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-request-id", v);
    }
    response
}

/// A bounded route label for paths no route matched (keeps metric cardinality finite).
fn route_of(path: &str) -> String {
    match path {
        "/mcp" | "/healthz" | "/readyz" | "/metrics" | "/" => path.to_owned(),
        p if p.starts_with("/mcp") => "/mcp".to_owned(),
        _ => "unmatched".to_owned(),
    }
}

/// Answer 408 `request_timeout` when a request runs longer than `limit`.
async fn time_limit(limit: std::time::Duration, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError(Error::Timeout(limit.as_secs())).into_response(),
    }
}

/// Ready when storage answers and, if this process keeps a search index, it searches.
async fn readyz(State(registry): State<Registry>) -> Response {
    let health = registry.health().await;
    let (search, search_generation) = match health.search {
        SearchHealth::NotConfigured => ("not configured", None),
        SearchHealth::Ok { generation } => ("ok", Some(generation)),
        SearchHealth::Failing => ("failing", None),
    };
    let body = serde_json::json!({
        "database": if health.generation.is_some() { "ok" } else { "failing" },
        "search": search,
        "generation": health.generation,
        "search_generation": search_generation,
    });
    let status = if health.ready() {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// Prometheus text exposition.
async fn metrics(State(registry): State<Registry>) -> Response {
    let stats = registry.stats().await.ok();
    let gauges = stats.map(|s| {
        [
            ("namespaces", s.namespaces),
            ("skills", s.skills),
            ("versions", s.versions),
            ("files", s.files),
            ("blobs", s.blobs),
            ("blob_bytes", s.blob_bytes),
        ]
    });
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::metrics::render(gauges.as_ref().map(|g| &g[..])),
    )
        .into_response()
}

/// Serve `router` on `listener` until `shutdown` is cancelled, then finish in-flight requests.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    // Without TCP_NODELAY every SSE-framed 2025-era answer waits ~40 ms for a delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move { shutdown.cancelled().await })
    .await
}
