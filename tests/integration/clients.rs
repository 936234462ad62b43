//! Independent clients against the real server: the official conformance suite (both eras), the
//! official TypeScript `SkillsClient` (stdio and HTTP, both eras), FastMCP 4.1.6's skills client
//! (HTTP, 2026-07-28: it refuses 2025-era connections), and FastMCP 4.2.3 on both sides: its
//! client (`read_skill` verifies, `to_directory` installs) and its skills proxy
//! (`ProxyProvider(..., skills=True)`) in front of the real server. Tools come from
//! `scripts/install-test-tools.sh`; these tests fail, never skip, when the tools are missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{
    Modern, TestServer, Tools, all_pages, corpus_dir, parse_body, publish_request, tools,
};
use serde_json::{Value, json};
use skillreg::Registry;
use skillreg::core::{Action, InputFile, Namespace, Principal};
use skillreg::registry::NewTokenRequest;
use tokio::process::Command;

const SCENARIOS: &[&str] = &[
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
];
/// Checks the suite skips by design below 2026-07-28 (cache hints are a 2026-07-28 feature).
const SKIPPED_ON_2025: &[&str] = &[
    "sep-2640-skills-list-cache-attributes",
    "sep-2640-skills-get-cache-attributes",
];

async fn run(cmd: &mut Command) -> (i32, String, String) {
    cmd.kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .expect("client finished within 180 s")
        .expect("client started");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn find_checks(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_name() == "checks.json" {
            found.push(entry.into_path());
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_conformance_suite_passes_on_both_eras() {
    let t = tools();
    let server = TestServer::builder().seeded().start().await;
    let mut total = 0;
    for era in ["2026-07-28", "2025-11-25"] {
        for scenario in SCENARIOS {
            let out_dir = tempfile::TempDir::new().unwrap();
            let (code, stdout, stderr) = run(Command::new(&t.node22)
                .arg(&t.conformance)
                .args(["server", "--url", &server.url, "--scenario", scenario])
                .args(["--spec-version", era, "--force", "-o"])
                .arg(out_dir.path()))
            .await;
            assert_eq!(code, 0, "{scenario} on {era}:\n{stdout}\n{stderr}");
            let files = find_checks(out_dir.path());
            assert_eq!(files.len(), 1, "one checks.json for {scenario} on {era}");
            let checks: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
            let mut passed = 0;
            for check in &checks {
                let id = check["id"].as_str().unwrap();
                match check["status"].as_str().unwrap() {
                    "SUCCESS" => passed += 1,
                    "SKIPPED" if era == "2025-11-25" && SKIPPED_ON_2025.contains(&id) => {}
                    other => panic!("{scenario} on {era}: {id} is {other}: {check}"),
                }
            }
            assert!(passed > 0, "{scenario} on {era} ran no check");
            total += passed;
        }
    }
    // 32 + 6 + 7 on 2026-07-28, 30 + 6 + 7 on 2025-11-25 with this suite version.
    assert_eq!(total, 88, "every check of the suite ran and passed");
}

/// A catalog of the real corpus imported with `--fix` (well over 100 skills, ten of them
/// fixed: every client must take those too), served 25 per page.
async fn corpus_catalog() -> (tempfile::TempDir, usize) {
    corpus_catalog_quoting(false).await
}

/// The corpus imported with `--fix`, and with `--quote-yaml-1-1` when `quote_yaml_1_1`.
async fn corpus_catalog_quoting(quote_yaml_1_1: bool) -> (tempfile::TempDir, usize) {
    let tmp = tempfile::TempDir::new().unwrap();
    let registry = Registry::open(tmp.path()).await.unwrap();
    let ns = Namespace::new("corpus").unwrap();
    let options = skillreg::registry::ImportOptions {
        fix: true,
        quote_yaml_1_1,
        ..Default::default()
    };
    let summary = registry
        .publisher()
        .import_dirs(&ns, &options, &[corpus_dir()], |_| {})
        .await
        .unwrap();
    assert!(summary.imported >= 125, "{summary:?}");
    assert!(summary.fixed >= 10, "{summary:?}");
    registry.close().await;
    (tmp, summary.imported)
}

struct Expected {
    skills: Vec<String>,
    files: usize,
}

async fn expected(server: &TestServer) -> Expected {
    let modern = Modern::new(&server.url);
    let (skills, pages) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    assert!(pages >= 4, "the catalog spans several pages ({pages})");
    Expected {
        files: skills
            .iter()
            .map(|s| s["resources"].as_array().unwrap().len())
            .sum(),
        skills: skills
            .iter()
            .map(|s| s["uri"].as_str().unwrap().to_owned())
            .collect(),
    }
}

/// A client report as JSON, or a panic that shows what the client printed.
fn report(client: &str, code: i32, stdout: &str, stderr: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        let head: String = stdout.chars().take(2000).collect();
        panic!(
            "{client}: not JSON (exit {code}, {} bytes):\n{head}\n{stderr}",
            stdout.len()
        )
    })
}

fn check_report(client: &str, code: i32, stdout: &str, stderr: &str, want: &Expected, era: &str) {
    let report = report(client, code, stdout, stderr);
    assert_eq!(
        report["failures"],
        Value::Array(vec![]),
        "{client}: {stderr}"
    );
    assert_eq!(code, 0, "{client}: {stderr}");
    assert_eq!(report["era"], era, "{client}");
    let skills: Vec<String> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        skills, want.skills,
        "{client}: the same skills in the same order"
    );
    assert_eq!(
        report["files"].as_array().unwrap().len(),
        want.files,
        "{client}: every file verified"
    );
    assert!(
        report["pages"].as_u64().unwrap() >= 4,
        "{client}: followed every page"
    );
}

