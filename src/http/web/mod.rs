//! The web catalog at `/`: browse (filters, facets, two orders, keyset pages) and search skills,
//! a skill's page (install commands, versions with their status, provenance, findings, its
//! SKILL.md), a file viewer (numbered lines, `#Ln` anchors, Markdown rendered or raw) and the
//! diff of any two versions; the packs (`packs.rs`). With usage counting on, each card shows the skill's reads and its
//! page a chart of its reads per day over the last 30 days (inline SVG, no script). Pages
//! themselves are not counted.
//!
//! Server-rendered from the templates in `templates/web/` (askama: checked at compile time,
//! every value HTML-escaped unless a view marks it safe: only the rendered Markdown of
//! `markdown.rs` is). This module holds the handlers; the view models the templates read, mapped
//! from the registry's read model, are in `catalog.rs`, `skill.rs`, `diff.rs` (the diff of two
//! versions) and `views.rs` (what pages share, the file viewer and the error page). The only
//! script copies text to the clipboard; a strict content security policy stands behind the
//! escaping.

use std::collections::HashSet;
use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::app::AppState;
use super::auth::Reader;
use crate::core::records::FileRecord;
use crate::core::uri::SKILL_MD;
use crate::core::{SkillRef, SkillVersion, VersionRef, Visibility};
use crate::error::{Error, NotFound, Result};
use crate::registry::{FileContent, Kept, SkillDetail, SkillStats, VersionDetail};

mod catalog;
mod diff;
mod markdown;
mod packs;
mod skill;
mod views;

pub use markdown::render_markdown;

/// Skills on one catalog page.
const PAGE_SIZE: u32 = 50;
/// Most search results shown.
const SEARCH_LIMIT: usize = 50;
/// Days the skill page's chart shows.
const CHART_DAYS: u32 = 30;

pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/", get(catalog))
        .route("/skills/{namespace}/{name}", get(skill))
        .route("/skills/{namespace}/{name}/diff", get(diff))
        .route("/packs", get(packs_list))
        .route("/packs/{namespace}/{name}", get(pack))
        .route(
            "/skills/{namespace}/{name}/{version}/files/{*path}",
            get(file),
        )
        .with_state(state)
}

/// The one script of the pages: copy buttons.
pub(crate) const SCRIPT: &str = "document.querySelectorAll('button[data-copy]').forEach(function (b) {
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

/// A page as a response with its security headers; its policy allows https images when
/// `remote_images`.
fn page(template: &impl Template, remote_images: bool) -> Response {
    match render(template) {
        Some(html) => html_page(html, remote_images),
        None => not_rendered(),
    }
}

/// A page's HTML (`None`, logged, when it did not render).
fn render(template: &impl Template) -> Option<Bytes> {
    template
        .render()
        .map_err(|e| tracing::error!(error = %e, "a web page did not render"))
        .ok()
        .map(Bytes::from)
}

fn not_rendered() -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, "the page did not render").into_response()
}

