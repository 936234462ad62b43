//! [`Events`]: the events feed and webhooks.
//!
//! The feed is what the store wrote with each change (`core::event`), read by cursor: REST's
//! `GET /v1/events` and MCP's `events/poll` page through it, each caller seeing only events of
//! namespaces it sees (a pending version's publish only where it holds the namespace). A cursor
//! is the id of the last event passed (opaque to clients); one from before the retention window
//! is answered `truncated`.
//!
//! Webhooks: a token with the `webhook` action on a namespace registers a URL and an event
//! filter; the registry makes its secret (`whsec_` + 32 random bytes in base64, shown once). A
//! background task ([`run`], started with [`RegistryBuilder::events`](super::RegistryBuilder))
//! queues each new event for the hooks it matches, claims due deliveries (one replica gets each,
//! for a lease), and POSTs them signed as Standard Webhooks says (`webhook-id`,
//! `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`), each
//! from its own task with a timeout (at most [`SENDERS`] at once: a silent receiver holds one
//! sender, never the others), the attempts recorded in batches. The sends run on a thread of
//! their own at a lower CPU priority ([`SenderThread`]): a burst of deliveries (a publish with a
//! hundred hooks is a hundred signed requests) takes the CPU that serving leaves, not the
//! reverse. Deliveries are concurrent, so a
//! receiver may get them out of order (the event id orders them). A failed attempt is retried
//! with exponential backoff (`core::event::retry_delay_secs`), given up after [`MAX_ATTEMPTS`];
//! `webhook_pause_after` consecutive failures pause the hook until it is resumed (the events of
//! its pause are not delivered: the feed keeps them). A publish only writes its event row: it never waits for a delivery.
//!
//! Egress: a webhook's host must not be, or resolve to, a loopback, private or link-local
//! address (`core::event::is_internal`) unless the operator allows it (`webhook_allow_hosts`),
//! checked at registration and again at each delivery, on the addresses the connection uses (a
//! resolver that drops refused addresses), with redirects and proxies off.

