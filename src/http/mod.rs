//! The HTTP server: MCP over Streamable HTTP at `/mcp`, the REST API at `/v1`, the web catalog at
//! `/`, the well-known discovery indexes and the ClawHub-compatible API (`/api/v1`) for clients
//! that install skills as files, and `/healthz`, `/readyz` and `/metrics` for operators.
//!
//! [`router`] builds the application from a [`Registry`] and the [`Config`]; [`serve`] runs it on
//! a listener until a shutdown token is cancelled (tests bind port 0 and serve the same way).

pub mod api;
mod app;
mod auth;
mod bodies;
mod card;
mod clawhub;
mod direct;
mod discovery;
mod events;
mod events_stream;
mod extract;
mod guard;
mod packs;
pub mod rest;
mod serve;
mod sessions;
mod signing;
mod slots;
mod tls;
mod trustpub;
mod web;

/// One example of every answer shape of the foreign APIs (ClawHub's, the discovery index's),
/// named, for the snapshot `tests/snapshots/foreign-shapes.json`.
#[cfg(test)]
pub(crate) fn foreign_shape_examples() -> Vec<(&'static str, serde_json::Value)> {
    let mut shapes = clawhub::examples();
    shapes.extend(discovery::examples());
    shapes
}

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::core::Principal;
use crate::error::Error;
use crate::mcp::{Codec, McpOptions, Port, Shared, SkillServer};
use crate::registry::{Registry, SearchHealth};
use app::{ApiError, AppState};
use auth::Reader;
pub use serve::ConnectionLimits;
pub use tls::Tls;

/// The application router. Background tasks it starts (session sweeping, rate-limit pruning)
/// stop when `shutdown` is cancelled.
pub fn router(registry: Registry, config: &Config, shutdown: CancellationToken) -> Router {
    // `/mcp` serves `skills/list` pages from entries the store keeps serialized.
    registry.reads().keep_entries(Arc::new(Codec));
    let state = AppState::new(registry.clone(), config);
    // The Host and Origin rules are one middleware on the whole router (`guard`), not rmcp's.
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_legacy_session_mode(config.mcp_sessions)
        .with_cancellation_token(shutdown.child_token())
        .disable_allowed_hosts();
    let options = McpOptions {
        reads_need_token: config.require_read_token,
        index_max_skills: config.index_json_max_skills,
        website_url: config.website_url.clone(),
        icon_url: config.icon_url.clone(),
        max_subscriptions: config.max_subscriptions_per_session,
        max_event_streams: config.max_event_streams,
        sessions: config.mcp_sessions,
    };
    let idle = Duration::from_secs(config.mcp_session_idle_secs);
    let session_limits = Arc::new(sessions::SessionLimits::new(
        config.max_mcp_sessions,
        config.max_mcp_sessions_per_client,
        Duration::from_secs(config.mcp_session_first_request_secs),
        idle,
    ));
    // 2025-era sessions are kept in storage too, so that any replica sharing it answers any
    // session, and a session outlives the process that opened it.
    let stored = config
        .mcp_sessions
        .then(|| Arc::new(sessions::StoredSessions::new(registry.clone(), idle)));
    mcp_config.session_store = stored.clone().map(|s| {
        s as Arc<dyn rmcp::transport::streamable_http_server::session::store::SessionStore>
    });
    let session_manager = Arc::new(sessions::CountedSessions::new(
        session_limits.clone(),
        stored,
    ));
    session_manager.sweep(shutdown.child_token());
    let shared = Arc::new(Shared::new(registry.caches(), &options));
    let server = SkillServer::new(registry.clone(), &options, shared.clone());
    let held = config.mcp_sessions.then(|| session_manager.clone());
    let direct = held
        .clone()
        .map(|sessions| direct::Direct::new(sessions, server.clone()));
    let mcp = StreamableHttpService::new(
        move || Ok(SkillServer::new(registry.clone(), &options, shared.clone())),
        session_manager,
        mcp_config,
    );
    let mcp_routes = Router::new().route_service(
        "/mcp",
        McpEndpoint(Arc::new(McpFront {
            state: state.clone(),
            sessions: session_limits,
            direct,
            server,
            held,
            mcp,
        })),
    );
    let operator = Router::new()
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state.clone());
    let rate_limits = Arc::new(guard::RateLimits::new(config));
    rate_limits.prune(shutdown.child_token());
    let timeout = Duration::from_secs(config.request_timeout_secs);
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(operator)
        .merge(web::routes(state.clone()))
        .merge(discovery::routes(state.clone()))
        .merge(card::routes(state.clone()))
        .merge(clawhub::routes(state.clone()))
        .merge(signing::routes(state.clone()))
        .merge(trustpub::routes(state.clone()))
        .merge(packs::routes(state.clone()))
        .merge(events::routes(state.clone()))
        .merge(rest::routes(state))
        .merge(mcp_routes)
        .layer(middleware::from_fn_with_state(
            Arc::new(Front {
                origins: guard::Origins::new(config),
                limits: rate_limits,
                bodies: bodies::Bodies::new(
                    config.max_body_bytes_in_flight,
                    Duration::from_secs(config.body_read_timeout_secs),
                ),
                max_upload_bytes: config.max_upload_bytes,
                timeout,
            }),
            front,
        ))
}

