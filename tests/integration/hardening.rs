//! What an anonymous client can reach is bounded, and reads are scoped: each test reproduces a
//! finding of the security review (sessions, connections, heavy work, scrape cost, rate limits,
//! token scope, private namespaces, cache headers, DNS rebinding, parameter types, clients
//! behind a proxy, connections per client, held bodies, headers of stored bytes).

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};
use skillreg::core::{Action, InputFile, Namespace, Principal};
use skillreg::registry::NewTokenRequest;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{self, Legacy, Modern, TestServer};

const ADMIN: &str = "hardening-admin-token-9f8e7d6c5b4a39281706";

fn skill(name: &str, body: &str) -> Vec<InputFile> {
    vec![
        InputFile::regular(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: Handles {name} work.\n---\n{body}\n"),
        ),
        InputFile::regular("docs/notes.md", format!("notes of {name}")),
    ]
}

async fn publish(server: &TestServer, ns: &str, name: &str) {
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new(ns).unwrap(),
            skill(name, "Reconcile refunds and invoices."),
            None,
        ))
        .await
        .unwrap();
    server.registry.index().catch_up_search().await.unwrap();
}

async fn token(server: &TestServer, namespaces: &[&str], actions: Vec<Action>) -> String {
    let (_, secret) = server
        .registry
        .access()
        .create_token(
            &Principal::Admin,
            &NewTokenRequest {
                description: "test".to_owned(),
                namespaces: namespaces.iter().map(|n| (*n).to_owned()).collect(),
                actions,
            },
        )
        .await
        .unwrap();
    secret
}

fn config() -> Config {
    Config {
        admin_token: Some(Secret::new(ADMIN)),
        ..Config::default()
    }
}

