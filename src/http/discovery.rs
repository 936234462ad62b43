//! The Agent Skills well-known discovery index (0.2.0) over HTTP, for clients that install
//! skills as files (`npx skills add https://registry/s/acme`):
//!
//! - `/.well-known/agent-skills/index.json`: every current skill the caller sees (up to
//!   `index_json_max_skills`; a bigger catalog is installed per namespace);
//! - `/s/{namespace}/.well-known/agent-skills/index.json`: one namespace;
//! - `/s/{namespace}/{name}/.well-known/agent-skills/index.json`: one skill;
//! - `/p/{namespace}/{pack}/.well-known/agent-skills/index.json`: a pack's members, exact versions.
//!
//! Each entry points at the current version's artifact, with the digest of its exact bytes: the
//! SKILL.md of a single-file skill, else the version's deterministic `.tar.gz` export. The
//! digest changes exactly when the current version does, which is what `skills update` checks.
//! Entries are named by the skill's name (the folder the client installs into); in the whole
//! catalog's index a name that repeats in a later namespace is left out.
//!
//! `GET /api/search?q=&limit=` answers `skills find` (with `SKILLS_API_URL` pointing here) from
//! the search index: `{"skills": [{"id", "name", "source"}]}`, where `source` is the namespace's
//! URL that `skills add <source> --skill <name>` installs from. No install counts are kept, so
//! none is sent.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::routing::get;
use serde::Serialize;

use super::app::{ApiError, AppState};
use super::auth::Reader;
use crate::core::Status;
use crate::core::pack::PackRef;
use crate::core::refs::{parse_name, parse_namespace};
use crate::core::uri::{DISCOVERY_INDEX_SCHEMA, SKILL_MD, encode_path};
use crate::core::{SkillRef, VersionRef};
use crate::registry::{Artifact, DiscoveryEntry, DiscoveryScope};

const INDEX: &str = "/.well-known/agent-skills/index.json";

pub fn routes(state: AppState) -> Router {
    Router::new()
        .route(INDEX, get(catalog))
        .route(&format!("/s/{{namespace}}{INDEX}"), get(namespace))
        .route(&format!("/s/{{namespace}}/{{name}}{INDEX}"), get(skill))
        .route(&format!("/p/{{namespace}}/{{name}}{INDEX}"), get(pack))
        .route("/api/search", get(search))
        .with_state(state)
}

async fn catalog(State(s): State<AppState>, reader: Reader) -> Result<axum::Json<Index>, ApiError> {
    index(&s, &reader, DiscoveryScope::Catalog).await
}

async fn namespace(
    State(s): State<AppState>,
    reader: Reader,
    Path(namespace): Path<String>,
) -> Result<axum::Json<Index>, ApiError> {
    let scope = DiscoveryScope::Namespace(parse_namespace(&namespace)?);
    index(&s, &reader, scope).await
}

