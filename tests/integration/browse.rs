//! Large-catalog browsing: resource templates and completion, the search_skills tool and its
//! ranking quality on the real corpus, skill://index.json (full and partial), FastMCP's
//! `_manifest`, with a raw client on both eras and with the official TypeScript client and
//! FastMCP.

use skillreg::core::Visibility;
use std::collections::HashMap;
use std::path::Path;

use crate::common::{self, Legacy, Modern, TestServer, corpus_catalog, tools};
use serde_json::{Value, json};
use skillreg::Registry;
use skillreg::config::Config;
use skillreg::core::{InputFile, Namespace, SkillRef, SkillVersion, VersionRef};

fn complete(template: &str, argument: &str, value: &str, context: Option<Value>) -> Value {
    let mut params = json!({"ref": {"type": "ref/resource", "uri": template}, "argument": {"name": argument, "value": value}});
    if let Some(c) = context {
        params["context"] = json!({ "arguments": c });
    }
    params
}

fn values(resp: &Value) -> Vec<String> {
    resp["result"]["completion"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("{resp}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

const SKILL_T: &str = "skill://{namespace}/{name}/SKILL.md";
const FILE_T: &str = "skill://{namespace}/{name}/{+path}";
const PINNED_T: &str = "skill://{namespace}/@{version}/{name}/SKILL.md";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_and_completion_on_both_eras() {
    let (dir, count) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .start()
        .await;
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    for era in ["modern", "legacy"] {
        let call = async |method: &str, params: Value| match era {
            "modern" => modern.call(method, params).await,
            _ => legacy.call(method, params).await,
        };
        let templates = call("resources/templates/list", json!({})).await;
        let uris: Vec<&str> = templates["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["uriTemplate"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                SKILL_T,
                FILE_T,
                PINNED_T,
                "skill://{namespace}/@{version}/{name}/{+path}"
            ],
            "{era}"
        );

        // namespace, by prefix; the empty prefix lists every namespace.
        let all = call(
            "completion/complete",
            complete(SKILL_T, "namespace", "", None),
        )
        .await;
        let mut got = values(&all);
        got.sort();
        assert_eq!(got, ["corpus", "skillreg"], "{era}");
        assert_eq!(
            values(
                &call(
                    "completion/complete",
                    complete(SKILL_T, "namespace", "sk", None)
                )
                .await
            ),
            ["skillreg"]
        );

        // name within a namespace (context) and across namespaces (no context).
        let within = call(
            "completion/complete",
            complete(SKILL_T, "name", "fin", Some(json!({"namespace": "corpus"}))),
        )
        .await;
        let within = values(&within);
        assert!(
            within.contains(&"find-bugs".to_owned())
                && within.contains(&"finishing-a-development-branch".to_owned()),
            "{within:?}"
        );
        assert!(!within.contains(&"finding-skills".to_owned()), "{within:?}");
        let across = values(
            &call(
                "completion/complete",
                complete(SKILL_T, "name", "fin", None),
            )
            .await,
        );
        assert!(
            across.contains(&"finding-skills".to_owned())
                && across.contains(&"find-bugs".to_owned()),
            "{across:?}"
        );
        // Exact match first.
        let exact = values(
            &call(
                "completion/complete",
                complete(SKILL_T, "name", "commit", None),
            )
            .await,
        );
        assert_eq!(exact[0], "commit");

        // At most 100 values, with total and hasMore.
        let many = call("completion/complete", complete(SKILL_T, "name", "", None)).await;
        let c = &many["result"]["completion"];
        assert_eq!(c["values"].as_array().unwrap().len(), 100, "{era}");
        assert_eq!(c["total"].as_u64().unwrap() as usize, count, "{era}");
        assert_eq!(c["hasMore"], true);
        let few = call(
            "completion/complete",
            complete(
                SKILL_T,
                "name",
                "expo-d",
                Some(json!({"namespace": "corpus"})),
            ),
        )
        .await;
        assert_eq!(few["result"]["completion"]["hasMore"], false, "{few}");
        assert_eq!(few["result"]["completion"]["total"], 4, "{few}");

        // path within a resolved skill; version of a resolved skill.
        let paths = values(
            &call(
                "completion/complete",
                complete(
                    FILE_T,
                    "path",
                    "ref",
                    Some(json!({"namespace": "skillreg", "name": "finding-skills"})),
                ),
            )
            .await,
        );
        assert_eq!(paths, ["references/uri-scheme.md"]);
        let versions = values(
            &call(
                "completion/complete",
                complete(
                    PINNED_T,
                    "version",
                    "",
                    Some(json!({"namespace": "skillreg", "name": "finding-skills"})),
                ),
            )
            .await,
        );
        assert_eq!(versions, ["0.1.0"]);
        // Without the context a path needs, no values (not an error).
        assert_eq!(
            values(&call("completion/complete", complete(FILE_T, "path", "", None)).await),
            Vec::<String>::new()
        );

        // Unknown templates and variables are invalid params.
        let bad = call(
            "completion/complete",
            complete("skill://{x}", "x", "", None),
        )
        .await;
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
        let bad = call("completion/complete", complete(SKILL_T, "path", "", None)).await;
        assert_eq!(bad["error"]["code"], -32602, "{bad}");

        // A resolved template URI reads like any skill.
        let read = call(
            "resources/read",
            json!({"uri": "skill://corpus/commit/SKILL.md"}),
        )
        .await;
        assert!(
            read["result"]["contents"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("---")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_json_full_and_partial_and_fastmcp_manifest() {
    let (dir, count) = corpus_catalog().await;
    let full = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .start()
        .await;
    let modern = Modern::new(&full.url);
    let index = modern
        .call("resources/read", json!({"uri": "skill://index.json"}))
        .await;
    let content = &index["result"]["contents"][0];
    assert_eq!(content["mimeType"], "application/json");
    let body: Value = serde_json::from_str(content["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        body["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let skills = body["skills"].as_array().unwrap();
    let md: Vec<&Value> = skills.iter().filter(|s| s["type"] == "skill-md").collect();
    assert_eq!(md.len(), count, "every skill while the catalog is small");
    assert!(
        md.iter()
            .all(|s| s["url"].as_str().unwrap().ends_with("/SKILL.md")
                && s["name"].is_string()
                && s["description"].is_string())
    );
    let templates: Vec<&str> = skills
        .iter()
        .filter(|s| s["type"] == "mcp-resource-template")
        .map(|s| s["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        [SKILL_T, PINNED_T],
        "template entries equal the registered templates"
    );
    let listed = modern.call("resources/list", json!({})).await;
    assert_eq!(
        listed["result"]["resources"][0]["uri"],
        "skill://index.json"
    );
    drop(full);

    let partial = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .config(Config {
            index_json_max_skills: 10,
            ..Config::default()
        })
        .start()
        .await;
    let index = Modern::new(&partial.url)
        .call("resources/read", json!({"uri": "skill://index.json"}))
        .await;
    let body: Value =
        serde_json::from_str(index["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    let skills = body["skills"].as_array().unwrap();
    assert_eq!(
        skills.iter().filter(|s| s["type"] == "skill-md").count(),
        10,
        "bounded"
    );
    assert_eq!(
        skills
            .iter()
            .filter(|s| s["type"] == "mcp-resource-template")
            .count(),
        2,
        "templates stay"
    );
    drop(partial);

    // FastMCP's manifest shape, for current and pinned URIs; a real `_manifest` file wins.
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .start()
        .await;
    let modern = Modern::new(&server.url);
    for uri in [
        "skill://skillreg/finding-skills/_manifest",
        "skill://skillreg/@0.1.0/finding-skills/_manifest",
    ] {
        let read = modern.call("resources/read", json!({"uri": uri})).await;
        let manifest: Value =
            serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(manifest["skill"], "finding-skills");
        let paths: Vec<&str> = manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, ["SKILL.md", "references/uri-scheme.md"]);
        assert!(
            manifest["files"][0]["hash"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
        assert!(manifest["files"][0]["size"].as_u64().unwrap() > 0);
    }
    let files = vec![
        InputFile::regular(
            "SKILL.md",
            "---\nname: owns-manifest\ndescription: d\n---\n",
        ),
        InputFile::regular("_manifest", "my own file"),
    ];
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
    let read = modern
        .call(
            "resources/read",
            json!({"uri": "skill://acme/owns-manifest/_manifest"}),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "my own file");
}

/// Queries written from what a skill is for, in plain words, and the skill they should find.
const QUERIES: &[(&str, &str)] = &[
    (
        "find the root cause of a failing test before proposing a fix",
        "systematic-debugging",
    ),
    (
        "write the failing test first, then the implementation code",
        "test-driven-development",
    ),
    (
        "generate user-facing release notes from git commit history",
        "changelog-generator",
    ),
    ("publish my web app to vercel", "deploy-to-vercel"),
    (
        "draft a conventional commit message for my changes",
        "commit",
    ),
    (
        "make animated gifs that fit slack's limits",
        "slack-gif-creator",
    ),
    (
        "build a model context protocol server that wraps an external API",
        "mcp-builder",
    ),
    (
        "find N+1 queries and slow ORM access in django views",
        "django-perf-review",
    ),
    (
        "check github actions workflows for injection vulnerabilities",
        "gha-security-review",
    ),
    (
        "turn chat notes and decisions into wiki pages in notion",
        "notion-knowledge-capture",
    ),
    (
        "prepare an agenda and pre-read for an upcoming meeting using notion",
        "notion-meeting-intelligence",
    ),
    (
        "generative art with p5.js and seeded randomness",
        "algorithmic-art",
    ),
    (
        "drive a local web application in a browser with playwright to test it",
        "webapp-testing",
    ),
    (
        "upgrade to a newer expo sdk version and fix dependency issues",
        "expo-upgrade",
    ),
    (
        "set up tailwind css styling in an expo app with nativewind",
        "expo-tailwind-setup",
    ),
    (
        "respond to review comments on the open pull request of my branch",
        "gh-address-comments",
    ),
    (
        "write a technical design document for a new feature",
        "technical-design-doc-creator",
    ),
    (
        "run several independent tasks at the same time with parallel agents",
        "dispatching-parallel-agents",
    ),
    (
        "isolate feature work from the current workspace in a separate git checkout",
        "using-git-worktrees",
    ),
    (
        "apply a consistent color palette and fonts theme to slides and documents",
        "theme-factory",
    ),
    (
        "submit my app to the ios app store and google play",
        "eas-app-stores",
    ),
    (
        "scan an agent skill for prompt injection and other security issues",
        "skill-scanner",
    ),
    (
        "co-author documentation with the user through a structured workflow",
        "doc-coauthoring",
    ),
    ("make a concise plan for a coding task", "create-plan"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_skills_by_purpose_on_the_real_corpus() {
    let (dir, _) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .start()
        .await;
    let mut misses = Vec::new();
    for (query, expected) in QUERIES {
        let hits = server
            .registry
            .reads()
            .search(
                &Visibility::All,
                query,
                Some(&Namespace::new("corpus").unwrap()),
                3,
            )
            .await
            .unwrap();
        let names: Vec<&str> = hits.iter().map(|h| h.skill.name.as_str()).collect();
        if !names.contains(expected) {
            misses.push(format!("{query:?}: wanted {expected}, got {names:?}"));
        }
    }
    assert!(
        misses.is_empty(),
        "{} of {} queries missed:\n{}",
        misses.len(),
        QUERIES.len(),
        misses.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tool_ranks_status_and_survives_any_input() {
    let server = TestServer::builder().page_size(100).start().await;
    let ns = Namespace::new("acme").unwrap();
    for name in ["pdf-active", "pdf-deprecated", "pdf-yanked"] {
        let md = format!(
            "---\nname: {name}\ndescription: Extract text and tables from PDF files.\n---\n# PDF\n"
        );
        server
            .registry
            .publisher()
            .publish(common::publish_request(
                &ns,
                vec![InputFile::regular("SKILL.md", md)],
                Some(SkillVersion::parse("1.0.0").unwrap()),
            ))
            .await
            .unwrap();
    }
    let admin = skillreg::core::Principal::Admin;
    server
        .registry
        .trust()
        .set_deprecated(
            &admin,
            &SkillRef::parse("acme", "pdf-deprecated").unwrap(),
            Some("use pdf-active"),
        )
        .await
        .unwrap();
    server
        .registry
        .trust()
        .set_yanked(
            &admin,
            &VersionRef::parse("acme", "pdf-yanked", "1.0.0").unwrap(),
            Some("broken"),
        )
        .await
        .unwrap();
    server.registry.index().catch_up_search().await.unwrap();

    let modern = Modern::new(&server.url);
    let tools = modern.call("tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"][0]["name"], "search_skills");
    assert_eq!(
        tools["result"]["tools"][0]["annotations"]["readOnlyHint"],
        true
    );
    let resp = modern
        .call(
            "tools/call",
            json!({"name": "search_skills", "arguments": {"query": "extract tables from pdf"}}),
        )
        .await;
    let hits = resp["result"]["structuredContent"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{resp}"));
    let order: Vec<(&str, &str)> = hits
        .iter()
        .map(|h| (h["name"].as_str().unwrap(), h["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        order,
        [
            ("pdf-active", "active"),
            ("pdf-deprecated", "deprecated"),
            ("pdf-yanked", "yanked")
        ]
    );
    assert_eq!(hits[1]["deprecation"], "use pdf-active");
    assert_eq!(hits[0]["uri"], "skill://acme/pdf-active/SKILL.md");
    // The declared schemas describe what is sent, as an independent validator reads them.
    let tool = &tools["result"]["tools"][0];
    let content = &resp["result"]["structuredContent"];
    common::check_json_schema(&tool["outputSchema"], content).unwrap();
    common::check_json_schema(&tool["inputSchema"], &json!({"query": "pdf", "limit": 3})).unwrap();
    let mut bogus = content.clone();
    bogus["hits"][0]["status"] = json!("bogus");
    assert!(common::check_json_schema(&tool["outputSchema"], &bogus).is_err());
    assert!(common::check_json_schema(&tool["inputSchema"], &json!({"limit": 3})).is_err());

    // Query syntax typed wrongly is plain text: never an error.
    for query in [
        "\"unbalanced",
        "-",
        "*",
        "pdf AND",
        "name:",
        "(((",
        "\\",
        "pdf^2 ~ ]",
        "🙂 pdf",
        "NOT",
        "a:b:c \"x",
    ] {
        let resp = modern
            .call(
                "tools/call",
                json!({"name": "search_skills", "arguments": {"query": query}}),
            )
            .await;
        assert!(
            resp["result"]["structuredContent"]["hits"].is_array(),
            "{query:?}: {resp}"
        );
        let rest = reqwest::Client::new()
            .get(format!("{}/v1/search", server.base()))
            .query(&[("q", query)])
            .send()
            .await
            .unwrap();
        assert_eq!(rest.status(), 200, "{query:?}");
    }
    let resp = modern
        .call(
            "tools/call",
            json!({"name": "search_skills", "arguments": {"query": "pdf", "limit": 500}}),
        )
        .await;
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    let resp = modern
        .call("tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
    let scoped = modern
        .call(
            "tools/call",
            json!({"name": "search_skills", "arguments": {"query": "pdf", "namespace": "other"}}),
        )
        .await;
    assert_eq!(scoped["result"]["structuredContent"]["hits"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_rebuilt_from_sqlite_matches_the_live_one() {
    let (dir, count) = corpus_catalog().await;
    let (live_docs, live_hits) = {
        let server = TestServer::builder()
            .data_dir(dir.path())
            .page_size(100)
            .start()
            .await;
        // Change the catalog after the first build, so the live index saw updates.
        let admin = skillreg::core::Principal::Admin;
        server
            .registry
            .trust()
            .set_deprecated(
                &admin,
                &SkillRef::parse("corpus", "commit").unwrap(),
                Some("old"),
            )
            .await
            .unwrap();
        server
            .registry
            .trust()
            .set_yanked(
                &admin,
                &VersionRef::parse("corpus", "create-plan", "0.1.0").unwrap(),
                Some("x"),
            )
            .await
            .unwrap();
        server.registry.index().catch_up_search().await.unwrap();
        let docs = documents(&server.registry);
        let mut hits = Vec::new();
        for (q, _) in QUERIES {
            hits.push(
                server
                    .registry
                    .reads()
                    .search(&Visibility::All, q, None, 10)
                    .await
                    .unwrap(),
            );
        }
        server.registry.close().await;
        (docs, hits)
    };
    assert_eq!(live_docs.len(), count);
    assert!(live_docs.contains(&"skill://corpus/commit/SKILL.md 0.1.0 Deprecated".to_owned()));
    assert!(live_docs.contains(&"skill://corpus/create-plan/SKILL.md 0.1.0 Yanked".to_owned()));

    // `close` released the index: it can be removed and rebuilt by a new owner at once.
    std::fs::remove_dir_all(skillreg::registry::search_dir(dir.path())).unwrap();
    let rebuilt = Registry::builder(dir.path()).search().open().await.unwrap();
    rebuilt.index().catch_up_search().await.unwrap();
    assert_eq!(documents(&rebuilt), live_docs, "the same documents");
    for ((query, _), before) in QUERIES.iter().zip(&live_hits) {
        let after = rebuilt
            .reads()
            .search(&Visibility::All, query, None, 10)
            .await
            .unwrap();
        // tantivy's BM25 statistics (field-norm buckets, average lengths) differ in the last
        // digits between an updated and a fresh index, which can swap near-tied tail hits.
        let ranking = |hits: &[skillreg::registry::SearchHit]| {
            hits.iter()
                .map(|h| format!("{} {:?}", h.uri(), h.status))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ranking(&after)[..3],
            ranking(before)[..3],
            "{query}: the same top 3"
        );
        for a in &after {
            if let Some(b) = before.iter().find(|b| b.skill == a.skill) {
                assert!(
                    (a.score - b.score).abs() <= 0.02 * b.score,
                    "{query}: {} scored {} live, {} rebuilt",
                    a.uri(),
                    b.score,
                    a.score
                );
            }
        }
    }
}

/// Every indexed document as "uri version status", ordered.
fn documents(registry: &Registry) -> Vec<String> {
    registry
        .index()
        .search_documents()
        .unwrap()
        .into_iter()
        .map(|(uri, version, status)| format!("{uri} {version} {status:?}"))
        .collect()
}

async fn run(cmd: &mut tokio::process::Command) -> (i32, String, String) {
    cmd.kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), cmd.output())
        .await
        .expect("client finished")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_clients_browse_search_and_read_manifests() {
    let t = tools();
    let (dir, count) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .start()
        .await;
    let script = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/clients")
            .join(name)
    };
    let common_args = [
        "--url",
        &server.url,
        "--namespace",
        "corpus",
        "--name",
        "commit",
        "--query",
        "draft a conventional commit message",
    ];

    for era in ["auto", "legacy"] {
        let (code, out, err) = run(tokio::process::Command::new(&t.node22)
            .arg(script("ts_browse.mjs"))
            .args(common_args)
            .args(["--era", era])
            .env("SKILLREG_TOOLS", &t.dir))
        .await;
        assert_eq!(code, 0, "TS ({era}): {err}");
        let r: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(
            r["era"],
            if era == "auto" {
                "2026-07-28"
            } else {
                "2025-11-25"
            }
        );
        assert_eq!(r["templates"].as_array().unwrap().len(), 4);
        assert_eq!(r["completion"]["namespace"]["values"], json!(["corpus"]));
        assert_eq!(
            r["completion"]["nameInNamespace"]["values"][0], "commit",
            "{}",
            r["completion"]
        );
        assert!(
            r["completion"]["nameAnywhere"]["values"]
                .as_array()
                .unwrap()
                .contains(&json!("commit"))
        );
        assert_eq!(r["completion"]["path"]["values"], json!(["SKILL.md"]));
        assert_eq!(r["completion"]["version"]["values"], json!(["0.1.0"]));
        assert_eq!(r["resolved"]["uri"], "skill://corpus/commit/SKILL.md");
        assert_eq!(r["resolved"]["mimeType"], "text/markdown");
        assert_eq!(r["resolved"]["startsWithFrontmatter"], true);
        assert_eq!(r["tools"], json!(["search_skills"]));
        assert_eq!(r["search"]["isError"], false);
        assert_eq!(
            r["search"]["hits"][0]["uri"], "skill://corpus/commit/SKILL.md",
            "{}",
            r["search"]
        );
        let md = r["index"]["skills"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["type"] == "skill-md")
            .count();
        assert_eq!(md, count);
    }

    let (code, out, err) = run(tokio::process::Command::new(&t.python)
        .arg(script("fastmcp_browse.py"))
        .args(common_args))
    .await;
    assert_eq!(code, 0, "FastMCP: {err}");
    let r: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(r["templates"].as_array().unwrap().len(), 4);
    assert_eq!(r["completion"]["namespace"]["values"], json!(["corpus"]));
    assert_eq!(r["completion"]["nameInNamespace"]["values"][0], "commit");
    assert_eq!(r["search"]["hits"][0]["name"], "commit", "{}", r["search"]);
    assert_eq!(
        r["index"]["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    // FastMCP's own get_skill_manifest() reads skill://corpus/commit/_manifest.
    assert_eq!(r["manifest"]["skill"], "commit");
    let files = r["manifest"]["files"].as_array().unwrap();
    assert_eq!(files[0]["path"], "SKILL.md");
    let listed = Modern::new(&server.url)
        .call(
            "skills/get",
            json!({"uri": "skill://corpus/commit/SKILL.md"}),
        )
        .await;
    let resources: HashMap<String, (String, u64)> = listed["result"]["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uri"]
                    .as_str()
                    .unwrap()
                    .replace("skill://corpus/commit/", ""),
                (
                    r["digest"].as_str().unwrap().to_owned(),
                    r["size"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    for f in files {
        let (digest, size) = &resources[f["path"].as_str().unwrap()];
        assert_eq!(
            (f["hash"].as_str().unwrap(), f["size"].as_u64().unwrap()),
            (digest.as_str(), *size)
        );
    }
}
