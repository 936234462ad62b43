//! PostgreSQL as the second engine, against a real server (`SKILLREG_TEST_POSTGRES_URL`): the
//! same catalog answers every read alike on both engines; publish semantics, storage errors and
//! the CLI on PostgreSQL; and replicas — several servers sharing one database — serving each
//! other's changes, refusing each other's revoked tokens, and racing publishes of one version.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use skillreg::Registry;
use skillreg::config::{Config, Secret};
use skillreg::core::{InputFile, Namespace};
use skillreg::registry::PublishRequest;
use skillreg::store::Location;
use skillreg::store::postgres::PgOptions;
use tempfile::TempDir;

use crate::common::{
    Legacy, Modern, TestServer, all_pages, corpus_dir, fresh_postgres, publish_request,
    run_cli_async,
};
use crate::rest::{ADMIN, Api, code, skill_archive};

/// How long a change may take to reach another replica (the bound).
const PROPAGATION: Duration = Duration::from_secs(2);

fn admin_config() -> Config {
    let mut config = Config {
        admin_token: Some(Secret::new(ADMIN)),
        ..Config::default()
    };
    config.storage.signing.signing_key = Some(shared_key().to_path_buf());
    config
}

/// The signing key every registry of these tests signs with, as replicas sharing a database
/// should (made by the first that signs; one per test process).
fn shared_key() -> &'static std::path::Path {
    static DIR: std::sync::LazyLock<std::path::PathBuf> =
        std::sync::LazyLock::new(|| TempDir::new().unwrap().keep());
    static KEY: std::sync::LazyLock<std::path::PathBuf> =
        std::sync::LazyLock::new(|| DIR.join("signing-key.pem"));
    &KEY
}

async fn replica(url: &str) -> TestServer {
    TestServer::builder()
        .postgres(url)
        .config(admin_config())
        .page_size(50)
        .start()
        .await
}

/// A server on the SQLite database of `dir`, configured like [`replica`].
async fn on_sqlite_dir(dir: &std::path::Path) -> TestServer {
    TestServer::builder()
        .data_dir(dir)
        .config(admin_config())
        .page_size(50)
        .start()
        .await
}

/// Open a registry on the PostgreSQL database at `url` (no search index, like an import).
async fn open_postgres(url: &str, dir: &TempDir) -> Registry {
    Registry::builder(dir.path())
        .at(Location::Postgres(url.to_owned(), PgOptions::default()))
        .signing_key(Some(shared_key()))
        .open()
        .await
        .unwrap()
}

