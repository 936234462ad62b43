//! Concurrency soak: publishers, a yanker and MCP readers on both eras over HTTP, plus a second
//! `skillreg serve --stdio` process reading the same data directory, for a bounded time. Zero
//! unexpected errors; every version a reader sees listed reads back complete through its pinned
//! URI with the digests of its manifest (no torn or half-committed version is ever visible).
//!
//! CI soaks a few seconds; `SKILLREG_SOAK_SECS=300 cargo test --release --test integration soak::
//! -- --nocapture` soaks longer and prints the operation counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::common::{self, Legacy, Modern, StdioClient, TestServer, sha256_hex};
use base64::Engine as _;
use serde_json::{Value, json};
use skillreg::core::Principal;
use skillreg::core::{InputFile, Namespace, SkillVersion, VersionRef};

#[derive(Default)]
struct Counts {
    published: AtomicU64,
    yanks: AtomicU64,
    reads: AtomicU64,
    stdio_reads: AtomicU64,
}

fn files(name: &str, version: &str) -> Vec<InputFile> {
    let body: String = (0..200)
        .map(|i| format!("line {i} of {name} {version}\n"))
        .collect();
    vec![
        InputFile::regular(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: Soak skill.\n---\n# {version}\n{body}"),
        ),
        InputFile::regular("refs/a.md", format!("a {version}")),
        InputFile::regular(
            "refs/b.bin",
            version
                .as_bytes()
                .iter()
                .cycle()
                .take(5000)
                .copied()
                .collect::<Vec<u8>>(),
        ),
    ]
}

/// The pinned `skills/get` URI of a listed entry.
fn pinned(entry: &Value) -> String {
    let version = entry["_meta"]["dev.skillreg/version"].as_str().unwrap();
    let name = entry["frontmatter"]["name"].as_str().unwrap();
    entry["uri"]
        .as_str()
        .unwrap()
        .replace(&format!("/{name}/"), &format!("/@{version}/{name}/"))
}

