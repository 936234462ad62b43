//! Prometheus metrics, process-wide: HTTP requests per route, MCP requests per method, errors per
//! code, publishes, search and completion latency, and the catalog's size and each cache's bytes,
//! hits, misses and evictions (read at scrape time).
//!
//! Every label comes from a bounded set, whatever a caller passes: the HTTP method is one of
//! [`METHODS`] or `other`, a route is one of at most [`MAX_ROUTES`] route patterns (later ones are
//! `other`), and the other labels are `&'static str`s of the crate (JSON-RPC method names, error
//! codes, outcomes). A label taken from a request as is would let a client add series at will.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct McpLabels {
    method: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: &'static str,
}

/// The label of every value outside a label's bounded set.
const OTHER: &str = "other";

/// The HTTP methods labelled as themselves; any other method is `other`.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];

/// How many distinct routes get their own label (the router has far fewer); later ones are
/// `other`.
pub const MAX_ROUTES: usize = 64;

/// The longest route label; a longer route is `other`.
const MAX_ROUTE_LEN: usize = 128;

fn method_label(method: &str) -> &'static str {
    METHODS.into_iter().find(|m| *m == method).unwrap_or(OTHER)
}

/// The label of `route`: the route itself while fewer than [`MAX_ROUTES`] routes have been seen
/// (each is kept for the life of the process, so at most that many are), else `other`.
fn route_label(route: &str) -> &'static str {
    static ROUTES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    if route.len() > MAX_ROUTE_LEN
        || !route
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
    {
        return OTHER;
    }
    let mut routes = ROUTES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = routes.get(route) {
        return known;
    }
    if routes.len() >= MAX_ROUTES {
        return OTHER;
    }
    let kept: &'static str = Box::leak(route.to_owned().into_boxed_str());
    routes.insert(kept);
    kept
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

fn latency() -> Histogram {
    // 50 µs to ~26 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 20))
}

struct Metrics {
    registry: Registry,
    http_requests: Family<HttpLabels, Counter>,
    http_latency: Family<RouteLabels, Histogram>,
    mcp_requests: Family<McpLabels, Counter>,
    mcp_latency: Family<MethodLabels, Histogram>,
    errors: Family<CodeLabels, Counter>,
    publishes: Family<KindLabels, Counter>,
    scans: Family<KindLabels, Counter>,
    search_latency: Histogram,
    completion_latency: Histogram,
    catalog: Family<KindLabels, Gauge>,
    generation: Family<OfLabels, Gauge>,
    changes_heard: Counter,
    change_lag: Histogram,
    connections: Family<StateLabels, Gauge>,
    cache_bytes: Family<CacheLabels, Gauge>,
    cache_capacity: Family<CacheLabels, Gauge>,
    cache_hits: Family<CacheLabels, Counter>,
    cache_misses: Family<CacheLabels, Counter>,
    cache_evictions: Family<CacheLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    cache: &'static str,
}

/// One cache as `/metrics` shows it: what its counters read at scrape time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSample {
    /// The cache's name (a `&'static str` of the crate).
    pub cache: &'static str,
    pub held_bytes: u64,
    pub capacity_bytes: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OfLabels {
    of: &'static str,
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("skillreg");
        let m = Metrics {
            http_requests: Family::default(),
            http_latency: Family::new_with_constructor(latency),
            mcp_requests: Family::default(),
            mcp_latency: Family::new_with_constructor(latency),
            errors: Family::default(),
            publishes: Family::default(),
            scans: Family::default(),
            search_latency: latency(),
            completion_latency: latency(),
            catalog: Family::default(),
            generation: Family::default(),
            changes_heard: Counter::default(),
            change_lag: latency(),
            connections: Family::default(),
            cache_bytes: Family::default(),
            cache_capacity: Family::default(),
            cache_hits: Family::default(),
            cache_misses: Family::default(),
            cache_evictions: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "http_requests",
            "HTTP requests by method, route and status",
            m.http_requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route",
            m.http_latency.clone(),
        );
        registry.register(
            "mcp_requests",
            "MCP requests by JSON-RPC method and outcome",
            m.mcp_requests.clone(),
        );
        registry.register(
            "mcp_request_duration_seconds",
            "MCP request latency by method",
            m.mcp_latency.clone(),
        );
        registry.register(
            "errors",
            "Errors answered, by stable error code",
            m.errors.clone(),
        );
        registry.register(
            "publishes",
            "Publish attempts by outcome (created, unchanged, refused)",
            m.publishes.clone(),
        );
        registry.register(
            "scans",
            "Versions scanned at publish, by verdict (clean, flagged, blocked, unscanned)",
            m.scans.clone(),
        );
        registry.register(
            "search_duration_seconds",
            "Full-text search latency",
            m.search_latency.clone(),
        );
        registry.register(
            "completion_duration_seconds",
            "completion/complete latency",
            m.completion_latency.clone(),
        );
        registry.register(
            "catalog",
            "Catalog size: skills, versions, files, blobs, blob_bytes, namespaces",
            m.catalog.clone(),
        );
        registry.register(
            "generation",
            "Catalog generation of the database and of this process's search index (their \
             difference is how far the index lags)",
            m.generation.clone(),
        );
        registry.register(
            "changes_heard",
            "Changes announced by other processes sharing the database (PostgreSQL NOTIFY)",
            m.changes_heard.clone(),
        );
        registry.register(
            "change_notification_lag_seconds",
            "From a change's commit on another process to this one hearing of it (across \
             machines, includes their clock difference)",
            m.change_lag.clone(),
        );
        registry.register(
            "database_connections",
            "Connections of the database pool that reads use: open, and idle among them",
            m.connections.clone(),
        );
        registry.register(
            "cache_bytes",
            "Bytes each in-memory cache holds, as the allocator holds them",
            m.cache_bytes.clone(),
        );
        registry.register(
            "cache_capacity_bytes",
            "Bytes each in-memory cache may hold: its share of cache_memory_mib",
            m.cache_capacity.clone(),
        );
        registry.register(
            "cache_hits",
            "Lookups each in-memory cache answered",
            m.cache_hits.clone(),
        );
        registry.register(
            "cache_misses",
            "Lookups each in-memory cache did not answer",
            m.cache_misses.clone(),
        );
        registry.register(
            "cache_evictions",
            "Items each in-memory cache dropped to stay within its bytes",
            m.cache_evictions.clone(),
        );
        Metrics { registry, ..m }
    })
}

