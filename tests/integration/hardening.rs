//! What an anonymous client can reach is bounded, and reads are scoped: each test reproduces a
//! finding of the security review (sessions, connections, heavy work, scrape cost, rate limits,
//! token scope, private namespaces, cache headers, DNS rebinding, parameter types).

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
        .publish(common::publish_request(
            &Namespace::new(ns).unwrap(),
            skill(name, "Reconcile refunds and invoices."),
            None,
        ))
        .await
        .unwrap();
    server.registry.catch_up_search().await.unwrap();
}

async fn token(server: &TestServer, namespaces: &[&str], actions: Vec<Action>) -> String {
    let (_, secret) = server
        .registry
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
    server.registry.catch_up_search().await.unwrap();
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