/// A raw `initialize` POST; returns the status, the `Retry-After` header and the session id.
async fn initialize(url: &str) -> (StatusCode, Option<String>, Option<String>) {
    let resp = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"flood","version":"0"}}}),
        )
        .send()
        .await
        .unwrap();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (
        resp.status(),
        header("retry-after"),
        header("mcp-session-id"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_sessions_are_capped_and_silent_ones_expire() {
    let server = TestServer::builder()
        .config(Config {
            max_mcp_sessions: 3,
            max_mcp_sessions_per_client: 2,
            mcp_session_first_request_secs: 1,
            ..config()
        })
        .start()
        .await;
    // Two sessions from this address (one that works, one that only said hello): fine.
    // A third: 503 with Retry-After.
    let active = Legacy::connect(&server.url).await;
    let (s1, _, id1) = initialize(&server.url).await;
    assert_eq!(s1, StatusCode::OK);
    let (status, retry, _) = initialize(&server.url).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(retry.as_deref(), Some("30"));
    // A session that sends requests stays; the silent one is closed after 1 s.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list = active.call("skills/list", json!({})).await;
        assert!(list["result"].is_object(), "{list}");
        if initialize(&server.url).await.0 == StatusCode::OK {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "silent sessions were never closed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await; // polling for the sweep
    }
    // The closed session answers 404 (rmcp: unknown session); the active one still works.
    let gone = reqwest::Client::new()
        .post(&server.url)
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", id1.unwrap())
        .json(&json!({"jsonrpc":"2.0","id":5,"method":"skills/list","params":{}}))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let list = active.call("skills/list", json!({})).await;
    assert!(list["result"].is_object(), "{list}");
}

/// A 2025-era session is kept in storage: on SQLite it outlives a restart of the one process
/// (the new process brings it back without a new `initialize`), and a session unused for longer
/// than the idle limit (2 s here, plus the 1 s its use is marked at) answers 404 like an
/// unknown one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_outlives_a_restart_until_it_idles_out() {
    let dir = tempfile::TempDir::new().unwrap();
    let start = || {
        TestServer::builder()
            .data_dir(dir.path())
            .seeded()
            .config(Config {
                mcp_session_idle_secs: 2,
                ..config()
            })
            .start()
    };
    let first = start().await;
    let (kept, stale) = (
        Legacy::connect(&first.url).await,
        Legacy::connect(&first.url).await,
    );
    for session in [&kept, &stale] {
        let list = session.call("skills/list", json!({})).await;
        assert!(list["result"]["skills"][0]["uri"].is_string(), "{list}");
    }
    drop(first);
    let second = start().await;
    let kept = kept.at(&second.url);
    for _ in 0..3 {
        let list = kept.call("skills/list", json!({})).await;
        assert!(list["result"]["skills"][0]["uri"].is_string(), "{list}");
    }
    let uri = kept.call("skills/list", json!({})).await["result"]["skills"][0]["uri"].clone();
    let read = kept.call("resources/read", json!({"uri": uri})).await;
    assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let gone = stale.at(&second.url).send("skills/list", json!({})).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

/// A session that only reads stays open while it reads, though its reads are answered beside
/// rmcp's session worker (`http::direct`, whose event ids are numbered from 2^62: a session
/// this process holds); after the idle limit without a request it is closed here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_only_reads_stays_open_until_it_idles() {
    let server = TestServer::builder()
        .seeded()
        .config(Config {
            mcp_session_idle_secs: 2,
            ..config()
        })
        .start()
        .await;
    let session = Legacy::connect(&server.url).await;
    let uri = session.call("skills/list", json!({})).await["result"]["skills"][0]["uri"].clone();
    let stream = |sse: &str| -> u64 {
        let id = sse
            .lines()
            .find_map(|l| l.strip_prefix("id: "))
            .expect("an event id");
        id.split_once('/').unwrap().1.parse().unwrap()
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(3500) {
        let (_, sse) = session
            .call_raw("resources/read", json!({"uri": uri}))
            .await;
        assert!(
            stream(&sse) >= 1 << 62,
            "{:?} in: not held any more",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    tokio::time::sleep(Duration::from_millis(3500)).await;
    // Closed here: brought back through rmcp while its stored row is fresh enough, else gone.
    let again = session.send("resources/read", json!({"uri": uri})).await;
    if again.status() == StatusCode::OK {
        let sse = again.text().await.unwrap();
        assert!(
            common::parse_body(&sse)["result"]["contents"][0]["text"].is_string(),
            "{sse}"
        );
        assert!(
            stream(&sse) < 1 << 62,
            "still held after the idle limit: {sse}"
        );
    } else {
        assert_eq!(again.status(), StatusCode::NOT_FOUND);
    }
}

/// Bytes read from `stream` until the server closes it or `limit` passes; `None` on timeout.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(buf),
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_idle_connections_are_closed_and_connections_are_capped() {
    let server = TestServer::builder()
        .config(Config {
            header_read_timeout_secs: 1,
            request_timeout_secs: 1,
            max_connections: 4,
            ..config()
        })
        .start()
        .await;
    let addr = server.base().trim_start_matches("http://").to_owned();
    // A half-sent header is dropped after the header-read timeout.
    let mut half = TcpStream::connect(&addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: ")
        .await
        .unwrap();
    assert!(
        read_until_closed(&mut half, Duration::from_secs(5))
            .await
            .is_some(),
        "a half-sent header kept its connection"
    );
    // An idle keep-alive connection is closed too.
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let answered = read_until_closed(&mut idle, Duration::from_secs(5))
        .await
        .expect("an idle keep-alive connection was never closed");
    assert!(String::from_utf8_lossy(&answered).starts_with("HTTP/1.1 200"));
    // A body that never arrives: every route has a deadline, /mcp included.
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{",
    )
    .await
    .unwrap();
    let answer = read_until_closed(&mut slow, Duration::from_secs(5))
        .await
        .expect("a slow body on /mcp was never answered");
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    // At most 4 connections are served: a fifth waits until one closes.
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut c = TcpStream::connect(&addr).await.unwrap();
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut first = [0u8; 12];
        c.read_exact(&mut first).await.unwrap();
        held.push(c);
    }
    let mut fifth = TcpStream::connect(&addr).await.unwrap();
    fifth
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), fifth.read_exact(&mut first))
            .await
            .is_err(),
        "a fifth connection was served while four were open"
    );
    drop(held);
    // The held connections close; the fifth is then served.
    tokio::time::timeout(Duration::from_secs(5), fifth.read_exact(&mut first))
        .await
        .expect("the fifth connection was never served")
        .unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_downloads_and_renders_leave_healthz_fast() {
    let server = TestServer::builder().config(config()).start().await;
    // 16 MiB of incompressible files, and a large SKILL.md to render.
    let mut files = skill("heavy", &"Step: reconcile the ledger.\n".repeat(40_000));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    // Thirteen 1 MB files and one of 2 MB (too large for the blob cache: verified per read).
    for i in 0..14 {
        let size = if i == 13 { 2_000_000 } else { 1_000_000 };
        let bytes: Vec<u8> = (0..size)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        files.push(InputFile::regular(format!("assets/blob-{i}.bin"), bytes));
    }
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            files,
            None,
        ))
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let healthz = format!("{}/healthz", server.base());
    let probe = |client: reqwest::Client, url: String| async move {
        let started = Instant::now();
        assert!(client.get(&url).send().await.unwrap().status().is_success());
        started.elapsed()
    };
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(probe(client.clone(), healthz.clone()).await);
    }
    idle.sort();
    let idle_median = idle[idle.len() / 2];
    // 24 concurrent archive downloads, page renders and large-file reads, while /healthz is
    // probed.
    let mut load = Vec::new();
    for i in 0..24 {
        let (client, base) = (client.clone(), server.base());
        load.push(tokio::spawn(async move {
            let url = match i % 3 {
                0 => format!("{base}/v1/skills/acme/heavy/0.1.0/archive"),
                1 => format!("{base}/skills/acme/heavy"),
                _ => format!("{base}/v1/skills/acme/heavy/0.1.0/files/assets/blob-13.bin"),
            };
            let resp = client.get(url).send().await.unwrap();
            assert!(resp.status().is_success());
            resp.bytes().await.unwrap().len()
        }));
    }
    let mut loaded = Vec::new();
    while load.iter().any(|t| !t.is_finished()) {
        loaded.push(probe(client.clone(), healthz.clone()).await);
    }
    for t in load {
        assert!(t.await.unwrap() > 0);
    }
    loaded.sort();
    let worst = *loaded.last().unwrap_or(&Duration::ZERO);
    // Before, packing, rendering and hashing ran on the async workers: /healthz stalled for seconds
    // (6 s in the review). A ratio against the idle latency, with a floor for a noisy machine.
    let bound = (idle_median * 200).max(Duration::from_millis(500));
    assert!(
        worst < bound,
        "/healthz took {worst:?} under load (idle median {idle_median:?}; bound {bound:?})"
    );
}