/// `/mcp`: rmcp's Streamable HTTP service behind what the registry adds to [`front`], as one
/// service rather than a layer (a `from_fn` layer costs every request a clone of the route it
/// wraps and a boxed `Next`): the caller is authenticated (the handler reads the principal to
/// know what the caller sees; when reads need a token, anonymous callers are refused here), then
/// the session gate reads the JSON-RPC method (`sessions::gate`), and the handler is told of the
/// request through a [`Port`]; a `skills/list` page, a `skills/get` entry or a file's content
/// is put into rmcp's response in `slots`.
#[derive(Clone)]
struct McpEndpoint(Arc<McpFront>);

struct McpFront {
    state: AppState,
    sessions: Arc<sessions::SessionLimits>,
    /// 2025-era sessions' reads answered beside rmcp (`direct`), when sessions are on.
    direct: Option<direct::Direct>,
    /// A handler for what is answered beside rmcp (`events_stream`).
    server: SkillServer,
    /// The sessions, when they are on.
    held: Option<Arc<sessions::CountedSessions>>,
    mcp: StreamableHttpService<SkillServer, sessions::CountedSessions>,
}

impl tower::Service<Request> for McpEndpoint {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures_core::future::BoxFuture<'static, Result<Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let front = self.0.clone();
        Box::pin(async move { Ok(front.serve(request).await) })
    }
}

impl McpFront {
    async fn serve(&self, request: Request) -> Response {
        let (mut parts, body) = request.into_parts();
        if let Err(refused) = Reader::from_request_parts(&mut parts, &self.state).await {
            return refused.into_response();
        }
        // What the handler learns of this request: the caller (authenticated just now) and,
        // for the methods whose bytes go around rmcp's serializer, a slot (`slots`).
        let port = Port {
            principal: parts.extensions.remove::<Principal>().unwrap_or_default(),
            ..Port::default()
        };
        let request = Request::from_parts(parts, body);
        sessions::gate(&self.sessions, request, async |request, call| {
            match call.method {
                Some("skills/list" | "skills/get") => self.splice_skills(request, port).await,
                Some("resources/read" | "resources/directory/read") => {
                    self.read(request, port, call).await
                }
                Some(crate::mcp::events::STREAM) if call.id.is_some() => {
                    self.events_stream(request, port, call).await
                }
                None if request.headers().contains_key(LAST_EVENT_ID) => {
                    self.resume(request, port).await
                }
                _ => self.rmcp(request, port).await,
            }
        })
        .await
    }