fn ts_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_skills.mjs")
}

fn node(t: &Tools) -> Command {
    let mut cmd = Command::new(&t.node22);
    cmd.env("SKILLREG_TOOLS", &t.dir);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_client_over_http_on_both_eras() {
    let t = tools();
    let (dir, _) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(25)
        .start()
        .await;
    let want = expected(&server).await;
    for (mode, era) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let (code, stdout, stderr) =
            run(node(&t)
                .arg(ts_script())
                .args(["--era", mode, "--url", &server.url]))
            .await;
        check_report(
            &format!("TS client over HTTP ({mode})"),
            code,
            &stdout,
            &stderr,
            &want,
            era,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_client_over_stdio_on_both_eras() {
    let t = tools();
    let (dir, _) = corpus_catalog().await;
    let want = {
        let server = TestServer::builder()
            .data_dir(dir.path())
            .page_size(25)
            .start()
            .await;
        expected(&server).await
    };
    for (mode, era) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let (code, stdout, stderr) = run(node(&t)
            .arg(ts_script())
            .args([
                "--era",
                mode,
                "--stdio",
                env!("CARGO_BIN_EXE_skillreg"),
                "serve",
                "--stdio",
            ])
            .args(["--no-seed", "--page-size", "25", "--data-dir"])
            .arg(dir.path())
            .env("SKILLREG_LOG", "warn"))
        .await;
        check_report(
            &format!("TS client over stdio ({mode})"),
            code,
            &stdout,
            &stderr,
            &want,
            era,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_client_over_http() {
    let t = tools();
    let (dir, _) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(25)
        .start()
        .await;
    let want = expected(&server).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/fastmcp_skills.py");
    let (code, stdout, stderr) = run(Command::new(&t.python)
        .arg(script)
        .args(["--url", &server.url]))
    .await;
    check_report(
        "FastMCP over HTTP",
        code,
        &stdout,
        &stderr,
        &want,
        "2026-07-28",
    );
}

fn fastmcp42_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
}

/// Every `skills/list` entry, all pages, as `token` (anonymous when `None`) sees them.
async fn listed_entries(url: &str, token: Option<&str>) -> Vec<Value> {
    let http = reqwest::Client::new();
    let (entries, _) = all_pages(
        async |mut params: Value| {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "skillreg-tests", "version": "0"}
            });
            let mut req = http
                .post(url)
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "skills/list");
            if let Some(token) = token {
                req = req.bearer_auth(token);
            }
            let body =
                json!({"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": params});
            parse_body(&req.json(&body).send().await.unwrap().text().await.unwrap())
        },
        "skills",
    )
    .await;
    entries
}

