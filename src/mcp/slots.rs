//! Bytes that go around rmcp's serializer over HTTP.
//!
//! rmcp serializes every result it is handed. Two kinds of result are mostly bytes made once:
//! a `skills/list` page (entries serialized once, `super::entries`) and a file's content (its
//! text escaped, or its base64 text; kept by digest). Serializing them again per request costs
//! more than the rest of the request: a 200 KB image's 273 KB of base64 is scanned for
//! characters to escape (there are none), copied into the JSON text, and copied again into its
//! SSE event; a reference file's text is escaped again on every read.
//!
//! So over HTTP the transport puts a slot in the request's extensions ([`PageSlot`],
//! [`ContentSlot`]); the handler fills it and returns the result with an empty `skills` array
//! or an empty `text` / `blob`, and the transport puts the bytes into rmcp's serialized
//! response: a page by [`splice`], a content between the two halves of the frame that carries
//! [`content_at`]'s empty string, without copying it. Where there is no slot (stdio) the result
//! goes through rmcp whole. Both ways give the same bytes: `tests/integration/mcp_protocol.rs`
//! compares them.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;

/// A value a handler leaves for the HTTP transport. Present in a request's extensions only
/// when the transport will use it.
pub struct Slot<T>(Arc<Mutex<Option<T>>>);

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

impl<T> Slot<T> {
    pub fn fill(&self, value: T) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
    }

    pub fn take(&self) -> Option<T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// `f` of the value left, if any, which stays.
    pub fn peek<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(f)
    }
}

/// A `skills/list` page's serialized entries, for [`splice`].
pub type PageSlot = Slot<Arc<[u8]>>;

/// A file's content as its JSON string holds it, without the quotes ([`json_string_body`] of
/// its text, or its base64 text), for the frame [`content_at`] finds.
pub type ContentSlot = Slot<Bytes>;

/// The end of a serialized JSON-RPC response to `skills/list` whose `skills` were left to the
/// transport: rmcp writes `skills` as the result's last field.
const EMPTY_SKILLS_END: &[u8] = b"\"skills\":[]}}";

/// `body` (a JSON-RPC response, or the SSE stream a 2025-era session answers a POST with,
/// whose last event carries the response) with `entries` put into its empty `skills` array.
/// `None` when `body` does not end as rmcp writes such a response.
pub fn splice(body: &[u8], entries: &[u8]) -> Option<Vec<u8>> {
    let end = body
        .windows(EMPTY_SKILLS_END.len())
        .rposition(|w| w == EMPTY_SKILLS_END)?;
    // After the response only its SSE event's own fields may follow (`id: …`, blank lines).
    let rest = &body[end + EMPTY_SKILLS_END.len()..];
    let event_tail = rest.split(|&b| b == b'\n').all(|line| {
        let line = line.trim_ascii();
        line.is_empty() || line.starts_with(b"id:") || line.starts_with(b"retry:")
    });
    if !event_tail {
        return None;
    }
    let at = end + b"\"skills\":[".len();
    let mut out = Vec::with_capacity(body.len() + entries.len());
    out.extend_from_slice(&body[..at]);
    out.extend_from_slice(entries);
    out.extend_from_slice(&body[at..]);
    Some(out)
}

/// An empty `text` and an empty `blob` as rmcp writes them. Inside a JSON string a quote is
/// escaped, so these bytes can only be a member whose value is empty. A `resources/read` result
/// holds one file, whose `uri` and `mimeType` come before its `text` or `blob` and its `_meta`
/// after: the first of them is the file's.
const EMPTY_CONTENTS: [&[u8]; 2] = [b"\"text\":\"\"", b"\"blob\":\"\""];

/// Where the content goes in `frame` (a JSON-RPC response to `resources/read`, or the SSE
/// event carrying it) whose file's `text` or `blob` was left empty: just after the opening
/// quote. `None` when the frame has neither (an SSE priming event, an error).
pub fn content_at(frame: &[u8]) -> Option<usize> {
    EMPTY_CONTENTS
        .iter()
        .filter_map(|empty| memchr::memmem::find(frame, empty).map(|at| at + empty.len() - 1))
        .min()
}

/// `text` as the inside of a JSON string: escaped as serde_json escapes it (what rmcp would
/// write between the quotes), without the quotes.
pub fn json_string_body(text: &str) -> Bytes {
    let mut out = Vec::with_capacity(text.len() + 2);
    serde_json::to_writer(&mut out, text).expect("a string serializes");
    let quoted = out.len();
    Bytes::from(out).slice(1..quoted - 1)
}