use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tokio::sync::{Semaphore, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::core::event::{
    self, Attempt, Delivery, EventKind, EventRecord, NewWebhook, WebhookError, WebhookRecord,
};
use crate::core::{Action, Namespace, Principal, Timestamp, Visibility};
use crate::error::{Error, Result};
use crate::store::Store;

/// Attempts of one delivery before it is given up.
pub const MAX_ATTEMPTS: i64 = 8;
/// How long a receiver has to answer one delivery.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a claimed delivery is one worker's (longer than [`SEND_TIMEOUT`]).
const LEASE_SECS: u64 = 60;
/// Deliveries claimed per round, and sent at once at most (each sender holds one until its
/// receiver answers or times out).
const CLAIM: u32 = 64;
const SENDERS: usize = 64;
/// How often the task looks for due deliveries when no change wakes it.
const TICK: Duration = Duration::from_secs(1);
/// How long the task waits after an attempt finishes for others to finish with it.
const BATCH: Duration = Duration::from_millis(50);
/// The nice value of the thread deliveries are sent from (Linux keeps one per thread): 10 has
/// about a tenth of a normal thread's share of a busy CPU, and all of an idle one.
const SENDER_NICE: i32 = 10;
/// How often old events are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);
/// Events per page unless asked otherwise, and at most.
pub const DEFAULT_LIMIT: u32 = 100;
pub const MAX_LIMIT: u32 = 500;

/// What the events feed keeps and how webhooks are delivered.
#[derive(Debug, Clone)]
pub struct EventSettings {
    /// Days each event is kept (`event_retention_days`).
    pub retention_days: u64,
    /// Consecutive failures that pause a hook (`webhook_pause_after`).
    pub pause_after: u32,
    /// Hosts called whatever they resolve to (`webhook_allow_hosts`).
    pub allow_hosts: Vec<String>,
}

impl Default for EventSettings {
    fn default() -> Self {
        Self {
            retention_days: 30,
            pause_after: 10,
            allow_hosts: Vec::new(),
        }
    }
}

/// A page of the feed.
#[derive(Debug, Clone)]
pub struct FeedPage {
    pub events: Vec<EventRecord>,
    /// The cursor to pass next.
    pub next: String,
    /// Whether more events may follow at once (the page is full).
    pub has_more: bool,
    /// The cursor was from before the retention window: events were missed.
    pub truncated: bool,
}

/// The events feed and webhooks.
pub struct Events {
    store: Arc<dyn Store>,
    settings: EventSettings,
    client: reqwest::Client,
    /// Deliveries in flight.
    senders: Arc<Semaphore>,
}

impl Events {
    pub(super) fn new(store: Arc<dyn Store>, settings: EventSettings) -> Self {
        let client = reqwest::Client::builder()
            .timeout(SEND_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Egress {
                allow: settings.allow_hosts.clone(),
            })
            .build()
            .unwrap_or_default();
        Self {
            store,
            settings,
            client,
            senders: Arc::new(Semaphore::new(SENDERS)),
        }
    }

    /// The events `visibility` sees after `after` (from the oldest kept without one), up to
    /// `limit`, of one kind and namespace or any.
    pub async fn feed(
        &self,
        visibility: &Visibility,
        after: Option<&str>,
        limit: Option<u32>,
        kind: Option<EventKind>,
        namespace: Option<&Namespace>,
    ) -> Result<FeedPage> {
        let from = after.map(parse_cursor).transpose()?;
        self.page(
            visibility,
            from.unwrap_or(0),
            from.is_some(),
            limit,
            kind,
            namespace,
        )
        .await
    }

    /// SEP-3415's poll: like [`Events::feed`], but without a cursor it starts from now (no
    /// events, and the cursor of the newest).
    pub async fn poll(
        &self,
        visibility: &Visibility,
        cursor: Option<&str>,
        limit: Option<u32>,
        kind: Option<EventKind>,
        namespace: Option<&Namespace>,
    ) -> Result<FeedPage> {
        match cursor {
            Some(cursor) => {
                let from = parse_cursor(cursor)?;
                self.page(visibility, from, true, limit, kind, namespace)
                    .await
            }
            None => {
                let page = self
                    .store
                    .events_page(i64::MAX, 1, kind, namespace, visibility)
                    .await?;
                Ok(FeedPage {
                    events: Vec::new(),
                    next: page.latest.to_string(),
                    has_more: false,
                    truncated: false,
                })
            }
        }
    }

    async fn page(
        &self,
        visibility: &Visibility,
        after: i64,
        from_cursor: bool,
        limit: Option<u32>,
        kind: Option<EventKind>,
        namespace: Option<&Namespace>,
    ) -> Result<FeedPage> {
        let limit = limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let page = self
            .store
            .events_page(after, limit, kind, namespace, visibility)
            .await?;
        let full = page.events.len() == limit as usize;
        let last = page.events.last().map_or(after, |e| e.id);
        // A page that is not full has passed every event up to where the feed stood (those this
        // caller does not see included).
        let next = if full { last } else { last.max(page.latest) };
        Ok(FeedPage {
            truncated: from_cursor && after < page.pruned_through,
            has_more: full,
            next: next.max(after).to_string(),
            events: page.events,
        })
    }

    /// Register a webhook of `namespace` (the `webhook` action there): its URL checked against
    /// the egress policy, its filter (`types`: event type names, none for every type) checked.
    pub async fn add_webhook(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        url: &str,
        types: &[String],
    ) -> Result<WebhookRecord> {
        caller.require(Action::Webhook, namespace)?;
        let mut kinds = types
            .iter()
            .map(|t| EventKind::parse(t).ok_or_else(|| WebhookError::UnknownKind(t.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        kinds.sort_unstable();
        kinds.dedup();
        let (host, port) = event::check_url(url)?;
        self.check_egress(&host, port).await?;
        let mut id = [0u8; 8];
        let mut key = [0u8; 32];
        getrandom::fill(&mut id)
            .and_then(|()| getrandom::fill(&mut key))
            .map_err(|e| Error::Internal(format!("no randomness for a webhook secret: {e}")))?;
        let id = format!(
            "wh_{}",
            id.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let secret = format!("{}{}", event::SECRET_PREFIX, STANDARD.encode(key));
        Ok(self
            .store
            .add_webhook(NewWebhook {
                id: &id,
                namespace: namespace.as_str(),
                url,
                kinds: &kinds,
                secret: &secret,
                actor: &caller.actor(),
            })
            .await?)
    }

    /// The webhooks of `namespace` (the `webhook` action there).
    pub async fn webhooks(
        &self,
        caller: &Principal,
        namespace: &Namespace,
    ) -> Result<Vec<WebhookRecord>> {
        caller.require(Action::Webhook, namespace)?;
        Ok(self.store.webhooks(Some(namespace)).await?)
    }

    /// Remove a webhook of `namespace` (the `webhook` action there); its queued deliveries go
    /// with it.
    pub async fn remove_webhook(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        id: &str,
    ) -> Result<()> {
        caller.require(Action::Webhook, namespace)?;
        if self
            .store
            .remove_webhook(namespace, id, &caller.actor())
            .await?
        {
            Ok(())
        } else {
            Err(WebhookError::NotFound(id.chars().take(64).collect()).into())
        }
    }

    /// Make a paused webhook of `namespace` active again (the `webhook` action there): its
    /// queued deliveries are tried again; the events of its pause are not delivered.
    pub async fn resume_webhook(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        id: &str,
    ) -> Result<()> {
        caller.require(Action::Webhook, namespace)?;
        if self
            .store
            .resume_webhook(namespace, id, &caller.actor())
            .await?
        {
            Ok(())
        } else {
            Err(WebhookError::NotFound(id.chars().take(64).collect()).into())
        }
    }

    /// Refuse `host` when it is, or resolves to, an address the egress policy refuses.
    async fn check_egress(&self, host: &str, port: u16) -> Result<(), WebhookError> {
        if event::host_allowed(&self.settings.allow_hosts, host) {
            return Ok(());
        }
        let addrs: Vec<SocketAddr> = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| {
                    WebhookError::InvalidUrl(format!("{host:.200} does not resolve: {e}"))
                })?
                .collect(),
        };
        match addrs.iter().find(|a| event::is_internal(a.ip())) {
            Some(internal) => Err(WebhookError::AddressRefused(format!(
                "{host:.200} is (or resolves to) {}, an internal address; the operator may allow \
                 the host with webhook_allow_hosts",
                internal.ip()
            ))),
            None => Ok(()),
        }
    }

    /// Forget events older than the retention window.
    pub async fn prune(&self) -> Result<u64> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let days = i64::try_from(self.settings.retention_days).unwrap_or(i64::MAX / 86_400);
        let before = Timestamp::from_epoch_secs(now.saturating_sub(days.saturating_mul(86_400)));
        Ok(self.store.prune_events(before).await?)
    }

    /// One round of delivery: record the attempts `sent` since the last round (in one
    /// transaction), queue new events (when `queue`), and claim as many due deliveries as there are free
    /// senders, each sent by its own task on `runtime` that reports to `done`. A slow receiver holds one
    /// sender until its timeout, never the round.
    async fn round(
        &self,
        sent: Vec<Sent>,
        queue: bool,
        done: &mpsc::UnboundedSender<Sent>,
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        self.record(sent).await?;
        if queue {
            self.store.queue_deliveries().await?;
        }
        let free = self.senders.available_permits();
        if free == 0 {
            return Ok(());
        }
        let claimed = self
            .store
            .claim_deliveries(u32::try_from(free).unwrap_or(CLAIM).min(CLAIM), LEASE_SECS)
            .await?;
        for delivery in claimed {
            let Ok(permit) = self.senders.clone().try_acquire_owned() else {
                // Claimed but no sender free: its lease ends and it is claimed again.
                break;
            };
            let client = self.client.clone();
            let allow = self.settings.allow_hosts.clone();
            let done = done.clone();
            runtime.spawn(async move {
                let (status, error) = send(&client, &allow, &delivery).await;
                let _ = done.send(Sent {
                    delivery,
                    status,
                    error,
                });
                drop(permit);
            });
        }
        Ok(())
    }

    /// Record finished attempts: a failure is retried after its backoff until [`MAX_ATTEMPTS`].
    async fn record(&self, sent: Vec<Sent>) -> Result<()> {
        let attempts: Vec<Attempt<'_>> = sent
            .iter()
            .map(|s| {
                let attempt = s.delivery.attempts + 1;
                Attempt {
                    hook_id: &s.delivery.hook_id,
                    event_id: s.delivery.event.id,
                    attempt,
                    status: s.status,
                    error: s.error.as_deref(),
                    retry_in: (s.error.is_some() && attempt < MAX_ATTEMPTS)
                        .then(|| event::retry_delay_secs(attempt as u32)),
                    pause_after: self.settings.pause_after,
                }
            })
            .collect();
        for hook in self.store.finish_deliveries(&attempts).await? {
            tracing::warn!(%hook, "webhook paused after repeated failed deliveries");
        }
        Ok(())
    }
}

/// The thread deliveries are sent from: a single-threaded runtime at nice [`SENDER_NICE`], so
/// that their HTTP and signing work yields to the requests the process serves. The queue,
/// claims and records stay on the serving runtime (they are storage's work, and brief).
/// Dropped, the thread ends; the deliveries in flight then are claimed again when their lease
/// ends.
struct SenderThread {
    handle: tokio::runtime::Handle,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl SenderThread {
    /// Start the thread, or `None` when it cannot be (deliveries are then sent from the
    /// serving runtime).
    fn start() -> Option<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| tracing::warn!(error = %e, "no runtime for webhook deliveries"))
            .ok()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("webhook-sender".to_owned())
            .spawn(move || {
                lower_priority();
                runtime.block_on(async move {
                    let _ = stopped.await;
                });
            })
            .map_err(|e| tracing::warn!(error = %e, "no thread for webhook deliveries"))
            .ok()?;
        Some(Self {
            handle,
            _stop: stop,
        })
    }
}

/// Lower the calling thread's CPU priority to [`SENDER_NICE`] (Linux: the nice value is the
/// thread's, not the process's).
#[cfg(target_os = "linux")]
fn lower_priority() {
    let thread = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(thread), SENDER_NICE) {
        tracing::warn!(error = %e, "webhook deliveries run at normal priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// A delivery attempt that ended: the receiver's status, and what went wrong unless a 2xx.
struct Sent {
    delivery: Delivery,
    status: Option<u16>,
    error: Option<String>,
}

/// The body of a delivery: Standard Webhooks' `{type, timestamp, data}`, `data` the event as
/// `GET /v1/events` shows it.
pub fn delivery_body(event: &EventRecord) -> serde_json::Value {
    serde_json::json!({
        "type": event.kind.as_str(),
        "timestamp": event.at,
        "data": {
            "id": event.id.to_string(),
            "type": event.kind.as_str(),
            "at": event.at,
            "namespace": event.namespace,
            "name": event.name,
            "version": event.version,
            "pending": event.pending,
            "payload": event.payload,
        },
    })
}

/// The `webhook-signature` value of a delivery: `v1,<base64 HMAC-SHA256>` of
/// `id.timestamp.body` with the secret's key.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = event::secret_key(secret)?;
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
    let tag = aws_lc_rs::hmac::sign(&key, &event::signed_content(id, timestamp, body));
    Some(format!("v1,{}", STANDARD.encode(tag.as_ref())))
}

/// POST one delivery: the receiver's status, and what went wrong unless it is a 2xx.
async fn send(
    client: &reqwest::Client,
    allow: &[String],
    delivery: &Delivery,
) -> (Option<u16>, Option<String>) {
    // An IP address in the URL is connected to without the resolver: checked here.
    if let Ok((host, _)) = event::check_url(&delivery.url)
        && let Ok(ip) = host.parse::<std::net::IpAddr>()
        && event::is_internal(ip)
        && !event::host_allowed(allow, &host)
    {
        return (
            None,
            Some(format!("{ip} is an internal address (egress policy)")),
        );
    }
    let body = match serde_json::to_vec(&delivery_body(&delivery.event)) {
        Ok(body) => body,
        Err(e) => return (None, Some(e.to_string())),
    };
    let id = format!("evt_{}", delivery.event.id);
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let Some(signature) = signature(&delivery.secret, &id, timestamp, &body) else {
        return (None, Some("the hook's secret does not decode".to_owned()));
    };
    let sent = client
        .post(&delivery.url)
        .header("content-type", "application/json")
        .header("webhook-id", &id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body)
        .send()
        .await;
    match sent {
        Ok(response) if response.status().is_success() => (Some(response.status().as_u16()), None),
        Ok(response) => (
            Some(response.status().as_u16()),
            Some(format!("answered {}", response.status())),
        ),
        Err(e) => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                message.push_str(": ");
                message.push_str(&s.to_string());
                source = s.source();
            }
            (None, Some(message.chars().take(500).collect()))
        }
    }
}

