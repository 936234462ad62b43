//! Reading the catalog the way MCP hosts do: pages of current skills, one skill's entry, a file's
//! bytes, a directory's children, and search.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use super::Reads;
use crate::core::provenance::Provenance;
use crate::core::records::{FileRecord, VersionId};
use crate::core::scan::Summary;
use crate::core::uri::{FASTMCP_MANIFEST, SCHEME_PREFIX, SKILL_MD};
use crate::core::usage::Kind;
use crate::core::{
    Digest, Namespace, SkillName, SkillRef, SkillUri, SkillVersion, Status, Target, Visibility,
    mime,
};
use crate::error::{Error, NotFound, Result};
use crate::registry::page::Page;
use crate::registry::requires::Resolved;
use crate::registry::usage;
use crate::store::{ListingRecord, Manifest};

/// A skill's entry as `skills/list` and `skills/get` serve it: its frontmatter verbatim and every
/// file with its digest and size.
#[derive(Debug, Clone)]
pub struct SkillEntry {
    /// The root directory of the version serving it (current or pinned).
    pub root: SkillUri,
    /// `""` for the root skill, else the nested skill's directory below `root`.
    pub subpath: String,
    /// The version the entry belongs to: with `subpath` and whether `root` is pinned, what the
    /// entry's immutable part is a function of.
    pub version_id: VersionId,
    pub version: SkillVersion,
    /// The deprecation message when the skill is deprecated.
    pub deprecation: Option<String>,
    /// The yank reason when this (pinned) version is yanked.
    pub yanked: Option<String>,
    /// The version's scan verdict and findings per severity.
    pub scan: Summary,
    /// What the version requires and what that resolves to now (root entries only).
    pub requires: Option<Arc<Resolved>>,
    manifest: Arc<Manifest>,
    /// The index of this skill's entry in `manifest.entries`.
    entry: usize,
}

