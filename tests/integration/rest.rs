//! The REST admin API through a real socket: every endpoint, every bad input (status, code and
//! an unchanged store), the auth matrix, concurrent publishes, MCP visibility after publish and
//! yank, pinned URIs, ETags, and export/re-publish of every skill of the real corpus.

use std::io::Write as _;

use crate::common::{Modern, TestServer, corpus_dir, parse_body, tar_gz};
use reqwest::StatusCode;
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};

pub(crate) use crate::common::ADMIN;

async fn server() -> TestServer {
    TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            max_upload_bytes: 20 * 1024 * 1024,
            ..Config::default()
        })
        .start()
        .await
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

pub(crate) fn skill_archive(name: &str, description: &str) -> Vec<u8> {
    let md = skill_md(name, description);
    tar_gz(&[
        ("SKILL.md", tar::EntryType::Regular, md.as_bytes()),
        ("refs/a.md", tar::EntryType::Regular, b"ref"),
    ])
}

pub(crate) struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    pub(crate) fn new(server: &TestServer) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: server.base(),
        }
    }

    pub(crate) async fn put(
        &self,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: Vec<u8>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .http
            .put(format!("{}{path}", self.base))
            .header("Content-Type", content_type)
            .body(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        (resp.status(), resp.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn publish(
        &self,
        token: Option<&str>,
        ns: &str,
        name: &str,
        version: &str,
        body: Vec<u8>,
    ) -> (StatusCode, Value) {
        self.put(
            &format!("/v1/skills/{ns}/{name}/{version}"),
            token,
            "application/gzip",
            body,
        )
        .await
    }

    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        (resp.status(), resp.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::GET, path, None, None).await
    }

    pub(crate) async fn token(&self, namespaces: &[&str], actions: &[&str]) -> (String, String) {
        let (status, body) = self
            .send(
                reqwest::Method::POST,
                "/v1/tokens",
                Some(ADMIN),
                Some(json!({"description": "test", "namespaces": namespaces, "actions": actions})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        (
            body["id"].as_str().unwrap().to_owned(),
            body["token"].as_str().unwrap().to_owned(),
        )
    }
}

pub(crate) fn code(body: &Value) -> &str {
    body["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error code in {body}"))
}

#[tokio::test]
async fn publish_read_export_and_republish() {
    let server = server().await;
    let api = Api::new(&server);
    let (status, body) = api
        .publish(
            Some(ADMIN),
            "acme",
            "refunds",
            "1.0.0",
            skill_archive("refunds", "Refunds."),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["created"], true);
    assert_eq!(body["uri"], "skill://acme/refunds/SKILL.md");
    assert_eq!(body["pinned_uri"], "skill://acme/@1.0.0/refunds/SKILL.md");
    assert_eq!(body["files"].as_array().unwrap().len(), 2);

    // Identical content again: a no-op success.
    let (status, body) = api
        .publish(
            Some(ADMIN),
            "acme",
            "refunds",
            "1.0.0",
            skill_archive("refunds", "Refunds."),
        )
        .await;
    assert_eq!((status, &body["created"]), (StatusCode::OK, &json!(false)));

    let (status, list) = api.get("/v1/skills?namespace=acme").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["items"][0]["name"], "refunds");
    assert_eq!(list["items"][0]["current_version"], "1.0.0");

    let (_, skill) = api.get("/v1/skills/acme/refunds").await;
    assert_eq!(skill["versions"][0]["version"], "1.0.0");
    // Times on the wire are the store's text (UTC, milliseconds); ClawHub's are the same
    // instants in epoch milliseconds.
    let published = skill["versions"][0]["published_at"].as_str().unwrap();
    for time in [skill["created_at"].as_str().unwrap(), published] {
        let form = time.len() == 24 && time.as_bytes()[19] == b'.' && time.ends_with('Z');
        assert!(form, "{time}");
    }
    let published: skillreg::core::Timestamp = published.parse().unwrap();
    let (_, claw) = api.get("/api/v1/skills/refunds").await;
    assert_eq!(claw["latestVersion"]["createdAt"], published.epoch_millis());
    let (_, manifest) = api.get("/v1/skills/acme/refunds/1.0.0").await;
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(files[0]["path"], "SKILL.md");
    let digest = files[0]["digest"].as_str().unwrap().to_owned();
    assert_eq!(manifest["frontmatter"]["description"], "Refunds.");

    // Raw bytes with the digest as ETag; If-None-Match gives 304.
    let url = format!("{}/v1/skills/acme/refunds/1.0.0/files/SKILL.md", api.base);
    let resp = api.http.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["etag"], format!("\"{digest}\"").as_str());
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/markdown")
    );
    assert_eq!(
        resp.bytes().await.unwrap(),
        skill_md("refunds", "Refunds.").as_bytes()
    );
    let resp = api
        .http
        .get(&url)
        .header("If-None-Match", format!("\"{digest}\""))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
    let resp = api
        .http
        .get(format!(
            "{}/v1/skills/acme/refunds/1.0.0/files/refs/a.md",
            api.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.bytes().await.unwrap(), &b"ref"[..]);

    // Export is the inverse of publish.
    let export = api
        .http
        .get(format!("{}/v1/skills/acme/refunds/1.0.0/archive", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(export.headers()["content-type"], "application/gzip");
    let bytes = export.bytes().await.unwrap().to_vec();
    let (status, body) = api
        .publish(Some(ADMIN), "acme", "refunds", "1.0.0", bytes.clone())
        .await;
    assert_eq!(
        (status, &body["created"]),
        (StatusCode::OK, &json!(false)),
        "{body}"
    );
    let (status, body) = api
        .publish(Some(ADMIN), "acme", "refunds", "1.0.1", bytes)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // One code per kind of thing not found.
    let (status, body) = api.get("/v1/skills/acme/nope").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "skill_not_found")
    );
    let (status, body) = api.get("/v1/skills/acme/refunds/9.9.9").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "version_not_found")
    );
    let (status, body) = api.get("/v1/skills/acme/refunds/1.0.0/files/nope.md").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "file_not_found")
    );
    let (status, body) = api.get("/v1/nothing-here").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "endpoint_not_found")
    );
}

