//! The MCP surface over real HTTP on loopback, on both protocol eras, with a raw JSON-RPC client:
//! wire shapes, pagination, errors, pinned URIs, nested skills, text vs blob.

use crate::common::{
    self, Legacy, Modern, StdioClient, TestServer, all_pages, check_json_schema, content_bytes,
    parse_body, sha256_hex,
};
use serde_json::{Value, json};
use skillreg::config::Config;
use skillreg::core::{InputFile, Namespace, SkillName, SkillVersion};

fn ns(s: &str) -> Namespace {
    Namespace::new(s).unwrap()
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

async fn publish(server: &TestServer, namespace: &str, version: &str, files: Vec<InputFile>) {
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &ns(namespace),
            files,
            Some(SkillVersion::parse(version).unwrap()),
        ))
        .await
        .unwrap();
}

#[tokio::test]
async fn capabilities_on_both_eras() {
    let server = TestServer::builder().seeded().start().await;
    let modern = Modern::new(&server.url)
        .call("server/discover", json!({}))
        .await;
    let legacy_init = {
        let body = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}});
        let text = reqwest::Client::new()
            .post(&server.url)
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        parse_body(&text)
    };
    for (era, result) in [
        ("2026-07-28", &modern["result"]),
        ("2025-11-25", &legacy_init["result"]),
    ] {
        let caps = &result["capabilities"];
        assert_eq!(
            caps["extensions"]["io.modelcontextprotocol/skills"],
            json!({"directoryRead": true}),
            "{era}: {result}"
        );
        assert_eq!(caps["resources"]["listChanged"], json!(true), "{era}");
        assert_eq!(caps["resources"]["subscribe"], json!(true), "{era}");
        // The one tool never changes, and the server says so.
        assert_eq!(caps["tools"]["listChanged"], json!(false), "{era}: {caps}");
        // 2026-07-28 carries it in `_meta`.
        let info = match &result["serverInfo"] {
            Value::Null => &result["_meta"]["io.modelcontextprotocol/serverInfo"],
            info => info,
        };
        assert_eq!(info["name"], "skillreg", "{era}: {result}");
        assert!(
            info["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{era}: {info}"
        );
        assert!(
            info["description"].as_str().is_some_and(|d| d.len() <= 100),
            "{era}: {info}"
        );
        let icon = info["icons"][0]["src"].as_str().unwrap();
        assert!(
            icon.starts_with("data:image/svg+xml;base64,"),
            "{era}: {icon}"
        );
        // No website unless the operator names one.
        assert!(info.get("websiteUrl").is_none(), "{era}: {info}");
        assert!(
            result["instructions"]
                .as_str()
                .unwrap()
                .contains("skill://"),
            "{era}"
        );
    }
    assert_eq!(legacy_init["result"]["serverInfo"]["name"], "skillreg");
    assert!(
        modern["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
}

/// What a client shows of the server and its parts: display titles on the tool, the resources
/// and the templates; a description on every property of the tool's output; the operator's
/// website and icon in `serverInfo` when set.
/// Over stdio too: a line that is no message gets its JSON-RPC error, with the id when it could
/// be read; a notification is never answered; blank lines are skipped; a line over the limit is
/// refused and skipped to its end; and the session goes on.
#[tokio::test]
async fn malformed_lines_over_stdio_are_answered_in_json_rpc() {
    let server = TestServer::builder().seeded().start().await;
    let mut stdio = StdioClient::start(&server);
    for (case, line, number, code, id) in malformed_messages() {
        if line.is_empty() {
            continue; // a blank line is skipped, below
        }
        let answer = stdio.send_line(line.as_bytes());
        assert_eq!(answer["id"], id, "{case}: {answer}");
        assert_eq!(answer["error"]["code"], number, "{case}: {answer}");
        assert_eq!(answer["error"]["data"]["code"], code, "{case}: {answer}");
    }
    // An `initialize` whose parameters rmcp cannot read is invalid params, not an unknown method.
    let init = stdio.send_line(br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#);
    assert_eq!(
        (&init["id"], &init["error"]["code"]),
        (&json!("i"), &json!(-32602)),
        "{init}"
    );
    let wrong_type = stdio
        .send_line(br#"{"jsonrpc":"2.0","id":"c","method":"skills/list","params":{"cursor":5}}"#);
    assert_eq!(
        (&wrong_type["id"], &wrong_type["error"]["code"]),
        (&json!("c"), &json!(-32602)),
        "{wrong_type}"
    );
    // Neither a blank line nor a notification that does not decode is answered: the next
    // answer is the ping's.
    let ping = br#"{"jsonrpc":"2.0","method":"notifications/x","params":5}
{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let mut lines = b"\r".to_vec();
    lines.extend_from_slice(b"\n");
    lines.extend_from_slice(ping);
    assert_eq!(stdio.send_line(&lines)["id"], "p");
    let mut long = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
    long.resize(17 * 1024 * 1024, b'a');
    let refused = stdio.send_line(&long);
    assert_eq!(
        refused["error"]["data"]["code"], "body_too_large",
        "{refused}"
    );
    let list = stdio.call("skills/list", json!({}));
    assert!(
        list["result"]["skills"].is_array(),
        "the session goes on: {list}"
    );
}

#[tokio::test]
async fn the_server_and_its_parts_have_display_titles() {
    let server = TestServer::builder()
        .seeded()
        .config(Config {
            website_url: Some("https://skills.example.com/about".into()),
            icon_url: Some("https://skills.example.com/icon.png".into()),
            ..Config::default()
        })
        .start()
        .await;
    let modern = Modern::new(&server.url);
    let discovered = modern.call("server/discover", json!({})).await;
    let info = &discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(
        info["websiteUrl"], "https://skills.example.com/about",
        "{info}"
    );
    assert_eq!(
        info["icons"],
        json!([{"src": "https://skills.example.com/icon.png"}])
    );

    let tools = modern.call("tools/list", json!({})).await;
    let tool = &tools["result"]["tools"][0];
    assert_eq!(tool["title"], "Search skills", "{tool}");
    // Every property of the output, the nested hit's too, says what it is.
    let schema = &tool["outputSchema"];
    let hit = schema["$defs"]["Hit"]["properties"].as_object().unwrap();
    let top = schema["properties"].as_object().unwrap();
    for (name, property) in top.iter().chain(hit) {
        assert!(
            property["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{name} has no description: {property}"
        );
    }

    let templates = modern.call("resources/templates/list", json!({})).await;
    for t in templates["result"]["resourceTemplates"].as_array().unwrap() {
        assert!(t["title"].as_str().is_some_and(|t| !t.is_empty()), "{t}");
    }
    let resources = modern.call("resources/list", json!({})).await;
    let resources = resources["result"]["resources"].as_array().unwrap();
    assert_eq!(resources[0]["title"], "Discovery index");
    let seeded = resources
        .iter()
        .find(|r| r["name"] == "finding-skills")
        .unwrap();
    assert_eq!(seeded["title"], "skillreg/finding-skills", "{seeded}");
}

/// The server card: at the well-known address and where the current draft recommends, valid
/// against the extension's published schema, naming this server's `/mcp` at the address the
/// client used; and the AI Catalog entry that points at it.
#[tokio::test]
async fn the_server_card_names_the_endpoint_and_follows_its_schema() {
    let server = TestServer::builder().seeded().start().await;
    let http = reqwest::Client::new();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/mcp-server-card.schema.json").unwrap(),
    )
    .unwrap();
    let schema = json!({"$ref": "#/$defs/ServerCard", "$defs": schema["$defs"]});
    let mut cards = Vec::new();
    for path in ["/.well-known/mcp/server-card.json", "/mcp/server-card"] {
        let resp = http
            .get(format!("{}{path}", server.base()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(resp.headers()["content-type"], "application/json", "{path}");
        let card: Value = resp.json().await.unwrap();
        check_json_schema(&schema, &card).unwrap_or_else(|e| panic!("{path}: {e}\n{card}"));
        cards.push(card);
    }
    assert_eq!(cards[0], cards[1]);
    let card = &cards[0];
    let remote = &card["remotes"][0];
    assert_eq!(remote["type"], "streamable-http");
    assert_eq!(remote["url"], server.url, "{card}");
    assert_eq!(card["name"], "1.0.0.127/skillreg");
    assert_eq!(card["websiteUrl"], format!("{}/", server.base()));
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    let versions = remote["supportedProtocolVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2025-11-25")) && versions.contains(&json!("2026-07-28")));
    assert_eq!(remote["headers"][0]["isRequired"], false, "{card}");
    // The card's endpoint answers: the same server, by the same name.
    let discovered = Modern::new(remote["url"].as_str().unwrap())
        .call("server/discover", json!({}))
        .await;
    let info = &discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["title"], card["title"], "{discovered}");

    let resp = http
        .get(format!("{}/.well-known/ai-catalog.json", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-type"],
        "application/ai-catalog+json"
    );
    let catalog: Value = resp.json().await.unwrap();
    let entry = &catalog["entries"][0];
    assert_eq!(entry["type"], "application/mcp-server-card+json");
    assert_eq!(entry["identifier"], "urn:air:127.0.0.1:mcp:skillreg");
    assert_eq!(entry["url"], format!("{}/mcp/server-card", server.base()));
}

#[tokio::test]
async fn list_get_and_read_the_seed_on_both_eras() {
    let server = TestServer::builder().seeded().start().await;
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    for era in ["2026-07-28", "2025-11-25"] {
        let list = match era {
            "2026-07-28" => modern.call("skills/list", json!({})).await,
            _ => legacy.call("skills/list", json!({})).await,
        };
        let skills = list["result"]["skills"]
            .as_array()
            .unwrap_or_else(|| panic!("{list}"));
        let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            [
                "skill://skillreg/finding-skills/SKILL.md",
                "skill://skillreg/pinning-versions/SKILL.md",
                "skill://skillreg/publishing-skills/SKILL.md"
            ],
            "{era}"
        );
        if era == "2026-07-28" {
            assert_eq!(list["result"]["ttlMs"], 60_000);
            assert_eq!(list["result"]["cacheScope"], "public");
            assert_eq!(list["result"]["resultType"], "complete");
        }
        for skill in skills {
            let uri = skill["uri"].as_str().unwrap();
            let resources = skill["resources"].as_array().unwrap();
            assert!(
                resources.iter().any(|r| r["uri"] == uri),
                "manifest lists its SKILL.md"
            );
            assert_eq!(skill["_meta"]["dev.skillreg/version"], "0.1.0");
            for r in resources {
                let read = match era {
                    "2026-07-28" => {
                        modern
                            .call("resources/read", json!({"uri": r["uri"]}))
                            .await
                    }
                    _ => {
                        legacy
                            .call("resources/read", json!({"uri": r["uri"]}))
                            .await
                    }
                };
                let content = &read["result"]["contents"][0];
                let text = content["text"].as_str().unwrap_or_else(|| panic!("{read}"));
                assert_eq!(text.len() as u64, r["size"].as_u64().unwrap());
                assert_eq!(
                    format!("sha256:{}", sha256_hex(text.as_bytes())),
                    r["digest"].as_str().unwrap()
                );
                assert_eq!(content["mimeType"], "text/markdown");
            }
            let got = match era {
                "2026-07-28" => modern.call("skills/get", json!({"uri": uri})).await,
                _ => legacy.call("skills/get", json!({"uri": uri})).await,
            };
            assert_eq!(
                &got["result"]["skill"], skill,
                "{era}: skills/get equals the listed entry: {got}"
            );
            assert!(got["result"].get("nextCursor").is_none());
        }
    }
}

#[tokio::test]
async fn entries_kept_serialized_are_served_as_built_on_both_eras() {
    use skillreg::core::{Principal, SkillRef, Visibility};
    use skillreg::registry::Listed;
    let server = TestServer::builder().seeded().start().await;
    publish(
        &server,
        "acme",
        "1.0.0",
        vec![
            InputFile::regular("SKILL.md", skill_md("tools", "Tool skill.")),
            InputFile::regular("notes/(odd) name \u{fc}.md", "odd"),
            InputFile::regular("sub/inner/SKILL.md", skill_md("inner", "Inner skill.")),
        ],
    )
    .await;
    // Every row serialized (the indexer task may have done some already), then a change, so
    // that what varies per moment is not in the kept bytes. No page was served yet, so this
    // first one reads each entry's own part from the store (SQLite; PostgreSQL keeps none and
    // serializes them now) and caches it for the pages served below.
    while server.registry.reads().serialize_entries().await.unwrap() {}
    let tools = SkillRef::parse("acme", "tools").unwrap();
    server
        .registry
        .trust()
        .set_deprecated(&Principal::Admin, &tools, Some("use hammers"))
        .await
        .unwrap();
    let page = server
        .registry
        .reads()
        .list_entries(&Visibility::All, None)
        .await
        .unwrap();
    let kept = page
        .items
        .iter()
        .filter(|e| matches!(e, Listed::Kept { .. }))
        .count();
    // `/mcp` registered its codec: no entry is left to be built per request.
    assert_eq!((kept, page.items.len()), (5, 5));
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    for era in ["2026-07-28", "2025-11-25"] {
        let call = async |method: &str, params: Value| match era {
            "2026-07-28" => modern.call(method, params).await,
            _ => legacy.call(method, params).await,
        };
        let list = call("skills/list", json!({})).await;
        let skills = list["result"]["skills"]
            .as_array()
            .unwrap_or_else(|| panic!("{list}"));
        assert_eq!(skills.len(), 5, "{era}");
        for skill in skills {
            let got = call("skills/get", json!({"uri": skill["uri"]})).await;
            assert_eq!(
                &got["result"]["skill"], skill,
                "{era}: as skills/get builds it"
            );
        }
        let deprecated: Vec<&str> = skills
            .iter()
            .filter(|s| s["_meta"]["dev.skillreg/deprecated"]["message"] == "use hammers")
            .map(|s| s["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            deprecated,
            [
                "skill://acme/tools/SKILL.md",
                "skill://acme/tools/sub/inner/SKILL.md"
            ],
            "{era}"
        );
    }
    // Over stdio rmcp serializes the typed entry; over HTTP the kept bytes go around it: the
    // same entries, current and pinned, deprecated or not.
    let mut stdio = StdioClient::start(&server);
    for uri in [
        "skill://acme/tools/SKILL.md",
        "skill://acme/@1.0.0/tools/sub/inner/SKILL.md",
        "skill://skillreg/finding-skills/SKILL.md",
    ] {
        let over_stdio = stdio.call("skills/get", json!({ "uri": uri }));
        assert!(over_stdio["result"]["skill"].is_object(), "{over_stdio}");
        for (era, got) in [
            (
                "2026-07-28",
                modern.call("skills/get", json!({ "uri": uri })).await,
            ),
            (
                "2025-11-25",
                legacy.call("skills/get", json!({ "uri": uri })).await,
            ),
        ] {
            assert_eq!(
                got["result"]["skill"], over_stdio["result"]["skill"],
                "{uri} ({era})"
            );
        }
    }
}

#[tokio::test]
async fn pagination_is_keyset_and_atomic_and_bad_cursors_fail() {
    let server = TestServer::builder().page_size(4).start().await;
    for i in 0..10 {
        let name = format!("skill-{i:02}");
        publish(
            &server,
            "acme",
            "1.0.0",
            vec![InputFile::regular("SKILL.md", skill_md(&name, "d"))],
        )
        .await;
    }
    let modern = Modern::new(&server.url);
    let (skills, pages) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    assert_eq!(pages, 3);
    let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    let mut sorted = uris.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(uris, sorted, "sorted by URI, no duplicates");
    assert_eq!(uris.len(), 10);

    let (resources, pages) = all_pages(
        async |p| modern.call("resources/list", p).await,
        "resources",
    )
    .await;
    // The legacy discovery index leads the first page, then every SKILL.md.
    assert_eq!((resources.len(), pages), (11, 3));
    assert_eq!(resources[0]["uri"], "skill://index.json");
    assert_eq!(resources[1]["name"], "skill-00");
    assert_eq!(resources[1]["description"], "d");
    assert_eq!(resources[1]["mimeType"], "text/markdown");

    // Every paginated method refuses a cursor it did not give, those answered in one page too.
    let legacy = Legacy::connect(&server.url).await;
    let paginated = [
        "skills/list",
        "resources/list",
        "tools/list",
        "resources/templates/list",
    ];
    for method in paginated {
        for cursor in ["not base64!", "Zm9v", ""] {
            for (era, r) in [
                ("2026", modern.call(method, json!({"cursor": cursor})).await),
                ("2025", legacy.call(method, json!({"cursor": cursor})).await),
            ] {
                assert_eq!(r["error"]["code"], -32602, "{era} {method} {cursor:?}: {r}");
                assert_eq!(
                    r["error"]["data"]["code"], "invalid_cursor",
                    "{era} {method} {cursor:?}: {r}"
                );
            }
        }
        // Without a cursor, the first page.
        let first = modern.call(method, json!({})).await;
        assert!(first["result"].is_object(), "{method}: {first}");
    }
}

#[tokio::test]
async fn errors_use_the_right_codes_per_era() {
    let server = TestServer::builder().seeded().start().await;
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    let unknown = [
        "skill://skillreg/no-such-skill/SKILL.md",
        "skill://nobody/finding-skills/SKILL.md",
        "skill://skillreg/@9.9.9/finding-skills/SKILL.md",
        "skill://skillreg/finding-skills/references/uri-scheme.md",
        "skill://skillreg/finding-skills/%2e%2e/pinning-versions/SKILL.md",
        "skill://skillreg/finding-skills/SKILL.md?x=1",
        "file:///etc/passwd",
    ];
    for uri in unknown {
        for resp in [
            modern.call("skills/get", json!({"uri": uri})).await,
            legacy.call("skills/get", json!({"uri": uri})).await,
        ] {
            assert_eq!(resp["error"]["code"], -32602, "skills/get {uri}: {resp}");
        }
    }
    for uri in [
        "skill://skillreg/finding-skills/missing.md",
        "skill://skillreg/finding-skills/../pinning-versions/SKILL.md",
        "skill://skillreg/finding-skills/%2e%2e/pinning-versions/SKILL.md",
        "skill://skillreg/finding-skills/references",
        "skill://skillreg/finding-skills",
        "skill://skillreg/finding-skills/SKILL.md#frag",
        "skill://user@skillreg/finding-skills/SKILL.md",
    ] {
        let m = modern.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(m["error"]["code"], -32602, "modern read {uri}: {m}");
        let l = legacy.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(l["error"]["code"], -32002, "legacy read {uri}: {l}");
    }
    for uri in [
        "skill://skillreg/finding-skills/SKILL.md",
        "skill://skillreg/finding-skills/nope",
        "skill://skillreg/nope",
    ] {
        let m = modern
            .call("resources/directory/read", json!({"uri": uri}))
            .await;
        assert_eq!(m["error"]["code"], -32602, "{uri}: {m}");
    }
    let root = modern
        .call(
            "resources/directory/read",
            json!({"uri": "skill://skillreg/finding-skills"}),
        )
        .await;
    let children = root["result"]["resources"].as_array().unwrap();
    let shape: Vec<(&str, &str)> = children
        .iter()
        .map(|c| (c["uri"].as_str().unwrap(), c["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        shape,
        [
            ("skill://skillreg/finding-skills/SKILL.md", "text/markdown"),
            (
                "skill://skillreg/finding-skills/references",
                "inode/directory"
            ),
        ]
    );
    let sub = modern
        .call(
            "resources/directory/read",
            json!({"uri": "skill://skillreg/finding-skills/references"}),
        )
        .await;
    assert_eq!(sub["result"]["resources"][0]["name"], "uri-scheme.md");
    assert!(sub["result"]["resources"][0]["size"].as_u64().unwrap() > 0);
}

/// Every error this layer finds by itself (an unknown prompt, template, variable, tool or
/// method; arguments or parameters of the wrong type) carries its row's code in `data.code`,
/// with the JSON-RPC number conformance expects (`-32602`, `-32601`, `-32002`).
#[tokio::test]
async fn every_mcp_error_carries_its_code_and_keeps_its_number() {
    let server = TestServer::builder().seeded().start().await;
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    let complete = |reference: Value, argument: &str| json!({"ref": reference, "argument": {"name": argument, "value": ""}});
    let skill_md = "skill://{namespace}/{name}/SKILL.md";
    let cases = [
        (
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "p"}), "a"),
            -32602,
            "invalid_request",
        ),
        (
            "completion/complete",
            complete(json!({"type": "ref/resource", "uri": "skill://{x}"}), "x"),
            -32602,
            "invalid_request",
        ),
        (
            "completion/complete",
            complete(json!({"type": "ref/resource", "uri": skill_md}), "path"),
            -32602,
            "invalid_request",
        ),
        (
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
            -32602,
            "invalid_request",
        ),
        (
            "tools/call",
            json!({"name": "search_skills", "arguments": {"query": "x", "limit": 0}}),
            -32602,
            "invalid_request",
        ),
        ("no/such/method", json!({}), -32601, "method_not_found"),
        (
            "skills/list",
            json!({"cursor": 5}),
            -32602,
            "invalid_request",
        ),
    ];
    for (method, params, number, code) in cases {
        for (era, resp) in [
            ("2026-07-28", modern.call(method, params.clone()).await),
            ("2025-11-25", legacy.call(method, params.clone()).await),
        ] {
            assert_eq!(
                resp["error"]["code"], number,
                "{era} {method} {params}: {resp}"
            );
            assert_eq!(
                resp["error"]["data"]["code"], code,
                "{era} {method} {params}: {resp}"
            );
        }
    }
    let missing = json!({"uri": "skill://skillreg/finding-skills/missing.md"});
    let resp = legacy.call("resources/read", missing).await;
    assert_eq!(resp["error"]["code"], -32002, "{resp}");
    assert_eq!(resp["error"]["data"]["code"], "file_not_found", "{resp}");
}

/// Bodies that are no JSON-RPC message, each with the error number, code and id it is answered
/// with.
fn malformed_messages() -> Vec<(&'static str, String, i64, &'static str, Value)> {
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    vec![
        (
            "not JSON",
            "{not json".into(),
            -32700,
            "parse_error",
            Value::Null,
        ),
        (
            "cut short",
            ping[..20].into(),
            -32700,
            "parse_error",
            Value::Null,
        ),
        (
            "trailing bytes",
            format!("{ping} x"),
            -32700,
            "parse_error",
            Value::Null,
        ),
        ("empty", String::new(), -32700, "parse_error", Value::Null),
        (
            "a batch",
            format!("[{ping},{ping}]"),
            -32600,
            "invalid_message",
            Value::Null,
        ),
        (
            "a number",
            "42".into(),
            -32600,
            "invalid_message",
            Value::Null,
        ),
        (
            "JSON-RPC 1.0",
            r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#.into(),
            -32600,
            "invalid_message",
            json!(7),
        ),
        (
            "no jsonrpc",
            r#"{"id":"a","method":"ping"}"#.into(),
            -32600,
            "invalid_message",
            json!("a"),
        ),
        (
            "an object id",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.into(),
            -32600,
            "invalid_message",
            Value::Null,
        ),
        (
            "a method that is no string",
            r#"{"jsonrpc":"2.0","id":3,"method":5}"#.into(),
            -32600,
            "invalid_message",
            Value::Null,
        ),
        (
            "neither request nor response",
            r#"{"jsonrpc":"2.0","id":4}"#.into(),
            -32600,
            "invalid_message",
            json!(4),
        ),
    ]
}

/// A body that is no JSON-RPC message is answered in JSON-RPC, as JSON-RPC 2.0 and the
/// Streamable HTTP transport say: HTTP 400 with `-32700` (not JSON) or `-32600` (no message), the
/// id when it could be read, else `null`. A body that is not declared JSON stays a 415.
#[tokio::test]
async fn malformed_messages_are_answered_in_json_rpc() {
    let server = TestServer::builder().seeded().start().await;
    let http = reqwest::Client::new();
    let post = |body: &str, content_type: &str| {
        http.post(&server.url)
            .header("Content-Type", content_type)
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_owned())
            .send()
    };
    for (case, body, number, code, id) in malformed_messages() {
        let resp = post(&body, "application/json").await.unwrap();
        assert_eq!(resp.status(), 400, "{case}");
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{case}"
        );
        let answer: Value = resp.json().await.unwrap();
        assert_eq!(answer["jsonrpc"], "2.0", "{case}: {answer}");
        assert_eq!(answer["id"], id, "{case}: {answer}");
        assert_eq!(answer["error"]["code"], number, "{case}: {answer}");
        assert_eq!(answer["error"]["data"]["code"], code, "{case}: {answer}");
    }
    // Not declared JSON: the content type is what is wrong.
    let resp = post("{not json", "text/plain").await.unwrap();
    assert_eq!(resp.status(), 415);
    // A well-formed message still goes through, and so does a client's response.
    let modern = Modern::new(&server.url);
    assert!(modern.call("tools/list", json!({})).await["result"]["tools"].is_array());
    let response = r#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
    let resp = post(response, "application/json").await.unwrap();
    let (status, text) = (resp.status(), resp.text().await.unwrap());
    assert!(
        !text.contains("invalid_message"),
        "a response is a message: {status} {text}"
    );
}

#[tokio::test]
async fn versions_pinned_uris_nested_skills_and_binary_files() {
    let server = TestServer::builder().page_size(100).start().await;
    let png: Vec<u8> = vec![0x89, b'P', b'N', b'G', 0, 0xff, 0xfe, 1, 2, 3];
    let crlf_bom = "\u{feff}line one\r\nline two\r\r\n".as_bytes().to_vec();
    let v1 = |body: &str| {
        vec![
            InputFile::regular(
                "SKILL.md",
                format!("{}{body}", skill_md("tools", "Tool skill.")),
            ),
            InputFile::regular("assets/logo.png", png.clone()),
            InputFile::regular("notes/crlf.txt", crlf_bom.clone()),
            InputFile::regular("notes/(odd) name ü.md", "odd"),
            InputFile::regular("sub/inner/SKILL.md", skill_md("inner", "Inner skill.")),
            InputFile::regular("sub/inner/ref.md", "inner ref"),
        ]
    };
    publish(&server, "acme", "1.0.0", v1("v1")).await;
    publish(&server, "acme", "2.0.0-rc.1", v1("v2 rc")).await;
    publish(&server, "acme", "1.1.0", v1("v1.1")).await;
    let modern = Modern::new(&server.url);

    let list = modern.call("skills/list", json!({})).await;
    let skills = list["result"]["skills"].as_array().unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/tools/SKILL.md",
            "skill://acme/tools/sub/inner/SKILL.md"
        ]
    );
    assert_eq!(
        skills[0]["_meta"]["dev.skillreg/version"], "1.1.0",
        "releases beat pre-releases"
    );
    assert_eq!(skills[0]["resources"].as_array().unwrap().len(), 6);
    let inner: Vec<&str> = skills[1]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        inner,
        [
            "skill://acme/tools/sub/inner/SKILL.md",
            "skill://acme/tools/sub/inner/ref.md"
        ]
    );
    assert_eq!(skills[1]["frontmatter"]["name"], "inner");

    // The current SKILL.md is 1.1.0's; each pinned URI serves its own bytes with a long TTL.
    let current = modern
        .call(
            "resources/read",
            json!({"uri": "skill://acme/tools/SKILL.md"}),
        )
        .await;
    assert!(
        current["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("v1.1")
    );
    assert_eq!(current["result"]["ttlMs"], 60_000);
    for (version, body) in [("1.0.0", "v1"), ("2.0.0-rc.1", "v2 rc")] {
        let uri = format!("skill://acme/@{version}/tools/SKILL.md");
        let read = modern.call("resources/read", json!({"uri": uri})).await;
        assert!(
            read["result"]["contents"][0]["text"]
                .as_str()
                .unwrap()
                .ends_with(body),
            "{read}"
        );
        assert_eq!(read["result"]["ttlMs"], 86_400_000);
        let get = modern.call("skills/get", json!({"uri": uri})).await;
        assert_eq!(get["result"]["skill"]["uri"], uri.as_str());
        assert_eq!(
            get["result"]["skill"]["_meta"]["dev.skillreg/version"],
            version
        );
        assert_eq!(get["result"]["ttlMs"], 86_400_000);
        let first = &get["result"]["skill"]["resources"][0]["uri"];
        assert!(
            first
                .as_str()
                .unwrap()
                .starts_with(&format!("skill://acme/@{version}/tools/"))
        );
        let nested = modern
            .call(
                "skills/get",
                json!({"uri": format!("skill://acme/@{version}/tools/sub/inner/SKILL.md")}),
            )
            .await;
        assert_eq!(
            nested["result"]["skill"]["frontmatter"]["name"], "inner",
            "{nested}"
        );
    }

    // Binary files are blobs with the exact bytes; non-UTF-8-safe text stays byte-exact.
    let entry = &skills[0];
    for r in entry["resources"].as_array().unwrap() {
        let read = modern
            .call("resources/read", json!({"uri": r["uri"]}))
            .await;
        let bytes = content_bytes(&read);
        assert_eq!(
            format!("sha256:{}", sha256_hex(&bytes)),
            r["digest"].as_str().unwrap(),
            "{}",
            r["uri"]
        );
        assert_eq!(bytes.len() as u64, r["size"].as_u64().unwrap());
    }
    let logo = modern
        .call(
            "resources/read",
            json!({"uri": "skill://acme/tools/assets/logo.png"}),
        )
        .await;
    assert_eq!(logo["result"]["contents"][0]["mimeType"], "image/png");
    assert!(logo["result"]["contents"][0].get("blob").is_some());
    let odd = entry["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"].as_str().unwrap().contains("odd"))
        .unwrap();
    assert_eq!(
        odd["uri"],
        "skill://acme/tools/notes/(odd)%20name%20%C3%BC.md"
    );
}