impl SkillEntry {
    /// The frontmatter as the author wrote it (JSON types), `name` and `description` included.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.manifest.entries[self.entry].frontmatter
    }

    /// The URI of the skill's SKILL.md.
    pub fn uri(&self) -> SkillUri {
        if self.subpath.is_empty() {
            self.root.join(SKILL_MD)
        } else {
            self.root.join(&format!("{}/{SKILL_MD}", self.subpath))
        }
    }

    pub fn is_pinned(&self) -> bool {
        self.root.is_pinned()
    }

    /// Where the registry read the version from, when it read it itself (a Git repository, an
    /// upstream server).
    pub fn provenance(&self) -> Option<&Provenance> {
        self.manifest.provenance.as_ref()
    }

    /// Who signed the version.
    pub fn signatures(&self) -> &[crate::core::signature::Signed] {
        &self.manifest.signatures
    }

    /// Who published the version from CI (trusted publishing): provider, repository, workflow,
    /// ref, commit, run.
    pub fn publisher(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.manifest.publisher.as_ref()
    }

    /// The skill's files (its directory and everything below it), paths relative to `root`.
    pub fn files(&self) -> &[FileRecord] {
        let files = &self.manifest.files;
        if self.subpath.is_empty() {
            return files;
        }
        let prefix = format!("{}/", self.subpath);
        let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
        let len = files[start..]
            .iter()
            .take_while(|f| f.path.starts_with(&prefix))
            .count();
        &files[start..start + len]
    }

    /// Entries that between them exercise every part of an entry's own serialized form: a root
    /// and a nested skill of one version read from Git (frontmatter with fields beyond `name`
    /// and `description`, several files each), a version mirrored from a `stdio:` upstream, one
    /// mirrored over HTTP (user information and query left out, as mirroring stores it), and
    /// one published (no source; signed by its author and the registry). Fixed data, no IO: the format of stored serialized entries
    /// is derived from their bytes (`mcp::Codec`), and a golden test shows those bytes.
    pub(crate) fn canonical_examples() -> Vec<SkillEntry> {
        use crate::core::provenance::public_server;
        use crate::core::scan::Scan;
        use crate::core::signature::{Signed, Signer};
        use crate::store::EntryRecord;

        let file = |path: &str, size: u64| FileRecord {
            path: path.to_owned(),
            digest: Digest::of(path.as_bytes()),
            size,
            mode: 0o644,
        };
        let exe = |path: &str, size: u64| FileRecord {
            mode: 0o755,
            ..file(path, size)
        };
        let record = |subpath: &str, name: &str, extra: Value| {
            let description = format!("The {name} skill, for the canonical entries.");
            let mut frontmatter = Map::new();
            frontmatter.insert("name".to_owned(), Value::String(name.to_owned()));
            frontmatter.insert("description".to_owned(), Value::String(description.clone()));
            if let Value::Object(extra) = extra {
                frontmatter.extend(extra);
            }
            EntryRecord {
                subpath: subpath.to_owned(),
                name: SkillName::new(name).expect("a canonical name is valid"),
                description,
                frontmatter,
            }
        };
        let manifest = |version_id, files, entries, provenance| {
            Arc::new(Manifest {
                version_id,
                files,
                entries,
                provenance,
                signatures: Vec::new(),
                publisher: None,
            })
        };
        let entry = |name: &str, version: &str, manifest: &Arc<Manifest>, subpath: &str| {
            let skill = crate::core::SkillRef::new(
                Namespace::new("canonical").expect("a canonical namespace is valid"),
                SkillName::new(name).expect("a canonical name is valid"),
            );
            SkillEntry {
                root: skill.root_uri(None),
                subpath: subpath.to_owned(),
                version_id: manifest.version_id,
                version: SkillVersion::parse(version).expect("a canonical version is valid"),
                deprecation: None,
                yanked: None,
                scan: Scan::unscanned().summary(),
                requires: None,
                entry: entry_index(manifest, subpath).expect("a canonical entry exists"),
                manifest: manifest.clone(),
            }
        };

        let git = manifest(
            1,
            vec![
                file("SKILL.md", 120),
                exe("scripts/run.sh", 64),
                file("tools/lint/SKILL.md", 80),
                exe("tools/lint/fix.sh", 12),
                file("tools/lint/rules.json", 2),
            ],
            vec![
                record(
                    "",
                    "toolbox",
                    serde_json::json!({
                        "license": "MIT",
                        "allowed-tools": ["Bash", "Read"],
                        "metadata": { "owner": "canonical", "tags": ["a", "b"], "weight": 1.5 },
                    }),
                ),
                record("tools/lint", "lint", serde_json::json!({ "version": 2 })),
            ],
            Some(Provenance::Git {
                repository: "https://git.example/canonical/toolbox.git".to_owned(),
                reference: "refs/tags/v1.2.3".to_owned(),
                commit: "0123456789abcdef0123456789abcdef01234567".to_owned(),
                path: "skills/toolbox".to_owned(),
            }),
        );
        let mirrored = |version_id, location: &str| {
            manifest(
                version_id,
                vec![file("SKILL.md", 40), file("notes/ünïcode \"quoted\".md", 7)],
                vec![record("", "mirrored", Value::Null)],
                Some(Provenance::Mcp {
                    server: public_server(location),
                    uri: "skill://upstream/mirrored/SKILL.md".to_owned(),
                }),
            )
        };
        let stdio = mirrored(2, "stdio:upstream-server --token secret");
        let http = mirrored(3, "https://user:secret@mirror.example/mcp?key=secret");
        let published = Arc::new(Manifest {
            signatures: vec![
                Signed {
                    by: Signer::Author,
                    key_id: Digest::of(b"author key").hex(),
                    identity: Some("release@canonical.example".to_owned()),
                    verified: true,
                    certificate: None,
                    keyless: None,
                },
                Signed {
                    by: Signer::Registry,
                    key_id: Digest::of(b"registry key").hex(),
                    identity: None,
                    verified: true,
                    certificate: None,
                    keyless: None,
                },
            ],
            ..Arc::unwrap_or_clone(manifest(
                4,
                vec![file("SKILL.md", 10)],
                vec![record("", "published", Value::Null)],
                None,
            ))
        });
        vec![
            entry("toolbox", "1.2.3", &git, ""),
            entry("toolbox", "1.2.3", &git, "tools/lint"),
            entry("mirrored", "0.1.0-beta.1", &stdio, ""),
            entry("mirrored", "2.0.0", &http, ""),
            entry("published", "1.0.0", &published, ""),
        ]
    }
}

