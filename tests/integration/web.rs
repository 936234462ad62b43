//! The web catalog at `/` end to end, in headless Chromium: `tests/web/catalog.mjs` drives it with
//! playwright-core (real key presses and clicks: search, result link, pagination, copy button),
//! checks the rendered SKILL.md, and that a hostile SKILL.md runs no script. A full-page
//! screenshot of a skill page is kept at `target/test-artifacts/web-catalog.png`.
//! `tests/web/pages.mjs` visits every page type at a desktop and a phone width, runs axe-core in
//! each and checks what it shows; its screenshots go to the test's temporary directory.
//!
//! Chromium (Debian's package), playwright-core and axe-core come from
//! `scripts/install-test-tools.sh`; these tests fail, never skip, when they are missing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{self, TestServer, Tools, corpus_catalog, tools};
use serde_json::Value;
use skillreg::core::{InputFile, Namespace};
use tokio::process::Command;

/// A SKILL.md written to break out of the page: none of it may run or become an element.
const HOSTILE_SKILL_MD: &str = r#"---
name: hostile
description: 'Hostile test skill: <img src=x onerror="window.__pwned=4"> and <b>bold</b> in its description.'
---
# Hostile skill

<script>window.__pwned = 1</script>

<img src=x onerror="window.__pwned=2">

[x](javascript:window.__pwned=3)
"#;

/// The Chromium binary: `$SKILLREG_CHROMIUM`, else the one `<tools>/env.sh` records. Panics with
/// the fix when there is none.
fn chromium(t: &Tools) -> PathBuf {
    let fix = "run scripts/install-test-tools.sh (as root it installs Debian's chromium with \
               apt-get; elsewhere `sudo apt-get install chromium`, or set SKILLREG_CHROMIUM)";
    let path = std::env::var_os("SKILLREG_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            std::fs::read_to_string(t.dir.join("env.sh"))
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("export SKILLREG_CHROMIUM="))
                .map(|v| PathBuf::from(v.trim().trim_matches(['"', '\''])))
        })
        .unwrap_or_else(|| {
            panic!(
                "SKILLREG_CHROMIUM is not set in {}: {fix}",
                t.dir.join("env.sh").display()
            )
        });
    assert!(
        path.is_file(),
        "Chromium is missing at {}: {fix}",
        path.display()
    );
    let playwright = t.dir.join("node/node_modules/playwright-core/package.json");
    assert!(
        playwright.is_file(),
        "playwright-core is missing ({} not found): {fix}",
        playwright.display()
    );
    path
}

