//! What the events feed and webhooks carry, pure: the kinds of change an event records, the
//! webhook URL rules (its form, and the addresses the egress policy refuses), and the
//! Standard Webhooks secret's form.
//!
//! Every change to the catalog is one event (written by the store in the change's own
//! transaction): its kind, subject (namespace; skill and version where there is one), time and a
//! small JSON payload. The feed's cursor is the event id.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::code::Code;
use super::time::Timestamp;

/// The kinds of change an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A version was stored (pending review when the event says `pending`).
    Published,
    Yanked,
    Unyanked,
    /// A skill was deprecated (the payload holds the message).
    Deprecated,
    Undeprecated,
    /// A version was withdrawn for security reasons (the payload holds the reason).
    Revoked,
    Unrevoked,
    /// A version pending review was approved.
    Approved,
    /// A rescan changed a version's scan (the payload holds the verdicts before and after).
    ScanChanged,
    /// A source was read again (the payload holds its id, the revision, the skills removed).
    SourceSynced,
}

impl EventKind {
    pub const ALL: [EventKind; 10] = [
        Self::Published,
        Self::Yanked,
        Self::Unyanked,
        Self::Deprecated,
        Self::Undeprecated,
        Self::Revoked,
        Self::Unrevoked,
        Self::Approved,
        Self::ScanChanged,
        Self::SourceSynced,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Published => "published",
            Self::Yanked => "yanked",
            Self::Unyanked => "unyanked",
            Self::Deprecated => "deprecated",
            Self::Undeprecated => "undeprecated",
            Self::Revoked => "revoked",
            Self::Unrevoked => "unrevoked",
            Self::Approved => "approved",
            Self::ScanChanged => "scan_changed",
            Self::SourceSynced => "source_synced",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// What the event means, for `events/list`.
    pub fn description(self) -> &'static str {
        match self {
            Self::Published => "A version of a skill was published (or stored pending review).",
            Self::Yanked => "A version was yanked: it stays readable when pinned.",
            Self::Unyanked => "A yank was reversed.",
            Self::Deprecated => "A skill was deprecated, with a message.",
            Self::Undeprecated => "A skill's deprecation was lifted.",
            Self::Revoked => "A version was revoked for security reasons: served to nobody.",
            Self::Unrevoked => "A revocation was reversed.",
            Self::Approved => "A version waiting for review was approved.",
            Self::ScanChanged => "A rescan changed a version's content scan.",
            Self::SourceSynced => "A recorded source (Git or MCP upstream) was read again.",
        }
    }

    /// Whether events of this kind name a skill and a version (all but deprecation, which names
    /// a skill, and source reads, which name a namespace).
    pub fn has_version(self) -> bool {
        !matches!(
            self,
            Self::Deprecated | Self::Undeprecated | Self::SourceSynced
        )
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of the feed, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// The feed's position: given out in commit order, never reused.
    pub id: i64,
    /// When its change committed (RFC 3339 UTC, milliseconds).
    pub at: Timestamp,
    pub kind: EventKind,
    pub namespace: String,
    pub name: Option<String>,
    pub version: Option<String>,
    /// The publish of a version waiting for review: shown only to callers who see pending
    /// versions of its namespace.
    pub pending: bool,
    pub payload: serde_json::Value,
}

/// An event to write, in the transaction of the change it records.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    pub kind: EventKind,
    pub namespace: &'a str,
    pub name: Option<&'a str>,
    pub version: Option<&'a str>,
    pub pending: bool,
    pub payload: serde_json::Value,
}

/// A page of the feed: the events a caller sees after a cursor, and where the feed stands.
#[derive(Debug, Clone, Default)]
pub struct EventsPage {
    pub events: Vec<EventRecord>,
    /// The newest event id when the page was read (whether the caller sees it or not).
    pub latest: i64,
    /// The newest event id the retention window has pruned (0: none): a cursor before it has
    /// missed events.
    pub pruned_through: i64,
}

