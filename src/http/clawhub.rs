//! A read-only ClawHub-compatible API under `/api/v1`, for the `clawhub` CLI (0.23.3) pointed at
//! this registry (`clawhub --registry https://registry …`, or `--site` through
//! `/.well-known/clawhub.json`): search, list, inspect, install, update and verify.
//!
//! ClawHub names a skill by a bare slug, optionally with its owner: here the owner
//! (`ownerHandle`) is the namespace and the slug the skill's name. A slug without an owner that
//! more than one namespace has answers 409 with ClawHub's `AMBIGUOUS_SKILL_SLUG` body, listing
//! each candidate; the client then shows how to install each one.
//!
//! Every answer is built from one registry read the REST API makes too (so visibility, review,
//! yanks and revocations apply exactly as there), and errors map through the error-code table:
//! the row's status with a plain-text body, `Skill not found` for an unknown or hidden skill
//! (the text the client recognises). Downloads and installs are the registry's usage counts
//! (`shapes::Stats`). Where ClawHub has data skillreg keeps none (stars, current installs,
//! changelogs) the answer says nothing rather than something invented:
//! `null` counts and empty changelogs. `license` is `"MIT-0"` only when the frontmatter says
//! exactly that, else `null` (ClawHub's client accepts no other value). The scan verdict maps
//! onto ClawHub's moderation and security fields: clean → `clean`, flagged → `suspicious`,
//! blocked → `malicious` (the client refuses to install it, and the download is refused here
//! too), unscanned → `pending`. Revoked versions are never listed nor served.
//!
//! Each answer is a type in `shapes`, field for field what the client reads; one example of
//! each is in `tests/snapshots/foreign-shapes.json`.
//!
//! `resolve` matches the client's fingerprint of a skill folder (`core::clawhub`) against each
//! version's, computed from the stored file digests. Publishing through ClawHub's upload flow
//! is not offered: publish with `skillreg publish` or `PUT /v1/skills/…`.

use std::collections::HashMap;

use axum::Router;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde::Deserialize;
use serde_json::Value;

use super::app::{AppState, base_url};
use super::auth::{Caller, Reader};
use crate::core::archive::Format;
use crate::core::clawhub::fingerprint;
use crate::core::refs::parse_name;
use crate::core::scan::{Finding, Severity, Verdict, rule};
use crate::core::usage::{Kind, Totals};
use crate::core::{
    AccessError, Code, Principal, Scope, SkillRef, SkillVersion, Unauthenticated, VersionRef, mime,
};
use crate::error::Error;
use crate::registry::{SkillDetail, SkillView, VersionDetail, VersionView};

mod shapes;

#[cfg(test)]
pub(crate) use shapes::examples;
use shapes::{
    Ack, AmbiguousSlug, ArtifactFile, Card, Evidence, File, Handle, Install, InstallArchive, Item,
    LatestVersion, Moderation, ModerationAnswer, NO_CHANGELOG, NoInstall, Owner as OwnerShape,
    Resolve, SearchResult, SearchResults, Security, SkillAnswer, SkillList, SkillName, SkillShape,
    Stats, Tags, User, Verify, VerifyArtifact, VerifyProvenance, VerifySecurity, VerifySignature,
    Version, VersionAnswer, VersionFiles, VersionList, VersionName, WellKnown, Whoami,
};

pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/.well-known/clawhub.json", get(well_known))
        .route("/.well-known/clawdhub.json", get(well_known))
        .route("/api/v1/search", get(search))
        .route("/api/v1/skills", get(list))
        .route("/api/v1/skills/{slug}", get(skill))
        .route("/api/v1/skills/{slug}/versions", get(versions))
        .route("/api/v1/skills/{slug}/versions/{version}", get(version))
        .route("/api/v1/skills/{slug}/file", get(file))
        .route("/api/v1/skills/{slug}/moderation", get(moderation))
        .route("/api/v1/skills/{slug}/install", get(install))
        .route("/api/v1/skills/{slug}/verify", get(verify))
        .route("/api/v1/resolve", get(resolve))
        .route("/api/v1/download", get(download))
        .route("/api/v1/whoami", get(whoami))
        .route("/api/cli/telemetry/install", post(telemetry))
        .route("/api/v1/{*rest}", any(unsupported))
        .with_state(state)
}