/// A file read back, bytes exactly as published.
#[derive(Debug, Clone)]
pub struct FileContent {
    pub uri: SkillUri,
    pub mime_type: String,
    pub bytes: Arc<Vec<u8>>,
    pub digest: Digest,
    /// The scan verdict of the version the file belongs to.
    pub scan: Summary,
}

impl FileContent {
    /// The bytes as text when the file is served as `text`: a textual MIME type and UTF-8.
    pub fn text(&self) -> Option<&str> {
        mime::as_text(&self.mime_type, &self.bytes)
    }

    pub fn is_pinned(&self) -> bool {
        self.uri.is_pinned()
    }
}

/// A file found in its version's manifest ([`Reads::locate`]), its bytes not read apart: a
/// store that reads a small file with the resolution hands them over here, unverified, for
/// [`Reads::read_located`].
#[derive(Debug, Clone)]
pub struct Located {
    pub uri: SkillUri,
    pub digest: Digest,
    /// The scan verdict of the version the file belongs to.
    pub scan: Summary,
    stored: Option<Stored>,
}

/// Bytes read as stored, not verified yet (shown by their length).
#[derive(Clone)]
struct Stored(Arc<Vec<u8>>);

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stored({} bytes)", self.0.len())
    }
}

impl Located {
    /// The file's path in its version.
    pub fn path(&self) -> &str {
        match &self.uri.target {
            Target::Path(path) => path,
            _ => "",
        }
    }

    pub fn is_pinned(&self) -> bool {
        self.uri.is_pinned()
    }
}

/// What a read of a resource serves for one viewer, besides its bytes: the version its URI
/// resolves to, and that version's yank, deprecation and scan state. A resource subscription
/// ([`Reads::watch`]) compares two of these: they differ when what is served may have changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub version_id: VersionId,
    pub yanked: Option<String>,
    pub deprecation: Option<String>,
    pub scan: Summary,
}

/// Whether bytes read go into the registry's cache of file bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Bytes,
    /// The caller keeps what it makes of them.
    Nothing,
}

/// One direct child of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirChild {
    pub uri: SkillUri,
    pub name: String,
    /// `inode/directory` for subdirectories.
    pub mime_type: String,
    /// `None` for directories.
    pub size: Option<u64>,
}

/// A current SKILL.md as `resources/list` shows it.
#[derive(Debug, Clone)]
pub struct SkillMdResource {
    pub uri: SkillUri,
    pub name: SkillName,
    pub description: String,
    pub size: u64,
}

/// A current skill with its description (the legacy discovery index).
#[derive(Debug, Clone)]
pub struct SkillSummary {
    pub uri: SkillUri,
    pub name: SkillName,
    pub description: String,
}

/// A skill search ranked, with what a host needs to pick it: where its SKILL.md is, the version
/// a read serves, and why it ranks lower (deprecated, or every version yanked).
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub skill: SkillRef,
    pub version: SkillVersion,
    pub description: String,
    pub score: f32,
    pub status: Status,
    /// The deprecation message, when deprecated.
    pub deprecation: Option<String>,
}

impl SearchHit {
    /// The URI of the skill's SKILL.md (current version).
    pub fn uri(&self) -> SkillUri {
        self.skill.skill_md_uri()
    }

    /// The typed hit of an index document; `None` for one whose names do not parse (the index
    /// is derived data: it holds only what storage validated, unless it is damaged).
    fn from_index(hit: crate::search::Hit) -> Option<Self> {
        let typed = Namespace::new(&hit.namespace)
            .ok()
            .zip(SkillName::new(&hit.name).ok());
        let version = SkillVersion::parse(&hit.version).ok();
        let (Some((namespace, name)), Some(version)) = (typed, version) else {
            tracing::warn!(uri = hit.uri, "a search hit that does not parse: skipped");
            return None;
        };
        Some(Self {
            skill: SkillRef::new(namespace, name),
            version,
            description: hit.description,
            score: hit.score,
            status: hit.status,
            deprecation: hit.deprecation,
        })
    }
}

