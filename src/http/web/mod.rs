//! The web catalog at `/`: browse and search skills, see a skill's versions, status and files,
//! read its SKILL.md rendered as HTML, copy its `skill://` URI and an MCP client configuration.
//! With usage counting on, each card shows the skill's reads and its page a chart of its reads
//! per day over the last 30 days (inline SVG, no script). Pages themselves are not counted.
//!
//! Server-rendered; the only script copies text to the clipboard. Skill content is untrusted:
//! every string is HTML-escaped, raw HTML in Markdown is shown as text, links other than
//! http(s), mailto and relative ones are neutralised, and remote images are shown as links (an
//! image from another site would tell it of every view of the page).

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use serde::Deserialize;

use crate::core::provenance::{Provenance, short_commit};
use crate::core::uri::SKILL_MD;
use std::sync::Arc;

use super::app::AppState;
use super::auth::Reader;
use crate::core::usage::{Day, Totals};
use crate::core::{Namespace, SkillRef, SkillVersion, Status, Visibility, frontmatter};
use crate::error::{Error, NotFound, Result};
use crate::registry::{Registry, SkillDetail, SkillStats, VersionDetail};
use std::collections::HashMap;

const PAGE_SIZE: u32 = 50;

pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/", get(catalog))
        .route("/skills/{namespace}/{name}", get(skill))
        .route(
            "/skills/{namespace}/{name}/{version}/files/{*path}",
            get(file),
        )
        .with_state(state)
}

#[derive(Deserialize)]
struct CatalogQuery {
    q: Option<String>,
    namespace: Option<String>,
    cursor: Option<String>,
}

/// HTML-escape text for element content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The one script of the pages: copy buttons.
const SCRIPT: &str = "document.querySelectorAll('button[data-copy]').forEach(function (b) {
  b.addEventListener('click', function () {
    var text = document.getElementById(b.dataset.copy).textContent;
    var label = b.textContent;
    var done = function () {
      b.textContent = 'Copied'; b.dataset.copied = 'true';
      setTimeout(function () { b.textContent = label; }, 2000);
    };
    if (navigator.clipboard) { navigator.clipboard.writeText(text).then(done, done); } else { done(); }
  });
});";

/// A strict content security policy: no script but [`SCRIPT`] (by hash), no plugins, no frames,
/// images only from here (and https when `remote_images`). A second line of defence behind the
/// escaping and the rendering of remote images as links.
fn content_security_policy(remote_images: bool) -> &'static str {
    static CSP: std::sync::OnceLock<[String; 2]> = std::sync::OnceLock::new();
    &CSP.get_or_init(|| {
        use base64::Engine as _;
        use sha2::Digest as _;
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()));
        [false, true].map(|remote| {
            let img_src = if remote { "'self' https:" } else { "'self'" };
            format!(
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; img-src {img_src}; \
                 base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
            )
        })
    })[usize::from(remote_images)]
}

fn page(title: &str, body: &str) -> Response {
    page_with_images(title, body, false)
}