/// Replace every timestamp (publish and audit times differ between two stores) by `<time>`.
fn without_times(v: &Value) -> Value {
    match v {
        Value::String(s)
            if s.len() >= 20 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T' =>
        {
            json!("<time>")
        }
        Value::Array(a) => Value::Array(a.iter().map(without_times).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| match (k.as_str(), v.as_f64()) {
                    // A search score's last digits follow the index's segments (a document
                    // re-indexed after a yank counts as deleted until its segment merges), which
                    // each process's indexer commits on its own schedule: not the engine's doing.
                    // The hits' order is still compared.
                    ("score", Some(_)) => (k.clone(), json!("<score>")),
                    _ => (k.clone(), without_times(v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The seed and the whole importable corpus, into the registry at `registry`.
async fn fill(registry: &Registry) -> usize {
    registry.publisher().import_seed().await.unwrap();
    let summary = registry
        .publisher()
        .import_dirs(
            &Namespace::new("corpus").unwrap(),
            &Default::default(),
            &[corpus_dir()],
            |_| {},
        )
        .await
        .unwrap();
    assert!(summary.imported >= 100, "{summary:?}");
    summary.imported
}

/// Every read a client makes, against one server, as comparable JSON.
async fn every_read(server: &TestServer) -> Vec<(String, Value)> {
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    let api = Api::new(server);
    let mut out = Vec::new();
    let (skills, pages) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    let (legacy_skills, _) =
        all_pages(async |p| legacy.call("skills/list", p).await, "skills").await;
    out.push(("skills/list pages".to_owned(), json!(pages)));
    out.push(("skills/list".to_owned(), json!(skills)));
    out.push(("skills/list (2025-11-25)".to_owned(), json!(legacy_skills)));
    for skill in &skills {
        let uri = skill["uri"].as_str().unwrap();
        out.push((
            format!("skills/get {uri}"),
            modern.call("skills/get", json!({"uri": uri})).await,
        ));
        for r in skill["resources"].as_array().unwrap() {
            let file = r["uri"].as_str().unwrap();
            out.push((
                format!("resources/read {file}"),
                modern.call("resources/read", json!({"uri": file})).await,
            ));
        }
        let dir = uri.trim_end_matches("SKILL.md");
        out.push((
            format!("resources/directory/read {dir}"),
            modern
                .call("resources/directory/read", json!({"uri": dir}))
                .await,
        ));
    }
    // Hits and their order; scores are the index's (BM25 statistics count deleted documents,
    // which depend on when each index committed), not the engine's.
    for query in [
        "extract tables from pdf",
        "review code for bugs",
        "write tests",
    ] {
        let resp = modern
            .call(
                "tools/call",
                json!({"name": "search_skills", "arguments": {"query": query}}),
            )
            .await;
        let hits: Vec<Value> = resp["result"]["structuredContent"]["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("{resp}"))
            .iter()
            .map(|h| json!([h["uri"], h["version"], h["status"]]))
            .collect();
        assert!(!hits.is_empty(), "{query}: {resp}");
        out.push((format!("search {query}"), json!(hits)));
    }
    for (argument, value, context) in [
        ("namespace", "", None),
        ("name", "fin", None),
        ("name", "", Some(json!({"namespace": "corpus"}))),
    ] {
        let mut params = json!({
            "ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
            "argument": {"name": argument, "value": value},
        });
        if let Some(c) = context {
            params["context"] = json!({ "arguments": c });
        }
        // Sorted: completion ranks by publish time, and the two stores were filled at
        // different moments (ties among equal times break by name on both engines).
        let mut resp = modern.call("completion/complete", params).await;
        let values = &mut resp["result"]["completion"]["values"];
        let mut sorted: Vec<Value> = values
            .as_array()
            .unwrap_or_else(|| panic!("{values}"))
            .clone();
        sorted.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        *values = json!(sorted);
        out.push((format!("complete {argument}={value}"), resp));
    }
    for path in [
        "/v1/skills?namespace=corpus&limit=500",
        "/v1/skills/skillreg/skill-authoring",
        "/v1/search?q=pdf",
        "/v1/skills/corpus/no-such-skill",
    ] {
        let (status, body) = api.get(path).await;
        out.push((format!("GET {path}"), json!([status.as_u16(), body])));
    }
    let (_, audit) = api
        .send(Method::GET, "/v1/audit?limit=1000", Some(ADMIN), None)
        .await;
    out.push(("GET /v1/audit".to_owned(), audit));
    out.into_iter()
        .map(|(k, v)| (k, without_times(&v)))
        .collect()
}

/// The same catalog and the same changes on SQLite and on PostgreSQL answer every read with the
/// same JSON (timestamps aside): the engines are interchangeable to every client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_engines_answer_every_read_alike() {
    let url = fresh_postgres().await;
    let sqlite_dir = TempDir::new().unwrap();
    let pg_dir = TempDir::new().unwrap();
    let on_sqlite = Registry::builder(sqlite_dir.path())
        .signing_key(Some(shared_key()))
        .open()
        .await
        .unwrap();
    let on_postgres = open_postgres(&url, &pg_dir).await;
    let imported = fill(&on_sqlite).await;
    assert_eq!(fill(&on_postgres).await, imported);
    on_sqlite.close().await;
    on_postgres.close().await;

    let servers = [on_sqlite_dir(sqlite_dir.path()).await, replica(&url).await];
    let mut answers = Vec::new();
    for server in &servers {
        let api = Api::new(server);
        // The same changes on both: a yank, a deprecation, a private namespace.
        let (_, listed) = api.get("/v1/skills?namespace=corpus&limit=3").await;
        let names: Vec<&str> = listed["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        let (_, skill) = api.get(&format!("/v1/skills/corpus/{}", names[0])).await;
        let version = skill["current_version"]
            .as_str()
            .unwrap_or_else(|| panic!("{skill}"));
        for (path, body) in [
            (
                format!("/v1/skills/corpus/{}/{version}/yank", names[0]),
                json!({"reason": "broken"}),
            ),
            (
                format!("/v1/skills/corpus/{}/deprecate", names[1]),
                json!({"message": "use another"}),
            ),
            ("/v1/namespaces/hidden/private".to_owned(), json!({})),
        ] {
            let (status, body) = api.send(Method::POST, &path, Some(ADMIN), Some(body)).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
        }
        let (status, body) = api
            .publish(
                Some(ADMIN),
                "hidden",
                "secret",
                "1.0.0",
                skill_archive("secret", "s"),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        server.registry.index().catch_up_search().await.unwrap();
        answers.push(every_read(server).await);
    }
    let [sqlite, postgres] = <[_; 2]>::try_from(answers).unwrap();
    assert_eq!(sqlite.len(), postgres.len());
    eprintln!("{} reads compared", sqlite.len());
    assert!(sqlite.len() > 300, "{} reads", sqlite.len());
    for ((what, a), (_, b)) in sqlite.iter().zip(&postgres) {
        assert_eq!(a, b, "{what}: SQLite (left) and PostgreSQL (right) differ");
    }
    // The checks above saw real content, and the private namespace stayed hidden.
    let list = &sqlite[1].1;
    assert_eq!(list.as_array().unwrap().len(), imported + 3 - 1);
    assert!(!list.to_string().contains("skill://hidden/"));
}

/// Replicas share one database: a change acknowledged by one is served by the others within
/// 2 s — lists, reads, search, completion and `list_changed` to their 2025-11-25 sessions —
/// and a token revoked on one is refused by the others at their next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_serve_each_others_changes() {
    let url = fresh_postgres().await;
    let a = replica(&url).await;
    let b = replica(&url).await;
    let c = replica(&url).await;
    let (api_a, api_b) = (Api::new(&a), Api::new(&b));
    let modern_b = Modern::new(&b.url);
    let legacy_c = Legacy::connect(&c.url).await;
    let mut stream = legacy_c.stream().await;
    assert_eq!(stream.status(), 200);
    // B completes before the publish (an empty answer it caches), and must not keep it.
    let complete_namespace = json!({
        "ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
        "argument": {"name": "namespace", "value": "ac"},
    });
    let before = modern_b
        .call("completion/complete", complete_namespace.clone())
        .await;
    assert_eq!(
        before["result"]["completion"]["values"],
        json!([]),
        "{before}"
    );

    let acked = Instant::now();
    let (status, body) = api_a
        .publish(
            Some(ADMIN),
            "acme",
            "ledger",
            "1.0.0",
            skill_archive("ledger", "Balances the ledger"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let uri = "skill://acme/ledger/SKILL.md";
    let seen_on_b = eventually(acked, async || {
        let list = modern_b.call("skills/list", json!({})).await;
        let read = modern_b.call("resources/read", json!({"uri": uri})).await;
        let search = modern_b
            .call(
                "tools/call",
                json!({"name": "search_skills", "arguments": {"query": "balances ledger"}}),
            )
            .await;
        let complete = modern_b
            .call(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
                       "argument": {"name": "namespace", "value": "ac"}}),
            )
            .await;
        list["result"]["skills"][0]["uri"] == uri
            && read["result"]["contents"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("Balances the ledger"))
            && search["result"]["structuredContent"]["hits"][0]["name"] == "ledger"
            && complete["result"]["completion"]["values"] == json!(["acme"])
    })
    .await;
    eprintln!("publish on A served by B after {seen_on_b:?}");
    // B's metrics count the announcement and show its index at the database's generation.
    let metrics = reqwest::get(format!("{}/metrics", b.base()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let value = |series: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in {metrics}"))
    };
    assert!(value("skillreg_changes_heard_total") >= 1.0);
    assert!(value("skillreg_change_notification_lag_seconds_count") >= 1.0);
    assert!(value("skillreg_database_connections{state=\"open\"}") >= 1.0);
    let ready: Value = reqwest::get(format!("{}/readyz", b.base()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["index_lag"], 0, "{ready}");
    assert_eq!(
        value("skillreg_generation{of=\"search\"}"),
        value("skillreg_generation{of=\"database\"}")
    );

    // Every replica serves the same pages, entries and bytes.
    let mut served = Vec::new();
    for server in [&a, &b, &c] {
        let modern = Modern::new(&server.url);
        let (pages, _) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
        let read = modern.call("resources/read", json!({"uri": uri})).await;
        served.push((pages, read));
    }
    assert_eq!(served[0], served[1]);
    assert_eq!(served[0], served[2]);

    // C's 2025-11-25 session was told.
    let mut seen = String::new();
    let deadline = tokio::time::Instant::from_std(acked + PROPAGATION);
    while !seen.contains("notifications/resources/list_changed") {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .expect("list_changed on another replica within 2 s of the publish");
        seen.push_str(&String::from_utf8_lossy(
            &chunk.unwrap().expect("stream open"),
        ));
    }

    // A 2025-11-25 session is kept in the database: another replica answers it too (bringing
    // it back without a new `initialize`).
    let moved = legacy_c.at(&a.url).call("skills/list", json!({})).await;
    assert!(moved["result"]["skills"].is_array(), "{moved}");

    // A yank on B leaves A's skills/get at once (A has the version cached by now).
    let modern_a = Modern::new(&a.url);
    let got = modern_a.call("skills/get", json!({"uri": uri})).await;
    assert_eq!(got["result"]["skill"]["uri"], uri, "{got}");
    let acked = Instant::now();
    let (status, body) = api_b
        .send(
            Method::POST,
            "/v1/skills/acme/ledger/1.0.0/yank",
            Some(ADMIN),
            Some(json!({"reason": "bad"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let gone_on_a = eventually(acked, async || {
        let got = modern_a.call("skills/get", json!({"uri": uri})).await;
        got.get("error").is_some()
    })
    .await;
    eprintln!("yank on B served by A after {gone_on_a:?}");

    // A token made on A works on B until A revokes it; then B refuses it at once.
    let (id, token) = api_a.token(&["acme"], &["publish"]).await;
    let publish_on_b = async |version: &str| {
        api_b
            .publish(
                Some(&token),
                "acme",
                "ledger",
                version,
                skill_archive("ledger", "v"),
            )
            .await
    };
    assert_eq!(publish_on_b("1.1.0").await.0, StatusCode::CREATED);
    let (status, _) = api_a
        .send(
            Method::DELETE,
            &format!("/v1/tokens/{id}"),
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = publish_on_b("1.2.0").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
}

/// Publish `acme/<name>@1.0.0` with the admin token; it must be created.
async fn publish_acme(api: &Api, name: &str) {
    let (status, body) = api
        .publish(Some(ADMIN), "acme", name, "1.0.0", skill_archive(name, "d"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// Publish `acme/<name>` (a one-file skill) straight through `registry`.
async fn publish(registry: &Registry, name: &str) {
    let md = format!("---\nname: {name}\ndescription: d\n---\nbody\n");
    let acme = Namespace::new("acme").unwrap();
    registry
        .publisher()
        .publish(publish_request(
            &acme,
            vec![InputFile::regular("SKILL.md", md)],
            None,
        ))
        .await
        .unwrap();
}

/// A port nothing listens on at the moment.
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

/// Poll `check` until it holds; fail when that takes longer than [`PROPAGATION`] after `since`.
async fn eventually(since: Instant, check: impl AsyncFn() -> bool) -> Duration {
    loop {
        if check().await {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < PROPAGATION,
            "not served by another replica within {PROPAGATION:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Two replicas publishing the same version at the same moment behave as one SQLite writer:
/// with different content exactly one wins and the other is refused; with the same content one
/// creates and the other is a no-op. One audit row per stored version either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_publishes_of_one_version_on_two_replicas() {
    let url = fresh_postgres().await;
    let (dir_a, dir_b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let a = open_postgres(&url, &dir_a).await;
    let b = open_postgres(&url, &dir_b).await;
    let acme = Namespace::new("acme").unwrap();
    let request = |name: &str, body: &str| -> PublishRequest {
        publish_request(
            &acme,
            vec![InputFile::regular(
                "SKILL.md",
                format!("---\nname: {name}\ndescription: d\n---\n{body}\n"),
            )],
            Some("1.0.0".parse().unwrap()),
        )
    };
    for round in 0..10 {
        let name = format!("race-{round}");
        let same = round % 2 == 0;
        let (ra, rb) = tokio::join!(
            a.publisher().publish(request(&name, "from a")),
            b.publisher()
                .publish(request(&name, if same { "from a" } else { "from b" })),
        );
        let outcomes = [&ra, &rb].map(|r| match r {
            Ok(p) if p.created => "created".to_owned(),
            Ok(_) => "unchanged".to_owned(),
            Err(e) => e.code().as_str().to_owned(),
        });
        let mut sorted = outcomes.clone();
        sorted.sort();
        let expected = if same {
            ["created", "unchanged"]
        } else {
            ["created", "version_exists"]
        };
        assert_eq!(sorted, expected, "round {round}: {outcomes:?}");
    }
    let stats = a.stats().await.unwrap();
    assert_eq!((stats.skills, stats.versions), (10, 10));
    let audit = a
        .access()
        .audit(&skillreg::core::Principal::Admin, 0, 1000)
        .await
        .unwrap();
    assert_eq!(audit.iter().filter(|e| e.action == "publish").count(), 10);
    assert!(a.verify(&|_| {}).await.unwrap().is_clean());
    a.close().await;
    b.close().await;
}

/// Storage errors on PostgreSQL get the same stable codes as on SQLite, and leave data as it
/// was: a read-only database refuses publishes with `storage_read_only` (503) while reads go on;
/// connections the server drops are replaced; an unreachable server fails to open clearly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_errors_on_postgres_have_stable_codes() {
    use sqlx::Connection as _;
    let url = fresh_postgres().await;
    let server = replica(&url).await;
    let api = Api::new(&server);
    publish_acme(&api, "one").await;

    // Every connection of the pool dropped by the server (a restart, a failover): each is
    // replaced, at the cost of at most one failed request (503 storage_unavailable) for a
    // connection that was in use within the last second (older ones are checked first).
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    let database = url.rsplit_once('/').unwrap().1.to_owned();
    let dropped: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = $1 AND pid != pg_backend_pid()",
    )
    .bind(&database)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert!(!dropped.is_empty());
    let (status, body) =
        until_connections_replaced(async || api.get("/v1/skills?namespace=acme").await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["items"][0]["name"], "one", "{body}");

    // Read-only: new transactions of the database are read-only; drop the current connections
    // so the setting applies.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {database} SET default_transaction_read_only = on"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = $1 AND pid != pg_backend_pid()",
    )
    .bind(&database)
    .execute(&mut admin)
    .await
    .unwrap();
    let (status, body) = until_connections_replaced(async || {
        api.publish(
            Some(ADMIN),
            "acme",
            "two",
            "1.0.0",
            skill_archive("two", "d"),
        )
        .await
    })
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::SERVICE_UNAVAILABLE, "storage_read_only"),
        "{body}"
    );
    let (status, body) = api.get("/v1/skills?namespace=acme").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["items"].as_array().unwrap().len(), 1, "{body}");

    // Nothing listens at this port: opening fails with a clear error, not a hang.
    let dir = TempDir::new().unwrap();
    let open = Registry::builder(dir.path())
        .at(Location::Postgres(
            "postgres://skillreg@127.0.0.1:1/none".to_owned(),
            PgOptions {
                acquire_timeout: Duration::from_secs(2),
                ..PgOptions::default()
            },
        ))
        .open();
    let err = tokio::time::timeout(Duration::from_secs(60), open)
        .await
        .expect("opening an unreachable database fails; it does not hang")
        .err()
        .expect("no database there");
    assert_eq!(err.code(), "storage_unavailable", "{err}");
}

/// Send `request` until it gets something other than `storage_unavailable` from a connection
/// the server dropped; each dropped connection may fail one request, so at most as many as the
/// pool holds (16) may fail.
async fn until_connections_replaced(
    request: impl AsyncFn() -> (StatusCode, Value),
) -> (StatusCode, Value) {
    for _ in 0..=PgOptions::default().max_connections {
        let (status, body) = request().await;
        if body["error"]["code"] != "storage_unavailable" {
            return (status, body);
        }
    }
    panic!("dropped connections were not replaced");
}

/// What only the CLI on PostgreSQL does (import, verify and the rest run on PostgreSQL in the
/// suite's second pass): `backup` refuses and points at pg_dump, leaving no file, and a
/// database URL's password never reaches the output of a failing command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_on_postgres_names_pg_dump_and_hides_passwords() {
    let url = fresh_postgres().await;
    let dir = TempDir::new().unwrap();
    open_postgres(&url, &dir).await.close().await;
    let data_dir = dir.path().to_str().unwrap();
    let target = dir.path().join("backup.db");
    let backup = run_cli_async(
        &["backup", target.to_str().unwrap(), "--data-dir", data_dir],
        &[("SKILLREG_DATABASE_URL", url.as_str())],
    )
    .await;
    assert_ne!(backup.code, 0);
    assert!(backup.stderr.contains("pg_dump"), "{backup:?}");
    assert!(!target.exists());

    let secret = "postgres://skillreg:hunter2@127.0.0.1:1/none";
    let failed = run_cli_async(
        &["verify", "--data-dir", data_dir],
        &[("SKILLREG_DATABASE_URL", secret)],
    )
    .await;
    assert_ne!(failed.code, 0);
    assert!(!format!("{failed:?}").contains("hunter2"), "{failed:?}");
    assert!(
        failed.stderr.contains("Connection refused")
            && failed.stderr.ends_with("[storage_unavailable]\n"),
        "{failed:?}"
    );
}

/// A replica restarted on its own data directory catches up from the generation its index
/// recorded instead of rebuilding: the index it reopens is not empty, and afterwards it holds
/// what other replicas published meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_replica_catches_up_from_its_generation() {
    let url = fresh_postgres().await;
    let dir = TempDir::new().unwrap();
    let open = async || {
        Registry::builder(dir.path())
            .at(Location::Postgres(url.to_owned(), PgOptions::default()))
            .search()
            .open()
            .await
            .unwrap()
    };
    let first = open().await;
    publish(&first, "one").await;
    publish(&first, "two").await;
    first.index().catch_up_search().await.unwrap();
    let recorded = first.index().search_generation().unwrap();
    assert!(recorded >= 2);
    first.close().await;

    let other = open_postgres(&url, &TempDir::new().unwrap()).await;
    publish(&other, "three").await;
    other.close().await;

    let again = open().await;
    let reopened_at = again.index().search_generation().unwrap();
    assert!(
        reopened_at >= recorded,
        "the index was kept: {reopened_at} < {recorded}"
    );
    again.index().catch_up_search().await.unwrap();
    let names: Vec<String> = again
        .index()
        .search_documents()
        .unwrap()
        .into_iter()
        .map(|(uri, _, _)| uri)
        .collect();
    assert_eq!(
        names,
        [
            "skill://acme/one/SKILL.md",
            "skill://acme/three/SKILL.md",
            "skill://acme/two/SKILL.md"
        ]
    );
    assert!(again.health().await.ready());
    again.close().await;
}

/// A new replica given an index snapshot (`skillreg index-snapshot`, run as a job) starts from
/// it and catches up from its generation; a snapshot of another database is rebuilt rather
/// than trusted, whatever its generation; a missing snapshot only means building from storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_replica_starts_from_an_index_snapshot_of_its_own_catalog_only() {
    let uris = |registry: &Registry| -> Vec<String> {
        let docs = registry.index().search_documents().unwrap();
        docs.into_iter().map(|(uri, _, _)| uri).collect()
    };
    let tmp = TempDir::new().unwrap();
    let snapshot_of = async |url: &str, name: &str| {
        let file = tmp.path().join(format!("{name}.tar"));
        let job = tmp.path().join(format!("{name}-job"));
        let out = run_cli_async(
            &[
                "index-snapshot",
                file.to_str().unwrap(),
                "--data-dir",
                job.to_str().unwrap(),
            ],
            &[("SKILLREG_DATABASE_URL", url)],
        )
        .await;
        assert_eq!(out.code, 0, "{out:?}");
        (file, out.stdout)
    };
    let replica_from = async |url: &str, snapshot: &std::path::Path, dir: &str| {
        Registry::builder(&tmp.path().join(dir))
            .at(Location::Postgres(url.to_owned(), PgOptions::default()))
            .search()
            .index_snapshot(Some(snapshot))
            .open()
            .await
            .unwrap()
    };

    let url = fresh_postgres().await;
    let writer = open_postgres(&url, &TempDir::new().unwrap()).await;
    for name in ["one", "two", "three"] {
        publish(&writer, name).await;
    }
    let at = writer.generation().await.unwrap();
    let (snapshot, said) = snapshot_of(&url, "own").await;
    assert!(
        said.ends_with(&format!(": 3 skills at generation {at}\n")),
        "{said}"
    );
    publish(&writer, "four").await;

    let fresh = replica_from(&url, &snapshot, "new").await;
    assert_eq!(
        fresh.index().search_generation(),
        Some(at as u64),
        "restored, not built"
    );
    fresh.index().catch_up_search().await.unwrap();
    let expected = [
        "skill://acme/four/SKILL.md",
        "skill://acme/one/SKILL.md",
        "skill://acme/three/SKILL.md",
        "skill://acme/two/SKILL.md",
    ];
    assert_eq!(uris(&fresh), expected);
    assert!(fresh.health().await.ready());
    fresh.close().await;

    // Another database, at a lower generation than this one: its documents must not survive.
    let elsewhere = fresh_postgres().await;
    let other = open_postgres(&elsewhere, &TempDir::new().unwrap()).await;
    publish(&other, "stranger").await;
    other.close().await;
    let (foreign, _) = snapshot_of(&elsewhere, "foreign").await;
    let misled = replica_from(&url, &foreign, "misled").await;
    misled.index().catch_up_search().await.unwrap();
    assert_eq!(uris(&misled), expected);
    misled.close().await;

    let missing = replica_from(&url, &tmp.path().join("none.tar"), "plain").await;
    missing.index().catch_up_search().await.unwrap();
    assert_eq!(uris(&missing), expected);
    missing.close().await;
    writer.close().await;
}

/// The load balancer of `deploy/replicas` — its `haproxy.cfg`, with the listen address and the
/// servers pointed at real replicas on loopback — spreads stateless 2026-07-28 requests over
/// both replicas, and the requests of a 2025-11-25 session too (no affinity: the replica that
/// did not open the session brings it back from the database), every one answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_round_robins_stateless_requests_and_sessions() {
    let url = fresh_postgres().await;
    let replicas = [replica(&url).await, replica(&url).await];
    let (status, _) = Api::new(&replicas[0])
        .publish(
            Some(ADMIN),
            "acme",
            "one",
            "1.0.0",
            skill_archive("one", "d"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);

    let haproxy = Haproxy::start(&replicas).await;
    let proxied = format!("http://127.0.0.1:{}/mcp", haproxy.port);
    let modern = Modern::new(&proxied);

    let stats = haproxy.stats();
    let before = answered(&stats, 2).await;
    for _ in 0..20 {
        let list = modern.call("skills/list", json!({})).await;
        assert_eq!(
            list["result"]["skills"][0]["uri"],
            "skill://acme/one/SKILL.md"
        );
    }
    let after = answered(&stats, 2).await;
    let served: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(served.iter().sum::<u64>(), 20, "{served:?}");
    assert!(served.iter().all(|&n| n >= 5), "round robin: {served:?}");

    // One session, its requests spread over both replicas: each answers every one of them.
    let legacy = Legacy::connect(&proxied).await;
    let before = answered(&stats, 2).await;
    for i in 0..20 {
        let list = legacy.call("skills/list", json!({})).await;
        assert_eq!(
            list["result"]["skills"][0]["uri"], "skill://acme/one/SKILL.md",
            "request {i} of the session: {list}"
        );
    }
    let after = answered(&stats, 2).await;
    let served: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(served.iter().sum::<u64>(), 20, "{served:?}");
    assert!(
        served.iter().all(|&n| n >= 5),
        "one session, round robin: {served:?}"
    );
}

/// Three `skillreg serve` processes on the PostgreSQL database at `url`, each with a data
/// directory of its own (killed with SIGKILL when the test ends), and `skill://acme/one` published.
async fn replica_processes(url: &str) -> (Vec<crate::crash::Server>, Vec<TempDir>) {
    let dirs: Vec<TempDir> = (0..3).map(|_| TempDir::new().unwrap()).collect();
    let env = [
        ("SKILLREG_DATABASE_URL", url),
        ("SKILLREG_RATE_LIMIT_WRITES_PER_MINUTE", "0"),
    ];
    // One after the other: the first one migrates the new database.
    let servers: Vec<_> = dirs
        .iter()
        .map(|dir| crate::crash::start(dir.path(), free_port(), &env))
        .collect();
    let status = reqwest::Client::new()
        .put(format!("{}/v1/skills/acme/one/1.0.0", servers[0].base))
        .bearer_auth(crate::crash::ADMIN)
        .header("Content-Type", "application/gzip")
        .body(crate::crash::archive("one", "1.0.0", b"payload"))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::CREATED);
    (servers, dirs)
}

/// A 2025-11-25 session opened through HAProxy (round robin over three replica processes)
/// carries on after the replica that opened it is killed (SIGKILL): its next requests
/// (`skills/list`, `resources/read`), spread over the other two, succeed without a new
/// `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_outlives_the_replica_it_was_opened_on() {
    let url = fresh_postgres().await;
    let (mut servers, _dirs) = replica_processes(&url).await;
    let addrs: Vec<String> = servers
        .iter()
        .map(|s| s.base.trim_start_matches("http://").to_owned())
        .collect();
    let haproxy = Haproxy::start_at(&addrs).await;
    let proxied = format!("http://127.0.0.1:{}/mcp", haproxy.port);
    let stats = haproxy.stats();

    // The `initialize` alone, to learn from HAProxy's statistics which replica answered it.
    let before = answered(&stats, 3).await;
    let init = reqwest::Client::new()
        .post(&proxied)
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"skillreg-tests","version":"0"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), StatusCode::OK);
    let id = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let after = answered(&stats, 3).await;
    let opener = (0..3).find(|&i| after[i] > before[i]).unwrap();
    let session = Legacy::resumed(&proxied, &id);
    session.notify("notifications/initialized").await;
    let list = session.call("skills/list", json!({})).await;
    assert_eq!(
        list["result"]["skills"][0]["uri"], "skill://acme/one/SKILL.md",
        "{list}"
    );

    servers[opener].child.kill().unwrap(); // SIGKILL
    servers[opener].child.wait().unwrap();
    let before = answered(&stats, 3).await;
    for i in 0..6 {
        let list = session.call("skills/list", json!({})).await;
        assert_eq!(
            list["result"]["skills"][0]["uri"], "skill://acme/one/SKILL.md",
            "request {i} after the kill: {list}"
        );
        let read = session
            .call(
                "resources/read",
                json!({"uri": "skill://acme/one/SKILL.md"}),
            )
            .await;
        let text = read["result"]["contents"][0]["text"].as_str();
        assert!(text.is_some_and(|t| t.contains("# one 1.0.0")), "{read}");
    }
    let after = answered(&stats, 3).await;
    let served: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(served[opener], 0, "{served:?}");
    assert!(
        (0..3).filter(|&i| i != opener).all(|i| served[i] >= 3),
        "both survivors answered the session: {served:?}"
    );
}

/// The bar: while four 2025-11-25 sessions read and two publishers publish through
/// HAProxy, one of three replica processes is killed (SIGKILL). Every acknowledged publish
/// (200/201) is served afterwards, and no session's next request fails. A request in flight on
/// the killed replica may fail at the connection level (HAProxy answers 502/503, or the
/// connection drops): it is retried once, on the same session without a new `initialize`, and
/// that retry must succeed. Publishes are not retried (one that failed so is not acknowledged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_load_loses_no_publish_and_no_session() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    let url = fresh_postgres().await;
    let (mut servers, _dirs) = replica_processes(&url).await;
    let addrs: Vec<String> = servers
        .iter()
        .map(|s| s.base.trim_start_matches("http://").to_owned())
        .collect();
    let haproxy = Haproxy::start_at(&addrs).await;
    let base = format!("http://127.0.0.1:{}", haproxy.port);
    let proxied = format!("{base}/mcp");

    let stop = Arc::new(AtomicBool::new(false));
    let retried = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let acked = Arc::new(Mutex::new(Vec::<crate::crash::Acked>::new()));
    let mut tasks = Vec::new();
    for s in 0..4 {
        let session = Legacy::connect(&proxied).await;
        let (stop, retried, failures) = (stop.clone(), retried.clone(), failures.clone());
        tasks.push(tokio::spawn(async move {
            let mut requests = 0u64;
            while !stop.load(Ordering::Relaxed) {
                requests += 1;
                let (method, params) = if requests.is_multiple_of(2) {
                    ("skills/list", json!({}))
                } else {
                    (
                        "resources/read",
                        json!({"uri": "skill://acme/one/SKILL.md"}),
                    )
                };
                let answer = async || {
                    let resp = session.try_send(method, params.clone()).await;
                    match resp {
                        Ok(r) if r.status() == StatusCode::OK => match r.text().await {
                            Ok(text) => {
                                let body = crate::common::parse_body(&text);
                                Ok(body["result"]
                                    .is_object()
                                    .then_some(())
                                    .ok_or(format!("{body}")))
                            }
                            // The answer was cut: the replica died sending it.
                            Err(e) => Err(format!("{e:?}")),
                        },
                        Ok(r) if matches!(r.status().as_u16(), 502 | 503) => {
                            Err(r.status().to_string())
                        }
                        Ok(r) => Ok(Err(format!("{}: {}", r.status(), r.text().await.unwrap()))),
                        Err(e) => Err(format!("{e:?}")),
                    }
                };
                let outcome = match answer().await {
                    Ok(outcome) => outcome,
                    // In flight on the killed replica: once more, same session.
                    Err(first) => {
                        retried.fetch_add(1, Ordering::Relaxed);
                        match answer().await {
                            Ok(outcome) => outcome.map_err(|e| format!("retry after {first}: {e}")),
                            Err(again) => Err(format!("retry after {first} failed too: {again}")),
                        }
                    }
                };
                if let Err(e) = outcome {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("session {s}, request {requests} ({method}): {e}"));
                }
            }
            requests
        }));
    }
    let http = reqwest::Client::new();
    let mut publishers = Vec::new();
    for p in 0..2 {
        let (http, base, stop, acked) = (http.clone(), base.clone(), stop.clone(), acked.clone());
        publishers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let (name, version) = (format!("load-{p}"), format!("1.0.{i}"));
                let resp = http
                    .put(format!("{base}/v1/skills/acme/{name}/{version}"))
                    .bearer_auth(crate::crash::ADMIN)
                    .header("Content-Type", "application/gzip")
                    .body(crate::crash::archive(&name, &version, version.as_bytes()))
                    .send()
                    .await;
                match resp.map(|r| r.status().as_u16()) {
                    Ok(200 | 201) => acked
                        .lock()
                        .unwrap()
                        .push(crate::crash::Acked { name, version }),
                    Ok(502 | 503) | Err(_) => {}
                    Ok(status) => panic!("publish {name} {version}: {status}"),
                }
            }
        }));
    }

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let victim = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as usize
        % 3;
    let acked_before_kill = acked.lock().unwrap().len();
    servers[victim].child.kill().unwrap(); // SIGKILL
    servers[victim].child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    stop.store(true, Ordering::Relaxed);
    let mut requests = 0;
    for task in tasks {
        requests += task.await.unwrap();
    }
    for task in publishers {
        task.await.unwrap();
    }
    let failures = failures.lock().unwrap().clone();
    assert!(
        failures.is_empty(),
        "replica {victim} killed: {failures:#?}"
    );
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() > acked_before_kill && acked_before_kill > 0,
        "publishes went on before and after the kill: {acked_before_kill} then {}",
        acked.len()
    );
    assert!(requests >= 40, "{requests} session requests");
    eprintln!(
        "replica {victim} killed: {requests} session requests ({} retried once), {} publishes acknowledged",
        retried.load(Ordering::Relaxed),
        acked.len()
    );
    crate::crash::check_acknowledged(&http, &base, &acked).await;
}

