//! Signed versions: the registry signs every version it stores in the OpenSSF Model Signing
//! format, and a real third-party verifier (`model_signing` from PyPI) checks a skill installed
//! by `skillreg add` against the registry's published key; authors' bundles, made by the same
//! tool, are checked at publish against the namespace's registered keys.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{
    ADMIN, Modern, TestServer, admin_server, content_bytes, run_cli_async, tar_gz, tool,
};
use crate::rest::{Api, code};
use skillreg::config::{Config, Secret};
use skillreg::core::Digest;
use skillreg::core::signature::{Bundle, PublicKey, Subject};

/// A skill whose paths sort differently by string and by path component ("a-b/x" < "a/x" as
/// strings; "a" < "a-b" as components, which is the order Model Signing uses).
pub(super) const FILES: [(&str, &str); 4] = [
    (
        "SKILL.md",
        "---\nname: signed\ndescription: A skill the registry signs.\n---\n# Signed\n",
    ),
    ("a/x.md", "under a\n"),
    ("a-b/x.md", "under a-b\n"),
    ("references/guide.md", "# Guide\n\nStep one.\n"),
];

pub(super) fn archive(files: &[(&str, &str)]) -> Vec<u8> {
    tar_gz(
        &files
            .iter()
            .map(|(p, b)| (*p, tar::EntryType::Regular, b.as_bytes()))
            .collect::<Vec<_>>(),
    )
}

/// Write `files` into `dir` (a skill directory as its author has it).
pub(super) fn write_dir(dir: &Path, files: &[(&str, &str)]) {
    for (path, body) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
}

