//! Usage counts through a real server: a scripted workload over every counted endpoint (MCP on
//! both eras, REST, ClawHub, `skillreg add`) matches the stats endpoint exactly; counts survive a
//! restart through the shutdown flush; a private skill's stats are unknown without a token; and
//! with counting off nothing is recorded. Replicas summing on PostgreSQL are in `postgres.rs`.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};
use tempfile::TempDir;

use crate::common::{Legacy, Modern, TestServer, run_cli_async, tar_gz};
use crate::rest::{ADMIN, Api};

fn config(counting: bool) -> Config {
    Config {
        admin_token: Some(Secret::new(ADMIN)),
        usage_counting: counting,
        ..Config::default()
    }
}

/// `ns/name` 1.0.0 with a SKILL.md and `refs/a.md`.
async fn publish(api: &Api, ns: &str, name: &str) {
    let md = format!("---\nname: {name}\ndescription: Counted reads.\n---\n# {name}\n");
    let archive = tar_gz(&[
        ("SKILL.md", tar::EntryType::Regular, md.as_bytes()),
        ("refs/a.md", tar::EntryType::Regular, b"ref"),
    ]);
    let (status, body) = api.publish(Some(ADMIN), ns, name, "1.0.0", archive).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

async fn get_status(server: &TestServer, path: &str) -> StatusCode {
    reqwest::get(format!("{}{path}", server.base()))
        .await
        .unwrap()
        .status()
}

/// The workload's requests, each answered: `gets` `skills/get`, `skill_mds` SKILL.md reads and
/// `files` other file reads (split between a 2026 stateless client and a 2025 session, whose
/// reads take the direct path), one directory read (not counted), then 2 REST archives, 1 REST
/// file and 1 ClawHub download.
async fn workload(server: &TestServer, gets: usize, skill_mds: usize, files: usize) {
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    let uri = |path: &str| json!({ "uri": format!("skill://acme/counted/{path}") });
    for i in 0..gets {
        let answer = if i % 2 == 0 {
            modern.call("skills/get", uri("SKILL.md")).await
        } else {
            legacy.call("skills/get", uri("SKILL.md")).await
        };
        assert!(answer["result"]["skill"].is_object(), "{answer}");
    }
    for (count, path) in [(skill_mds, "SKILL.md"), (files, "refs/a.md")] {
        for i in 0..count {
            let answer = if i % 2 == 0 {
                modern.call("resources/read", uri(path)).await
            } else {
                legacy.call("resources/read", uri(path)).await
            };
            assert!(answer["result"]["contents"].is_array(), "{answer}");
        }
    }
    let dir = legacy.call("resources/directory/read", uri("refs")).await;
    assert!(dir["result"].is_object(), "{dir}");
    // Unknown files and skills are answered, and not counted.
    let missing = modern.call("resources/read", uri("nothing.md")).await;
    assert!(missing["error"].is_object(), "{missing}");
    for path in [
        "/v1/skills/acme/counted/1.0.0/archive",
        "/v1/skills/acme/counted/1.0.0/archive",
        "/v1/skills/acme/counted/1.0.0/files/SKILL.md",
        "/api/v1/download?slug=counted&ownerHandle=acme&version=1.0.0",
    ] {
        assert_eq!(get_status(server, path).await, StatusCode::OK, "{path}");
    }
    assert_eq!(
        get_status(server, "/v1/skills/acme/counted/9.9.9/archive").await,
        StatusCode::NOT_FOUND
    );
}

async fn stats(api: &Api, skill: &str, token: Option<&str>) -> (StatusCode, Value) {
    api.send(
        Method::GET,
        &format!("/v1/skills/{skill}/stats"),
        token,
        None,
    )
    .await
}

fn expected(gets: u64, skill_mds: u64, files: u64) -> Value {
    json!({
        "get": gets,
        "skill_md": skill_mds,
        "file": files,
        "archive": 2,
        "well_known": 1,
        "clawhub_install": 1,
        "client_install": 0,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_workload_is_counted_exactly() {
    let server = TestServer::builder().config(config(true)).start().await;
    let api = Api::new(&server);
    publish(&api, "acme", "counted").await;
    publish(&api, "acme", "unread").await;
    workload(&server, 5, 4, 3).await;
    server.registry.usage().flush().await.unwrap();

    let (status, body) = stats(&api, "acme/counted", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["totals"], expected(5, 4, 3), "{body}");
    let days = body["days"].as_array().unwrap();
    assert_eq!(days.len(), 1, "every read was today: {body}");
    assert_eq!(days[0]["date"], body["to"]);
    assert_eq!(days[0]["counts"], expected(5, 4, 3));
    assert_eq!(body["versions"][0]["version"], "1.0.0");
    assert_eq!(body["versions"][0]["counts"], expected(5, 4, 3));

    // A skill nobody read has a series of nothing.
    let (status, body) = stats(&api, "acme/unread", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["days"], json!([]));
    assert_eq!(body["totals"]["get"], 0);

    // ClawHub's counts: downloads are the archive, REST file and ClawHub downloads; installs
    // are ClawHub's (and `skillreg add`'s).
    let (_, item) = api.get("/api/v1/skills/counted?ownerHandle=acme").await;
    assert_eq!(item["skill"]["stats"]["downloads"], 4, "{item}");
    assert_eq!(item["skill"]["stats"]["installsAllTime"], 1, "{item}");
    let (_, list) = api.get("/api/v1/skills?prefix=unread").await;
    assert_eq!(list["items"][0]["stats"]["downloads"], 0, "{list}");

    // The web catalog: totals on the cards, a chart on the skill page.
    let text = |path: &str| {
        let url = format!("{}{path}", server.base());
        async move { reqwest::get(url).await.unwrap().text().await.unwrap() }
    };
    let catalog = text("/").await;
    assert!(catalog.contains("16 reads"), "{catalog}");
    assert!(catalog.contains("0 reads"), "{catalog}");
    let page = text("/skills/acme/counted").await;
    assert!(page.contains(r#"<svg id="usage-chart""#), "{page}");
    assert!(page.contains("16 reads in the last 30 days"), "{page}");

    // A second flush adds to the stored counts.
    workload(&server, 1, 0, 0).await;
    server.registry.usage().flush().await.unwrap();
    let (_, body) = stats(&api, "acme/counted", None).await;
    assert_eq!(body["totals"]["get"], 6, "{body}");
    assert_eq!(body["totals"]["archive"], 4, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skillreg_add_counts_as_an_install() {
    let server = TestServer::builder().config(config(true)).start().await;
    let api = Api::new(&server);
    publish(&api, "acme", "counted").await;
    let project = TempDir::new().unwrap();
    let home = project.path().join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let source = server.url.clone();
    let out = run_cli_async(
        &[
            "add",
            "acme/counted",
            "--from",
            &source,
            "--dir",
            project.path().to_str().unwrap(),
        ],
        &[
            ("HOME", home.to_str().unwrap()),
            ("SKILLREG_REGISTRY", "http://127.0.0.1:9"),
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    server.registry.usage().flush().await.unwrap();
    let (_, body) = stats(&api, "acme/counted", None).await;
    // The install's SKILL.md read counts as the install, its other file as a file read.
    assert_eq!(body["totals"]["client_install"], 1, "{body}");
    assert_eq!(body["totals"]["skill_md"], 0, "{body}");
    assert_eq!(body["totals"]["file"], 1, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_survive_a_restart_through_the_shutdown_flush() {
    let dir = TempDir::new().unwrap();
    let start = || {
        TestServer::builder()
            .data_dir(dir.path())
            .config(Config {
                // Only the shutdown flushes during this test.
                usage_flush_secs: 3600,
                ..config(true)
            })
            .start()
    };
    let server = start().await;
    let api = Api::new(&server);
    publish(&api, "acme", "counted").await;
    publish(&api, "acme", "unread").await;
    workload(&server, 3, 2, 1).await;
    let registry = server.registry.clone();
    drop(server);
    registry.close().await;

    let server = start().await;
    let api = Api::new(&server);
    let (status, body) = stats(&api, "acme/counted", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["totals"], expected(3, 2, 1), "{body}");

    // `skillreg stats`: every skill, most read first; `--unused` those nobody read.
    let data_dir = dir.path().to_str().unwrap();
    let out = run_cli_async(&["stats", "--data-dir", data_dir, "--json"], &[]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    assert_eq!(lines[0]["skill"], "acme/counted");
    assert_eq!(lines[0]["total"], 3 + 2 + 1 + 2 + 1 + 1);
    assert_eq!(lines[0]["counts"], expected(3, 2, 1));
    assert_eq!(lines[1]["skill"], "acme/unread");
    assert_eq!(lines[1]["total"], 0);
    let out = run_cli_async(&["stats", "--data-dir", data_dir, "--unused", "7"], &[]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "acme/unread\n", "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_skills_stats_are_unknown_without_a_token() {
    let server = TestServer::builder().config(config(true)).start().await;
    let api = Api::new(&server);
    publish(&api, "hidden", "secret").await;
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/namespaces/hidden/private",
            Some(ADMIN),
            None,
        )
        .await;
    assert!(status.is_success(), "{body}");
    assert_eq!(
        get_status(&server, "/v1/skills/hidden/secret/stats").await,
        StatusCode::NOT_FOUND
    );
    let (status, unknown) = stats(&api, "hidden/nothing", None).await;
    let (_, hidden) = stats(&api, "hidden/secret", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        unknown["error"]["code"], hidden["error"]["code"],
        "a hidden skill answers as an unknown one"
    );
    let (status, body) = stats(&api, "hidden/secret", Some(ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["name"], "secret");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_counting_off_nothing_is_recorded() {
    let server = TestServer::builder().config(config(false)).start().await;
    let api = Api::new(&server);
    publish(&api, "acme", "counted").await;
    workload(&server, 2, 2, 2).await;
    assert_eq!(server.registry.usage().flush().await.unwrap(), 0);
    let rows = server
        .sql(
            "UPDATE usage_daily SET count = count",
            "UPDATE usage_daily SET count = count",
        )
        .await;
    assert_eq!(rows, 0, "no usage row is stored");
    let (_, body) = stats(&api, "acme/counted", None).await;
    assert_eq!(body["days"], json!([]), "{body}");
    // ClawHub's counts say nothing rather than a made-up zero.
    let (_, item) = api.get("/api/v1/skills/counted?ownerHandle=acme").await;
    assert_eq!(item["skill"]["stats"]["downloads"], Value::Null, "{item}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_popularity_lifts_an_even_match_that_people_read() {
    let server = TestServer::builder()
        .config(Config {
            search_popularity: true,
            ..config(true)
        })
        .start()
        .await;
    let api = Api::new(&server);
    publish(&api, "acme", "invoice-alpha").await;
    publish(&api, "acme", "invoice-beta").await;
    server.registry.index().catch_up_search().await.unwrap();
    let names = |body: &Value| -> Vec<String> {
        body["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, before) = api.get("/v1/search?q=counted+reads").await;
    assert_eq!(status, StatusCode::OK, "{before}");
    let before_names = names(&before);
    assert_eq!(before_names.len(), 2, "{before}");
    // Nobody read either: the index's order and scores, unchanged.
    let second = before_names[1].clone();
    let score = before["hits"][1]["score"].as_f64().unwrap();
    let modern = Modern::new(&server.url);
    for _ in 0..5 {
        let answer = modern
            .call(
                "skills/get",
                json!({ "uri": format!("skill://acme/{second}/SKILL.md") }),
            )
            .await;
        assert!(answer["result"]["skill"].is_object(), "{answer}");
    }
    server.registry.usage().flush().await.unwrap();
    let (_, after) = api.get("/v1/search?q=counted+reads").await;
    assert_eq!(names(&after)[0], second, "{after}");
    let lifted = after["hits"][0]["score"].as_f64().unwrap();
    // 1 + ln(1 + 5) / 10.
    let factor = 1.0 + 6f64.ln() / 10.0;
    assert!((lifted - score * factor).abs() < 1e-3 * lifted, "{after}");
}
