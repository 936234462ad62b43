//! What a caller learns of what it may not read: search scores weighted only with the skills the
//! caller sees, and the registry's files readable by their owner only.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::{TestServer, admin_server, run_cli_async};
use crate::rest::{ADMIN, Api};
use crate::trust::skill;
use skillreg::config::{Config, Secret};

/// The score of `alpha/sc` for "quokka", as `token` (or an anonymous caller) is answered.
async fn quokka_score(server: &TestServer, token: Option<&str>) -> f64 {
    server.registry.index().catch_up_search().await.unwrap();
    let (status, found) = Api::new(server)
        .send(Method::GET, "/v1/search?q=quokka", token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let hit = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "sc")
        .unwrap_or_else(|| panic!("{found}"));
    hit["score"].as_f64().unwrap()
}

/// Publishing private skills that hold a word changes no score an anonymous caller (or a token
/// for another namespace) is given for it: BM25 counts only the skills the caller sees, so how
/// often a word occurs in private skills cannot be probed. A caller who sees them is weighted
/// with them.
#[tokio::test]
async fn a_search_score_never_counts_skills_the_caller_cannot_see() {
    let server = admin_server().await;
    let api = Api::new(&server);
    api.publish(
        Some(ADMIN),
        "alpha",
        "sc",
        "1.0.0",
        skill("sc", "Feed the quokka."),
    )
    .await;
    for name in ["one", "two", "three"] {
        api.publish(
            Some(ADMIN),
            "alpha",
            name,
            "1.0.0",
            skill(name, "Other words."),
        )
        .await;
    }
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/secret/private",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, other) = api.token(&["beta"], &["read"]).await;
    let (_, insider) = api.token(&["secret"], &["read"]).await;
    let anonymous = quokka_score(&server, None).await;
    assert_eq!(quokka_score(&server, Some(&other)).await, anonymous);

    for i in 0..5 {
        let name = format!("q{i}");
        let (status, body) = api
            .publish(
                Some(ADMIN),
                "secret",
                &name,
                "1.0.0",
                skill(&name, "Quokka quokka notes."),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    assert_eq!(quokka_score(&server, None).await, anonymous);
    assert_eq!(quokka_score(&server, Some(&other)).await, anonymous);
    // The skills a caller sees do weigh: the word is now common among them.
    assert!(quokka_score(&server, Some(&insider)).await < anonymous);
    let (_, found): (_, Value) = api.get("/v1/search?q=quokka").await;
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// In a data directory made beforehand with the usual mode (a Docker volume, say), the database,
/// its `-wal` and `-shm` files are still created readable by their owner only, and the search
/// index directory is closed to others; a data directory or database others can read is
/// reported at start.
#[tokio::test]
async fn the_database_and_search_index_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = TestServer::builder()
        .data_dir(&data)
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await;
    let (status, body) = Api::new(&server)
        .publish(Some(ADMIN), "acme", "tool", "1.0.0", skill("tool", "One."))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    server.registry.index().catch_up_search().await.unwrap();
    for file in ["skillreg.db", "skillreg.db-wal", "skillreg.db-shm"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    assert_eq!(mode(&data.join("search-index")), 0o700);
    drop(server);

    // Opening it again warns about what others can read: the directory, then the database too.
    let data_arg = data.to_str().unwrap();
    let verify = async || run_cli_async(&["verify", "--data-dir", data_arg], &[]).await;
    let out = verify().await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("the data directory is readable by other users"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("the database is"), "{}", out.stderr);
    std::fs::set_permissions(
        data.join("skillreg.db"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = verify().await;
    assert!(
        out.stderr
            .contains("the database is readable by other users")
            && !out.stderr.contains("the data directory is"),
        "{}",
        out.stderr
    );

    // A backup holds what the database holds: it is as private, and never written over a file.
    let copy = tmp.path().join("copy.db");
    let copy_arg = copy.to_str().unwrap();
    let backup = async || run_cli_async(&["backup", copy_arg, "--data-dir", data_arg], &[]).await;
    let out = backup().await;
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(mode(&copy), 0o600);
    let written = std::fs::read(&copy).unwrap();
    let out = backup().await;
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    assert_eq!(std::fs::read(&copy).unwrap(), written);
}
