//! Keyless author signatures: a namespace registers a keyless identity (OIDC issuer and an
//! identity policy) with the CLI or REST, audited; a keyless Sigstore bundle is checked at
//! publish, offline, and refused with its code when it does not cover the skill's files or
//! does not verify, with nothing stored; key-signed bundles still verify beside it.
//!
//! The keyless bundle is a real one from Sigstore's production instance
//! (`tests/fixtures/keyless/`), over two files that are not a skill: it cannot be accepted for
//! one, so its acceptance is tested in `core::signature::keyless` against its own files.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::signing::{FILES, add, author_bundle, openssl_key, publish_signed};
use crate::common::{ADMIN, admin_server, run_cli_async};
use crate::rest::{Api, code};
use skillreg::core::Digest;

const BUNDLE: &str = include_str!("../fixtures/keyless/model-signing-sigstore.bundle.json");
const ISSUER: &str = "https://sigstore.verify.ibm.com/oauth2";
const IDENTITY: &str = "stefanb@us.ibm.com";

/// The fixture's statement rewritten to cover `files` (its envelope signature and log entry
/// are still over the original statement).
fn rewritten_for(files: &[(&str, &str)]) -> String {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as B64;
    let mut bundle: Value = serde_json::from_str(BUNDLE).unwrap();
    let payload = B64
        .decode(bundle["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    let mut statement: Value = serde_json::from_slice(&payload).unwrap();
    let mut sorted: Vec<(&str, Digest)> = files
        .iter()
        .map(|(p, b)| (*p, Digest::of(b.as_bytes())))
        .collect();
    sorted.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
    statement["predicate"]["resources"] = sorted
        .iter()
        .map(|(p, d)| json!({"name": p, "algorithm": "sha256", "digest": d.hex()}))
        .collect();
    let mut all = Vec::new();
    for (_, d) in &sorted {
        all.extend_from_slice(d.as_bytes());
    }
    statement["subject"][0]["digest"]["sha256"] = Digest::of(&all).hex().into();
    bundle["dsseEnvelope"]["payload"] = B64.encode(statement.to_string()).into();
    bundle.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyless_bundles_are_checked_against_the_namespaces_keyless_identities() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let work = TempDir::new().unwrap();

    // An admin registers a keyless identity with the CLI: no file, an issuer.
    let out = run_cli_async(
        &[
            "namespace",
            "key",
            "acme",
            "--issuer",
            ISSUER,
            "--identity",
            IDENTITY,
            "--registry",
            &server.base(),
        ],
        &[("SKILLREG_TOKEN", ADMIN)],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let keyless_id = Digest::of(format!("keyless\n{ISSUER}\n{IDENTITY}").as_bytes()).hex();
    assert!(
        out.stdout
            .contains(&format!("{keyless_id}  keyless  {IDENTITY}  from {ISSUER}")),
        "{out:?}"
    );
    // A file and --issuer together, or neither, is a usage error.
    for args in [
        vec!["namespace", "key", "acme", "--identity", IDENTITY],
        vec![
            "namespace",
            "key",
            "acme",
            "k.pem",
            "--issuer",
            ISSUER,
            "--identity",
            IDENTITY,
        ],
    ] {
        let out = run_cli_async(&args, &[("SKILLREG_TOKEN", ADMIN)]).await;
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
    }
    // Served among the namespace's keys as what it is.
    let (status, keys) = api
        .send(Method::GET, "/v1/namespaces/acme/keys", Some(ADMIN), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    assert_eq!(
        keys["keys"][0],
        json!({
            "keyId": keyless_id, "kind": "keyless", "identity": IDENTITY, "publicKey": "",
            "issuer": ISSUER, "createdAt": keys["keys"][0]["createdAt"],
        }),
        "{keys}"
    );
    // Over REST, a key as well; an issuer beside a key, or one that is no URL, is refused, and
    // so is a caller who is not an admin.
    let (author, author_pub) = openssl_key(work.path(), "author");
    let pem = std::fs::read_to_string(&author_pub).unwrap();
    for (body, token, expected) in [
        (
            json!({"identity": "*", "issuer": ISSUER, "publicKey": pem}),
            Some(ADMIN),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"identity": "*", "issuer": "accounts.google.com"}),
            Some(ADMIN),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"identity": "*", "issuer": ISSUER}),
            None,
            StatusCode::UNAUTHORIZED,
        ),
    ] {
        let (status, answer) = api
            .send(Method::POST, "/v1/namespaces/acme/keys", token, Some(body))
            .await;
        assert_eq!(status, expected, "{answer}");
    }
    let (status, keys) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/keys",
            Some(ADMIN),
            Some(json!({"identity": "release@acme.example", "publicKey": pem})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    let kinds: Vec<&str> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), 2, "{keys}");
    assert!(
        kinds.contains(&"keyless") && kinds.contains(&"key"),
        "{keys}"
    );

    // The real keyless bundle is over other files than this skill's: refused, nothing stored,
    // whether or not the namespace has keyless identities (the statement is read first).
    // Rewritten to cover the skill's files, its signature (and log entry) no longer verify;
    // where no keyless identity is registered, nothing vouches for it.
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/keyed/keys",
            Some(ADMIN),
            Some(json!({"identity": "release@acme.example", "publicKey": pem})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let rewritten = rewritten_for(&FILES);
    for (ns, version, bundle, expected) in [
        ("acme", "1.0.0", BUNDLE, "signature_mismatch"),
        ("keyed", "1.0.0", BUNDLE, "signature_mismatch"),
        ("open", "1.0.0", BUNDLE, "signature_mismatch"),
        ("acme", "1.0.1", &rewritten, "signature_invalid"),
        ("keyed", "1.0.1", &rewritten, "signature_untrusted"),
    ] {
        let (status, body) = publish_signed(&server, ns, version, &FILES, bundle).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{ns} {version}: {body}"
        );
        assert_eq!(code(&body), expected, "{ns} {version}: {body}");
        let (status, _) = api.get(&format!("/v1/skills/{ns}/signed/{version}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{ns} {version} was stored");
    }

    // A key-signed bundle still verifies in a namespace with keyless identities.
    let good = author_bundle(work.path(), &author, &FILES);
    let (status, body) = publish_signed(&server, "acme", "2.0.0", &FILES, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, detail) = api.get("/v1/skills/acme/signed/2.0.0").await;
    let signed = &detail["signatures"][0];
    assert_eq!(signed["by"], "author", "{detail}");
    assert_eq!(signed["verified"], true, "{detail}");
    assert_eq!(signed["identity"], "release@acme.example", "{detail}");
    assert!(signed.get("keyless").is_none(), "{detail}");

    // The install client with --issuer wants a keyless signature: a key-signed one by a
    // matching name does not do, and nothing is written.
    let project = TempDir::new().unwrap();
    let out = add(
        project.path(),
        &[
            "acme/signed@2.0.0",
            "--from",
            &server.url,
            "--identity",
            "release@*",
            "--issuer",
            ISSUER,
        ],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("unsigned"), "{out:?}");
    assert!(!project.path().join(".claude").exists());
    // --issuer needs --identity.
    let out = add(
        project.path(),
        &[
            "acme/signed@2.0.0",
            "--from",
            &server.url,
            "--issuer",
            ISSUER,
        ],
    )
    .await;
    assert_eq!(out.code, 2, "{out:?}");

    // The registration is audited with its issuer.
    let (_, audit) = api
        .send(Method::GET, "/v1/audit?limit=1000", Some(ADMIN), None)
        .await;
    assert!(
        audit["entries"].as_array().unwrap().iter().any(|e| {
            e["action"] == "namespace_key_added"
                && e["details"]["key_id"] == keyless_id.as_str()
                && e["details"]["issuer"] == ISSUER
                && e["details"]["identity"] == IDENTITY
        }),
        "{audit}"
    );
}
