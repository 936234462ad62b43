//! The Events extension (SEP-3415, `io.modelcontextprotocol/events`) on the wire: `events/list`
//! (each event type with its input and payload schemas, and the delivery modes it offers),
//! `events/poll` (one event type per request, an opaque cursor, `truncated` when events were
//! skipped) and `events/stream` (push: a request held open while the server sends
//! `notifications/events/*` for it). The feed is the registry's (`registry::Events`): the REST
//! feed's events, as the caller may see them.
//!
//! A stream ([`EventStream`]) starts with `notifications/events/active` (the cursor it starts
//! from; `truncated` when a given cursor is older than what is kept), then sends each event as
//! `notifications/events/event` with the cursor after it, a `notifications/events/heartbeat`
//! after [`HEARTBEAT`] without one, and `notifications/events/error` when the feed cannot be
//! read (it goes on trying). Every frame names the stream in
//! `_meta["io.modelcontextprotocol/subscriptionId"]`: the request's id. It wakes on every change
//! to the catalog (on any replica: the registry's change signal) and looks again every
//! [`RECHECK`]. It ends with the request's result (`{"_meta": {}}`) after [`MAX_STREAM`], so that
//! a client resumes with its cursor and its credentials are checked again, or when the process
//! stops. The transports carry the frames: over HTTP, the request's own SSE stream, answered
//! beside rmcp (`http::events_stream`), since rmcp 3.11 puts any notification other than a
//! request's progress on the session's standalone stream, and a 2026-07-28 request has none;
//! over stdio, the notifications go out through rmcp's peer while the request stays open. At
//! most `max_event_streams` are open at once in a process.
//!
//! Webhook delivery (`events/subscribe`) is not offered: webhooks are registered over REST by a
//! token with the `webhook` action (`/v1/namespaces/{ns}/webhooks`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, broadcast};

use crate::core::event::{EventKind, EventRecord};
use crate::core::{Namespace, Visibility};
use crate::error::Error;
use crate::registry::Registry;

/// The extension's identifier in the `extensions` capability map.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/events";
/// The methods this module answers.
pub const LIST: &str = "events/list";
pub const POLL: &str = "events/poll";
pub const STREAM: &str = "events/stream";
/// The `_meta` key naming the stream a frame belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// How long a client waits before polling again when a poll found nothing more.
pub const NEXT_POLL_MS: u64 = 5_000;
/// A stream sends a heartbeat after this long without a frame.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// A stream looks at the feed at least this often, besides on every change it is told of.
pub const RECHECK: Duration = Duration::from_secs(10);
/// A stream ends after this long; the client opens another from its cursor.
pub const MAX_STREAM: Duration = Duration::from_secs(15 * 60);
/// Events per poll unless asked otherwise, and at most.
const DEFAULT_MAX_EVENTS: u32 = 50;
const MAX_EVENTS: u32 = 100;

/// The parameters of `events/poll` and `events/stream` (a stream takes no `maxEvents`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The event type.
    name: String,
    /// The subscription's arguments (`params` in the extension's first drafts).
    #[serde(default, alias = "params")]
    arguments: Option<Arguments>,
    /// From the previous poll or stream; absent or null: start from now.
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    max_events: Option<u32>,
    /// Skip events older than this (they count as missed: `truncated`).
    #[serde(default)]
    max_age_ms: Option<u64>,
}

/// The subscription arguments every event type takes (its `inputSchema`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    /// Only events of this namespace.
    #[serde(default)]
    namespace: Option<String>,
}

/// One subscription, as a poll or a stream asks for it.
struct Subscription {
    kind: EventKind,
    namespace: Option<Namespace>,
    cursor: Option<String>,
    max_age_ms: Option<u64>,
}

impl Subscription {
    fn parse(method: &str, params: Option<&Value>) -> Result<(Self, Option<u32>), Error> {
        let params: Params = serde_json::from_value(params.cloned().unwrap_or(Value::Null))
            .map_err(|e| invalid(format!("invalid parameters for {method}: {e}")))?;
        let kind = EventKind::parse(&params.name).ok_or_else(|| {
            invalid(format!(
                "unknown event type {:?}; {LIST} lists them",
                params.name.chars().take(64).collect::<String>()
            ))
        })?;
        let namespace = params
            .arguments
            .unwrap_or_default()
            .namespace
            .map(|n| Namespace::new(&n).map_err(|e| invalid(format!("namespace {n:?}: it {e}"))))
            .transpose()?;
        let subscription = Self {
            kind,
            namespace,
            cursor: params.cursor,
            max_age_ms: params.max_age_ms,
        };
        Ok((subscription, params.max_events))
    }