/// A webhook of a namespace, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookRecord {
    pub id: String,
    pub namespace: String,
    pub url: String,
    /// The kinds delivered; empty: every kind.
    pub kinds: Vec<EventKind>,
    /// `whsec_<base64>`: shown once, when the hook is created.
    pub secret: String,
    pub created_at: Timestamp,
    pub created_by: String,
    /// Consecutive failed attempts.
    pub failures: i64,
    /// When repeated failure paused it; `None` while active.
    pub paused_at: Option<Timestamp>,
    /// The HTTP status of the last attempt (`None`: no attempt yet, or no answer).
    pub last_status: Option<i64>,
    pub last_attempt_at: Option<Timestamp>,
}

/// A new webhook, as the registry checked it.
#[derive(Debug, Clone)]
pub struct NewWebhook<'a> {
    pub id: &'a str,
    pub namespace: &'a str,
    pub url: &'a str,
    pub kinds: &'a [EventKind],
    pub secret: &'a str,
    pub actor: &'a str,
}

/// A delivery claimed by a worker: the hook's address and secret, and the event.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub hook_id: String,
    pub url: String,
    pub secret: String,
    /// Attempts made before this one.
    pub attempts: i64,
    pub event: EventRecord,
}

/// How an attempt ended, as a worker records it.
#[derive(Debug, Clone)]
pub struct Attempt<'a> {
    pub hook_id: &'a str,
    pub event_id: i64,
    /// This attempt's number (1 for the first).
    pub attempt: i64,
    /// The receiver's HTTP status (`None`: no answer).
    pub status: Option<u16>,
    /// What went wrong, when the status is not a 2xx.
    pub error: Option<&'a str>,
    /// Try again after this many seconds (`None` with an error: give up on this event).
    pub retry_in: Option<u64>,
    /// Pause the hook when its consecutive failures reach this.
    pub pause_after: u32,
}

impl Attempt<'_> {
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

/// Why a webhook is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// Not an http(s) URL this registry calls: malformed, another scheme, credentials in it,
    /// too long.
    #[error("invalid webhook URL: {0}")]
    InvalidUrl(String),
    /// The URL's host is (or resolves to) an address the egress policy refuses.
    #[error("webhook URL refused: {0}")]
    AddressRefused(String),
    /// An event filter naming a kind that does not exist.
    #[error("unknown event type {0:?}; the types are {types}", types = kinds_list())]
    UnknownKind(String),
    #[error("no webhook {0:?} in this namespace")]
    NotFound(String),
}

impl WebhookError {
    pub fn code(&self) -> Code {
        match self {
            Self::InvalidUrl(_) => Code::InvalidWebhookUrl,
            Self::AddressRefused(_) => Code::WebhookUrlRefused,
            Self::UnknownKind(_) => Code::InvalidEventType,
            Self::NotFound(_) => Code::WebhookNotFound,
        }
    }
}

fn kinds_list() -> String {
    EventKind::ALL.map(EventKind::as_str).join(", ")
}

/// The longest webhook URL accepted.
pub const MAX_URL_LEN: usize = 2048;

/// Check a webhook URL's form: `http` or `https`, a host, no credentials or fragment. Returns
/// its host as written (a name, or an IP address without brackets) and its port.
pub fn check_url(url: &str) -> Result<(String, u16), WebhookError> {
    if url.len() > MAX_URL_LEN {
        return Err(WebhookError::InvalidUrl(format!(
            "longer than {MAX_URL_LEN} bytes"
        )));
    }
    let parsed =
        url::Url::parse(url).map_err(|e| WebhookError::InvalidUrl(format!("{url:.200}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(WebhookError::InvalidUrl(format!(
            "the scheme must be http or https, not {:?}",
            parsed.scheme()
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(WebhookError::InvalidUrl(
            "credentials in the URL are not accepted".to_owned(),
        ));
    }
    if parsed.fragment().is_some() {
        return Err(WebhookError::InvalidUrl(
            "a fragment is not accepted".to_owned(),
        ));
    }
    let host = match parsed.host() {
        Some(url::Host::Domain(d)) => d.to_owned(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return Err(WebhookError::InvalidUrl("no host".to_owned())),
    };
    let port = parsed.port_or_known_default().unwrap_or(80);
    Ok((host, port))
}

/// Whether the egress policy refuses `ip` by default: loopback, private (RFC 1918, unique
/// local), link-local, unspecified, shared (CGNAT), multicast, broadcast, documentation and
/// IPv4-mapped forms of those.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || (s[0] == 0x64 && s[1] == 0xff9b)
        }
    }
}