// ---- errors -------------------------------------------------------------------------------------

/// An error as ClawHub's client reads one: the code table's status, a plain-text body (or the
/// `AMBIGUOUS_SKILL_SLUG` JSON body).
enum ClawError {
    Registry(Error),
    /// A slug or owner that cannot name any skill.
    UnknownSlug,
    /// A version that cannot name any version (not semver): not found, without inventing which
    /// version was asked for.
    UnknownVersion,
}

impl<E: Into<Error>> From<E> for ClawError {
    fn from(e: E) -> Self {
        Self::Registry(e.into())
    }
}

impl IntoResponse for ClawError {
    fn into_response(self) -> Response {
        let code = match &self {
            Self::Registry(e) => e.code(),
            Self::UnknownSlug => Code::SkillNotFound,
            Self::UnknownVersion => Code::VersionNotFound,
        };
        crate::metrics::error(code.as_str());
        let status =
            StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = match self {
            Self::Registry(Error::AmbiguousSkill { name, matches }) => {
                let message = format!(
                    "More than one owner has a skill named \"{name}\": name one as <owner>/{name}."
                );
                let matches = matches
                    .iter()
                    .map(|m| shapes::SlugMatch {
                        owner_handle: m.namespace.to_string(),
                        slug: m.name.to_string(),
                        reference: format!("{}/{}", m.namespace, m.name),
                        url: format!("/skills/{}/{}", m.namespace, m.name),
                    })
                    .collect();
                let body = AmbiguousSlug {
                    code: "AMBIGUOUS_SKILL_SLUG",
                    message,
                    matches,
                };
                (status, axum::Json(body)).into_response()
            }
            other => {
                let text = match (&other, code) {
                    (_, Code::SkillNotFound) | (Self::UnknownSlug, _) => {
                        "Skill not found".to_owned()
                    }
                    (_, Code::VersionNotFound) | (Self::UnknownVersion, _) => {
                        "Version not found".to_owned()
                    }
                    (_, Code::FileNotFound) => "File not found".to_owned(),
                    // The client shows its own advice for a bare 401.
                    (_, Code::Unauthorized) => "Unauthorized".to_owned(),
                    (Self::Registry(e), _) => e.public_message(),
                };
                (
                    status,
                    [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                    text,
                )
                    .into_response()
            }
        };
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

type ClawResult<T> = Result<T, ClawError>;

/// [`Reader`], its refusal answered the way ClawHub's client reads errors.
struct Viewer(Reader);

impl FromRequestParts<AppState> for Viewer {
    type Rejection = ClawError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ClawResult<Self> {
        Reader::from_request_parts(parts, state)
            .await
            .map(Self)
            .map_err(|e| ClawError::Registry(e.0))
    }
}

// ---- naming a skill -------------------------------------------------------------------------------

/// `ownerHandle`, as every skill-scoped request may carry it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Owner {
    owner_handle: Option<String>,
}

/// The skill a slug names for `viewer`: in the owner's namespace when one is given, else the one
/// namespace that has a skill of that name.
async fn find(
    state: &AppState,
    viewer: &Reader,
    slug: &str,
    owner: Option<&str>,
) -> ClawResult<SkillRef> {
    match owner.map(str::trim).filter(|o| !o.is_empty()) {
        Some(owner) => {
            SkillRef::parse(owner.trim_start_matches('@'), slug).map_err(|_| ClawError::UnknownSlug)
        }
        None => {
            let name = parse_name(slug).map_err(|_| ClawError::UnknownSlug)?;
            Ok(state
                .registry
                .reads()
                .skill_named(&viewer.visibility, &name)
                .await?
                .skill)
        }
    }
}

/// A version of `detail` named on the wire, or its current one.
fn pick(detail: &SkillDetail, version: Option<&str>) -> ClawResult<Option<SkillVersion>> {
    match version.map(str::trim).filter(|v| !v.is_empty()) {
        Some(v) => Ok(Some(
            SkillVersion::parse(v).map_err(|_| ClawError::UnknownVersion)?,
        )),
        None => Ok(detail.skill.current_version.clone()),
    }
}

/// The versions ClawHub may see: every one the caller sees except revoked ones, newest first.
fn served(detail: &SkillDetail) -> impl Iterator<Item = &VersionView> {
    detail.versions.iter().filter(|v| v.revoked_at.is_none())
}

// ---- shapes ---------------------------------------------------------------------------------------

/// `"MIT-0"` when the frontmatter's license is exactly that; ClawHub accepts nothing else.
fn license(frontmatter: &serde_json::Map<String, Value>) -> Option<&'static str> {
    match frontmatter.get("license").and_then(Value::as_str) {
        Some("MIT-0") => Some("MIT-0"),
        _ => None,
    }
}

fn description(frontmatter: &serde_json::Map<String, Value>) -> Option<String> {
    frontmatter
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// ClawHub's `Version` of one stored version.
fn version_shape(summary: &VersionView, license: Option<&'static str>) -> Version {
    Version {
        version: summary.version.version.to_string(),
        created_at: summary.published_at.epoch_millis(),
        // skillreg keeps no changelog.
        changelog: NO_CHANGELOG,
        license,
    }
}

fn security_status(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Clean => "clean",
        Verdict::Flagged => "suspicious",
        Verdict::Blocked => "malicious",
        Verdict::Unscanned => "pending",
    }
}

/// The finding rules, each once, in the order found.
fn reason_codes(findings: &[Finding]) -> Vec<String> {
    let mut codes: Vec<String> = Vec::new();
    for f in findings {
        if !codes.contains(&f.rule) {
            codes.push(f.rule.clone());
        }
    }
    codes
}

/// ClawHub's moderation summary of a version's scan; `summary` says what the verdict is.
fn moderation_shape(detail: &VersionDetail) -> Moderation {
    let verdict = detail.version.scan.verdict;
    Moderation {
        is_suspicious: verdict == Verdict::Flagged,
        is_malware_blocked: verdict == Verdict::Blocked,
        reason_codes: reason_codes(&detail.findings),
        summary: match verdict {
            Verdict::Unscanned => "not scanned by this registry".to_owned(),
            v => format!("skillreg scan: {v}, {} finding(s)", detail.findings.len()),
        },
        verdict: match verdict {
            Verdict::Unscanned => None,
            Verdict::Flagged => Some("suspicious"),
            Verdict::Blocked => Some("malicious"),
            Verdict::Clean => Some("clean"),
        },
        evidence: None,
    }
}

fn owner_shape(skill: &SkillRef) -> OwnerShape {
    OwnerShape {
        handle: skill.namespace.to_string(),
        display_name: skill.namespace.to_string(),
    }
}

fn tags(current: Option<&SkillVersion>) -> Tags {
    Tags {
        latest: current.map(ToString::to_string),
    }
}

/// A catalog item as ClawHub's `SkillSummary` with its latest version, and its usage totals
/// when reads are counted.
fn item_shape(item: &SkillView, usage: Option<&HashMap<SkillRef, Totals>>) -> Item {
    Item {
        slug: item.skill.name.to_string(),
        display_name: item.skill.name.to_string(),
        summary: item.description.clone(),
        owner_handle: item.skill.namespace.to_string(),
        tags: tags(item.current_version.as_ref()),
        stats: Stats::counting(
            None,
            usage.map(|u| u.get(&item.skill).copied().unwrap_or_default()),
        ),
        created_at: item.created_at.epoch_millis(),
        updated_at: item
            .last_published_at
            .unwrap_or(item.created_at)
            .epoch_millis(),
        latest_version: item.current_version.as_ref().map(|v| LatestVersion {
            version: v.to_string(),
            created_at: item
                .current_published_at
                .unwrap_or(item.created_at)
                .epoch_millis(),
            changelog: NO_CHANGELOG,
        }),
    }
}

/// The usage totals of `items` when reads are counted (`None`: they are not, and ClawHub's
/// counts are `null`).
async fn usage_totals(
    s: &AppState,
    items: &[SkillView],
) -> ClawResult<Option<HashMap<SkillRef, Totals>>> {
    if !s.registry.usage().counting() {
        return Ok(None);
    }
    let skills: Vec<SkillRef> = items.iter().map(|i| i.skill.clone()).collect();
    Ok(Some(s.registry.reads().usage_totals(&skills).await?))
}

// ---- handlers -------------------------------------------------------------------------------------

/// `--site <url>`: where the API is (this origin).
async fn well_known(headers: HeaderMap) -> axum::Json<WellKnown> {
    axum::Json(WellKnown {
        api_base: base_url(&headers),
    })
}

#[derive(Deserialize)]
struct SearchQuery {
    q: Option<String>,
    limit: Option<usize>,
    mode: Option<String>,
}

/// Most hits one search returns.
const MAX_SEARCH_HITS: usize = 100;

async fn search(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Query(q): Query<SearchQuery>,
) -> ClawResult<axum::Json<SearchResults>> {
    let query = q.q.unwrap_or_default();
    if query.trim().is_empty() {
        return Ok(axum::Json(SearchResults { results: vec![] }));
    }
    let limit = q.limit.unwrap_or(25).clamp(1, MAX_SEARCH_HITS);
    let exact = q.mode.as_deref() == Some("exact");
    let hits = s
        .registry
        .reads()
        .search(&reader.visibility, &query, None, limit)
        .await?;
    let results = hits
        .into_iter()
        // Only skills with a current version can be installed.
        .filter(|h| h.status != crate::core::Status::Yanked)
        .filter(|h| !exact || h.skill.name.as_str() == query.trim())
        .map(|h| SearchResult {
            slug: h.skill.name.to_string(),
            display_name: h.skill.name.to_string(),
            summary: h.description,
            version: h.version.to_string(),
            score: f64::from(h.score),
            owner_handle: h.skill.namespace.to_string(),
            owner: Handle {
                handle: h.skill.namespace.to_string(),
            },
        })
        .collect();
    Ok(axum::Json(SearchResults { results }))
}

#[derive(Deserialize)]
struct ListQuery {
    prefix: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

/// `search --prefix` and `explore`: skills in (namespace, name) order, or those whose name starts
/// with `prefix` in (name, namespace) order. ClawHub's `sort` (downloads, stars, trending…) has
/// no data behind it here and is ignored.
async fn list(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Query(q): Query<ListQuery>,
) -> ClawResult<axum::Json<SkillList>> {
    let limit = q.limit.unwrap_or(25).clamp(1, 200);
    let cursor = q.cursor.as_deref().filter(|c| !c.is_empty());
    let page = match q.prefix.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        Some(prefix) => {
            s.registry
                .reads()
                .catalog_by_prefix(&reader.visibility, prefix, cursor, limit)
                .await?
        }
        None => {
            s.registry
                .reads()
                .catalog(&reader.visibility, None, cursor, limit)
                .await?
        }
    };
    let usage = usage_totals(&s, &page.items).await?;
    Ok(axum::Json(SkillList {
        items: page
            .items
            .iter()
            .map(|item| item_shape(item, usage.as_ref()))
            .collect(),
        next_cursor: page.next_cursor,
    }))
}

/// `inspect` and the first step of `install` and `update`.
async fn skill(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Path(slug): Path<String>,
    Query(owner): Query<Owner>,
) -> ClawResult<axum::Json<SkillAnswer>> {
    let skill = find(&s, &reader, &slug, owner.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let current = match &detail.skill.current_version {
        Some(v) => Some(
            s.registry
                .reads()
                .version_detail(&reader.visibility, &skill.clone().at(v.clone()))
                .await?,
        ),
        None => None,
    };
    let updated = served(&detail)
        .map(|v| v.published_at)
        .max()
        .unwrap_or(detail.skill.created_at)
        .epoch_millis();
    Ok(axum::Json(SkillAnswer {
        skill: SkillShape {
            slug: skill.name.to_string(),
            display_name: skill.name.to_string(),
            summary: current.as_ref().and_then(|c| description(&c.frontmatter)),
            tags: tags(detail.skill.current_version.as_ref()),
            stats: Stats::counting(
                Some(served(&detail).count()),
                usage_totals(&s, std::slice::from_ref(&detail.skill))
                    .await?
                    .map(|u| u.get(&skill).copied().unwrap_or_default()),
            ),
            created_at: detail.skill.created_at.epoch_millis(),
            updated_at: updated,
            deprecated: detail.skill.deprecation.clone(),
        },
        latest_version: current
            .as_ref()
            .map(|c| version_shape(&c.version, license(&c.frontmatter))),
        owner: owner_shape(&skill),
        moderation: current.as_ref().map(moderation_shape),
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VersionsQuery {
    owner_handle: Option<String>,
    limit: Option<usize>,
    /// The last version of the previous page.
    cursor: Option<String>,
}

/// `inspect --versions`: newest first (semver precedence).
async fn versions(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Path(slug): Path<String>,
    Query(q): Query<VersionsQuery>,
) -> ClawResult<axum::Json<VersionList>> {
    let skill = find(&s, &reader, &slug, q.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let limit = q.limit.unwrap_or(25).clamp(1, 200);
    let after = q.cursor.as_deref().filter(|c| !c.is_empty());
    let mut rest: Vec<&VersionView> = served(&detail)
        .skip_while(|v| after.is_some_and(|a| v.version.version.to_string() != a))
        .skip(usize::from(after.is_some()))
        .collect();
    let more = rest.len() > limit;
    rest.truncate(limit);
    let next = more
        .then(|| rest.last().map(|v| v.version.version.to_string()))
        .flatten();
    Ok(axum::Json(VersionList {
        items: rest.iter().map(|v| version_shape(v, None)).collect(),
        next_cursor: next,
    }))
}

/// One version, revoked ones refused as everywhere their content is asked for.
async fn served_version(
    state: &AppState,
    reader: &Reader,
    version: &VersionRef,
) -> ClawResult<VersionDetail> {
    let detail = state
        .registry
        .reads()
        .version_detail(&reader.visibility, version)
        .await?;
    if detail.version.revoked_at.is_some() {
        return Err(Error::Revoked {
            version: version.clone(),
            reason: detail.version.revoke_reason.unwrap_or_default(),
        }
        .into());
    }
    Ok(detail)
}

fn security_shape(detail: &VersionDetail) -> Security {
    Security {
        status: security_status(detail.version.scan.verdict),
        has_warnings: !detail.findings.is_empty(),
        verdict: detail.version.scan.verdict.as_str(),
        findings: detail.findings.len(),
    }
}

/// `inspect --version`, `inspect --files`, and `install --version`'s check.
async fn version(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Path((slug, version)): Path<(String, String)>,
    Query(owner): Query<Owner>,
) -> ClawResult<axum::Json<VersionAnswer>> {
    let skill = find(&s, &reader, &slug, owner.owner_handle.as_deref()).await?;
    let version = SkillVersion::parse(&version).map_err(|_| ClawError::UnknownVersion)?;
    let detail = served_version(&s, &reader, &skill.clone().at(version)).await?;
    let files = detail
        .files
        .iter()
        .map(|f| File {
            path: f.path.clone(),
            size: f.size,
            sha256: f.digest.hex(),
            // By name only: the bytes are not read for a listing.
            content_type: mime::for_file(&f.path, || false),
        })
        .collect();
    Ok(axum::Json(VersionAnswer {
        version: VersionFiles {
            version: version_shape(&detail.version, license(&detail.frontmatter)),
            files,
            security: security_shape(&detail),
            yanked: detail.version.yank_reason.clone(),
        },
        skill: SkillName {
            slug: skill.name.to_string(),
            display_name: skill.name.to_string(),
        },
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileQuery {
    owner_handle: Option<String>,
    path: String,
    version: Option<String>,
    tag: Option<String>,
}

/// The one tag skillreg has: `latest`, the current version.
fn check_tag(tag: Option<&str>) -> ClawResult<()> {
    match tag {
        None | Some("latest") => Ok(()),
        Some(other) => Err(Error::InvalidRequest(format!(
            "unknown tag {:?}: this registry has only `latest`",
            other.chars().take(64).collect::<String>()
        ))
        .into()),
    }
}

/// `inspect --file`: the exact stored bytes.
async fn file(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Path(slug): Path<String>,
    Query(q): Query<FileQuery>,
) -> ClawResult<Response> {
    check_tag(q.tag.as_deref())?;
    let skill = find(&s, &reader, &slug, q.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let version = pick(&detail, q.version.as_deref())?.ok_or_else(no_current(&skill))?;
    let content = s
        .registry
        .reads()
        .version_file(&reader.visibility, &skill.at(version), &q.path, None)
        .await?;
    let mut response = (
        [(header::CONTENT_TYPE, content.mime_type.clone())],
        content.bytes.as_ref().clone(),
    )
        .into_response();
    super::app::stored_bytes_headers(response.headers_mut(), &q.path, &content.mime_type, false);
    Ok(response)
}

/// The error for a skill every version of which is yanked, asked for its current version.
fn no_current(skill: &SkillRef) -> impl FnOnce() -> ClawError + '_ {
    move || {
        Error::InvalidRequest(format!(
            "every version of {skill} is yanked: name one with --version"
        ))
        .into()
    }
}

/// `inspect` (logged in): the current version's findings as ClawHub's moderation evidence;
/// `null` when it has no current version or was never scanned (there is no verdict to give).
async fn moderation(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Path(slug): Path<String>,
    Query(owner): Query<Owner>,
) -> ClawResult<axum::Json<ModerationAnswer>> {
    let skill = find(&s, &reader, &slug, owner.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let none = || axum::Json(ModerationAnswer { moderation: None });
    let Some(current) = detail.skill.current_version else {
        return Ok(none());
    };
    let version = s
        .registry
        .reads()
        .version_detail(&reader.visibility, &skill.at(current))
        .await?;
    if version.version.scan.verdict == Verdict::Unscanned {
        return Ok(none());
    }
    let mut m = moderation_shape(&version);
    m.evidence = Some(
        version
            .findings
            .iter()
            .map(|f| Evidence {
                code: f.rule.clone(),
                severity: match f.severity {
                    Severity::Info | Severity::Low => "info",
                    Severity::Medium | Severity::High => "warn",
                    Severity::Critical => "critical",
                },
                file: f.file.clone(),
                line: f.line,
                message: rule(&f.rule).map_or("", |r| r.explanation),
                evidence: f.excerpt.clone(),
            })
            .collect(),
    );
    Ok(axum::Json(ModerationAnswer {
        moderation: Some(m),
    }))
}

/// What `install` asks when a skill has no latest version: every version is yanked, so there is
/// nothing to install without naming one.
async fn install(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Path(slug): Path<String>,
    Query(owner): Query<Owner>,
) -> ClawResult<Response> {
    let skill = find(&s, &reader, &slug, owner.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let Some(current) = detail.skill.current_version else {
        let body = NoInstall {
            ok: false,
            slug: skill.name.to_string(),
            reason: "archive_version_missing",
            message: format!("every version of {skill} is yanked: install one with --version"),
            status: StatusCode::GONE.as_u16(),
        };
        return Ok((StatusCode::GONE, axum::Json(body)).into_response());
    };
    let version = current.to_string();
    let download = format!(
        "/api/v1/download?slug={}&ownerHandle={}&version={version}",
        skill.name, skill.namespace,
    );
    Ok(axum::Json(Install {
        ok: true,
        slug: skill.name.to_string(),
        install_kind: "archive",
        archive: InstallArchive {
            version,
            download_url: download,
        },
    })
    .into_response())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResolveQuery {
    slug: String,
    owner_handle: Option<String>,
    hash: Option<String>,
}

/// Versions whose fingerprints `resolve` compares, newest first.
const MAX_RESOLVE_VERSIONS: usize = 256;

/// `update` and `publish`: which version a local folder is (by its fingerprint), and the latest.
async fn resolve(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Query(q): Query<ResolveQuery>,
) -> ClawResult<axum::Json<Resolve>> {
    let skill = find(&s, &reader, &q.slug, q.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let hash = q.hash.as_deref().map(|h| h.trim().to_ascii_lowercase());
    let mut matched = None;
    if let Some(hash) = hash.filter(|h| !h.is_empty()) {
        for v in served(&detail).take(MAX_RESOLVE_VERSIONS) {
            let version = s
                .registry
                .reads()
                .version_detail(&reader.visibility, &v.version)
                .await?;
            let print = fingerprint(version.files.iter().map(|f| (f.path.as_str(), &f.digest)));
            if print == hash {
                matched = Some(v.version.version.to_string());
                break;
            }
        }
    }
    Ok(axum::Json(Resolve {
        matched: matched.map(|version| VersionName { version }),
        latest_version: detail.skill.current_version.map(|v| VersionName {
            version: v.to_string(),
        }),
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DownloadQuery {
    slug: String,
    owner_handle: Option<String>,
    version: Option<String>,
    tag: Option<String>,
}

/// `install` and `update`: the version as a deterministic zip, SKILL.md at its root. A version
/// the scan policy blocks is refused (ClawHub serves no malware-blocked artifact).
async fn download(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    Query(q): Query<DownloadQuery>,
) -> ClawResult<Response> {
    check_tag(q.tag.as_deref())?;
    let skill = find(&s, &reader, &q.slug, q.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let version = pick(&detail, q.version.as_deref())?.ok_or_else(no_current(&skill))?;
    let version = skill.at(version);
    let stored = served_version(&s, &reader, &version).await?;
    if stored.version.scan.verdict == Verdict::Blocked {
        return Err(Error::Blocked {
            version,
            findings: stored.findings,
        }
        .into());
    }
    let zip = s
        .registry
        .reads()
        .export_as(
            &reader.visibility,
            &version,
            Format::Zip,
            Some(Kind::ClawhubInstall),
        )
        .await?;
    let name = format!("{}-{}.zip", version.name(), version.version);
    let mut response = (
        [(header::CONTENT_TYPE, "application/zip")],
        zip.as_ref().clone(),
    )
        .into_response();
    super::app::stored_bytes_headers(response.headers_mut(), &name, "application/zip", true);
    Ok(response)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyQuery {
    owner_handle: Option<String>,
    version: Option<String>,
    tag: Option<String>,
}

/// `skill verify`: `ok` when every file of the version reads back with its stored SHA-256 and
/// the version is neither revoked nor blocked by the scan policy; `reasons` says what was
/// checked and what failed.
async fn verify(
    State(s): State<AppState>,
    Viewer(reader): Viewer,
    headers: HeaderMap,
    Path(slug): Path<String>,
    Query(q): Query<VerifyQuery>,
) -> ClawResult<axum::Json<Verify>> {
    check_tag(q.tag.as_deref())?;
    let skill = find(&s, &reader, &slug, q.owner_handle.as_deref()).await?;
    let detail = s
        .registry
        .reads()
        .skill_detail(&reader.visibility, &skill)
        .await?;
    let resolved_from = if q.version.is_some() {
        "version"
    } else if q.tag.is_some() {
        "tag"
    } else {
        "latest"
    };
    let version = pick(&detail, q.version.as_deref())?.ok_or_else(no_current(&skill))?;
    let version = skill.clone().at(version);
    // Revoked versions are described here (why they fail), never served.
    let stored = s
        .registry
        .reads()
        .version_detail(&reader.visibility, &version)
        .await?;
    let summary = &stored.version;
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    if let Some(revoked) = &summary.revoked_at {
        failures.push(format!(
            "revoked at {revoked}: {}",
            summary.revoke_reason.as_deref().unwrap_or("")
        ));
    } else {
        // Reading a file verifies its bytes against the digest they are stored under.
        let mut intact = 0;
        for f in &stored.files {
            match s
                .registry
                .reads()
                .version_file(&reader.visibility, &version, &f.path, None)
                .await
            {
                Ok(content) if content.digest == f.digest => intact += 1,
                Ok(_) => failures.push(format!("{}: not the stored digest", f.path)),
                Err(e) if e.code() == Code::IntegrityError => {
                    failures.push(format!("{}: its stored bytes fail their SHA-256", f.path));
                }
                Err(e) => return Err(e.into()),
            }
        }
        if failures.is_empty() {
            notes.push(format!(
                "{intact} file(s) match their stored SHA-256 digests"
            ));
        }
    }
    let verdict = summary.scan.verdict;
    match verdict {
        Verdict::Blocked => failures.push(format!(
            "blocked by the scan policy ({} finding(s))",
            stored.findings.len()
        )),
        Verdict::Flagged => notes.push(format!(
            "scan: flagged ({} finding(s): {})",
            stored.findings.len(),
            reason_codes(&stored.findings).join(", ")
        )),
        Verdict::Clean => notes.push("scan: clean".to_owned()),
        Verdict::Unscanned => notes.push("scan: not scanned".to_owned()),
    }
    if let Some(reason) = &summary.yank_reason {
        notes.push(format!("yanked: {reason}"));
    }
    let signed = stored.signatures.iter().filter(|s| s.verified).count();
    if signed > 0 {
        notes.push(format!(
            "signed: {signed} verified signature(s) (Model Signing)"
        ));
    }
    let ok = failures.is_empty();
    let base = base_url(&headers);
    let page = format!("{base}/skills/{}/{}", skill.namespace, skill.name);
    Ok(axum::Json(Verify {
        schema: "clawhub.skill.verify.v1",
        ok,
        decision: if ok { "pass" } else { "fail" },
        reasons: if ok { notes } else { failures },
        slug: skill.name.to_string(),
        display_name: skill.name.to_string(),
        page_url: page,
        publisher_handle: skill.namespace.to_string(),
        publisher_display_name: skill.namespace.to_string(),
        publisher_profile_url: None,
        version: version.version.to_string(),
        resolved_from,
        tag: q.tag,
        created_at: summary.published_at.epoch_millis(),
        card: Card { available: false },
        artifact: VerifyArtifact {
            content_digest: summary.content_digest.to_string(),
            file_count: summary.file_count,
            total_size: summary.total_size,
            files: stored
                .files
                .iter()
                .map(|f| ArtifactFile {
                    path: f.path.clone(),
                    size: f.size,
                    sha256: f.digest.hex(),
                })
                .collect(),
        },
        provenance: VerifyProvenance {
            registry: "skillreg",
            published_by: summary.published_by.clone(),
            published_at: summary.published_at,
            ci: stored.publisher.clone(),
        },
        security: VerifySecurity {
            status: security_status(verdict),
            verdict: verdict.as_str(),
            reason_codes: reason_codes(&stored.findings),
        },
        signature: (!stored.signatures.is_empty()).then(|| VerifySignature {
            format: "model-signing/v1.0",
            signers: stored.signatures.clone(),
            bundle_url: format!(
                "{base}/v1/skills/{}/{}/{}/signature",
                skill.namespace, skill.name, version.version
            ),
        }),
    }))
}

/// `whoami` and `login --token`: the token's namespace (its handle, when it is scoped to exactly
/// one; ClawHub publishes there by default) and its id.
async fn whoami(Caller(caller): Caller) -> ClawResult<axum::Json<Whoami>> {
    let user = match caller {
        Principal::Anonymous => {
            return Err(AccessError::Unauthorized(Unauthenticated::Missing).into());
        }
        Principal::Admin => User {
            handle: None,
            display_name: "admin".to_owned(),
            role: "admin",
        },
        Principal::Token { id, scope, .. } => User {
            handle: match &scope {
                Scope::Namespaces(one) if one.len() == 1 => Some(one[0].to_string()),
                _ => None,
            },
            display_name: id,
            role: "user",
        },
    };
    Ok(axum::Json(Whoami { user }))
}

/// The client reports installs when logged in; nothing is stored.
async fn telemetry() -> axum::Json<Ack> {
    axum::Json(Ack { ok: true })
}

/// The rest of ClawHub's API (publishing, stars, reports…) is not offered.
async fn unsupported() -> ClawResult<()> {
    Err(crate::error::NotFound::Endpoint.into())
}
