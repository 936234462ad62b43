//! The events feed and webhooks through a real server: deliveries verified by the maintained
//! Standard Webhooks library (PyPI `standardwebhooks`, `tests/clients/webhook_receiver.py`), a
//! replayed delivery rejected by it, a dead receiver pausing its hook, the egress policy, the
//! feed's visibility, cursor and truncation over REST, and the Events extension's
//! `events/list` and `events/poll` over MCP.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};
use tokio::sync::mpsc;

use crate::common::{Modern, TestServer, run_cli_async, tar_gz, tools};
use crate::rest::{ADMIN, Api};

fn config(allow_loopback: bool, pause_after: u32) -> Config {
    Config {
        admin_token: Some(Secret::new(ADMIN)),
        webhook_allow_hosts: if allow_loopback {
            vec!["127.0.0.1".to_owned()]
        } else {
            Vec::new()
        },
        webhook_pause_after: pause_after,
        ..Config::default()
    }
}

async fn publish(api: &Api, ns: &str, name: &str, version: &str) {
    let md = format!("---\nname: {name}\ndescription: Events.\n---\n# {name}\n");
    let archive = tar_gz(&[("SKILL.md", tar::EntryType::Regular, md.as_bytes())]);
    let (status, body) = api.publish(Some(ADMIN), ns, name, version, archive).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// Make the namespace `secret` private, publish `secret/hidden` there, then `acme/late`.
async fn publish_hidden_then_late(api: &Api) {
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/secret/private",
            Some(ADMIN),
            None,
        )
        .await;
    assert!(status.is_success());
    publish(api, "secret", "hidden", "1.0.0").await;
    publish(api, "acme", "late", "1.0.0").await;
}

/// `tests/clients/webhook_receiver.py`: its port, and the lines it prints.
struct Receiver {
    child: Child,
    port: u16,
    lines: mpsc::UnboundedReceiver<Value>,
}

impl Receiver {
    async fn start() -> Self {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/clients/webhook_receiver.py");
        let mut child = Command::new(tools().python)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, mut lines) = mpsc::unbounded_channel::<Value>();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let first = tokio::time::timeout(Duration::from_secs(30), lines.recv())
            .await
            .unwrap()
            .unwrap();
        let port = first["port"].as_u64().unwrap() as u16;
        Self { child, port, lines }
    }

    fn secret(&mut self, secret: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{secret}").unwrap();
        stdin.flush().unwrap();
    }

    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(30), self.lines.recv())
            .await
            .expect("a delivery within 30 seconds")
            .unwrap()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The webhooks of `acme` once its first satisfies `ready` (within 30 seconds).
