//! The HTTP server: MCP over Streamable HTTP at `/mcp`, health at `/healthz`.

use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;
use axum::serve::ListenerExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::mcp::SkillServer;
use crate::registry::Registry;

/// How the HTTP surface is exposed.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Extra `Host` header values accepted on `/mcp` besides localhost, 127.0.0.1 and ::1
    /// (DNS-rebinding protection). `*` disables the check.
    pub allowed_hosts: Vec<String>,
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
    let mcp = StreamableHttpService::new(
        move || Ok(SkillServer::new(registry.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .nest_service("/mcp", mcp)
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