/// Record one HTTP request. `method` and `route` may come from the request: they are labelled
/// only from bounded sets ([`METHODS`] and at most [`MAX_ROUTES`] routes, else `other`).
pub fn http(method: &str, route: &str, status: u16, started: Instant) {
    let elapsed = started.elapsed().as_secs_f64();
    let method = method_label(method);
    let seen = |s: &HttpSeries| s.method == method && s.route == route && s.status == status;
    if HTTP_SERIES
        .with_borrow(|series| series.iter().find(|s| seen(s)).map(|s| s.observe(elapsed)))
        .is_some()
    {
        return;
    }
    let m = metrics();
    let route = route_label(route);
    let series = HttpSeries {
        method,
        route,
        status,
        count: m
            .http_requests
            .get_or_create(&HttpLabels {
                method,
                route,
                status,
            })
            .clone(),
        latency: m
            .http_latency
            .get_or_create(&RouteLabels { method, route })
            .clone(),
    };
    series.observe(elapsed);
    if route != OTHER {
        HTTP_SERIES.with_borrow_mut(|kept| remember(kept, series));
    }
}

/// Record one MCP request: `method` is the name of a method the server implements.
pub fn mcp(method: &'static str, ok: bool, started: Instant) {
    let elapsed = started.elapsed().as_secs_f64();
    let outcome = if ok { "ok" } else { "error" };
    let seen = |s: &McpSeries| s.method == method && s.outcome == outcome;
    if MCP_SERIES
        .with_borrow(|series| series.iter().find(|s| seen(s)).map(|s| s.observe(elapsed)))
        .is_some()
    {
        return;
    }
    let m = metrics();
    let series = McpSeries {
        method,
        outcome,
        count: m
            .mcp_requests
            .get_or_create(&McpLabels { method, outcome })
            .clone(),
        latency: m
            .mcp_latency
            .get_or_create(&MethodLabels { method })
            .clone(),
    };
    series.observe(elapsed);
    MCP_SERIES.with_borrow_mut(|kept| remember(kept, series));
}