/// HAProxy running the shipped `deploy/replicas/haproxy.cfg`, with the listen address and the
/// two servers pointed at `replicas` on loopback, and a statistics page.
struct Haproxy {
    port: u16,
    stats_port: u16,
    _process: KillOnDrop,
    _dir: TempDir,
}

impl Haproxy {
    /// Start it and wait until it listens and has found every replica ready (`/readyz`).
    async fn start(replicas: &[TestServer]) -> Self {
        let addrs: Vec<String> = replicas
            .iter()
            .map(|server| server.base().trim_start_matches("http://").to_owned())
            .collect();
        Self::start_at(&addrs).await
    }

    /// The same, in front of the replicas at `addrs` (`host:port`); the shipped configuration's
    /// servers past those are left out.
    async fn start_at(addrs: &[String]) -> Self {
        let (port, stats_port) = (free_port(), free_port());
        let shipped = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/deploy/replicas/haproxy.cfg"
        ))
        .unwrap();
        let mut config = shipped.replace("bind :8080", &format!("bind 127.0.0.1:{port}"));
        for i in 0.. {
            let name = format!("skillreg-{}", i + 1);
            let line = format!("server {name} {name}:8080");
            match addrs.get(i) {
                Some(addr) => {
                    assert!(config.contains(&line), "haproxy.cfg has no `{line}`");
                    config = config.replace(&line, &format!("server {name} {addr}"));
                }
                None if config.contains(&line) => config = config.replace(&line, ""),
                None => break,
            }
        }
        // HAProxy's statistics say which replica answered what (replicas of one test process
        // share their metrics), and whether it takes each for up.
        config.push_str(&format!(
            "\nfrontend stats\n    bind 127.0.0.1:{stats_port}\n    stats enable\n    stats uri /stats\n"
        ));
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let mut process = KillOnDrop(
            std::process::Command::new(crate::common::tool("SKILLREG_HAPROXY"))
                .arg("-db")
                .arg("-f")
                .arg(&path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        let started = Instant::now();
        loop {
            assert!(process.0.try_wait().unwrap().is_none(), "haproxy exited");
            let up = reqwest::get(format!("http://127.0.0.1:{port}/readyz")).await;
            let stats = format!("http://127.0.0.1:{stats_port}/stats;csv");
            if up.is_ok_and(|r| r.status() == StatusCode::OK)
                && reqwest::get(&stats)
                    .await
                    .is_ok_and(|r| r.status().is_success())
                && up_servers(&stats).await == addrs.len()
            {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "haproxy not up"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self {
            port,
            stats_port,
            _process: process,
            _dir: dir,
        }
    }

    /// Its statistics, as CSV.
    fn stats(&self) -> String {
        format!("http://127.0.0.1:{}/stats;csv", self.stats_port)
    }
}

/// The deployment of `deploy/replicas` with one client sending bad tokens through HAProxy:
/// the replicas trust HAProxy's address and take each client from its `X-Forwarded-For`
/// (`option forwardfor`), so that client alone is refused (429), while another client and
/// HAProxy's own `/readyz` checks (from HAProxy's address) keep succeeding and both replicas
/// stay up. Before, everyone behind the proxy shared one quota: the checks got 429 and the
/// replicas were taken out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_haproxy_a_client_sending_bad_tokens_is_refused_alone() {
    let url = fresh_postgres().await;
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let config = Config {
            rate_limit_auth_failures_per_minute: 5,
            trusted_proxies: vec!["127.0.0.1".to_owned()],
            ..admin_config()
        };
        replicas.push(
            TestServer::builder()
                .postgres(&url)
                .config(config)
                .rate_limits()
                .start()
                .await,
        );
    }
    let haproxy = Haproxy::start(&replicas).await;
    let base = format!("http://127.0.0.1:{}", haproxy.port);
    let from = |source: &str| {
        reqwest::Client::builder()
            .local_address(source.parse::<std::net::IpAddr>().unwrap())
            .build()
            .unwrap()
    };
    let (attacker, victim) = (from("127.0.0.3"), from("127.0.0.4"));
    // About 10 bad tokens a second for 6 s: three health-check rounds (every 2 s, `fall 2`).
    let (mut refused, mut sent) = (0, 0);
    let mut statuses = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(6) {
        let status = attacker
            .get(format!("{base}/v1/skills"))
            .bearer_auth("skr_guessing")
            .send()
            .await
            .unwrap()
            .status();
        sent += 1;
        refused += usize::from(status == StatusCode::TOO_MANY_REQUESTS);
        // Twice: with round robin, the attacker's requests and the victim's then reach both
        // replicas.
        for _ in 0..2 {
            let served = victim
                .get(format!("{base}/v1/skills"))
                .send()
                .await
                .unwrap()
                .status();
            statuses.push(served);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Five failures a minute on each replica; everything after is refused.
    assert!(
        sent >= 20 && refused >= sent - 12,
        "the attacker was refused {refused} times of {sent}"
    );
    assert!(
        statuses.iter().all(|s| *s == StatusCode::OK),
        "the victim got {statuses:?}"
    );
    let ready = victim.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    // HAProxy's own checks kept both replicas up.
    let csv = reqwest::get(haproxy.stats())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let header: Vec<&str> = csv
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("# ")
        .split(',')
        .collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for name in ["skillreg-1", "skillreg-2"] {
        let row: Vec<&str> = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[column("pxname")] == "skillreg" && r[column("svname")] == name)
            .unwrap();
        assert_eq!(row[column("status")], "UP", "{name}: {csv}");
        assert_eq!(row[column("chkdown")], "0", "{name} was taken out: {csv}");
    }
}

/// How many of HAProxy's servers it takes for up (its CSV statistics).
async fn up_servers(stats: &str) -> usize {
    let csv = reqwest::get(stats).await.unwrap().text().await.unwrap();
    csv.lines()
        .filter(|l| l.starts_with("skillreg,skillreg-") && l.contains(",UP,"))
        .count()
}

/// The 2xx responses each of the first `n` replicas has sent through HAProxy (its CSV
/// statistics).
async fn answered(stats: &str, n: usize) -> Vec<u64> {
    let csv = reqwest::get(stats).await.unwrap().text().await.unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap()
        .trim_start_matches("# ")
        .split(',')
        .collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (proxy, server, ok) = (column("pxname"), column("svname"), column("hrsp_2xx"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    (1..=n)
        .map(|i| {
            let name = format!("skillreg-{i}");
            let row = rows
                .iter()
                .find(|r| r[proxy] == "skillreg" && r[server] == name)
                .unwrap_or_else(|| panic!("no statistics for {name}: {csv}"));
            row[ok].parse().unwrap()
        })
        .collect()
}

/// A child process killed when the test ends, passed or failed.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// PostgreSQL restarting under a replica: while it is down, reads and writes answer 503
/// `storage_unavailable` and the process keeps running; once it is back, the replica serves again
/// and hears changes again, without a restart of its own. On a server of its own (a restart
/// would disturb the other tests).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restart_is_survived_without_restarting_replicas() {
    let cluster = Cluster::start(free_port());
    let a = replica(&cluster.url).await;
    let b = replica(&cluster.url).await;
    let api = Api::new(&a);
    publish_acme(&api, "one").await;

    cluster.run("halt");
    let (status, body) = api.get("/v1/skills?namespace=acme").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable"),
        "{body}"
    );
    let (status, body) = api
        .publish(
            Some(ADMIN),
            "acme",
            "two",
            "1.0.0",
            skill_archive("two", "d"),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable"),
        "{body}"
    );
    let ready = reqwest::get(format!("{}/readyz", a.base())).await.unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);

    cluster.run("resume");
    let back = Instant::now();
    loop {
        let (status, body) = api.get("/v1/skills?namespace=acme").await;
        if status == StatusCode::OK {
            assert_eq!(body["items"].as_array().unwrap().len(), 1, "{body}");
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(30), "{status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!(
        "serving again {:?} after the database was back",
        back.elapsed()
    );
    // Writes work again, and the other replica hears of them again (its listener reconnected).
    let (status, body) = api
        .publish(
            Some(ADMIN),
            "acme",
            "two",
            "1.0.0",
            skill_archive("two", "Two again"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let modern_b = Modern::new(&b.url);
    let acked = Instant::now();
    let heard = eventually(acked, async || {
        let read = modern_b
            .call(
                "resources/read",
                json!({"uri": "skill://acme/two/SKILL.md"}),
            )
            .await;
        read["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Two again"))
    })
    .await;
    eprintln!("after the restart, publish on A served by B after {heard:?}");
}

/// A PostgreSQL server of one test's own, removed when it ends.
struct Cluster {
    dir: std::path::PathBuf,
    port: u16,
    url: String,
}

impl Cluster {
    fn start(port: u16) -> Self {
        let dir = std::env::temp_dir().join(format!("skillreg-pg-{}-{port}", std::process::id()));
        let mut cluster = Self {
            dir,
            port,
            url: String::new(),
        };
        let out = cluster.run("start");
        cluster.url = out
            .trim()
            .strip_prefix("SKILLREG_TEST_POSTGRES_URL=")
            .unwrap_or_else(|| panic!("{out}"))
            .to_owned();
        cluster
    }

    /// `scripts/test-postgres.sh ACTION` on this cluster; its stdout.
    fn run(&self, action: &str) -> String {
        let out = std::process::Command::new("bash")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scripts/test-postgres.sh"
            ))
            .arg(action)
            .arg(&self.dir)
            .env("SKILLREG_TEST_POSTGRES_PORT", self.port.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "test-postgres.sh {action}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scripts/test-postgres.sh"
            ))
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

/// `skillreg migrate` copies a registry (the seed, the real corpus, a yank, a private namespace
/// and a token) from SQLite to PostgreSQL and back again: each copy verifies clean and answers
/// every read as the original does, with the original times; a copy into a registry that holds
/// anything is refused and leaves it untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_copies_a_registry_to_postgres_and_back() {
    let url = fresh_postgres().await;
    let original = TempDir::new().unwrap();
    {
        let registry = Registry::open(original.path()).await.unwrap();
        fill(&registry).await;
        registry.close().await;
    }
    {
        let server = TestServer::builder()
            .data_dir(original.path())
            .config(admin_config())
            .start()
            .await;
        let api = Api::new(&server);
        for (path, body) in [
            (
                "/v1/skills/skillreg/finding-skills/deprecate",
                json!({"message": "kept as it was"}),
            ),
            ("/v1/namespaces/hidden/private", json!({})),
            (
                "/v1/tokens",
                json!({"description": "ci", "namespaces": ["corpus"], "actions": ["publish"]}),
            ),
        ] {
            let (status, answer) = api.send(Method::POST, path, Some(ADMIN), Some(body)).await;
            assert!(status.is_success(), "{path}: {answer}");
        }
    }
    let sqlite_url = |dir: &std::path::Path| format!("sqlite://{}", dir.display());
    let back = TempDir::new().unwrap();
    let back_dir = back.path().join("data");

    for (from, to) in [
        (sqlite_url(original.path()), url.clone()),
        (url.clone(), sqlite_url(&back_dir)),
    ] {
        let out = run_cli_async(&["migrate", "--from", &from, "--to", &to], &[]).await;
        assert_eq!(out.code, 0, "{out:?}");
        assert!(out.stdout.contains(": no damage"), "{out:?}");
        assert!(out.stdout.starts_with("copied "), "{out:?}");
    }

    let servers = [
        on_sqlite_dir(original.path()).await,
        replica(&url).await,
        on_sqlite_dir(&back_dir).await,
    ];
    let mut answers = Vec::new();
    let mut audits = Vec::new();
    for server in &servers {
        answers.push(every_read(server).await);
        let (_, audit) = Api::new(server)
            .send(Method::GET, "/v1/audit?limit=1000", Some(ADMIN), None)
            .await;
        audits.push(audit);
    }
    assert!(answers[0].len() > 1000, "{} reads", answers[0].len());
    same_reads(&answers[1], &answers[0], "the PostgreSQL copy");
    same_reads(&answers[2], &answers[0], "the SQLite copy of the copy");
    assert!(
        audits[0]["entries"].as_array().unwrap().len() > 100,
        "{}",
        audits[0]
    );
    assert_eq!(audits[1], audits[0], "the audit log, times included");
    assert_eq!(audits[2], audits[0], "the audit log, times included");

    let again = run_cli_async(
        &[
            "migrate",
            "--from",
            &sqlite_url(original.path()),
            "--to",
            &url,
        ],
        &[],
    )
    .await;
    assert_eq!(again.code, 2, "{again:?}");
    assert!(
        again.stderr.contains("a copy goes into an empty one only"),
        "{again:?}"
    );
    same_reads(&every_read(&servers[1]).await, &answers[0], "untouched");
}

