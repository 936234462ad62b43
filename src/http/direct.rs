//! A 2025-era session's `resources/read` and `resources/directory/read`, answered here rather
//! than through rmcp's session machinery.
//!
//! rmcp serves a request of a 2025-era session by handing it to the session's worker task over
//! a channel, spawning a task for the handler, and sending the response back over a second
//! channel as an SSE stream: most of a small read's cost. A read needs none of that: it
//! changes nothing, sends nothing to the client but its answer, and nothing else in the session
//! waits for it. So when the request is the plain case (below), the handler's
//! [`SkillServer::read`] or [`SkillServer::read_dir`] is called here, with the same [`Port`] as
//! through rmcp, its result made what rmcp makes it for a 2025-era peer, and its answer framed
//! as rmcp frames it: a priming event (`data:` empty, an event id, rmcp's `retry`), then
//! the JSON-RPC response (`data:` rmcp's serialization, an event id), the content put in the
//! marker's place as the kept bytes it is (`mcp::slots`). A contract test compares these bytes
//! with rmcp's answer to the same reads, successes and errors. `skills/get` stays rmcp's: rmcp
//! checks its URI and its result in ways this path would have to copy.
//!
//! The plain case: a POST whose session this process holds, whose `Accept` names both media
//! types without parameters, with a JSON content type, no `MCP-Protocol-Version` or a 2025-era
//! one, a numeric or string id, and parameters rmcp would read without a `_meta`. Anything else
//! goes to rmcp, which answers it (or refuses it) as it always has.
//!
//! Event ids are `<index>/<stream>`, rmcp's form, with stream numbers from [`FIRST_STREAM`] up,
//! far above any a session's worker counts to, so they are unique within the session as the
//! transport requires. A client resuming one (`Last-Event-ID`) gets an empty stream, as rmcp
//! answers the resumption of any stream whose request it has answered.
//!
//! A session's worker no longer sees every request, so its keep-alive would close a session
//! that only reads: sessions close after the idle limit by the gate's clock instead
//! (`sessions::CountedSessions`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
use rmcp::model::{
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use sse_stream::Sse;

use super::sessions::{Call, CountedSessions};
use crate::mcp::slots::marker_at;
use crate::mcp::{ContentSlot, Port, SkillServer};

/// The first stream number of these answers' event ids.
pub const FIRST_STREAM: u64 = 1 << 62;
/// The protocol versions whose requests (with a session) take this path.
const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The direct path's state: the sessions (to know which this process holds), a handler, the
/// priming event's `retry`, and the next stream number.
pub struct Direct {
    sessions: Arc<CountedSessions>,
    server: SkillServer,
    retry: Option<Duration>,
    next: AtomicU64,
}

impl Direct {
    pub fn new(sessions: Arc<CountedSessions>, server: SkillServer) -> Self {
        let retry = sessions.sse_retry();
        Self {
            sessions,
            server,
            retry,
            next: AtomicU64::new(FIRST_STREAM),
        }
    }

    /// The answer to a `resources/read` or a `resources/directory/read` when it is the plain
    /// case (see the module docs), else `None`: rmcp answers it.
    pub async fn answer(
        &self,
        headers: &HeaderMap,
        call: Call<'_>,
        port: &mut Port,
    ) -> Option<Response> {
        let session = headers
            .get(&super::sessions::SESSION_HEADER)?
            .to_str()
            .ok()?;
        if !plain(headers) {
            return None;
        }
        let id: RequestId = serde_json::from_str(call.id?.get()).ok()?;
        let params = call.params?.get();
        let slot = ContentSlot::default();
        let result = match call.method? {
            "resources/read" => {
                let params: ReadResourceRequestParams = serde_json::from_str(params).ok()?;
                if params.meta.is_some() || !self.sessions.holds(session).await {
                    return None;
                }
                port.content = Some(slot.clone());
                // `_meta` is never here (see above): not an install's read.
                self.server
                    .read(Some(port), params, false)
                    .await
                    .map(ServerResult::from)
            }
            "resources/directory/read" => {
                let params: ReadResourceDirectoryRequestParams =
                    serde_json::from_str(params).ok()?;
                if params.meta.is_some() || !self.sessions.holds(session).await {
                    return None;
                }
                self.server
                    .read_dir(Some(port), params)
                    .await
                    .map(ServerResult::ListResourcesResult)
            }
            _ => return None,
        };
        let message = match result {
            Ok(mut result) => {
                // What rmcp's handler does to every result for a 2025-era peer.
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        let stream = self.next.fetch_add(1, Ordering::Relaxed);
        Some(self.answer_with(stream, &message, &slot))
    }

    /// The event stream: priming, then the message with the content (left in `slot`) in its
    /// marker's place.
    fn answer_with(
        &self,
        stream: u64,
        message: &ServerJsonRpcMessage,
        slot: &ContentSlot,
    ) -> Response {
        let mut priming = Sse::default().data("").id(format!("0/{stream}"));
        priming.retry = self
            .retry
            .map(|r| u64::try_from(r.as_millis()).unwrap_or(u64::MAX));
        let data = serde_json::to_string(message).expect("a JSON-RPC message serializes");
        let event: Bytes = Sse::default().data(data).id(format!("1/{stream}")).into();
        let mut frames = vec![Bytes::from(priming)];
        match slot.take().zip(marker_at(&event, slot.marker())) {
            Some((content, at)) => {
                frames.push(event.slice(..at.start));
                frames.push(content);
                frames.push(event.slice(at.end..));
            }
            None => frames.push(event),
        }
        event_stream(frames)
    }

    /// A client resuming a stream answered here (`Last-Event-ID`): an empty stream, as rmcp
    /// answers for the streams of the requests it has answered (it keeps nothing to send
    /// again). `None` when the id names no such stream or the session is not held here: rmcp
    /// answers.
    pub async fn resume(&self, headers: &HeaderMap) -> Option<Response> {
        let last = headers.get(super::LAST_EVENT_ID)?.to_str().ok()?;
        let stream: u64 = last.split_once('/')?.1.parse().ok()?;
        let session = headers
            .get(&super::sessions::SESSION_HEADER)?
            .to_str()
            .ok()?;
        if stream < FIRST_STREAM || !self.sessions.holds(session).await {
            return None;
        }
        Some(event_stream(Vec::new()))
    }
}

/// Whether the headers are the plain case rmcp would accept as they are (see the module docs).
fn plain(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains([';', '"']) {
            return false;
        }
        for essence in value.split(',').map(str::trim) {
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    let version = match headers.get(super::sessions::PROTOCOL_VERSION_HEADER) {
        None => true,
        Some(v) => v.to_str().is_ok_and(|v| LEGACY_VERSIONS.contains(&v)),
    };
    json && sse && version && super::sessions::is_json(headers)
}

/// Whether a request of this protocol version is of the era without sessions (2026-07-28 on;
/// versions are dates, which sort as strings).
pub fn is_stateless_era(version: &str) -> bool {
    version.len() == 10 && version >= "2026-07-28"
}

/// An event stream of these frames, with rmcp's headers.
fn event_stream(frames: Vec<Bytes>) -> Response {
    sse_response(Body::new(Frames(frames.into())))
}

/// A response whose body is an event stream, with rmcp's headers.
pub fn sse_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A body sent as the frames it is made of, its length known.
struct Frames(VecDeque<Bytes>);

impl HttpBody for Frames {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(
            self.get_mut()
                .0
                .pop_front()
                .map(|data| Ok(Frame::data(data))),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.iter().map(|frame| frame.len() as u64).sum())
    }
}
