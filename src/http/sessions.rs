//! Bounded MCP sessions (2025-era `initialize` sessions on `/mcp`).
//!
//! Each session costs memory for as long as it lives, and anyone may open one. So:
//! - at most `max_sessions` live at once, and at most `max_sessions_per_client` per client
//!   address; an `initialize` past either cap is answered 503 `too_many_sessions` with
//!   `Retry-After`;
//! - a session that never sends a request after its handshake (`initialize`, then
//!   `notifications/initialized`) is closed after `first_request_timeout`; a session that did is
//!   closed after `idle` without requests, by the time of its last request here (not rmcp's keep-alive: reads answered beside rmcp, `http::direct`, never reach its worker).
//!
//! [`CountedSessions`] wraps rmcp's in-memory session manager to learn when sessions end;
//! [`gate`], called by `/mcp`'s one service in front of rmcp's (`http::McpEndpoint`), admits,
//! registers and marks them.
//!
//! Sessions are also kept in storage ([`StoredSessions`], rmcp's `SessionStore`), so that any
//! process sharing it answers any session: rmcp puts a session there after its `initialize`,
//! and a process that does not hold a session it is asked about brings it back from there
//! (replaying the handshake; [`CountedSessions::restore_session`] admits it within the caps
//! like a new one, else it is answered 404 as unknown). A `DELETE` removes it. While a process
//! holds a session that receives requests, it marks the row used at most every [`mark_every`]
//! (one statement for all its sessions due); a row unused for longer than the idle limit plus
//! that is refused (404, as an unknown session) and swept. So a session held by no process any
//! more (its process died, or every process closed it as idle) is forgotten a little after the
//! idle limit. Closing a session in memory (idle, shutdown) leaves its row: another process may
//! still be serving it; a session closed for sending nothing after its handshake loses its row
//! too, unless a process has marked it used (it sent its requests elsewhere). A failing storage
//! fails no request that does not need it: a put or a mark that fails is logged (the session
//! lives on in the process that holds it); a failing get is rmcp's 500 for that request.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
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
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio_util::sync::CancellationToken;

use super::app::ApiError;
use crate::error::Error;
use crate::mcp::envelope::{self, Message};
use crate::registry::Registry;

/// The session header of the Streamable HTTP transport.
pub(super) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The header naming the protocol version of a request.
pub(super) const PROTOCOL_VERSION_HEADER: HeaderName =
    HeaderName::from_static("mcp-protocol-version");
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
    /// A session is closed after this long without a request.
    idle: Duration,
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
    /// A request came since the session's stored row was last marked used.
    used: bool,
    /// When its last request came (or it was opened).
    last: Instant,
    /// When this process last marked the row used (or put it); `None`: never.
    marked: Option<Instant>,
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
        idle: Duration,
    ) -> Self {
        Self {
            max_sessions: max_sessions.max(1),
            max_per_client: max_per_client.max(1),
            first_request_timeout,
            idle,
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
                    used: false,
                    last: Instant::now(),
                    marked: Some(Instant::now()),
                },
            );
        }
    }

    /// Session `id` sent a request beyond its handshake.
    fn touch(&self, id: &str) {
        if let Some(session) = self.state().sessions.get_mut(id) {
            session.active = true;
            session.used = true;
            session.last = Instant::now();
        }
    }

    /// Session `id`, opened elsewhere, is brought back here for a request of `client`: admitted
    /// within the caps like a new one (`false`: no room), and in use. One already here stays
    /// as it is.
    fn restore(&self, client: IpAddr, id: &SessionId) -> bool {
        let mut state = self.state();
        if state.sessions.contains_key(id) {
            return true;
        }
        if state.total() >= self.max_sessions || state.of(client) >= self.max_per_client {
            return false;
        }
        *state.per_client.entry(client).or_default() += 1;
        state.sessions.insert(
            id.clone(),
            Session {
                client,
                opened: Instant::now(),
                active: true,
                used: true,
                last: Instant::now(),
                marked: None,
            },
        );
        true
    }

    /// Sessions whose stored row is due to be marked used: a request came since it was last
    /// marked, and that was `every` ago or longer (or never). They count as marked from now.
    fn due_marks(&self, every: Duration) -> Vec<SessionId> {
        let mut state = self.state();
        let now = Instant::now();
        let mut due = Vec::new();
        for (id, session) in &mut state.sessions {
            if session.used && session.marked.is_none_or(|at| now - at >= every) {
                session.used = false;
                session.marked = Some(now);
                due.push(id.clone());
            }
        }
        due
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

    /// Sessions that sent requests, the last one the idle limit ago or longer.
    fn idle(&self) -> Vec<SessionId> {
        let state = self.state();
        state
            .sessions
            .iter()
            .filter(|(_, s)| s.active && s.last.elapsed() >= self.idle)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Live sessions.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.state().sessions.len()
    }
}

