//! Requirements (`metadata.dev.skillreg/requires`): checked at publish, served over MCP and
//! REST, and installed as one graph by `skillreg add`, `update` and `remove`, against a real
//! server on loopback.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{CliOutput, Modern, admin_server, run_cli_async, tar_gz};
use crate::consumers::files_under;
use crate::install::sr;
use crate::rest::{ADMIN, Api, code};

/// A SKILL.md that requires `requires` (and expects `mcp`, when given).
fn md(name: &str, version: &str, requires: &str, mcp: &str) -> String {
    let mut metadata = String::new();
    if !requires.is_empty() {
        metadata.push_str(&format!("  dev.skillreg/requires: \"{requires}\"\n"));
    }
    if !mcp.is_empty() {
        metadata.push_str(&format!("  dev.skillreg/requires-mcp: \"{mcp}\"\n"));
    }
    let metadata = if metadata.is_empty() {
        String::new()
    } else {
        format!("metadata:\n{metadata}")
    };
    format!(
        "---\nname: {name}\ndescription: The {name} skill, for tests.\n{metadata}---\n# {name} {version}\n"
    )
}

async fn publish_as(
    api: &Api,
    ns: &str,
    name: &str,
    version: &str,
    requires: &str,
) -> (StatusCode, Value) {
    let md = md(name, version, requires, "");
    let extra = format!("notes for {name} {version}\n");
    let body = tar_gz(&[
        ("SKILL.md", tar::EntryType::Regular, md.as_bytes()),
        ("notes.md", tar::EntryType::Regular, extra.as_bytes()),
    ]);
    api.publish(Some(ADMIN), ns, name, version, body).await
}

