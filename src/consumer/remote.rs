//! A connection to any SEP-2640 server, over Streamable HTTP or a stdio command, through rmcp's
//! client: `skills/get`, `resources/read`, and the version template's completion where the
//! server offers one. Nothing here is skillreg-specific except reading skillreg's version from
//! an entry's `_meta` when it is there.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    ArgumentInfo, ClientCapabilities, ClientConfig, CompleteRequestParams, CompletionContext,
    ErrorCode, GetSkillRequestParams, Implementation, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, Reference, RequestMetaObject, ResourceContents, Skill,
    SkillResources,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;

use super::error::{Code, Error, Result};
use super::lock::{LockedFile, manifest_digest};
use super::source::Source;
use crate::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use crate::core::path::first_collision;
use crate::core::requires::Requires;
use crate::core::signature::{PublicKey, SIGNING_KEYS_URI};
use crate::core::usage::INSTALL_META;
use crate::core::{BundlePath, Digest, SkillVersion};

/// How long connecting and the MCP handshake may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request (a page of `skills/list`, one `skills/get` or `resources/read`) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long reading every file of one skill may take.
pub const SKILL_TIMEOUT: Duration = Duration::from_secs(300);
/// At most this many `skills/list` pages are read from one source.
pub const MAX_LIST_PAGES: usize = 10_000;
/// At most this many entries are taken from one listing.
pub const MAX_LIST_ENTRIES: usize = 100_000;
/// At most this many bytes of entries (as JSON) are taken from one listing.
pub const MAX_LIST_BYTES: usize = 64 * 1024 * 1024;

/// `fut`, or a `source_unreachable` error naming `what` once `limit` has passed.
async fn within<T>(
    limit: Duration,
    what: impl FnOnce() -> String,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r,
        Err(_) => Err(Error::new(
            Code::SourceUnreachable,
            format!("{}: no answer within {} s", what(), limit.as_secs()),
        )),
    }
}

/// The `_meta` key under which skillreg names an entry's version.
const VERSION_META: &str = "dev.skillreg/version";
const YANKED_META: &str = "dev.skillreg/yanked";
const DEPRECATED_META: &str = "dev.skillreg/deprecated";
const SCAN_META: &str = "dev.skillreg/scan";
const SIGNATURES_META: &str = "dev.skillreg/signatures";
/// The files skillreg says are executable, by path in the skill's directory.
const EXECUTABLES_META: &str = "dev.skillreg/executables";
/// The most a pack's description may hold.
const MAX_PACK_BYTES: u64 = 1 << 20;
/// The most a signature bundle or the list of signing keys may hold.
const MAX_SIGNATURE_BYTES: u64 = 4 << 20;
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
    /// The deprecation message, when the source marks the skill deprecated.
    pub deprecated: Option<String>,
    /// The source's content scan flagged the version (skillreg's `verdict: "flagged"`).
    pub flagged: bool,
    pub files: Vec<RemoteFile>,
    /// Who signed the version, as the source says (skillreg's `dev.skillreg/signatures`); each
    /// bundle is read at its `uri` and checked before it is believed.
    pub signatures: Vec<RemoteSignature>,
    /// What the skill requires, as its frontmatter declares (`core::requires`): read from the
    /// skill's own files, so any server that serves it says the same.
    pub requires: Requires,
}

/// A pack a skillreg source serves: its members at exact versions.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct RemotePack {
    pub pack: String,
    pub version: String,
    pub members: Vec<PackMember>,
}

/// One member of a [`RemotePack`].
#[derive(Debug, Clone, serde::Deserialize)]
pub struct PackMember {
    pub skill: String,
    pub version: String,
}

/// A signature an entry announces.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteSignature {
    pub by: String,
    pub key_id: String,
    #[serde(default)]
    pub identity: Option<String>,
    #[serde(default)]
    pub verified: bool,
    pub uri: String,
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
#[expect(
    clippy::large_enum_variant,
    reason = "one short-lived value per read, matched at once; boxing buys nothing"
)]
pub enum Found {
    Entry(Entry),
    NotServed,
    Revoked(String),
}

pub struct Remote {
    service: RunningService<RoleClient, ClientConfig>,
}

impl Remote {
    /// Connect and initialise, within [`CONNECT_TIMEOUT`]. `token` goes as a bearer token on
    /// HTTP (private namespaces); the caller decides which source may have it.
    pub async fn connect(source: &Source, token: Option<&str>) -> Result<Self> {
        within(
            CONNECT_TIMEOUT,
            || format!("cannot reach {source}"),
            Self::connect_now(source, token),
        )
        .await
    }

