//! A connection to any SEP-2640 server, over Streamable HTTP or a stdio command, through rmcp's
//! client: `skills/get`, `resources/read`, and the version template's completion where the
//! server offers one. Nothing here is skillreg-specific except reading skillreg's version from
//! an entry's `_meta` when it is there.

use std::collections::{BTreeSet, HashMap};

use base64::Engine as _;
use rmcp::model::{
    ArgumentInfo, ClientCapabilities, ClientConfig, CompleteRequestParams, CompletionContext,
    ErrorCode, GetSkillRequestParams, Implementation, ProtocolVersion, ReadResourceRequestParams,
    Reference, ResourceContents, Skill, SkillResources,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;

use super::error::{Code, Error, Result};
use super::lock::{LockedFile, manifest_digest};
use crate::core::{BundlePath, Digest, SkillVersion};

/// Where skills come from: an MCP endpoint over HTTP, or a server started as a command that
/// speaks MCP on stdin and stdout (`stdio:<program> <args>`, arguments split on spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Http(String),
    Stdio(Vec<String>),
}

impl Source {
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.starts_with("http://") || s.starts_with("https://") {
            return Ok(Source::Http(s.to_owned()));
        }
        if let Some(command) = s.strip_prefix("stdio:") {
            let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
            if !argv.is_empty() {
                return Ok(Source::Stdio(argv));
            }
        }
        Err(Error::new(
            Code::Usage,
            format!(
                "{s:?} is not a source: give an MCP endpoint (http://host:port/mcp) or stdio:<command>"
            ),
        ))
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Http(url) => f.write_str(url),
            Source::Stdio(argv) => write!(f, "stdio:{}", argv.join(" ")),
        }
    }
}

/// The `_meta` key under which skillreg names an entry's version.
const VERSION_META: &str = "dev.skillreg/version";
const YANKED_META: &str = "dev.skillreg/yanked";
/// skillreg's template of pinned `SKILL.md` URIs, whose `version` variable completes to the
/// versions a skill has.
const PINNED_TEMPLATE: &str = "skill://{namespace}/@{version}/{name}/SKILL.md";

/// A skill entry as served, checked: every file inside the skill, once, with a well-formed
/// digest.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The `SKILL.md` URI the entry was read by.
    pub uri: String,
    pub name: String,
    pub version: Option<SkillVersion>,
    /// The yank reason, when the source marks the version yanked.
    pub yanked: Option<String>,
    pub files: Vec<RemoteFile>,
}

#[derive(Debug, Clone)]
pub struct RemoteFile {
    pub uri: String,
    pub locked: LockedFile,
}

impl Entry {
    pub fn locked_files(&self) -> Vec<LockedFile> {
        self.files.iter().map(|f| f.locked.clone()).collect()
    }

    pub fn digest(&self) -> Digest {
        manifest_digest(&self.locked_files())
    }
}

/// A file's entry and its bytes, read and checked against that entry.
pub type Verified = (LockedFile, Vec<u8>);

/// What `get` found.
pub enum Found {
    Entry(Entry),
    NotServed,
    Revoked(String),
}

pub struct Remote {
    service: RunningService<RoleClient, ClientConfig>,
}