async fn hook_once(api: &Api, token: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let mut list = Value::Null;
    for _ in 0..150 {
        let (status, body) = api
            .send(
                Method::GET,
                "/v1/namespaces/acme/webhooks",
                Some(token),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        list = body;
        if ready(&list["webhooks"][0]) {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the webhook never got there: {list}");
}

async fn add_hook(
    api: &Api,
    token: &str,
    ns: &str,
    url: &str,
    types: &[&str],
) -> (StatusCode, Value) {
    api.send(
        Method::POST,
        &format!("/v1/namespaces/{ns}/webhooks"),
        Some(token),
        Some(json!({ "url": url, "types": types })),
    )
    .await
}

/// Every delivery verifies with the receiver's Standard Webhooks library, in the order of its
/// events, filtered by type; the same delivery signed with an old timestamp is rejected by it;
/// the hook's state shows the last status, and never the secret again.
#[tokio::test]
async fn a_standard_webhooks_receiver_verifies_deliveries_and_rejects_a_replay() {
    let server = TestServer::builder().config(config(true, 10)).start().await;
    let api = Api::new(&server);
    let (_, token) = api.token(&["acme"], &["webhook"]).await;
    let mut receiver = Receiver::start().await;
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    let (status, hook) = add_hook(&api, &token, "acme", &url, &["published", "yanked"]).await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    let secret = hook["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{hook}");
    receiver.secret(&secret);

    publish(&api, "acme", "tool", "1.0.0").await;
    publish(&api, "other", "tool", "1.0.0").await;
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/skills/acme/tool/deprecate",
            Some(ADMIN),
            Some(json!({"message": "old"})),
        )
        .await;
    assert!(status.is_success(), "{body}");
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/skills/acme/tool/1.0.0/yank",
            Some(ADMIN),
            Some(json!({"reason": "broken"})),
        )
        .await;
    assert!(status.is_success(), "{body}");

    // Sent concurrently: in any order, which the event ids restore.
    let mut deliveries = [receiver.next().await, receiver.next().await];
    let id_of = |d: &Value| -> i64 {
        let body: Value = serde_json::from_str(d["body"].as_str().unwrap()).unwrap();
        body["data"]["id"].as_str().unwrap().parse().unwrap()
    };
    deliveries.sort_by_key(id_of);
    let [first, second] = deliveries;
    for (delivery, kind) in [(&first, "published"), (&second, "yanked")] {
        assert_eq!(delivery["verified"], true, "{delivery}");
        let body: Value = serde_json::from_str(delivery["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["type"], kind, "{body}");
        assert_eq!(body["data"]["namespace"], "acme");
        assert_eq!(body["data"]["name"], "tool");
        assert_eq!(body["data"]["version"], "1.0.0");
        assert_eq!(
            delivery["id"].as_str().unwrap(),
            format!("evt_{}", body["data"]["id"].as_str().unwrap())
        );
    }

    // A replay: the first delivery again, correctly signed, with a timestamp ten minutes old.
    let id = first["id"].as_str().unwrap();
    let old = first["timestamp"].as_str().unwrap().parse::<i64>().unwrap() - 600;
    let body = first["body"].as_str().unwrap();
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
    let tag = aws_lc_rs::hmac::sign(&key, format!("{id}.{old}.{body}").as_bytes());
    let signature = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    );
    let replayed = reqwest::Client::new()
        .post(&url)
        .header("webhook-id", id)
        .header("webhook-timestamp", old.to_string())
        .header("webhook-signature", signature)
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), StatusCode::BAD_REQUEST);
    let rejected = receiver.next().await;
    assert_eq!(rejected["verified"], false, "{rejected}");
    assert!(
        rejected["error"].as_str().unwrap().contains("too old"),
        "{rejected}"
    );

    // Attempts are recorded just after they end.
    let list = hook_once(&api, &token, |h| h["last_status"] == 204).await;
    let listed = &list["webhooks"][0];
    assert_eq!(listed["state"], "active", "{list}");
    assert_eq!(listed["last_status"], 204, "{list}");
    assert_eq!(listed["failures"], 0, "{list}");
    assert_eq!(listed["types"], json!(["published", "yanked"]));
    assert!(listed.get("secret").is_none(), "{list}");
}

