//! Trusted publishing against a real OpenID provider (node's `oidc-provider`, run on loopback by
//! `tests/clients/oidc_provider.mjs`): its tokens are exchanged for short-lived publish tokens,
//! and every hostile token is refused with its own code.

use std::path::Path;
use std::process::Stdio;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;

use super::common::*;
use super::rest::{Api, skill_archive};
use skillreg::config::{Config, Secret};

const EXCHANGE: &str = "/api/v1/trusted_publishing/tokens";

/// One OpenID provider process, ended when dropped.
struct Oidc {
    _child: tokio::process::Child,
    issuer: String,
    mint_url: String,
    actions_url: String,
    actions_token: String,
}

impl Oidc {
    async fn start(args: &[&str]) -> Self {
        let t = tools();
        let mut child = tokio::process::Command::new(&t.node22)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/oidc_provider.mjs"))
            .args(args)
            .env("SKILLREG_TOOLS", &t.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Its warning about the in-memory adapter (a test's provider keeps nothing).
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the provider prints its URLs");
        let v: Value = serde_json::from_str(&line).unwrap();
        let s = |k: &str| v[k].as_str().unwrap().to_owned();
        Self {
            issuer: s("issuer"),
            mint_url: s("mint_url"),
            actions_url: s("actions_url"),
            actions_token: s("actions_token"),
            _child: child,
        }
    }

    /// A token from the provider's token endpoint with `claims` over its GitHub-like defaults.
    async fn mint(&self, claims: Value) -> String {
        let resp = reqwest::Client::new()
            .post(&self.mint_url)
            .json(&claims)
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
        resp.json::<Value>().await.unwrap()["jwt"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

async fn server(token_secs: u64) -> TestServer {
    TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            trusted_publishing_token_secs: token_secs,
            ..Config::default()
        })
        .start()
        .await
}

async fn exchange(api: &Api, jwt: &str) -> (StatusCode, Value) {
    api.send(Method::POST, EXCHANGE, None, Some(json!({ "jwt": jwt })))
        .await
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or("(none)")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// acme's trusted publisher: the provider's GitHub-like defaults, in environment `release`.
async fn register(api: &Api, issuer: &str) -> Value {
    register_at(api, "acme", issuer).await
}

/// A trusted publisher of `namespace` as [`register`]'s.
async fn register_at(api: &Api, namespace: &str, issuer: &str) -> Value {
    let (status, added) = api
        .send(
            Method::POST,
            &format!("/v1/namespaces/{namespace}/trusted-publishers"),
            Some(ADMIN),
            Some(json!({
                "provider": "github", "issuer": issuer, "repository": "acme/skills",
                "workflow": "release.yml", "environment": "release",
            })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    added
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ci_token_is_exchanged_once_for_a_namespace_and_hostile_ones_are_refused() {
    let server = server(900).await;
    let api = Api::new(&server);
    let oidc = Oidc::start(&[]).await;
    let added = register(&api, &oidc.issuer).await;
    assert!(added["id"].as_str().unwrap().starts_with("tp_"), "{added}");
    // Registering is the admin's, and an issuer in the clear off loopback is refused.
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/trusted-publishers",
            None,
            Some(json!({"provider": "github", "repository": "a/b", "workflow": "x.yml"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, answer) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/trusted-publishers",
            Some(ADMIN),
            Some(
                json!({"provider": "github", "issuer": "http://issuer.example",
                        "repository": "a/b", "workflow": "x.yml"}),
            ),
        )
        .await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );

    // A good exchange: a token that publishes to acme, and only there.
    let jwt = oidc.mint(json!({})).await;
    let (status, got) = exchange(&api, &jwt).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let token = got["token"].as_str().unwrap().to_owned();
    assert!(got["expires_at"].as_str().unwrap().ends_with('Z'), "{got}");
    let (status, published) = api
        .publish(
            Some(&token),
            "acme",
            "hello",
            "1.0.0",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
    let (status, answer) = api
        .publish(
            Some(&token),
            "other",
            "hello",
            "1.0.0",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::FORBIDDEN, "namespace_not_allowed"),
        "a token for another namespace"
    );

    // The version records who published it, served in `_meta` on skills/get and skills/list.
    let mcp = Modern::new(&server.url);
    let want = json!({
        "provider": "github", "issuer": oidc.issuer, "repository": "acme/skills",
        "workflow": "acme/skills/.github/workflows/release.yml@refs/heads/main",
        "ref": "refs/heads/main", "commit": "0123456789abcdef0123456789abcdef01234567",
        "run": "4242",
    });
    let got = mcp
        .call("skills/get", json!({"uri": "skill://acme/hello/SKILL.md"}))
        .await;
    assert_eq!(
        got["result"]["skill"]["_meta"]["dev.skillreg/publisher"], want,
        "{got}"
    );
    let listed = mcp.call("skills/list", json!({})).await;
    assert_eq!(
        listed["result"]["skills"][0]["_meta"]["dev.skillreg/publisher"], want,
        "{listed}"
    );
    let (_, manifest) = api.get("/v1/skills/acme/hello/1.0.0").await;
    assert_eq!(manifest["publisher"], want, "{manifest}");
    // ClawHub's `verify` names the CI job in its provenance; the web page shows it.
    let (_, verify) = api
        .get("/api/v1/skills/hello/verify?ownerHandle=acme")
        .await;
    assert_eq!(verify["provenance"]["ci"], want, "{verify}");
    let page = reqwest::get(format!("{}/skills/acme/hello", server.base()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"<p id="publisher">Published from CI (github): <code>acme/skills</code>"#)
            && page.contains(r#"commit <code title="0123456789abcdef0123456789abcdef01234567">0123456</code>, run <code>4242</code>"#),
        "{page}"
    );

    // The audit has the exchange, with the issuer and the claims it was matched by.
    let (_, audit) = api
        .send(Method::GET, "/v1/audit?limit=1000", Some(ADMIN), None)
        .await;
    let entry = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "trusted_publishing_exchange")
        .unwrap_or_else(|| panic!("no exchange in {audit}"));
    assert_eq!(entry["details"]["issuer"], oidc.issuer.as_str());
    assert_eq!(entry["details"]["claims"]["repository"], "acme/skills");
    assert_eq!(entry["details"]["claims"]["run"], "4242");
    assert_eq!(entry["actor"], added["id"]);

    // Revoked early by its holder; the same CI token is never exchanged again.
    let (status, _) = api.send(Method::DELETE, EXCHANGE, Some(&token), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, answer) = api
        .publish(
            Some(&token),
            "acme",
            "hello",
            "1.0.1",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (status, answer) = exchange(&api, &jwt).await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::UNAUTHORIZED, "oidc_token_replayed"),
        "{answer}"
    );

    // Hostile tokens, each with its own code.
    let t = now();
    let cases = [
        (
            json!({"aud": "another-registry"}),
            "oidc_token_invalid",
            "audience",
        ),
        (
            json!({"iat": t - 900, "exp": t - 30}),
            "oidc_token_invalid",
            "expired",
        ),
        (json!({"nbf": t + 900}), "oidc_token_invalid", "nbf"),
        (json!({"iat": t + 900}), "oidc_token_invalid", "iat"),
        (json!({"jti": null}), "oidc_token_invalid", "jti"),
        (
            json!({"repository": "evil/skills"}),
            "oidc_claims_mismatch",
            "repository",
        ),
        (
            json!({"environment": "staging"}),
            "oidc_claims_mismatch",
            "environment",
        ),
        (
            json!({"job_workflow_ref": "acme/skills/.github/workflows/other.yml@refs/heads/main"}),
            "oidc_claims_mismatch",
            "job_workflow_ref",
        ),
    ];
    for (claims, want, says) in cases {
        let (status, answer) = exchange(&api, &oidc.mint(claims.clone()).await).await;
        assert_eq!(code(&answer), want, "{claims}: {answer}");
        assert!(status.is_client_error(), "{claims}: {status}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{claims}: {message}");
    }
    // An issuer no namespace trusts.
    let stranger = Oidc::start(&[]).await;
    let (_, answer) = exchange(&api, &stranger.mint(json!({})).await).await;
    assert_eq!(code(&answer), "oidc_issuer_unknown", "{answer}");
    // A token naming the trusted issuer but signed by a key it never published (another
    // provider's: a stolen or rotated-away key).
    let impostor = Oidc::start(&["--issuer", &oidc.issuer]).await;
    let (_, answer) = exchange(&api, &impostor.mint(json!({})).await).await;
    assert_eq!(code(&answer), "oidc_token_invalid", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not publish"),
        "{answer}"
    );
    // A trusted issuer whose keys cannot be fetched (nothing listens at its address).
    let unreachable = "http://127.0.0.1:9";
    register_at(&api, "gone", unreachable).await;
    let orphan = Oidc::start(&["--issuer", unreachable]).await;
    let (status, answer) = exchange(&api, &orphan.mint(json!({})).await).await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::BAD_GATEWAY, "oidc_issuer_unavailable"),
        "{answer}"
    );
    // Not a JWT at all.
    let (_, answer) = exchange(&api, "not-a-jwt").await;
    assert_eq!(code(&answer), "oidc_token_invalid", "{answer}");

    // Trusted publishing only: ordinary tokens are refused there; exchanged ones and the admin
    // publish.
    let (_, ordinary) = api
        .send(
            Method::POST,
            "/v1/tokens",
            Some(ADMIN),
            Some(json!({"description": "ci", "namespaces": ["acme"], "actions": ["publish"]})),
        )
        .await;
    let ordinary = ordinary["token"].as_str().unwrap().to_owned();
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/trusted-only",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, answer) = api
        .publish(
            Some(&ordinary),
            "acme",
            "hello",
            "1.1.0",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::FORBIDDEN, "trusted_publishing_only")
    );
    let (_, fresh) = exchange(&api, &oidc.mint(json!({})).await).await;
    let (status, answer) = api
        .publish(
            fresh["token"].as_str(),
            "acme",
            "hello",
            "1.1.0",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, _) = api
        .publish(
            Some(ADMIN),
            "acme",
            "hello",
            "1.2.0",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // A version the admin published records no CI job.
    let got = mcp
        .call("skills/get", json!({"uri": "skill://acme/hello/SKILL.md"}))
        .await;
    assert_eq!(
        got["result"]["skill"]["_meta"]["dev.skillreg/version"],
        "1.2.0"
    );
    assert!(
        got["result"]["skill"]["_meta"]
            .get("dev.skillreg/publisher")
            .is_none(),
        "{got}"
    );
    let (_, listed) = api
        .send(
            Method::GET,
            "/v1/namespaces/acme/trusted-publishers",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(listed["trusted_only"], true);
    assert_eq!(listed["trusted_publishers"][0]["id"], added["id"]);

    // Removed: the issuer is trusted by no namespace any more.
    let (status, _) = api
        .send(
            Method::DELETE,
            &format!(
                "/v1/namespaces/acme/trusted-publishers/{}",
                added["id"].as_str().unwrap()
            ),
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, answer) = exchange(&api, &oidc.mint(json!({})).await).await;
    assert_eq!(code(&answer), "oidc_issuer_unknown", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exchanged_token_expires() {
    let server = server(1).await;
    let api = Api::new(&server);
    let oidc = Oidc::start(&[]).await;
    register(&api, &oidc.issuer).await;
    let before = now();
    let (status, got) = exchange(&api, &oidc.mint(json!({})).await).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let expires: skillreg::core::Timestamp = got["expires_at"].as_str().unwrap().parse().unwrap();
    assert!(
        expires.epoch_secs() <= now() + 1 && expires.epoch_secs() >= before,
        "{got}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let (status, answer) = api
        .publish(
            got["token"].as_str(),
            "acme",
            "hello",
            "1.0.0",
            skill_archive("hello", "Says hello."),
        )
        .await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::UNAUTHORIZED, "unauthorized"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_trusted_from_github_actions_and_gitlab_ci_revokes_its_token() {
    let server = server(900).await;
    let api = Api::new(&server);
    let oidc = Oidc::start(&[]).await;
    let base = server.base();
    let admin = [
        ("SKILLREG_REGISTRY", base.as_str()),
        ("SKILLREG_TOKEN", ADMIN),
    ];
    let out = run_cli_async(
        &[
            "trusted-publisher",
            "add",
            "acme",
            "--repository",
            "acme/skills",
            "--workflow",
            "release.yml",
            "--ref",
            "refs/heads/main",
            "--issuer",
            &oidc.issuer,
        ],
        &admin,
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with("added tp_"), "{out:?}");
    let out = run_cli_async(&["trusted-publisher", "list", "acme", "--json"], &admin).await;
    assert_eq!(out.code, 0, "{out:?}");
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(listed["trusted_publishers"][0]["ref"], "refs/heads/main");

    let dir = tempfile::TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("SKILL.md"),
        "---\nname: hello\ndescription: Says hello.\n---\n# hello\n",
    )
    .unwrap();
    let skill = dir.path().to_str().unwrap();
    let ci = [
        ("SKILLREG_REGISTRY", base.as_str()),
        ("ACTIONS_ID_TOKEN_REQUEST_URL", oidc.actions_url.as_str()),
        (
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            oidc.actions_token.as_str(),
        ),
    ];
    let out = run_cli_async(&["publish", skill, "-n", "acme", "--trusted"], &ci).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with("published acme/hello 0.1.0"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("exchanged the CI's OIDC token"),
        "{out:?}"
    );
    // A refused publish revokes its token too.
    let out = run_cli_async(&["publish", skill, "-n", "other", "--trusted"], &ci).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("[namespace_not_allowed]"), "{out:?}");
    // GitLab CI: the token is the variable the job's `id_tokens:` names.
    let out = run_cli_async(
        &[
            "trusted-publisher",
            "add",
            "labs",
            "--provider",
            "gitlab",
            "--repository",
            "group/skills",
            "--workflow",
            ".gitlab-ci.yml",
            "--ref",
            "main",
            "--issuer",
            &oidc.issuer,
        ],
        &admin,
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let gitlab = oidc
        .mint(json!({
            "project_path": "group/skills", "ref": "main", "pipeline_id": "77",
            "ci_config_ref_uri": "gitlab.example.com/group/skills//.gitlab-ci.yml@refs/heads/main",
        }))
        .await;
    let out = run_cli_async(
        &["publish", skill, "-n", "labs", "--trusted"],
        &[
            ("SKILLREG_REGISTRY", base.as_str()),
            ("SKILLREG_ID_TOKEN", gitlab.as_str()),
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with("published labs/hello 0.1.0"),
        "{out:?}"
    );
    // Outside a CI there is no token to exchange.
    let out = run_cli_async(
        &["publish", skill, "-n", "acme", "--trusted"],
        &[("SKILLREG_REGISTRY", base.as_str())],
    )
    .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("ACTIONS_ID_TOKEN_REQUEST_URL"),
        "{out:?}"
    );

    let (_, tokens) = api.send(Method::GET, "/v1/tokens", Some(ADMIN), None).await;
    let exchanged: Vec<&Value> = tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["publisher"].is_string())
        .collect();
    assert_eq!(exchanged.len(), 3, "{tokens}");
    for t in exchanged {
        assert!(t["revoked_at"].is_string(), "not revoked: {t}");
        assert!(t["expires_at"].is_string(), "{t}");
    }
}