/// How often a process marks the stored rows of the sessions it serves as used: a fifth of the
/// idle limit, between a second and a minute.
pub fn mark_every(idle: Duration) -> Duration {
    (idle / 5).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// rmcp's in-memory session manager, telling [`SessionLimits`] when a session ends.
pub struct CountedSessions {
    inner: LocalSessionManager,
    limits: Arc<SessionLimits>,
    /// Where sessions are kept for other processes, when they are.
    stored: Option<Arc<StoredSessions>>,
}

impl CountedSessions {
    /// Sessions kept in `stored` too when given. They close after the idle limit without a
    /// request ([`Self::sweep`]): not by rmcp's keep-alive, which counts only what passes
    /// through a session's worker, and a read answered beside it (`http::direct`) does not.
    pub fn new(limits: Arc<SessionLimits>, stored: Option<Arc<StoredSessions>>) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = None;
        Self {
            inner,
            limits,
            stored,
        }
    }

    /// Until `stop`, every second: close sessions idle for the idle limit (their stored rows
    /// stay: another process may be serving them), and those that stayed silent after their
    /// handshake (and delete their stored rows, unless a process has marked one used); and with stored
    /// sessions, mark the rows of those in use ([`SessionLimits::due_marks`]) and
    /// sweep the rows unused for too long.
    pub fn sweep(self: &Arc<Self>, stop: CancellationToken) {
        if let Some(stored) = &self.stored {
            stored
                .clone()
                .upkeep(self.limits.clone(), stop.child_token());
        }
        let sessions = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                for id in sessions.limits.idle() {
                    tracing::debug!(session = %id, "closing an idle session");
                    let _ = sessions.close_session(&id).await;
                }
                for id in sessions.limits.idle_after_handshake() {
                    tracing::debug!(session = %id, "closing a session that sent nothing after its handshake");
                    let _ = sessions.close_session(&id).await;
                    // Its row too, unless another process has seen a request of it.
                    if let Some(stored) = &sessions.stored
                        && let Err(e) = stored.registry.sessions().delete_unused(&id).await
                    {
                        tracing::debug!(session = %id, error = %e, "a silent session's row stays");
                    }
                }
            }
        });
    }
}

impl CountedSessions {
    /// Whether this process holds session `id` (a session held elsewhere is brought back by
    /// rmcp, on a request it answers).
    pub async fn holds(&self, id: &str) -> bool {
        self.inner
            .has_session(&SessionId::from(id))
            .await
            .unwrap_or(false)
    }

    /// Whether the session `id` is one this process holds or storage keeps (another process's,
    /// live): a request of it may be answered here.
    pub async fn knows(&self, id: &str) -> bool {
        if self.holds(id).await {
            return true;
        }
        match &self.stored {
            Some(stored) => matches!(stored.load(id).await, Ok(Some(_))),
            None => false,
        }
    }

    /// The `retry` of rmcp's priming events.
    pub fn sse_retry(&self) -> Option<Duration> {
        self.inner.session_config.sse_retry
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
        // The client whose request brings the session back (set by `gate`).
        let client = CLIENT
            .try_with(|client| *client)
            .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        if !self.limits.restore(client, &id) {
            tracing::debug!(session = %id, %client, "no room to bring a stored session back");
            return Ok(RestoreOutcome::NotSupported);
        }
        self.inner.restore_session(id).await
    }
}

tokio::task_local! {
    /// The client of the request being served, for a session brought back on its behalf.
    static CLIENT: IpAddr;
}

/// Sessions kept in storage, as rmcp's `SessionStore`: a row per session, holding its
/// `initialize` parameters as JSON (see the module docs).
pub struct StoredSessions {
    registry: Registry,
    /// A row unused for longer than this (seconds) is refused and swept.
    max_age_secs: u64,
    mark_every: Duration,
}

impl StoredSessions {
    /// Sessions that live `idle` without a request.
    pub fn new(registry: Registry, idle: Duration) -> Self {
        let mark_every = mark_every(idle);
        Self {
            registry,
            max_age_secs: (idle + mark_every).as_secs(),
            mark_every,
        }
    }

    /// Every second until `stop`: mark the rows of the sessions due ([`SessionLimits::due_marks`])
    /// used; every [`mark_every`], sweep the rows unused for too long. A failure is logged when
    /// storage starts failing, and again once it answers.
    fn upkeep(self: Arc<Self>, limits: Arc<SessionLimits>, stop: CancellationToken) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut swept = Instant::now();
            let mut failing = false;
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let due = limits.due_marks(self.mark_every);
                let ids: Vec<&str> = due.iter().map(|id| id.as_ref()).collect();
                let mut result = self.registry.sessions().touch(&ids).await.map(drop);
                if result.is_ok() && swept.elapsed() >= self.mark_every {
                    swept = Instant::now();
                    result = self
                        .registry
                        .sessions()
                        .sweep(self.max_age_secs)
                        .await
                        .map(|n| {
                            if n > 0 {
                                tracing::debug!(sessions = n, "stale stored MCP sessions swept");
                            }
                        });
                }
                match result {
                    Err(e) if !failing => {
                        failing = true;
                        tracing::warn!(error = %e, "stored MCP sessions: upkeep failing");
                    }
                    Ok(()) if failing => {
                        failing = false;
                        tracing::info!("stored MCP sessions: upkeep works again");
                    }
                    _ => {}
                }
            }
        });
    }
}

