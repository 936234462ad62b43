//! Resource subscriptions: the official TypeScript client on both eras (`resources/subscribe` on
//! a 2025-11-25 session, `subscriptions/listen` on 2026-07-28) receives `updated` for exactly
//! the skill it follows, once per change, and nothing about a skill it cannot see; the
//! 2025-era rules (what can be subscribed to, the bound, unsubscribing, a yank) over raw HTTP.
//! Across replicas: `postgres.rs`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::common::{ADMIN, Legacy, TestServer, admin_server, tools};
use crate::rest::{Api, skill_archive};

/// How long a notification may take to arrive.
const WITHIN: Duration = Duration::from_secs(10);

/// `tests/clients/ts_subscriptions.mjs`, running: its JSON lines, and its stdin (closing it
/// ends the client).
pub(crate) struct TsClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl TsClient {
    /// Connect on `era` (`legacy` or `modern`), subscribe to `subscribe`, try `refused`; the
    /// client and its `ready` line.
    pub(crate) async fn start(
        era: &str,
        url: &str,
        subscribe: &[&str],
        refused: &[&str],
    ) -> (Self, Value) {
        let t = tools();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_subscriptions.mjs");
        let mut cmd = Command::new(&t.node22);
        cmd.env("SKILLREG_TOOLS", &t.dir)
            .arg(script)
            .args(["--era", era, "--url", url]);
        for uri in subscribe {
            cmd.args(["--subscribe", uri]);
        }
        for uri in refused {
            cmd.args(["--refused", uri]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut client = Self {
            child,
            stdin,
            lines,
        };
        // Notifications of changes made before it subscribed may come first (on PostgreSQL
        // the change feed announces the catalog's setup a little later).
        loop {
            let line = client.next().await.expect("the client got ready");
            if line["ready"] == true {
                return (client, line);
            }
            assert_eq!(
                line["notification"], "notifications/resources/list_changed",
                "{era}: before it is ready, only list_changed: {line}"
            );
        }
    }

    /// The next line within [`WITHIN`]; `None` when none came.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WITHIN, self.lines.next_line())
            .await
            .ok()?
            .expect("stdout reads")?;
        Some(serde_json::from_str(&line).unwrap_or_else(|_| panic!("a JSON line: {line}")))
    }

    /// Lines until one has `updated` for `uri`; every line read.
    pub(crate) async fn until_updated(&mut self, uri: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .next()
                .await
                .unwrap_or_else(|| panic!("updated for {uri} within {WITHIN:?}; saw {seen:?}"));
            let done = is_updated(&line, uri);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Close the client: every line it printed until it ended.
    pub(crate) async fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut seen = Vec::new();
        while let Some(line) = self.next().await {
            let done = line["done"] == true;
            seen.push(line);
            if done {
                break;
            }
        }
        let status = tokio::time::timeout(WITHIN, self.child.wait())
            .await
            .expect("the client ends")
            .unwrap();
        assert!(status.success(), "the client failed: {seen:?}");
        seen
    }
}

fn is_updated(line: &Value, uri: &str) -> bool {
    line["notification"] == "notifications/resources/updated" && line["uri"] == uri
}

/// The URIs of the `updated` notifications among `lines`, in order.
pub(crate) fn updated(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["notification"] == "notifications/resources/updated")
        .map(|l| l["uri"].as_str().unwrap().to_owned())
        .collect()
}

const A_MD: &str = "skill://acme/alpha/SKILL.md";
const A_ROOT: &str = "skill://acme/alpha";
const B_MD: &str = "skill://acme/beta/SKILL.md";
const HIDDEN_MD: &str = "skill://secret/hidden/SKILL.md";