/// Rendered `html` as a response with the security headers of [`page`].
fn html_page(html: Bytes, remote_images: bool) -> Response {
    let mut response = Html(html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(content_security_policy(remote_images)),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// An error as a page: the status and message of its row in the error-code table.
fn error_response(error: &Error) -> Response {
    let status = StatusCode::from_u16(error.code().http_status())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let view = views::ErrorPage {
        title: "Error".to_owned(),
        status: status.as_u16(),
        message: error.public_message(),
    };
    (status, page(&view, false)).into_response()
}

#[derive(Deserialize, Serialize, Default)]
struct CatalogQuery {
    q: Option<String>,
    namespace: Option<String>,
    cursor: Option<String>,
    /// `name` (default) or `recent`.
    sort: Option<String>,
    /// A verdict (`clean`, `flagged`, `blocked`, `unscanned`).
    verdict: Option<String>,
    /// `upload`, `git` or `mcp`.
    source: Option<String>,
    /// The position of the page's first skill (shown, never trusted for anything else).
    start: Option<u64>,
}

/// The catalog. Browse pages are kept as served, by viewer and query (`AppState::catalog_pages`:
/// its parameters as read, so parameters the page does not read make no page of their own), and served again while the epoch of answers about what is current
/// they were made in is the registry's and they are younger than the current TTL, as
/// `skills/list` pages are: the catalog's first page is made once per change (and per TTL: the
/// cards' read counts move without a change). Search results are not kept: the index follows a
/// change a moment after the epoch does.
async fn catalog(
    State(s): State<AppState>,
    reader: Reader,
    Query(q): Query<CatalogQuery>,
) -> Response {
    // The parameters as read (infallible for these fields; a page whose key cannot be made is
    // not kept).
    let query = serde_json::to_string(&q).ok();
    let kept = q.q.as_deref().is_none_or(|q| q.trim().is_empty()) && query.is_some();
    // Read before the page is made: a change while it is made leaves it stale at once.
    let stamp = s.registry.current_stamp();
    let key = (reader.visibility, query.unwrap_or_default());
    if kept
        && let Some(served) = s.catalog_pages.get(&key)
        && served.fresh(&stamp)
    {
        return html_page(served.value.clone(), false);
    }
    let view = match catalog::catalog_page(&s.registry, &key.0, &q).await {
        Ok(view) => view,
        Err(e) => return error_response(&e),
    };
    match render(&view) {
        Some(html) => {
            if kept {
                s.catalog_pages
                    .insert(key, Arc::new(Kept::new(stamp, html.clone())));
            }
            html_page(html, false)
        }
        None => not_rendered(),
    }
}

async fn packs_list(State(s): State<AppState>, reader: Reader) -> Response {
    match s.registry.packs().list(&reader.visibility, None).await {
        Ok(found) => page(&packs::packs_page(&found), false),
        Err(e) => error_response(&e),
    }
}

async fn pack(
    State(s): State<AppState>,
    reader: Reader,
    Path((ns, name)): Path<(String, String)>,
    Query(q): Query<SkillQuery>,
    headers: axum::http::HeaderMap,
) -> Response {
    let base = super::app::base_url(&headers);
    let load = async {
        let skill = SkillRef::parse(&ns, &name)?;
        let pack = crate::core::pack::PackRef::new(skill.namespace, skill.name);
        let versions = s
            .registry
            .packs()
            .versions(&reader.visibility, &pack)
            .await?;
        let shown = match q.version.as_deref() {
            Some(v) => {
                let v = SkillVersion::parse(v)?;
                versions
                    .iter()
                    .find(|p| p.version == v)
                    .cloned()
                    .ok_or_else(|| Error::NotFound(NotFound::Pack(format!("{pack}@{v}"))))?
            }
            None => versions[0].clone(),
        };
        Ok::<_, Error>(packs::pack_page(&shown, &versions, &base))
    };
    match load.await {
        Ok(view) => page(&view, false),
        Err(e) => error_response(&e),
    }
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
    let base = super::app::base_url(&headers);
    match load_skill(&s, &reader.visibility, &ns, &name, q.version.as_deref()).await {
        Ok(loaded) => page(
            &skill::skill_page(&loaded, &base),
            s.config.web_remote_images,
        ),
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
    let skill_md = rendered(
        state,
        viewer,
        &target,
        SKILL_MD,
        &skill_md,
        Some(&manifest.files),
    )
    .await?;
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

/// A Markdown file of a version rendered to safe HTML, its relative links pointed into the
/// version (`files`: its files, read when not given). Rendering a large file is CPU work: once
/// per content and place, off the async workers.
async fn rendered(
    state: &AppState,
    viewer: &Visibility,
    target: &VersionRef,
    path: &str,
    file: &FileContent,
    files: Option<&[FileRecord]>,
) -> Result<Arc<String>> {
    let key = (file.digest, views::file_href(target, path));
    if let Some(html) = state.rendered.get(&key) {
        return Ok(html);
    }
    let read;
    let files = match files {
        Some(files) => files,
        None => {
            read = state
                .registry
                .reads()
                .version_detail(viewer, target)
                .await?;
            &read.files
        }
    };
    let files: HashSet<String> = files.iter().map(|f| f.path.clone()).collect();
    let remote_images = state.config.web_remote_images;
    let (bytes, target, path) = (file.bytes.clone(), target.clone(), path.to_owned());
    let html = Arc::new(
        state
            .registry
            .heavy(move || {
                let exists = |p: &str| files.contains(p);
                let links = markdown::Links {
                    version: &target,
                    path: &path,
                    exists: &exists,
                };
                render_markdown(&String::from_utf8_lossy(&bytes), remote_images, &links)
            })
            .await?,
    );
    state.rendered.insert(key, html.clone());
    Ok(html)
}

#[derive(Deserialize)]
struct FileQuery {
    /// `rendered` shows a Markdown file as HTML; anything else, its numbered lines.
    view: Option<String>,
}

/// One file of a version as text with a numbered anchor per line (`#L12`), which findings
/// link to, or a Markdown file rendered; a file that is not text is offered as a download.
async fn file(
    State(s): State<AppState>,
    reader: Reader,
    Path((ns, name, version, path)): Path<(String, String, String, String)>,
    Query(q): Query<FileQuery>,
) -> Response {
    let loaded = async {
        let target = SkillRef::parse(&ns, &name)?.at(SkillVersion::parse(&version)?);
        let file = s
            .registry
            .reads()
            .version_file(&reader.visibility, &target, &path, None)
            .await?;
        let markdown = views::is_markdown(&path) && file.text().is_some();
        let rendered = match q.view.as_deref() {
            Some("rendered") if markdown => {
                Some(rendered(&s, &reader.visibility, &target, &path, &file, None).await?)
            }
            _ => None,
        };
        Ok::<_, Error>(views::file_page(&target, &path, &file, rendered))
    }
    .await;
    match loaded {
        Ok(view) => page(&view, s.config.web_remote_images),
        Err(e) => error_response(&e),
    }
}

#[derive(Deserialize)]
struct DiffQuery {
    from: Option<String>,
    to: Option<String>,
}

/// What changed between two versions of a skill: files added, removed and changed, with a
/// line diff of each changed text file.
async fn diff(
    State(s): State<AppState>,
    reader: Reader,
    Path((ns, name)): Path<(String, String)>,
    Query(q): Query<DiffQuery>,
) -> Response {
    match diff::diff_page(&s.registry, &reader.visibility, &ns, &name, &q).await {
        Ok(view) => page(&view, false),
        Err(e) => error_response(&e),
    }
}