fn parse_cursor(cursor: &str) -> Result<i64> {
    cursor
        .parse::<i64>()
        .ok()
        .filter(|id| *id >= 0)
        .ok_or(Error::InvalidCursor)
}

/// The resolver of webhook connections: a host not allowed by the operator connects only to
/// addresses the egress policy accepts.
struct Egress {
    allow: Vec<String>,
}

impl reqwest::dns::Resolve for Egress {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let allowed = event::host_allowed(&self.allow, &host);
        Box::pin(async move {
            type Failure = Box<dyn std::error::Error + Send + Sync>;
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(Failure::from)?
                .filter(|a| allowed || !event::is_internal(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(Failure::from(format!(
                    "{host} resolves to no address the egress policy accepts"
                )));
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Deliver webhooks and prune old events until `stop`: a round after every change this process
/// hears of, every [`TICK`] (retries, changes of other replicas), and [`BATCH`] after an
/// attempt finishes (with every attempt finished by then).
pub(super) async fn run(
    events: Weak<Events>,
    mut changes: broadcast::Receiver<()>,
    stop: CancellationToken,
) {
    let (done, mut finished) = mpsc::unbounded_channel::<Sent>();
    let thread = SenderThread::start();
    let runtime = thread
        .as_ref()
        .map_or_else(tokio::runtime::Handle::current, |t| t.handle.clone());
    let mut failing = false;
    let mut pruned: Option<Instant> = None;
    loop {
        let mut sent = Vec::new();
        // Whether new events may wait to be queued for their hooks: after a change, and at
        // every tick (another replica's events, when its change has not reached this one).
        let mut queue = true;
        tokio::select! {
            () = stop.cancelled() => return,
            _ = changes.recv() => {}
            Some(one) = finished.recv() => {
                sent.push(one);
                queue = false;
                // The attempts of one burst finish together: one round records them all, rather
                // than a round (three writes) per attempt competing with publishes for the
                // writer.
                tokio::time::sleep(BATCH).await;
            }
            () = tokio::time::sleep(TICK) => {}
        }
        while let Ok(one) = finished.try_recv() {
            sent.push(one);
        }
        let Some(events) = events.upgrade() else {
            return;
        };
        if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned = Some(Instant::now());
            match events.prune().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(events = n, "pruned events past the retention window"),
                Err(e) => tracing::warn!(error = %e, "pruning events failed"),
            }
        }
        // Attempts not recorded (storage failing) are claimed again when their lease ends.
        match events.round(sent, queue, &done, &runtime).await {
            Ok(()) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "webhook deliveries failed; retrying");
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_standard_webhooks() {
        // The Standard Webhooks specification's example.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert!(signature("nope", "id", 1, b"").is_none());
    }

    #[test]
    fn cursors_are_event_ids() {
        assert_eq!(parse_cursor("42").unwrap(), 42);
        for bad in ["", "-1", "x", "1.5"] {
            assert!(
                matches!(parse_cursor(bad), Err(Error::InvalidCursor)),
                "{bad}"
            );
        }
    }
}
