//! Clients that install skills as files, against a real server on loopback: the `skills` CLI
//! (`npx skills`, pinned in scripts/install-test-tools.sh) reads the well-known discovery index,
//! installs a namespace and one skill into agents' folders byte for byte, records the index
//! digest in its lockfile, and `skills update` follows a new publish. Telemetry is off; the
//! only host the CLI is given is the loopback server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::process::Command;

use crate::common::{TestServer, tar_gz, tool, tools};
use crate::rest::{ADMIN, Api};
use skillreg::config::{Config, Secret};

/// `skills <args>` in `project`, with a home of its own and no telemetry.
pub(crate) async fn skills_cli(project: &Path, home: &Path, args: &[&str]) -> (i32, String) {
    skills_cli_with(project, home, args, &[]).await
}

async fn skills_cli_with(
    project: &Path,
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String) {
    let t = tools();
    let cli = tool("SKILLREG_SKILLS_CLI");
    // `skills update` runs `skills add` again: the bin directory and Node go first on PATH.
    let bin = cli
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join(".bin");
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        t.node22.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(&t.node22);
    cmd.arg(&cli)
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("PATH", path)
        .env("DISABLE_TELEMETRY", "1")
        .env("DO_NOT_TRACK", "1")
        .env("NO_COLOR", "1")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDECODE")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("skills finished within 120 s")
        .expect("skills started");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Every file under `dir`, relative path → bytes.
pub(crate) fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn md(name: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill, for tests.\n---\n# {name}\n\n{body}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skills_cli_installs_a_namespace_and_follows_updates() {
    let server = TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await;
    let api = Api::new(&server);
    // A multi-file skill (an archive), a single-file one (its SKILL.md), and another namespace.
    let deploy = [
        ("SKILL.md", md("deploy-helper", "Run scripts/run.sh.")),
        ("scripts/run.sh", "#!/bin/sh\necho deploy\n".to_owned()),
        ("references/guide.md", "# Guide\n".to_owned()),
    ];
    let archive = |files: &[(&str, String)]| {
        tar_gz(
            &files
                .iter()
                .map(|(p, b)| (*p, tar::EntryType::Regular, b.as_bytes()))
                .collect::<Vec<_>>(),
        )
    };
    for (ns, name, version, body) in [
        ("acme", "deploy-helper", "1.0.0", archive(&deploy)),
        (
            "acme",
            "hello",
            "1.0.0",
            archive(&[("SKILL.md", md("hello", "Say hello."))]),
        ),
        (
            "other",
            "elsewhere",
            "1.0.0",
            archive(&[("SKILL.md", md("elsewhere", "Not in acme."))]),
        ),
    ] {
        let (status, body) = api.publish(Some(ADMIN), ns, name, version, body).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (_, index) = api.get("/s/acme/.well-known/agent-skills/index.json").await;
    let kinds: Vec<(&str, &str)> = index["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [("deploy-helper", "archive"), ("hello", "skill-md")],
        "{index}"
    );

    let tmp = tempfile::TempDir::new().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let base = server.base();
    let (code, out) = skills_cli(
        &project,
        &home,
        &[
            "add",
            &format!("{base}/s/acme"),
            "-y",
            "--agent",
            "claude-code",
            "codex",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");

    // The namespace's skills, byte for byte, in the canonical folder; Claude Code's links to it.
    let installed = |name: &str| project.join(".agents/skills").join(name);
    let expected: std::collections::BTreeMap<String, Vec<u8>> = deploy
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.as_bytes().to_vec()))
        .collect();
    assert_eq!(files_under(&installed("deploy-helper")), expected, "{out}");
    assert_eq!(
        std::fs::read_to_string(installed("hello").join("SKILL.md")).unwrap(),
        md("hello", "Say hello.")
    );
    assert!(
        !installed("elsewhere").exists(),
        "another namespace stays out"
    );
    let claude: PathBuf = project.join(".claude/skills/deploy-helper/scripts/run.sh");
    assert_eq!(
        std::fs::read(&claude).unwrap(),
        b"#!/bin/sh\necho deploy\n",
        "{out}"
    );
    let lock: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join("skills-lock.json")).unwrap())
            .unwrap();
    let digest_of = |index: &Value, name: &str| {
        index["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["digest"].clone())
            .unwrap()
    };
    assert_eq!(
        lock["skills"]["deploy-helper"]["wellKnownDigest"],
        digest_of(&index, "deploy-helper"),
        "{lock}"
    );

    // A new version: the index digest changes, and `skills update` installs it.
    let mut changed = deploy.to_vec();
    changed[1].1 = "#!/bin/sh\necho deploy v2\n".to_owned();
    let (status, body) = api
        .publish(
            Some(ADMIN),
            "acme",
            "deploy-helper",
            "1.1.0",
            archive(&changed),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, after) = api.get("/s/acme/.well-known/agent-skills/index.json").await;
    assert_ne!(
        digest_of(&after, "deploy-helper"),
        digest_of(&index, "deploy-helper")
    );
    assert_eq!(digest_of(&after, "hello"), digest_of(&index, "hello"));
    let (code, out) = skills_cli(&project, &home, &["update", "-p", "-y"]).await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read(installed("deploy-helper").join("scripts/run.sh")).unwrap(),
        b"#!/bin/sh\necho deploy v2\n",
        "{out}"
    );

    // `skills find`, pointed at the registry, searches its index.
    server.registry.index().catch_up_search().await.unwrap();
    let (code, out) = skills_cli_with(
        &project,
        &home,
        &["find", "deploy"],
        &[("SKILLS_API_URL", &base)],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("{base}/s/acme@deploy-helper")),
        "{out}"
    );
    assert!(!out.contains("elsewhere"), "{out}");

    // One skill by its own index, into a second project.
    let second = tmp.path().join("second");
    std::fs::create_dir_all(&second).unwrap();
    let (code, out) = skills_cli(
        &second,
        &home,
        &[
            "add",
            &format!("{base}/s/other/elsewhere"),
            "-y",
            "--agent",
            "codex",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let only: Vec<String> = std::fs::read_dir(second.join(".agents/skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(only, ["elsewhere"]);
}

#[tokio::test]
async fn discovery_indexes_follow_what_the_caller_may_see() {
    let server = TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            index_json_max_skills: 2,
            ..Config::default()
        })
        .start()
        .await;
    let api = Api::new(&server);
    for (ns, name) in [("acme", "one"), ("acme", "two"), ("hidden", "three")] {
        let body = tar_gz(&[(
            "SKILL.md",
            tar::EntryType::Regular,
            md(name, "x").as_bytes(),
        )]);
        api.publish(Some(ADMIN), ns, name, "1.0.0", body).await;
    }
    api.send(
        reqwest::Method::POST,
        "/v1/namespaces/hidden/private",
        Some(ADMIN),
        None,
    )
    .await;
    // The whole catalog the anonymous caller sees fits under the limit; a private namespace's
    // index answers as an unknown one.
    let (status, all) = api.get("/.well-known/agent-skills/index.json").await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["skills"].as_array().unwrap().len(), 2, "{all}");
    let (_, hidden) = api
        .get("/s/hidden/.well-known/agent-skills/index.json")
        .await;
    assert_eq!(hidden["skills"], serde_json::json!([]), "{hidden}");
    let (status, unknown) = api
        .get("/s/hidden/three/.well-known/agent-skills/index.json")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    // Over the limit, the index is refused with a way forward.
    let (status, admin_view) = api
        .send(
            reqwest::Method::GET,
            "/.well-known/agent-skills/index.json",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{admin_view}");
    assert!(
        admin_view["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/s/<namespace>"),
        "{admin_view}"
    );
    // Each single-file entry's digest is the SKILL.md's, as served.
    let entry = &all["skills"][0];
    let served = reqwest::get(format!(
        "{}{}",
        server.base(),
        entry["url"].as_str().unwrap()
    ))
    .await
    .unwrap()
    .bytes()
    .await
    .unwrap();
    assert_eq!(
        entry["digest"],
        format!("sha256:{}", crate::common::sha256_hex(&served))
    );
}