// The series of HTTP and MCP requests each thread recorded last, so that a request of a kind
// its thread has seen takes no lock and hashes no labels (at one `http` and one `mcp` per
// request, the families' lookups were a few percent of a small read). A handle shares its
// values with the family's (no series is ever removed from a family).
thread_local! {
    static HTTP_SERIES: std::cell::RefCell<Vec<HttpSeries>> = const { std::cell::RefCell::new(Vec::new()) };
    static MCP_SERIES: std::cell::RefCell<Vec<McpSeries>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Series kept per thread at most, of each kind (the most recent first).
const SERIES_KEPT: usize = 16;

fn remember<T>(kept: &mut Vec<T>, series: T) {
    kept.truncate(SERIES_KEPT - 1);
    kept.insert(0, series);
}

struct HttpSeries {
    method: &'static str,
    route: &'static str,
    status: u16,
    count: Counter,
    latency: Histogram,
}

impl HttpSeries {
    fn observe(&self, seconds: f64) {
        self.count.inc();
        self.latency.observe(seconds);
    }
}

struct McpSeries {
    method: &'static str,
    outcome: &'static str,
    count: Counter,
    latency: Histogram,
}

impl McpSeries {
    fn observe(&self, seconds: f64) {
        self.count.inc();
        self.latency.observe(seconds);
    }
}

/// Count an error answered with `code` (a row of the error-code table).
pub fn error(code: &'static str) {
    metrics().errors.get_or_create(&CodeLabels { code }).inc();
}

/// Count a publish attempt: `created`, `unchanged` or `refused`.
pub fn publish(outcome: &'static str) {
    metrics()
        .publishes
        .get_or_create(&KindLabels { kind: outcome })
        .inc();
}

/// Count a version scanned at publish, by its verdict.
pub fn scan(verdict: &'static str) {
    metrics()
        .scans
        .get_or_create(&KindLabels { kind: verdict })
        .inc();
}

pub fn search(started: Instant) {
    metrics()
        .search_latency
        .observe(started.elapsed().as_secs_f64());
}

pub fn completion(started: Instant) {
    metrics()
        .completion_latency
        .observe(started.elapsed().as_secs_f64());
}

/// One change announced by another process, heard `lag_ms` after it was sent.
pub fn change_heard(lag_ms: i64) {
    let m = metrics();
    m.changes_heard.inc();
    m.change_lag.observe(lag_ms.max(0) as f64 / 1000.0);
}

/// The Prometheus text exposition, with the catalog gauges set from `catalog` (kind, value),
/// the generation gauges from `generations` (`database`, `search`), the pool's from
/// `connections` (open, idle) and the caches' series from `caches` (their counters are the
/// caches' own, read at scrape time).
pub fn render(
    catalog: Option<&[(&'static str, i64)]>,
    generations: &[(&'static str, Option<i64>)],
    connections: Option<(u32, usize)>,
    caches: &[CacheSample],
) -> String {
    // Setting the gauges and encoding them is one step: two scrapes at once (or, in the tests,
    // two servers of one process) must not encode each other's values.
    static RENDERING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = RENDERING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let m = metrics();
    if let Some((open, idle)) = connections {
        let gauge = |state| m.connections.get_or_create(&StateLabels { state });
        gauge("open").set(i64::from(open));
        gauge("idle").set(i64::try_from(idle).unwrap_or(i64::MAX));
    }
    for &(kind, value) in catalog.unwrap_or_default() {
        m.catalog.get_or_create(&KindLabels { kind }).set(value);
    }
    for &(of, value) in generations {
        if let Some(value) = value {
            m.generation.get_or_create(&OfLabels { of }).set(value);
        }
    }
    for sample in caches {
        let labels = CacheLabels {
            cache: sample.cache,
        };
        let gauge = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        m.cache_bytes
            .get_or_create(&labels)
            .set(gauge(sample.held_bytes));
        m.cache_capacity
            .get_or_create(&labels)
            .set(gauge(sample.capacity_bytes));
        for (family, value) in [
            (&m.cache_hits, sample.hits),
            (&m.cache_misses, sample.misses),
            (&m.cache_evictions, sample.evictions),
        ] {
            // The cache keeps the count; the series shows it.
            family
                .get_or_create(&labels)
                .inner()
                .store(value, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let mut out = String::new();
    let _ = prometheus_client::encoding::text::encode(&mut out, &m.registry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_bounded_sets() {
        assert_eq!(method_label("GET"), "GET");
        assert_eq!(method_label("PATCH"), "PATCH");
        assert_eq!(method_label("get"), OTHER);
        assert_eq!(method_label(&"X".repeat(8192)), OTHER);
        assert_eq!(
            route_label("/v1/skills/{namespace}/{name}"),
            "/v1/skills/{namespace}/{name}"
        );
        assert_eq!(route_label(&"/a".repeat(100)), OTHER);
        assert_eq!(route_label("/a\"b"), OTHER);
        let labels: HashSet<&str> = (0..2 * MAX_ROUTES)
            .map(|i| route_label(&format!("/route-test/{i}")))
            .collect();
        assert!(labels.len() <= MAX_ROUTES + 1, "{}", labels.len());
        assert!(labels.contains(OTHER));
    }

    #[test]
    fn requests_of_a_kind_seen_before_count_in_the_same_series() {
        let line = |text: &str, start: &str| {
            text.lines()
                .find(|l| l.starts_with(start))
                .map(|l| l.rsplit(' ').next().unwrap().to_owned())
        };
        let record = || {
            for _ in 0..3 {
                http("POST", "/series-test", 299, Instant::now());
                mcp("series/test", false, Instant::now());
            }
        };
        record();
        std::thread::spawn(record).join().unwrap();
        let text = render(None, &[], None, &[]);
        // The route's label: itself, or `other` once the test of the bounds has used them up.
        let route = route_label("/series-test");
        let http_line = format!(
            r#"skillreg_http_requests_total{{method="POST",route="{route}",status="299"}}"#
        );
        assert_eq!(line(&text, &http_line).as_deref(), Some("6"), "{text}");
        assert_eq!(
            line(
                &text,
                r#"skillreg_mcp_requests_total{method="series/test",outcome="error"}"#
            )
            .as_deref(),
            Some("6"),
        );
        assert_eq!(
            line(
                &text,
                r#"skillreg_mcp_request_duration_seconds_count{method="series/test"}"#
            )
            .as_deref(),
            Some("6"),
        );
    }
}