#[tokio::test]
async fn republishing_identical_content_is_a_no_op_and_conflicts_are_refused() {
    let server = TestServer::builder().page_size(100).start().await;
    let files = || vec![InputFile::regular("SKILL.md", skill_md("a", "d"))];
    let reg = &server.registry;
    let first = reg
        .publisher()
        .publish(common::publish_request(&ns("acme"), files(), None))
        .await
        .unwrap();
    assert!(first.created);
    assert_eq!(first.version.version.to_string(), "0.1.0");
    let again = reg
        .publisher()
        .publish(common::publish_request(&ns("acme"), files(), None))
        .await
        .unwrap();
    assert!(!again.created);
    let changed = vec![InputFile::regular("SKILL.md", skill_md("a", "changed"))];
    let err = reg
        .publisher()
        .publish(common::publish_request(&ns("acme"), changed, None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "version_exists");
    let mismatch = reg
        .publisher()
        .publish(skillreg::registry::PublishRequest {
            namespace: ns("acme"),
            files: files(),
            expected_name: Some(SkillName::new("b").unwrap()),
            version: None,
            actor: "test".to_owned(),
            warnings: Vec::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(mismatch.code(), "name_mismatch");
    // Nothing of the refused publishes is visible.
    let list = Modern::new(&server.url)
        .call("skills/list", json!({}))
        .await;
    let skills = list["result"]["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0]["frontmatter"]["description"], "d");
}

#[tokio::test]
async fn legacy_sessions_are_told_when_the_catalog_changes() {
    let server = TestServer::builder().page_size(100).start().await;
    let legacy = Legacy::connect(&server.url).await;
    // Open the session's standalone SSE stream, then publish, then expect the notification.
    let resp = legacy.stream().await;
    assert_eq!(resp.status(), 200);
    let mut stream = resp;
    publish(
        &server,
        "acme",
        "1.0.0",
        vec![InputFile::regular("SKILL.md", skill_md("fresh", "d"))],
    )
    .await;
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !seen.contains("notifications/resources/list_changed") {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .expect("notification within 10 s");
        seen.push_str(&String::from_utf8_lossy(
            &chunk.unwrap().expect("stream open"),
        ));
    }
    let list = legacy.call("skills/list", json!({})).await;
    assert_eq!(
        list["result"]["skills"][0]["uri"],
        "skill://acme/fresh/SKILL.md"
    );
    let _: Value = list;
}

/// `acme/pics@1.0.0`: its SKILL.md (returned) and `assets`.
async fn publish_pics(server: &TestServer, assets: Vec<InputFile>) -> String {
    let md = skill_md("pics", "Pictures.");
    let mut files = vec![InputFile::regular("SKILL.md", md.clone())];
    files.extend(assets);
    publish(server, "acme", "1.0.0", files).await;
    md
}

/// `resources/read` of each URI over stdio: a second process on the server's data directory.
fn read_over_stdio(server: &TestServer, uris: &[&str]) -> Vec<Value> {
    let mut client = StdioClient::start(server);
    uris.iter()
        .map(|uri| client.call("resources/read", json!({ "uri": uri })))
        .collect()
}

#[tokio::test]
async fn reads_are_the_same_over_both_eras_and_stdio() {
    let server = TestServer::builder().start().await;
    // Every byte value, 300 KB: base64 text of 400 KB, which HTTP puts around rmcp's
    // serializer; an empty binary, whose text is empty; text files beside them, one with every
    // kind of character JSON escapes, and an empty one.
    let image: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let odd =
        "\"quoted\" \\ tab\t cr\r ctl\u{1}\u{1f} del\u{7f} é \u{2028} 🦀 </script>\n".repeat(50);
    let md = publish_pics(
        &server,
        vec![
            InputFile::regular("assets/big.png", image.clone()),
            InputFile::regular("assets/empty.bin", Vec::new()),
            InputFile::regular("references/odd.md", odd.clone()),
            InputFile::regular("references/empty.md", Vec::new()),
        ],
    )
    .await;
    let uris = [
        "skill://acme/pics/assets/big.png",
        "skill://acme/@1.0.0/pics/assets/empty.bin",
        "skill://acme/pics/SKILL.md",
        "skill://acme/pics/references/odd.md",
        "skill://acme/@1.0.0/pics/references/empty.md",
    ];
    let stdio = read_over_stdio(&server, &uris);
    let modern = Modern::new(&server.url);
    let legacy = Legacy::connect(&server.url).await;
    for (uri, over_stdio) in uris.iter().zip(&stdio) {
        let over_modern = modern.call("resources/read", json!({ "uri": uri })).await;
        let over_legacy = legacy.call("resources/read", json!({ "uri": uri })).await;
        for (era, read) in [("2026-07-28", &over_modern), ("2025-11-25", &over_legacy)] {
            assert_eq!(
                read["result"]["contents"], over_stdio["result"]["contents"],
                "{uri} over HTTP ({era}) and stdio"
            );
        }
        let want: &[u8] = match *uri {
            u if u.ends_with("big.png") => &image,
            u if u.ends_with("empty.bin") || u.ends_with("empty.md") => b"",
            u if u.ends_with("odd.md") => odd.as_bytes(),
            _ => md.as_bytes(),
        };
        assert_eq!(content_bytes(&over_legacy), want, "{uri}");
        let carried = if uri.ends_with(".md") { "text" } else { "blob" };
        assert!(
            over_modern["result"]["contents"][0][carried].is_string(),
            "{uri}: {over_modern}"
        );
    }
    assert_eq!(
        stdio[0]["result"]["contents"][0]["mimeType"], "image/png",
        "{}",
        stdio[0]
    );
    // A 2026-era answer is one JSON body whose length is declared, the content counted.
    for (uri, least) in [(uris[0], image.len() * 4 / 3), (uris[3], odd.len())] {
        let resp = modern.send("resources/read", json!({ "uri": uri })).await;
        let declared: usize = resp.headers()["content-length"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        let body = resp.bytes().await.unwrap();
        assert_eq!(declared, body.len(), "{uri}");
        assert!(body.len() > least, "{uri}: {}", body.len());
    }
    // An error is answered as rmcp wrote it.
    let missing = legacy
        .call(
            "resources/read",
            json!({"uri": "skill://acme/pics/assets/missing.png"}),
        )
        .await;
    assert!(missing["error"].is_object(), "{missing}");
}

/// The event ids of an SSE answer, and the answer with each replaced by `<id>`.
fn event_ids(sse: &str) -> (Vec<String>, String) {
    let ids: Vec<String> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(str::to_owned)
        .collect();
    let mut bare = sse.to_owned();
    for id in &ids {
        bare = bare.replace(&format!("id: {id}\n"), "id: <id>\n");
    }
    (ids, bare)
}

/// The stream number of an event id (`<index>/<stream>`).
fn stream_of(id: &str) -> u64 {
    id.split_once('/').unwrap().1.parse().unwrap()
}

/// A 2025-era session's plain `resources/read` is answered beside rmcp (`http::direct`): its
/// event ids are numbered from 2^62 up, and its bytes are rmcp's answer to the same read
/// (taken through rmcp by adding an empty `_meta`), event ids aside: a text file, a binary
/// file, a missing file and a malformed URI; directories, a file and a missing directory
/// read as directories.
#[tokio::test]
async fn a_session_read_answered_beside_rmcp_is_what_rmcp_answers() {
    let server = TestServer::builder().start().await;
    let image: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
    publish_pics(&server, vec![InputFile::regular("assets/big.png", image)]).await;
    let legacy = Legacy::connect(&server.url).await;
    for (method, uri) in [
        ("resources/read", "skill://acme/pics/SKILL.md"),
        ("resources/read", "skill://acme/pics/assets/big.png"),
        ("resources/read", "skill://acme/pics/assets/missing.png"),
        ("resources/read", "skill://acme/../x"),
        ("resources/directory/read", "skill://acme/pics"),
        ("resources/directory/read", "skill://acme/pics/assets"),
        ("resources/directory/read", "skill://acme/pics/SKILL.md"),
        ("resources/directory/read", "skill://acme/nothing"),
    ] {
        let read = |params: Value| {
            legacy.post(json!({"jsonrpc":"2.0","id":"same","method":method,"params":params}))
        };
        let (direct_ids, direct) = event_ids(&read(json!({"uri": uri})).await);
        let (rmcp_ids, through_rmcp) = event_ids(&read(json!({"uri": uri, "_meta": {}})).await);
        assert_eq!(direct_ids.len(), 2, "{method} {uri}: {direct}");
        assert!(
            direct_ids.iter().all(|id| stream_of(id) >= 1 << 62),
            "{method} {uri}: answered through rmcp: {direct_ids:?}"
        );
        assert!(
            rmcp_ids.iter().all(|id| stream_of(id) < 1 << 62),
            "{method} {uri}: {rmcp_ids:?}"
        );
        assert_eq!(direct, through_rmcp, "{method} {uri}");
        let answer = parse_body(&direct);
        assert_eq!(answer["id"], "same");
        assert!(
            answer["result"]["contents"][0]["uri"] == uri
                || answer["result"]["resources"][0]["uri"].is_string()
                || answer["error"]["code"].is_i64(),
            "{method} {uri}: {answer}"
        );
    }
    // A request rmcp would refuse is rmcp's to refuse.
    let unknown = Legacy::resumed(&server.url, "no-such-session")
        .send(
            "resources/read",
            json!({"uri": "skill://acme/pics/SKILL.md"}),
        )
        .await;
    assert_eq!(unknown.status(), reqwest::StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_resumed_stream_never_sends_an_answer_again() {
    let server = TestServer::builder().start().await;
    publish_pics(
        &server,
        vec![InputFile::regular("assets/big.png", vec![0xa5u8; 50_000])],
    )
    .await;
    let legacy = Legacy::connect(&server.url).await;
    for (method, params) in [
        (
            "resources/read",
            json!({"uri": "skill://acme/pics/SKILL.md"}),
        ),
        (
            "resources/read",
            json!({"uri": "skill://acme/pics/assets/big.png"}),
        ),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://acme/pics/SKILL.md"})),
    ] {
        let (id, sse) = legacy.call_raw(method, params.clone()).await;
        let first = parse_body(&sse);
        assert!(first["result"].is_object(), "{method} {params}: {first}");
        // Resume the answer's stream after its first event (rmcp's priming event).
        let first_event = sse
            .lines()
            .find_map(|l| l.strip_prefix("id:"))
            .unwrap_or_else(|| panic!("no event id in {sse}"))
            .trim();
        let again = legacy.resume(first_event).await;
        let resent: Vec<Value> = again
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .filter(|v| v.get("id").is_some())
            .collect();
        // rmcp 3.11 keeps nothing of an answered request to send again, so nothing goes out
        // without its bytes. `/mcp` would turn such an answer, resent, into the error
        // `response_not_resent` (`mcp::slots::resent`, unit-tested); if an rmcp upgrade starts
        // resending, this fails: check that rewrite end to end, then expect it here.
        assert_eq!(resent, Vec::<Value>::new(), "{method} {params} (id {id})");
    }
}

/// `--no-mcp-sessions`: a 2025-era client gets no session and plain JSON answers, the same
/// entries and bytes a 2026-era client gets, and no notification stream; with sessions (the
/// default) the same requests are answered as SSE streams.
#[tokio::test]
async fn without_sessions_the_2025_era_is_answered_statelessly_in_plain_json() {
    let config = skillreg::config::Config {
        mcp_sessions: false,
        ..Default::default()
    };
    let server = TestServer::builder().config(config).start().await;
    let image: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let md = publish_pics(
        &server,
        vec![InputFile::regular("assets/big.png", image.clone())],
    )
    .await;
    let legacy = Legacy::stateless(&server.url).await;
    let modern = Modern::new(&server.url);
    let list = json!({});
    let get = json!({"uri": "skill://acme/pics/SKILL.md"});
    let read_md = json!({"uri": "skill://acme/pics/SKILL.md"});
    let read_png = json!({"uri": "skill://acme/@1.0.0/pics/assets/big.png"});
    for (method, params) in [
        ("skills/list", &list),
        ("skills/get", &get),
        ("resources/read", &read_md),
        ("resources/read", &read_png),
    ] {
        let resp = legacy.send(method, params.clone()).await;
        assert_eq!(resp.status(), reqwest::StatusCode::OK, "{method}");
        assert!(resp.headers().get("mcp-session-id").is_none(), "{method}");
        assert_eq!(
            resp.headers()["content-type"],
            "application/json",
            "{method} {params}"
        );
        let old: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
        let new = modern.call(method, params.clone()).await;
        let result = |v: &Value| {
            let mut r = v["result"].clone();
            // Only what is the era's own may differ (`_meta`, the 2026 era's `resultType`);
            // the entries and contents may not.
            for era_own in ["_meta", "resultType"] {
                r.as_object_mut().unwrap().remove(era_own);
            }
            r
        };
        assert!(old["result"].is_object(), "{method}: {old}");
        assert_eq!(result(&old), result(&new), "{method} {params}");
    }
    let read = legacy.call("resources/read", read_md.clone()).await;
    assert_eq!(content_bytes(&read), md.as_bytes());
    let read = legacy.call("resources/read", read_png.clone()).await;
    assert_eq!(content_bytes(&read), image);
    // No session, so no stream to send notifications on.
    let stream = legacy.stream().await;
    assert!(
        stream.status().is_client_error(),
        "a standalone stream without sessions: {}",
        stream.status()
    );
    // Nor a subscription that could never be told anything.
    let subscribe = legacy.call("resources/subscribe", read_md).await;
    assert_eq!(subscribe["error"]["code"], -32601, "{subscribe}");

    // The default: the same request in a session is answered as an SSE stream.
    let with_sessions = TestServer::builder().start().await;
    publish_pics(
        &with_sessions,
        vec![InputFile::regular("assets/big.png", image)],
    )
    .await;
    let session = Legacy::connect(&with_sessions.url).await;
    let resp = session.send("resources/read", read_png).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
}
