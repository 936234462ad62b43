//! Keyless author signatures: a namespace registers a keyless identity (OIDC issuer and an
//! identity policy) with the CLI or REST, audited; a keyless Sigstore bundle is checked at
//! publish, offline, and refused with its code when it does not cover the skill's files or
//! does not verify, with nothing stored; key-signed bundles still verify beside it.
//!
//! The first test's keyless bundle is a real one from Sigstore's production instance
//! (`tests/fixtures/keyless/`), over two files that are not a skill: it cannot be accepted for
//! one. The others sign skills keyless with a Sigstore instance of the tests' own
//! (`keyless_instance`: a Fulcio CA, a CT log and a Rekor log, and the `trusted_root.json` the
//! server's `sigstore_trusted_root` and `add --sigstore-trusted-root` name), verified by the
//! same code and policy as production bundles: accepted and installed when they are good,
//! refused with their codes when not.

use std::path::{Path, PathBuf};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::keyless_instance::{Instance, Signing};
use super::signing::{FILES, add, archive, author_bundle, check, openssl_key, publish_signed};
use crate::common::{ADMIN, Modern, TestServer, admin_server, run_cli_async};
use crate::rest::{Api, code};
use skillreg::config::{Config, Secret};
use skillreg::core::{Digest, Timestamp};

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

/// The identity and issuer the instance's certificates name in the tests below.
const INSTANCE_ISSUER: &str = "https://oidc.skillreg.test";
const INSTANCE_IDENTITY: &str = "release@acme.example";