    /// The events `visibility` sees after the cursor (from now without one), as occurrences
    /// with the cursor after each; the cursor moves past them.
    async fn next_page(
        &mut self,
        registry: &Registry,
        visibility: &Visibility,
        limit: u32,
    ) -> Result<Occurrences, Error> {
        let page = registry
            .events()
            .poll(
                visibility,
                self.cursor.as_deref(),
                Some(limit),
                Some(self.kind),
                self.namespace.as_ref(),
            )
            .await?;
        let oldest = self.max_age_ms.map(|age| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            now.saturating_sub(i64::try_from(age).unwrap_or(i64::MAX))
        });
        let mut truncated = page.truncated;
        let mut events = Vec::with_capacity(page.events.len());
        for event in &page.events {
            let at = event.at.epoch_millis();
            if oldest.is_some_and(|oldest| at < oldest) {
                truncated = true;
                continue;
            }
            events.push(occurrence(event));
        }
        self.cursor = Some(page.next.clone());
        Ok(Occurrences {
            events,
            cursor: page.next,
            has_more: page.has_more,
            truncated,
        })
    }
}

/// A page of occurrences, and the cursor after them.
struct Occurrences {
    events: Vec<Value>,
    cursor: String,
    has_more: bool,
    truncated: bool,
}

/// An event as the extension delivers it.
fn occurrence(event: &EventRecord) -> Value {
    json!({
        "eventId": event.id.to_string(),
        "name": event.kind.as_str(),
        "timestamp": event.at,
        "data": data(event),
        "cursor": event.id.to_string(),
    })
}

/// The input schema of every event type.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "namespace": {
                "type": "string",
                "description": "Only events of this namespace."
            }
        },
        "additionalProperties": false
    })
}

/// The payload schema of an event of `kind` (an occurrence's `data`).
fn payload_schema(kind: EventKind) -> Value {
    let payload = match kind {
        EventKind::Published => json!({
            "type": "object",
            "properties": {
                "content_digest": {"type": "string"},
                "source": {"type": "object"}
            },
            "required": ["content_digest"]
        }),
        EventKind::Yanked | EventKind::Revoked => json!({
            "type": "object",
            "properties": {"reason": {"type": "string"}},
            "required": ["reason"]
        }),
        EventKind::Deprecated => json!({
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"]
        }),
        EventKind::ScanChanged => json!({
            "type": "object",
            "properties": {
                "verdict_before": {"type": "string"},
                "verdict": {"type": "string"}
            },
            "required": ["verdict_before", "verdict"]
        }),
        EventKind::SourceSynced => json!({
            "type": "object",
            "properties": {
                "source": {"type": "integer"},
                "revision": {"type": ["string", "null"]},
                "skills": {"type": "integer"},
                "removed": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["source", "skills", "removed"]
        }),
        EventKind::Unyanked
        | EventKind::Undeprecated
        | EventKind::Unrevoked
        | EventKind::Approved => json!({"type": "object"}),
    };
    let mut required = vec!["id", "type", "at", "namespace", "payload"];
    if kind != EventKind::SourceSynced {
        required.push("name");
    }
    if kind.has_version() {
        required.push("version");
    }
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "type": {"const": kind.as_str()},
            "at": {"type": "string", "format": "date-time"},
            "namespace": {"type": "string"},
            "name": {"type": "string"},
            "version": {"type": "string"},
            "pending": {"type": "boolean"},
            "payload": payload
        },
        "required": required
    })
}

/// The result of `events/list`: every event type.
pub fn list() -> Value {
    let events: Vec<Value> = EventKind::ALL
        .into_iter()
        .map(|kind| {
            json!({
                "name": kind.as_str(),
                "description": kind.description(),
                "inputSchema": input_schema(),
                "payloadSchema": payload_schema(kind),
                "delivery": ["poll", "push"],
            })
        })
        .collect();
    json!({ "events": events })
}

/// An event's `data`: the event as `GET /v1/events` shows it.
fn data(event: &EventRecord) -> Value {
    let mut data = json!({
        "id": event.id.to_string(),
        "type": event.kind.as_str(),
        "at": event.at,
        "namespace": event.namespace,
        "payload": event.payload,
    });
    if let Some(name) = &event.name {
        data["name"] = json!(name);
    }
    if let Some(version) = &event.version {
        data["version"] = json!(version);
    }
    if event.pending {
        data["pending"] = json!(true);
    }
    data
}

/// Why a poll's parameters are refused.
fn invalid(message: String) -> Error {
    Error::InvalidRequest(message)
}

/// Answer `events/poll` for a caller seeing `visibility`.
pub async fn poll(
    registry: &Registry,
    visibility: &Visibility,
    params: Option<&Value>,
) -> Result<Value, Error> {
    let (mut subscription, max_events) = Subscription::parse(POLL, params)?;
    let limit = max_events
        .unwrap_or(DEFAULT_MAX_EVENTS)
        .clamp(1, MAX_EVENTS);
    let page = subscription.next_page(registry, visibility, limit).await?;
    let mut result = json!({
        "events": page.events,
        "cursor": page.cursor,
        "hasMore": page.has_more,
        "truncated": page.truncated,
    });
    if !page.has_more {
        result["nextPollMs"] = json!(NEXT_POLL_MS);
    }
    Ok(result)
}