fn entry_uri(entry: &Value) -> &str {
    entry["uri"].as_str().unwrap()
}

/// An entry's files as `path -> (size, sha256 hex)`, paths relative to the skill's folder.
fn manifest_files(entry: &Value) -> BTreeMap<String, (u64, String)> {
    let root = entry_uri(entry).strip_suffix("SKILL.md").unwrap();
    entry["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let path = r["uri"].as_str().unwrap().strip_prefix(root).unwrap();
            let digest = r["digest"]
                .as_str()
                .unwrap()
                .strip_prefix("sha256:")
                .unwrap();
            (
                path.to_owned(),
                (r["size"].as_u64().unwrap(), digest.to_owned()),
            )
        })
        .collect()
}

/// The skills of the corpus catalog that FastMCP 4.2.3's `read_skill` refuses, with its exact
/// error. skillreg serves both as the spec says (the bytes are the author's; the entry's
/// frontmatter is what a YAML 1.2 parser reads from them); FastMCP parses SKILL.md differently:
/// - `c-level-advisor`'s `metadata` holds `updated: 2026-03-05`, unquoted: FastMCP's YAML 1.1
///   parser reads a `datetime.date`, which is not a JSON value, so the frontmatter is refused
///   before it is compared (the entry has the string "2026-03-05").
/// - `azure-architecture-autopilot`'s last frontmatter field is `description: >`, a folded block
///   scalar: clip chomping keeps its final newline (the entry's description ends in "\n"), but
///   FastMCP parses the frontmatter without the newline before the closing `---`, so its
///   description has none and differs from the entry's.
const FASTMCP42_REFUSED: &[(&str, &str)] = &[
    (
        "skill://corpus/azure-architecture-autopilot/SKILL.md",
        "ValueError: Skill at 'skill://corpus/azure-architecture-autopilot/SKILL.md' does not match \
         its entry's frontmatter",
    ),
    (
        "skill://corpus/c-level-advisor/SKILL.md",
        "ValueError: frontmatter must contain only finite JSON values",
    ),
];

/// FastMCP 4.2.3's client over HTTP on the corpus catalog: every listed skill read with
/// `read_skill` (each file's size and sha256, the frontmatter against the entry, the name against
/// the URI) and installed with `to_directory`, byte-exact, except the two pinned refusals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp42_client_reads_and_installs_every_skill_byte_exact() {
    let t = tools();
    let (dir, imported) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(25)
        .start()
        .await;
    let entries = listed_entries(&server.url, None).await;
    assert_eq!(entries.len(), imported);
    let (code, stdout, stderr) = run(Command::new(&t.python_fastmcp42)
        .arg(fastmcp42_script("fastmcp42_skills.py"))
        .args(["--url", &server.url]))
    .await;
    let client = "FastMCP 4.2.3 client";
    let report = report(client, code, &stdout, &stderr);
    assert_eq!(report["failures"], json!([]), "{client}: {stderr}");
    assert_eq!(report["era"], "2026-07-28", "{client}");
    assert_eq!(
        report["skills"],
        json!(entries.iter().map(entry_uri).collect::<Vec<_>>()),
        "{client}: list_skills walked every page, in order"
    );
    let refused: BTreeMap<&str, &str> = report["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["error"].as_str().unwrap()))
        .collect();
    assert_eq!(
        refused,
        FASTMCP42_REFUSED
            .iter()
            .copied()
            .collect::<BTreeMap<_, _>>(),
        "{client}: exactly the known refusals"
    );
    assert_eq!(code, 1, "{client}: the refusals make the exit code 1");
    // Its publish warned of exactly these: a client quirk is stored with the version.
    let mut warned = BTreeMap::new();
    for entry in &entries {
        let uri = entry_uri(entry);
        let name = uri
            .trim_start_matches("skill://corpus/")
            .trim_end_matches("/SKILL.md");
        let version = entry["_meta"]["dev.skillreg/version"].as_str().unwrap();
        let manifest: Value = reqwest::get(format!(
            "{}/v1/skills/corpus/{name}/{version}",
            server.base()
        ))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        for w in manifest["warnings"].as_array().unwrap() {
            let code = w["code"].as_str().unwrap();
            if code.starts_with("client_") {
                warned.insert(uri, code.to_owned());
            }
        }
    }
    assert_eq!(
        warned,
        BTreeMap::from([
            (
                FASTMCP42_REFUSED[0].0,
                "client_final_block_scalar".to_owned()
            ),
            (FASTMCP42_REFUSED[1].0, "client_yaml_1_1_scalar".to_owned()),
        ]),
        "{client}: the skills it refuses are those their publish warned of"
    );

    let installed: BTreeMap<&str, &Value> = report["installed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["uri"].as_str().unwrap(), &i["files"]))
        .collect();
    assert_eq!(installed.len(), entries.len() - FASTMCP42_REFUSED.len());
    let mut files = 0;
    for entry in &entries {
        let uri = entry_uri(entry);
        if refused.contains_key(uri) {
            continue;
        }
        let on_disk: BTreeMap<String, (u64, String)> = installed[uri]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_owned(),
                    (
                        f["size"].as_u64().unwrap(),
                        f["sha256"].as_str().unwrap().to_owned(),
                    ),
                )
            })
            .collect();
        assert_eq!(
            on_disk,
            manifest_files(entry),
            "{client}: {uri} installed as the registry's manifest lists it"
        );
        files += on_disk.len();
    }
    assert!(files > 800, "{client}: {files} files installed");
}