#[tokio::test]
async fn a_metrics_scrape_reads_counters_not_the_tables() {
    let server = TestServer::builder().config(config()).start().await;
    publish(&server, "acme", "counted").await;
    let metrics = |server: &TestServer| {
        let url = format!("{}/metrics", server.base());
        async move { reqwest::get(url).await.unwrap().text().await.unwrap() }
    };
    let text = metrics(&server).await;
    assert!(
        text.contains(r#"skillreg_catalog{kind="skills"} 1"#),
        "{text}"
    );
    // The counters are what a scrape reads: set one behind the store's back and the scrape
    // shows it (counting rows would show 1). `verify` reports the drift.
    let update = "UPDATE meta SET value = 12345 WHERE key = 'count_skills'";
    assert_eq!(server.sql(update, update).await, 1);
    let text = metrics(&server).await;
    assert!(
        text.contains(r#"skillreg_catalog{kind="skills"} 12345"#),
        "{text}"
    );
    let report = server.registry.verify(&|_| {}).await.unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains("counters")),
        "{:?}",
        report.problems
    );
}

#[tokio::test]
async fn writes_and_failed_authentication_are_rate_limited() {
    let server = TestServer::builder()
        .rate_limits()
        .config(Config {
            rate_limit_writes_per_minute: 3,
            rate_limit_auth_failures_per_minute: 2,
            ..config()
        })
        .start()
        .await;
    publish(&server, "acme", "limited").await;
    let client = reqwest::Client::new();
    let yank = |token: &str| {
        client
            .post(format!(
                "{}/v1/skills/acme/limited/0.1.0/yank",
                server.base()
            ))
            .bearer_auth(token)
            .json(&json!({"reason": "x"}))
            .send()
    };
    for _ in 0..3 {
        assert_eq!(yank(ADMIN).await.unwrap().status(), StatusCode::OK);
    }
    let limited = yank(ADMIN).await.unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers().contains_key("retry-after"));
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    // Reads are not limited.
    let read = client
        .get(format!("{}/v1/skills/acme/limited", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    // Guessing tokens: after the quota of failures, the address waits, whatever it sends.
    let guess = || {
        client
            .get(format!("{}/v1/skills", server.base()))
            .bearer_auth("skr_guess")
            .send()
    };
    assert_eq!(guess().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    assert_eq!(guess().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        guess().await.unwrap().status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    let after = client
        .get(format!("{}/v1/skills", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_need_read_rights_on_the_namespace_read() {
    let server = TestServer::builder()
        .config(Config {
            require_read_token: true,
            ..config()
        })
        .start()
        .await;
    publish(&server, "alpha", "a1").await;
    publish(&server, "beta", "b1").await;
    let publisher = token(&server, &["beta"], vec![Action::Publish]).await;
    let reader = token(&server, &["alpha"], vec![Action::Read]).await;
    let yanker = token(&server, &["alpha"], vec![Action::Yank]).await;
    let client = reqwest::Client::new();
    let get = |path: String, token: &str| client.get(path).bearer_auth(token).send();
    let base = server.base();
    // REST: each token reads its own namespace only.
    let status = |r: reqwest::Response| r.status();
    assert_eq!(
        status(
            get(format!("{base}/v1/skills/alpha/a1"), &reader)
                .await
                .unwrap()
        ),
        StatusCode::OK
    );
    assert_eq!(
        status(
            get(format!("{base}/v1/skills/beta/b1"), &reader)
                .await
                .unwrap()
        ),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        status(
            get(
                format!("{base}/v1/skills/alpha/a1/0.1.0/archive"),
                &publisher
            )
            .await
            .unwrap()
        ),
        StatusCode::NOT_FOUND,
        "a publish token for beta reads nothing of alpha"
    );
    assert_eq!(
        status(
            get(format!("{base}/v1/skills/alpha/a1"), &yanker)
                .await
                .unwrap()
        ),
        StatusCode::NOT_FOUND,
        "yanking is not reading"
    );
    let listed: Value = get(format!("{base}/v1/skills"), &reader)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a1"]);
    // MCP: the same, with cacheScope private.
    let resp = reqwest::Client::new()
        .post(&server.url)
        .bearer_auth(&publisher)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "skills/list")
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}))
        .send()
        .await
        .unwrap();
    let body = common::parse_body(&resp.text().await.unwrap());
    let uris: Vec<&str> = body["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://beta/b1/SKILL.md"], "{body}");
    assert_eq!(body["result"]["cacheScope"], "private");
    // /metrics and /readyz follow the read-token setting.
    for path in ["/metrics", "/readyz"] {
        let anonymous = client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED, "{path}");
        let with = get(format!("{base}{path}"), &reader).await.unwrap();
        assert_eq!(with.status(), StatusCode::OK, "{path}");
    }
}