/// Whether the operator allows `host` (as a URL names it) whatever it resolves to
/// (`webhook_allow_hosts`: host names or IP addresses, compared exactly, case-insensitively).
pub fn host_allowed(allow: &[String], host: &str) -> bool {
    allow.iter().any(|a| a.eq_ignore_ascii_case(host))
}

/// The prefix of a Standard Webhooks secret: `whsec_` then the key in base64.
pub const SECRET_PREFIX: &str = "whsec_";

/// The HMAC key of a Standard Webhooks secret (`whsec_<base64>`), `None` for another form.
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let b64 = secret.strip_prefix(SECRET_PREFIX)?;
    base64::engine::general_purpose::STANDARD.decode(b64).ok()
}

/// The content a Standard Webhooks signature covers: `id.timestamp.body`.
pub fn signed_content(id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(id.len() + 24 + body.len());
    content.extend_from_slice(id.as_bytes());
    content.push(b'.');
    content.extend_from_slice(timestamp.to_string().as_bytes());
    content.push(b'.');
    content.extend_from_slice(body);
    content
}

/// The delay before retry `attempt` (1 after the first failure): exponential from 10 seconds,
/// doubling, at most an hour.
pub fn retry_delay_secs(attempt: u32) -> u64 {
    (10u64 << attempt.saturating_sub(1).min(12)).min(3600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_are_snake_case() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.as_str())
            );
        }
        assert_eq!(EventKind::parse("scan changed"), None);
    }

    #[test]
    fn urls_are_checked() {
        assert_eq!(
            check_url("https://hooks.example.com/x?y=1").unwrap(),
            ("hooks.example.com".to_owned(), 443)
        );
        assert_eq!(
            check_url("http://[::1]:8080/").unwrap(),
            ("::1".to_owned(), 8080)
        );
        for bad in [
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "https://example.com/#frag",
            "not a url",
            "file:///etc/passwd",
        ] {
            assert!(
                matches!(check_url(bad), Err(WebhookError::InvalidUrl(_))),
                "{bad}"
            );
        }
        assert!(check_url(&format!("https://example.com/{}", "a".repeat(MAX_URL_LEN))).is_err());
    }

    #[test]
    fn internal_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:2800:220:1::1", "8.8.8.8"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
        let allow = vec!["127.0.0.1".to_owned(), "Hooks.Local".to_owned()];
        assert!(host_allowed(&allow, "127.0.0.1"));
        assert!(host_allowed(&allow, "hooks.local"));
        assert!(!host_allowed(&allow, "127.0.0.2"));
    }

    #[test]
    fn secrets_and_signed_content() {
        assert_eq!(secret_key("whsec_AAEC").unwrap(), vec![0, 1, 2]);
        assert!(secret_key("AAEC").is_none());
        assert_eq!(signed_content("msg_1", 1700, b"{}"), b"msg_1.1700.{}");
    }

    #[test]
    fn retries_back_off_exponentially_to_an_hour() {
        assert_eq!(retry_delay_secs(1), 10);
        assert_eq!(retry_delay_secs(2), 20);
        assert_eq!(retry_delay_secs(3), 40);
        assert_eq!(retry_delay_secs(20), 3600);
    }
}