/// Width and height of a PNG file, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "not a PNG file"
    );
    let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_catalog_in_headless_chromium() {
    let t = tools();
    let chromium = chromium(&t);

    let dir = corpus_catalog().await.0;
    let server = TestServer::builder()
        .data_dir(dir.path())
        .page_size(100)
        .start()
        .await;
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            vec![InputFile::regular("SKILL.md", HOSTILE_SKILL_MD)],
            None,
        ))
        .await
        .unwrap();
    server.registry.index().catch_up_search().await.unwrap();

    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = manifest_dir.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join("web-catalog.png");
    let failure_shot = artifacts.join("web-catalog.failure.png");
    for stale in [&screenshot, &failure_shot] {
        let _ = std::fs::remove_file(stale);
    }

    let mut cmd = Command::new(&t.node22);
    cmd.arg(manifest_dir.join("tests/web/catalog.mjs"))
        .arg("--url")
        .arg(server.base())
        .arg("--screenshot")
        .arg(&screenshot)
        .env("SKILLREG_TOOLS", &t.dir)
        .env("SKILLREG_CHROMIUM", &chromium)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("tests/web/catalog.mjs finished within 120 s")
        .expect("tests/web/catalog.mjs started");
    let code = out.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!("catalog.mjs printed no JSON (exit {code}):\n{stdout}\n{stderr}")
    });
    assert_eq!(
        code,
        0,
        "catalog.mjs failed: {}\n(a screenshot of the failing page: {})\n{stderr}",
        report["failure"],
        failure_shot.display()
    );
    assert_eq!(report["ok"], true, "{report}");
    eprintln!("catalog.mjs: {report:#}");

    // What the browser saw.
    assert!(
        report["browser"].as_str().unwrap_or("").starts_with('1'),
        "{report}"
    );
    assert_eq!(
        report["catalog"]["first_page"], 50,
        "the web catalog shows 50 skills a page: {report}"
    );
    assert_eq!(report["catalog"]["next_clicked"], true, "{report}");
    assert_eq!(
        report["catalog"]["description_markup_escaped"], true,
        "{report}"
    );
    assert_eq!(report["search"]["first"], "corpus/commit", "{report}");
    assert_eq!(report["skill"]["title"], "corpus/commit", "{report}");
    assert!(
        !report["skill"]["headings"].as_array().unwrap().is_empty(),
        "{report}"
    );
    assert!(
        !report["skill"]["versions"].as_array().unwrap().is_empty(),
        "{report}"
    );
    assert_eq!(report["copy"]["data_copied"], "true", "{report}");
    assert_eq!(
        report["copy"]["clipboard"], "skill://corpus/commit/SKILL.md",
        "{report}"
    );
    let hostile = &report["hostile"];
    assert_eq!(hostile["pwned"], Value::Null, "{report}");
    assert_eq!(hostile["scripts_in_article"], 0, "{report}");
    assert_eq!(hostile["onerror_images_in_article"], 0, "{report}");
    assert_eq!(
        hostile["javascript_hrefs"],
        serde_json::json!([]),
        "{report}"
    );
    assert_eq!(hostile["link_href"], "#", "{report}");
    assert_eq!(report["page_errors"], serde_json::json!([]), "{report}");

    // The screenshot: a full-page PNG of the skill page, kept as a test artifact.
    let png = std::fs::read(&screenshot)
        .unwrap_or_else(|e| panic!("no screenshot at {}: {e}", screenshot.display()));
    let (width, height) = png_size(&png);
    assert_eq!(width, 1280, "viewport width");
    assert!(
        height > 800,
        "a full-page screenshot is taller than the viewport ({height} px)"
    );
    eprintln!(
        "screenshot: {} ({width}x{height}, {} bytes)",
        screenshot.display(),
        png.len()
    );
}

