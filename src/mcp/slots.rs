//! Bytes that go around rmcp's serializer over HTTP.
//!
//! rmcp serializes every result it is handed. Two kinds of result are mostly bytes made once:
//! skill entries (a `skills/list` page, a `skills/get` answer: each entry's own part serialized
//! once, `super::entries`) and a file's content (its text escaped, or its base64 text; kept by
//! digest). Serializing them again per request costs more than the rest of the request: a
//! 200 KB image's 273 KB of base64 is scanned for characters to escape (there are none), copied
//! into the JSON text, and copied again into its SSE event; a reference file's text is escaped
//! again on every read; an entry rmcp is handed is checked (its name normalized, its URIs
//! percent-decoded) and serialized field by field, about a fifth of a `skills/get`.
//!
//! So over HTTP the transport puts a [`Slot`] in the request's extensions ([`SkillsSlot`],
//! [`ContentSlot`]), each with a marker of its own; the handler fills the slot and answers the
//! marker in place of the bytes (the one placeholder skill of a page or a `skills/get`, a file's
//! `text` or `blob`), and the transport replaces the marker in rmcp's serialized response:
//! entries by [`splice`], a content by sending the frame that holds it as three
//! (`http::slots`), without copying the content. Where there is no slot (stdio) the result goes through rmcp whole. Both ways give
//! the same bytes: `tests/integration/mcp_protocol.rs` compares them, and this module's tests
//! pin what each relies on in rmcp's output.
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use axum::body::Bytes;

use crate::core::Principal;
use rmcp::model::{Skill, SkillFrontmatter, SkillResources};

/// What the HTTP transport tells the handler about one request, in the request's extensions:
/// who is asking, and the slots it will fill in rmcp's response. Over stdio there is none (the
/// operator who started the process asks, and every result goes through rmcp whole). This is
/// the handler's one view of its transport ([`of`]).
#[derive(Clone, Default)]
pub struct Port {
    pub principal: Principal,
    pub skills: Option<SkillsSlot>,
    pub content: Option<ContentSlot>,
}

/// The transport's [`Port`] of the request `ctx` serves: `None` over stdio. Over HTTP without
/// one (never, as `http::slots` serves `/mcp`) the caller is anonymous and no slot is offered.
pub fn of(ctx: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Option<&Port> {
    static NONE: LazyLock<Port> = LazyLock::new(Port::default);
    let parts = ctx.extensions.get::<axum::http::request::Parts>()?;
    Some(parts.extensions.get::<Port>().unwrap_or(&NONE))
}

/// How every marker starts (what a resumed stream looks for, [`resent`]).
const MARKER_PREFIX: &str = "skillreg-slot-";
/// Hex digits after the prefix: 128 bits.
const MARKER_HEX: usize = 32;

/// A value a handler leaves for the HTTP transport, and the marker it answers in its place.
/// Present in a request's extensions only when the transport will use it.
///
/// The marker is new for each slot and unguessable (128 bits keyed by the process's random
/// hasher keys), so nothing stored (a path, a description, a file) can spell it: where rmcp's
/// output holds it, the handler put it, and the transport finds the one place to put the bytes
/// by searching for it. Its characters are ones JSON never escapes, so it is serialized as
/// written.
pub struct Slot<T> {
    value: Arc<Mutex<Option<T>>>,
    /// The marker's text (ASCII), made without formatting: one is made per request.
    marker: [u8; MARKER_PREFIX.len() + MARKER_HEX],
}

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        Self {
            value: self.value.clone(),
            marker: self.marker,
        }
    }
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        static KEYS: LazyLock<std::collections::hash_map::RandomState> =
            LazyLock::new(Default::default);
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let (a, b) = (KEYS.hash_one(n), KEYS.hash_one((n, u64::MAX)));
        let mut marker = [0; MARKER_PREFIX.len() + MARKER_HEX];
        let (prefix, hex) = marker.split_at_mut(MARKER_PREFIX.len());
        prefix.copy_from_slice(MARKER_PREFIX.as_bytes());
        for (i, digit) in hex.iter_mut().enumerate() {
            let word = if i < 16 { a } else { b };
            *digit = b"0123456789abcdef"[(word >> (60 - 4 * (i % 16))) as usize & 0xf];
        }
        Self {
            value: Arc::default(),
            marker,
        }
    }
}

