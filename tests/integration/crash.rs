//! Crash consistency: publishers hammer a real `skillreg serve` process over HTTP while it is
//! killed with SIGKILL at random moments and restarted on the same data directory. After every
//! restart every acknowledged version must be there and complete (each file reads back with its
//! digest and size), and at the end `skillreg verify` finds nothing damaged (no half-visible
//! version, no row pointing at a missing blob, the search index agreeing with SQLite).
//!
//! On PostgreSQL the killed process is one replica, and a second one serves reads throughout
//! without an error.
//!
//! CI runs a few kills; `SKILLREG_CRASH_KILLS=50 cargo test --release --test integration crash::`
//! runs more.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{CliOutput, run_cli_async, sha256_hex};

pub(crate) const ADMIN: &str = "crash-admin-9d8db0897da2c2659a6d68d6114c3d22";

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) base: String,
}

/// A server still running when a test ends, passed or failed, is killed.
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn start(data: &std::path::Path, port: u16, env: &[(&str, &str)]) -> Server {
    let child = Command::new(env!("CARGO_BIN_EXE_skillreg"))
        .args([
            "serve",
            "--no-seed",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(data)
        .env("SKILLREG_ADMIN_TOKEN", ADMIN)
        .env("SKILLREG_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Server { child, base }
}

/// xorshift: deterministic per seed, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

pub(crate) fn archive(name: &str, version: &str, payload: &[u8]) -> Vec<u8> {
    let md = format!(
        "---\nname: {name}\ndescription: Crash test skill {version}.\n---\n# {name} {version}\n"
    );
    let files = [
        ("SKILL.md", md.as_bytes(), 0o644),
        ("data/payload.bin", payload, 0o644),
        ("refs/shared.md", &b"shared by every version\n"[..], 0o644),
    ];
    skillreg::source::archive::pack_tar_gz(files.iter().map(|(p, b, m)| {
        skillreg::source::archive::ExportFile {
            path: p,
            mode: *m,
            bytes: b,
        }
    }))
    .unwrap()
}

#[derive(Clone, Debug)]
pub(crate) struct Acked {
    pub(crate) name: String,
    pub(crate) version: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_publishes_survive_sigkill() {
    let kills: usize = std::env::var("SKILLREG_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let tmp = tempfile::TempDir::new().unwrap();
    let port = free_port();
    let acked: Arc<Mutex<Vec<Acked>>> = Arc::default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut rng = Rng(0x5eed_u64 ^ u64::from(std::process::id()));
    // On PostgreSQL (SKILLREG_TEST_ENGINE=postgres) the killed process is a replica and the
    // database lives on; either way every acknowledged publish must survive.
    let database = if crate::common::postgres_by_default() {
        Some(crate::common::fresh_postgres().await)
    } else {
        None
    };
    let env: Vec<(&str, &str)> = database
        .iter()
        .map(|url| ("SKILLREG_DATABASE_URL", url.as_str()))
        .collect();
    let mut server = start(tmp.path(), port, &env);
    // On PostgreSQL a second replica serves reads throughout: the kills must cost it nothing.
    let bystander_dir = tempfile::TempDir::new().unwrap();
    let bystander = database
        .as_ref()
        .map(|_| start(bystander_dir.path(), free_port(), &env));
    let reads_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = bystander.as_ref().map(|b| {
        let (http, base, stop) = (http.clone(), b.base.clone(), reads_stop.clone());
        tokio::spawn(async move {
            let (mut reads, mut failures) = (0u64, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for path in ["/v1/skills?namespace=acme&limit=10", "/v1/search?q=crash"] {
                    reads += 1;
                    match http.get(format!("{base}{path}")).send().await {
                        Ok(r) if r.status().is_success() => {}
                        Ok(r) => failures.push(format!("{path}: {}", r.status())),
                        Err(e) => failures.push(format!("{path}: {e}")),
                    }
                }
            }
            (reads, failures)
        })
    });
    let mut counter = 0u64;

    for round in 0..kills {
        // Publishers run until the kill.
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut tasks = Vec::new();
        for p in 0..3 {
            let (http, base, acked, stop) = (
                http.clone(),
                server.base.clone(),
                acked.clone(),
                stop.clone(),
            );
            let start_at = counter + p * 1_000_000;
            tasks.push(tokio::spawn(async move {
                let mut i = start_at;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    i += 1;
                    let name = format!("crash-{p}");
                    let version = format!("1.{round}.{i}");
                    let payload: Vec<u8> = (0..(4096 + (i % 7) * 1000))
                        .map(|j| (j * 31 + i) as u8)
                        .collect();
                    let resp = http
                        .put(format!("{base}/v1/skills/acme/{name}/{version}"))
                        .bearer_auth(ADMIN)
                        .header("Content-Type", "application/gzip")
                        .body(archive(&name, &version, &payload))
                        .send()
                        .await;
                    match resp {
                        Ok(r) if r.status().as_u16() == 201 || r.status().as_u16() == 200 => {
                            acked.lock().unwrap().push(Acked { name, version });
                        }
                        Ok(r) => panic!("unexpected status {} for {name} {version}", r.status()),
                        // The server is down: pace the retries until it is back.
                        Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                    }
                }
            }));
        }
        counter += 100;
        // Deliberate: once a publish of this round is acknowledged (a loaded machine may take a
        // while), the publishers run for a random time more, then the kill lands mid-publish.
        let before = acked.lock().unwrap().len();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while acked.lock().unwrap().len() == before && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(150 + rng.next() % 600)).await;
        server.child.kill().unwrap(); // SIGKILL
        server.child.wait().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in tasks {
            t.await.unwrap();
        }
        server = start(tmp.path(), port, &env);
        let snapshot = acked.lock().unwrap().clone();
        check_acknowledged(&http, &server.base, &snapshot).await;
    }
    let total = acked.lock().unwrap().len();
    assert!(
        total > kills,
        "publishes were acknowledged between kills ({total})"
    );
    if let (Some(bystander), Some(reader)) = (&bystander, reader) {
        reads_stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (reads, failures) = reader.await.unwrap();
        assert!(reads > 10, "the other replica was read ({reads} reads)");
        assert_eq!(
            failures,
            Vec::<String>::new(),
            "the other replica kept serving"
        );
        let all = acked.lock().unwrap().clone();
        check_acknowledged(&http, &bystander.base, &all).await;
        eprintln!("crash: the other replica answered {reads} reads during the kills, none failed");
    }

    // The index catches up after the last restart, then a full scrub finds nothing damaged.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready: Value = http
            .get(format!("{}/readyz", server.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if ready["generation"] == ready["search_generation"] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "search index did not catch up: {ready}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    if let Some(mut bystander) = bystander {
        bystander.child.kill().unwrap();
        bystander.child.wait().unwrap();
    }
    let CliOutput { code, stdout, .. } = run_cli_async(
        &[
            "verify",
            "--json",
            "--data-dir",
            tmp.path().to_str().unwrap(),
        ],
        &env,
    )
    .await;
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["problems"], serde_json::json!([]));
    eprintln!(
        "crash: {kills} kills survived, {total} acknowledged versions, {} blobs verified",
        report["blobs_checked"]
    );
}

/// Every acknowledged version is listed and each of its files reads back with its digest.
pub(crate) async fn check_acknowledged(http: &reqwest::Client, base: &str, acked: &[Acked]) {
    for a in acked {
        let manifest: Value = http
            .get(format!("{base}/v1/skills/acme/{}/{}", a.name, a.version))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let files = manifest["files"]
            .as_array()
            .unwrap_or_else(|| panic!("{} {} lost: {manifest}", a.name, a.version));
        assert_eq!(files.len(), 3, "{} {} is complete", a.name, a.version);
        for f in files {
            let bytes = http
                .get(format!(
                    "{base}/v1/skills/acme/{}/{}/files/{}",
                    a.name,
                    a.version,
                    f["path"].as_str().unwrap()
                ))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            assert_eq!(bytes.len() as u64, f["size"].as_u64().unwrap());
            assert_eq!(
                format!("sha256:{}", sha256_hex(&bytes)),
                f["digest"].as_str().unwrap()
            );
        }
    }
}