/// The resources of a pinned entry: all three files.
fn resources(got: &Value, uri: &str) -> Vec<Value> {
    let resources = got["result"]["skill"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{uri}: {got}"));
    assert_eq!(resources.len(), 3, "{uri} is complete");
    resources.clone()
}

/// A read's bytes match the manifest entry's digest.
fn check_read(resource: &Value, read: &Value) {
    let c = &read["result"]["contents"][0];
    let bytes = match (c.get("text"), c.get("blob")) {
        (Some(t), _) => t.as_str().unwrap().as_bytes().to_vec(),
        (_, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b.as_str().unwrap())
            .unwrap(),
        _ => panic!("{}: {read}", resource["uri"]),
    };
    assert_eq!(
        format!("sha256:{}", sha256_hex(&bytes)),
        resource["digest"].as_str().unwrap(),
        "{}",
        resource["uri"]
    );
}

enum Reader {
    Modern(Modern),
    Legacy(Legacy),
}

impl Reader {
    async fn call(&self, method: &str, params: Value) -> Value {
        match self {
            Self::Modern(m) => m.call(method, params).await,
            Self::Legacy(l) => l.call(method, params).await,
        }
    }

    async fn check(&self, entry: &Value) {
        let uri = pinned(entry);
        let got = self.call("skills/get", json!({ "uri": uri })).await;
        for r in resources(&got, &uri) {
            let read = self.call("resources/read", json!({"uri": r["uri"]})).await;
            check_read(&r, &read);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishers_yankers_and_readers_on_both_eras() {
    let secs: u64 = std::env::var("SKILLREG_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let server = TestServer::builder().page_size(10).start().await;
    let ns = Namespace::new("soak").unwrap();
    // Two versions each, so yanking 1.0.0 moves the current version back to 0.9.0 and never
    // leaves a skill without one (which would rightly drop it from the listing).
    for s in 0..4 {
        for version in ["0.9.0", "1.0.0"] {
            server
                .registry
                .publisher()
                .publish(common::publish_request(
                    &ns,
                    files(&format!("soak-{s}"), version),
                    Some(SkillVersion::parse(version).unwrap()),
                ))
                .await
                .unwrap();
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let mut tasks = Vec::new();

    for p in 0..2 {
        let (registry, stop, counts, ns) = (
            server.registry.clone(),
            stop.clone(),
            counts.clone(),
            ns.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let version = format!("1.{p}.{i}");
                let name = format!("soak-{}", i % 4);
                registry
                    .publisher()
                    .publish(common::publish_request(
                        &ns,
                        files(&name, &version),
                        Some(SkillVersion::parse(&version).unwrap()),
                    ))
                    .await
                    .unwrap();
                counts.published.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    {
        let (registry, stop, counts) = (server.registry.clone(), stop.clone(), counts.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let first = VersionRef::parse("soak", &format!("soak-{}", i % 4), "1.0.0").unwrap();
                // Yank and restore the first version: the current one moves back and forth.
                registry
                    .trust()
                    .set_yanked(&Principal::Admin, &first, Some("soak"))
                    .await
                    .unwrap();
                registry
                    .trust()
                    .set_yanked(&Principal::Admin, &first, None)
                    .await
                    .unwrap();
                counts.yanks.fetch_add(1, Ordering::Relaxed);
                // Load pacing: the yanker leaves the publishers and readers room to run.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
    }
    for era in ["modern", "legacy", "modern", "legacy"] {
        let (url, stop, counts) = (server.url.clone(), stop.clone(), counts.clone());
        tasks.push(tokio::spawn(async move {
            let reader = match era {
                "modern" => Reader::Modern(Modern::new(&url)),
                _ => Reader::Legacy(Legacy::connect(&url).await),
            };
            while !stop.load(Ordering::Relaxed) {
                let mut skills = Vec::new();
                let mut cursor: Option<String> = None;
                loop {
                    let params = cursor
                        .as_ref()
                        .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
                    let page = reader.call("skills/list", params).await;
                    skills.extend(
                        page["result"]["skills"]
                            .as_array()
                            .unwrap_or_else(|| panic!("{era}: {page}"))
                            .clone(),
                    );
                    match page["result"]["nextCursor"].as_str() {
                        Some(c) => cursor = Some(c.to_owned()),
                        None => break,
                    }
                }
                assert_eq!(skills.len(), 4, "{era}: every skill stays listed");
                for entry in &skills {
                    reader.check(entry).await;
                    counts.reads.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    // A second process serving the same data directory over stdio (2025-11-25 JSON-RPC lines).
    let mut client = StdioClient::start(&server);
    let stdio = {
        let (stop, counts) = (stop.clone(), counts.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let list = client.call("skills/list", json!({}));
                let skills = list["result"]["skills"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{list}"))
                    .clone();
                assert_eq!(skills.len(), 4);
                for entry in &skills {
                    let uri = pinned(entry);
                    let got = client.call("skills/get", json!({ "uri": uri }));
                    for r in resources(&got, &uri) {
                        check_read(&r, &client.call("resources/read", json!({"uri": r["uri"]})));
                    }
                    counts.stdio_reads.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };

    let started = Instant::now();
    // The soak's duration: everything above runs concurrently until `stop`.
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("no task failed");
    }
    stdio.join().expect("the stdio reader saw no error");
    let report = server.registry.verify(&|_| {}).await.unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    let (p, y, r, s) = (
        counts.published.load(Ordering::Relaxed),
        counts.yanks.load(Ordering::Relaxed),
        counts.reads.load(Ordering::Relaxed),
        counts.stdio_reads.load(Ordering::Relaxed),
    );
    eprintln!(
        "soak: {:.1} s, {p} publishes, {y} yank/unyank pairs, {r} HTTP entry checks, {s} stdio entry checks, 0 errors",
        started.elapsed().as_secs_f64()
    );
    assert!(
        p > 0 && y > 0 && r > 0 && s > 0,
        "every kind of client made progress: {p} {y} {r} {s}"
    );
}