/// `copy` answers every read as `original` does; the first difference is named. Search scores
/// aside: BM25 statistics count deleted documents, which depend on the index's own history (the
/// copies index a finished catalog at once), not on what storage holds.
fn same_reads(copy: &[(String, Value)], original: &[(String, Value)], what: &str) {
    fn without_scores(v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.iter().map(without_scores).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| k.as_str() != "score")
                    .map(|(k, v)| (k.clone(), without_scores(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    assert_eq!(copy.len(), original.len(), "{what}: reads");
    for ((read, got), (_, want)) in copy.iter().zip(original) {
        assert_eq!(without_scores(got), without_scores(want), "{what}: {read}");
    }
}

/// A revocation made through one replica is honoured by another at once: pinned reads that
/// replica had already served (and cached) are refused on every route, URI form and era.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_on_one_replica_is_honoured_by_every_replica() {
    let url = fresh_postgres().await;
    let (a, b) = (replica(&url).await, replica(&url).await);
    let api = Api::new(&a);
    for version in ["1.0.0", "1.1.0"] {
        let (status, body) = api
            .publish(
                Some(ADMIN),
                "acme",
                "tool",
                version,
                crate::trust::skill("tool", version),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let pinned = json!({"uri": "skill://acme/@1.1.0/tool/SKILL.md"});
    let on_b = Modern::new(&b.url);
    let started = Instant::now();
    eventually(started, async || {
        on_b.call("resources/read", pinned.clone()).await["result"].is_object()
    })
    .await;
    let (status, body) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/tool/1.1.0/revoke",
            Some(ADMIN),
            Some(json!({"reason": "malicious"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let revoked_at = Instant::now();
    let lag = eventually(revoked_at, async || {
        on_b.call("resources/read", pinned.clone()).await["error"]["data"]["code"]
            == "version_revoked"
    })
    .await;
    eprintln!("replica b refused the revoked version {lag:?} after the revocation");
    crate::trust::assert_every_read(&b, "1.1.0", crate::trust::REVOKED).await;
    let (_, feed) = Api::new(&b).get("/v1/revocations").await;
    assert_eq!(feed["items"][0]["version"], "1.1.0", "{feed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_sum_their_usage_counts() {
    let url = fresh_postgres().await;
    let a = replica(&url).await;
    let b = replica(&url).await;
    publish_acme(&Api::new(&a), "counted").await;
    let get = json!({"uri": "skill://acme/counted/SKILL.md"});
    for (replica, gets) in [(&a, 3), (&b, 2)] {
        let modern = Modern::new(&replica.url);
        for _ in 0..gets {
            let answer = modern.call("skills/get", get.clone()).await;
            assert!(answer["result"]["skill"].is_object(), "{answer}");
        }
    }
    // Both flush the same (version, day, kind): the second adds to the first.
    a.registry.usage().flush().await.unwrap();
    b.registry.usage().flush().await.unwrap();
    for replica in [&a, &b] {
        let (status, body) = Api::new(replica).get("/v1/skills/acme/counted/stats").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["totals"]["get"], 5, "{body}");
    }
}

/// A subscriber on one replica is told of a publish on another (the change feed carries it): a
/// 2025-11-25 session's `resources/subscribe` and a 2026-07-28 `subscriptions/listen` (the
/// official TypeScript client), both on B, each get one `updated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_on_one_replica_hear_a_publish_on_another() {
    use crate::subscriptions::{TsClient, updated, wait_for_updated};
    let url = fresh_postgres().await;
    let a = replica(&url).await;
    let b = replica(&url).await;
    let api_a = Api::new(&a);
    publish_acme(&api_a, "watched").await;
    let uri = "skill://acme/watched/SKILL.md";
    let legacy = Legacy::connect(&b.url).await;
    let mut stream = legacy.stream().await;
    assert_eq!(stream.status(), 200);
    let answer = legacy
        .call("resources/subscribe", json!({"uri": uri}))
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    let (mut modern, _) = TsClient::start("modern", &b.url, &[uri], &[]).await;

    let (status, body) = api_a
        .publish(
            Some(ADMIN),
            "acme",
            "watched",
            "1.1.0",
            skill_archive("watched", "d2"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    wait_for_updated(&mut stream, uri).await;
    let mut seen = modern.until_updated(uri).await;
    seen.extend(modern.finish().await);
    assert_eq!(updated(&seen), [uri], "{seen:?}");
}

/// Three replicas of one database deliver each event of a webhook exactly once: a delivery is
/// claimed under the writer lock by one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_deliver_each_webhook_event_once() {
    use std::sync::{Arc, Mutex};
    let received: Arc<Mutex<Vec<String>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = received.clone();
    let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let seen = seen.clone();
        async move {
            let id = headers
                .get("webhook-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            seen.lock().unwrap().push(id);
            StatusCode::NO_CONTENT
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });

    let url = fresh_postgres().await;
    let mut config = admin_config();
    config.webhook_allow_hosts = vec!["127.0.0.1".to_owned()];
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(
            TestServer::builder()
                .postgres(&url)
                .config(config.clone())
                .start()
                .await,
        );
    }
    let apis: Vec<Api> = replicas.iter().map(Api::new).collect();
    let (status, body) = apis[0]
        .send(
            Method::POST,
            "/v1/namespaces/acme/webhooks",
            Some(ADMIN),
            Some(json!({ "url": format!("http://127.0.0.1:{port}/hook") })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    const EVENTS: usize = 12;
    for i in 0..EVENTS {
        publish_acme(&apis[i % 3], &format!("hooked{i}")).await;
    }
    let since = Instant::now();
    while received.lock().unwrap().len() < EVENTS {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "{:?}",
            received.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Time for a second delivery of any of them, were there one.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut ids = received.lock().unwrap().clone();
    ids.sort();
    let distinct = {
        let mut d = ids.clone();
        d.dedup();
        d
    };
    assert_eq!(ids.len(), EVENTS, "{ids:?}");
    assert_eq!(distinct.len(), EVENTS, "{ids:?}");
}
