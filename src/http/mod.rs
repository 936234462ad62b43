//! The HTTP server: MCP over Streamable HTTP at `/mcp`, the REST admin API at `/v1`, and
//! `/healthz`.

pub mod rest;
mod web;

use std::net::SocketAddr;

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

use crate::auth::Authenticator;
use crate::error::Error;
use crate::mcp::SkillServer;
use crate::registry::Registry;
use rest::{ApiError, RestState};

/// Default cap on an upload body (a compressed skill archive).
pub const DEFAULT_MAX_UPLOAD_BYTES: usize = 32 * 1024 * 1024;

/// How the HTTP surface is exposed.
#[derive(Clone)]
pub struct HttpOptions {
    /// Extra `Host` header values accepted on `/mcp` besides localhost, 127.0.0.1 and ::1
    /// (DNS-rebinding protection). `*` disables the check.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted on `/mcp`; empty accepts any.
    pub allowed_origins: Vec<String>,
    /// The admin bearer token; `None` disables admin operations.
    pub admin_token: Option<String>,
    /// Every read (REST and MCP) requires a valid token; MCP results become `cacheScope: private`.
    pub require_read_token: bool,
    pub max_upload_bytes: usize,
    /// Catalog size up to which `skill://index.json` lists every skill.
    pub index_max_skills: usize,
    /// Time limit for one REST request.
    pub request_timeout: std::time::Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            admin_token: None,
            require_read_token: false,
            max_upload_bytes: DEFAULT_MAX_UPLOAD_BYTES,
            index_max_skills: crate::mcp::DEFAULT_INDEX_MAX_SKILLS,
            request_timeout: std::time::Duration::from_secs(30),
        }
    }
}

impl From<&crate::config::Config> for HttpOptions {
    fn from(c: &crate::config::Config) -> Self {
        Self {
            allowed_hosts: c.allowed_hosts.clone(),
            allowed_origins: c.allowed_origins.clone(),
            admin_token: c.admin_token.as_ref().map(|t| t.expose().to_owned()),
            require_read_token: c.require_read_token,
            max_upload_bytes: c.max_upload_bytes,
            index_max_skills: c.index_json_max_skills,
            request_timeout: std::time::Duration::from_secs(c.request_timeout_secs),
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("allowed_hosts", &self.allowed_hosts)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .field("require_read_token", &self.require_read_token)
            .field("max_upload_bytes", &self.max_upload_bytes)
            .finish()
    }
}

/// The application router.
pub fn router(registry: Registry, options: &HttpOptions, shutdown: CancellationToken) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_cancellation_token(shutdown);
    if options.allowed_hosts.iter().any(|h| h == "*") {
        config = config.disable_allowed_hosts();
    } else if !options.allowed_hosts.is_empty() {
        let hosts = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .chain(options.allowed_hosts.iter().cloned());
        config = config.with_allowed_hosts(hosts);
    }
    if !options.allowed_origins.is_empty() {
        config = config.with_allowed_origins(options.allowed_origins.iter().cloned());
    }
    let private = options.require_read_token;
    let index_max = options.index_max_skills;
    let mcp_registry = registry.clone();
    let mcp = StreamableHttpService::new(
        move || {
            let server = SkillServer::new(mcp_registry.clone()).with_index_max_skills(index_max);
            Ok(if private {
                server.with_private_cache()
            } else {
                server
            })
        },
        LocalSessionManager::default().into(),
        config,
    );
    let auth = Authenticator::new(registry.store().clone(), options.admin_token.as_deref());
    let mut mcp_routes = Router::new().nest_service("/mcp", mcp);
    if options.require_read_token {
        mcp_routes = mcp_routes.layer(middleware::from_fn_with_state(auth.clone(), require_token));
    }
    let mut web = web::routes(registry.clone());
    if options.require_read_token {
        // The catalog page reads too: same rule as /mcp.
        web = web.layer(middleware::from_fn_with_state(auth.clone(), require_token));
    }
    let timeout = options.request_timeout;
    let rest = rest::routes(RestState {
        registry: registry.clone(),
        auth,
        require_read_token: options.require_read_token,
        max_upload_bytes: options.max_upload_bytes,
    })
    .layer(middleware::from_fn(move |req: Request, next: Next| {
        time_limit(timeout, req, next)
    }));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz).with_state(registry.clone()))
        .route("/metrics", get(metrics).with_state(registry.clone()))
        .merge(web)
        .merge(rest)
        .merge(mcp_routes)
        .layer(middleware::from_fn(observe))
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

/// Answer 408 `request_timeout` when a REST request runs longer than `limit`.
async fn time_limit(limit: std::time::Duration, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError(Error::Timeout(limit.as_secs())).into_response(),
    }
}

/// Ready when the database answers and, if this process keeps a search index, it searches.
async fn readyz(State(registry): State<Registry>) -> Response {
    let database = registry.store().generation().await;
    let search = match registry.search("readiness", None, 1).await {
        Ok(_) => "ok",
        Err(Error::SearchUnavailable) => "not configured",
        Err(_) => "failing",
    };
    let body = serde_json::json!({
        "database": if database.is_ok() { "ok" } else { "failing" },
        "search": search,
        "generation": database.as_ref().ok(),
        "search_generation": registry.search_generation(),
    });
    let ready = database.is_ok() && search != "failing";
    let status = if ready {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// Prometheus text exposition.
async fn metrics(State(registry): State<Registry>) -> Response {
    let stats = registry.store().stats().await.ok();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::metrics::render(stats.as_ref()),
    )
        .into_response()
}

/// Refuse MCP requests without a valid token (when reads require one).
async fn require_token(
    State(auth): State<Authenticator>,
    request: Request,
    next: Next,
) -> Response {
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match auth.authenticate(header.as_deref()).await {
        Ok(p) if p.may_read() => next.run(request).await,
        Ok(_) => ApiError(Error::Unauthorized).into_response(),
        Err(e) => ApiError(e).into_response(),
    }
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
