//! The HTTP server: MCP over Streamable HTTP at `/mcp`, the REST admin API at `/v1`, and
//! `/healthz`.

pub mod rest;

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
    /// The admin bearer token; `None` disables admin operations.
    pub admin_token: Option<String>,
    /// Every read (REST and MCP) requires a valid token; MCP results become `cacheScope: private`.
    pub require_read_token: bool,
    pub max_upload_bytes: usize,
    /// Catalog size up to which `skill://index.json` lists every skill.
    pub index_max_skills: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            admin_token: None,
            require_read_token: false,
            max_upload_bytes: DEFAULT_MAX_UPLOAD_BYTES,
            index_max_skills: crate::mcp::DEFAULT_INDEX_MAX_SKILLS,
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
    let rest = rest::routes(RestState {
        registry,
        auth,
        require_read_token: options.require_read_token,
        max_upload_bytes: options.max_upload_bytes,
    });
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(rest)
        .merge(mcp_routes)
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