impl<T> Slot<T> {
    pub fn fill(&self, value: T) {
        *self.value.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
    }

    pub fn take(&self) -> Option<T> {
        self.value
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// `f` of the value left, if any, which stays.
    pub fn peek<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.value
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(f)
    }

    /// What the handler answers where the value goes.
    pub fn marker(&self) -> &str {
        std::str::from_utf8(&self.marker).expect("a marker is ASCII")
    }
}

/// Serialized skill entries (comma-separated): a `skills/list` page's, or the one entry of a
/// `skills/get` answer, for [`splice`].
pub type SkillsSlot = Slot<SkillBytes>;

/// What a handler leaves in a [`SkillsSlot`]: the entries, and how the placeholder it answered
/// in their place is serialized around its marker (`None`: a page's, [`PAGE`]).
pub struct SkillBytes {
    entries: Bytes,
    placeholder: Option<Template>,
}

impl SkillsSlot {
    /// Leave a page's `entries`, and the one skill the handler answers in their place, the
    /// marker in its `_meta`: a well-formed entry, since rmcp checks every listed skill before it
    /// serializes the page (its name is one letter and its files `"dynamic"`, so that check
    /// costs little, and its serialized form is made once). [`splice`] replaces it, as
    /// serialized, with the entries.
    pub fn page(&self, entries: Bytes) -> Skill {
        self.fill(SkillBytes {
            entries,
            placeholder: None,
        });
        placeholder_marked(PAGE_URI, "x", self.marker())
    }

    /// Leave a `skills/get` answer's `entry`, and the skill the handler answers in its place:
    /// rmcp checks that it is the skill asked for (`uri`, and its `name` against it), then
    /// checks it as it checks a listed one. Its serialized form is put together from the parts
    /// [`PARTS`] holds, around the URI and the name as JSON writes them.
    pub fn entry(&self, entry: Bytes, uri: &str, name: &str) -> Skill {
        self.fill(SkillBytes {
            entries: entry,
            placeholder: Some(Template::of(uri, name)),
        });
        placeholder_marked(uri, name, self.marker())
    }
}

/// The URI of a page's placeholder.
const PAGE_URI: &str = "skill://x/SKILL.md";

/// A placeholder: the skill `uri` names, with no file rmcp would check or serialize
/// (`"dynamic"`), and the slot's marker in its `_meta`.
fn placeholder_marked(uri: &str, name: &str, marker: &str) -> Skill {
    let mut meta = serde_json::Map::new();
    meta.insert("m".to_owned(), marker.into());
    Skill::new(
        uri,
        SkillFrontmatter::new(name, ""),
        SkillResources::Dynamic,
    )
    .with_meta(rmcp::model::MetaObject(meta))
}

/// A placeholder as serialized, in two parts around its marker (every marker has the same
/// length).
struct Template {
    before: Vec<u8>,
    after: &'static [u8],
}

/// A placeholder as serde writes it, cut where its URI, its name and its marker go: computed
/// once, so that a splice serializes no skill.
struct Parts {
    /// Up to the URI's opening quote; then from its closing quote to the name's opening one;
    /// then from the name's closing quote up to the marker; then after the marker.
    head: Vec<u8>,
    middle: Vec<u8>,
    tail: Vec<u8>,
    after: Vec<u8>,
}

static PARTS: LazyLock<Parts> = LazyLock::new(|| {
    // Stand-ins that occur once in the serialized placeholder, and JSON writes as they are.
    let (uri, name) = ("skillreg-uri-stand-in", "skillreg-name-stand-in");
    let marker = format!("{MARKER_PREFIX}{}", "0".repeat(MARKER_HEX));
    let bytes =
        serde_json::to_vec(&placeholder_marked(uri, name, &marker)).expect("a skill serializes");
    let find = |what: &str| {
        memchr::memmem::find(&bytes, what.as_bytes()).expect("a stand-in is written as it is")
    };
    let (at_uri, at_name, at_marker) = (find(uri), find(name), find(&marker));
    assert!(
        at_uri < at_name && at_name < at_marker,
        "serde writes uri, name, then _meta"
    );
    Parts {
        head: bytes[..at_uri - 1].to_vec(),
        middle: bytes[at_uri + uri.len() + 1..at_name - 1].to_vec(),
        tail: bytes[at_name + name.len() + 1..at_marker].to_vec(),
        after: bytes[at_marker + marker.len()..].to_vec(),
    }
});