impl Remote {
    /// Connect and initialise. `token` goes as a bearer token on HTTP (private namespaces).
    pub async fn connect(source: &Source, token: Option<&str>) -> Result<Self> {
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("skillreg", env!("CARGO_PKG_VERSION")),
        );
        let unreachable = |e: &dyn std::fmt::Display| {
            Error::new(
                Code::SourceUnreachable,
                format!("cannot reach {source}: {e}"),
            )
        };
        // `server/discover` first (2026-07-28; FastMCP serves skills only there), then the
        // 2025-11-25 handshake for servers that do not know it.
        let lifecycle = || ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        };
        let service = match source {
            Source::Http(url) => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = token {
                    config = config.auth_header(token);
                }
                info.serve_with_lifecycle(
                    StreamableHttpClientTransport::from_config(config),
                    lifecycle(),
                )
                .await
                .map_err(|e| unreachable(&e))?
            }
            Source::Stdio(argv) => {
                let mut command = tokio::process::Command::new(&argv[0]);
                command.args(&argv[1..]);
                let transport = TokioChildProcess::builder(command)
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .map(|(t, _)| t)
                    .map_err(|e| unreachable(&e))?;
                info.serve_with_lifecycle(transport, lifecycle())
                    .await
                    .map_err(|e| unreachable(&e))?
            }
        };
        let supports = service
            .peer()
            .peer_info()
            .is_some_and(|i| i.capabilities.supports_skills());
        if !supports {
            return Err(Error::new(
                Code::SourceUnreachable,
                format!(
                    "{source} does not declare the skills extension (io.modelcontextprotocol/skills)"
                ),
            ));
        }
        Ok(Self { service })
    }

    /// `skills/get` of a `SKILL.md` URI, checked.
    pub async fn get(&self, uri: &str) -> Result<Found> {
        let result = match self
            .service
            .peer()
            .get_skill(GetSkillRequestParams::new(uri))
            .await
        {
            Ok(r) => r,
            Err(ServiceError::McpError(e)) => {
                let code = e
                    .data
                    .as_ref()
                    .and_then(|d| d.get("code"))
                    .and_then(Value::as_str);
                if code == Some("version_revoked") {
                    return Ok(Found::Revoked(e.message.into_owned()));
                }
                if e.code == ErrorCode::INVALID_PARAMS || e.code == ErrorCode::RESOURCE_NOT_FOUND {
                    return Ok(Found::NotServed);
                }
                return Err(Error::new(
                    Code::SourceUnreachable,
                    format!("skills/get {uri}: {}", e.message),
                ));
            }
            Err(e) => {
                return Err(Error::new(
                    Code::SourceUnreachable,
                    format!("skills/get {uri}: {e}"),
                ));
            }
        };
        check_entry(result.skill).map(Found::Entry)
    }

    /// Every entry the source lists (`skills/list`, all pages), each checked on its own: an
    /// entry that breaks SEP-2640 is an `Err` in its place, not a failure of the listing.
    pub async fn list(&self) -> Result<Vec<Result<Entry>>> {
        let skills = self
            .service
            .peer()
            .list_all_skills()
            .await
            .map_err(|e| Error::new(Code::SourceUnreachable, format!("skills/list: {e}")))?;
        Ok(skills.into_iter().map(check_entry).collect())
    }

    /// The versions the source offers for `namespace/name`, newest first, when it serves
    /// skillreg's pinned-URI template (completion of its `version` variable); empty otherwise.
    pub async fn versions(&self, namespace: &str, name: &str) -> Vec<SkillVersion> {
        let params = CompleteRequestParams::new(
            Reference::for_resource(PINNED_TEMPLATE),
            ArgumentInfo::new("version", ""),
        )
        .with_context(CompletionContext::with_arguments(HashMap::from([
            ("namespace".to_owned(), namespace.to_owned()),
            ("name".to_owned(), name.to_owned()),
        ])));
        let Ok(result) = self.service.peer().complete(params).await else {
            return Vec::new();
        };
        let mut out: Vec<SkillVersion> = result
            .completion
            .values
            .iter()
            .filter_map(|v| SkillVersion::parse(v).ok())
            .collect();
        out.sort_by(|a, b| b.cmp(a));
        out.dedup();
        out
    }

    /// Every file of `entry`, read with `resources/read` and checked against the entry's size
    /// and digest. Nothing is returned unless every file matches.
    pub async fn read_all(&self, entry: &Entry) -> Result<Vec<Verified>> {
        let mut out = Vec::with_capacity(entry.files.len());
        for f in &entry.files {
            let bytes = self.read(&f.uri).await?;
            let digest = Digest::of(&bytes).to_string();
            if bytes.len() as u64 != f.locked.size || digest != f.locked.digest {
                return Err(Error::new(
                    Code::DigestMismatch,
                    format!(
                        "{}: the source announced {} bytes with {}, and sent {} bytes with {digest}",
                        f.uri,
                        f.locked.size,
                        f.locked.digest,
                        bytes.len()
                    ),
                ));
            }
            out.push((f.locked.clone(), bytes));
        }
        Ok(out)
    }

    async fn read(&self, uri: &str) -> Result<Vec<u8>> {
        let result = self
            .service
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| {
                Error::new(
                    Code::SourceUnreachable,
                    format!("resources/read {uri}: {e}"),
                )
            })?;
        let Some(content) = result.contents.into_iter().next() else {
            return Err(Error::new(
                Code::BadEntry,
                format!("resources/read {uri}: no contents"),
            ));
        };
        match content {
            ResourceContents::TextResourceContents { text, .. } => Ok(text.into_bytes()),
            ResourceContents::BlobResourceContents { blob, .. } => {
                base64::engine::general_purpose::STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|e| Error::new(Code::BadEntry, format!("resources/read {uri}: {e}")))
            }
            _ => Err(Error::new(
                Code::BadEntry,
                format!("resources/read {uri}: neither text nor blob"),
            )),
        }
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// A skill entry checked: every file inside the skill, once, with a well-formed digest, and
/// SKILL.md among them.
fn check_entry(skill: Skill) -> Result<Entry> {
    let uri = skill.uri.clone();
    let bad = |what: String| Error::new(Code::BadEntry, format!("{uri}: {what}"));
    let Some(root) = skill.uri.strip_suffix("SKILL.md") else {
        return Err(bad(format!(
            "the entry's uri {} is not a SKILL.md",
            skill.uri
        )));
    };
    let SkillResources::Files(resources) = skill.resources else {
        return Err(bad(
            "its resources are \"dynamic\": there is no manifest to install from".into(),
        ));
    };
    let mut files = Vec::with_capacity(resources.len());
    let mut seen = BTreeSet::new();
    for r in resources {
        let Some(encoded) = r.uri.strip_prefix(root) else {
            return Err(bad(format!("{} is outside the skill", r.uri)));
        };
        let path = percent_encoding::percent_decode_str(encoded)
            .decode_utf8()
            .map_err(|_| bad(format!("{} is not UTF-8", r.uri)))?
            .into_owned();
        BundlePath::new(&path).map_err(|e| bad(format!("{}: {e}", r.uri)))?;
        r.digest
            .parse::<Digest>()
            .map_err(|e| bad(format!("{}: {e}", r.uri)))?;
        if !seen.insert(path.clone()) {
            return Err(bad(format!("{path} is listed twice")));
        }
        files.push(RemoteFile {
            uri: r.uri,
            locked: LockedFile {
                path,
                digest: r.digest,
                size: r.size,
            },
        });
    }
    if !seen.contains("SKILL.md") {
        return Err(bad("the manifest does not list SKILL.md".into()));
    }
    files.sort_by(|a, b| a.locked.path.cmp(&b.locked.path));
    let meta = skill.meta.map(|m| m.0).unwrap_or_default();
    let version = meta
        .get(VERSION_META)
        .and_then(Value::as_str)
        .or_else(|| declared_version(&skill.frontmatter.extra))
        .and_then(|v| SkillVersion::parse(v).ok());
    let yanked = meta.get(YANKED_META).map(|y| {
        y.get("reason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    });
    Ok(Entry {
        uri: skill.uri,
        name: skill.frontmatter.name,
        version,
        yanked,
        files,
    })
}

/// A version the frontmatter names (`version`, or `metadata.version`), for sources that do not
/// put one in `_meta`.
fn declared_version(extra: &serde_json::Map<String, Value>) -> Option<&str> {
    extra.get("version").and_then(Value::as_str).or_else(|| {
        extra
            .get("metadata")
            .and_then(|m| m.get("version"))
            .and_then(Value::as_str)
    })
}