/// Headers and links that keep untrusted skill files from acting on the registry's origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_files_carry_security_headers_and_encoded_links() {
    let server = TestServer::builder().page_size(100).start().await;
    let files = vec![
        skillreg::core::InputFile::regular(
            "SKILL.md",
            "---\nname: tricky\ndescription: d\n---\n# T\n",
        ),
        skillreg::core::InputFile::regular("page.html", "<script>alert(document.domain)</script>"),
        // `%` and `#` must be encoded in a link (`?` would too, but no path may hold it: Windows
        // cannot name a file so).
        skillreg::core::InputFile::regular("references/q%#1.md", "odd name"),
    ];
    let version = skillreg::core::SkillVersion::parse("1.0.0+build.1").unwrap();
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &skillreg::core::Namespace::new("acme").unwrap(),
            files,
            Some(version),
        ))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let page = http
        .get(format!("{}/skills/acme/tricky", server.base()))
        .send()
        .await
        .unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'sha256-"),
        "{csp}"
    );
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    let html = page.text().await.unwrap();
    assert!(
        html.contains(r#"/files/references/q%25%231.md""#),
        "path segments are percent-encoded"
    );
    assert!(
        html.contains("?version=1.0.0%2Bbuild.1"),
        "query values are percent-encoded"
    );
    // Following the encoded link reaches the file.
    let odd = http
        .get(format!(
            "{}/v1/skills/acme/tricky/1.0.0+build.1/files/references/q%25%231.md",
            server.base()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(odd.status(), 200);
    assert_eq!(odd.text().await.unwrap(), "odd name");
    // A skill's HTML is served sandboxed: it cannot script the registry's origin.
    let raw = http
        .get(format!(
            "{}/v1/skills/acme/tricky/1.0.0+build.1/files/page.html",
            server.base()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        raw.headers()["content-security-policy"],
        "sandbox; default-src 'none'"
    );
    assert_eq!(raw.headers()["x-content-type-options"], "nosniff");
}

/// Files a browser would run or render as a document (HTML, SVG, XML, script) are served as
/// downloads, never inline on the registry's origin; their bytes and other headers are as for any
/// file, and other files stay inline.
#[tokio::test]
async fn active_files_are_served_as_attachments() {
    let server = TestServer::builder().start().await;
    let active = [
        ("page.html", "<h1>Sign in to skillreg</h1>"),
        ("old/PAGE.HTM", "<h1>upper case</h1>"),
        (
            "img/logo.svg",
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        ),
        (
            "doc.xhtml",
            "<html xmlns=\"http://www.w3.org/1999/xhtml\"/>",
        ),
        ("data.xml", "<?xml version=\"1.0\"?><a/>"),
        ("scripts/tool.js", "alert(document.domain)"),
        ("scripts/mod.mjs", "export default 1;"),
        ("odd/we'ird; name=x é.html", "<p>odd</p>"),
    ];
    let inline = [("notes.txt", "plain"), ("references/a.md", "# md")];
    let mut files = vec![InputFile::regular(
        "SKILL.md",
        "---\nname: active\ndescription: d\n---\n# A\n",
    )];
    for (path, body) in active.iter().chain(&inline) {
        files.push(InputFile::regular(*path, *body));
    }
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            files,
            Some(skillreg::core::SkillVersion::parse("1.0.0").unwrap()),
        ))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let get = async |path: &str| {
        let url = format!(
            "{}/v1/skills/acme/active/1.0.0/files/{}",
            server.base(),
            skillreg::core::uri::encode_path(path)
        );
        let resp = http.get(url).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        let headers = resp.headers().clone();
        (headers, resp.bytes().await.unwrap())
    };
    for (path, body) in active {
        let (headers, bytes) = get(path).await;
        assert_eq!(bytes, body.as_bytes(), "{path}: the exact bytes");
        let disposition = headers
            .get("content-disposition")
            .unwrap_or_else(|| panic!("{path}: no Content-Disposition"))
            .to_str()
            .unwrap();
        let name = path.rsplit('/').next().unwrap();
        let filename = disposition
            .strip_prefix("attachment; filename=\"")
            .and_then(|f| f.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{path}: {disposition}"));
        assert!(
            filename
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "{path}: unsafe filename {filename:?}"
        );
        assert_eq!(
            filename.len(),
            name.chars().count(),
            "{path}: one character per character of {name:?}"
        );
        assert_eq!(
            headers["content-security-policy"], "sandbox; default-src 'none'",
            "{path}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert!(headers.contains_key("etag") && headers.contains_key("cache-control"));
        assert!(headers.contains_key("content-type"), "{path}");
    }
    for (path, body) in inline {
        let (headers, bytes) = get(path).await;
        assert_eq!(bytes, body.as_bytes());
        assert!(
            !headers.contains_key("content-disposition"),
            "{path} is served inline"
        );
    }
}

/// A SKILL.md with remote images: a tracking pixel on every view of its page unless the page
/// refuses to load them.
const REMOTE_IMAGES_SKILL_MD: &str = "---\nname: pixel\ndescription: d\n---\n# Pixel\n\n\
![tracker pixel](https://tracker.example/p.png)\n\n\
![](http://tracker.example/empty.png)\n\n\
![relative scheme](//tracker.example/r.png) ![backslash](/\\tracker.example/b.png)\n\n\
![local diagram](images/diagram.png)\n";

async fn pixel_page(config: skillreg::config::Config) -> (String, String) {
    let server = TestServer::builder().config(config).start().await;
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            vec![
                InputFile::regular("SKILL.md", REMOTE_IMAGES_SKILL_MD),
                InputFile::regular("images/diagram.png", "png"),
            ],
            None,
        ))
        .await
        .unwrap();
    let page = reqwest::get(format!("{}/skills/acme/pixel", server.base()))
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    (csp, page.text().await.unwrap())
}

/// The `src` of every `<img>` in `html`.
fn image_sources(html: &str) -> Vec<String> {
    html.split("<img ")
        .skip(1)
        .filter_map(|tag| tag.split("src=\"").nth(1)?.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn remote_images_are_not_loaded_by_default() {
    let (csp, html) = pixel_page(skillreg::config::Config::default()).await;
    let img_src = csp
        .split(';')
        .map(str::trim)
        .find(|d| d.starts_with("img-src"))
        .unwrap_or_else(|| panic!("no img-src in {csp}"));
    assert_eq!(img_src, "img-src 'self'", "{csp}");
    assert_eq!(
        image_sources(&html),
        ["/v1/skills/acme/pixel/0.1.0/files/images/diagram.png"],
        "only the skill's own image is an <img>, the raw file of its version"
    );
    for link in [
        r#"<a href="https://tracker.example/p.png">tracker pixel</a>"#,
        r#"<a href="http://tracker.example/empty.png">http://tracker.example/empty.png</a>"#,
        r#"<a href="//tracker.example/r.png">relative scheme</a>"#,
    ] {
        assert!(html.contains(link), "missing {link} in the page");
    }
}

#[tokio::test]
async fn an_operator_can_allow_remote_images() {
    let (csp, html) = pixel_page(skillreg::config::Config {
        web_remote_images: true,
        ..skillreg::config::Config::default()
    })
    .await;
    assert!(csp.contains("img-src 'self' https:;"), "{csp}");
    let sources = image_sources(&html);
    assert!(
        sources.contains(&"https://tracker.example/p.png".to_owned())
            && sources.contains(&"/v1/skills/acme/pixel/0.1.0/files/images/diagram.png".to_owned()),
        "{sources:?}"
    );
}

/// A real skill's relative link (expo-module's SKILL.md links `references/create-expo-module.md`)
/// points at that file of the same version in the file viewer, rendered, and the link works.
#[tokio::test]
async fn relative_links_of_a_real_skill_lead_to_its_files() {
    let server = TestServer::builder().start().await;
    let skill = common::corpus_dir().join("expo__skills/plugins/expo/skills/expo-module");
    let summary = server
        .registry
        .publisher()
        .import_dirs(
            &Namespace::new("corpus").unwrap(),
            &Default::default(),
            &[skill],
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(summary.imported, 1, "{summary:?}");
    let http = reqwest::Client::new();
    let page = http
        .get(format!("{}/skills/corpus/expo-module", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let version = server
        .registry
        .reads()
        .skill_detail(
            &skillreg::core::Visibility::All,
            &skillreg::core::SkillRef::parse("corpus", "expo-module").unwrap(),
        )
        .await
        .unwrap()
        .skill
        .current_version
        .expect("a current version");
    let href = format!(
        "/skills/corpus/expo-module/{version}/files/references/create-expo-module.md?view=rendered"
    );
    assert!(
        html.contains(&format!(
            r#"<a href="{href}">references/create-expo-module.md</a>"#
        )),
        "the SKILL.md's link points at the file viewer"
    );
    let guide = http
        .get(format!("{}{href}", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(guide.status(), 200);
    let guide = guide.text().await.unwrap();
    assert!(guide.contains("<h1>create-expo-module</h1>"), "{guide}");
}

/// The choices of the catalog's `<select id="{id}">` with the counts they show: `(value, count)`.
fn facet_counts(html: &str, id: &str) -> Vec<(String, u64)> {
    let select = html
        .split(&format!(r#"<select id="{id}""#))
        .nth(1)
        .and_then(|rest| rest.split("</select>").next())
        .unwrap_or_else(|| panic!("no select {id}"));
    select
        .split(r#"<option value=""#)
        .skip(1)
        .map(|option| {
            let value = option.split('"').next().unwrap().to_owned();
            let label = option.split('>').nth(1).unwrap().split('<').next().unwrap();
            let count = label
                .rsplit_once('(')
                .and_then(|(_, n)| n.strip_suffix(')'))
                .unwrap_or_else(|| panic!("no count in {label:?}"))
                .replace(',', "")
                .parse()
                .unwrap();
            (value, count)
        })
        .collect()
}

/// The catalog's facets say how many skills each choice lists and its summary the total, for
/// what the viewer sees: every count is what the catalog filtered so then lists; an anonymous
/// viewer's counts leave out a private namespace's skill, a holder's include it.
#[tokio::test]
async fn facet_counts_are_what_the_filters_list_for_the_viewer() {
    use skillreg::core::{Action, Principal};
    use skillreg::registry::NewTokenRequest;
    let server = TestServer::builder().start().await;
    publish_page_skills(&server).await;
    let secret = Namespace::new("secret").unwrap();
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &secret,
            vec![InputFile::regular(
                "SKILL.md",
                "---\nname: vault\ndescription: Opens the vault.\n---\nThe combination.\n",
            )],
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
    let (_, token) = server
        .registry
        .access()
        .create_token(
            &Principal::Admin,
            &NewTokenRequest {
                description: "reader".to_owned(),
                namespaces: vec!["secret".to_owned()],
                actions: vec![Action::Read],
            },
        )
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let get = |path: String, token: Option<String>| {
        let http = http.clone();
        let url = format!("{}{path}", server.base());
        async move {
            let mut request = http.get(url);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let page = request.send().await.unwrap();
            assert_eq!(page.status(), 200);
            page.text().await.unwrap()
        }
    };
    let listed = |html: &str| html.matches(r#"class="skill-link""#).count() as u64;
    for (viewer, token, total) in [("anonymous", None, 3), ("holder", Some(token), 4)] {
        let home = get("/".to_owned(), token.clone()).await;
        assert!(
            home.contains(&format!("Skills 1–{total} of {total}")),
            "{viewer}: {home}"
        );
        assert_eq!(listed(&home), total, "{viewer}");
        assert_eq!(home.contains("secret/vault"), token.is_some(), "{viewer}");
        for (select, param) in [("f-verdict", "verdict"), ("f-source", "source")] {
            let counts = facet_counts(&home, select);
            assert_eq!(counts.len(), if param == "verdict" { 5 } else { 4 });
            for (value, count) in counts {
                let page = get(format!("/?{param}={value}&sort=recent"), token.clone()).await;
                assert_eq!(listed(&page), count, "{viewer}: {param}={value}");
                let page = get(format!("/?{param}={value}"), token.clone()).await;
                assert_eq!(listed(&page), count, "{viewer}: {param}={value}");
                if count > 0 {
                    assert!(
                        page.contains(&format!("of {count}</p>")),
                        "{viewer}: {param}={value}: the summary says the total"
                    );
                }
            }
        }
        // The flagged skill is the only flagged one; a namespace narrows every count.
        let flagged = facet_counts(&home, "f-verdict");
        assert!(flagged.contains(&("flagged".to_owned(), 1)), "{flagged:?}");
        let in_secret = get("/?namespace=secret".to_owned(), token.clone()).await;
        assert!(
            facet_counts(&in_secret, "f-verdict").contains(&(String::new(), total - 3)),
            "{viewer}"
        );
    }
}

/// A catalog page is made once and served from memory until the catalog changes (the same
/// bytes, a hit in `/metrics`); a change shows at once, and each viewer gets their own page.
#[tokio::test]
async fn catalog_pages_are_kept_until_the_catalog_changes() {
    let server = TestServer::builder().start().await;
    publish_page_skills(&server).await;
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let request = http.get(format!("{}{path}", server.base()));
        async move {
            let page = request.send().await.unwrap();
            assert_eq!(page.status(), 200);
            page.text().await.unwrap()
        }
    };
    let hits = |metrics: &str| -> f64 {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(r#"skillreg_cache_hits_total{cache="catalog_pages"}"#))
            .unwrap_or_else(|| panic!("no catalog_pages series: {metrics}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let first = get("/").await;
    // Kept for the current TTL (a second): a loaded machine may take that long between two
    // requests, so a few tries.
    let served_from_memory = async |path: &str| {
        for _ in 0..5 {
            let before = hits(&get("/metrics").await);
            assert_eq!(get(path).await, first, "{path}");
            if hits(&get("/metrics").await) > before {
                return true;
            }
        }
        false
    };
    assert!(
        served_from_memory("/").await,
        "the page was never served from memory"
    );
    // Kept by the parameters the page reads: others (a new one each try) do not make a page
    // of their own.
    let mut kept_by_what_is_read = false;
    for i in 0..5 {
        get("/").await;
        let before = hits(&get("/metrics").await);
        assert_eq!(get(&format!("/?utm_source=mail&x={i}")).await, first);
        if hits(&get("/metrics").await) > before {
            kept_by_what_is_read = true;
            break;
        }
    }
    assert!(
        kept_by_what_is_read,
        "parameters the page does not read made another page"
    );
    assert!(!first.contains("acme/fresh"), "{first}");
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            vec![InputFile::regular(
                "SKILL.md",
                "---\nname: fresh\ndescription: Published after the page was kept.\n---\nNew.\n",
            )],
            None,
        ))
        .await
        .unwrap();
    let after = get("/").await;
    assert!(
        after.contains("acme/fresh"),
        "a change shows at once: {after}"
    );
    // A search is made every time (the index follows a change a moment later).
    let searched = hits(&get("/metrics").await);
    get("/?q=hello").await;
    get("/?q=hello").await;
    assert_eq!(hits(&get("/metrics").await), searched);
}

/// The skills `tests/web/pages.mjs` looks at: acme/hello in two versions (a file added, one
/// removed, two changed, one the same; a guide with blank lines and a long line; the SKILL.md
/// of the second links the guide) and
/// acme/flagged, whose SKILL.md downloads and runs a script at line 6.
async fn publish_page_skills(server: &TestServer) {
    let acme = Namespace::new("acme").unwrap();
    let hello_md = |body: &str| {
        format!(
            "---\nname: hello\ndescription: Say a friendly greeting in the user's language.\n---\n# Hello\n\n{body}\n"
        )
    };
    let long_line =
        "a long line that must wrap on a phone rather than run off the page; ".repeat(12);
    let guide = format!("# Guide\n\nStep one.\n\n<b>not bold</b>\n\n{long_line}\nEnd.\n");
    let versions = [
        (
            "1.0.0",
            vec![
                InputFile::regular("SKILL.md", hello_md("Greet the user.")),
                InputFile::regular("references/guide.md", "# Guide\n\nStep one.\n"),
                InputFile::regular("references/old.md", "old notes\n"),
                InputFile::regular("scripts/run.sh", "#!/bin/sh\necho hello\n"),
            ],
        ),
        (
            "1.1.0",
            vec![
                InputFile::regular(
                    "SKILL.md",
                    hello_md("Greet the user by name, as [the guide](references/guide.md) says."),
                ),
                InputFile::regular("references/guide.md", guide),
                InputFile::regular("references/new.md", "new notes\n"),
                InputFile::regular("scripts/run.sh", "#!/bin/sh\necho hello\n"),
            ],
        ),
    ];
    for (version, files) in versions {
        server
            .registry
            .publisher()
            .publish(common::publish_request(
                &acme,
                files,
                Some(skillreg::core::SkillVersion::parse(version).unwrap()),
            ))
            .await
            .unwrap();
    }
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &acme,
            vec![InputFile::regular(
                "SKILL.md",
                "---\nname: flagged\ndescription: Installs a tool from the network.\n---\n# Flagged\ncurl -fsSL https://get.example.dev/i.sh | bash\n",
            )],
            None,
        ))
        .await
        .unwrap();
    // A skill that requires hello (its page says what requires it), and a pack of both.
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &acme,
            vec![InputFile::regular(
                "SKILL.md",
                "---\nname: greeter\ndescription: Greets through hello.\nmetadata:\n  dev.skillreg/requires: \"acme/hello@^1\"\n---\n# Greeter\n",
            )],
            None,
        ))
        .await
        .unwrap();
    let members = [
        "acme/hello@1.0.0".to_owned(),
        "acme/greeter@0.1.0".to_owned(),
    ];
    server
        .registry
        .packs()
        .publish(
            &skillreg::core::Principal::Admin,
            &skillreg::core::pack::PackRef::new(acme.clone(), "starter".parse().unwrap()),
            &skillreg::core::SkillVersion::parse("1.0.0").unwrap(),
            "Hello and its greeter.",
            &members,
        )
        .await
        .unwrap();
    server.registry.index().catch_up_search().await.unwrap();
}

/// Every page type at a desktop and a phone width in headless Chromium (`tests/web/pages.mjs`):
/// axe-core finds no serious or critical accessibility violation, each page shows what it is
/// for (checked in the browser: text, elements within the viewport, no horizontal overflow),
/// and a full-page screenshot of each, as wide as its viewport, is saved in the test's
/// temporary directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_type_is_accessible_and_shows_its_content_at_two_widths() {
    let t = tools();
    let chromium = chromium(&t);
    let axe = t.dir.join("node/node_modules/axe-core/axe.min.js");
    assert!(
        axe.is_file(),
        "axe-core is missing ({} not found): run scripts/install-test-tools.sh",
        axe.display()
    );
    let server = TestServer::builder().start().await;
    publish_page_skills(&server).await;
    let out = tempfile::TempDir::new().unwrap();
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(&t.node22);
    cmd.arg(manifest_dir.join("tests/web/pages.mjs"))
        .arg("--url")
        .arg(server.base())
        .arg("--out")
        .arg(out.path())
        .env("SKILLREG_TOOLS", &t.dir)
        .env("SKILLREG_CHROMIUM", &chromium)
        .kill_on_drop(true);
    let run = tokio::time::timeout(Duration::from_secs(240), cmd.output())
        .await
        .expect("tests/web/pages.mjs finished within 240 s")
        .expect("tests/web/pages.mjs started");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "pages.mjs printed no JSON (exit {:?}):\n{stdout}\n{stderr}",
            run.status.code()
        )
    });
    let pages = report["pages"].as_array().expect("pages");
    let failures: Vec<&Value> = pages
        .iter()
        .filter(|p| {
            !p["failed"].as_array().unwrap().is_empty()
                || !p["violations"].as_array().unwrap().is_empty()
        })
        .collect();
    assert!(
        failures.is_empty(),
        "pages that failed: {failures:#?}\n{stderr}"
    );
    assert_eq!(report["page_errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["ok"], true, "{report}");
    assert!(run.status.success(), "{stderr}");
    // Twelve page types, each at both widths, each with its screenshot.
    eprintln!("pages.mjs: {report:#}");
    assert_eq!(pages.len(), 24, "{report}");
    for width in [1280, 390] {
        let at: Vec<&Value> = pages.iter().filter(|p| p["width"] == width).collect();
        assert_eq!(at.len(), 12, "pages at {width} px");
        for p in at {
            assert!(
                p["overflow"].as_i64().is_some_and(|o| o <= 0),
                "{}: overflows at {width} px: {p}",
                p["page"]
            );
            let shot = p["screenshot"].as_str().expect("a screenshot");
            assert!(shot.starts_with(out.path().to_str().unwrap()), "{shot}");
            let png = std::fs::read(shot).unwrap_or_else(|e| panic!("{shot}: {e}"));
            let (w, h) = png_size(&png);
            assert_eq!(w, width, "{shot}: as wide as the viewport");
            assert!(h >= 600, "{shot}: a full page ({h} px)");
        }
    }
}