/// With `--fix --quote-yaml-1-1`, the skill FastMCP refused for an unquoted date is read and
/// installed; the final block scalar, which no fix rewrites, is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp42_reads_the_date_skill_once_its_scalars_are_quoted() {
    let t = tools();
    let (dir, _) = corpus_catalog_quoting(true).await;
    let server = TestServer::builder().data_dir(dir.path()).start().await;
    let (code, stdout, stderr) = run(Command::new(&t.python_fastmcp42)
        .arg(fastmcp42_script("fastmcp42_skills.py"))
        .args(["--url", &server.url]))
    .await;
    let client = "FastMCP 4.2.3 client, quoted";
    let report = report(client, code, &stdout, &stderr);
    let refused: Vec<&str> = report["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(refused, [FASTMCP42_REFUSED[0].0], "{client}");
    let installed: Vec<&str> = report["installed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["uri"].as_str().unwrap())
        .collect();
    assert!(installed.contains(&FASTMCP42_REFUSED[1].0), "{client}");
}

/// A skill FastMCP 4.2.3's proxy can route: every file at the top of the skill's folder. Its
/// resource template matcher (`fastmcp.resources.template.build_regex`) reads skillreg's
/// `skill://{namespace}/{name}/{+path}` as if `{+path}` were `{path}`, one segment without "/"
/// (RFC 6570's reserved expansion keeps "/"; FastMCP only spans segments for `{path*}`), so a
/// file below a subdirectory routes nowhere and the proxy drops the skill's entry, as it drops
/// every entry whose files it cannot all route.
fn fastmcp42_proxy_routes(entry: &Value) -> bool {
    manifest_files(entry).keys().all(|path| !path.contains('/'))
}

/// Runs FastMCP 4.2.3's skills proxy in front of `url` and checks what it re-serves against
/// `entries` (what skillreg lists to the same caller): the same entries, byte for byte, in URI
/// order, 25 per page, except exactly those it cannot route; and each SKILL.md read through it
/// equals the manifest's. Returns the URIs it served.
async fn check_fastmcp42_proxy(
    t: &Tools,
    url: &str,
    token: Option<&str>,
    entries: &[Value],
) -> Vec<String> {
    let mut cmd = Command::new(&t.python_fastmcp42);
    cmd.arg(fastmcp42_script("fastmcp42_proxy.py"))
        .args(["--url", url, "--page-size", "25"]);
    if let Some(token) = token {
        cmd.args(["--token", token]);
    }
    let (code, stdout, stderr) = run(&mut cmd).await;
    let client = format!(
        "FastMCP 4.2.3 proxy ({})",
        if token.is_some() {
            "token"
        } else {
            "anonymous"
        }
    );
    let report = report(&client, code, &stdout, &stderr);
    assert_eq!(report["failures"], json!([]), "{client}: {stderr}");
    assert_eq!(code, 0, "{client}: {stderr}");

    let mut want: Vec<&Value> = entries
        .iter()
        .filter(|e| fastmcp42_proxy_routes(e))
        .collect();
    want.sort_by_key(|e| entry_uri(e));
    let served = report["skills"].as_array().unwrap();
    assert_eq!(
        served.iter().collect::<Vec<_>>(),
        want,
        "{client}: every routable entry re-served unchanged"
    );
    // The proxy walked skillreg's pages to the end: each of them holds a skill it re-serves.
    for (n, page) in entries.chunks(25).enumerate() {
        assert!(
            page.iter().any(|e| want.contains(&e)),
            "{client}: nothing of skillreg's page {n} re-served"
        );
    }
    let sizes: Vec<usize> = want.chunks(25).map(<[_]>::len).collect();
    assert!(sizes.len() >= 3, "{client}: several pages ({sizes:?})");
    assert_eq!(report["pageSizes"], json!(sizes), "{client}: its own pages");
    assert_eq!(report["pages"], sizes.len(), "{client}");

    for (read, entry) in report["skillMd"].as_array().unwrap().iter().zip(&want) {
        assert_eq!(read["uri"], entry["uri"], "{client}");
        let (size, sha256) = &manifest_files(entry)["SKILL.md"];
        assert_eq!(read["size"], *size, "{client}: {}", entry["uri"]);
        assert_eq!(
            read["sha256"],
            sha256.as_str(),
            "{client}: {}",
            entry["uri"]
        );
    }
    assert_eq!(
        report["skillMd"].as_array().unwrap().len(),
        want.len(),
        "{client}: every SKILL.md read through the proxy"
    );
    want.iter().map(|e| entry_uri(e).to_owned()).collect()
}

/// FastMCP 4.2.3's skills proxy in front of skillreg (the corpus catalog, 25 per page, and one
/// skill in a private namespace): it walks every page and re-serves every entry it can route,
/// unchanged; without a token on its upstream connection it does not list the private skill,
/// and with a token that may read it, it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp42_proxy_reserves_the_catalog_and_leaks_no_private_skill() {
    let t = tools();
    let (dir, imported) = corpus_catalog().await;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(25)
        .start()
        .await;
    let secret = Namespace::new("secret").unwrap();
    let private_uri = "skill://secret/vault/SKILL.md";
    server
        .registry
        .publisher()
        .publish(publish_request(
            &secret,
            vec![
                InputFile::regular(
                    "SKILL.md",
                    "---\nname: vault\ndescription: Opens the vault.\n---\nThe combination.\n",
                ),
                InputFile::regular("notes.md", "Private notes.\n"),
            ],
            None,
        ))
        .await
        .unwrap();
    server
        .registry
        .trust()
        .set_private(&Principal::Admin, &secret, true)
        .await
        .unwrap();
    let (_, reader) = server
        .registry
        .access()
        .create_token(
            &Principal::Admin,
            &NewTokenRequest {
                description: "proxy upstream".to_owned(),
                namespaces: vec!["secret".to_owned()],
                actions: vec![Action::Read],
            },
        )
        .await
        .unwrap();

    let anonymous = listed_entries(&server.url, None).await;
    assert_eq!(anonymous.len(), imported, "the private skill is not listed");
    // Pinned so that a change on either side shows: 56 of the 128 skills have every file at the
    // top of their folder; the other 72 have files below subdirectories.
    let routable = anonymous
        .iter()
        .filter(|e| fastmcp42_proxy_routes(e))
        .count();
    assert_eq!((routable, imported - routable), (56, 72));
    let served = check_fastmcp42_proxy(&t, &server.url, None, &anonymous).await;
    assert!(!served.iter().any(|u| u == private_uri));

    let with_token = listed_entries(&server.url, Some(&reader)).await;
    assert_eq!(with_token.len(), imported + 1);
    let served = check_fastmcp42_proxy(&t, &server.url, Some(&reader), &with_token).await;
    assert!(
        served.iter().any(|u| u == private_uri),
        "the proxy's upstream token may read it"
    );
}