async fn publish(api: &Api, ns: &str, name: &str, version: &str) {
    let description = format!("{name} {version}");
    let (status, body) = api
        .publish(
            Some(ADMIN),
            ns,
            name,
            version,
            skill_archive(name, &description),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// A catalog of `acme/alpha`, `acme/beta` and `secret/hidden` (a private namespace).
async fn catalog(server: &TestServer) -> Api {
    let api = Api::new(server);
    publish(&api, "acme", "alpha", "1.0.0").await;
    publish(&api, "acme", "beta", "1.0.0").await;
    publish(&api, "secret", "hidden", "1.0.0").await;
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/namespaces/secret/private",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    api
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_clients_are_told_of_what_they_follow_on_both_eras() {
    let server = admin_server().await;
    let api = catalog(&server).await;
    // 2025-11-25: subscribed to alpha's SKILL.md and root; the hidden skill is refused as a
    // read of it is.
    let (mut legacy, ready) =
        TsClient::start("legacy", &server.url, &[A_MD, A_ROOT], &[HIDDEN_MD]).await;
    let refused = &ready["refused"][0];
    assert_eq!(refused["uri"], HIDDEN_MD, "{ready}");
    assert_eq!(
        refused["subscribe"]["message"],
        format!("No resource at {HIDDEN_MD}"),
        "{ready}"
    );
    assert_eq!(refused["subscribe"], refused["read"], "answered as a read");
    // 2026-07-28: one listen for alpha and the hidden skill, acknowledged without looking
    // either up.
    let (mut modern, ready) = TsClient::start("modern", &server.url, &[A_MD, HIDDEN_MD], &[]).await;
    assert_eq!(
        ready["honored"],
        json!({"resourcesListChanged": true, "resourceSubscriptions": [A_MD, HIDDEN_MD]}),
        "{ready}"
    );

    // Beta and the hidden skill move first, then alpha: once alpha's update is in, the others'
    // changes have been looked at.
    publish(&api, "acme", "beta", "1.0.1").await;
    publish(&api, "secret", "hidden", "1.0.1").await;
    publish(&api, "acme", "alpha", "1.0.1").await;
    let mut legacy_seen = legacy.until_updated(A_MD).await;
    let mut modern_seen = modern.until_updated(A_MD).await;
    // Anything late would come now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    legacy_seen.extend(legacy.finish().await);
    modern_seen.extend(modern.finish().await);

    let mut legacy_updated = updated(&legacy_seen);
    legacy_updated.sort();
    assert_eq!(
        legacy_updated,
        [A_ROOT, A_MD],
        "2025-11-25: once each, nothing else: {legacy_seen:?}"
    );
    assert_eq!(
        updated(&modern_seen),
        [A_MD],
        "2026-07-28: once, nothing of the hidden skill: {modern_seen:?}"
    );
    assert!(
        modern_seen
            .iter()
            .any(|l| l["notification"] == "notifications/resources/list_changed"),
        "2026-07-28: list_changed was asked for: {modern_seen:?}"
    );
    assert!(
        legacy_seen
            .iter()
            .chain(&modern_seen)
            .all(|l| { !l.to_string().contains("secret") && !l.to_string().contains("beta") }),
        "nothing names beta or the hidden skill"
    );
}

/// The SSE events of `stream` read until one is an `updated` for `uri`, within [`WITHIN`].
pub(crate) async fn wait_for_updated(stream: &mut reqwest::Response, uri: &str) -> String {
    let needle =
        format!(r#""method":"notifications/resources/updated","params":{{"uri":"{uri}"}}"#);
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + WITHIN;
    while !seen.contains(&needle) {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .unwrap_or_else(|_| panic!("updated for {uri} within {WITHIN:?}; saw {seen}"));
        seen.push_str(&String::from_utf8_lossy(
            &chunk.unwrap().expect("stream open"),
        ));
    }
    seen
}

/// Over raw HTTP on a 2025-11-25 session: which URIs can be subscribed to, the bound, a yank
/// of the current version, and unsubscribing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_subscriptions_follow_their_rules() {
    let server = TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            max_subscriptions_per_session: 3,
            ..Config::default()
        })
        .start()
        .await;
    let api = catalog(&server).await;
    let session = Legacy::connect(&server.url).await;
    let mut stream = session.stream().await;
    assert_eq!(stream.status(), 200);
    let subscribe = async |uri: &str| {
        session
            .call("resources/subscribe", json!({"uri": uri}))
            .await
    };

    for uri in [A_MD, A_ROOT, "skill://acme/alpha/refs", A_MD] {
        let answer = subscribe(uri).await;
        assert_eq!(answer["result"], json!({}), "{uri}: {answer}");
    }
    // Past the bound (the same URI again did not count).
    let full = subscribe(B_MD).await;
    assert_eq!(full["error"]["data"]["code"], "invalid_request", "{full}");
    // Whole-catalog resources are announced by list_changed.
    let index = subscribe("skill://index.json").await;
    assert_eq!(index["error"]["data"]["code"], "invalid_request", "{index}");
    // A file that does not exist, and a hidden skill: as a read answers.
    for uri in ["skill://acme/alpha/nope.md", HIDDEN_MD] {
        let refused = subscribe(uri).await;
        let read = session.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(refused["error"]["code"], -32002, "{refused}");
        assert_eq!(refused["error"], read["error"], "{uri}");
    }

    // Yanking alpha's only version changes what its URIs serve.
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/skills/acme/alpha/1.0.0/yank",
            Some(ADMIN),
            Some(json!({"reason": "bad"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for_updated(&mut stream, A_MD).await;

    // Unsubscribed from SKILL.md: a publish tells the root only.
    let answer = session
        .call("resources/unsubscribe", json!({"uri": A_MD}))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    publish(&api, "acme", "alpha", "2.0.0").await;
    let seen = wait_for_updated(&mut stream, A_ROOT).await;
    let all = seen + &half_a_second_of(&mut stream).await;
    assert!(
        !all.contains(&format!(r#""uri":"{A_MD}""#)),
        "no update for an unsubscribed URI: {all}"
    );
}

/// What idle subscriptions cost a publish (a measurement, run by hand: `cargo test --test
/// integration subscriptions::publish_time -- --ignored --nocapture`): the median time of
/// publishes with no subscriber, then with `SESSIONS` 2025-era sessions following
/// `PER_SESSION` URIs each of skills that do not change (each change makes every session
/// resolve its URIs again). Asserts only that every publish succeeded and that the medians are
/// printed; BENCHMARKS.md records the figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn publish_time_with_idle_subscriptions() {
    const SESSIONS: usize = 200;
    const PER_SESSION: usize = 5;
    const PUBLISHES: usize = 40;
    let server = TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            max_mcp_sessions_per_client: SESSIONS + 10,
            max_connections_per_client: 4 * SESSIONS,
            ..Config::default()
        })
        .start()
        .await;
    let api = Api::new(&server);
    for i in 0..PER_SESSION {
        publish(&api, "idle", &format!("followed{i}"), "1.0.0").await;
    }
    let median = async |round: &str| {
        let mut times = Vec::new();
        for i in 0..PUBLISHES {
            let started = std::time::Instant::now();
            publish(&api, "busy", &format!("{round}{i}"), "1.0.0").await;
            times.push(started.elapsed());
            // Let the watchers do their work between publishes, as on a real server.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        times.sort();
        times[PUBLISHES / 2]
    };
    let alone = median("alone").await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        let session = Legacy::connect(&server.url).await;
        for i in 0..PER_SESSION {
            let uri = format!("skill://idle/followed{i}/SKILL.md");
            let answer = session
                .call("resources/subscribe", json!({"uri": uri}))
                .await;
            assert_eq!(answer["result"], json!({}), "{answer}");
        }
        sessions.push(session);
    }
    let followed = median("followed").await;
    let alone_again = median("again").await;
    println!(
        "publish median: {alone:?} alone, {followed:?} with {SESSIONS} sessions × {PER_SESSION} \
         idle subscriptions, {alone_again:?} alone again (the catalog grew by then)"
    );
    drop(sessions);
}

/// What arrives on `stream` within half a second.
async fn half_a_second_of(stream: &mut reqwest::Response) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
    let mut seen = String::new();
    while let Ok(chunk) = tokio::time::timeout_at(deadline, stream.chunk()).await {
        match chunk.unwrap() {
            Some(chunk) => seen.push_str(&String::from_utf8_lossy(&chunk)),
            None => break,
        }
    }
    seen
}

/// No `updated` arrives on `stream` within half a second.
async fn nothing_more(stream: &mut reqwest::Response, what: &str) {
    let seen = half_a_second_of(stream).await;
    assert!(
        !seen.contains("notifications/resources/updated"),
        "{what}: {seen}"
    );
}

/// A version pending review changes nothing a subscriber is served, so it is told nothing;
/// the approval makes it current and is told, and so is a deprecation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_and_deprecations_are_told_and_pending_versions_are_not() {
    let server = admin_server().await;
    let api = Api::new(&server);
    publish(&api, "acme", "alpha", "1.0.0").await;
    let acme = skillreg::core::Namespace::new("acme").unwrap();
    let admin = skillreg::core::Principal::Admin;
    let trust = server.registry.trust();
    trust
        .set_review_required(&admin, &acme, true)
        .await
        .unwrap();
    let (_, ci) = api.token(&["acme"], &["publish"]).await;
    let session = Legacy::connect(&server.url).await;
    let mut stream = session.stream().await;
    let answer = session
        .call("resources/subscribe", json!({"uri": A_MD}))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");

    let (status, body) = api
        .publish(
            Some(&ci),
            "acme",
            "alpha",
            "1.1.0",
            skill_archive("alpha", "Pending."),
        )
        .await;
    assert_eq!(
        (status, &body["pending"]),
        (StatusCode::CREATED, &json!(true))
    );
    nothing_more(&mut stream, "a pending version").await;

    let pending = skillreg::core::VersionRef::parse("acme", "alpha", "1.1.0").unwrap();
    trust.approve(&admin, &pending).await.unwrap();
    wait_for_updated(&mut stream, A_MD).await;
    nothing_more(&mut stream, "once").await;

    let alpha = skillreg::core::SkillRef::parse("acme", "alpha").unwrap();
    trust
        .set_deprecated(&admin, &alpha, Some("use beta"))
        .await
        .unwrap();
    wait_for_updated(&mut stream, A_MD).await;
}