impl Template {
    /// The placeholder of `uri` and `name` as serialized ([`placeholder_marked`]).
    fn of(uri: &str, name: &str) -> Self {
        let Parts {
            head,
            middle,
            tail,
            after,
        } = &*PARTS;
        let mut before = Vec::with_capacity(head.len() + middle.len() + tail.len() + 128);
        before.extend_from_slice(head);
        serde_json::to_writer(&mut before, uri).expect("a string serializes");
        before.extend_from_slice(middle);
        serde_json::to_writer(&mut before, name).expect("a string serializes");
        before.extend_from_slice(tail);
        Self { before, after }
    }
}

/// A page's placeholder as serialized: made once.
static PAGE: LazyLock<Template> = LazyLock::new(|| Template::of(PAGE_URI, "x"));

/// Finds [`MARKER_PREFIX`]: built once (building a finder costs more than a search with it).
static PREFIX: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(MARKER_PREFIX));

/// Where `marker` starts in `haystack`: the first place its prefix is followed by the rest of it.
fn find_marker(haystack: &[u8], marker: &str) -> Option<usize> {
    let rest = &marker.as_bytes()[MARKER_PREFIX.len()..];
    let mut from = 0;
    while let Some(found) = PREFIX.find(&haystack[from..]) {
        let at = from + found;
        if haystack.get(at + MARKER_PREFIX.len()..at + marker.len()) == Some(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A file's content as its JSON string holds it, without the quotes ([`json_string_body`] of
/// its text, or its base64 text): the handler answers the marker as the file's `text` or `blob`,
/// and the transport puts the content where [`marker_at`] finds it.
pub type ContentSlot = Slot<Bytes>;

/// `body` (a JSON-RPC response, or the SSE stream a 2025-era session answers a POST with) with
/// the placeholder skill replaced by the entries `slot` was left (`filled`, taken from it).
/// `None` when `body` does not hold the placeholder exactly as `serde_json` writes it.
pub fn splice(body: &[u8], slot: &SkillsSlot, filled: &SkillBytes) -> Option<Vec<u8>> {
    let Template { before, after } = filled.placeholder.as_ref().unwrap_or(&PAGE);
    let entries = &filled.entries[..];
    let marker = find_marker(body, slot.marker())?;
    let (start, end) = (
        marker.checked_sub(before.len())?,
        marker + slot.marker().len() + after.len(),
    );
    if body.get(start..marker)? != &before[..]
        || body.get(marker + slot.marker().len()..end)? != &after[..]
    {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() + entries.len());
    out.extend_from_slice(&body[..start]);
    out.extend_from_slice(entries);
    out.extend_from_slice(&body[end..]);
    Some(out)
}

/// Where `marker` is in `frame` (a JSON-RPC response to `resources/read`, or the SSE event
/// carrying it): the byte range the content replaces. `None` when the frame does not hold it
/// (an SSE priming event, an error).
pub fn marker_at(frame: &[u8], marker: &str) -> Option<std::ops::Range<usize>> {
    find_marker(frame, marker).map(|at| at..at + marker.len())
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
/// (it holds a slot's marker; the bytes are not kept for a resend) becomes the error
/// `response_not_resent` for the same request, so that the client sends it again rather than
/// take a marker for a file or a page. `None` when the event is to go as it is.
pub fn resent(event: &[u8]) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let left_out = |data: &[u8]| PREFIX.find(data).is_some();
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
    use rmcp::model::ResourceContents;
    use serde_json::json;

    /// rmcp's JSON-RPC response as it writes it, as a JSON body and as an SSE event.
    fn as_rmcp_writes(result: rmcp::model::ServerResult) -> [Vec<u8>; 2] {
        let message =
            rmcp::model::ServerJsonRpcMessage::response(result, rmcp::model::RequestId::Number(3));
        let json = serde_json::to_vec(&message).unwrap();
        let sse = [b"data: ".as_slice(), &json, b"\nid: 1/0\n\n"].concat();
        [json, sse]
    }

    /// A response as sent (JSON, or an SSE event) and its JSON-RPC message.
    fn response_of(bytes: Vec<u8>) -> (String, serde_json::Value) {
        let text = String::from_utf8(bytes).unwrap();
        let json = text
            .trim_start_matches("data: ")
            .split('\n')
            .next()
            .unwrap();
        let value = serde_json::from_str(json).unwrap();
        (text, value)
    }

    #[test]
    fn a_page_takes_its_entries_in_place_of_its_placeholder_as_rmcp_writes_it() {
        let slot = SkillsSlot::default();
        let placeholder = slot.page(Bytes::from_static(br#"{"a":1},{"b":2}"#));
        // rmcp refuses a page with an entry it finds malformed.
        rmcp::model::validate_skills(std::slice::from_ref(&placeholder)).unwrap();
        // A skill whose fields spell the empty page or another slot's marker is left alone.
        let decoy = Skill::new(
            format!(
                "skill://a/\"skills\":[]}}/{}",
                SkillsSlot::default().marker()
            ),
            SkillFrontmatter::new("skills", "[]"),
            SkillResources::Files(Vec::new()),
        );
        let result =
            rmcp::model::ListSkillsResult::with_all_items(vec![decoy.clone(), placeholder])
                .with_ttl_ms(1);
        let filled = slot.take().unwrap();
        for body in as_rmcp_writes(result.into()) {
            let spliced = splice(&body, &slot, &filled).unwrap();
            let (text, value) = response_of(spliced);
            assert_eq!(
                value["result"]["skills"],
                json!([serde_json::to_value(&decoy).unwrap(), {"a": 1}, {"b": 2}]),
                "{text}"
            );
            // An empty page: the placeholder and nothing else goes.
            let nothing = SkillBytes {
                entries: Bytes::new(),
                placeholder: None,
            };
            let empty = splice(&body, &slot, &nothing).unwrap();
            assert!(!String::from_utf8(empty).unwrap().contains(slot.marker()));
            // Another request's slot finds nothing here.
            let other = SkillsSlot::default();
            other.page(Bytes::from_static(b"{}"));
            assert!(splice(&body, &other, &other.take().unwrap()).is_none());
        }
    }

    #[test]
    fn a_placeholder_put_together_from_its_parts_is_what_serde_writes() {
        for (uri, name) in [
            (PAGE_URI, "x"),
            ("skill://acme/@1.0.0/tools/sub/inner/SKILL.md", "inner"),
            ("skill://acme/%C3%A9t%C3%A9/SKILL.md", "été"),
            ("skill://a\"b\\c\u{1}/SKILL.md", "n\"m\u{7f}"),
        ] {
            let slot = SkillsSlot::default();
            let skill = slot.entry(Bytes::new(), uri, name);
            let Template { before, after } = slot.take().unwrap().placeholder.unwrap();
            let whole = [&before[..], slot.marker().as_bytes(), after].concat();
            assert_eq!(
                String::from_utf8(whole).unwrap(),
                serde_json::to_string(&skill).unwrap()
            );
        }
    }

    #[test]
    fn a_skills_get_answer_takes_its_entry_in_place_of_its_placeholder_as_rmcp_writes_it() {
        // A name JSON escapes nothing of, and one it does (the URI percent-encodes it).
        for (uri, name) in [
            ("skill://acme/@1.0.0/tools/sub/inner/SKILL.md", "inner"),
            ("skill://acme/%C3%A9t%C3%A9/SKILL.md", "été"),
        ] {
            let slot = SkillsSlot::default();
            let placeholder = slot.entry(Bytes::from_static(br#"{"uri":"e"}"#), uri, name);
            // What rmcp checks of a `skills/get` answer: the skill asked for, well formed.
            assert_eq!(placeholder.uri, uri);
            placeholder.validate().unwrap();
            let result = rmcp::model::GetSkillResult::new(placeholder)
                .with_ttl_ms(1)
                .with_cache_scope(rmcp::model::CacheScope::Public);
            let filled = slot.take().unwrap();
            for body in as_rmcp_writes(result.into()) {
                let spliced = splice(&body, &slot, &filled).unwrap();
                let (text, value) = response_of(spliced);
                assert_eq!(
                    value["result"],
                    json!({"resultType": "complete", "skill": {"uri": "e"}, "ttlMs": 1, "cacheScope": "public"}),
                    "{text}"
                );
                // A page's placeholder is not this one.
                let page = SkillBytes {
                    entries: filled.entries.clone(),
                    placeholder: None,
                };
                assert!(splice(&body, &slot, &page).is_none());
            }
        }
    }

    #[test]
    fn a_content_goes_where_its_marker_is_as_rmcp_writes_it() {
        let slot = ContentSlot::default();
        let other = ContentSlot::default();
        // The URI spells another request's marker: only this request's is taken.
        let uri = format!("skill://a/b/{}.png", other.marker());
        for contents in [
            ResourceContents::blob(slot.marker(), &uri),
            ResourceContents::text(slot.marker(), &uri),
        ] {
            let contents = contents.with_mime_type("image/png");
            let result = rmcp::model::ReadResourceResult::new(vec![contents]);
            for frame in as_rmcp_writes(result.into()) {
                let at = marker_at(&frame, slot.marker()).unwrap();
                let filled = [&frame[..at.start], b"AAEC".as_slice(), &frame[at.end..]].concat();
                let (text, value) = response_of(filled);
                let content = &value["result"]["contents"][0];
                assert_eq!(content["uri"], uri.as_str());
                assert!(
                    content["blob"] == "AAEC" || content["text"] == "AAEC",
                    "{text}"
                );
            }
        }
        // A frame without the marker (a priming event, an error) takes nothing.
        assert_eq!(
            marker_at(b"data: \nid: 0/0\nretry: 3000\n\n", slot.marker()),
            None
        );
    }

    #[test]
    fn markers_differ_and_json_writes_them_as_they_are() {
        let markers: std::collections::HashSet<String> = (0..1000)
            .map(|_| ContentSlot::default().marker().to_owned())
            .collect();
        assert_eq!(markers.len(), 1000);
        // Each half of the hex digits is a value of its own.
        for half in [
            MARKER_PREFIX.len()..MARKER_PREFIX.len() + 16,
            MARKER_PREFIX.len() + 16..MARKER_PREFIX.len() + MARKER_HEX,
        ] {
            let halves: std::collections::HashSet<&str> =
                markers.iter().map(|m| &m[half.clone()]).collect();
            assert_eq!(halves.len(), 1000);
        }
        for marker in &markers {
            assert_eq!(marker.len(), MARKER_PREFIX.len() + MARKER_HEX);
            let hex = &marker[MARKER_PREFIX.len()..];
            assert!(
                hex.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            assert_eq!(
                serde_json::to_string(marker).unwrap(),
                format!("\"{marker}\"")
            );
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
        let marker = ContentSlot::default().marker().to_owned();
        let blob = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"contents\":[{{\"uri\":\"u\",\"blob\":\"{marker}\"}}]}}}}\nid: 3/1\n\n"
        );
        let page = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{{\"skills\":[{{\"uri\":\"{marker}\"}}]}}}}\nid: 4/1\n\n"
        );
        for (event, id) in [(blob.as_bytes(), json!(7)), (page.as_bytes(), json!("a"))] {
            let out = String::from_utf8(resent(event).unwrap()).unwrap();
            let (data, rest) = out.split_once('\n').unwrap();
            assert!(rest.starts_with("id: ") && rest.ends_with("\n\n"), "{out}");
            let error: serde_json::Value =
                serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(error["id"], id);
            assert_eq!(error["error"]["code"], -32603);
            assert_eq!(error["error"]["data"]["code"], "response_not_resent");
        }
        // What carried its bytes itself goes as it is: an empty file too, which no slot holds.
        for event in [
            &b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"contents\":[{\"uri\":\"u\",\"text\":\"x\"}]}}\nid: 3/1\n\n"[..],
            b"data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"contents\":[{\"uri\":\"u\",\"blob\":\"\"}]}}\nid: 3/2\n\n",
            b"data: \nid: 3/0\nretry: 3000\n\n",
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n",
        ] {
            assert_eq!(resent(event), None, "{}", String::from_utf8_lossy(event));
        }
    }
}