impl Reads {
    /// One page of the current skills (root and nested) `viewer` sees, in URI order.
    pub async fn list_skills(
        &self,
        viewer: &Visibility,
        cursor: Option<&str>,
    ) -> Result<Page<SkillEntry>> {
        let (rows, next_cursor) = self.listing_page(viewer, cursor).await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.version_id).collect();
        let manifests = self.manifests(&ids).await?;
        let graph = self.current.requirements().await?;
        let items = rows
            .into_iter()
            .map(|row| {
                let mut entry = listed_entry(row, &manifests)?;
                if entry.subpath.is_empty() {
                    entry.requires = graph.of(entry.version_id);
                }
                Ok(entry)
            })
            .collect::<Result<_>>()?;
        Ok(Page { items, next_cursor })
    }

    /// The skill whose SKILL.md is at `uri` (current or pinned).
    pub async fn get_skill(&self, viewer: &Visibility, uri: &SkillUri) -> Result<SkillEntry> {
        let not_found = || Error::NotFound(NotFound::SkillUri(uri.to_string()));
        let Target::Path(path) = &uri.target else {
            return Err(not_found());
        };
        let subpath = if path == SKILL_MD {
            ""
        } else {
            path.strip_suffix(&format!("/{SKILL_MD}"))
                .ok_or_else(not_found)?
        };
        let (resolved, manifest) = self
            .resolve_visible(viewer, &uri.skill_ref(), uri.version.as_ref())
            .await?
            .ok_or_else(not_found)?;
        let entry = entry_index(&manifest, subpath).ok_or_else(not_found)?;
        Ok(SkillEntry {
            root: uri.skill_ref().root_uri(uri.version.as_ref()),
            subpath: subpath.to_owned(),
            version_id: resolved.version_id,
            version: resolved.version,
            deprecation: resolved.deprecation,
            yanked: resolved.yanked,
            scan: resolved.scan,
            requires: match subpath {
                "" => self.current.requirements().await?.of(resolved.version_id),
                _ => None,
            },
            manifest,
            entry,
        })
    }

    /// The bytes of the file at `uri`.
    pub async fn read(&self, viewer: &Visibility, uri: &SkillUri) -> Result<FileContent> {
        let file = self.locate(viewer, uri, false).await?;
        self.read_located(file, Keep::Bytes).await
    }

    /// The file at `uri`, found in its version's manifest: its digest, without reading its bytes
    /// (a transport that keeps what it makes of a file's bytes, by digest, may need none).
    /// Counted as a read of the version (MCP's `resources/read`, its one caller, on either
    /// era): a skill's `SKILL.md`, or with `install` (the reader says it installs the skill)
    /// an install, or another file.
    pub async fn locate(
        &self,
        viewer: &Visibility,
        uri: &SkillUri,
        install: bool,
    ) -> Result<Located> {
        let not_found = || Error::NotFound(NotFound::Resource(uri.to_string()));
        let Target::Path(path) = &uri.target else {
            return Err(not_found());
        };
        let (resolved, manifest, stored) = self
            .resolve_visible_with(viewer, &uri.skill_ref(), uri.version.as_ref(), Some(path))
            .await?
            .ok_or_else(not_found)?;
        let file = manifest.file(path).ok_or_else(not_found)?;
        let kind = match is_skill_md(&manifest, path) {
            true if install => Kind::ClientInstall,
            true => Kind::SkillMd,
            false => Kind::File,
        };
        self.usage.count(resolved.version_id, kind);
        Ok(Located {
            uri: uri.clone(),
            digest: file.digest,
            scan: resolved.scan,
            stored: stored.map(|bytes| Stored(Arc::new(bytes))),
        })
    }

    /// What a subscription to `uri` follows for `viewer`: what a read of it serves now
    /// ([`Served`]), or the error a `resources/read` of it answers (a hidden skill answers as an
    /// unknown one). `uri` names a file of a skill (current or pinned; FastMCP's `_manifest`
    /// too) or a directory of one (its root, or a directory below). Not counted as a read.
    pub async fn watch(&self, viewer: &Visibility, uri: &SkillUri) -> Result<Served> {
        let not_found = || Error::NotFound(NotFound::Resource(uri.to_string()));
        let (resolved, manifest) = self
            .resolve_visible(viewer, &uri.skill_ref(), uri.version.as_ref())
            .await?
            .ok_or_else(not_found)?;
        let exists = match &uri.target {
            Target::Root => true,
            Target::Path(path) => {
                path == FASTMCP_MANIFEST
                    || manifest.file(path).is_some()
                    || manifest.files.iter().any(|f| {
                        f.path
                            .strip_prefix(path.as_str())
                            .is_some_and(|rest| rest.starts_with('/'))
                    })
            }
        };
        if !exists {
            return Err(not_found());
        }
        Ok(Served {
            version_id: resolved.version_id,
            yanked: resolved.yanked,
            deprecation: resolved.deprecation,
            scan: resolved.scan,
        })
    }

    /// The bytes of a located file. With [`Keep::Nothing`] (the caller keeps what it makes of
    /// them) bytes not cached already are read and verified, but not cached: each datum is
    /// held in one layer.
    pub async fn read_located(&self, mut file: Located, keep: Keep) -> Result<FileContent> {
        let keep_bytes = keep == Keep::Bytes;
        let bytes = match file.stored.take() {
            Some(Stored(bytes)) => self.stored_blob(&file.digest, bytes, keep_bytes).await?,
            None => self.blob(&file.digest, keep_bytes).await?,
        };
        let Target::Path(path) = &file.uri.target else {
            return Err(Error::NotFound(NotFound::Resource(file.uri.to_string())));
        };
        let mime_type = mime::for_file(path, || mime::looks_like_text(&bytes));
        Ok(FileContent {
            uri: file.uri,
            mime_type,
            digest: file.digest,
            bytes,
            scan: file.scan,
        })
    }

    /// Every file of the version `uri` resolves to (its root, current or pinned), or `None` when
    /// it resolves to nothing.
    pub async fn files_of(
        &self,
        viewer: &Visibility,
        uri: &SkillUri,
    ) -> Result<Option<Vec<FileRecord>>> {
        let Some((_, manifest)) = self
            .resolve_visible(viewer, &uri.skill_ref(), uri.version.as_ref())
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(manifest.files.clone()))
    }

    /// The direct children of the directory at `uri`: a skill root or a subdirectory.
    pub async fn read_dir(&self, viewer: &Visibility, uri: &SkillUri) -> Result<Vec<DirChild>> {
        let not_a_directory = || Error::NotADirectory(uri.to_string());
        let (_, manifest) = self
            .resolve_visible(viewer, &uri.skill_ref(), uri.version.as_ref())
            .await?
            .ok_or_else(not_a_directory)?;
        let prefix = match &uri.target {
            Target::Root => String::new(),
            Target::Path(p) => format!("{p}/"),
        };
        let root = uri.skill_ref().root_uri(uri.version.as_ref());
        let mut children: Vec<DirChild> = Vec::new();
        let mut last_dir: Option<&str> = None;
        for file in manifest
            .files
            .iter()
            .filter(|f| f.path.starts_with(&prefix))
        {
            let rest = &file.path[prefix.len()..];
            match rest.split_once('/') {
                Some((dir, _)) => {
                    if last_dir == Some(dir) {
                        continue;
                    }
                    last_dir = Some(dir);
                    children.push(DirChild {
                        uri: root.join(&format!("{prefix}{dir}")),
                        name: dir.to_owned(),
                        mime_type: mime::DIRECTORY.to_owned(),
                        size: None,
                    });
                }
                None => children.push(DirChild {
                    uri: root.join(&file.path),
                    name: rest.to_owned(),
                    mime_type: mime::for_file(&file.path, || true),
                    size: Some(file.size),
                }),
            }
        }
        if children.is_empty() {
            return Err(not_a_directory());
        }
        let key = |c: &DirChild| c.uri.to_string();
        children.sort_by_cached_key(key);
        children.dedup_by(|a, b| a.uri == b.uri);
        Ok(children)
    }

    /// One page of the current SKILL.md resources `viewer` sees, in URI order.
    pub async fn list_skill_mds(
        &self,
        viewer: &Visibility,
        cursor: Option<&str>,
    ) -> Result<Page<SkillMdResource>> {
        let (rows, next_cursor) = self.listing_page(viewer, cursor).await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.version_id).collect();
        let manifests = self.manifests(&ids).await?;
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            let manifest = manifests
                .get(&row.version_id)
                .ok_or_else(|| super::no_manifest(row.version_id))?;
            let path = skill_md_path(&row.subpath);
            let size = manifest.file(&path).map_or(0, |f| f.size);
            items.push(SkillMdResource {
                uri: row.skill.root_uri(None).join(&path),
                name: row.name,
                description: row.description,
                size,
            });
        }
        Ok(Page { items, next_cursor })
    }

    /// The first `limit` current skills `viewer` sees, in URI order (the legacy discovery
    /// index).
    pub async fn skill_summaries(
        &self,
        viewer: &Visibility,
        limit: u32,
    ) -> Result<Vec<SkillSummary>> {
        Ok(self
            .store
            .list_page("", limit, viewer)
            .await?
            .into_iter()
            .map(|r| SkillSummary {
                uri: r.skill.root_uri(None).join(&skill_md_path(&r.subpath)),
                name: r.name,
                description: r.description,
            })
            .collect())
    }

    /// One page of the listing after `cursor`, and the cursor of the next page.
    pub(super) async fn listing_page(
        &self,
        viewer: &Visibility,
        cursor: Option<&str>,
    ) -> Result<(Vec<ListingRecord>, Option<String>)> {
        let after = decode_cursor(cursor)?;
        let page_size = self.page_size as usize;
        let mut rows = self
            .store
            .list_page(&after, self.page_size + 1, viewer)
            .await?;
        let more = rows.len() > page_size;
        rows.truncate(page_size);
        let next_cursor = more
            .then(|| rows.last().map(|r| encode_cursor(&r.uri)))
            .flatten();
        Ok((rows, next_cursor))
    }

    /// Ranked skills for a free-text query. The search runs on a blocking thread (it takes
    /// milliseconds on a large catalog and fans out over the index's search threads), so it
    /// never holds up the async workers serving other requests.
    pub async fn search(
        &self,
        viewer: &Visibility,
        query: &str,
        namespace: Option<&Namespace>,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let index = self.search.clone().ok_or(Error::SearchUnavailable)?;
        let private = self.current.private_namespaces().await?;
        if let Some(ns) = namespace
            && !viewer.sees(ns, private.contains(ns))
        {
            return Ok(Vec::new());
        }
        // Scores count only the skills the caller sees (never a hidden skill's words).
        let statistics = match viewer {
            Visibility::All => None,
            Visibility::Public { also } => {
                let hidden: Vec<String> = private
                    .iter()
                    .filter(|ns| !also.contains(ns))
                    .map(ToString::to_string)
                    .collect();
                (!hidden.is_empty()).then_some(crate::search::StatisticsScope::Without(hidden))
            }
            Visibility::Only(only) => Some(crate::search::StatisticsScope::Only(
                only.iter().map(ToString::to_string).collect(),
            )),
        };
        // Only callers who miss some namespace pay for filtering hits.
        let filter = match viewer {
            Visibility::All => None,
            Visibility::Public { .. } if namespace.is_some() || private.is_empty() => None,
            _ => Some((viewer.clone(), private)),
        };
        let (query, namespace) = (query.to_owned(), namespace.map(ToString::to_string));
        // Ranked by popularity too, a hit from further down may rise: look at more of them.
        let popular = self.usage.ranks_search();
        let candidates = if popular {
            limit
                .saturating_mul(2)
                .clamp(limit, crate::search::MAX_LIMIT)
        } else {
            limit
        };
        let started = std::time::Instant::now();
        let hits = tokio::task::spawn_blocking(move || {
            let visible = filter.as_ref().map(|(viewer, private)| {
                move |name: &str| {
                    Namespace::new(name).is_ok_and(|ns| viewer.sees(&ns, private.contains(&ns)))
                }
            });
            let visible = visible
                .as_ref()
                .map(|f| f as &crate::search::NamespaceFilter<'_>);
            index.search(
                &query,
                namespace.as_deref(),
                candidates,
                visible,
                statistics.as_ref(),
            )
        })
        .await
        .map_err(|e| Error::Search(crate::search::SearchError::Task(e.to_string())))??;
        let mut hits: Vec<SearchHit> = hits.into_iter().filter_map(SearchHit::from_index).collect();
        if popular && hits.len() > 1 {
            self.rank_by_popularity(&mut hits).await?;
        }
        hits.truncate(limit);
        crate::metrics::search(started);
        Ok(hits)
    }

    /// Multiply each hit's score by its skill's popularity ([`usage::popularity`]) and sort
    /// again as the index does: active skills first, then deprecated, then yanked-only, best
    /// score first within each (a tie keeps the index's order).
    async fn rank_by_popularity(&self, hits: &mut [SearchHit]) -> Result<()> {
        let skills: Vec<SkillRef> = hits.iter().map(|h| h.skill.clone()).collect();
        let reads = self
            .usage_totals_since(&skills, usage::POPULARITY_DAYS)
            .await?;
        for hit in hits.iter_mut() {
            let read = reads
                .get(&hit.skill)
                .map_or(0, crate::core::usage::Totals::all);
            hit.score *= usage::popularity(read);
        }
        hits.sort_by(|a, b| {
            a.status
                .cmp(&b.status)
                .then_with(|| b.score.total_cmp(&a.score))
        });
        Ok(())
    }
}