async fn publish(api: &Api, name: &str, version: &str, requires: &str) {
    let (status, body) = publish_as(api, "acme", name, version, requires).await;
    assert_eq!(status, StatusCode::CREATED, "{name} {version}: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_refuses_a_graph_it_cannot_meet_and_stores_nothing() {
    let server = admin_server().await;
    let api = Api::new(&server);
    publish(&api, "base", "1.0.0", "").await;
    publish(&api, "mid", "1.0.0", "acme/base@^1").await;
    publish(&api, "top", "1.0.0", "acme/mid@^1").await;

    // A cycle through the current versions: base -> top -> mid -> base.
    let (status, body) = publish_as(&api, "acme", "base", "1.1.0", "acme/top").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(code(&body), "dependency_cycle");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("acme/base -> acme/top -> acme/mid -> acme/base"),
        "{message}"
    );
    // Unknown, unsatisfiable, and malformed: each named, each a code of its own.
    for (requires, expected, needle) in [
        (
            "acme/ghost@^1",
            "dependency_not_found",
            "no skill acme/ghost",
        ),
        (
            "acme/base@^2",
            "dependency_unsatisfiable",
            "installable: 1.0.0",
        ),
        ("acme/base@^x", "requires_invalid", "acme/base@^x"),
    ] {
        let (status, body) = publish_as(&api, "acme", "other", "1.0.0", requires).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(code(&body), expected, "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(needle),
            "{body}"
        );
    }
    // A public skill may not require a private one; a skill of the private namespace may.
    let (status, _) = publish_as(&api, "hidden", "secret", "1.0.0", "").await;
    assert_eq!(status, StatusCode::CREATED);
    api.send(
        Method::POST,
        "/v1/namespaces/hidden/private",
        Some(ADMIN),
        None,
    )
    .await;
    let (status, body) = publish_as(&api, "acme", "leaky", "1.0.0", "hidden/secret").await;
    assert_eq!(code(&body), "dependency_not_visible", "{status} {body}");
    let (status, body) = publish_as(&api, "hidden", "inner", "1.0.0", "hidden/secret").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Nothing refused was stored.
    for path in [
        "/v1/skills/acme/other",
        "/v1/skills/acme/leaky",
        "/v1/skills/acme/base/1.1.0",
    ] {
        assert_eq!(api.get(path).await.0, StatusCode::NOT_FOUND, "{path}");
    }

    // A yank of a version others need is allowed, and reported with what they resolve to now.
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/skills/acme/base/1.0.0/yank",
            Some(ADMIN),
            Some(json!({"reason": "broken"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "dependents": [{"skill": "acme/mid", "version": "1.0.0", "range": "^1"}]})
    );
    let (_, mid) = api.get("/v1/skills/acme/mid/1.0.0").await;
    assert_eq!(
        mid["requires"],
        json!({"skills": [{"skill": "acme/base", "range": "^1"}], "mcp_servers": []})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requirements_are_served_resolved_now_in_both_directions() {
    let server = admin_server().await;
    let api = Api::new(&server);
    publish(&api, "style", "1.2.0", "").await;
    let md = md(
        "review",
        "1.0.0",
        "acme/style@^1.2",
        "github; postgres https://mcp.example/postgres",
    );
    let (status, body) = api
        .publish(
            Some(ADMIN),
            "acme",
            "review",
            "1.0.0",
            tar_gz(&[("SKILL.md", tar::EntryType::Regular, md.as_bytes())]),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    publish(&api, "plain", "1.0.0", "").await;

    let mcp = Modern::new(&server.url);
    let expected = |resolved: &str| {
        json!({
            "skills": [{"skill": "acme/style", "range": "^1.2", "resolved": resolved,
                        "uri": format!("skill://acme/@{resolved}/style/SKILL.md")}],
            "mcpServers": [{"name": "github"},
                           {"name": "postgres", "registry": "https://mcp.example/postgres"}],
        })
    };
    let get = mcp
        .call("skills/get", json!({"uri": "skill://acme/review/SKILL.md"}))
        .await;
    let meta = &get["result"]["skill"]["_meta"];
    assert_eq!(meta["dev.skillreg/requires"], expected("1.2.0"), "{get}");
    // The scan stays last; skills without requirements carry no such member.
    let keys: Vec<&String> = meta.as_object().unwrap().keys().collect();
    assert_eq!(
        keys.last().unwrap().as_str(),
        "dev.skillreg/scan",
        "{keys:?}"
    );
    let list = mcp.call("skills/list", json!({})).await;
    let by_name = |name: &str| {
        list["result"]["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["frontmatter"]["name"] == name)
            .unwrap()["_meta"]
            .clone()
    };
    assert_eq!(
        by_name("review")["dev.skillreg/requires"],
        expected("1.2.0")
    );
    assert!(by_name("plain").get("dev.skillreg/requires").is_none());

    // A newer version of what it requires: served at once as what it resolves to.
    publish(&api, "style", "1.3.0", "").await;
    let get = mcp
        .call("skills/get", json!({"uri": "skill://acme/review/SKILL.md"}))
        .await;
    assert_eq!(
        get["result"]["skill"]["_meta"]["dev.skillreg/requires"],
        expected("1.3.0")
    );
    let list = mcp.call("skills/list", json!({})).await;
    let review = list["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["frontmatter"]["name"] == "review")
        .unwrap();
    assert_eq!(review["_meta"]["dev.skillreg/requires"], expected("1.3.0"));

    // REST: what it needs on the version, what needs it on the skill.
    let (_, version) = api.get("/v1/skills/acme/review/1.0.0").await;
    assert_eq!(version["requires"]["skills"][0]["resolved"], "1.3.0");
    let (_, style) = api.get("/v1/skills/acme/style").await;
    assert_eq!(
        style["required_by"],
        json!([{"skill": "acme/review", "version": "1.0.0", "range": "^1.2", "resolved": "1.3.0"}])
    );
    // The well-known index names what it requires, and where each is installed from.
    let (_, index) = api
        .get("/s/acme/review/.well-known/agent-skills/index.json")
        .await;
    assert_eq!(
        index["skills"][0]["requires"],
        json!([{"skill": "acme/style", "range": "^1.2", "resolved": "1.3.0",
                "index": "/s/acme/style/.well-known/agent-skills/index.json"}])
    );
    let (_, plain) = api
        .get("/s/acme/plain/.well-known/agent-skills/index.json")
        .await;
    assert!(plain["skills"][0].get("requires").is_none(), "{plain}");
    // The web page shows both directions.
    let page = reqwest::get(format!("{}/skills/acme/style", server.base()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Required by"), "{page}");
    assert!(page.contains("acme/review"), "{page}");
    let page = reqwest::get(format!("{}/skills/acme/review", server.base()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Requires"), "{page}");
    assert!(page.contains("github"), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_installs_a_three_level_graph_updates_it_as_one_and_removes_what_is_unneeded() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let source = format!("{}/mcp", server.base());
    // app -> (ui, data); ui -> core ^1; data -> core >=1.1; core has 1.0, 1.1, 2.0.
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        publish(&api, "core", v, "").await;
    }
    publish(&api, "ui", "1.0.0", "acme/core@^1").await;
    publish(&api, "data", "1.0.0", "acme/core@>=1.1").await;
    publish(&api, "app", "1.0.0", "acme/ui@^1; acme/data@^1").await;

    let project = TempDir::new().unwrap();
    let p = project.path();
    let out = sr(
        p,
        &[
            "add",
            "acme/app",
            "--from",
            &source,
            "--agent",
            "claude-code",
            "--agent",
            "codex",
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    // Every member, byte for byte, in both agents' folders; core at the one version both allow.
    for dir in [".agents/skills", ".claude/skills"] {
        for (name, version) in [
            ("app", "1.0.0"),
            ("ui", "1.0.0"),
            ("data", "1.0.0"),
            ("core", "1.1.0"),
        ] {
            let files = files_under(&p.join(dir).join(name));
            let (_, want) = api.get(&format!("/v1/skills/acme/{name}/{version}")).await;
            let want_md = reqwest::get(format!(
                "{}/v1/skills/acme/{name}/{version}/files/SKILL.md",
                server.base()
            ))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
            assert_eq!(files["SKILL.md"], want_md.to_vec(), "{dir}/{name}");
            assert_eq!(files.len() as u64, want["file_count"].as_u64().unwrap());
            assert_eq!(
                files["notes.md"],
                format!("notes for {name} {version}\n").into_bytes()
            );
        }
    }
    let lock = std::fs::read_to_string(p.join("skills.lock")).unwrap();
    let entry = |lock: &str, path: &str| -> String {
        let at = lock
            .find(&format!("path = \"{path}\""))
            .unwrap_or_else(|| panic!("{path} in {lock}"));
        lock[at..].split("[[skill]]").next().unwrap().to_owned()
    };
    let core = entry(&lock, "acme/core");
    assert!(core.contains("version = \"1.1.0\""), "{core}");
    assert!(core.contains("dependency = true"), "{core}");
    assert!(
        core.contains("required_by = [\"acme/data\", \"acme/ui\"]"),
        "{core}"
    );
    assert!(!entry(&lock, "acme/app").contains("dependency"), "{lock}");

    // `install --frozen` into a fresh checkout installs the graph exactly.
    let copy = TempDir::new().unwrap();
    std::fs::copy(p.join("skills.lock"), copy.path().join("skills.lock")).unwrap();
    let out = sr(copy.path(), &["install", "--frozen"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        files_under(&copy.path().join(".claude/skills/core"))["notes.md"],
        b"notes for core 1.1.0\n".to_vec()
    );

    // A new core 1.2.0: outdated says the graph wants it, and update moves the one shared
    // dependency, and nothing else.
    publish(&api, "core", "1.2.0", "").await;
    let out = sr(p, &["outdated", "--json"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let rows: Value = serde_json::from_str(&out.stdout).unwrap();
    let row = |path: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == path)
            .unwrap()
            .clone()
    };
    assert_eq!(row("acme/core")["wanted"], "1.2.0", "{rows}");
    assert_eq!(row("acme/core")["latest"], "2.0.0", "{rows}");
    assert_eq!(row("acme/core")["update_available"], true);
    assert_eq!(row("acme/ui")["update_available"], false);
    let out = sr(p, &["update"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lock = std::fs::read_to_string(p.join("skills.lock")).unwrap();
    assert!(
        entry(&lock, "acme/core").contains("version = \"1.2.0\""),
        "{lock}"
    );
    assert!(out.stdout.contains("acme/core"), "{}", out.stdout);
    assert!(!out.stdout.contains("acme/ui"), "{}", out.stdout);
    assert_eq!(
        files_under(&p.join(".agents/skills/core"))["notes.md"],
        b"notes for core 1.2.0\n".to_vec()
    );

    // A dependency another skill needs cannot be removed alone.
    let out = sr(p, &["remove", "acme/core"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("still_required"), "{}", out.stderr);
    // Removing the top removes everything only it needed.
    let out = sr(p, &["remove", "acme/app"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lock = std::fs::read_to_string(p.join("skills.lock")).unwrap();
    assert!(!lock.contains("acme/"), "{lock}");
    assert!(!p.join(".claude/skills/core").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_names_both_requirers_of_a_conflict_and_writes_nothing() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let source = format!("{}/mcp", server.base());
    publish(&api, "core", "1.4.0", "").await;
    publish(&api, "core", "2.0.0", "").await;
    publish(&api, "left", "1.0.0", "acme/core@^1").await;
    publish(&api, "right", "1.0.0", "acme/core@^2").await;
    publish(&api, "both", "1.0.0", "acme/left; acme/right").await;
    let project = TempDir::new().unwrap();
    let p = project.path();
    let out = sr(p, &["add", "acme/both", "--from", &source]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("dependency_conflict"), "{}", out.stderr);
    for needle in [
        "acme/left requires ^1",
        "acme/right requires ^2",
        "2.0.0, 1.4.0",
    ] {
        assert!(out.stderr.contains(needle), "{needle}: {}", out.stderr);
    }
    assert!(!p.join("skills.lock").exists());
    assert!(!p.join(".agents").exists());
}

/// `skillreg pack publish <args> --registry <base> --token <token>`.
async fn pack_cli(base: &str, token: &str, args: Vec<String>) -> CliOutput {
    let mut all: Vec<&str> = vec!["pack", "publish"];
    all.extend(args.iter().map(String::as_str));
    all.extend(["--registry", base, "--token", token]);
    run_cli_async(&all, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pack_is_checked_at_publish_and_installed_exactly_by_skillreg_and_npx_skills() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let base = server.base();
    let source = format!("{base}/mcp");
    publish(&api, "core", "1.0.0", "").await;
    publish(&api, "guide", "1.0.0", "acme/core@^1").await;
    publish(&api, "old", "1.0.0", "").await;
    publish(&api, "old", "1.1.0", "").await;
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/skills/acme/old/1.0.0/revoke",
            Some(ADMIN),
            Some(json!({"reason": "leaks a key"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A newer core than the pack names: the pack installs exactly what it names.
    publish(&api, "core", "1.1.0", "").await;
    let (_, packer) = api.token(&["acme"], &["pack"]).await;
    let (_, publisher) = api.token(&["acme"], &["publish"]).await;

    let args = |pack: &str, members: &[&str]| {
        let mut v = vec![pack.to_owned()];
        v.extend(members.iter().map(|m| (*m).to_owned()));
        v
    };
    for (token, pack, members, needle) in [
        (
            &packer,
            "acme/onboarding@1.0.0",
            vec!["acme/old@1.0.0"],
            "pack_member_unavailable",
        ),
        (
            &packer,
            "acme/onboarding@1.0.0",
            vec!["acme/ghost@1.0.0"],
            "pack_member_unavailable",
        ),
        (
            &packer,
            "acme/core@1.0.0",
            vec!["acme/guide@1.0.0"],
            "pack_name_taken",
        ),
        (
            &packer,
            "acme/onboarding@1.0.0",
            vec!["acme/guide@^1"],
            "pack_invalid",
        ),
        (
            &publisher,
            "acme/onboarding@1.0.0",
            vec!["acme/guide@1.0.0"],
            "forbidden",
        ),
    ] {
        let out = pack_cli(&base, token, args(pack, &members)).await;
        assert_ne!(out.code, 0, "{out:?}");
        assert!(out.stderr.contains(needle), "{needle}: {out:?}");
    }
    assert_eq!(api.get("/v1/packs").await.1, json!({"packs": []}));
    let out = pack_cli(
        &base,
        &packer,
        vec![
            "acme/onboarding@1.0.0".into(),
            "acme/guide@1.0.0".into(),
            "acme/core@1.0.0".into(),
            "--description".into(),
            "Day one".into(),
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            "published acme/onboarding 1.0.0  2 members: acme/core@1.0.0, acme/guide@1.0.0"
        ),
        "{}",
        out.stdout
    );
    let (_, packs) = api.get("/v1/packs").await;
    assert_eq!(
        packs["packs"][0]["members"],
        json!(["acme/core@1.0.0", "acme/guide@1.0.0"])
    );
    assert_eq!(
        packs["packs"][0]["uri"],
        "skillreg://packs/acme/onboarding@1.0.0"
    );
    // Published again with other members under the same version: refused; the same: a no-op.
    let out = pack_cli(
        &base,
        &packer,
        args("acme/onboarding@1.0.0", &["acme/core@1.1.0"]),
    )
    .await;
    assert!(out.stderr.contains("version_exists"), "{out:?}");

    // `skillreg add acme/onboarding`: the members at exactly the pack's versions.
    let project = TempDir::new().unwrap();
    let p = project.path();
    let out = sr(p, &["add", "acme/onboarding", "--from", &source]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        files_under(&p.join(".agents/skills/core"))["notes.md"],
        b"notes for core 1.0.0\n".to_vec()
    );
    let lock = std::fs::read_to_string(p.join("skills.lock")).unwrap();
    assert_eq!(
        lock.matches("pack = \"acme/onboarding@1.0.0\"").count(),
        2,
        "{lock}"
    );
    assert!(lock.contains("requested = \"=1.0.0\""), "{lock}");

    // `npx skills add <registry>/p/acme/onboarding`: the same members, byte for byte.
    let tmp = TempDir::new().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let (code, out) = crate::consumers::skills_cli(
        &project,
        &home,
        &[
            "add",
            &format!("{base}/p/acme/onboarding"),
            "-y",
            "--agent",
            "claude-code",
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    for (name, version) in [("core", "1.0.0"), ("guide", "1.0.0")] {
        let files = files_under(&project.join(".claude/skills").join(name));
        assert!(files.contains_key("notes.md"), "{name}: {files:?} {out}");
        assert_eq!(
            files["notes.md"],
            format!("notes for {name} {version}\n").into_bytes(),
            "{out}"
        );
    }
}
