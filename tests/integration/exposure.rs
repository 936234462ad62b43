//! What a caller learns of what it may not read: search scores weighted only with the skills the
//! caller sees.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::common::TestServer;
use crate::rest::{ADMIN, Api};
use crate::trust::skill;
use skillreg::config::{Config, Secret};

async fn server() -> TestServer {
    TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await
}

/// The score of `alpha/sc` for "quokka", as `token` (or an anonymous caller) is answered.
async fn quokka_score(server: &TestServer, token: Option<&str>) -> f64 {
    server.registry.catch_up_search().await.unwrap();
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
    let server = server().await;
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
