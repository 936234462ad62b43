//! `events/stream` over Streamable HTTP, answered beside rmcp: the request's response is an
//! SSE stream of the Events extension's notifications for it (`mcp::events::EventStream`),
//! ending with the request's result.
//!
//! rmcp 3.11 cannot carry it: its session manager sends a handler's notification on the
//! request's own stream only when it is that request's progress or cancellation, and a
//! 2026-07-28 request (no session) has no other stream. So the front answers it for both eras:
//! a request of a session this process holds or storage keeps (any other is rmcp's to answer:
//! 404), and a request without a session when it is of the 2026-07-28 era or sessions are off
//! (a 2025-era request without one is rmcp's to refuse). Each frame is one SSE event; in a
//! session each has an event id (`<index>/<stream>`, stream numbers far above rmcp's, as
//! `direct` numbers its own), and resuming one gets an empty stream (`direct`): the client
//! opens a new stream from its last cursor. A client that closes the connection ends the
//! stream. A parameter error, an unknown event type, a bad cursor or no place left
//! (`max_event_streams`) is the request's JSON-RPC error, as JSON.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use serde_json::Value;
use sse_stream::Sse;

use super::sessions::Call;
use crate::mcp::{Port, SkillServer};

/// Stream numbers of these answers' event ids: above `direct`'s, which start at 2^62.
static NEXT_STREAM: AtomicU64 = AtomicU64::new((1 << 62) + (1 << 61));

/// Whether the client takes an SSE answer (`Accept` names `text/event-stream`).
fn takes_sse(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|essence| {
            essence
                .split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

/// The answer to `events/stream` (`call` has its id): an SSE stream, or its JSON-RPC error.
/// `session`: the request names a session (its event ids are numbered).
pub async fn answer(
    server: &SkillServer,
    headers: &HeaderMap,
    call: Call<'_>,
    port: &Port,
    session: bool,
) -> Response {
    let Some(id) = call
        .id
        .and_then(|raw| serde_json::from_str::<RequestId>(raw.get()).ok())
    else {
        // The gate read an id it could not have read otherwise: refuse as rmcp would.
        return axum::http::StatusCode::BAD_REQUEST.into_response();
    };
    let refuse = |error| json(&ServerJsonRpcMessage::error(error, Some(id.clone())));
    if !takes_sse(headers) {
        return refuse(rmcp::model::ErrorData::invalid_request(
            "events/stream answers with an event stream: Accept must name text/event-stream",
            Some(serde_json::json!({"code": crate::core::Code::InvalidRequest.as_str()})),
        ));
    }
    let params: Option<Value> = call
        .params
        .and_then(|raw| serde_json::from_str(raw.get()).ok());
    let subscription = serde_json::to_value(&id).unwrap_or_default();
    let stream = match server
        .open_event_stream(Some(port), subscription, params.as_ref())
        .await
    {
        Ok(stream) => stream,
        Err(error) => return refuse(error),
    };
    let number = session.then(|| NEXT_STREAM.fetch_add(1, Ordering::Relaxed));
    let frames =
        futures_util::stream::unfold((stream, 0u64), move |(mut stream, index)| async move {
            let message = stream.next().await?;
            let data = serde_json::to_string(&message).expect("JSON serializes");
            let mut event = Sse::default().data(data);
            if let Some(number) = number {
                event = event.id(format!("{index}/{number}"));
            }
            Some((
                Ok::<_, std::convert::Infallible>(Bytes::from(event)),
                (stream, index + 1),
            ))
        });
    super::direct::sse_response(Body::from_stream(frames))
}

/// A JSON-RPC message answered as JSON.
fn json(message: &ServerJsonRpcMessage) -> Response {
    axum::Json(message).into_response()
}
