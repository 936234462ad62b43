//! The hostile input corpus in one place: archives, SKILL.md/frontmatter, URIs and HTTP. Every
//! case must get a clear error with its stable code (never a panic or a 500), and the store must
//! be exactly as it was afterwards (row counts, bytes and the audit log compared).

use std::io::Write as _;
use std::time::Duration;

use crate::common::{Legacy, Modern, TestServer, tar_gz};
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};
use tokio::io::AsyncWriteExt as _;

const ADMIN: &str = "hostile-admin-1072949cbba2e4fdf462cd29a6e93264";

fn with_skill_md(md: &[u8]) -> Vec<u8> {
    tar_gz(&[("SKILL.md", tar::EntryType::Regular, md)])
}

fn fm(yaml: &str) -> Vec<u8> {
    format!("---\n{yaml}---\n# Body\n").into_bytes()
}

/// (case, content type, body, expected HTTP status, expected code), all as PUT acme/evil/1.0.0.
fn upload_cases() -> Vec<(String, &'static str, Vec<u8>, u16, &'static str)> {
    let good = fm("name: evil\ndescription: d\n");
    let with = |extra: (&str, tar::EntryType, &[u8])| {
        tar_gz(&[("SKILL.md", tar::EntryType::Regular, &good), extra])
    };
    let mut bomb_yaml =
        String::from("name: evil\ndescription: d\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        bomb_yaml.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n",
            p = i - 1
        ));
    }
    let zeros = vec![0u8; 40 * 1024 * 1024];
    let mut zip_with_abs = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip_with_abs
        .start_file("SKILL.md", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip_with_abs.write_all(&good).unwrap();
    zip_with_abs
        .start_file("/etc/cron.d/evil", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip_with_abs.write_all(b"x").unwrap();
    let zip_with_abs = zip_with_abs.finish().unwrap().into_inner();
    let mut trailing = with_skill_md(&good);
    trailing.extend_from_slice(b"garbage after the gzip member");
    let mut truncated = with_skill_md(&good);
    truncated.truncate(truncated.len() / 2);
    let long_name = format!("{}/x", "d".repeat(1100));
    vec![
        // Archives
        (
            "tar: ../ entry".into(),
            "application/gzip",
            with(("../escape", tar::EntryType::Regular, b"x")),
            422,
            "unsafe_path",
        ),
        (
            "tar: absolute path".into(),
            "application/gzip",
            with(("/etc/passwd", tar::EntryType::Regular, b"x")),
            422,
            "unsafe_path",
        ),
        (
            "tar: backslash".into(),
            "application/gzip",
            with(("..\\evil", tar::EntryType::Regular, b"x")),
            422,
            "unsafe_path",
        ),
        (
            "tar: nested ..".into(),
            "application/gzip",
            with(("a/../../b", tar::EntryType::Regular, b"x")),
            422,
            "unsafe_path",
        ),
        (
            "tar: overlong path".into(),
            "application/gzip",
            tar_gz_long(&good, &long_name),
            422,
            "unsafe_path",
        ),
        (
            "tar: symlink".into(),
            "application/gzip",
            with(("link", tar::EntryType::Symlink, b"")),
            422,
            "not_a_regular_file",
        ),
        (
            "tar: hard link".into(),
            "application/gzip",
            with(("hard", tar::EntryType::Link, b"")),
            422,
            "not_a_regular_file",
        ),
        (
            "tar: block device".into(),
            "application/gzip",
            with(("dev", tar::EntryType::Block, b"")),
            422,
            "not_a_regular_file",
        ),
        (
            "tar: fifo".into(),
            "application/gzip",
            with(("fifo", tar::EntryType::Fifo, b"")),
            422,
            "not_a_regular_file",
        ),
        (
            "tar: duplicate entry".into(),
            "application/gzip",
            with(("SKILL.md", tar::EntryType::Regular, b"x")),
            422,
            "duplicate_path",
        ),
        (
            "tar: file and directory clash".into(),
            "application/gzip",
            tar_gz(&[
                ("SKILL.md", tar::EntryType::Regular, &good),
                ("a", tar::EntryType::Regular, b"1"),
                ("a/b", tar::EntryType::Regular, b"2"),
            ]),
            422,
            "path_conflict",
        ),
        (
            "gzip bomb".into(),
            "application/gzip",
            with_skill_md(&zeros),
            422,
            "archive_too_large",
        ),
        (
            "gzip: trailing garbage".into(),
            "application/gzip",
            trailing,
            422,
            "invalid_archive",
        ),
        (
            "gzip: truncated".into(),
            "application/gzip",
            truncated,
            422,
            "invalid_archive",
        ),
        (
            "not an archive".into(),
            "application/gzip",
            b"{\"json\": true}".to_vec(),
            422,
            "invalid_archive",
        ),
        (
            "zip: absolute path".into(),
            "application/zip",
            zip_with_abs,
            422,
            "unsafe_path",
        ),
        (
            "zip: not a zip".into(),
            "application/zip",
            b"PK\x03\x04garbage".to_vec(),
            422,
            "invalid_archive",
        ),
        (
            "empty archive".into(),
            "application/gzip",
            tar_gz(&[]),
            422,
            "missing_skill_md",
        ),
        (
            "SKILL.md only in a subdirectory".into(),
            "application/gzip",
            tar_gz(&[("evil/SKILL.md", tar::EntryType::Regular, &good)]),
            422,
            "missing_skill_md",
        ),
        // SKILL.md and frontmatter
        (
            "yaml alias bomb".into(),
            "application/gzip",
            with_skill_md(&fm(&bomb_yaml)),
            422,
            "frontmatter_invalid_yaml",
        ),
        (
            "deeply nested flow yaml".into(),
            "application/gzip",
            with_skill_md(&fm(&format!(
                "name: evil\ndescription: d\nx: {}{}\n",
                "[".repeat(5000),
                "]".repeat(5000)
            ))),
            422,
            "frontmatter_too_large",
        ),
        (
            "huge scalar".into(),
            "application/gzip",
            with_skill_md(&fm(&format!(
                "name: evil\ndescription: d\nx: {}\n",
                "y".repeat(200_000)
            ))),
            422,
            "frontmatter_too_large",
        ),
        (
            "duplicate keys".into(),
            "application/gzip",
            with_skill_md(&fm("name: evil\ndescription: d\ndescription: e\n")),
            422,
            "frontmatter_duplicate_key",
        ),
        (
            "NUL in SKILL.md".into(),
            "application/gzip",
            with_skill_md(b"---\nname: evil\ndescription: \0\n---\n"),
            422,
            "frontmatter_invalid_yaml",
        ),
        (
            "invalid UTF-8".into(),
            "application/gzip",
            with_skill_md(b"---\nname: evil\ndescription: \xc3\x28\n---\n"),
            422,
            "skill_md_not_utf8",
        ),
        (
            "UTF-16 BOM".into(),
            "application/gzip",
            with_skill_md(b"\xff\xfe-\0-\0-\0"),
            422,
            "skill_md_not_utf8",
        ),
        (
            "no frontmatter".into(),
            "application/gzip",
            with_skill_md(b"# Just a heading\n"),
            422,
            "frontmatter_missing",
        ),
        (
            "unterminated frontmatter".into(),
            "application/gzip",
            with_skill_md(b"---\nname: evil\ndescription: d\n"),
            422,
            "frontmatter_missing",
        ),
        (
            "frontmatter is a list".into(),
            "application/gzip",
            with_skill_md(&fm("- name\n- evil\n")),
            422,
            "frontmatter_invalid_yaml",
        ),
        (
            "name with look-alike letters".into(),
            "application/gzip",
            with_skill_md(&fm("name: еvil\ndescription: d\n")),
            422,
            "invalid_skill_name",
        ),
        (
            "name differs from the URL".into(),
            "application/gzip",
            with_skill_md(&fm("name: other\ndescription: d\n")),
            422,
            "name_mismatch",
        ),
        (
            "reserved metadata key".into(),
            "application/gzip",
            with_skill_md(&fm(
                "name: evil\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n",
            )),
            422,
            "reserved_metadata_key",
        ),
        (
            "allowed-tools list".into(),
            "application/gzip",
            with_skill_md(&fm("name: evil\ndescription: d\nallowed-tools: [Bash]\n")),
            422,
            "frontmatter_invalid_field",
        ),
        (
            "CRLF frontmatter with a bad name".into(),
            "application/gzip",
            with_skill_md(b"---\r\nname: Evil\r\ndescription: d\r\n---\r\n"),
            422,
            "invalid_skill_name",
        ),
        // HTTP
        (
            "wrong content type".into(),
            "text/plain",
            with_skill_md(&good),
            415,
            "unsupported_media_type",
        ),
        (
            "no content type".into(),
            "",
            with_skill_md(&good),
            415,
            "unsupported_media_type",
        ),
        (
            "body over the limit".into(),
            "application/gzip",
            vec![0u8; 3 * 1024 * 1024],
            413,
            "body_too_large",
        ),
    ]
}

fn tar_gz_long(skill_md: &[u8], long: &str) -> Vec<u8> {
    // GNU long names let a path exceed the 100-byte header field.
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for (path, data) in [("SKILL.md", skill_md), (long, &b"x"[..])] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        builder.append_data(&mut h, path, data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_input_gets_its_code_and_changes_nothing() {
    let server = TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            max_upload_bytes: 2 * 1024 * 1024,
            request_timeout_secs: 2,
            ..Config::default()
        })
        .start()
        .await;
    let http = reqwest::Client::new();
    let good = with_skill_md(&fm("name: fine\ndescription: A fine skill.\n"));
    let resp = http
        .put(format!("{}/v1/skills/acme/fine/1.0.0", server.base()))
        .bearer_auth(ADMIN)
        .header("Content-Type", "application/gzip")
        .body(good)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let before = server.registry.stats().await.unwrap();
    let mut cases = 0;

    for (case, content_type, body, status, code) in upload_cases() {
        let mut req = http
            .put(format!("{}/v1/skills/acme/evil/1.0.0", server.base()))
            .bearer_auth(ADMIN)
            .body(body);
        if !content_type.is_empty() {
            req = req.header("Content-Type", content_type);
        }
        let resp = req.send().await.unwrap();
        let got = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        assert_eq!(
            (got, body["error"]["code"].as_str().unwrap_or("")),
            (status, code),
            "{case}: {body}"
        );
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{case}"
        );
        cases += 1;
    }

    // URIs, over MCP on both eras: never found, never a 500-class answer, never outside the skill.
    let uris = [
        "skill://acme/fine/../fine/SKILL.md",
        "skill://acme/fine/%2e%2e/%2e%2e/etc/passwd",
        "skill://acme/fine/%2E%2E%2Fetc%2Fpasswd",
        "skill://acme/fine/refs%2f..%2fSKILL.md",
        "skill://acme/fine/..\\SKILL.md",
        "skill://acme/fine/%5c..%5cSKILL.md",
        "skill://user:pass@acme/fine/SKILL.md",
        "skill://acme:8080/fine/SKILL.md",
        "skill://acme/fine/SKILL.md?raw=1",
        "skill://acme/fine/SKILL.md#x",
        "http://acme/fine/SKILL.md",
        "file:///etc/passwd",
        "skill://аcme/fine/SKILL.md",
        "skill://acme/fіne/SKILL.md",
        "skill://acme/fine/SKILL.md%00.txt",
        "skill://acme/fine/%",
        "skill://acme//fine/SKILL.md",
        "skill:acme/fine/SKILL.md",
        "",
    ];
    let long = format!("skill://acme/fine/{}", "a/".repeat(5000));
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    for uri in uris.iter().copied().chain([long.as_str()]) {
        let m = modern.call("resources/read", json!({ "uri": uri })).await;
        assert_eq!(m["error"]["code"], -32602, "{uri:?}: {m}");
        let l = legacy.call("resources/read", json!({ "uri": uri })).await;
        assert_eq!(l["error"]["code"], -32002, "{uri:?}: {l}");
        let g = modern.call("skills/get", json!({ "uri": uri })).await;
        assert_eq!(g["error"]["code"], -32602, "{uri:?}: {g}");
        cases += 1;
    }

    // Raw HTTP on /mcp: bad JSON-RPC, batches, headers.
    let post = |body: &'static str, accept: &'static str, host: Option<&'static str>| {
        let mut req = http
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", accept)
            .body(body);
        if let Some(h) = host {
            req = req.header("Host", h);
        }
        req.send()
    };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}"#;
    let raw_cases: Vec<(&str, reqwest::Response, &[u16])> = vec![
        (
            "not JSON",
            post("{not json", "application/json, text/event-stream", None)
                .await
                .unwrap(),
            &[400],
        ),
        (
            "JSON but not JSON-RPC",
            post(
                r#"{"hello":"world"}"#,
                "application/json, text/event-stream",
                None,
            )
            .await
            .unwrap(),
            &[400],
        ),
        (
            "batch of requests",
            post(
                &*Box::leak(format!("[{init},{init}]").into_boxed_str()),
                "application/json, text/event-stream",
                None,
            )
            .await
            .unwrap(),
            &[400],
        ),
        (
            "empty batch",
            post("[]", "application/json, text/event-stream", None)
                .await
                .unwrap(),
            &[400],
        ),
        (
            "wrong Accept",
            post(init, "text/html", None).await.unwrap(),
            &[406],
        ),
        (
            "foreign Host (DNS rebinding)",
            post(
                init,
                "application/json, text/event-stream",
                Some("evil.example"),
            )
            .await
            .unwrap(),
            &[403],
        ),
    ];
    for (case, resp, statuses) in raw_cases {
        assert!(
            statuses.contains(&resp.status().as_u16()),
            "{case}: {}",
            resp.status()
        );
        cases += 1;
    }
    // The server answers 413 as soon as the body passes the limit and stops reading; the client
    // may still be writing and see the connection close instead. Either way nothing is served.
    // Its own client: the half-written connection must not go back to the shared pool.
    let oversize = reqwest::Client::new()
        .post(&server.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(vec![b' '; 5 * 1024 * 1024])
        .send()
        .await;
    match oversize {
        Ok(resp) => assert_eq!(resp.status(), 413, "oversize MCP body"),
        Err(e) => assert!(e.is_request(), "oversize MCP body: {e}"),
    }
    let alive = http
        .get(format!("{}/healthz", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.status(), 200, "the server keeps serving");
    cases += 1;

    // A slow body: headers, a trickle, then silence. The request is cut off at the time limit.
    let addr = server.base().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(format!("PUT /v1/skills/acme/slow/1.0.0 HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {ADMIN}\r\nContent-Type: application/gzip\r\nContent-Length: 100000\r\n\r\nabc").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&answer).contains("request_timeout") {
        let n = tokio::time::timeout_at(
            deadline,
            tokio::io::AsyncReadExt::read_buf(&mut stream, &mut answer),
        )
        .await
        .expect("answered within 10 s")
        .unwrap();
        if n == 0 {
            break;
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "slow body: {answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    cases += 1;

    assert!(cases >= 40, "{cases} cases");
    assert_eq!(
        server.registry.stats().await.unwrap(),
        before,
        "the store is unchanged"
    );
    eprintln!("hostile: {cases} cases, each refused with its code; store unchanged");
}
