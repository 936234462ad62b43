//! Independent clients against the real server: the official conformance suite (both eras), the
//! official TypeScript `SkillsClient` (stdio and HTTP, both eras) and FastMCP's skills client
//! (HTTP, 2026-07-28: it refuses 2025-era connections). Tools come from
//! `scripts/install-test-tools.sh`; these tests fail, never skip, when the tools are missing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{Modern, TestServer, Tools, all_pages, corpus_dir, tools};
use serde_json::Value;
use skillreg::Registry;
use skillreg::core::Namespace;
use tokio::process::Command;

const SCENARIOS: &[&str] = &[
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
];
/// Checks the suite skips by design below 2026-07-28 (cache hints are a 2026-07-28 feature).
const SKIPPED_ON_2025: &[&str] = &[
    "sep-2640-skills-list-cache-attributes",
    "sep-2640-skills-get-cache-attributes",
];

async fn run(cmd: &mut Command) -> (i32, String, String) {
    cmd.kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .expect("client finished within 180 s")
        .expect("client started");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn find_checks(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_name() == "checks.json" {
            found.push(entry.into_path());
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_conformance_suite_passes_on_both_eras() {
    let t = tools();
    let server = TestServer::builder().seeded().start().await;
    let mut total = 0;
    for era in ["2026-07-28", "2025-11-25"] {
        for scenario in SCENARIOS {
            let out_dir = tempfile::TempDir::new().unwrap();
            let (code, stdout, stderr) = run(Command::new(&t.node22)
                .arg(&t.conformance)
                .args(["server", "--url", &server.url, "--scenario", scenario])
                .args(["--spec-version", era, "--force", "-o"])
                .arg(out_dir.path()))
            .await;
            assert_eq!(code, 0, "{scenario} on {era}:\n{stdout}\n{stderr}");
            let files = find_checks(out_dir.path());
            assert_eq!(files.len(), 1, "one checks.json for {scenario} on {era}");
            let checks: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
            let mut passed = 0;
            for check in &checks {
                let id = check["id"].as_str().unwrap();
                match check["status"].as_str().unwrap() {
                    "SUCCESS" => passed += 1,
                    "SKIPPED" if era == "2025-11-25" && SKIPPED_ON_2025.contains(&id) => {}
                    other => panic!("{scenario} on {era}: {id} is {other}: {check}"),
                }
            }
            assert!(passed > 0, "{scenario} on {era} ran no check");
            total += passed;
        }
    }
    // 32 + 6 + 7 on 2026-07-28, 30 + 6 + 7 on 2025-11-25 with this suite version.
    assert_eq!(total, 88, "every check of the suite ran and passed");
}

/// A catalog of the real corpus imported with `--fix` (well over 100 skills, ten of them
/// fixed: every client must take those too), served 25 per page.
async fn corpus_catalog() -> (tempfile::TempDir, usize) {
    let tmp = tempfile::TempDir::new().unwrap();
    let registry = Registry::open(tmp.path()).await.unwrap();
    let ns = Namespace::new("corpus").unwrap();
    let options = skillreg::registry::ImportOptions {
        fix: true,
        ..Default::default()
    };
    let summary = registry
        .publisher()
        .import_dirs(&ns, &options, &[corpus_dir()], |_| {})
        .await
        .unwrap();
    assert!(summary.imported >= 125, "{summary:?}");
    assert!(summary.fixed >= 10, "{summary:?}");
    registry.close().await;
    (tmp, summary.imported)
}

struct Expected {
    skills: Vec<String>,
    files: usize,
}

async fn expected(server: &TestServer) -> Expected {
    let modern = Modern::new(&server.url);
    let (skills, pages) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    assert!(pages >= 4, "the catalog spans several pages ({pages})");
    Expected {
        files: skills
            .iter()
            .map(|s| s["resources"].as_array().unwrap().len())
            .sum(),
        skills: skills
            .iter()
            .map(|s| s["uri"].as_str().unwrap().to_owned())
            .collect(),
    }
}

fn check_report(client: &str, code: i32, stdout: &str, stderr: &str, want: &Expected, era: &str) {
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        let head: String = stdout.chars().take(2000).collect();
        panic!(
            "{client}: not JSON (exit {code}, {} bytes):\n{head}\n{stderr}",
            stdout.len()
        )
    });
    assert_eq!(
        report["failures"],
        Value::Array(vec![]),
        "{client}: {stderr}"
    );
    assert_eq!(code, 0, "{client}: {stderr}");
    assert_eq!(report["era"], era, "{client}");
    let skills: Vec<String> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        skills, want.skills,
        "{client}: the same skills in the same order"
    );
    assert_eq!(
        report["files"].as_array().unwrap().len(),
        want.files,
        "{client}: every file verified"
    );
    assert!(
        report["pages"].as_u64().unwrap() >= 4,
        "{client}: followed every page"
    );
}

fn ts_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_skills.mjs")
}

fn node(t: &Tools) -> Command {
    let mut cmd = Command::new(&t.node22);
    cmd.env("SKILLREG_TOOLS", &t.dir);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_client_over_http_on_both_eras() {
    let t = tools();
    let (dir, _) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(25)
        .start()
        .await;
    let want = expected(&server).await;
    for (mode, era) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let (code, stdout, stderr) =
            run(node(&t)
                .arg(ts_script())
                .args(["--era", mode, "--url", &server.url]))
            .await;
        check_report(
            &format!("TS client over HTTP ({mode})"),
            code,
            &stdout,
            &stderr,
            &want,
            era,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_client_over_stdio_on_both_eras() {
    let t = tools();
    let (dir, _) = corpus_catalog().await;
    let want = {
        let server = TestServer::builder()
            .data_dir(dir.path())
            .page_size(25)
            .start()
            .await;
        expected(&server).await
    };
    for (mode, era) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let (code, stdout, stderr) = run(node(&t)
            .arg(ts_script())
            .args([
                "--era",
                mode,
                "--stdio",
                env!("CARGO_BIN_EXE_skillreg"),
                "serve",
                "--stdio",
            ])
            .args(["--no-seed", "--page-size", "25", "--data-dir"])
            .arg(dir.path())
            .env("SKILLREG_LOG", "warn"))
        .await;
        check_report(
            &format!("TS client over stdio ({mode})"),
            code,
            &stdout,
            &stderr,
            &want,
            era,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_client_over_http() {
    let t = tools();
    let (dir, _) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(25)
        .start()
        .await;
    let want = expected(&server).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/fastmcp_skills.py");
    let (code, stdout, stderr) = run(Command::new(&t.python)
        .arg(script)
        .args(["--url", &server.url]))
    .await;
    check_report(
        "FastMCP over HTTP",
        code,
        &stdout,
        &stderr,
        &want,
        "2026-07-28",
    );
}