    async fn connect_now(source: &Source, token: Option<&str>) -> Result<Self> {
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
                command.args(&argv[1..]).kill_on_drop(true);
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
        within(
            REQUEST_TIMEOUT,
            || format!("skills/get {uri}"),
            self.get_now(uri),
        )
        .await
    }

    async fn get_now(&self, uri: &str) -> Result<Found> {
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
    ///
    /// A listing is bounded: at most [`MAX_LIST_PAGES`] pages, [`MAX_LIST_ENTRIES`] entries and
    /// [`MAX_LIST_BYTES`] bytes of entries, each page within [`REQUEST_TIMEOUT`]; a cursor the
    /// source sent before ends it with an error (it would list forever).
    pub async fn list(&self) -> Result<Vec<Result<Entry>>> {
        let limit = |what: String| Error::new(Code::LimitExceeded, format!("skills/list: {what}"));
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 0.. {
            if page == MAX_LIST_PAGES {
                return Err(limit(format!("more than {MAX_LIST_PAGES} pages")));
            }
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let result = within(
                REQUEST_TIMEOUT,
                || format!("skills/list page {}", page + 1),
                async {
                    self.service
                        .peer()
                        .list_skills(Some(params))
                        .await
                        .map_err(|e| {
                            Error::new(Code::SourceUnreachable, format!("skills/list: {e}"))
                        })
                },
            )
            .await?;
            for skill in result.skills {
                bytes += serde_json::to_vec(&skill).map_or(0, |v| v.len());
                if bytes > MAX_LIST_BYTES {
                    return Err(limit(format!(
                        "more than {MAX_LIST_BYTES} bytes of entries"
                    )));
                }
                if out.len() == MAX_LIST_ENTRIES {
                    return Err(limit(format!("more than {MAX_LIST_ENTRIES} entries")));
                }
                out.push(check_entry(skill));
            }
            match result.next_cursor {
                None => break,
                Some(next) => {
                    if !cursors.insert(next.clone()) {
                        return Err(limit(format!(
                            "the source sent the cursor {:?} twice",
                            crate::core::text::printable(&next)
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
        Ok(out)
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
        let Ok(Ok(result)) =
            tokio::time::timeout(REQUEST_TIMEOUT, self.service.peer().complete(params)).await
        else {
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
    /// and digest. Nothing is returned unless every file matches. A skill of more than
    /// [`MAX_FILES`] files or [`MAX_TOTAL_BYTES`] announced bytes is refused before anything is
    /// read; each read has [`REQUEST_TIMEOUT`], the whole skill [`SKILL_TIMEOUT`].
    pub async fn read_all(&self, entry: &Entry) -> Result<Vec<Verified>> {
        let announced: u64 = entry
            .files
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.locked.size));
        if entry.files.len() > MAX_FILES || announced > MAX_TOTAL_BYTES {
            return Err(Error::new(
                Code::LimitExceeded,
                format!(
                    "{}: the source announces {} files and {announced} bytes; a skill holds at most {MAX_FILES} files and {MAX_TOTAL_BYTES} bytes",
                    entry.uri,
                    entry.files.len()
                ),
            ));
        }
        within(
            SKILL_TIMEOUT,
            || format!("reading {}", entry.uri),
            self.read_all_now(entry),
        )
        .await
    }

    async fn read_all_now(&self, entry: &Entry) -> Result<Vec<Verified>> {
        let mut out = Vec::with_capacity(entry.files.len());
        for f in &entry.files {
            let bytes = within(
                REQUEST_TIMEOUT,
                || format!("resources/read {}", f.uri),
                self.read(&f.uri, f.locked.size, f.uri == entry.uri),
            )
            .await?;
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

    /// The bytes of `uri`; text or base64 longer than `size` bytes can hold is refused before
    /// it is decoded. `install`: the read of the SKILL.md of a skill being installed, which
    /// says so in its `_meta` ([`INSTALL_META`]: a skillreg server counts it as an install).
    async fn read(&self, uri: &str, size: u64, install: bool) -> Result<Vec<u8>> {
        let too_long = |sent: usize| {
            Error::new(
                Code::DigestMismatch,
                format!("{uri}: the source announced {size} bytes and sent {sent}"),
            )
        };
        let result = self
            .service
            .peer()
            .read_resource(read_params(uri, install))
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
            ResourceContents::TextResourceContents { text, .. } => {
                if text.len() as u64 > size {
                    return Err(too_long(text.len()));
                }
                Ok(text.into_bytes())
            }
            ResourceContents::BlobResourceContents { blob, .. } => {
                if blob.len() as u64 > size.saturating_add(2) / 3 * 4 + 4 {
                    return Err(too_long(blob.len() / 4 * 3));
                }
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

    /// A signature bundle the source serves at `uri`, as text.
    pub async fn read_bundle(&self, uri: &str) -> Result<String> {
        let bytes = within(
            REQUEST_TIMEOUT,
            || format!("reading {uri} took too long"),
            self.read(uri, MAX_SIGNATURE_BYTES, false),
        )
        .await?;
        String::from_utf8(bytes)
            .map_err(|_| Error::new(Code::SignatureInvalid, format!("{uri} is not UTF-8")))
    }

    /// The public keys the source says it signs with (skillreg's `skillreg://signing-keys`);
    /// empty when it serves none.
    pub async fn signing_keys(&self) -> Result<Vec<PublicKey>> {
        let Ok(text) = self.read_bundle(SIGNING_KEYS_URI).await else {
            return Ok(Vec::new());
        };
        #[derive(serde::Deserialize)]
        struct Keys {
            keys: Vec<Key>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Key {
            public_key: String,
        }
        let keys: Keys = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                Code::BadEntry,
                format!("{SIGNING_KEYS_URI}: not a list of keys: {e}"),
            )
        })?;
        Ok(keys
            .keys
            .iter()
            .filter_map(|k| PublicKey::from_pem(&k.public_key).ok())
            .collect())
    }

    /// The pack a skillreg source serves at `uri` (`skillreg://packs/ns/name[@version]`):
    /// `None` when the source serves none there.
    pub async fn pack(&self, uri: &str) -> Result<Option<RemotePack>> {
        let Ok(bytes) = within(
            REQUEST_TIMEOUT,
            || format!("reading {uri} took too long"),
            self.read(uri, MAX_PACK_BYTES, false),
        )
        .await
        else {
            return Ok(None);
        };
        let pack: RemotePack = serde_json::from_slice(&bytes)
            .map_err(|e| Error::new(Code::BadEntry, format!("{uri}: not a pack: {e}")))?;
        Ok(Some(pack))
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// A skill entry checked: every file inside the skill, once, with a well-formed digest, and
/// SKILL.md among them.
/// The parameters of a `resources/read` of `uri`, flagged as an install's when `install`.
fn read_params(uri: &str, install: bool) -> ReadResourceRequestParams {
    let mut params = ReadResourceRequestParams::new(uri);
    if install {
        let mut meta = RequestMetaObject::new();
        meta.insert(INSTALL_META.to_owned(), Value::Bool(true));
        params.meta = Some(meta);
    }
    params
}

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
                executable: false,
            },
        });
    }
    if let Some((a, b)) = first_collision(seen.iter().map(String::as_str)) {
        return Err(bad(format!(
            "{a} and {b} are one file on macOS and Windows (case or Unicode normalization)"
        )));
    }
    if !seen.contains("SKILL.md") {
        return Err(bad("the manifest does not list SKILL.md".into()));
    }
    files.sort_by(|a, b| a.locked.path.cmp(&b.locked.path));
    let meta = skill.meta.map(|m| m.0).unwrap_or_default();
    // A path that names no file of the entry is ignored: only listed files are written.
    if let Some(Value::Array(executables)) = meta.get(EXECUTABLES_META) {
        for f in &mut files {
            f.locked.executable = executables
                .iter()
                .any(|e| e.as_str() == Some(f.locked.path.as_str()));
        }
    }
    let version = meta
        .get(VERSION_META)
        .and_then(Value::as_str)
        .or_else(|| declared_version(&skill.frontmatter.extra))
        .and_then(|v| SkillVersion::parse(v).ok());
    let text_of = |key: &str, field: &str| {
        meta.get(key).map(|v| {
            v.get(field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        })
    };
    // Entries that do not read are left out: an unreadable signature is no signature.
    let signatures = meta
        .get(SIGNATURES_META)
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|s| serde_json::from_value(s.clone()).ok())
                .collect()
        })
        .unwrap_or_default();
    let requires = crate::core::requires::declared(&skill.frontmatter.extra)
        .map_err(|e| bad(e.to_string()))?;
    let flagged = meta
        .get(SCAN_META)
        .and_then(|scan| scan.get("verdict"))
        .is_some_and(|verdict| verdict == "flagged");
    Ok(Entry {
        uri: skill.uri,
        name: skill.frontmatter.name,
        version,
        yanked: text_of(YANKED_META, "reason"),
        deprecated: text_of(DEPRECATED_META, "message"),
        flagged,
        files,
        signatures,
        requires,
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