#[async_trait::async_trait]
impl SessionStore for StoredSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(state) = self
            .registry
            .sessions()
            .get(session_id, self.max_age_secs)
            .await?
        else {
            return Ok(None);
        };
        // A state this build cannot read (another rmcp's) is an unknown session: the client
        // opens a new one.
        Ok(serde_json::from_str(&state)
            .inspect_err(|e| tracing::warn!(error = %e, "a stored MCP session does not read"))
            .ok())
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_string(state)?;
        Ok(self.registry.sessions().put(session_id, &state).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.registry.sessions().delete(session_id).await?;
        Ok(())
    }
}

/// Whether the request says its body is JSON (what rmcp requires before reading it; any other
/// content type is rmcp's to refuse, 415).
pub(super) fn is_json(headers: &axum::http::HeaderMap) -> bool {
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
/// `-32600`, HTTP 400), refuse requests whose parameters have the wrong types (`-32602`), admit
/// `initialize` requests within the session caps, register the sessions they open, and mark
/// the sessions that send requests. It reads every POST's body whole (as rmcp
/// does) and hands the request on with the JSON-RPC method it read when it is one the server
/// answers (`None` for anything else: a GET, a DELETE, a notification, a body that is no single
/// request). The method it read, whatever it is, is left on the response ([`JsonRpcMethod`]).
pub async fn gate(
    limits: &SessionLimits,
    request: Request,
    next: impl AsyncFnOnce(Request, Call<'_>) -> Response,
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
        return next(request, Call::default()).await;
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
    let method = message.as_ref().and_then(|m| m.method.as_deref());
    let call = Call {
        method: method.and_then(crate::mcp::params::known),
        id: message.as_ref().and_then(|m| m.id),
        params: message.as_ref().and_then(|m| m.params),
    };
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    let mut response = if let Some(id) = &session {
        if method != Some("notifications/initialized") {
            limits.touch(id);
        }
        CLIENT.scope(client, next(request, call)).await
    } else if method != Some("initialize") {
        next(request, call).await
    } else if !limits.admit(client) {
        crate::metrics::error(crate::core::Code::TooManySessions.as_str());
        let mut response = ApiError(Error::TooManySessions).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
        response
    } else {
        let response = next(request, call).await;
        let id = response
            .headers()
            .get(&SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(SessionId::from);
        limits.settle(client, id);
        response
    };
    if let Some(method) = method {
        response
            .extensions_mut()
            .insert(JsonRpcMethod(method.to_owned()));
    }
    response
}

/// What the gate read of a POST's JSON-RPC message, borrowed from its body: the method when it
/// is one the server answers, the id and the parameters (raw).
#[derive(Clone, Copy, Default)]
pub struct Call<'a> {
    pub method: Option<&'static str>,
    pub id: Option<&'a serde_json::value::RawValue>,
    pub params: Option<&'a serde_json::value::RawValue>,
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
        let limits = SessionLimits::new(3, 2, Duration::ZERO, Duration::from_secs(60));
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

    #[test]
    fn restored_sessions_count_and_rows_are_marked_when_due() {
        let limits = SessionLimits::new(2, 2, Duration::ZERO, Duration::from_secs(60));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        limits.settle(a, Some(SessionId::from("here")));
        assert!(
            limits.due_marks(Duration::ZERO).is_empty(),
            "no request yet"
        );
        assert!(limits.restore(a, &SessionId::from("back")));
        assert!(limits.restore(a, &SessionId::from("back")), "already here");
        assert!(
            !limits.restore(a, &SessionId::from("third")),
            "within the caps"
        );
        assert_eq!(limits.live(), 2);
        assert!(limits.idle_after_handshake() == [SessionId::from("here")]);
        // A restored session is in use: its row is due at once, then not before `every`.
        assert_eq!(
            limits.due_marks(Duration::from_secs(60)),
            [SessionId::from("back")]
        );
        limits.touch("back");
        limits.touch("here");
        assert!(limits.due_marks(Duration::from_secs(60)).is_empty());
        let mut due = limits.due_marks(Duration::ZERO);
        due.sort();
        assert_eq!(due, [SessionId::from("back"), SessionId::from("here")]);
        limits.forget(&SessionId::from("back"));
        assert!(limits.restore(a, &SessionId::from("third")), "room again");
    }

    #[test]
    fn sessions_idle_since_their_last_request_are_closed() {
        let limits = SessionLimits::new(4, 4, Duration::from_secs(60), Duration::from_millis(200));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        for id in ["busy", "quiet", "silent"] {
            limits.settle(a, Some(SessionId::from(id)));
        }
        limits.touch("busy");
        limits.touch("quiet");
        std::thread::sleep(Duration::from_millis(120));
        limits.touch("busy");
        assert!(limits.idle().is_empty(), "none idle for the limit yet");
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(
            limits.idle(),
            [SessionId::from("quiet")],
            "a request resets the time; a session that sent none is the first-request rule's"
        );
    }
}