/// A receiver that never answers fails every attempt; after `webhook_pause_after` of them the
/// hook is paused, which its listing shows, until it is resumed.
#[tokio::test]
async fn a_dead_receiver_pauses_its_hook() {
    let server = TestServer::builder().config(config(true, 2)).start().await;
    let api = Api::new(&server);
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let (status, hook) = add_hook(
        &api,
        ADMIN,
        "acme",
        &format!("http://127.0.0.1:{port}/gone"),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    publish(&api, "acme", "one", "1.0.0").await;
    publish(&api, "acme", "two", "1.0.0").await;
    let list = hook_once(&api, ADMIN, |h| h["state"] == "paused").await;
    let listed = &list["webhooks"][0];
    assert_eq!(listed["failures"], 2, "{listed}");
    assert!(listed.get("last_status").is_none(), "{listed}");
    assert!(listed["paused_at"].is_string(), "{listed}");
    // Resumed: active again, no failure counted, until its queued retries fail again.
    let id = listed["id"].as_str().unwrap();
    let (status, body) = api
        .send(
            Method::POST,
            &format!("/v1/namespaces/acme/webhooks/{id}/resume"),
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, list) = api
        .send(
            Method::GET,
            "/v1/namespaces/acme/webhooks",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(list["webhooks"][0]["state"], "active", "{list}");
    assert_eq!(list["webhooks"][0]["failures"], 0, "{list}");
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/webhooks/wh_0000/resume",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// By default a webhook to a loopback, private or link-local address is refused, by address or
/// by name; bad URLs, unknown types and tokens without the `webhook` action are refused with
/// their codes.
#[tokio::test]
async fn webhooks_to_internal_addresses_and_bad_input_are_refused() {
    let server = TestServer::builder()
        .config(config(false, 10))
        .start()
        .await;
    let api = Api::new(&server);
    let code = |body: &Value| {
        body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    for url in [
        "http://127.0.0.1:9/x",
        "http://localhost:9/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
        "http://10.0.0.1/x",
    ] {
        let (status, body) = add_hook(&api, ADMIN, "acme", url, &[]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{url}: {body}");
        assert_eq!(code(&body), "webhook_url_refused", "{url}: {body}");
    }
    for url in ["ftp://example.com/", "https://u:p@example.com/", "nonsense"] {
        let (_, body) = add_hook(&api, ADMIN, "acme", url, &[]).await;
        assert_eq!(code(&body), "invalid_webhook_url", "{url}: {body}");
    }
    let (_, body) = add_hook(&api, ADMIN, "acme", "https://example.com/", &["nope"]).await;
    assert_eq!(code(&body), "invalid_event_type", "{body}");
    let (_, publisher) = api.token(&["acme"], &["publish"]).await;
    let (status, body) = add_hook(&api, &publisher, "acme", "https://example.com/", &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (_, hooker) = api.token(&["acme"], &["webhook"]).await;
    let (status, body) = add_hook(&api, &hooker, "other", "https://example.com/", &[]).await;
    assert_eq!(code(&body), "namespace_not_allowed", "{status} {body}");
    let (status, body) = api
        .send(
            Method::DELETE,
            "/v1/namespaces/acme/webhooks/wh_0000",
            Some(&hooker),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(code(&body), "webhook_not_found");
    let (status, _) = api
        .send(Method::GET, "/v1/namespaces/acme/webhooks", None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

async fn feed(api: &Api, token: Option<&str>, query: &str) -> Value {
    let (status, body) = api
        .send(Method::GET, &format!("/v1/events{query}"), token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn names(page: &Value) -> Vec<String> {
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}/{}",
                e["type"].as_str().unwrap(),
                e["namespace"].as_str().unwrap(),
                e["name"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// Each reader sees the events of what it may read (a pending version's only with a token of
/// its namespace); a cursor resumes after the last event passed; a cursor from before the
/// retention window is answered `truncated`.
#[tokio::test]
async fn the_feed_shows_each_reader_what_it_may_read_by_cursor() {
    let server = TestServer::builder()
        .config(config(false, 10))
        .start()
        .await;
    let api = Api::new(&server);
    publish(&api, "acme", "tool", "1.0.0").await;
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/secret/private",
            Some(ADMIN),
            None,
        )
        .await;
    assert!(status.is_success());
    publish(&api, "secret", "plan", "1.0.0").await;
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/review",
            Some(ADMIN),
            None,
        )
        .await;
    assert!(status.is_success());
    publish(&api, "acme", "draft", "1.0.0").await;

    let anonymous = feed(&api, None, "").await;
    assert_eq!(names(&anonymous), ["published acme/tool"]);
    assert_eq!(anonymous["truncated"], false);
    let (_, reader) = api.token(&["secret", "acme"], &["read"]).await;
    let all = feed(&api, Some(&reader), "").await;
    assert_eq!(
        names(&all),
        [
            "published acme/tool",
            "published secret/plan",
            "published acme/draft"
        ]
    );
    assert_eq!(all["events"][2]["pending"], true);
    // The cursor passes what the anonymous reader does not see: nothing old comes back.
    let next = anonymous["next"].as_str().unwrap().to_owned();
    assert_eq!(next, all["next"].as_str().unwrap());
    assert!(names(&feed(&api, None, &format!("?after={next}")).await).is_empty());
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/skills/acme/draft/1.0.0/approve",
            Some(ADMIN),
            None,
        )
        .await;
    assert!(status.is_success());
    let later = feed(&api, None, &format!("?after={next}")).await;
    assert_eq!(names(&later), ["approved acme/draft"]);
    // Pages, filters.
    let first = feed(&api, Some(&reader), "?limit=1").await;
    assert_eq!(names(&first), ["published acme/tool"]);
    let rest = feed(
        &api,
        Some(&reader),
        &format!("?after={}&type=published", first["next"].as_str().unwrap()),
    )
    .await;
    assert_eq!(
        names(&rest),
        ["published secret/plan", "published acme/draft"]
    );
    let (status, body) = api
        .send(Method::GET, "/v1/events?after=x", None, None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "invalid_cursor");

    // Age the first three events past the retention window, and prune.
    server
        .sql(
            "UPDATE events SET at = '2000-01-01T00:00:00.000Z' WHERE kind = 'published'",
            "UPDATE events SET at = '2000-01-01T00:00:00.000Z' WHERE kind = 'published'",
        )
        .await;
    assert_eq!(server.registry.events().prune().await.unwrap(), 3);
    let truncated = feed(&api, None, "?after=1").await;
    assert_eq!(truncated["truncated"], true, "{truncated}");
    assert_eq!(names(&truncated), ["approved acme/draft"]);
    let resumed = feed(&api, None, &format!("?after={next}")).await;
    assert_eq!(resumed["truncated"], false, "{resumed}");
}

/// The Events extension over MCP: declared in the capabilities, `events/list` lists every type
/// with its schemas, `events/poll` starts from now without a cursor and returns what the caller
/// may see after one.
#[tokio::test]
async fn mcp_events_list_and_poll() {
    let server = TestServer::builder()
        .config(config(false, 10))
        .start()
        .await;
    let api = Api::new(&server);
    let modern = Modern::new(&server.url);
    let listed = modern.call("events/list", json!({})).await;
    let types = listed["result"]["events"].as_array().expect("events/list");
    assert_eq!(types.len(), 10, "{listed}");
    assert!(types.iter().any(|t| t["name"] == "published"
        && t["payloadSchema"]["properties"]["payload"]["required"] == json!(["content_digest"])));

    publish(&api, "acme", "early", "1.0.0").await;
    let start = modern
        .call("events/poll", json!({"name": "published"}))
        .await;
    assert_eq!(start["result"]["events"], json!([]), "{start}");
    let cursor = start["result"]["cursor"].as_str().unwrap().to_owned();
    publish_hidden_then_late(&api).await;
    let polled = modern
        .call(
            "events/poll",
            json!({"name": "published", "cursor": cursor}),
        )
        .await;
    let events = polled["result"]["events"].as_array().expect("events/poll");
    assert_eq!(events.len(), 1, "{polled}");
    assert_eq!(events[0]["name"], "published");
    assert_eq!(events[0]["data"]["name"], "late");
    assert_eq!(polled["result"]["truncated"], false);
    assert_eq!(polled["result"]["hasMore"], false);
    let again = modern
        .call(
            "events/poll",
            json!({"name": "published", "cursor": polled["result"]["cursor"]}),
        )
        .await;
    assert_eq!(again["result"]["events"], json!([]), "{again}");
    let unknown = modern.call("events/poll", json!({"name": "nope"})).await;
    assert!(unknown["error"].is_object(), "{unknown}");
}

/// Publish latency with 100 webhooks on the namespace (90 answering at once, 5 refusing
/// connections, 5 accepting and never answering) against none: what BENCHMARKS.md reports.
/// The receivers stand for other machines: they run on a thread of their own at the lowest CPU
/// priority (nice 19), so that what is measured is the registry's own work on this machine.
/// A measurement, not a check: `cargo test --test integration events::publish_latency -- \
/// --ignored --nocapture` prints the medians.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run it by name"]
async fn publish_latency_with_100_webhooks_10_dead() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;
    let received = Arc::new(AtomicU64::new(0));
    let (ports, stop) = receivers_elsewhere(received.clone());
    let (live_port, silent_port, refused_port) = ports;

    // Two servers side by side, one without webhooks and one with 100, published to in turns
    // (the order alternating): the machine's noise falls on both alike.
    const ROUNDS: usize = 100;
    let mut servers = Vec::new();
    for hooks in [0, 100] {
        let server = TestServer::builder()
            .config(config(true, 1000))
            .start()
            .await;
        let api = Api::new(&server);
        for i in 0..hooks {
            let port = match i {
                0..5 => refused_port,
                5..10 => silent_port,
                _ => live_port,
            };
            let (status, body) = add_hook(
                &api,
                ADMIN,
                "acme",
                &format!("http://127.0.0.1:{port}/h{i}"),
                &[],
            )
            .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        servers.push((hooks, server, api, Vec::with_capacity(ROUNDS)));
    }
    for round in 0..ROUNDS {
        if round % 2 == 1 {
            servers.reverse();
        }
        for (_, _, api, times) in &mut servers {
            let md = format!("---\nname: s{round}\ndescription: Timed.\n---\n# s{round}\n");
            let archive = tar_gz(&[("SKILL.md", tar::EntryType::Regular, md.as_bytes())]);
            let started = Instant::now();
            let (status, body) = api
                .publish(Some(ADMIN), "acme", &format!("s{round}"), "1.0.0", archive)
                .await;
            times.push(started.elapsed());
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        if round % 2 == 1 {
            servers.reverse();
        }
    }
    let mut report = Vec::new();
    for (hooks, _server, api, times) in &mut servers {
        times.sort_unstable();
        let (median, p90) = (times[ROUNDS / 2], times[ROUNDS * 9 / 10]);
        // How many hooks the worker reached while the publishes ran.
        let (_, list) = api
            .send(
                Method::GET,
                "/v1/namespaces/acme/webhooks",
                Some(ADMIN),
                None,
            )
            .await;
        let reached = list["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["last_attempt_at"].is_string())
            .count();
        report.push(format!(
            "{hooks:>3} hooks: publish median {:.1} ms, p90 {:.1} ms ({ROUNDS} publishes; {reached} hooks attempted meanwhile)",
            median.as_secs_f64() * 1000.0,
            p90.as_secs_f64() * 1000.0,
        ));
    }
    report.push(format!(
        "deliveries answered by the live receiver meanwhile: {}",
        received.load(Ordering::Relaxed)
    ));
    println!("{}", report.join("\n"));
    drop(stop);
}

/// The receivers of [`publish_latency_with_100_webhooks_10_dead`], on a thread at nice 19 with
/// a runtime of its own: one answering 204 to everything (counting them in `received`), one
/// accepting connections and never answering, and a port nothing listens on. Their ports, and
/// what stops the thread when dropped.
fn receivers_elsewhere(
    received: Arc<std::sync::atomic::AtomicU64>,
) -> ((u16, u16, u16), tokio::sync::oneshot::Sender<()>) {
    let live = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ports = (
        live.local_addr().unwrap().port(),
        silent.local_addr().unwrap().port(),
        refused.local_addr().unwrap().port(),
    );
    drop(refused);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            live.set_nonblocking(true).unwrap();
            silent.set_nonblocking(true).unwrap();
            let live = tokio::net::TcpListener::from_std(live).unwrap();
            let silent = tokio::net::TcpListener::from_std(silent).unwrap();
            let app = axum::Router::new().fallback(move || {
                received.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                async { StatusCode::NO_CONTENT }
            });
            tokio::spawn(async move { axum::serve(live, app).await });
            tokio::spawn(async move {
                let mut held = Vec::new();
                while let Ok((socket, _)) = silent.accept().await {
                    held.push(socket);
                }
            });
            let _ = stopped.await;
        });
    });
    (ports, stop)
}

/// `skillreg webhook add|list|remove` against a running registry: `add` prints the secret once,
/// `list --json` is the REST shape, a refused URL exits non-zero with its code, `remove` removes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_command_adds_lists_and_removes() {
    let server = TestServer::builder().config(config(true, 10)).start().await;
    let base = server.base();
    let env = [
        ("SKILLREG_REGISTRY", base.as_str()),
        ("SKILLREG_TOKEN", ADMIN),
    ];
    let out = run_cli_async(
        &[
            "webhook",
            "add",
            "acme",
            "http://127.0.0.1:9/skillreg",
            "--type",
            "published",
        ],
        &env,
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with("added wh_"), "{out:?}");
    assert!(out.stdout.contains("whsec_"), "{out:?}");
    let out = run_cli_async(&["webhook", "list", "acme", "--json"], &env).await;
    assert_eq!(out.code, 0, "{out:?}");
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    let hook = &listed["webhooks"][0];
    assert_eq!(hook["types"], json!(["published"]), "{listed}");
    assert_eq!(hook["state"], "active");
    assert!(hook.get("secret").is_none(), "{listed}");
    let id = hook["id"].as_str().unwrap().to_owned();
    let out = run_cli_async(&["webhook", "add", "acme", "http://127.0.0.2/x"], &env).await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("webhook_url_refused"), "{out:?}");
    let out = run_cli_async(&["webhook", "remove", "acme", &id], &env).await;
    assert_eq!(out.code, 0, "{out:?}");
    let out = run_cli_async(&["webhook", "list", "acme"], &env).await;
    assert_eq!(out.stdout.trim(), "acme has no webhook", "{out:?}");
}

/// The SSE events of a streaming answer, read as they arrive: each event's id and its JSON.
struct Frames {
    answer: reqwest::Response,
    buffer: String,
}

impl Frames {
    fn new(answer: reqwest::Response) -> Self {
        assert_eq!(
            answer.headers()["content-type"],
            "text/event-stream",
            "events/stream answers with an event stream"
        );
        Self {
            answer,
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> (Option<String>, Value) {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut data) = (None, String::new());
                for line in event.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return (id, serde_json::from_str(&data).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.answer.chunk())
                .await
                .expect("a frame within 30 s")
                .unwrap()
                .expect("the stream goes on");
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

/// The `_meta` of a 2026-07-28 request.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "skillreg-tests", "version": "0"}
    })
}

/// A 2026-07-28 `events/stream` request with id `id`, as sent: its answer.
async fn open_stream(
    server: &TestServer,
    id: u64,
    params: Value,
    accept: &str,
) -> reqwest::Response {
    let mut params = params;
    params["_meta"] = modern_meta();
    reqwest::Client::new()
        .post(&server.url)
        .header("Accept", accept)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "events/stream")
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "events/stream", "params": params}))
        .send()
        .await
        .unwrap()
}

/// `events/stream` on the 2026-07-28 era: the stream starts with `active` and its cursor, then
/// pushes each event the caller may see as it happens (not a private namespace's), each frame
/// naming the request as its subscription; a stream from a cursor replays what followed it;
/// a bad event type is the request's error; past `max_event_streams` a stream is refused.
#[tokio::test]
async fn mcp_events_stream_pushes_what_the_caller_may_see() {
    let server = TestServer::builder()
        .config(Config {
            max_event_streams: 2,
            ..config(false, 10)
        })
        .start()
        .await;
    let api = Api::new(&server);
    let sse = "application/json, text/event-stream";

    let unknown = open_stream(&server, 3, json!({"name": "nope"}), sse).await;
    let unknown: Value = unknown.json().await.unwrap();
    assert_eq!(unknown["id"], 3, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown event type"),
        "{unknown}"
    );
    let no_sse = open_stream(&server, 4, json!({"name": "published"}), "application/json").await;
    let no_sse: Value = no_sse.json().await.unwrap();
    assert_eq!(no_sse["error"]["code"], -32600, "{no_sse}");

    let mut live = Frames::new(open_stream(&server, 7, json!({"name": "published"}), sse).await);
    let (_, active) = live.next().await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    assert_eq!(active["params"]["truncated"], false);
    assert_eq!(
        active["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let start = active["params"]["cursor"].as_str().unwrap().to_owned();

    publish_hidden_then_late(&api).await;
    let (_, event) = live.next().await;
    assert_eq!(event["method"], "notifications/events/event", "{event}");
    assert_eq!(event["params"]["name"], "published");
    assert_eq!(
        event["params"]["data"]["name"], "late",
        "the private skill is not pushed"
    );
    assert_eq!(
        event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let after = event["params"]["cursor"].as_str().unwrap().to_owned();

    // From the first stream's start, for one namespace: what followed is replayed at once.
    let mut replay = Frames::new(
        open_stream(
            &server,
            8,
            json!({"name": "published", "cursor": start, "arguments": {"namespace": "acme"}}),
            sse,
        )
        .await,
    );
    let (_, active) = replay.next().await;
    assert_eq!(active["params"]["cursor"], start.as_str(), "{active}");
    let (_, replayed) = replay.next().await;
    assert_eq!(replayed["params"]["data"]["name"], "late", "{replayed}");
    assert_eq!(replayed["params"]["cursor"], after.as_str());

    // Two streams are open: a third is refused, with its code.
    let third = open_stream(&server, 9, json!({"name": "yanked"}), sse).await;
    let third: Value = third.json().await.unwrap();
    assert_eq!(
        third["error"]["data"]["code"], "too_many_event_streams",
        "{third}"
    );
}

/// `events/stream` in a 2025-era session (its frames numbered as SSE event ids) and over stdio
/// (notifications while the request stays open, other requests answered meanwhile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_events_stream_in_a_session_and_over_stdio() {
    let server = TestServer::builder()
        .config(config(false, 10))
        .start()
        .await;
    let api = Api::new(&server);
    let session = crate::common::Legacy::connect(&server.url).await;
    let mut frames = Frames::new(
        session
            .send("events/stream", json!({"name": "published"}))
            .await,
    );
    let (id, active) = frames.next().await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    assert!(
        id.is_some_and(|id| id.starts_with("0/")),
        "a session's frames have event ids"
    );

    let mut stdio = crate::common::StdioClient::start(&server);
    stdio.write(&json!({"jsonrpc": "2.0", "id": 99, "method": "events/stream", "params": {"name": "published"}}));
    let active = stdio.next_message();
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    assert_eq!(
        active["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        99
    );
    let ping = stdio.call("ping", json!({}));
    assert!(
        ping["result"].is_object(),
        "requests are answered while a stream is open: {ping}"
    );

    publish(&api, "acme", "pushed", "1.0.0").await;
    let (id, event) = frames.next().await;
    assert_eq!(event["params"]["data"]["name"], "pushed", "{event}");
    assert!(id.is_some_and(|id| id.starts_with("1/")));
    let event = tokio::task::spawn_blocking(move || {
        let event = stdio.next_message();
        (stdio, event)
    })
    .await
    .unwrap()
    .1;
    assert_eq!(event["method"], "notifications/events/event", "{event}");
    assert_eq!(event["params"]["data"]["name"], "pushed");
}

/// A stream from a cursor more than a page behind sends every event that followed, in order,
/// a page at a time, then goes on live.
#[tokio::test]
async fn mcp_events_stream_catches_up_page_by_page() {
    let server = TestServer::builder()
        .config(config(false, 10))
        .start()
        .await;
    let api = Api::new(&server);
    let sse = "application/json, text/event-stream";
    let start = Modern::new(&server.url)
        .call("events/poll", json!({"name": "published"}))
        .await;
    let start = start["result"]["cursor"].as_str().unwrap().to_owned();
    for patch in 0..105 {
        publish(&api, "acme", "busy", &format!("1.0.{patch}")).await;
    }
    let mut frames = Frames::new(
        open_stream(
            &server,
            1,
            json!({"name": "published", "cursor": start}),
            sse,
        )
        .await,
    );
    let (_, active) = frames.next().await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    for patch in 0..105 {
        let (_, event) = frames.next().await;
        assert_eq!(
            event["params"]["data"]["version"],
            format!("1.0.{patch}"),
            "{event}"
        );
    }
    publish(&api, "acme", "busy", "2.0.0").await;
    let (_, live) = frames.next().await;
    assert_eq!(live["params"]["data"]["version"], "2.0.0", "{live}");
}

/// Without sessions, an `events/stream` that names a session is refused at once (rmcp, which
/// gets it, has no stream to carry it on) rather than held until the request times out.
#[tokio::test]
async fn mcp_events_stream_naming_a_session_on_a_server_without_sessions_is_refused() {
    let server = TestServer::builder()
        .config(Config {
            mcp_sessions: false,
            ..config(false, 10)
        })
        .start()
        .await;
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        reqwest::Client::new()
            .post(&server.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Session-Id", "no-such-session")
            .json(&json!({"jsonrpc": "2.0", "id": 5, "method": "events/stream", "params": {"name": "published"}}))
            .send(),
    )
    .await
    .expect("answered at once")
    .unwrap();
    let body = crate::common::parse_body(&answer.text().await.unwrap());
    assert_eq!(body["id"], 5, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("events/stream"),
        "{body}"
    );
}