async fn skill(
    State(s): State<AppState>,
    reader: Reader,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<axum::Json<Index>, ApiError> {
    let scope = DiscoveryScope::Skill(SkillRef::parse(&namespace, &name)?);
    index(&s, &reader, scope).await
}

/// A pack's members at their exact versions (the newest version of the pack), so that
/// `npx skills add <registry>/p/<namespace>/<pack>` installs it.
async fn pack(
    State(s): State<AppState>,
    reader: Reader,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<axum::Json<Index>, ApiError> {
    let pack = PackRef::new(parse_namespace(&namespace)?, parse_name(&name)?);
    let found = s
        .registry
        .packs()
        .get(&reader.visibility, &pack, None)
        .await?;
    index(&s, &reader, DiscoveryScope::Pack(found.contents.members)).await
}

async fn index(
    state: &AppState,
    reader: &Reader,
    scope: DiscoveryScope,
) -> Result<axum::Json<Index>, ApiError> {
    let entries = state
        .registry
        .reads()
        .discovery(
            &reader.visibility,
            &scope,
            state.config.index_json_max_skills,
        )
        .await?;
    let mut names = std::collections::HashSet::new();
    let skills = entries
        .into_iter()
        .filter(|e| names.insert(e.version.name().clone()))
        .map(entry)
        .collect();
    Ok(axum::Json(Index {
        schema: DISCOVERY_INDEX_SCHEMA,
        skills,
    }))
}

/// An index (`/.well-known/agent-skills/index.json`).
#[derive(Serialize)]
struct Index {
    #[serde(rename = "$schema")]
    schema: &'static str,
    skills: Vec<Entry>,
}

/// One skill of an index: its current version's artifact.
#[derive(Serialize)]
struct Entry {
    name: String,
    /// `skill-md` or `archive`.
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    url: String,
    digest: String,
    /// skillreg's addition, for skills that require others (clients ignore fields they do not
    /// know): each required skill, its range, and the index entry of the version it resolves
    /// to now (`/s/<namespace>/<name>`); absent for skills that require nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    requires: Vec<Required>,
}

/// A skill an index entry requires.
#[derive(Serialize)]
struct Required {
    skill: String,
    range: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<String>,
    /// The required skill's own index, which installs it.
    index: String,
}

/// `GET /api/search`'s answer.
#[derive(Serialize)]
struct Found {
    skills: Vec<FoundSkill>,
}

#[derive(Serialize)]
struct FoundSkill {
    id: String,
    name: String,
    /// The namespace's URL that `skills add <source> --skill <name>` installs from.
    source: String,
}

/// The REST path of one file of a version, or of its archive.
fn version_path(version: &VersionRef, tail: &str) -> String {
    format!(
        "/v1/skills/{}/{}/{}/{tail}",
        version.namespace(),
        version.name(),
        encode_path(&version.version.to_string()),
    )
}

fn entry(e: DiscoveryEntry) -> Entry {
    let (kind, url, digest) = match e.artifact {
        Artifact::SkillMd { digest } => (
            "skill-md",
            version_path(&e.version, &format!("files/{SKILL_MD}")),
            digest,
        ),
        Artifact::Archive { digest } => ("archive", version_path(&e.version, "archive"), digest),
    };
    let requires = e
        .requires
        .iter()
        .flat_map(|r| &r.skills)
        .map(|r| Required {
            skill: r.skill.to_string(),
            range: r.range.to_string(),
            resolved: r.resolved.as_ref().map(ToString::to_string),
            index: format!(
                "/s/{}/{}/.well-known/agent-skills/index.json",
                r.skill.namespace, r.skill.name
            ),
        })
        .collect();
    Entry {
        name: e.version.name().to_string(),
        kind,
        description: e.description,
        url,
        digest: digest.to_string(),
        requires,
    }
}

#[derive(serde::Deserialize)]
struct SearchQuery {
    q: String,
    limit: Option<usize>,
}

/// Most hits `skills find` gets.
const MAX_SEARCH_HITS: usize = 50;

async fn search(
    State(s): State<AppState>,
    reader: Reader,
    headers: HeaderMap,
    Query(q): Query<SearchQuery>,
) -> Result<axum::Json<Found>, ApiError> {
    let limit = q.limit.unwrap_or(20).clamp(1, MAX_SEARCH_HITS);
    let hits = s
        .registry
        .reads()
        .search(&reader.visibility, &q.q, None, limit)
        .await?;
    let base = super::app::base_url(&headers);
    let skills = hits
        .into_iter()
        // Only skills with a current version can be installed.
        .filter(|h| h.status != Status::Yanked)
        .map(|h| FoundSkill {
            id: h.skill.to_string(),
            name: h.skill.name.to_string(),
            source: format!("{base}/s/{}", h.skill.namespace),
        })
        .collect();
    Ok(axum::Json(Found { skills }))
}

/// One example of every shape, named, from fixed values.
#[cfg(test)]
pub(crate) fn examples() -> Vec<(&'static str, serde_json::Value)> {
    let entry = |name: &str, kind, tail: &str| Entry {
        name: name.to_owned(),
        kind,
        description: format!("The {name} skill"),
        url: format!("/v1/skills/acme/{name}/1.0.0/{tail}"),
        digest: format!("sha256:{}", "ab".repeat(32)),
        requires: Vec::new(),
    };
    let mut xlsx = entry("xlsx", "archive", "archive");
    xlsx.requires.push(Required {
        skill: "acme/pdf".to_owned(),
        range: "^1".to_owned(),
        resolved: Some("1.0.0".to_owned()),
        index: "/s/acme/pdf/.well-known/agent-skills/index.json".to_owned(),
    });
    let index = Index {
        schema: DISCOVERY_INDEX_SCHEMA,
        skills: vec![entry("pdf", "skill-md", "files/SKILL.md"), xlsx],
    };
    let found = Found {
        skills: vec![FoundSkill {
            id: "acme/pdf".to_owned(),
            name: "pdf".to_owned(),
            source: "https://registry.example/s/acme".to_owned(),
        }],
    };
    vec![
        (
            "discovery /.well-known/agent-skills/index.json",
            serde_json::to_value(index).expect("a shape serializes"),
        ),
        (
            "discovery /api/search",
            serde_json::to_value(found).expect("a shape serializes"),
        ),
    ]
}