/// [`page`], its policy allowing https images when `remote_images`.
fn page_with_images(title: &str, body: &str, remote_images: bool) -> Response {
    let html = Html(format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · skillreg</title>
<style>
body{{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}}
header{{background:#1d2330;color:#fff;padding:.8rem 1.5rem;display:flex;gap:1rem;align-items:center}}
header a{{color:#fff;text-decoration:none;font-weight:600}} header .tagline{{color:#c9d1e0;font-size:.9em}}
main{{max-width:960px;margin:1.5rem auto;padding:0 1rem}}
form.search{{display:flex;gap:.5rem;margin-bottom:1rem}} form.search input{{flex:1;padding:.5rem;font-size:1rem}}
.card{{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:.8rem 1rem;margin-bottom:.6rem}}
.card h3{{margin:0 0 .2rem}} .muted{{color:#4f5869;font-size:.9em}}
.badge{{display:inline-block;padding:0 .45rem;border-radius:4px;font-size:.8em;margin-left:.4rem}}
.deprecated{{background:#fff3cd;color:#7a5b00}} .yanked{{background:#fde2e1;color:#8a1c14}}
.revoked,.blocked{{background:#8a1c14;color:#fff}} .flagged{{background:#ffe8cc;color:#7a3d00}}
.clean{{background:#dff5e3;color:#1e5b2c}} .unscanned{{background:#eceff3;color:#4f5869}}
pre.lines span{{display:block}} pre.lines span:target{{background:#fff3cd}}
code,pre{{font-family:ui-monospace,monospace;font-size:.9em}} pre{{background:#f0f2f5;padding:.7rem;overflow:auto;border-radius:4px}}
table{{border-collapse:collapse;width:100%}} td,th{{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #e5e8ec}}
.skillmd{{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:1rem 1.5rem}}
button{{cursor:pointer}}
</style></head>
<body><header><a href="/">skillreg</a><span class="tagline">Agent Skills registry · MCP at /mcp</span></header>
<main>{body}</main>
<script>{script}</script></body></html>"#,
        title = esc(title),
        script = SCRIPT,
    ));
    let mut response = html.into_response();
    let headers = response.headers_mut();
    if let Ok(v) = axum::http::HeaderValue::from_str(content_security_policy(remote_images)) {
        headers.insert(axum::http::header::CONTENT_SECURITY_POLICY, v);
    }
    headers.insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        axum::http::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        axum::http::header::REFERRER_POLICY,
        axum::http::HeaderValue::from_static("no-referrer"),
    );
    response
}

fn error_page(status: StatusCode, message: &str) -> Response {
    (
        status,
        page(
            "Error",
            &format!("<h1>{}</h1><p>{}</p>", status.as_u16(), esc(message)),
        ),
    )
        .into_response()
}

/// An error as a page: the status and message of its row in the error-code table.
fn error_response(error: &Error) -> Response {
    let status = StatusCode::from_u16(error.code().http_status())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error_page(status, &error.public_message())
}

/// The CI job a version was published from (trusted publishing): the repository (a link when
/// the issuer is github.com's), workflow, ref, commit and run, as its token said.
fn publisher_line(claims: &serde_json::Map<String, serde_json::Value>) -> String {
    let text = |key: &str| claims.get(key).and_then(|v| v.as_str()).unwrap_or("");
    let repository = text("repository");
    // Only github.com's own issuer says the repository is on github.com.
    let on_github = text("issuer") == "https://token.actions.githubusercontent.com";
    let repo = if on_github && !repository.is_empty() {
        format!(
            r#"<a href="https://github.com/{r}">{r}</a>"#,
            r = esc(repository)
        )
    } else {
        format!("<code>{}</code>", esc(repository))
    };
    let commit = text("commit");
    format!(
        r#"<p id="publisher">Published from CI ({provider}): {repo}, workflow <code>{workflow}</code>, <code>{git_ref}</code>, commit <code title="{commit}">{short}</code>, run <code>{run}</code></p>"#,
        provider = esc(text("provider")),
        workflow = esc(text("workflow")),
        git_ref = esc(text("ref")),
        commit = esc(commit),
        short = esc(short_commit(commit)),
        run = esc(text("run")),
    )
}

/// Who signed a version, each signer with its key's id (shortened, the whole in its title)
/// and a link to the bundle `model_signing verify` reads.
fn signatures_line(signatures: &[crate::core::signature::Signed], bundle: &str) -> String {
    use crate::core::signature::Signer;
    let signers: Vec<String> = signatures
        .iter()
        .map(|s| {
            let who = match (&s.by, &s.identity) {
                (Signer::Registry, _) => "this registry".to_owned(),
                (Signer::Author, Some(identity)) => format!("the author {}", esc(identity)),
                (Signer::Author, None) => "the author".to_owned(),
            };
            let link = match s.by {
                Signer::Registry => format!(r#"<a href="{}">bundle</a>"#, esc(bundle)),
                Signer::Author => format!(r#"<a href="{}?by=author">bundle</a>"#, esc(bundle)),
            };
            let state = if s.verified {
                "verified"
            } else {
                "not verified"
            };
            format!(
                r#"{who} (key <code title="{k}">{short}…</code>, {state}, {link})"#,
                k = esc(&s.key_id),
                short = esc(&s.key_id.chars().take(12).collect::<String>()),
            )
        })
        .collect();
    format!(
        r#"<p id="signatures">Signed by {} (OpenSSF Model Signing)</p>"#,
        signers.join("; ")
    )
}

/// Where a version was read from: the repository (a link when it is a web URL), ref, commit
/// and directory, or the upstream server and URI.
fn source_line(provenance: &Provenance) -> String {
    let link = |url: &str| {
        if url.starts_with("https://") || url.starts_with("http://") {
            format!(r#"<a href="{u}">{u}</a>"#, u = esc(url))
        } else {
            format!("<code>{}</code>", esc(url))
        }
    };
    match provenance {
        Provenance::Git {
            repository,
            reference,
            commit,
            path,
        } => {
            let path = if path.is_empty() {
                String::new()
            } else {
                format!(" in <code>{}</code>", esc(path))
            };
            format!(
                r#"<p id="source">Source: Git {repo} at <code>{r}</code>, commit <code title="{c}">{short}</code>{path}</p>"#,
                repo = link(repository),
                r = esc(reference),
                c = esc(commit),
                short = esc(short_commit(commit)),
            )
        }
        Provenance::Mcp { server, uri } => format!(
            r#"<p id="source">Source: mirrored from <code>{}</code> on {}</p>"#,
            esc(uri),
            link(server)
        ),
    }
}

/// A version's scan verdict as a badge, its counts per severity in the title.
fn verdict_badge(scan: &crate::core::scan::Summary) -> String {
    let counts: Vec<String> = scan
        .counts
        .iter()
        .map(|(severity, n)| format!("{n} {severity}"))
        .collect();
    format!(
        r#"<span class="badge {v}" title="{t}">{v}</span>"#,
        v = scan.verdict,
        t = esc(&counts.join(", ")),
    )
}

/// One file of a version as text with a numbered anchor per line (`#L12`), which findings
/// link to; a file that is not text is offered as a download.
async fn file(
    State(s): State<AppState>,
    reader: Reader,
    Path((ns, name, version, path)): Path<(String, String, String, String)>,
) -> Response {
    let loaded = async {
        let target = SkillRef::parse(&ns, &name)?.at(SkillVersion::parse(&version)?);
        let file = s
            .registry
            .reads()
            .version_file(&reader.visibility, &target, &path, None)
            .await?;
        Ok::<_, Error>((target, file))
    }
    .await;
    let (target, file) = match loaded {
        Ok(found) => found,
        Err(e) => return error_response(&e),
    };
    let raw = format!(
        "/v1/skills/{}/{}/{}/files/{}",
        esc(target.namespace().as_str()),
        esc(target.name().as_str()),
        esc(&crate::core::uri::encode_path(&version)),
        esc(&crate::core::uri::encode_path(&path)),
    );
    let mut body = format!(
        r#"<p><a href="/skills/{ns}/{n}?version={q}">← {ns}/{n} {v}</a></p><h1>{p}</h1><p>{badge} <a href="{raw}">raw</a> <code>{d}</code></p>"#,
        ns = esc(target.namespace().as_str()),
        n = esc(target.name().as_str()),
        q = esc(&crate::core::uri::encode_query_value(&version)),
        v = esc(&version),
        p = esc(&path),
        badge = verdict_badge(&file.scan),
        d = esc(&file.digest.to_string()),
    );
    match file.text() {
        Some(text) => {
            body.push_str(r#"<pre class="lines" id="file">"#);
            for (i, line) in text.lines().enumerate() {
                body.push_str(&format!(r#"<span id="L{}">{}</span>"#, i + 1, esc(line)));
            }
            body.push_str("</pre>");
        }
        None => body.push_str("<p>Not a text file: download it raw.</p>"),
    }
    page(&format!("{ns}/{name} {path}"), &body)
}

fn badge(status: Status, title: Option<&str>) -> String {
    match status {
        Status::Active => String::new(),
        s => format!(
            r#"<span class="badge {s}" title="{}">{s}</span>"#,
            esc(title.unwrap_or("")),
            s = s.as_str()
        ),
    }
}

async fn catalog(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<CatalogQuery>,
) -> Response {
    match catalog_page(&s.registry, &reader.visibility, &q).await {
        Ok(response) => response,
        Err(e) => error_response(&e),
    }
}

async fn catalog_page(
    registry: &Registry,
    viewer: &Visibility,
    q: &CatalogQuery,
) -> Result<Response> {
    let query = q.q.clone().unwrap_or_default();
    let namespace = q.namespace.as_deref().map(parse_namespace).transpose()?;
    let mut body = format!(
        r#"<form class="search" action="/" method="get"><input id="q" name="q" type="search" placeholder="Search skills by what they do" value="{}" aria-label="Search skills"><button type="submit">Search</button></form>"#,
        esc(&query)
    );
    if !query.trim().is_empty() {
        let hits = registry
            .reads()
            .search(viewer, &query, namespace.as_ref(), 50)
            .await?;
        let count = if hits.len() == 50 {
            "The 50 best results".to_owned()
        } else {
            format!("{} results", hits.len())
        };
        body.push_str(&format!(
            r#"<p class="muted" id="results">{count} for “{}”</p>"#,
            esc(&query)
        ));
        let skills: Vec<SkillRef> = hits.iter().map(|h| h.skill.clone()).collect();
        let reads = reads_of(registry, &skills).await?;
        for h in hits {
            body.push_str(&card(
                h.skill.namespace.as_str(),
                h.skill.name.as_str(),
                &h.description,
                Some(&h.version.to_string()),
                &badge(h.status, h.deprecation.as_deref()),
                reads
                    .as_ref()
                    .map(|r| r.get(&h.skill).map_or(0, Totals::all)),
            ));
        }
        return Ok(page(&format!("Search: {query}"), &body));
    }
    let p = registry
        .reads()
        .catalog(viewer, namespace.as_ref(), q.cursor.as_deref(), PAGE_SIZE)
        .await?;
    let skills: Vec<SkillRef> = p.items.iter().map(|i| i.skill.clone()).collect();
    let reads = reads_of(registry, &skills).await?;
    body.push_str(r#"<div id="catalog">"#);
    for item in &p.items {
        let status = if item.current_version.is_none() {
            badge(Status::Yanked, Some("every version is yanked"))
        } else if item.deprecation.is_some() {
            badge(Status::Deprecated, item.deprecation.as_deref())
        } else {
            String::new()
        };
        body.push_str(&card(
            item.skill.namespace.as_str(),
            item.skill.name.as_str(),
            item.description.as_deref().unwrap_or(""),
            item.current_version
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            &status,
            reads
                .as_ref()
                .map(|r| r.get(&item.skill).map_or(0, Totals::all)),
        ));
    }
    body.push_str("</div>");
    if p.items.is_empty() {
        body.push_str("<p>No skills yet.</p>");
    }
    if let Some(next) = p.next_cursor {
        let ns = namespace
            .map(|n| format!("&namespace={}", esc(n.as_str())))
            .unwrap_or_default();
        body.push_str(&format!(
            r#"<p><a id="next" href="/?cursor={}{ns}">Next page →</a></p>"#,
            esc(&next)
        ));
    }
    Ok(page("Skills", &body))
}

/// Every skill's usage totals, when reads are counted (`None`: they are not, and cards say
/// nothing of reads).
async fn reads_of(
    registry: &Registry,
    skills: &[SkillRef],
) -> Result<Option<HashMap<SkillRef, Totals>>> {
    if !registry.usage().counting() {
        return Ok(None);
    }
    Ok(Some(registry.reads().usage_totals(skills).await?))
}

fn card(
    namespace: &str,
    name: &str,
    description: &str,
    version: Option<&str>,
    status: &str,
    reads: Option<u64>,
) -> String {
    let version = version.map(|v| format!("version {}", esc(v)));
    let reads = reads.map(|n| format!(r#"<span class="reads">{n} reads</span>"#));
    let muted: Vec<String> = version.into_iter().chain(reads).collect();
    format!(
        r#"<div class="card"><h3><a class="skill-link" href="/skills/{ns}/{n}">{ns}/{n}</a>{status}</h3><div>{d}</div><div class="muted">{m}</div></div>"#,
        ns = esc(namespace),
        n = esc(name),
        d = esc(description),
        m = muted.join(" · "),
    )
}

/// Days the skill page's chart shows.
const CHART_DAYS: u32 = 30;

/// The skill page's chart: reads per day over the stats' days, one bar a day (each with its
/// date and count as its title), as inline SVG. No script; every text escaped.
fn usage_chart(stats: &SkillStats) -> String {
    const BAR: i64 = 8;
    const GAP: i64 = 2;
    const HEIGHT: i64 = 48;
    let mut per_day: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for c in &stats.counts {
        *per_day.entry(c.day.0).or_default() += c.count;
    }
    let max = per_day.values().copied().max().unwrap_or(0).max(1);
    let days = (stats.to.0 - stats.from.0 + 1).max(1);
    let width = days * (BAR + GAP);
    let total: u64 = per_day.values().sum();
    let mut svg = format!(
        r#"<p id="usage-total">{total} reads in the last {days} days</p><svg id="usage-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" viewBox="0 0 {width} {HEIGHT}" role="img" aria-label="reads per day, the last {days} days">"#
    );
    for (i, day) in (stats.from.0..=stats.to.0).enumerate() {
        let count = per_day.get(&day).copied().unwrap_or(0);
        // At least one pixel, so that every day shows where it is.
        let h = (count * (HEIGHT as u64 - 1)).div_ceil(max) as i64 + 1;
        svg.push_str(&format!(
            r##"<rect x="{x}" y="{y}" width="{BAR}" height="{h}" fill="#4f7cff"><title>{date}: {count}</title></rect>"##,
            x = i as i64 * (BAR + GAP),
            y = HEIGHT - h,
            date = esc(&Day(day).date()),
        ));
    }
    svg.push_str("</svg>");
    svg
}

#[derive(Deserialize)]
struct SkillQuery {
    version: Option<String>,
}

/// Everything the skill page shows.
struct SkillPage {
    detail: SkillDetail,
    version: VersionDetail,
    /// Whether the version shown is not the current one.
    pinned: bool,
    /// The SKILL.md rendered to safe HTML.
    skill_md: Arc<String>,
    /// The last [`CHART_DAYS`] of reads, when reads are counted.
    usage: Option<SkillStats>,
}

async fn skill(
    State(s): State<AppState>,
    reader: Reader,
    Path((ns, name)): Path<(String, String)>,
    Query(q): Query<SkillQuery>,
    headers: axum::http::HeaderMap,
) -> Response {
    // The address the browser used is the one an MCP host on the same network can use.
    let host = super::app::request_host(&headers)
        .unwrap_or("127.0.0.1:8080")
        .to_owned();
    match load_skill(&s, &reader.visibility, &ns, &name, q.version.as_deref()).await {
        Ok(loaded) => render_skill(&loaded, &host, s.config.web_remote_images),
        Err(e) => error_response(&e),
    }
}

/// Fetch what the skill page shows: the skill, the version asked for (else the current one,
/// else the newest), and its SKILL.md.
async fn load_skill(
    state: &AppState,
    viewer: &Visibility,
    ns: &str,
    name: &str,
    version: Option<&str>,
) -> Result<SkillPage> {
    let registry = &state.registry;
    let skill = SkillRef::parse(ns, name)?;
    let detail = registry.reads().skill_detail(viewer, &skill).await?;
    let version = match version {
        Some(v) => SkillVersion::parse(v)?,
        None => detail
            .skill
            .current_version
            .clone()
            .or_else(|| detail.versions.first().map(|v| v.version.version.clone()))
            .ok_or_else(|| Error::NotFound(NotFound::Skill(skill.clone())))?,
    };
    let target = skill.clone().at(version);
    let manifest = registry.reads().version_detail(viewer, &target).await?;
    let skill_md = registry
        .reads()
        .version_file(viewer, &target, SKILL_MD, None)
        .await?;
    // Rendering a large SKILL.md is CPU work: once per content, off the async workers.
    let skill_md = match state.rendered.get(&skill_md.digest) {
        Some(html) => html,
        None => {
            let digest = skill_md.digest;
            let remote_images = state.config.web_remote_images;
            let html = Arc::new(
                registry
                    .heavy(move || {
                        render_markdown(&String::from_utf8_lossy(&skill_md.bytes), remote_images)
                    })
                    .await?,
            );
            state.rendered.insert(digest, html.clone());
            html
        }
    };
    let usage = if registry.usage().counting() {
        Some(
            registry
                .reads()
                .skill_stats(viewer, &skill, CHART_DAYS)
                .await?,
        )
    } else {
        None
    };
    Ok(SkillPage {
        pinned: detail.skill.current_version.as_ref() != Some(&target.version),
        skill_md,
        usage,
        detail,
        version: manifest,
    })
}

fn render_skill(loaded: &SkillPage, host: &str, remote_images: bool) -> Response {
    let SkillPage {
        detail,
        version: manifest,
        pinned,
        skill_md,
        usage,
    } = loaded;
    let target = &manifest.version.version;
    let (ns, name) = (target.namespace().as_str(), target.name().as_str());
    let version = target.version.to_string();
    let uri = if *pinned {
        target.skill_md_uri()
    } else {
        target.skill.skill_md_uri()
    };
    let mut body = format!(
        r#"<p><a href="/">← all skills</a></p><h1 id="skill-title">{}/{}</h1>"#,
        esc(ns),
        esc(name)
    );
    if let Some(message) = &detail.skill.deprecation {
        body.push_str(&format!(
            r#"<div class="card deprecated" id="deprecation">Deprecated: {}</div>"#,
            esc(message)
        ));
    }
    if let Some(reason) = &manifest.version.yank_reason {
        body.push_str(&format!(
            r#"<div class="card yanked">Version {} is yanked: {}</div>"#,
            esc(&version),
            esc(reason)
        ));
    }
    body.push_str(&format!(
        r#"<p>Content scan of {v}: {badge}</p>"#,
        v = esc(&version),
        badge = verdict_badge(&manifest.version.scan),
    ));
    if let Some(provenance) = &manifest.provenance {
        body.push_str(&source_line(provenance));
    }
    if let Some(publisher) = &manifest.publisher {
        body.push_str(&publisher_line(publisher));
    }
    if !manifest.signatures.is_empty() {
        body.push_str(&signatures_line(
            &manifest.signatures,
            &format!("/v1/skills/{ns}/{name}/{version}/signature"),
        ));
    }
    let description = manifest
        .frontmatter
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("");
    body.push_str(&format!(r#"<p>{}</p>"#, esc(description)));
    body.push_str(&format!(
        r#"<p><code id="skill-uri">{uri}</code> <button type="button" data-copy="skill-uri" id="copy-uri">Copy URI</button></p>"#,
        uri = esc(&uri.to_string())
    ));
    let snippet = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "skillreg": { "command": "skillreg", "args": ["serve", "--stdio", "--data-dir", "/var/lib/skillreg"] } }
    }))
    .unwrap_or_default();
    let http_snippet = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "skillreg": { "type": "http", "url": format!("http://{host}/mcp") } }
    }))
    .unwrap_or_default();
    body.push_str(&format!(
        r#"<details><summary>Connect an MCP host</summary><p>Over stdio:</p><pre id="config-stdio">{}</pre><button type="button" data-copy="config-stdio">Copy</button><p>Over HTTP:</p><pre id="config-http">{}</pre><button type="button" data-copy="config-http">Copy</button></details>"#,
        esc(&snippet),
        esc(&http_snippet)
    ));
    if let Some(stats) = usage {
        body.push_str("<h2>Reads</h2>");
        body.push_str(&usage_chart(stats));
    }
    body.push_str(r#"<h2>Versions</h2><table id="versions"><tr><th>version</th><th>published</th><th>status</th><th>files</th></tr>"#);
    for v in &detail.versions {
        let status = match (
            &v.revoked_at,
            &v.yanked_at,
            detail.skill.current_version.as_ref() == Some(&v.version.version),
        ) {
            (Some(_), _, _) => format!(
                r#"<span class="badge revoked" title="{}">revoked</span>"#,
                esc(v.revoke_reason.as_deref().unwrap_or(""))
            ),
            (None, Some(_), _) => format!(
                r#"<span class="badge yanked" title="{}">yanked</span>"#,
                esc(v.yank_reason.as_deref().unwrap_or(""))
            ),
            (None, None, true) => "current".to_owned(),
            (None, None, false) if v.pending => {
                r#"<span class="badge deprecated">pending review</span>"#.to_owned()
            }
            (None, None, false) => String::new(),
        } + &verdict_badge(&v.scan);
        let shown = v.version.version.to_string();
        body.push_str(&format!(
            r#"<tr><td><a href="/skills/{ns}/{n}?version={q}">{v}</a></td><td>{p}</td><td>{status}</td><td>{f}</td></tr>"#,
            ns = esc(ns),
            n = esc(name),
            q = esc(&crate::core::uri::encode_query_value(&shown)),
            v = esc(&shown),
            p = esc(&v.published_at),
            f = v.file_count,
        ));
    }
    body.push_str("</table>");
    body.push_str(&format!(r#"<h2>Files of {}</h2><table id="files"><tr><th>path</th><th>size</th><th>digest</th></tr>"#, esc(&version)));
    for f in &manifest.files {
        let digest = f.digest.to_string();
        body.push_str(&format!(
            r#"<tr><td><a href="/v1/skills/{ns}/{n}/{v}/files/{href}">{p}</a></td><td>{s}</td><td><code title="{full}">{d}</code></td></tr>"#,
            ns = esc(ns),
            n = esc(name),
            v = esc(&crate::core::uri::encode_path(&version)),
            href = esc(&crate::core::uri::encode_path(&f.path)),
            p = esc(&f.path),
            s = f.size,
            full = esc(&digest),
            d = esc(&digest[..digest.len().min(19)]),
        ));
    }
    body.push_str("</table>");
    if !manifest.findings.is_empty() {
        body.push_str(&format!(
            r#"<h2>Findings in {}</h2><table id="findings"><tr><th>severity</th><th>rule</th><th>where</th><th>excerpt</th></tr>"#,
            esc(&version)
        ));
        for f in &manifest.findings {
            let at = if f.line > 0 {
                format!("{}:{}", f.file, f.line)
            } else {
                f.file.clone()
            };
            body.push_str(&format!(
                r#"<tr><td>{sev}</td><td title="{why}">{rule}</td><td><a href="/skills/{ns}/{n}/{v}/files/{href}#L{line}">{at}</a></td><td><code>{ex}</code></td></tr>"#,
                sev = f.severity,
                why = esc(crate::core::scan::rule(&f.rule).map_or("", |r| r.explanation)),
                rule = esc(&f.rule),
                ns = esc(ns),
                n = esc(name),
                v = esc(&crate::core::uri::encode_path(&version)),
                href = esc(&crate::core::uri::encode_path(&f.file)),
                line = f.line,
                at = esc(&at),
                ex = esc(&f.excerpt),
            ));
        }
        body.push_str("</table>");
    }
    body.push_str(&format!(
        r#"<h2>SKILL.md</h2><article class="skillmd" id="skill-md">{skill_md}</article>"#
    ));
    page_with_images(&format!("{ns}/{name}"), &body, remote_images)
}

fn parse_namespace(s: &str) -> Result<Namespace> {
    Ok(crate::core::refs::parse_namespace(s)?)
}

/// Render untrusted Markdown (frontmatter removed) to safe HTML; remote images become links
/// unless `remote_images`.
pub fn render_markdown(text: &str, remote_images: bool) -> String {
    let body = frontmatter::body(text);
    let mut options = Options::empty();
    options
        .insert(Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS);
    // Whether each image open at this point is remote (rendered as a link), innermost last.
    let mut images: Vec<bool> = Vec::new();
    let mut events: Vec<Event<'_>> = Vec::new();
    for event in Parser::new_ext(body, options) {
        match event {
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = safe_url(dest_url);
                let remote = !remote_images && is_remote(&dest_url);
                images.push(remote);
                events.push(Event::Start(if remote {
                    Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }
                } else {
                    Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }
                }));
            }
            Event::End(TagEnd::Image) => {
                if images.pop() == Some(true) {
                    // A link needs words to click: an image without alt text shows its URL.
                    if let Some(Event::Start(Tag::Link { dest_url, .. })) = events.last() {
                        let url = dest_url.clone();
                        events.push(Event::Text(url));
                    }
                    events.push(Event::End(TagEnd::Link));
                } else {
                    events.push(Event::End(TagEnd::Image));
                }
            }
            other => events.push(other),
        }
    }
    let events = events.into_iter().map(|event| match event {
        // Raw HTML is shown as text, never interpreted.
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// Whether a (safe) URL points off this site: it has a scheme, or names a host (`//host`, which
/// browsers also read in `/\host` and `\\host`).
fn is_remote(url: &str) -> bool {
    let url = url.trim().replace('\\', "/");
    let has_scheme = url
        .find(':')
        .is_some_and(|colon| !url[..colon].contains(['/', '?', '#']));
    has_scheme || url.starts_with("//")
}

/// Keep http(s), mailto and relative URLs; anything else (javascript:, data:, vbscript:…) becomes `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    let scheme_end = lower.find(':');
    let first_sep = lower.find(['/', '?', '#']);
    let has_scheme = match (scheme_end, first_sep) {
        (Some(c), Some(s)) => c < s,
        (Some(_), None) => true,
        _ => false,
    };
    let allowed = !has_scheme
        || ["http:", "https:", "mailto:"]
            .iter()
            .any(|s| lower.starts_with(s));
    if allowed && !lower.chars().any(char::is_control) {
        url
    } else {
        CowStr::Borrowed("#")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usage_chart_has_a_bar_a_day_scaled_to_the_busiest() {
        use crate::core::usage::Kind;
        use crate::registry::DayCount;
        let count = |day, kind, count| DayCount {
            day: Day(day),
            version: SkillVersion::parse("1.0.0").unwrap(),
            kind,
            count,
        };
        let stats = SkillStats {
            skill: SkillRef::parse("acme", "pdf").unwrap(),
            from: Day(100),
            to: Day(102),
            counts: vec![
                count(100, Kind::Get, 2),
                count(100, Kind::File, 2),
                count(102, Kind::Archive, 1),
            ],
        };
        let svg = usage_chart(&stats);
        assert!(svg.contains("5 reads in the last 3 days"), "{svg}");
        assert_eq!(svg.matches("<rect ").count(), 3, "{svg}");
        // The busiest day fills the height; an empty day is one pixel; the rest in proportion.
        assert!(svg.contains(r#"y="0" width="8" height="48""#), "{svg}");
        assert!(svg.contains("<title>1970-04-11: 4</title>"), "{svg}");
        assert!(svg.contains(r#"y="47" width="8" height="1""#), "{svg}");
        assert!(svg.contains(r#"height="13" fill"#), "{svg}");
        assert!(!svg.contains("<script"), "{svg}");
    }

    #[test]
    fn markdown_is_sanitised() {
        let md = "---\nname: x\ndescription: y\n---\n# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[bad](javascript:alert(1)) [also](JavaScript:alert(2)) [data](data:text/html,x) [ok](https://example.com) [rel](references/a.md) ![i](javascript:x)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let html = render_markdown(md, false);
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            !html.contains("<img src=x") && !html.contains("onerror=alert(1)>"),
            "{html}"
        );
        assert!(
            !html.to_lowercase().contains("javascript:") && !html.contains("data:text"),
            "{html}"
        );
        assert!(
            html.contains(r#"href="https://example.com""#)
                && html.contains(r#"href="references/a.md""#),
            "{html}"
        );
        assert!(html.contains("<table>"), "{html}");
        assert!(
            !html.contains("name: x"),
            "frontmatter is not rendered: {html}"
        );
        for remote in [
            "https://t.example/p.png",
            "HTTP://t.example/p.png",
            "//t.example/p.png",
            "/\\t.example/p.png",
            "\\\\t.example/p.png",
            "mailto:a@b.example",
        ] {
            assert!(is_remote(remote), "{remote}");
        }
        for local in [
            "images/a.png",
            "/images/a.png",
            "a.png?x=http://y",
            "#",
            "./a:b.png",
        ] {
            assert!(!is_remote(local), "{local}");
        }
        let html = render_markdown(
            "![alt *x*](https://t.example/p.png) ![](https://t.example/q.png) ![a ![b](https://t.example/in.png)](local.png) ![l](l.png)",
            false,
        );
        assert!(
            !html.contains("t.example/p.png\" alt") && !html.contains("<img src=\"https:"),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="https://t.example/p.png">alt <em>x</em></a>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="https://t.example/q.png">https://t.example/q.png</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<img src="l.png" alt="l" />"#), "{html}");
        let allowed = render_markdown("![p](https://t.example/p.png)", true);
        assert!(
            allowed.contains(r#"<img src="https://t.example/p.png" alt="p" />"#),
            "{allowed}"
        );
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
