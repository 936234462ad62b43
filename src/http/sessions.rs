//! Bounded MCP sessions (2025-era `initialize` sessions on `/mcp`).
//!
//! Each session costs memory for as long as it lives, and anyone may open one. So:
//! - at most `max_sessions` live at once, and at most `max_sessions_per_client` per client
//!   address; an `initialize` past either cap is answered 503 `too_many_sessions` with
//!   `Retry-After`;
//! - a session that never sends a request after its handshake (`initialize`, then
//!   `notifications/initialized`) is closed after `first_request_timeout`; a session that did is
//!   closed after `idle` without requests (rmcp's keep-alive).
//!
//! [`CountedSessions`] wraps rmcp's in-memory session manager to learn when sessions end;
//! [`gate`], called by `/mcp`'s one service in front of rmcp's (`http::McpEndpoint`), admits,
//! registers and marks them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use futures_core::Stream;
use http_body_util::BodyExt as _;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio_util::sync::CancellationToken;

use super::app::ApiError;
use crate::error::Error;
use crate::mcp::envelope::{self, Message};

/// The session header of the Streamable HTTP transport.
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// Largest JSON-RPC body of an authenticated caller (rmcp's own cap).
const MAX_PEEK_BODY: usize = 4 * 1024 * 1024;
/// Largest JSON-RPC body of an anonymous caller: its requests are small (a URI, a query, a
/// cursor), and every anonymous body is held before anything else admits it.
const MAX_ANONYMOUS_BODY: usize = 256 * 1024;

/// The largest `/mcp` body a request with these headers may send: a caller that sends
/// `Authorization` is authenticated before its body is read (a bad credential is refused).
pub fn max_body(headers: &axum::http::HeaderMap) -> usize {
    if headers.contains_key(header::AUTHORIZATION) {
        MAX_PEEK_BODY
    } else {
        MAX_ANONYMOUS_BODY
    }
}

/// The caps, and who holds which session.
pub struct SessionLimits {
    max_sessions: usize,
    max_per_client: usize,
    first_request_timeout: Duration,
    state: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    /// Live sessions: their client, when they were opened, and whether they sent a request.
    sessions: HashMap<SessionId, Session>,
    per_client: HashMap<IpAddr, usize>,
    /// `initialize` requests admitted and not answered yet, per client.
    pending: HashMap<IpAddr, usize>,
}

struct Session {
    client: IpAddr,
    opened: Instant,
    active: bool,
}

impl Book {
    fn total(&self) -> usize {
        self.sessions.len() + self.pending.values().sum::<usize>()
    }

    fn of(&self, client: IpAddr) -> usize {
        self.per_client.get(&client).copied().unwrap_or(0)
            + self.pending.get(&client).copied().unwrap_or(0)
    }

    fn release_pending(&mut self, client: IpAddr) {
        if let Some(n) = self.pending.get_mut(&client) {
            *n -= 1;
            if *n == 0 {
                self.pending.remove(&client);
            }
        }
    }
}