/// An SSE event that rmcp sends again on a resumed 2025-era stream (`Last-Event-ID`), with
/// its response put right: a response whose bytes went around the serializer the first time
/// (an empty `text` or `blob`, an empty `skills` array; none of them is kept for a resend)
/// becomes the error `response_not_resent` for the same request, so that the client sends it
/// again rather than take an empty file or page. `None` when the event is to go as it is. A
/// file that is empty, or a page with no skills, is refused the same way: a resent event does
/// not tell them apart.
pub fn resent(event: &[u8]) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let left_out = |data: &[u8]| {
        content_at(data).is_some() || memchr::memmem::find(data, EMPTY_SKILLS_END).is_some()
    };
    if !left_out(event) {
        return None;
    }
    let mut out = Vec::with_capacity(event.len() + 200);
    for line in event.split_inclusive(|&b| b == b'\n') {
        let data = line.strip_prefix(b"data:").map(<[u8]>::trim_ascii);
        let id = data
            .filter(|data| left_out(data))
            .and_then(|data| serde_json::from_slice::<Envelope>(data).ok())
            .and_then(|envelope| envelope.id);
        let Some(id) = id else {
            out.extend_from_slice(line);
            continue;
        };
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": super::error_data(
                crate::core::Code::ResponseNotResent,
                "this response is not sent again on a resumed stream; send the request again"
                    .to_owned(),
            ),
        });
        out.extend_from_slice(b"data: ");
        serde_json::to_writer(&mut out, &error).expect("a JSON value serializes");
        out.push(b'\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splice_fills_the_empty_skills_array_only() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"nextCursor":"x","skills":[]}}"#;
        assert_eq!(
            splice(body, br#"{"a":1},{"b":2}"#).unwrap(),
            br#"{"jsonrpc":"2.0","id":1,"result":{"nextCursor":"x","skills":[{"a":1},{"b":2}]}}"#
        );
        let sse = b"data: \nid: 0/0\nretry: 3000\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"skills\":[]}}\nid: 1/0\n\n";
        assert_eq!(
            splice(sse, b"{}").unwrap(),
            b"data: \nid: 0/0\nretry: 3000\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"skills\":[{}]}}\nid: 1/0\n\n"
        );
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#[..],
            b"data: {\"result\":{\"skills\":[]}}\ndata: {\"more\":1}\n\n",
            br#"{"jsonrpc":"2.0","id":1,"result":{"skills":[],"ttlMs":1}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"skills":[{"a":1}]}}"#,
        ] {
            assert_eq!(
                splice(other, b"{}"),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn the_content_goes_inside_the_empty_text_or_blob_only() {
        let blob = br#"data: {"result":{"contents":[{"uri":"skill://a/b/x.png","mimeType":"image/png","blob":"","_meta":{}}]}}"#;
        let at = content_at(blob).unwrap();
        let filled = [&blob[..at], b"AAEC".as_slice(), &blob[at..]].concat();
        assert_eq!(
            filled,
            br#"data: {"result":{"contents":[{"uri":"skill://a/b/x.png","mimeType":"image/png","blob":"AAEC","_meta":{}}]}}"#
        );
        // A text file's `_meta` may hold an empty `text` or `blob` of its own: the file's
        // comes first.
        let text =
            br#"{"result":{"contents":[{"uri":"u","text":"","_meta":{"blob":"","text":""}}]}}"#;
        let at = content_at(text).unwrap();
        assert_eq!(
            &text[..at],
            br#"{"result":{"contents":[{"uri":"u","text":""#
        );
        // A URI or text that spells the member is escaped, so it is never taken for one.
        for other in [
            &br#"{"result":{"contents":[{"uri":"skill://a/b/\"blob\":\"\".md","text":"\"blob\":\"\""}]}}"#[..],
            br#"{"result":{"contents":[{"uri":"skill://a/b/\"text\":\"\".md","blob":"AAEC"}]}}"#,
            b"data: \nid: 0/0\nretry: 3000\n\n",
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"blob"}}"#,
        ] {
            assert_eq!(content_at(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn a_json_string_body_is_the_text_escaped_without_its_quotes() {
        assert_eq!(
            json_string_body("---\n\"q\" \\ \t\u{1} é 🦀"),
            r#"---\n\"q\" \\ \t\u0001 é 🦀"#.as_bytes()
        );
        assert_eq!(json_string_body(""), "");
        for text in ["plain", "a\r\nb\u{7f}\u{2028}</script>"] {
            let quoted = [b"\"", &json_string_body(text)[..], b"\""].concat();
            assert_eq!(serde_json::from_slice::<String>(&quoted).unwrap(), text);
        }
    }

    #[test]
    fn a_resent_response_that_left_bytes_out_becomes_an_error_for_its_request() {
        let blob = b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"contents\":[{\"uri\":\"u\",\"blob\":\"\"}]}}\nid: 3/1\n\n";
        let page =
            b"data: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"skills\":[]}}\nid: 4/1\n\n";
        for (event, id) in [(&blob[..], json!(7)), (&page[..], json!("a"))] {
            let out = String::from_utf8(resent(event).unwrap()).unwrap();
            let (data, rest) = out.split_once('\n').unwrap();
            assert!(rest.starts_with("id: ") && rest.ends_with("\n\n"), "{out}");
            let error: serde_json::Value =
                serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(error["id"], id);
            assert_eq!(error["error"]["code"], -32603);
            assert_eq!(error["error"]["data"]["code"], "response_not_resent");
        }
        // What carried its bytes itself goes as it is.
        for event in [
            &b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"contents\":[{\"uri\":\"u\",\"text\":\"x\"}]}}\nid: 3/1\n\n"[..],
            b"data: \nid: 3/0\nretry: 3000\n\n",
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n",
        ] {
            assert_eq!(resent(event), None, "{}", String::from_utf8_lossy(event));
        }
    }
}