/// One open `events/stream`: the frames it has yet to send, and where it is in the feed.
pub struct EventStream {
    registry: Registry,
    visibility: Visibility,
    subscription: Subscription,
    /// The request's id: the stream's subscription id in every frame.
    id: Value,
    changes: broadcast::Receiver<()>,
    queued: VecDeque<Value>,
    opened: Instant,
    last_frame: Instant,
    /// The last page read was full: more follows at once, read when the queue is empty (so a
    /// stream holds at most a page of events).
    behind: bool,
    /// Whether the last look at the feed failed (an error frame was sent for it).
    failing: bool,
    ended: bool,
    /// The place this stream holds among `max_event_streams`.
    _permit: OwnedSemaphorePermit,
}

impl EventStream {
    /// Open a stream for the request `id` with `params`: its parameters are checked and the
    /// feed is read once from its cursor (so a bad cursor is the request's error, before
    /// anything is streamed), and its first frames are queued.
    pub async fn open(
        registry: &Registry,
        visibility: Visibility,
        params: Option<&Value>,
        id: Value,
        permit: OwnedSemaphorePermit,
    ) -> Result<Self, Error> {
        let (mut subscription, _) = Subscription::parse(STREAM, params)?;
        // Subscribed before the first read: a change after it wakes the stream.
        let changes = registry.subscribe();
        let from = subscription.cursor.clone();
        let page = subscription
            .next_page(registry, &visibility, MAX_EVENTS)
            .await?;
        let now = Instant::now();
        let mut stream = Self {
            registry: registry.clone(),
            visibility,
            subscription,
            id,
            changes,
            queued: VecDeque::new(),
            opened: now,
            last_frame: now,
            behind: page.has_more,
            failing: false,
            ended: false,
            _permit: permit,
        };
        let start = from.unwrap_or_else(|| page.cursor.clone());
        let active = json!({"cursor": start, "truncated": page.truncated});
        stream.queue("notifications/events/active", active);
        stream.queue_events(page.events);
        Ok(stream)
    }

    /// The next JSON-RPC message to send: a notification, or the request's result, after which
    /// there is nothing more (`None`).
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(frame) = self.queued.pop_front() {
                self.last_frame = Instant::now();
                return Some(frame);
            }
            if self.ended {
                return None;
            }
            if self.behind {
                self.look().await;
                continue;
            }
            let now = Instant::now();
            let end = self.opened + MAX_STREAM;
            if now >= end {
                return Some(self.end());
            }
            let heartbeat = self.last_frame + HEARTBEAT;
            let wake = (now + RECHECK).min(heartbeat).min(end);
            match tokio::time::timeout_at(wake.into(), self.changes.recv()).await {
                Ok(Ok(()) | Err(broadcast::error::RecvError::Lagged(_))) | Err(_) => {}
                // The registry is gone: the process is stopping.
                Ok(Err(broadcast::error::RecvError::Closed)) => return Some(self.end()),
            }
            self.look().await;
            if self.queued.is_empty() && Instant::now() >= heartbeat {
                let cursor = self.subscription.cursor.clone();
                self.queue("notifications/events/heartbeat", json!({"cursor": cursor}));
            }
        }
    }

    /// Read a page of what the feed has after the cursor, and queue it.
    async fn look(&mut self) {
        match self
            .subscription
            .next_page(&self.registry, &self.visibility, MAX_EVENTS)
            .await
        {
            Ok(page) => {
                self.failing = false;
                self.behind = page.has_more;
                self.queue_events(page.events);
            }
            Err(e) => {
                self.behind = false;
                // Said once per outage; the stream goes on trying.
                if !self.failing {
                    self.failing = true;
                    tracing::warn!(error = %e, "an event stream could not read the feed");
                    let error = json!({"code": -32603, "message": e.public_message()});
                    self.queue("notifications/events/error", json!({"error": error}));
                }
            }
        }
    }

    fn queue_events(&mut self, events: Vec<Value>) {
        for event in events {
            self.queue("notifications/events/event", event);
        }
    }

    /// Queue a notification of `method`, its `_meta` naming this stream.
    fn queue(&mut self, method: &str, mut params: Value) {
        params["_meta"] = json!({ SUBSCRIPTION_ID: self.id });
        self.queued
            .push_back(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The request's result: the stream's last message.
    fn end(&mut self) -> Value {
        self.ended = true;
        json!({"jsonrpc": "2.0", "id": self.id, "result": {"_meta": {}}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_type_is_listed_with_its_schemas() {
        let list = list();
        let types = list["events"].as_array().unwrap();
        assert_eq!(types.len(), EventKind::ALL.len());
        for (t, kind) in types.iter().zip(EventKind::ALL) {
            assert_eq!(t["name"], kind.as_str());
            assert_eq!(t["delivery"], json!(["poll", "push"]));
            assert_eq!(
                t["payloadSchema"]["properties"]["type"]["const"],
                kind.as_str()
            );
            assert_eq!(t["inputSchema"]["additionalProperties"], false);
        }
    }
}