    /// `events/stream`, answered here when the request is one this process may answer
    /// (`events_stream`), else by rmcp.
    async fn events_stream(
        &self,
        request: Request,
        port: Port,
        call: sessions::Call<'_>,
    ) -> Response {
        let headers = request.headers();
        let session = headers
            .get(&sessions::SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        let ours = match (session, &self.held) {
            (Some(id), Some(held)) => held.knows(id).await,
            (Some(_), None) => false,
            (None, None) => true,
            (None, Some(_)) => headers
                .get(&sessions::PROTOCOL_VERSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .is_some_and(direct::is_stateless_era),
        };
        if !ours {
            return self.rmcp(request, port).await;
        }
        let session = session.is_some();
        events_stream::answer(&self.server, request.headers(), call, &port, session).await
    }

    /// rmcp's answer. Its future is large (every transport path of rmcp's): boxed where it is
    /// made, it is not copied again into each future that awaits it.
    async fn rmcp(&self, mut request: Request, port: Port) -> Response {
        request.extensions_mut().insert(port);
        Box::pin(self.mcp.handle(request))
            .await
            .map(axum::body::Body::new)
    }
}

/// What every request passes before a route, as one layer (each `from_fn` layer costs a
/// boxed future and a clone of the router per request): its log line and metrics, the Host and
/// Origin allow-lists and the rate limits (`guard`), the body budget and deadline (`bodies`),
/// then the time limit.
struct Front {
    origins: guard::Origins,
    limits: Arc<guard::RateLimits>,
    bodies: bodies::Bodies,
    max_upload_bytes: usize,
    timeout: Duration,
}

async fn front(State(front): State<Arc<Front>>, request: Request, next: Next) -> Response {
    observe(request, async |request: Request| {
        if let Some(refused) = front.origins.refuse(&request) {
            return refused;
        }
        let client = serve::client_ip(&request);
        // Health checks are never rate-limited (a proxy's checks share its address with the
        // traffic it forwards); one that presents a credential is counted like any request.
        let health = matches!(request.uri().path(), "/healthz" | "/readyz")
            && !request.headers().contains_key(header::AUTHORIZATION);
        if !health && let Some(refused) = front.limits.refuse(client, &request) {
            return refused;
        }
        // The most a body of this route may hold: `/mcp` takes JSON-RPC messages, far smaller
        // from anonymous callers; uploads are the largest bodies.
        let mcp = request.uri().path() == "/mcp";
        let cap = if mcp {
            sessions::max_body(request.headers())
        } else {
            front.max_upload_bytes
        };
        let (request, held) = match front.bodies.admit(request, cap, mcp) {
            Ok(admitted) => admitted,
            Err(refused) => return refused.into_response(),
        };
        let response = held.answer(time_limit(front.timeout, request, next).await);
        if health {
            return response;
        }
        front.limits.after(client, response)
    })
    .await
}

/// The header a request's id travels in, both ways.
const REQUEST_ID: header::HeaderName = header::HeaderName::from_static("x-request-id");
/// The header a client resumes an SSE stream with.
const LAST_EVENT_ID: header::HeaderName = header::HeaderName::from_static("last-event-id");
/// The JSON-RPC method a 2026-era client names in a header.
const MCP_METHOD: header::HeaderName = header::HeaderName::from_static("mcp-method");

/// One log line and metrics per request (with its client: behind a trusted proxy, the address
/// the proxy names), and an `x-request-id` on every response (the caller's, when it sent a sane
/// one). Headers are never logged: they carry tokens.
async fn observe<F: Future<Output = Response>>(
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| route_of(request.uri().path()), |p| p.as_str().to_owned());
    let mcp_method_header = request.headers().get(&MCP_METHOD).cloned();
    let client = serve::client_addr(&request);
    let request_id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map_or_else(
            || {
                new_request_id(
                    std::process::id(),
                    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                )
            },
            str::to_owned,
        );
    let mut response = next(request).await;
    let status = response.status().as_u16();
    crate::metrics::http(method.as_str(), &route, status, started);
    // The JSON-RPC method as `/mcp` read it from the body, else as the client's header named it.
    let mcp_method = response
        .extensions()
        .get::<sessions::JsonRpcMethod>()
        .map(|m| m.0.as_str())
        .or_else(|| mcp_method_header.as_ref().and_then(|v| v.to_str().ok()))
        .map_or("", |m| prefix(m, 64));
    tracing::info!(
        target: "skillreg::http",
        request_id = %request_id,
        client = %client,
        method = %method,
        route = %route,
        mcp_method,
        status,
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    if let Ok(v) = axum::http::HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID, v);
    }
    response
}

