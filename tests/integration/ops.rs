//! Operating it: health and readiness, Prometheus metrics, request ids, JSON logs without
//! secrets, the configuration file and its precedence, and the documented environment variables.

use skillreg::config::Config;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use crate::common::{CliOutput, Modern, TestServer, run_cli};
use serde_json::{Value, json};

#[tokio::test]
async fn health_readiness_metrics_and_request_ids() {
    // The metrics registry is process-wide and other tests run in this process: compare with
    // what it held before, and assert that this test's requests raised each counter.
    let before = skillreg::metrics::render(None, &[], None, &[]);
    let server = TestServer::builder().seeded().start().await;
    let http = reqwest::Client::new();
    let health = http
        .get(format!("{}/healthz", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let ready = http
        .get(format!("{}/readyz", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(
        (body["database"].as_str(), body["search"].as_str()),
        (Some("ok"), Some("ok")),
        "{body}"
    );

    let mcp = Modern::new(&server.url);
    mcp.call("skills/list", json!({})).await;
    mcp.call("skills/get", json!({"uri": "skill://nobody/none/SKILL.md"}))
        .await;
    http.get(format!("{}/v1/skills/acme/none", server.base()))
        .send()
        .await
        .unwrap();
    let resp = http
        .get(format!("{}/v1/skills", server.base()))
        .header("x-request-id", "trace-abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["x-request-id"],
        "trace-abc-123",
        "a sane caller id is echoed"
    );
    let generated = http
        .get(format!("{}/healthz", server.base()))
        .send()
        .await
        .unwrap();
    assert!(generated.headers()["x-request-id"].to_str().unwrap().len() >= 16);

    let metrics = http
        .get(format!("{}/metrics", server.base()))
        .send()
        .await
        .unwrap();
    assert!(
        metrics.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = metrics.text().await.unwrap();
    for needle in [
        r#"skillreg_mcp_requests_total{method="skills/list",outcome="ok"}"#,
        r#"skillreg_mcp_requests_total{method="skills/get",outcome="error"}"#,
        r#"skillreg_errors_total{code="skill_not_found"}"#,
        r#"skillreg_http_requests_total{method="GET",route="/v1/skills/{namespace}/{name}",status="404"}"#,
        "skillreg_mcp_request_duration_seconds_bucket",
        "skillreg_http_request_duration_seconds_bucket",
        r#"skillreg_catalog{kind="skills"} "#,
        r#"skillreg_publishes_total{kind="created"}"#,
    ] {
        assert!(text.contains(needle), "missing {needle} in:\n{text}");
    }
    for (series, at_least) in [
        (
            r#"skillreg_mcp_requests_total{method="skills/list",outcome="ok"}"#,
            1.0,
        ),
        (
            r#"skillreg_mcp_requests_total{method="skills/get",outcome="error"}"#,
            1.0,
        ),
        (r#"skillreg_errors_total{code="skill_not_found"}"#, 1.0),
        (
            r#"skillreg_http_requests_total{method="GET",route="/v1/skills/{namespace}/{name}",status="404"}"#,
            1.0,
        ),
        (r#"skillreg_publishes_total{kind="created"}"#, 3.0),
    ] {
        let delta = sample(&text, series) - sample(&before, series);
        assert!(
            delta >= at_least,
            "{series} rose by {delta}, expected at least {at_least}"
        );
    }
    // The catalog gauges are set from this server's store when it renders the scrape.
    let skills_line = text
        .lines()
        .find(|l| l.starts_with(r#"skillreg_catalog{kind="skills"} "#))
        .unwrap();
    assert!(
        skills_line.ends_with(" 3"),
        "three seed skills: {skills_line}"
    );
}

/// The value of one series (`name{labels}`) in a Prometheus text exposition; 0 when absent.
/// Each cache's series are this server's (set from its caches when it renders the scrape); a
/// file read over MCP is kept once, as its content: a second read reads no bytes.
#[tokio::test]
async fn caches_show_in_metrics_and_a_content_hit_reads_no_file_bytes() {
    let server = TestServer::builder()
        .seeded()
        .config(Config {
            cache_memory_mib: 48,
            ..Config::default()
        })
        .start()
        .await;
    let http = reqwest::Client::new();
    let url = format!("{}/metrics", server.base());
    let scrape = || async { http.get(&url).send().await.unwrap().text().await.unwrap() };
    let cache = |text: &str, cache: &str, what: &str| {
        sample(
            text,
            &format!(r#"skillreg_cache_{what}{{cache="{cache}"}}"#),
        )
    };
    let mcp = Modern::new(&server.url);
    let uri = "skill://skillreg/finding-skills/SKILL.md";

    let before = scrape().await;
    // 48 MiB split by the declared weights (384 in all): the contents' weight is 64.
    assert_eq!(
        cache(&before, "contents", "capacity_bytes"),
        (8 << 20) as f64,
        "{before}"
    );
    for name in ["manifests", "blobs", "entries", "pages", "rendered"] {
        assert!(
            before.contains(&format!(r#"skillreg_cache_hits_total{{cache="{name}"}}"#)),
            "{name}: {before}"
        );
    }
    let first = mcp.call("resources/read", json!({"uri": uri})).await;
    let missed = scrape().await;
    let second = mcp.call("resources/read", json!({"uri": uri})).await;
    let hit = scrape().await;
    assert_eq!(first, second, "the same answer from the cache");
    let text = first["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("---"), "{first}");

    let rose = |from: &str, to: &str, name: &str, what: &str| {
        cache(to, name, what) - cache(from, name, what)
    };
    assert_eq!(rose(&before, &missed, "contents", "misses_total"), 1.0);
    assert_eq!(
        rose(&before, &missed, "blobs", "misses_total"),
        1.0,
        "bytes read"
    );
    assert_eq!(
        rose(&before, &missed, "blobs", "bytes"),
        0.0,
        "the bytes are not kept besides their content"
    );
    assert!(rose(&before, &missed, "contents", "bytes") > text.len() as f64);
    assert_eq!(rose(&missed, &hit, "contents", "hits_total"), 1.0);
    for what in ["hits_total", "misses_total"] {
        assert_eq!(
            rose(&missed, &hit, "blobs", what),
            0.0,
            "no bytes read: {what}"
        );
    }
}

fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0.0)
}

#[test]
fn json_logs_one_line_per_request_and_never_a_token() {
    let tmp = tempfile::TempDir::new().unwrap();
    let token = "log-secret-4658ac08b58e04e0a1d09d597e737feb";
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillreg"))
        .args([
            "serve",
            "--log-format",
            "json",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(tmp.path())
        .env("SKILLREG_ADMIN_TOKEN", token)
        .env("SKILLREG_LOG", "info")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Wait for the listening line, then make requests that carry the token.
    let serving = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|line| line.contains("serving MCP at"))
        .expect("the server says where it serves");
    assert!(
        serving.contains(&format!("the web catalog at http://127.0.0.1:{port}/")),
        "{serving}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let r = http
            .get(format!("http://127.0.0.1:{port}/v1/tokens"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        http.get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            .unwrap();
    });
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let _ = child.wait();
    // With an admin token, the log says how to publish (and never shows the token).
    assert!(
        rest.iter()
            .any(|l| l
                .contains("to publish: `SKILLREG_TOKEN=<the admin token> skillreg token create")),
        "{rest:#?}"
    );
    let requests: Vec<Value> = rest
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["message"] == "request")
        .collect();
    assert_eq!(requests.len(), 2, "one line per request: {rest:#?}");
    let tokens = &requests[0];
    assert_eq!(tokens["route"], "/v1/tokens");
    assert_eq!(tokens["status"], 200);
    assert_eq!(tokens["method"], "GET");
    assert!(
        tokens["latency_ms"].as_f64().is_some() && tokens["request_id"].as_str().is_some(),
        "{tokens}"
    );
    assert!(
        rest.iter().any(|l| l.contains("shutting down")),
        "graceful shutdown is logged"
    );
    assert!(
        !rest.join("\n").contains(token),
        "the token never reaches the logs"
    );
}

#[test]
fn configuration_precedence_and_errors() {
    let tmp = tempfile::TempDir::new().unwrap();
    let file = tmp.path().join("skillreg.toml");
    let CliOutput {
        code,
        stdout: example,
        ..
    } = run_cli(&["config", "print-default"], &[]);
    assert_eq!(code, 0);
    let edited = example
        .replace("page_size = 100\n", "page_size = 7\n")
        .replace("request_timeout_secs = 30\n", "request_timeout_secs = 5\n");
    assert_ne!(edited, example);
    std::fs::write(&file, edited).unwrap();
    let file_s = file.to_str().unwrap();
    let CliOutput {
        code,
        stdout: out,
        stderr: err,
    } = run_cli(
        &["config", "print", "--config", file_s],
        &[("SKILLREG_REQUEST_TIMEOUT_SECS", "9")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("page_size = 7"), "file beats default: {out}");
    assert!(
        out.contains("request_timeout_secs = 9"),
        "environment beats file: {out}"
    );
    let CliOutput { stdout: out, .. } = run_cli(
        &[
            "config",
            "print",
            "--config",
            file_s,
            "--request-timeout-secs",
            "11",
        ],
        &[("SKILLREG_REQUEST_TIMEOUT_SECS", "9")],
    );
    assert!(
        out.contains("request_timeout_secs = 11"),
        "flag beats environment: {out}"
    );
    let CliOutput { stdout: out, .. } = run_cli(
        &["config", "print"],
        &[(
            "SKILLREG_ADMIN_TOKEN",
            "a-very-secret-58b08cd4ec8da57820c5ffc8c153f7df",
        )],
    );
    assert!(
        out.contains(r#"admin_token = "<redacted>""#) && !out.contains("a-very-secret"),
        "{out}"
    );

    std::fs::write(&file, "pag_size = 7\n").unwrap();
    let CliOutput {
        code, stderr: err, ..
    } = run_cli(&["config", "print", "--config", file_s], &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("pag_size") && err.contains("unknown setting"),
        "{err}"
    );
    let CliOutput {
        code, stderr: err, ..
    } = run_cli(&["serve", "--config", "/nonexistent/skillreg.toml"], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/skillreg.toml"), "{err}");
}

#[test]
fn documented_environment_variables_are_the_ones_the_code_reads() {
    use clap::CommandFactory as _;
    fn collect(cmd: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
        for arg in cmd.get_arguments() {
            if let Some(env) = arg.get_env() {
                out.insert(env.to_string_lossy().into_owned());
            }
        }
        for sub in cmd.get_subcommands() {
            collect(sub, out);
        }
    }
    let mut read = std::collections::BTreeSet::new();
    collect(&skillreg::cli::Cli::command(), &mut read);
    read.insert("SKILLREG_LOG".to_owned()); // the log filter, read by the tracing setup
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("## Configuration")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let documented: std::collections::BTreeSet<String> = section
        .split('`')
        .filter(|w| {
            w.starts_with("SKILLREG_") && w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
        .map(str::to_owned)
        .collect();
    assert_eq!(
        documented, read,
        "README's configuration table and the code disagree"
    );
    // Compose passes these through .env; Docker sets these two.
    let dockerfile =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile")).unwrap();
    for var in ["SKILLREG_DATA_DIR", "SKILLREG_LISTEN"] {
        assert!(dockerfile.contains(var) && read.contains(var));
    }
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    use clap::CommandFactory as _;
    fn walk(cmd: &clap::Command, path: String, missing: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            let name = format!("{path} {}", sub.get_name());
            if sub.has_subcommands() {
                walk(sub, name, missing);
            } else if !sub
                .get_after_help()
                .is_some_and(|h| h.to_string().contains("skillreg "))
            {
                missing.push(name);
            }
        }
    }
    let mut missing = Vec::new();
    walk(
        &skillreg::cli::Cli::command(),
        "skillreg".to_owned(),
        &mut missing,
    );
    assert!(missing.is_empty(), "no example in --help: {missing:?}");
}

#[tokio::test]
async fn origin_allow_list_on_mcp() {
    let server = TestServer::builder()
        .config(Config {
            allowed_origins: vec!["https://host.example".to_owned()],
            ..Config::default()
        })
        .start()
        .await;
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}});
    let post = |origin: &'static str| {
        reqwest::Client::new()
            .post(&server.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Origin", origin)
            .json(&init)
            .send()
    };
    assert_eq!(post("https://evil.example").await.unwrap().status(), 403);
    assert_eq!(post("https://host.example").await.unwrap().status(), 200);
}

#[test]
fn the_readme_documents_every_setting_as_declared() {
    use clap::Args as _;
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let command = skillreg::config::Config::augment_args(clap::Command::new("serve"));
    let defaults = toml::Table::try_from(skillreg::config::Config::default()).unwrap();
    let mut documented = 0;
    for arg in command.get_arguments() {
        let key = arg.get_id().as_str();
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{key}` |")))
            .unwrap_or_else(|| panic!("README has no row for the setting `{key}`"));
        let env = arg.get_env().unwrap().to_str().unwrap();
        assert!(row.contains(&format!("`{env}`")), "{key}: {row}");
        if let Some(long) = arg.get_long() {
            assert!(row.contains(&format!("`--{long}")), "{key}: {row}");
        }
        if let Some(default) = defaults
            .get(key)
            .filter(|v| !matches!(v, toml::Value::Array(_)))
        {
            let shown = match default {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert!(
                row.contains(&format!("`{shown}`")),
                "{key} default {shown}: {row}"
            );
        }
        documented += 1;
    }
    let rows = readme
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("`SKILLREG_"))
        .count();
    assert_eq!(rows, documented, "a README row names no setting");
}

/// Invented HTTP methods (raw TCP: HTTP clients refuse them) must not become metric labels: each
/// would add a series per route, and `/metrics` would grow without bound.
#[tokio::test]
async fn invented_http_methods_do_not_grow_the_metrics() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let server = TestServer::builder().start().await;
    let addr = server.base().trim_start_matches("http://").to_owned();
    let http = reqwest::Client::new();
    let scrape = async || {
        http.get(format!("{}/metrics", server.base()))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let before = scrape().await;
    let padding = "X".repeat(1024);
    for i in 0..300 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let path = ["/", "/v1/skills", "/nowhere", "/mcp"][i % 4];
        stream
            .write_all(
                format!("INVENTED{i}{padding} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 "), "request {i} answered");
    }
    let after = scrape().await;
    assert!(
        !after.contains("INVENTED"),
        "an invented method became a label"
    );
    let known = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "other",
    ];
    for line in after.lines().filter(|l| !l.starts_with('#')) {
        if let Some((_, rest)) = line.split_once("method=\"") {
            let value = rest.split('"').next().unwrap();
            if line.starts_with("skillreg_http_") {
                assert!(known.contains(&value), "method label {value:?}: {line}");
            }
        }
    }
    // Other tests in this process may add a few series meanwhile; 300 invented methods of 1 KiB
    // each would add megabytes.
    let grown = after.len().saturating_sub(before.len());
    assert!(grown < 256 * 1024, "/metrics grew by {grown} bytes");
}

/// What a client sends is not copied into the log at the default filter: rmcp logs a whole
/// `initialize` request at INFO, so a 3 MB `clientInfo.name` made 3 MB of log per request.
/// The admin token of the log test's server.
const LOG_ADMIN: &str = "ops-log-admin-5d1c9e7a3b8f2046e1a7c3d9b5f80e2a";

#[test]
fn a_client_cannot_write_megabytes_of_log() {
    use std::io::{Read as _, Write as _};
    let tmp = tempfile::TempDir::new().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillreg"))
        .args([
            "serve",
            "--no-seed",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(tmp.path())
        .env_remove("SKILLREG_LOG")
        .env("SKILLREG_ADMIN_TOKEN", LOG_ADMIN)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Read stderr as it comes (a full pipe would block the server), counting what follows the
    // listening line.
    let mut stderr = child.stderr.take().unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut after_ready = 0usize;
        let mut ready = false;
        let mut chunk = [0u8; 65536];
        loop {
            let n = stderr.read(&mut chunk).unwrap_or(0);
            if n == 0 {
                return (after_ready, String::from_utf8_lossy(&seen).into_owned());
            }
            if ready {
                after_ready += n;
                let room = 4096usize.saturating_sub(seen.len());
                seen.extend_from_slice(&chunk[..n.min(room)]);
            } else {
                seen.extend_from_slice(&chunk[..n]);
                if String::from_utf8_lossy(&seen).contains("serving MCP at") {
                    ready = true;
                    seen.clear();
                    let _ = ready_tx.send(());
                }
            }
        }
    });
    ready_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the server starts");
    let name = "N".repeat(3 * 1024 * 1024);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        for i in 0..3 {
            let init = json!({"jsonrpc":"2.0","id":i,"method":"initialize","params":{
                "protocolVersion":"2025-11-25","capabilities":{},
                "clientInfo":{"name": name, "version":"0"}}});
            // Authenticated: an anonymous body is capped at 256 KiB.
            let r = http
                .post(format!("http://127.0.0.1:{port}/mcp"))
                .header("Accept", "application/json, text/event-stream")
                .bearer_auth(LOG_ADMIN)
                .json(&init)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "initialize {i}");
        }
    });
    // A Host header the /mcp Host check rejects, as large as the server reads.
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let host = format!("<{}", "h".repeat(256 * 1024));
    let _ = tcp.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    let (grown, sample) = reader.join().unwrap();
    let sample: Vec<String> = sample
        .lines()
        .map(|l| l.chars().take(160).collect())
        .collect();
    assert!(
        grown < 64 * 1024,
        "stderr grew by {grown} bytes for 4 requests; it begins:\n{}",
        sample.join("\n")
    );
}

/// The admin token must carry 128 bits of entropy: 16 characters of anything no longer pass,
/// nor do few characters repeated; what `openssl rand -hex 32` or `-base64 32` prints does.
#[test]
fn a_weak_admin_token_is_refused_with_what_is_needed() {
    for weak in ["a".repeat(16), "ab".repeat(64), "change-me".to_owned()] {
        let out = run_cli(&["config", "print"], &[("SKILLREG_ADMIN_TOKEN", &weak)]);
        assert_eq!(out.code, 2, "{weak}: {out:?}");
        assert!(
            out.stderr.contains("admin_token") && out.stderr.contains("openssl rand -hex 32"),
            "{weak}: {}",
            out.stderr
        );
    }
    let out = run_cli(
        &["config", "print"],
        &[("SKILLREG_ADMIN_TOKEN", &"a".repeat(16))],
    );
    assert!(out.stderr.contains("128 bits"), "{}", out.stderr);
    for strong in [
        "505ca785f6b79fcdadb8a843939187de108430744b5789dd4edae89c582552e8", // openssl rand -hex 32
        "cCRvKVgKjvzwBuQPCgjNlihL1wqiHyX7qwfsaEv59lU=", // openssl rand -base64 32
    ] {
        let out = run_cli(&["config", "print"], &[("SKILLREG_ADMIN_TOKEN", strong)]);
        assert_eq!(out.code, 0, "{strong}: {}", out.stderr);
    }
}

/// Without an admin token, `serve` says that nobody can publish and how to set one.
#[test]
fn serve_without_an_admin_token_says_how_to_set_one() {
    let tmp = tempfile::TempDir::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillreg"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(tmp.path())
        .env_remove("SKILLREG_ADMIN_TOKEN")
        .env("SKILLREG_LOG", "info")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (found, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let hint = BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find(|l| l.contains("no admin token is set"));
        let _ = found.send(hint);
    });
    let hint = heard.recv_timeout(std::time::Duration::from_secs(60));
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    let hint = hint
        .expect("the server started")
        .expect("the hint is logged");
    assert!(
        hint.contains("nobody can publish or manage tokens")
            && hint.contains("SKILLREG_ADMIN_TOKEN=$(openssl rand -hex 32)"),
        "{hint}"
    );
}