impl SessionLimits {
    pub fn new(
        max_sessions: usize,
        max_per_client: usize,
        first_request_timeout: Duration,
    ) -> Self {
        Self {
            max_sessions: max_sessions.max(1),
            max_per_client: max_per_client.max(1),
            first_request_timeout,
            state: Mutex::new(Book::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, Book> {
        // The state is bookkeeping of sessions rmcp holds; a panic mid-update leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserve a session for `client`, or say why not.
    fn admit(&self, client: IpAddr) -> bool {
        let mut state = self.state();
        if state.total() >= self.max_sessions || state.of(client) >= self.max_per_client {
            return false;
        }
        *state.pending.entry(client).or_default() += 1;
        true
    }

    /// The reservation of `client` became session `id` (or, with `None`, came to nothing).
    fn settle(&self, client: IpAddr, id: Option<SessionId>) {
        let mut state = self.state();
        state.release_pending(client);
        if let Some(id) = id {
            *state.per_client.entry(client).or_default() += 1;
            state.sessions.insert(
                id,
                Session {
                    client,
                    opened: Instant::now(),
                    active: false,
                },
            );
        }
    }

    /// Session `id` sent a request beyond its handshake.
    fn touch(&self, id: &str) {
        if let Some(session) = self.state().sessions.get_mut(id) {
            session.active = true;
        }
    }

    /// Session `id` ended.
    fn forget(&self, id: &SessionId) {
        let mut state = self.state();
        if let Some(session) = state.sessions.remove(id)
            && let Some(n) = state.per_client.get_mut(&session.client)
        {
            *n -= 1;
            if *n == 0 {
                state.per_client.remove(&session.client);
            }
        }
    }

    /// Sessions opened longer than the first-request timeout ago that never sent a request.
    fn idle_after_handshake(&self) -> Vec<SessionId> {
        let state = self.state();
        state
            .sessions
            .iter()
            .filter(|(_, s)| !s.active && s.opened.elapsed() >= self.first_request_timeout)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Live sessions.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.state().sessions.len()
    }
}

/// rmcp's in-memory session manager, telling [`SessionLimits`] when a session ends.
pub struct CountedSessions {
    inner: LocalSessionManager,
    limits: Arc<SessionLimits>,
}

impl CountedSessions {
    /// Sessions that close after `idle` without a request.
    pub fn new(limits: Arc<SessionLimits>, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Self { inner, limits }
    }

    /// Close sessions that stayed silent after their handshake, every second, until `stop`.
    pub fn sweep(self: &Arc<Self>, stop: CancellationToken) {
        let sessions = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                for id in sessions.limits.idle_after_handshake() {
                    tracing::debug!(session = %id, "closing a session that sent nothing after its handshake");
                    let _ = sessions.close_session(&id).await;
                }
            }
        });
    }
}

impl SessionManager for CountedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.limits.forget(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}

/// Whether the request says its body is JSON (what rmcp requires before reading it; any other
/// content type is rmcp's to refuse, 415).
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// The gate in front of `/mcp`: answer a JSON body that is no JSON-RPC message (`-32700`,
/// `-32600`, HTTP 400), refuse requests whose parameters have the wrong types (`-32602`), admit `initialize` requests within the session caps, register the sessions they
/// open, and mark the sessions that send requests. It reads every POST's body whole (as rmcp
/// does) and hands the request on with the JSON-RPC method it read when it is one the server
/// answers (`None` for anything else: a GET, a DELETE, a notification, a body that is no single
/// request). The method it read, whatever it is, is left on the response ([`JsonRpcMethod`]).
pub async fn gate<F: Future<Output = Response>>(
    limits: &SessionLimits,
    request: Request,
    next: impl FnOnce(Request, Option<&'static str>) -> F,
) -> Response {
    let client = super::serve::client_ip(&request);
    let session = request
        .headers()
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if request.method() != Method::POST {
        if let Some(id) = &session
            && request.method() == Method::GET
        {
            // A standalone SSE stream: the session is in use.
            limits.touch(id);
        }
        return next(request, None).await;
    }
    // Read the body (rmcp reads it whole too) to see which method this is.
    let cap = max_body(request.headers());
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match http_body_util::Limited::new(body, cap).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return ApiError(Error::BodyTooLarge(cap)).into_response(),
    };
    let message = match envelope::read(&bytes) {
        Ok(message) => Some(message),
        Err(refused) if is_json(&parts.headers) => {
            let body = refused.response();
            return (axum::http::StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
        }
        Err(_) => None,
    };
    if let Some(refused) = message.as_ref().and_then(Message::refused_params) {
        return axum::Json(refused.response()).into_response();
    }
    let known = message
        .as_ref()
        .and_then(|m| m.method.as_deref())
        .and_then(crate::mcp::params::known);
    let method = message
        .and_then(|m| m.method)
        .map(std::borrow::Cow::into_owned);
    let request = Request::from_parts(parts, Body::from(bytes));
    let mut response = if let Some(id) = &session {
        if method.as_deref() != Some("notifications/initialized") {
            limits.touch(id);
        }
        next(request, known).await
    } else if method.as_deref() != Some("initialize") {
        next(request, known).await
    } else if !limits.admit(client) {
        crate::metrics::error(crate::core::Code::TooManySessions.as_str());
        let mut response = ApiError(Error::TooManySessions).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
        response
    } else {
        let response = next(request, known).await;
        let id = response
            .headers()
            .get(&SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(SessionId::from);
        limits.settle(client, id);
        response
    };
    if let Some(method) = method {
        response.extensions_mut().insert(JsonRpcMethod(method));
    }
    response
}

/// The JSON-RPC method of the request a response answers, as the gate read it from the body
/// (for the access log: a 2025-era request names its method only there).
#[derive(Clone)]
pub struct JsonRpcMethod(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_live_and_pending_sessions() {
        let limits = SessionLimits::new(3, 2, Duration::ZERO);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        assert!(limits.admit(a));
        assert!(limits.admit(a));
        assert!(!limits.admit(a), "per client, pending ones count");
        limits.settle(a, Some(SessionId::from("s1")));
        limits.settle(a, None);
        assert!(limits.admit(b) && limits.admit(b));
        limits.settle(b, Some(SessionId::from("s2")));
        limits.settle(b, Some(SessionId::from("s3")));
        assert!(!limits.admit(a), "globally");
        assert_eq!(limits.live(), 3);
        limits.touch("s2");
        let mut idle = limits.idle_after_handshake();
        idle.sort();
        assert_eq!(idle, [SessionId::from("s1"), SessionId::from("s3")]);
        limits.forget(&SessionId::from("s1"));
        assert!(limits.admit(a), "a session ended: room again");
    }
}
