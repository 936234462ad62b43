//! The Events extension (SEP-3415, `io.modelcontextprotocol/events`) on the wire: `events/list`
//! (each event type with its input and payload schemas, and the delivery modes it offers) and
//! `events/poll` (one event type per request, an opaque cursor, `truncated` when events were
//! skipped). The feed is the registry's (`registry::Events`): the REST feed's events, as the
//! caller may see them.
//!
//! Poll is the one delivery mode offered. `events/stream` is not: it is a request held open
//! while the server writes `notifications/events/*` frames on that request's own response
//! stream. rmcp 3.11's streamable HTTP session manager routes a notification onto a request's
//! stream only when it is a progress or cancellation notification of that request
//! (`LocalSessionManager`'s `resolve_outbound_channel`); any other notification a handler sends
//! goes to the session's standalone GET stream, and a 2026-07-28 stateless request has no
//! stream to send it on at all. Every request here also ends at `request_timeout_secs`. Webhook
//! delivery (`events/subscribe`) is not offered either: webhooks are registered over REST by a
//! token with the `webhook` action (`/v1/namespaces/{ns}/webhooks`).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::core::event::{EventKind, EventRecord};
use crate::core::{Namespace, Visibility};
use crate::error::Error;
use crate::registry::Registry;

/// The extension's identifier in the `extensions` capability map.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/events";
/// The methods this module answers.
pub const LIST: &str = "events/list";
pub const POLL: &str = "events/poll";
/// How long a client waits before polling again when a poll found nothing more.
pub const NEXT_POLL_MS: u64 = 5_000;
/// Events per poll unless asked otherwise, and at most.
const DEFAULT_MAX_EVENTS: u32 = 50;
const MAX_EVENTS: u32 = 100;

/// The parameters of `events/poll`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PollParams {
    /// The event type.
    name: String,
    #[serde(default)]
    arguments: Option<PollArguments>,
    /// From the previous poll; absent or null: start from now.
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
struct PollArguments {
    /// Only events of this namespace.
    #[serde(default)]
    namespace: Option<String>,
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
                "delivery": ["poll"],
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
    let params: PollParams = serde_json::from_value(params.cloned().unwrap_or(Value::Null))
        .map_err(|e| invalid(format!("invalid parameters for {POLL}: {e}")))?;
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
    let limit = params
        .max_events
        .unwrap_or(DEFAULT_MAX_EVENTS)
        .clamp(1, MAX_EVENTS);
    let page = registry
        .events()
        .poll(
            visibility,
            params.cursor.as_deref(),
            Some(limit),
            Some(kind),
            namespace.as_ref(),
        )
        .await?;
    let oldest = params.max_age_ms.map(|age| {
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
        events.push(json!({
            "eventId": event.id.to_string(),
            "name": event.kind.as_str(),
            "timestamp": event.at,
            "data": data(event),
            "cursor": event.id.to_string(),
        }));
    }
    let mut result = json!({
        "events": events,
        "cursor": page.next,
        "hasMore": page.has_more,
        "truncated": truncated,
    });
    if !page.has_more {
        result["nextPollMs"] = json!(NEXT_POLL_MS);
    }
    Ok(result)
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
            assert_eq!(t["delivery"], json!(["poll"]));
            assert_eq!(
                t["payloadSchema"]["properties"]["type"]["const"],
                kind.as_str()
            );
            assert_eq!(t["inputSchema"]["additionalProperties"], false);
        }
    }
}