/// The current entry a listing row names, from its version's manifest (which `manifests` holds).
pub(super) fn listed_entry(
    row: ListingRecord,
    manifests: &std::collections::HashMap<VersionId, Arc<Manifest>>,
) -> Result<SkillEntry> {
    let manifest = manifests
        .get(&row.version_id)
        .cloned()
        .ok_or_else(|| super::no_manifest(row.version_id))?;
    let entry =
        entry_index(&manifest, &row.subpath).ok_or_else(|| super::no_manifest(row.version_id))?;
    Ok(SkillEntry {
        root: row.skill.root_uri(None),
        subpath: row.subpath,
        version_id: row.version_id,
        version: row.version,
        deprecation: row.deprecation,
        yanked: None,
        scan: row.scan,
        requires: None,
        manifest,
        entry,
    })
}

/// Where the skill at `subpath` is in a manifest's entries (a handful: most versions have one).
fn entry_index(manifest: &Manifest, subpath: &str) -> Option<usize> {
    manifest.entries.iter().position(|e| e.subpath == subpath)
}

/// Whether `path` is the SKILL.md of one of the version's skills (its root or a nested one).
fn is_skill_md(manifest: &Manifest, path: &str) -> bool {
    match path.strip_suffix(SKILL_MD) {
        Some("") => true,
        Some(dir) => dir
            .strip_suffix('/')
            .is_some_and(|subpath| entry_index(manifest, subpath).is_some()),
        None => false,
    }
}

