//! Prometheus metrics, process-wide: HTTP requests per route, MCP requests per method, errors per
//! code, publishes, search and completion latency, and the catalog's size (read at scrape time).

use std::sync::OnceLock;
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct McpLabels {
    method: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: String,
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
    search_latency: Histogram,
    completion_latency: Histogram,
    catalog: Family<KindLabels, Gauge>,
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
            search_latency: latency(),
            completion_latency: latency(),
            catalog: Family::default(),
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
        Metrics { registry, ..m }
    })
}

/// Record one HTTP request.
pub fn http(method: &str, route: &str, status: u16, started: Instant) {
    let m = metrics();
    m.http_requests
        .get_or_create(&HttpLabels {
            method: method.to_owned(),
            route: route.to_owned(),
            status,
        })
        .inc();
    m.http_latency
        .get_or_create(&RouteLabels {
            method: method.to_owned(),
            route: route.to_owned(),
        })
        .observe(started.elapsed().as_secs_f64());
}

/// Record one MCP request.
pub fn mcp(method: &str, ok: bool, started: Instant) {
    let m = metrics();
    let outcome = if ok { "ok" } else { "error" };
    m.mcp_requests
        .get_or_create(&McpLabels {
            method: method.to_owned(),
            outcome,
        })
        .inc();
    m.mcp_latency
        .get_or_create(&MethodLabels {
            method: method.to_owned(),
        })
        .observe(started.elapsed().as_secs_f64());
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

/// The Prometheus text exposition, with the catalog gauges set from `catalog` (kind, value).
pub fn render(catalog: Option<&[(&'static str, i64)]>) -> String {
    let m = metrics();
    for &(kind, value) in catalog.unwrap_or_default() {
        m.catalog.get_or_create(&KindLabels { kind }).set(value);
    }
    let mut out = String::new();
    let _ = prometheus_client::encoding::text::encode(&mut out, &m.registry);
    out
}