/// `model_signing <args>`: (success, stdout and stderr).
pub(super) fn model_signing(args: &[&str]) -> (bool, String) {
    let out = Command::new(tool("SKILLREG_MODEL_SIGNING"))
        .args(args)
        .output()
        .expect("model_signing runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A P-256 key pair made by `openssl` as the Model Signing docs do: (private, public) PEM paths.
pub(super) fn openssl_key(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    let ok = Command::new("openssl")
        .args([
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
        ])
        .arg(&private)
        .status()
        .unwrap()
        .success()
        && Command::new("openssl")
            .args(["ec", "-pubout", "-in"])
            .arg(&private)
            .arg("-out")
            .arg(&public)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
    assert!(ok, "openssl made no key");
    (private, public)
}

async fn text(url: String) -> (StatusCode, String) {
    let resp = reqwest::get(url).await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_signing_verifies_a_skill_installed_by_add_and_refuses_a_changed_byte() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let (status, body) = api
        .publish(Some(ADMIN), "acme", "signed", "1.0.0", archive(&FILES))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // The registry's key, as anyone fetches it, and the bundle of the version.
    let work = TempDir::new().unwrap();
    let (status, pem) = text(format!(
        "{}/.well-known/skillreg/signing-key.pem",
        server.base()
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"), "{pem}");
    let key = work.path().join("registry.pub.pem");
    std::fs::write(&key, &pem).unwrap();
    let (status, bundle) = text(format!(
        "{}/v1/skills/acme/signed/1.0.0/signature",
        server.base()
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{bundle}");
    let signature = work.path().join("signed.sigstore.json");
    std::fs::write(&signature, &bundle).unwrap();

    // The key's id is the bundle's hint, is listed among the registry's keys, and is what the
    // version's `_meta` and REST say signed it.
    let keys: Value = reqwest::get(format!(
        "{}/.well-known/skillreg/signing-keys.json",
        server.base()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let key_id = keys["current"].as_str().unwrap().to_owned();
    let bundle: Value = serde_json::from_str(&bundle).unwrap();
    assert_eq!(bundle["verificationMaterial"]["publicKey"]["hint"], key_id);
    assert_eq!(keys["keys"][0]["keyId"], key_id);
    assert_eq!(keys["keys"][0]["publicKey"], pem);
    let (_, detail) = api.get("/v1/skills/acme/signed/1.0.0").await;
    assert_eq!(
        detail["signatures"],
        json!([{"by": "registry", "keyId": key_id, "verified": true}])
    );

    // On the web page: who signed, the key, and the bundle's link.
    let (status, page) = text(format!("{}/skills/acme/signed", server.base())).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(&format!(
            r#"<p id="signatures">Signed by this registry (key <code title="{key_id}">{}…</code>, verified, <a href="/v1/skills/acme/signed/1.0.0/signature">bundle</a>)"#,
            &key_id[..12]
        )),
        "{page}"
    );

    // Over MCP: the same summary in `_meta`, and the bundle itself at its `uri`, byte for byte.
    let mcp = Modern::new(&server.url);
    let got = mcp
        .call("skills/get", json!({"uri": "skill://acme/signed/SKILL.md"}))
        .await;
    let signatures = &got["result"]["skill"]["_meta"]["dev.skillreg/signatures"];
    let uri = "skillreg://signatures/acme/signed/1.0.0/registry";
    assert_eq!(
        *signatures,
        json!([{"by": "registry", "keyId": key_id, "verified": true, "uri": uri}]),
        "{got}"
    );
    let listed = mcp.call("skills/list", json!({})).await;
    assert_eq!(
        listed["result"]["skills"][0]["_meta"]["dev.skillreg/signatures"],
        *signatures
    );
    let read = mcp.call("resources/read", json!({"uri": uri})).await;
    assert_eq!(
        content_bytes(&read),
        std::fs::read(&signature).unwrap(),
        "{read}"
    );
    let missing = mcp
        .call(
            "resources/read",
            json!({"uri": "skillreg://signatures/acme/signed/1.0.0/author"}),
        )
        .await;
    assert!(missing["error"].is_object(), "{missing}");

    // Installed by `skillreg add` into an agent's folder, untouched, the tool verifies it.
    let project = TempDir::new().unwrap();
    let home = project.path().join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let out = run_cli_async(
        &[
            "add",
            "acme/signed",
            "--from",
            &server.url,
            "--agent",
            "claude-code",
            "--dir",
            project.path().to_str().unwrap(),
        ],
        &[("HOME", home.to_str().unwrap())],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let installed = project.path().join(".claude/skills/signed");
    let args = |dir: &Path| {
        vec![
            "verify".to_owned(),
            "key".to_owned(),
            "--public_key".to_owned(),
            key.display().to_string(),
            "--signature".to_owned(),
            signature.display().to_string(),
            dir.display().to_string(),
        ]
    };
    let run = |dir: &Path| {
        let args = args(dir);
        model_signing(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (ok, out) = run(&installed);
    assert!(ok, "model_signing refused the installed skill: {out}");
    assert!(out.contains("Verification succeeded"), "{out}");

    // One byte changed in any file: refused, naming the file.
    let guide = installed.join("references/guide.md");
    let mut bytes = std::fs::read(&guide).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&guide, bytes).unwrap();
    let (ok, out) = run(&installed);
    assert!(!ok, "model_signing accepted a changed byte: {out}");
    assert!(out.contains("references/guide.md"), "{out}");

    // Another key does not verify the registry's signature.
    let (_, other) = openssl_key(work.path(), "other");
    let mut other_args = args(&installed);
    other_args[3] = other.display().to_string();
    let (ok, out) = model_signing(&other_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!ok, "another key verified the registry's signature: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_digests_are_the_same_with_signing_on_and_off() {
    let signed = admin_server().await;
    let mut config = Config {
        admin_token: Some(Secret::new(ADMIN)),
        ..Config::default()
    };
    config.storage.signing.signing = false;
    let unsigned = TestServer::builder().config(config).start().await;
    let mut versions = Vec::new();
    for server in [&signed, &unsigned] {
        let api = Api::new(server);
        let (status, body) = api
            .publish(Some(ADMIN), "acme", "signed", "1.0.0", archive(&FILES))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (_, detail) = api.get("/v1/skills/acme/signed/1.0.0").await;
        versions.push(detail);
    }
    let [on, off] = versions.as_slice() else {
        unreachable!()
    };
    assert_eq!(on["content_digest"], off["content_digest"]);
    assert!(on["content_digest"].is_string(), "{on}");
    assert_eq!(on["files"], off["files"]);
    assert_eq!(on["signatures"][0]["by"], "registry", "{on}");
    assert!(off.get("signatures").is_none(), "{off}");
    let (status, body) = Api::new(&unsigned)
        .get("/v1/skills/acme/signed/1.0.0/signature")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = text(format!(
        "{}/.well-known/skillreg/signing-key.pem",
        unsigned.base()
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Publish `files` as `acme/signed@version` with an author's bundle (multipart).
pub(super) async fn publish_signed(
    server: &TestServer,
    ns: &str,
    version: &str,
    files: &[(&str, &str)],
    bundle: &str,
) -> (StatusCode, Value) {
    let form = reqwest::multipart::Form::new()
        .part(
            "archive",
            reqwest::multipart::Part::bytes(archive(files))
                .mime_str("application/gzip")
                .unwrap(),
        )
        .part(
            "signature",
            reqwest::multipart::Part::text(bundle.to_owned())
                .mime_str("application/json")
                .unwrap(),
        );
    let resp = reqwest::Client::new()
        .put(format!("{}/v1/skills/{ns}/signed/{version}", server.base()))
        .bearer_auth(ADMIN)
        .multipart(form)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.json().await.unwrap_or(Value::Null))
}

/// `model_signing sign key` over `files` laid out in a directory: the bundle text.
pub(super) fn author_bundle(work: &Path, key: &Path, files: &[(&str, &str)]) -> String {
    let dir = TempDir::new_in(work).unwrap();
    let skill = dir.path().join("signed");
    write_dir(&skill, files);
    let out = dir.path().join("sig.json");
    let (ok, text) = model_signing(&[
        "sign",
        "key",
        "--private_key",
        key.to_str().unwrap(),
        "--signature",
        out.to_str().unwrap(),
        skill.to_str().unwrap(),
    ]);
    assert!(ok, "model_signing sign failed: {text}");
    std::fs::read_to_string(out).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authors_signatures_are_checked_against_their_namespaces_keys() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let work = TempDir::new().unwrap();
    let (author, author_pub) = openssl_key(work.path(), "author");
    let (stranger, stranger_pub) = openssl_key(work.path(), "stranger");
    let good = author_bundle(work.path(), &author, &FILES);

    // No key registered yet: kept, but not verified.
    let (status, body) = publish_signed(&server, "open", "1.0.0", &FILES, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, detail) = api.get("/v1/skills/open/signed/1.0.0").await;
    assert_eq!(detail["signatures"][0]["by"], "author", "{detail}");
    assert_eq!(detail["signatures"][0]["verified"], false, "{detail}");
    assert_eq!(detail["signatures"][1]["by"], "registry", "{detail}");

    // Keys are registered by an admin, one per namespace here.
    let register = |ns: &'static str, identity: &'static str, key: &Path| {
        let pem = std::fs::read_to_string(key).unwrap();
        let api = &api;
        async move {
            api.send(
                Method::POST,
                &format!("/v1/namespaces/{ns}/keys"),
                Some(ADMIN),
                Some(json!({"identity": identity, "publicKey": pem})),
            )
            .await
        }
    };
    let (status, keys) = register("acme", "release@acme.example", &author_pub).await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    assert_eq!(keys["keys"][0]["identity"], "release@acme.example");
    let (status, _) = register("other", "someone@other.example", &stranger_pub).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/keys",
            None,
            Some(json!({"identity": "x", "publicKey": "y"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    // Verified with the namespace's key: served as signed by its identity.
    let (status, body) = publish_signed(&server, "acme", "1.0.0", &FILES, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, detail) = api.get("/v1/skills/acme/signed/1.0.0").await;
    assert_eq!(
        detail["signatures"][0],
        json!({"by": "author", "keyId": keys["keys"][0]["keyId"], "identity": "release@acme.example", "verified": true})
    );
    let (_, bundles) = api.get("/v1/skills/acme/signed/1.0.0/signatures").await;
    assert_eq!(
        bundles["signatures"][0]["bundle"],
        serde_json::from_str::<Value>(&good).unwrap()
    );

    // Each hostile bundle is refused with its own code, and nothing is stored.
    let mut changed = FILES;
    changed[3].1 = "# Guide\n\nStep two.\n";
    let over_other_bytes = author_bundle(work.path(), &author, &changed);
    let by_stranger = author_bundle(work.path(), &stranger, &FILES);
    let mut forged: Value = serde_json::from_str(&good).unwrap();
    let sig = forged["dsseEnvelope"]["signatures"][0]["sig"]
        .as_str()
        .unwrap()
        .to_owned();
    let forged_sig = by_stranger_signature(&by_stranger);
    assert_ne!(sig, forged_sig);
    forged["dsseEnvelope"]["signatures"][0]["sig"] = forged_sig.into();
    for (version, bundle, expected) in [
        ("2.0.0", over_other_bytes.as_str(), "signature_mismatch"),
        ("2.0.1", by_stranger.as_str(), "signature_untrusted"),
        ("2.0.2", &forged.to_string(), "signature_invalid"),
        ("2.0.3", "{\"not\": \"a bundle\"}", "signature_malformed"),
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
    // A bundle made for a skill directory of other files (a subject that does not match).
    let fewer = author_bundle(work.path(), &author, &FILES[..2]);
    let (status, body) = publish_signed(&server, "acme", "2.0.4", &FILES, &fewer).await;
    assert_eq!(code(&body), "signature_mismatch", "{status} {body}");

    // A namespace that requires signatures refuses an unsigned upload, takes a signed one.
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/signatures",
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = api
        .publish(Some(ADMIN), "acme", "signed", "3.0.0", archive(&FILES))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(code(&body), "signature_required", "{body}");
    let (status, body) = publish_signed(&server, "acme", "3.0.0", &FILES, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // `skillreg publish --signature`: checked before the upload, then by the registry.
    let dir = TempDir::new_in(work.path()).unwrap();
    let skill = dir.path().join("signed");
    write_dir(&skill, &FILES);
    let sig = dir.path().join("sig.json");
    let publish = |sig: &Path, version: &'static str| {
        let args = [
            "publish".to_owned(),
            skill.display().to_string(),
            "--registry".to_owned(),
            server.base(),
            "--namespace".to_owned(),
            "acme".to_owned(),
            "--version".to_owned(),
            version.to_owned(),
            "--signature".to_owned(),
            sig.display().to_string(),
        ];
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_cli_async(&args, &[("SKILLREG_TOKEN", ADMIN)]).await
        }
    };
    std::fs::write(&sig, &over_other_bytes).unwrap();
    let out = publish(&sig, "4.0.0").await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("signature_mismatch"), "{out:?}");
    let (status, _) = api.get("/v1/skills/acme/signed/4.0.0").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    std::fs::write(&sig, &good).unwrap();
    let out = publish(&sig, "4.0.0").await;
    assert_eq!(out.code, 0, "{out:?}");
    let (_, detail) = api.get("/v1/skills/acme/signed/4.0.0").await;
    assert_eq!(detail["signatures"][0]["identity"], "release@acme.example");

    // Every change to the keys and the requirement is audited.
    let (_, audit) = api
        .send(Method::GET, "/v1/audit?limit=1000", Some(ADMIN), None)
        .await;
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    for action in ["namespace_key_added", "namespace_signature_required"] {
        assert!(
            actions.contains(&action),
            "{action} not audited: {actions:?}"
        );
    }
}

/// The signature of a bundle, base64 (to forge another bundle's).
fn by_stranger_signature(bundle: &str) -> String {
    let value: Value = serde_json::from_str(bundle).unwrap();
    value["dsseEnvelope"]["signatures"][0]["sig"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `skillreg add … --agent claude-code --dir <project>` with a home of its own.
pub(super) async fn add(project: &Path, args: &[&str]) -> crate::common::CliOutput {
    let home = project.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let mut all = vec!["add"];
    all.extend_from_slice(args);
    all.extend(["--agent", "claude-code", "--dir", project.to_str().unwrap()]);
    run_cli_async(&all, &[("HOME", home.to_str().unwrap())]).await
}

pub(super) async fn check(project: &Path) -> crate::common::CliOutput {
    let home = project.join(".home");
    run_cli_async(
        &["check", "--offline", "--dir", project.to_str().unwrap()],
        &[("HOME", home.to_str().unwrap())],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_require_signed_verifies_before_writing_and_check_verifies_again() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let (status, body) = api
        .publish(Some(ADMIN), "acme", "signed", "1.0.0", archive(&FILES))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let work = TempDir::new().unwrap();

    // Trusting the keys the registry publishes: installed, the signature kept and recorded.
    let project = TempDir::new().unwrap();
    let p = project.path();
    let out = add(
        p,
        &["acme/signed", "--from", &server.url, "--require-signed"],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let keys: Value = reqwest::get(format!(
        "{}/.well-known/skillreg/signing-keys.json",
        server.base()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let key_id = keys["current"].as_str().unwrap();
    let lock = std::fs::read_to_string(p.join("skills.lock")).unwrap();
    assert!(
        lock.contains(&format!(
            "signature = {{ by = \"registry\", key = \"{key_id}\" }}"
        )),
        "{lock}"
    );
    let kept_bundle = p.join(".skillreg/signatures/acme/signed.sigstore.json");
    let kept_key = p.join(format!(".skillreg/keys/{key_id}.pem"));
    // What the lock keeps is what Model Signing's own verifier reads.
    let (ok, text) = model_signing(&[
        "verify",
        "key",
        "--public_key",
        kept_key.to_str().unwrap(),
        "--signature",
        kept_bundle.to_str().unwrap(),
        p.join(".claude/skills/signed").to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let out = check(p).await;
    assert_eq!(out.code, 0, "{out:?}");

    // A kept bundle that no longer verifies fails `check`.
    let mut bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(&kept_bundle).unwrap()).unwrap();
    let (_, stranger) = openssl_key(work.path(), "stranger");
    let stranger_sig = by_stranger_signature(&author_bundle(
        work.path(),
        &work.path().join("stranger.pem"),
        &FILES,
    ));
    bundle["dsseEnvelope"]["signatures"][0]["sig"] = stranger_sig.into();
    std::fs::write(&kept_bundle, bundle.to_string()).unwrap();
    let out = check(p).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("signature does not verify"), "{out:?}");

    // A key the user trusts that did not sign it: refused, nothing written.
    let other = TempDir::new().unwrap();
    let out = add(
        other.path(),
        &[
            "acme/signed",
            "--from",
            &server.url,
            "--key",
            stranger.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("unsigned"), "{out:?}");
    assert!(!other.path().join(".claude").exists());
    assert!(!other.path().join("skills.lock").exists());

    // An author's signature, by identity, with the author's key.
    let (author, author_pub) = openssl_key(work.path(), "author");
    let pem = std::fs::read_to_string(&author_pub).unwrap();
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/namespaces/acme/keys",
            Some(ADMIN),
            Some(json!({"identity": "release@acme.example", "publicKey": pem})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut next = FILES;
    next[3].1 = "# Guide\n\nStep one, then two.\n";
    let good = author_bundle(work.path(), &author, &next);
    let (status, body) = publish_signed(&server, "acme", "1.1.0", &next, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let by_author = TempDir::new().unwrap();
    let out = add(
        by_author.path(),
        &[
            "acme/signed@1.1.0",
            "--from",
            &server.url,
            "--identity",
            "release@acme.example",
            "--key",
            author_pub.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let lock = std::fs::read_to_string(by_author.path().join("skills.lock")).unwrap();
    assert!(
        lock.contains("by = \"author\"") && lock.contains("identity = \"release@acme.example\""),
        "{lock}"
    );
    // The same identity asked of the registry-only 1.0.0: refused.
    let out = add(
        TempDir::new().unwrap().path(),
        &[
            "acme/signed@1.0.0",
            "--from",
            &server.url,
            "--identity",
            "release@acme.example",
            "--key",
            author_pub.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("unsigned"), "{out:?}");

    // A signature never makes a revoked version installable.
    let (status, _) = api
        .send(
            Method::POST,
            "/v1/skills/acme/signed/1.1.0/revoke",
            Some(ADMIN),
            Some(json!({"reason": "leaked key"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let revoked = TempDir::new().unwrap();
    let out = add(
        revoked.path(),
        &[
            "acme/signed@1.1.0",
            "--from",
            &server.url,
            "--require-signed",
        ],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(!revoked.path().join(".claude").exists(), "{out:?}");
    assert!(!revoked.path().join("skills.lock").exists(), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_require_signed_refuses_an_unsigned_registry() {
    let mut config = Config::default();
    config.storage.signing.signing = false;
    config.admin_token = Some(Secret::new(ADMIN));
    let server = TestServer::builder().config(config).start().await;
    let (status, body) = Api::new(&server)
        .publish(Some(ADMIN), "acme", "signed", "1.0.0", archive(&FILES))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let project = TempDir::new().unwrap();
    let out = add(
        project.path(),
        &["acme/signed", "--from", &server.url, "--require-signed"],
    )
    .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("unsigned") && out.stderr.contains("no signature"),
        "{out:?}"
    );
    assert!(!project.path().join(".claude").exists());
}

/// A new key (the operator replaced the key file) signs new versions; the old key stays
/// published, so what it signed still verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_stays_published_and_its_signatures_verify() {
    let data = TempDir::new().unwrap();
    let keys = TempDir::new().unwrap();
    let mut key_ids = Vec::new();
    for (key, version) in [("old.pem", "1.0.0"), ("new.pem", "1.1.0")] {
        let mut config = Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        };
        config.storage.signing.signing_key = Some(keys.path().join(key));
        let server = TestServer::builder()
            .data_dir(data.path())
            .config(config)
            .start()
            .await;
        let (status, body) = Api::new(&server)
            .publish(Some(ADMIN), "acme", "signed", version, archive(&FILES))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let listed: Value = reqwest::get(format!(
            "{}/.well-known/skillreg/signing-keys.json",
            server.base()
        ))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        key_ids.push(listed["current"].as_str().unwrap().to_owned());
        if version == "1.1.0" {
            let published: Vec<&str> = listed["keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["keyId"].as_str().unwrap())
                .collect();
            assert_eq!(published, [key_ids[0].as_str(), key_ids[1].as_str()]);
            assert_ne!(key_ids[0], key_ids[1]);
            // The version the old key signed verifies with it, as published now.
            let old =
                PublicKey::from_pem(listed["keys"][0]["publicKey"].as_str().unwrap()).unwrap();
            let (_, bundle) = text(format!(
                "{}/v1/skills/acme/signed/1.0.0/signature",
                server.base()
            ))
            .await;
            let files: Vec<(&str, Digest)> = FILES
                .iter()
                .map(|(p, b)| (*p, Digest::of(b.as_bytes())))
                .collect();
            let subject = Subject {
                namespace: &"acme".parse().unwrap(),
                name: &"signed".parse().unwrap(),
                version: &"1.0.0".parse().unwrap(),
                content_digest: Digest::of(b""),
                files: &files,
            };
            Bundle::read(&bundle, &subject)
                .unwrap()
                .verify(&old)
                .unwrap();
        }
        server.registry.close().await;
    }
}