/// The path of the SKILL.md of the entry at `subpath`.
fn skill_md_path(subpath: &str) -> String {
    if subpath.is_empty() {
        SKILL_MD.to_owned()
    } else {
        format!("{subpath}/{SKILL_MD}")
    }
}

/// A `skills/list` cursor: the listing URI of the last entry served, base64url.
fn encode_cursor(last_uri: &str) -> String {
    URL_SAFE_NO_PAD.encode(last_uri)
}

fn decode_cursor(cursor: Option<&str>) -> Result<String> {
    let Some(cursor) = cursor else {
        return Ok(String::new());
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::InvalidCursor)?;
    let uri = String::from_utf8(bytes).map_err(|_| Error::InvalidCursor)?;
    if !uri.starts_with(SCHEME_PREFIX) {
        return Err(Error::InvalidCursor);
    }
    Ok(uri)
}

/// The `skills/list` cursor that continues after the entry whose SKILL.md is at `uri`.
pub fn cursor_after(uri: &str) -> String {
    encode_cursor(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let uri = "skill://acme/x/SKILL.md";
        assert_eq!(decode_cursor(Some(&encode_cursor(uri))).unwrap(), uri);
        assert_eq!(decode_cursor(None).unwrap(), "");
        for bad in ["%%%", "aGVsbG8", &URL_SAFE_NO_PAD.encode([0xff, 0xfe])] {
            assert_eq!(
                decode_cursor(Some(bad)).unwrap_err().code(),
                crate::core::Code::InvalidCursor,
                "{bad}"
            );
        }
    }
}