/// A server verifying keyless bundles against `instance`'s trusted root (written in `dir`, its
/// path returned), with `acme` accepting [`INSTANCE_IDENTITY`] from [`INSTANCE_ISSUER`].
async fn instance_server(instance: &Instance, dir: &Path) -> (TestServer, PathBuf) {
    let root = dir.join("trusted_root.json");
    std::fs::write(&root, instance.trusted_root()).unwrap();
    let mut config = Config {
        admin_token: Some(Secret::new(ADMIN)),
        ..Config::default()
    };
    config.storage.signing.sigstore_trusted_root = Some(root.clone());
    let server = TestServer::builder().config(config).start().await;
    let (status, keys) = Api::new(&server)
        .send(
            Method::POST,
            "/v1/namespaces/acme/keys",
            Some(ADMIN),
            Some(json!({"identity": INSTANCE_IDENTITY, "issuer": INSTANCE_ISSUER})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    (server, root)
}

/// `bundle` with `edit` applied to its JSON.
fn edited(bundle: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut value: Value = serde_json::from_str(bundle).unwrap();
    edit(&mut value);
    value.to_string()
}

/// `text` (base64) with one bit of its byte `at` flipped.
fn flip(text: &str, at: usize) -> String {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as B64;
    let mut bytes = B64.decode(text).unwrap();
    bytes[at] ^= 1;
    B64.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_signed_keyless_is_accepted_served_and_installed_verified() {
    let instance = Instance::new();
    let work = TempDir::new().unwrap();
    let (server, root) = instance_server(&instance, work.path()).await;
    let api = Api::new(&server);

    // The same files unsigned, for their content digest.
    let (status, body) = api
        .publish(Some(ADMIN), "plain", "signed", "1.0.0", archive(&FILES))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, plain) = api.get("/v1/skills/plain/signed/1.0.0").await;
    let content_digest: Digest = plain["content_digest"].as_str().unwrap().parse().unwrap();

    let made = instance.sign(&Signing {
        content_digest: Some(content_digest),
        ..Signing::new(INSTANCE_IDENTITY, INSTANCE_ISSUER, "acme", "1.0.0", &FILES)
    });
    let (status, body) = publish_signed(&server, "acme", "1.0.0", &FILES, &made.bundle).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Served as signed by the certificate's identity, with the issuer and the log entry.
    let (status, detail) = api.get("/v1/skills/acme/signed/1.0.0").await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(
        detail["content_digest"], plain["content_digest"],
        "{detail}"
    );
    // The same files, byte for byte (their URIs name each namespace).
    let files = |version: &Value| -> Vec<Value> {
        let mut files = version["files"].as_array().unwrap().clone();
        for file in &mut files {
            file.as_object_mut().unwrap().remove("uri");
        }
        files
    };
    assert_eq!(files(&detail), files(&plain), "{detail}");
    assert_eq!(files(&detail).len(), FILES.len(), "{detail}");
    let signed_at = Timestamp::from_epoch_secs(made.integrated_time).to_string();
    let author = &detail["signatures"][0];
    assert_eq!(author["by"], "author", "{detail}");
    assert_eq!(author["verified"], true, "{detail}");
    assert_eq!(author["identity"], INSTANCE_IDENTITY, "{detail}");
    assert_eq!(author["keyId"], made.key_id.as_str(), "{detail}");
    assert_eq!(
        author["keyless"],
        json!({"issuer": INSTANCE_ISSUER, "logIndex": made.log_index, "signedAt": signed_at}),
        "{detail}"
    );
    assert!(author.get("certificate").is_none(), "{detail}");
    assert_eq!(detail["signatures"][1]["by"], "registry", "{detail}");
    // The bundle itself, byte for byte.
    let resp = reqwest::get(format!(
        "{}/v1/skills/acme/signed/1.0.0/signature?by=author",
        server.base()
    ))
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.text().await.unwrap(), made.bundle);

    // Over MCP, the same summary in `_meta`.
    let got = Modern::new(&server.url)
        .call("skills/get", json!({"uri": "skill://acme/signed/SKILL.md"}))
        .await;
    let meta = &got["result"]["skill"]["_meta"]["dev.skillreg/signatures"][0];
    for field in ["by", "keyId", "identity", "verified", "keyless"] {
        assert_eq!(meta[field], author[field], "{field}: {got}");
    }
    assert_eq!(
        meta["uri"], "skillreg://signatures/acme/signed/1.0.0/author",
        "{got}"
    );

    // `add` verifies it against the instance's root before writing; the lock records who.
    let project = TempDir::new().unwrap();
    let p = project.path();
    let root = root.to_str().unwrap();
    let out = add(
        p,
        &[
            "acme/signed@1.0.0",
            "--from",
            &server.url,
            "--identity",
            "release@*",
            "--issuer",
            INSTANCE_ISSUER,
            "--sigstore-trusted-root",
            root,
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let installed = p.join(".claude/skills/signed");
    for (path, text) in FILES {
        assert_eq!(std::fs::read_to_string(installed.join(path)).unwrap(), text);
    }
    let lock = std::fs::read_to_string(p.join("skills.lock")).unwrap();
    assert!(
        lock.contains(&format!(
            "signature = {{ by = \"author\", key = \"{}\", identity = \"{INSTANCE_IDENTITY}\", \
             issuer = \"{INSTANCE_ISSUER}\" }}",
            made.key_id
        )),
        "{lock}"
    );
    let out = check(p).await;
    assert_eq!(out.code, 0, "{out:?}");

    // Against the built-in public-good root, the same bundle is not trusted (its log is not
    // Sigstore's), and nothing is written.
    let elsewhere = TempDir::new().unwrap();
    let out = add(
        elsewhere.path(),
        &[
            "acme/signed@1.0.0",
            "--from",
            &server.url,
            "--identity",
            INSTANCE_IDENTITY,
            "--issuer",
            INSTANCE_ISSUER,
        ],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("[signature_tlog_invalid]"), "{out:?}");
    assert!(!elsewhere.path().join(".claude").exists());
    assert!(!elsewhere.path().join("skills.lock").exists());
    // Another issuer than the certificate's: not this signature either.
    let out = add(
        elsewhere.path(),
        &[
            "acme/signed@1.0.0",
            "--from",
            &server.url,
            "--identity",
            INSTANCE_IDENTITY,
            "--issuer",
            "https://other.skillreg.test",
            "--sigstore-trusted-root",
            root,
        ],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("[signature_identity_mismatch]"),
        "{out:?}"
    );
    assert!(!elsewhere.path().join(".claude").exists());
    // A trusted root that does not read is a usage error, before anything is fetched.
    let bad = work.path().join("bad.json");
    std::fs::write(&bad, "{\"mediaType\": 1}").unwrap();
    let out = add(
        elsewhere.path(),
        &[
            "acme/signed@1.0.0",
            "--from",
            &server.url,
            "--identity",
            INSTANCE_IDENTITY,
            "--issuer",
            INSTANCE_ISSUER,
            "--sigstore-trusted-root",
            bad.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--sigstore-trusted-root"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyless_bundles_that_do_not_verify_are_refused_with_their_codes_and_nothing_stored() {
    let instance = Instance::new();
    let work = TempDir::new().unwrap();
    let (server, _) = instance_server(&instance, work.path()).await;
    let api = Api::new(&server);
    let good = |version| Signing::new(INSTANCE_IDENTITY, INSTANCE_ISSUER, "acme", version, &FILES);

    let mut changed = FILES;
    changed[3].1 = "# Guide\n\nStep two.\n";
    let other_bytes = instance.sign(&Signing {
        files: &changed,
        ..good("1.0.0")
    });
    let other_identity = instance.sign(&Signing {
        identity: "intruder@acme.example",
        ..good("1.0.1")
    });
    let other_issuer = instance.sign(&Signing {
        issuer: "https://other.skillreg.test",
        ..good("1.0.2")
    });
    // Valid for ten minutes, ended ten minutes before the log integrated the entry.
    let expired = instance.sign(&Signing {
        validity: (-1200, -600),
        ..good("1.0.3")
    });
    let set = edited(&instance.sign(&good("1.0.4")).bundle, |v| {
        let promise = &mut v["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"];
        let set = promise["signedEntryTimestamp"].as_str().unwrap();
        promise["signedEntryTimestamp"] = flip(set, 40).into();
    });
    let checkpoint = edited(&instance.sign(&good("1.0.5")).bundle, |v| {
        let proof = &mut v["verificationMaterial"]["tlogEntries"][0]["inclusionProof"];
        let envelope = proof["checkpoint"]["envelope"].as_str().unwrap();
        let (note, signature) = envelope.trim_end().rsplit_once(' ').unwrap();
        // Past the key hint's four bytes: the signature's.
        proof["checkpoint"]["envelope"] = format!("{note} {}\n", flip(signature, 12)).into();
    });
    let proof = edited(&instance.sign(&good("1.0.6")).bundle, |v| {
        let proof = &mut v["verificationMaterial"]["tlogEntries"][0]["inclusionProof"];
        let hash = proof["hashes"][0].as_str().unwrap();
        proof["hashes"][0] = flip(hash, 0).into();
    });
    let unlisted = instance.sign(&Signing {
        unlisted_log: true,
        ..good("1.0.7")
    });
    // A whole other instance: its log, CT log and CA are in no root the server has.
    let foreign = Instance::new().sign(&good("1.0.8"));
    for (version, bundle, expected) in [
        ("1.0.0", other_bytes.bundle.as_str(), "signature_mismatch"),
        (
            "1.0.1",
            &other_identity.bundle,
            "signature_identity_mismatch",
        ),
        ("1.0.2", &other_issuer.bundle, "signature_identity_mismatch"),
        ("1.0.3", &expired.bundle, "signature_certificate_expired"),
        ("1.0.4", &set, "signature_tlog_invalid"),
        ("1.0.5", &checkpoint, "signature_tlog_invalid"),
        ("1.0.6", &proof, "signature_tlog_invalid"),
        ("1.0.7", &unlisted.bundle, "signature_tlog_invalid"),
        ("1.0.8", &foreign.bundle, "signature_tlog_invalid"),
    ] {
        let (status, body) = publish_signed(&server, "acme", version, &FILES, bundle).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{version}: {body}"
        );
        assert_eq!(code(&body), expected, "{version}: {body}");
        let (status, _) = api.get(&format!("/v1/skills/acme/signed/{version}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{version} was stored");
    }
    // The other identity's bundle is refused naming who signed it.
    let (_, body) = publish_signed(&server, "acme", "1.0.1", &FILES, &other_identity.bundle).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("intruder@acme.example"),
        "{body}"
    );
    // A namespace that registers no keyless identity does not take a good one.
    let (status, body) = publish_signed(
        &server,
        "open",
        "1.0.0",
        &FILES,
        &instance
            .sign(&Signing::new(
                INSTANCE_IDENTITY,
                INSTANCE_ISSUER,
                "open",
                "1.0.0",
                &FILES,
            ))
            .bundle,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, detail) = api.get("/v1/skills/open/signed/1.0.0").await;
    assert_eq!(detail["signatures"][0]["verified"], false, "{detail}");

    // The same instance's good bundle is accepted on the same server: the refusals are the
    // bundles', not the server's configuration.
    let accepted = instance.sign(&good("2.0.0"));
    let (status, body) = publish_signed(&server, "acme", "2.0.0", &FILES, &accepted.bundle).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, detail) = api.get("/v1/skills/acme/signed/2.0.0").await;
    assert_eq!(detail["signatures"][0]["verified"], true, "{detail}");
    assert_eq!(
        detail["signatures"][0]["keyId"],
        accepted.key_id.as_str(),
        "{detail}"
    );
}