/// An MCP request over the 2026-07-28 transport, with an optional token.
async fn mcp(server: &TestServer, token: Option<&str>, method: &str, params: Value) -> Value {
    match token {
        None => Modern::new(&server.url).call(method, params).await,
        Some(token) => {
            let mut params = params;
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":{}});
            let mut req = reqwest::Client::new()
                .post(&server.url)
                .bearer_auth(token)
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", method);
            let target = params.get("uri").or_else(|| params.get("name"));
            if let Some(target) = target.and_then(Value::as_str) {
                req = req.header("Mcp-Name", target);
            }
            let body = json!({"jsonrpc":"2.0","id":1,"method":method,"params":params});
            common::parse_body(&req.json(&body).send().await.unwrap().text().await.unwrap())
        }
    }
}

/// The error of an answer with its URI replaced, so that a hidden skill's and an unknown
/// skill's answers can be compared whole.
fn error_shape(answer: &Value, uri: &str) -> Value {
    let text = answer["error"].to_string().replace(uri, "<uri>");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_namespace_is_hidden_everywhere_from_those_who_may_not_read_it() {
    let server = TestServer::builder().config(config()).start().await;
    publish(&server, "open", "shown").await;
    publish(&server, "secret", "hidden").await;
    let client = reqwest::Client::new();
    let base = server.base();
    let made = client
        .post(format!("{base}/v1/namespaces/secret/private"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), StatusCode::OK);
    let anonymous_try = client
        .post(format!("{base}/v1/namespaces/open/private"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous_try.status(), StatusCode::UNAUTHORIZED);
    server.registry.index().catch_up_search().await.unwrap();
    let reader = token(&server, &["secret"], vec![Action::Read]).await;

    // skills/list and resources/list: anonymous callers see the public skill only.
    let list = mcp(&server, None, "skills/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://open/shown/SKILL.md"]);
    assert_eq!(list["result"]["cacheScope"], "public");
    let listed = mcp(&server, Some(&reader), "skills/list", json!({})).await;
    assert_eq!(listed["result"]["skills"].as_array().unwrap().len(), 2);
    assert_eq!(listed["result"]["cacheScope"], "private");
    let resources = mcp(&server, None, "resources/list", json!({})).await;
    assert!(!resources.to_string().contains("secret"), "{resources}");

    // Direct reads of a hidden skill answer exactly as for an unknown one.
    for (method, hidden, unknown) in [
        (
            "skills/get",
            "skill://secret/hidden/SKILL.md",
            "skill://secret/nothing/SKILL.md",
        ),
        (
            "resources/read",
            "skill://secret/hidden/docs/notes.md",
            "skill://secret/nothing/docs/notes.md",
        ),
        (
            "resources/read",
            "skill://secret/hidden/_manifest",
            "skill://secret/nothing/_manifest",
        ),
        (
            "resources/directory/read",
            "skill://secret/hidden",
            "skill://secret/nothing",
        ),
    ] {
        let a = mcp(&server, None, method, json!({"uri": hidden})).await;
        let b = mcp(&server, None, method, json!({"uri": unknown})).await;
        assert!(a["error"].is_object(), "{method} {a}");
        assert_eq!(
            error_shape(&a, hidden),
            error_shape(&b, unknown),
            "{method}: no existence oracle"
        );
        let allowed = mcp(&server, Some(&reader), method, json!({"uri": hidden})).await;
        assert!(allowed["result"].is_object(), "{method} {allowed}");
    }
    // Search, completion and the legacy index.
    let hits = mcp(
        &server,
        None,
        "tools/call",
        json!({"name": "search_skills", "arguments": {"query": "reconcile refunds"}}),
    )
    .await;
    let text = hits["result"]["structuredContent"].to_string();
    assert!(text.contains("shown") && !text.contains("hidden"), "{text}");
    let hits = mcp(
        &server,
        Some(&reader),
        "tools/call",
        json!({"name": "search_skills", "arguments": {"query": "reconcile refunds"}}),
    )
    .await;
    assert!(
        hits["result"]["structuredContent"]
            .to_string()
            .contains("hidden")
    );
    let complete = |token: Option<String>, argument: &'static str, context: Value| {
        let server = &server;
        async move {
            mcp(
                server,
                token.as_deref(),
                "completion/complete",
                json!({
                "ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
                "argument": {"name": argument, "value": ""},
                "context": {"arguments": context}}),
            )
            .await["result"]["completion"]["values"]
                .clone()
        }
    };
    assert_eq!(
        complete(None, "namespace", json!({})).await,
        json!(["open"])
    );
    assert_eq!(
        complete(None, "name", json!({"namespace": "secret"})).await,
        json!([])
    );
    assert_eq!(complete(None, "name", json!({})).await, json!(["shown"]));
    assert_eq!(
        complete(Some(reader.clone()), "name", json!({"namespace": "secret"})).await,
        json!(["hidden"])
    );
    let index = mcp(
        &server,
        None,
        "resources/read",
        json!({"uri": "skill://index.json"}),
    )
    .await;
    assert!(!index.to_string().contains("secret"), "{index}");

    // REST, the archive and the web page: 404 for anonymous callers, served to the reader.
    for path in [
        "/v1/skills/secret/hidden",
        "/v1/skills/secret/hidden/0.1.0",
        "/v1/skills/secret/hidden/0.1.0/files/SKILL.md",
        "/v1/skills/secret/hidden/0.1.0/archive",
        "/skills/secret/hidden",
    ] {
        let hidden = client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(hidden.status(), StatusCode::NOT_FOUND, "{path}");
        let shown = client
            .get(format!("{base}{path}"))
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap();
        assert_eq!(shown.status(), StatusCode::OK, "{path}");
    }
    let catalog = client
        .get(format!("{base}/v1/skills"))
        .send()
        .await
        .unwrap();
    assert!(!catalog.text().await.unwrap().contains("secret"));
    let page = client
        .get(format!("{base}/?q=reconcile"))
        .send()
        .await
        .unwrap();
    assert!(!page.text().await.unwrap().contains("hidden"));
    let search = client
        .get(format!("{base}/v1/search?q=reconcile+refunds"))
        .send()
        .await
        .unwrap();
    assert!(!search.text().await.unwrap().contains("hidden"));

    // Cache headers: public for what anyone may fetch, private when the caller mattered.
    let public = client
        .get(format!("{base}/v1/skills/open/shown/0.1.0/files/SKILL.md"))
        .send()
        .await
        .unwrap();
    assert!(
        public.headers()["cache-control"]
            .to_str()
            .unwrap()
            .starts_with("public")
    );
    let private = client
        .get(format!(
            "{base}/v1/skills/secret/hidden/0.1.0/files/SKILL.md"
        ))
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap();
    assert!(
        private.headers()["cache-control"]
            .to_str()
            .unwrap()
            .starts_with("private")
    );

    // Made public again: anonymous callers see it; both changes are audited.
    let undone = client
        .delete(format!("{base}/v1/namespaces/secret/private"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(undone.status(), StatusCode::OK);
    let shown = client
        .get(format!("{base}/v1/skills/secret/hidden"))
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), StatusCode::OK);
    let audit: Value = client
        .get(format!("{base}/v1/audit"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(
        actions.ends_with(&["namespace_private", "token_create", "namespace_public"]),
        "{actions:?}"
    );
}

#[tokio::test]
async fn every_route_refuses_foreign_hosts_and_origins() {
    let server = TestServer::builder()
        .config(Config {
            allowed_hosts: vec!["skills.example.com".to_owned()],
            ..config()
        })
        .start()
        .await;
    publish(&server, "acme", "guarded").await;
    let client = reqwest::Client::new();
    let base = server.base();
    for path in [
        "/v1/skills",
        "/v1/skills/acme/guarded/0.1.0/files/SKILL.md",
        "/v1/skills/acme/guarded/0.1.0/archive",
        "/",
        "/metrics",
        "/readyz",
    ] {
        let rebinding = client
            .get(format!("{base}{path}"))
            .header("Host", "evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(rebinding.status(), StatusCode::FORBIDDEN, "{path}");
        // The refusal says how the operator serves that name.
        let body: serde_json::Value = rebinding.json().await.unwrap();
        assert_eq!(body["error"]["code"], "forbidden", "{path}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`--allowed-host evil.example`"),
            "{path}: {body}"
        );
        let named = client
            .get(format!("{base}{path}"))
            .header("Host", "skills.example.com:8080")
            .send()
            .await
            .unwrap();
        assert_eq!(named.status(), StatusCode::OK, "{path}");
        let foreign = client
            .get(format!("{base}{path}"))
            .header("Origin", "https://evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN, "{path}");
        let body: serde_json::Value = foreign.json().await.unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`--allowed-origin <origin>`"),
            "{path}: {body}"
        );
    }
    // A 401 says what was expected and where tokens come from.
    for (authorization, says) in [
        (None, "a bearer token is required"),
        (Some("Basic dXNlcjpwYXNz"), "must be `Bearer <token>`"),
        (Some("Bearer skr_unknown"), "not one this registry accepts"),
    ] {
        let mut request = client
            .put(format!("{base}/v1/skills/acme/guarded/0.2.0"))
            .header("Content-Type", "application/gzip")
            .body(vec![0u8; 16]);
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        let refused = request.send().await.unwrap();
        assert_eq!(
            refused.status(),
            StatusCode::UNAUTHORIZED,
            "{authorization:?}"
        );
        let body: serde_json::Value = refused.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{authorization:?}: {body}");
        assert!(
            authorization.is_some_and(|a| a.starts_with("Basic"))
                || message.contains("skillreg token create"),
            "{authorization:?}: {body}"
        );
    }
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1:8080",
        "https://skills.example.com",
    ] {
        let own = client
            .get(format!("{base}/v1/skills"))
            .header("Origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(own.status(), StatusCode::OK, "{origin}");
    }
}

#[tokio::test]
async fn mcp_parameters_of_the_wrong_type_are_invalid_params() {
    let server = TestServer::builder().seeded().start().await;
    let modern = Modern::new(&server.url);
    for (method, params) in [
        ("skills/list", json!({"cursor": 5})),
        ("skills/get", json!({"uri": 5})),
        (
            "resources/read",
            json!({"uri": ["skill://skillreg/x/SKILL.md"]}),
        ),
        (
            "resources/directory/read",
            json!({"uri": "skill://skillreg/x", "cursor": 1}),
        ),
        (
            "tools/call",
            json!({"name": "search_skills", "arguments": "pdf"}),
        ),
    ] {
        let answer = modern.call(method, params.clone()).await;
        assert_eq!(
            answer["error"]["code"], -32602,
            "{method} {params}: {answer}"
        );
    }
    // Over a 2025-era session too.
    let legacy = Legacy::connect(&server.url).await;
    let answer = legacy.call("skills/list", json!({"cursor": 5})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

// ---- clients behind a proxy, connections per client, held bodies, stored bytes -------------

/// A client on loopback that connects from `source` (any 127.0.0.0/8 address is this host).
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// A raw connection from `source` to `addr`.
async fn connect_from(source: &str, addr: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(addr.parse().unwrap()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_limits() {
    let server = TestServer::builder()
        .rate_limits()
        .config(Config {
            rate_limit_auth_failures_per_minute: 2,
            trusted_proxies: vec!["127.0.0.1".to_owned()],
            ..config()
        })
        .start()
        .await;
    // This test is the proxy (127.0.0.1): it appends the address it heard from.
    let proxy = client_from("127.0.0.1");
    let get = async |path: &str, forwarded: &str, token: Option<&str>| {
        let mut request = proxy
            .get(format!("{}{path}", server.base()))
            .header("X-Forwarded-For", forwarded);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap().status()
    };
    // The attacker writes the victim's address itself; the proxy appends the attacker's.
    let attacker = "203.0.113.2, 203.0.113.1";
    assert_eq!(get("/v1/skills", attacker, Some("skr_guess")).await, 401);
    assert_eq!(get("/v1/skills", attacker, Some("skr_guess")).await, 401);
    assert_eq!(get("/v1/skills", attacker, Some("skr_guess")).await, 429);
    assert_eq!(get("/v1/skills", attacker, None).await, 429);
    // The victim, and the proxy's own health checks, are served.
    assert_eq!(get("/v1/skills", "203.0.113.2", None).await, 200);
    for path in ["/healthz", "/readyz"] {
        assert_eq!(get(path, attacker, None).await, 200, "{path}");
        let check = proxy.get(format!("{}{path}", server.base())).send().await;
        assert_eq!(check.unwrap().status(), 200, "{path} from the proxy");
    }
    // IPv6 clients are one client per /64.
    for _ in 0..2 {
        assert_eq!(get("/v1/skills", "2001:db8:1:2::1", Some("x")).await, 401);
    }
    assert_eq!(
        get("/v1/skills", "2001:db8:1:2::ffff", Some("x")).await,
        429
    );
    assert_eq!(get("/v1/skills", "2001:db8:1:2::2", None).await, 429);
    assert_eq!(get("/v1/skills", "[2001:db8:1:3::1]:4711", None).await, 200);
    // A peer that is not a trusted proxy names no one but itself.
    let direct = client_from("127.0.0.2");
    for i in 0..3 {
        let status = direct
            .get(format!("{}/v1/skills", server.base()))
            .header("X-Forwarded-For", format!("198.51.100.{i}"))
            .bearer_auth("skr_guess")
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, if i < 2 { 401 } else { 429 }, "attempt {i}");
    }
    // X-Forwarded-Proto is believed from the proxy only.
    let api_base = async |client: &reqwest::Client| {
        let doc: Value = client
            .get(format!("{}/.well-known/clawhub.json", server.base()))
            .header("X-Forwarded-Proto", "https")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        doc["apiBase"].as_str().unwrap().to_owned()
    };
    assert!(api_base(&proxy).await.starts_with("https://"));
    assert!(
        api_base(&client_from("127.0.0.3"))
            .await
            .starts_with("http://")
    );
}

#[tokio::test]
async fn healthz_and_readyz_are_never_rate_limited() {
    let server = TestServer::builder()
        .rate_limits()
        .config(Config {
            rate_limit_auth_failures_per_minute: 1,
            ..config()
        })
        .start()
        .await;
    let client = reqwest::Client::new();
    let status = async |path: &str, token: Option<&str>| {
        let mut request = client.get(format!("{}{path}", server.base()));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap().status()
    };
    assert_eq!(status("/v1/skills", Some("skr_guess")).await, 401);
    assert_eq!(status("/v1/skills", Some("skr_guess")).await, 429);
    assert_eq!(status("/v1/skills", None).await, 429, "blocked");
    assert_eq!(status("/healthz", None).await, 200);
    assert_eq!(status("/readyz", None).await, 200);
    // A health check that presents a credential is a request like any other.
    assert_eq!(status("/readyz", Some("skr_guess")).await, 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_hold_every_connection() {
    let server = TestServer::builder()
        .config(Config {
            max_connections: 8,
            max_connections_per_client: 3,
            ..config()
        })
        .start()
        .await;
    let addr = server.base().trim_start_matches("http://").to_owned();
    let healthz = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    // Served, then kept open (keep-alive): each holds a slot.
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut c = connect_from("127.0.0.1", &addr).await;
        c.write_all(healthz).await.unwrap();
        let mut first = [0u8; 12];
        c.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        held.push(c);
    }
    // A fourth from the same address is closed unanswered, at once.
    let mut fourth = connect_from("127.0.0.1", &addr).await;
    let _ = fourth.write_all(healthz).await;
    let answer = read_until_closed(&mut fourth, Duration::from_secs(2))
        .await
        .expect("a fourth connection from one address was kept open");
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    // Another address is served meanwhile.
    let mut other = connect_from("127.0.0.2", &addr).await;
    other.write_all(healthz).await.unwrap();
    let mut first = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(2), other.read_exact(&mut first))
        .await
        .expect("another client waited")
        .unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    // A connection that closes gives its slot back.
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut again = connect_from("127.0.0.1", &addr).await;
        let _ = again.write_all(healthz).await;
        let mut first = [0u8; 12];
        if let Ok(Ok(_)) =
            tokio::time::timeout(Duration::from_secs(1), again.read_exact(&mut first)).await
        {
            assert_eq!(&first, b"HTTP/1.1 200");
            break;
        }
        assert!(Instant::now() < deadline, "the slot never came back");
        tokio::time::sleep(Duration::from_millis(100)).await; // the server sees the close
    }
}

/// An `initialize` body padded with JSON whitespace to `len` bytes.
fn padded_initialize(len: usize) -> Vec<u8> {
    let mut body = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"padded","version":"0"}}})
    .to_string()
    .into_bytes();
    body.resize(len, b' ');
    body
}