/// A request id of our own: the process id and the request's number, each as at least 8
/// lower-case hex digits (what `format!("{pid:08x}{n:08x}")` writes, without formatting
/// machinery: one is made per request).
fn new_request_id(pid: u32, n: u64) -> String {
    let mut id = String::with_capacity(24);
    for (value, bits) in [(u64::from(pid), 32), (n, (64 - n.leading_zeros()).max(32))] {
        let digits = bits.div_ceil(4);
        for i in (0..digits).rev() {
            id.push(char::from(
                b"0123456789abcdef"[(value >> (4 * i)) as usize & 0xf],
            ));
        }
    }
    id
}

/// The first `max` bytes of `s`, or fewer to end on a character.
fn prefix(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A bounded route label for paths no route matched (keeps metric cardinality finite).
fn route_of(path: &str) -> String {
    match path {
        "/mcp" | "/healthz" | "/readyz" | "/metrics" | "/" => path.to_owned(),
        p if p.starts_with("/mcp") => "/mcp".to_owned(),
        _ => "unmatched".to_owned(),
    }
}

/// Answer 408 `request_timeout` when a request runs longer than `limit`. An MCP event stream
/// (`GET /mcp`) is not a request: it lives until its session ends.
async fn time_limit(limit: Duration, request: Request, next: Next) -> Response {
    if request.method() == Method::GET && request.uri().path() == "/mcp" {
        return next.run(request).await;
    }
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError(Error::Timeout(limit.as_secs())).into_response(),
    }
}

/// Ready when storage answers and, if this process keeps a search index, the index is open and
/// has caught up with storage once since the process started.
/// Cheap at any catalog size; follows the read-token setting.
async fn readyz(State(s): State<AppState>, _: Reader) -> Response {
    let health = s.registry.health().await;
    let (search, search_generation) = match health.search {
        SearchHealth::NotConfigured => ("not configured", None),
        SearchHealth::CatchingUp { generation } => ("catching up", Some(generation)),
        SearchHealth::Ok { generation } => ("ok", Some(generation)),
        SearchHealth::Failing => ("failing", None),
    };
    // How many changes the index has yet to take in (0 when current).
    let index_lag = health
        .generation
        .zip(search_generation)
        .map(|(db, index)| db.saturating_sub(i64::try_from(index).unwrap_or(i64::MAX)));
    let body = serde_json::json!({
        "database": if health.generation.is_some() { "ok" } else { "failing" },
        "search": search,
        "generation": health.generation,
        "search_generation": search_generation,
        "index_lag": index_lag,
    });
    let status = if health.ready() {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// Prometheus text exposition. Constant cost: the catalog gauges are counters the store keeps.
/// Follows the read-token setting.
async fn metrics(State(s): State<AppState>, _: Reader) -> Response {
    let stats = s.registry.stats().await.ok();
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
        crate::metrics::render(
            gauges.as_ref().map(|g| &g[..]),
            &[
                ("database", s.registry.generation().await.ok()),
                (
                    "search",
                    s.registry
                        .index()
                        .search_generation()
                        .and_then(|g| i64::try_from(g).ok()),
                ),
            ],
            Some(s.registry.connections()),
            &s.registry.caches().samples(),
        ),
    )
        .into_response()
}

/// Serve `app` on `listener` (HTTPS with `tls`) until `shutdown` is cancelled, then finish
/// requests in flight.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    tls: Option<Tls>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve::serve(listener, app, limits, tls, shutdown).await
}

impl From<&Config> for ConnectionLimits {
    fn from(config: &Config) -> Self {
        Self {
            max_connections: config.max_connections,
            max_connections_per_client: config.max_connections_per_client,
            // `Config::check` refuses a list that does not parse.
            trusted_proxies: serve::TrustedProxies::new(
                config.trusted_proxies().unwrap_or_default(),
            ),
            header_read_timeout: Duration::from_secs(config.header_read_timeout_secs),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_request_id_of_our_own_is_what_the_format_writes() {
        for pid in [0, 1, 0xabc, u32::MAX] {
            for n in [0, 9, 0xdead_beef, 1 << 32, 0x1_2345_6789, u64::MAX] {
                assert_eq!(super::new_request_id(pid, n), format!("{pid:08x}{n:08x}"));
            }
        }
    }
}