#[tokio::test]
async fn bad_uploads_get_their_own_code_and_change_nothing() {
    let server = server().await;
    let api = Api::new(&server);
    api.publish(
        Some(ADMIN),
        "acme",
        "base",
        "1.0.0",
        skill_archive("base", "Base."),
    )
    .await;
    let before = server.registry.stats().await.unwrap();

    let md = skill_md("bad", "Bad.");
    let ok = |extra: &[(&'static str, tar::EntryType, &'static [u8])]| {
        let mut entries: Vec<(&str, tar::EntryType, &[u8])> =
            vec![("SKILL.md", tar::EntryType::Regular, md.as_bytes())];
        entries.extend_from_slice(extra);
        tar_gz(&entries)
    };
    let many: Vec<String> = (0..520).map(|i| format!("f{i}.txt")).collect();
    let too_many = {
        let mut e: Vec<(&str, tar::EntryType, &[u8])> =
            vec![("SKILL.md", tar::EntryType::Regular, md.as_bytes())];
        e.extend(
            many.iter()
                .map(|p| (p.as_str(), tar::EntryType::Regular, &b"x"[..])),
        );
        tar_gz(&e)
    };
    let big = vec![7u8; 16 * 1024 * 1024 + 100_000];
    let too_large = tar_gz(&[
        ("SKILL.md", tar::EntryType::Regular, md.as_bytes()),
        ("big.bin", tar::EntryType::Regular, &big),
    ]);
    let zeros = vec![0u8; 40 * 1024 * 1024];
    let bomb = tar_gz(&[("SKILL.md", tar::EntryType::Regular, &zeros)]);
    let bad_yaml = tar_gz(&[(
        "SKILL.md",
        tar::EntryType::Regular,
        b"---\nname: [bad\ndescription: d\n---\n",
    )]);
    let not_utf8 = tar_gz(&[(
        "SKILL.md",
        tar::EntryType::Regular,
        b"---\nname: bad\ndescription: \xff\n---\n",
    )]);
    let other_name = tar_gz(&[(
        "SKILL.md",
        tar::EntryType::Regular,
        skill_md("other", "d").as_bytes(),
    )]);
    let nested_only = tar_gz(&[("bad/SKILL.md", tar::EntryType::Regular, md.as_bytes())]);
    // Two entries named SKILL.md: zip writers refuse that, so write "SKILL.mX" and patch the name
    // in both the local and the central header.
    let zip_dup = {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        w.start_file("SKILL.md", opts).unwrap();
        w.write_all(md.as_bytes()).unwrap();
        w.start_file("SKILL.mX", opts).unwrap();
        w.write_all(md.as_bytes()).unwrap();
        let mut bytes = w.finish().unwrap().into_inner();
        let needle = b"SKILL.mX";
        while let Some(pos) = bytes.windows(needle.len()).position(|win| win == needle) {
            bytes[pos + 7] = b'd';
        }
        bytes
    };

    /// (label, skill name, content type, body, expected status, expected code)
    type Case<'a> = (&'a str, &'a str, &'a str, Vec<u8>, StatusCode, &'a str);
    let cases: Vec<Case> = vec![
        (
            "dotdot",
            "bad",
            "application/gzip",
            ok(&[("../evil", tar::EntryType::Regular, b"x")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsafe_path",
        ),
        (
            "absolute",
            "bad",
            "application/gzip",
            ok(&[("/etc/evil", tar::EntryType::Regular, b"x")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsafe_path",
        ),
        (
            "backslash",
            "bad",
            "application/gzip",
            ok(&[("a\\b", tar::EntryType::Regular, b"x")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsafe_path",
        ),
        (
            "symlink",
            "bad",
            "application/gzip",
            ok(&[("link", tar::EntryType::Symlink, b"")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_a_regular_file",
        ),
        (
            "hardlink",
            "bad",
            "application/gzip",
            ok(&[("hard", tar::EntryType::Link, b"")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_a_regular_file",
        ),
        (
            "device",
            "bad",
            "application/gzip",
            ok(&[("dev", tar::EntryType::Char, b"")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_a_regular_file",
        ),
        (
            "duplicate",
            "bad",
            "application/gzip",
            ok(&[("SKILL.md", tar::EntryType::Regular, b"again")]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "duplicate_path",
        ),
        (
            "zip duplicate",
            "bad",
            "application/zip",
            zip_dup,
            StatusCode::UNPROCESSABLE_ENTITY,
            "duplicate_path",
        ),
        (
            "bomb",
            "bad",
            "application/gzip",
            bomb,
            StatusCode::UNPROCESSABLE_ENTITY,
            "archive_too_large",
        ),
        (
            "too many files",
            "bad",
            "application/gzip",
            too_many,
            StatusCode::UNPROCESSABLE_ENTITY,
            "too_many_files",
        ),
        (
            "too large",
            "bad",
            "application/gzip",
            too_large,
            StatusCode::UNPROCESSABLE_ENTITY,
            "skill_too_large",
        ),
        (
            "no SKILL.md at root",
            "bad",
            "application/gzip",
            nested_only,
            StatusCode::UNPROCESSABLE_ENTITY,
            "missing_skill_md",
        ),
        (
            "name differs from URL",
            "bad",
            "application/gzip",
            other_name,
            StatusCode::UNPROCESSABLE_ENTITY,
            "name_mismatch",
        ),
        (
            "invalid YAML",
            "bad",
            "application/gzip",
            bad_yaml,
            StatusCode::UNPROCESSABLE_ENTITY,
            "frontmatter_invalid_yaml",
        ),
        (
            "non-UTF-8 SKILL.md",
            "bad",
            "application/gzip",
            not_utf8,
            StatusCode::UNPROCESSABLE_ENTITY,
            "skill_md_not_utf8",
        ),
        (
            "not an archive",
            "bad",
            "application/gzip",
            b"hello".to_vec(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_archive",
        ),
        (
            "wrong content type",
            "bad",
            "application/json",
            ok(&[]),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            "over the body limit",
            "bad",
            "application/gzip",
            vec![0u8; 21 * 1024 * 1024],
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
        ),
    ];
    for (label, name, content_type, body, status, want) in cases {
        let (got, resp) = api
            .put(
                &format!("/v1/skills/acme/{name}/1.0.0"),
                Some(ADMIN),
                content_type,
                body,
            )
            .await;
        assert_eq!((got, code(&resp)), (status, want), "{label}: {resp}");
        assert!(
            resp["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{label}"
        );
    }
    let (status, resp) = api
        .publish(Some(ADMIN), "acme", "bad", "1.0", ok(&[]))
        .await;
    assert_eq!(
        (status, code(&resp)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_version")
    );
    // A valid semver too long for a pinned URI to stay under the URI limit.
    let long = format!("1.0.0-{}", "x".repeat(200));
    let (status, resp) = api
        .publish(Some(ADMIN), "acme", "bad", &long, ok(&[]))
        .await;
    assert_eq!(
        (status, code(&resp)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_version"),
        "{resp}"
    );
    let (status, resp) = api
        .publish(Some(ADMIN), "Bad_NS", "bad", "1.0.0", ok(&[]))
        .await;
    assert_eq!(
        (status, code(&resp)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_namespace")
    );
    let (status, resp) = api
        .publish(
            Some(ADMIN),
            "acme",
            "base",
            "1.0.0",
            skill_archive("base", "Changed."),
        )
        .await;
    assert_eq!(
        (status, code(&resp)),
        (StatusCode::CONFLICT, "version_exists")
    );

    assert_eq!(
        server.registry.stats().await.unwrap(),
        before,
        "nothing stored, nothing audited"
    );
}

#[tokio::test]
async fn auth_matrix() {
    let server = server().await;
    let api = Api::new(&server);
    let archive = || skill_archive("tool", "Tool.");
    let (status, body) = api.publish(None, "acme", "tool", "1.0.0", archive()).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (status, body) = api
        .publish(Some("skr_not-a-token"), "acme", "tool", "1.0.0", archive())
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );

    let (yank_id, yank_only) = api.token(&["acme"], &["yank"]).await;
    let (status, body) = api
        .publish(Some(&yank_only), "acme", "tool", "1.0.0", archive())
        .await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "forbidden"));
    let (pub_id, publisher) = api.token(&["acme"], &["publish"]).await;
    let (status, body) = api
        .publish(Some(&publisher), "other", "tool", "1.0.0", archive())
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::FORBIDDEN, "namespace_not_allowed")
    );
    let (status, body) = api
        .publish(Some(&publisher), "acme", "tool", "1.0.0", archive())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Scoped tokens cannot manage tokens or read the audit log.
    let (status, body) = api
        .send(reqwest::Method::GET, "/v1/tokens", Some(&publisher), None)
        .await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "forbidden"));
    let (status, body) = api
        .send(reqwest::Method::GET, "/v1/audit", None, None)
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );

    // Yank needs the yank action.
    let (status, body) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/tool/1.0.0/yank",
            Some(&publisher),
            Some(json!({"reason": "x"})),
        )
        .await;
    assert_eq!((status, code(&body)), (StatusCode::FORBIDDEN, "forbidden"));
    let (status, _) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/tool/1.0.0/yank",
            Some(&yank_only),
            Some(json!({"reason": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    // Revoked tokens stop working at once.
    let (status, _) = api
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/tokens/{pub_id}"),
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = api
        .publish(Some(&publisher), "acme", "tool", "1.0.1", archive())
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );

    // Tokens are listed without secrets; the audit log has every change, with digests.
    let (_, tokens) = api
        .send(reqwest::Method::GET, "/v1/tokens", Some(ADMIN), None)
        .await;
    let listed = tokens.to_string();
    assert!(
        listed.contains(&yank_id) && !listed.contains(&yank_only) && !listed.contains(&publisher)
    );
    let (_, audit) = api
        .send(reqwest::Method::GET, "/v1/audit", Some(ADMIN), None)
        .await;
    let actions: Vec<(&str, &str)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["actor"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        [
            ("token_create", "admin"),
            ("token_create", "admin"),
            ("publish", pub_id.as_str()),
            ("yank", yank_id.as_str()),
            ("token_revoke", "admin")
        ]
    );
    let publish = &audit["entries"][2];
    assert_eq!(publish["details"]["files"][0]["path"], "SKILL.md");
    assert!(
        publish["details"]["content_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // Secrets never reach the audit log either.
    assert!(!audit.to_string().contains(&publisher));
}

/// The seed namespace holds the registry's own skills, which its MCP instructions tell agents to
/// trust: only the admin (and the seed import) publish there, whatever a token's scope says.
#[tokio::test]
async fn only_the_admin_changes_the_seed_namespace() {
    let server = server().await;
    let api = Api::new(&server);
    let archive = || skill_archive("trusted", "Looks like one of the registry's own skills.");
    let (_, everywhere) = api.token(&["*"], &["publish"]).await;
    let (_, seed_scoped) = api.token(&["skillreg"], &["publish"]).await;
    for token in [&everywhere, &seed_scoped] {
        let (status, body) = api
            .publish(Some(token), "skillreg", "trusted", "1.0.0", archive())
            .await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::FORBIDDEN, "namespace_not_allowed"),
            "{body}"
        );
    }
    let (status, body) = api
        .publish(Some(&everywhere), "acme", "trusted", "1.0.0", archive())
        .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "a * token publishes elsewhere: {body}"
    );
    let (status, body) = api
        .publish(Some(ADMIN), "skillreg", "trusted", "1.0.0", archive())
        .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "the admin publishes there: {body}"
    );
    let (status, _) = api.get("/v1/skills/skillreg/trusted").await;
    assert_eq!(status, StatusCode::OK);

    // Nor may another token yank or deprecate what is there.
    let (_, lifecycle) = api.token(&["*"], &["yank", "deprecate"]).await;
    for (path, body) in [
        (
            "/v1/skills/skillreg/trusted/1.0.0/yank",
            json!({"reason": "x"}),
        ),
        (
            "/v1/skills/skillreg/trusted/deprecate",
            json!({"message": "x"}),
        ),
    ] {
        let (status, answer) = api
            .send(reqwest::Method::POST, path, Some(&lifecycle), Some(body))
            .await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::FORBIDDEN, "namespace_not_allowed"),
            "{path}: {answer}"
        );
    }
    let (_, detail) = api.get("/v1/skills/skillreg/trusted").await;
    assert_eq!(detail["versions"][0]["yanked"], false, "{detail}");
    assert_eq!(detail["deprecated"], false, "{detail}");
    let (status, _) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/skillreg/trusted/1.0.0/yank",
            Some(ADMIN),
            Some(json!({"reason": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "the admin yanks there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_publishes_of_one_version() {
    let server = server().await;
    let api = std::sync::Arc::new(Api::new(&server));
    // Different content: exactly one wins, the other gets 409.
    let mut tasks = Vec::new();
    for i in 0..6 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            api.publish(
                Some(ADMIN),
                "acme",
                "race",
                "1.0.0",
                skill_archive("race", &format!("variant {i}")),
            )
            .await
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        if status == StatusCode::CONFLICT {
            assert_eq!(code(&body), "version_exists");
        }
        statuses.push(status);
    }
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == StatusCode::CREATED)
            .count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == StatusCode::CONFLICT)
            .count(),
        5,
        "{statuses:?}"
    );
    // Identical content: one 201, the rest no-op 200s.
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            api.publish(
                Some(ADMIN),
                "acme",
                "same",
                "1.0.0",
                skill_archive("same", "same"),
            )
            .await
            .0
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == StatusCode::CREATED)
            .count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == StatusCode::OK).count(),
        5,
        "{statuses:?}"
    );
}

#[tokio::test]
async fn mcp_follows_publish_yank_and_deprecate() {
    let server = server().await;
    let api = Api::new(&server);
    let mcp = Modern::new(&server.url);
    let current =
        |list: &Value| list["result"]["skills"][0]["_meta"]["dev.skillreg/version"].clone();

    api.publish(
        Some(ADMIN),
        "acme",
        "flow",
        "1.0.0",
        skill_archive("flow", "v1"),
    )
    .await;
    assert_eq!(current(&mcp.call("skills/list", json!({})).await), "1.0.0");
    api.publish(
        Some(ADMIN),
        "acme",
        "flow",
        "1.1.0",
        skill_archive("flow", "v1.1"),
    )
    .await;
    let list = mcp.call("skills/list", json!({})).await;
    assert_eq!(current(&list), "1.1.0");
    assert_eq!(
        list["result"]["skills"][0]["frontmatter"]["description"],
        "v1.1"
    );

    // Yank 1.1.0: 1.0.0 is current again; 1.1.0 stays readable by its pinned URI and says so.
    let (status, _) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/flow/1.1.0/yank",
            Some(ADMIN),
            Some(json!({"reason": "broken"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(current(&mcp.call("skills/list", json!({})).await), "1.0.0");
    let read = mcp
        .call(
            "resources/read",
            json!({"uri": "skill://acme/flow/SKILL.md"}),
        )
        .await;
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("description: v1\n")
    );
    let pinned = mcp
        .call(
            "skills/get",
            json!({"uri": "skill://acme/@1.1.0/flow/SKILL.md"}),
        )
        .await;
    assert_eq!(
        pinned["result"]["skill"]["_meta"]["dev.skillreg/yanked"]["reason"],
        "broken"
    );
    assert_eq!(pinned["result"]["ttlMs"], 86_400_000);
    let pinned_read = mcp
        .call(
            "resources/read",
            json!({"uri": "skill://acme/@1.1.0/flow/refs/a.md"}),
        )
        .await;
    assert_eq!(pinned_read["result"]["contents"][0]["text"], "ref");
    let (_, detail) = api.get("/v1/skills/acme/flow").await;
    assert_eq!(detail["versions"][0]["yanked"], true);
    assert_eq!(detail["versions"][0]["yank_reason"], "broken");
    assert_eq!(detail["current_version"], "1.0.0");

    // Unyank restores it; yanking everything unlists the skill but keeps pinned reads.
    api.send(
        reqwest::Method::DELETE,
        "/v1/skills/acme/flow/1.1.0/yank",
        Some(ADMIN),
        None,
    )
    .await;
    assert_eq!(current(&mcp.call("skills/list", json!({})).await), "1.1.0");
    for v in ["1.0.0", "1.1.0"] {
        api.send(
            reqwest::Method::POST,
            &format!("/v1/skills/acme/flow/{v}/yank"),
            Some(ADMIN),
            Some(json!({})),
        )
        .await;
    }
    assert_eq!(
        mcp.call("skills/list", json!({})).await["result"]["skills"],
        json!([])
    );
    let gone = mcp
        .call("skills/get", json!({"uri": "skill://acme/flow/SKILL.md"}))
        .await;
    assert_eq!(gone["error"]["code"], -32602);
    let still = mcp
        .call(
            "skills/get",
            json!({"uri": "skill://acme/@1.0.0/flow/SKILL.md"}),
        )
        .await;
    assert_eq!(
        still["result"]["skill"]["uri"],
        "skill://acme/@1.0.0/flow/SKILL.md"
    );
    api.send(
        reqwest::Method::DELETE,
        "/v1/skills/acme/flow/1.0.0/yank",
        Some(ADMIN),
        None,
    )
    .await;

    // Deprecation: still listed, says so; frontmatter untouched. `skills/get` keeps each
    // version's part of an entry: this one, from before the deprecation, must not hide it.
    let before = mcp
        .call("skills/get", json!({"uri": "skill://acme/flow/SKILL.md"}))
        .await;
    assert!(
        before["result"]["skill"]["_meta"]
            .get("dev.skillreg/deprecated")
            .is_none()
    );
    let (status, _) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/flow/deprecate",
            Some(ADMIN),
            Some(json!({"message": "use acme/flow2"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let list = mcp.call("skills/list", json!({})).await;
    let entry = &list["result"]["skills"][0];
    assert_eq!(
        entry["_meta"]["dev.skillreg/deprecated"]["message"],
        "use acme/flow2"
    );
    assert_eq!(
        entry["frontmatter"],
        json!({"name": "flow", "description": "v1"})
    );
    let got = mcp
        .call("skills/get", json!({"uri": "skill://acme/flow/SKILL.md"}))
        .await;
    assert_eq!(
        &got["result"]["skill"], entry,
        "skills/get answers the listed entry"
    );
    let (_, listed) = api.get("/v1/skills").await;
    assert_eq!(listed["items"][0]["deprecated"], true);
    api.send(
        reqwest::Method::DELETE,
        "/v1/skills/acme/flow/deprecate",
        Some(ADMIN),
        None,
    )
    .await;
    let list = mcp.call("skills/list", json!({})).await;
    assert!(
        list["result"]["skills"][0]["_meta"]
            .get("dev.skillreg/deprecated")
            .is_none()
    );
    let got = mcp
        .call("skills/get", json!({"uri": "skill://acme/flow/SKILL.md"}))
        .await;
    assert_eq!(got["result"]["skill"], list["result"]["skills"][0]);

    let (status, body) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/flow/7.0.0/yank",
            Some(ADMIN),
            Some(json!({})),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "version_not_found")
    );
    let (status, body) = api
        .send(
            reqwest::Method::POST,
            "/v1/skills/acme/flow/deprecate",
            Some(ADMIN),
            Some(json!([1])),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
}

#[tokio::test]
async fn reads_can_require_a_token() {
    let server = TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            require_read_token: true,
            ..Config::default()
        })
        .start()
        .await;
    let api = Api::new(&server);
    api.publish(
        Some(ADMIN),
        "acme",
        "private",
        "1.0.0",
        skill_archive("private", "p"),
    )
    .await;
    let (status, body) = api.get("/v1/skills").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (status, _) = api
        .send(reqwest::Method::GET, "/v1/skills", Some(ADMIN), None)
        .await;
    assert_eq!(status, StatusCode::OK);

    let anonymous = reqwest::Client::new()
        .post(&server.url)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    let (_, reader) = api.token(&["*"], &["read"]).await;
    let resp = reqwest::Client::new()
        .post(&server.url)
        .bearer_auth(&reader)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "skills/list")
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}))
        .send()
        .await
        .unwrap();
    let body = parse_body(&resp.text().await.unwrap());
    assert_eq!(body["result"]["cacheScope"], "private", "{body}");
    assert_eq!(
        body["result"]["skills"][0]["uri"],
        "skill://acme/private/SKILL.md"
    );
}

#[tokio::test]
async fn openapi_document_matches_the_snapshot() {
    let server = server().await;
    let (status, doc) = Api::new(&server).get("/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let mut doc = doc;
    doc["info"]["version"] = json!("<redacted>");
    let actual = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/openapi.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).expect("snapshot exists (UPDATE_SNAPSHOTS=1 writes it)");
    assert_eq!(
        actual, expected,
        "the OpenAPI document changed: review, then UPDATE_SNAPSHOTS=1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_corpus_skill_exports_and_republishes_unchanged() {
    let source = server().await;
    let ns = skillreg::core::Namespace::new("corpus").unwrap();
    let summary = source
        .registry
        .publisher()
        .import_dirs(&ns, &Default::default(), &[corpus_dir()], |_| {})
        .await
        .unwrap();
    let target = server().await;
    let (a, b) = (Api::new(&source), Api::new(&target));
    let mut cursor: Option<String> = None;
    let mut count = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/skills?limit=50&cursor={c}"),
            None => "/v1/skills?limit=50".to_owned(),
        };
        let (_, page) = a.get(&path).await;
        for item in page["items"].as_array().unwrap() {
            let (name, version) = (
                item["name"].as_str().unwrap(),
                item["current_version"].as_str().unwrap(),
            );
            let url = format!("{}/v1/skills/corpus/{name}/{version}/archive", a.base);
            let archive = a
                .http
                .get(url)
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
                .to_vec();
            let (status, body) = a
                .publish(Some(ADMIN), "corpus", name, version, archive.clone())
                .await;
            assert_eq!(
                (status, &body["created"]),
                (StatusCode::OK, &json!(false)),
                "{name}: {body}"
            );
            let (status, body) = b
                .publish(Some(ADMIN), "corpus", name, version, archive)
                .await;
            assert_eq!(status, StatusCode::CREATED, "{name}: {body}");
            let (_, m1) = a.get(&format!("/v1/skills/corpus/{name}/{version}")).await;
            let (_, m2) = b.get(&format!("/v1/skills/corpus/{name}/{version}")).await;
            assert_eq!(m1["content_digest"], m2["content_digest"], "{name}");
            assert_eq!(m1["files"], m2["files"], "{name}");
            count += 1;
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(count, summary.imported);
}