/// The headers of a `POST /mcp` declaring `len` bytes of body.
fn mcp_post_head(len: usize, token: Option<&str>) -> Vec<u8> {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {len}\r\n\r\n"
    )
    .into_bytes()
}

/// The status line and body of the answer on `stream` (read until it closes, or 5 s).
async fn answer_of(stream: &mut TcpStream) -> String {
    let bytes = read_until_closed(stream, Duration::from_secs(5)).await;
    String::from_utf8_lossy(&bytes.expect("no answer")).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_bodies_are_bounded_in_size_time_and_total() {
    let server = TestServer::builder()
        .config(Config {
            max_body_bytes_in_flight: 512 * 1024,
            body_read_timeout_secs: 2,
            ..config()
        })
        .start()
        .await;
    let addr = server.base().trim_start_matches("http://").to_owned();
    // Anonymous: 256 KiB at most, refused before a byte of the body is read.
    let mut big = TcpStream::connect(&addr).await.unwrap();
    big.write_all(&mcp_post_head(300_000, None)).await.unwrap();
    let answer = answer_of(&mut big).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("body_too_large"), "{answer}");
    // Authenticated callers keep the 4 MiB cap.
    let mut body = mcp_post_head(300_000, Some(ADMIN));
    body.extend(padded_initialize(300_000));
    let mut authenticated = TcpStream::connect(&addr).await.unwrap();
    authenticated.write_all(&body).await.unwrap();
    let mut first = [0u8; 12];
    authenticated.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    drop(authenticated);

    // Two bodies of 200 kB held (sent in part) fill the 512 KiB budget: a third is refused
    // before it sends anything, while requests without a body are served. Each held one waits
    // to be admitted (`Expect: 100-continue`: the server asks for the body once it reserved
    // its bytes) before it sends its part.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut c = TcpStream::connect(&addr).await.unwrap();
        let mut head = mcp_post_head(200_000, None);
        head.truncate(head.len() - 2);
        head.extend(b"Expect: 100-continue\r\n\r\n");
        c.write_all(&head).await.unwrap();
        let mut admitted = [0u8; 25];
        c.read_exact(&mut admitted).await.unwrap();
        assert_eq!(&admitted, b"HTTP/1.1 100 Continue\r\n\r\n");
        c.write_all(&padded_initialize(200_000)[..1000])
            .await
            .unwrap();
        held.push(c);
    }
    let mut third = TcpStream::connect(&addr).await.unwrap();
    third
        .write_all(&mcp_post_head(200_000, None))
        .await
        .unwrap();
    let answer = answer_of(&mut third).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    assert!(answer.contains("server_busy"), "{answer}");
    let health = reqwest::get(format!("{}/healthz", server.base())).await;
    assert_eq!(health.unwrap().status(), 200);
    // The held bodies do not come in time: 408, and their bytes go back to the budget.
    for c in &mut held {
        let answer = answer_of(c).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("body_read_timeout"), "{answer}");
    }
    let mut again = TcpStream::connect(&addr).await.unwrap();
    let mut whole = mcp_post_head(200_000, None);
    whole.extend(padded_initialize(200_000));
    again.write_all(&whole).await.unwrap();
    let mut first = [0u8; 12];
    again.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    // The deadline holds on every route: an upload too.
    let mut upload = TcpStream::connect(&addr).await.unwrap();
    upload
        .write_all(
            format!(
                "PUT /v1/skills/acme/slow/1.0.0 HTTP/1.1\r\nHost: localhost\r\n\
                 Authorization: Bearer {ADMIN}\r\nContent-Type: application/gzip\r\n\
                 Content-Length: 5000\r\n\r\npartial"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let started = Instant::now();
    let answer = answer_of(&mut upload).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_read_timeout"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn the_clawhub_file_route_serves_active_files_like_rest() {
    let server = TestServer::builder().config(config()).start().await;
    let mut files = skill("web", "Pages.");
    let files_active = [
        (
            "evil.html",
            "<html><script>alert(document.domain)</script></html>",
        ),
        (
            "evil.svg",
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
        ),
        ("evil.js", "alert(document.domain)"),
    ];
    for (path, body) in files_active {
        files.push(InputFile::regular(path, body));
    }
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("alpha").unwrap(),
            files,
            None,
        ))
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let base = server.base();
    for (path, body) in files_active {
        for url in [
            format!("{base}/api/v1/skills/web/file?ownerHandle=alpha&path={path}"),
            format!("{base}/api/v1/skills/web/file?path={path}"),
            format!("{base}/v1/skills/alpha/web/0.1.0/files/{path}"),
        ] {
            let resp = client.get(&url).send().await.unwrap();
            assert_eq!(resp.status(), 200, "{url}");
            let h = resp.headers().clone();
            assert_eq!(
                h["content-disposition"],
                format!("attachment; filename=\"{path}\"").as_str(),
                "{url}"
            );
            assert_eq!(
                h["content-security-policy"], "sandbox; default-src 'none'",
                "{url}"
            );
            assert_eq!(h["x-content-type-options"], "nosniff", "{url}");
            assert_eq!(
                resp.bytes().await.unwrap(),
                body.as_bytes(),
                "{url}: the exact bytes"
            );
        }
    }
    // Plain text stays inline (no download), still sandboxed.
    let notes = client
        .get(format!("{base}/api/v1/skills/web/file?path=docs/notes.md"))
        .send()
        .await
        .unwrap();
    assert!(!notes.headers().contains_key("content-disposition"));
    assert_eq!(notes.headers()["x-content-type-options"], "nosniff");
    // Archives too.
    let zip = client
        .get(format!("{base}/api/v1/download?slug=web&ownerHandle=alpha"))
        .send()
        .await
        .unwrap();
    assert_eq!(zip.status(), 200);
    assert_eq!(
        zip.headers()["content-disposition"],
        "attachment; filename=\"web-0.1.0.zip\""
    );
    assert_eq!(zip.headers()["x-content-type-options"], "nosniff");
}
