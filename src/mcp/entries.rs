//! Skill entries on the wire, and `skills/list` pages put together from entries serialized once.
//!
//! A version never changes, so most of its entry (`uri`, the frontmatter verbatim, every
//! resource with its digest and size, and the `_meta` that is the version's own: its version
//! and where it came from) is the same bytes for as long as the version exists. Those bytes are
//! serialized on first use and kept in a bounded cache keyed by version and subpath, shared by
//! every session; what varies per moment (deprecation, yank, the scan verdict, which a rescan
//! may change) is written per request after them.
//!
//! rmcp serializes every result it is handed, so a page of cached bytes cannot travel through
//! its typed `ListSkillsResult`: over HTTP the page goes around it (`super::slots`).

use std::io::Write as _;
use std::sync::Arc;

use rmcp::model::{MetaObject, Skill, SkillFrontmatter, SkillResource, SkillResources};
use serde_json::{Map, Value};

use super::META_PREFIX;
use crate::core::SkillUri;
use crate::core::provenance::Provenance;
use crate::core::scan::Summary;
use crate::registry::VersionId;
use crate::registry::cache::Cache;
use crate::registry::{EntryCodec, Listed, SkillEntry};

/// Total bytes of serialized entries kept (about 25,000 typical entries: a 1k catalog whole).
const ENTRY_CACHE_BYTES: usize = 32 << 20;
/// An entry larger than this (thousands of files) is serialized on every use instead.
const ENTRY_MAX_BYTES: usize = 1 << 20;

/// A skill entry as rmcp's typed `Skill`: frontmatter verbatim, every file with its digest and
/// size, and `_meta` with the version, its source, and deprecation, yank and the scan.
pub fn skill(entry: &SkillEntry) -> Skill {
    with_moment(own_skill(entry), entry)
}

/// A skill entry without what varies per moment: what [`Entries::skill`] keeps.
fn own_skill(entry: &SkillEntry) -> Skill {
    skill_with(entry, own_meta(entry))
}

/// `skill` with what varies per moment added to its `_meta`, after the version's own members.
fn with_moment(mut skill: Skill, entry: &SkillEntry) -> Skill {
    let moment = moment_meta(entry);
    match &mut skill.meta {
        Some(MetaObject(meta)) => meta.extend(moment),
        None => skill.meta = Some(MetaObject(moment)),
    }
    skill
}

fn skill_with(entry: &SkillEntry, meta: Map<String, Value>) -> Skill {
    let root = entry.root.to_string();
    let resources = entry
        .files()
        .iter()
        .map(|f| {
            SkillResource::new(
                SkillUri::append(&root, &f.path),
                f.digest.to_string(),
                f.size,
            )
        })
        .collect();
    let mut extra = entry.frontmatter().clone();
    let name = take_string(&mut extra, "name");
    let description = take_string(&mut extra, "description");
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = extra;
    Skill::new(
        entry.uri().to_string(),
        frontmatter,
        SkillResources::Files(resources),
    )
    .with_meta(MetaObject(meta))
}

/// The version's own `_meta`, which never changes: its version, and where it was read from.
fn own_meta(entry: &SkillEntry) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(
        format!("{META_PREFIX}version"),
        Value::String(entry.version.to_string()),
    );
    if let Some(provenance) = entry.provenance() {
        meta.insert(format!("{META_PREFIX}source"), source_meta(provenance));
    }
    meta
}

/// What varies per moment: deprecation, yank and the scan verdict (always last).
fn moment_meta(entry: &SkillEntry) -> Map<String, Value> {
    moment_meta_of(
        entry.deprecation.as_deref(),
        entry.yanked.as_deref(),
        &entry.scan,
    )
}

fn moment_meta_of(
    deprecation: Option<&str>,
    yanked: Option<&str>,
    scan: &Summary,
) -> Map<String, Value> {
    let mut meta = Map::new();
    if let Some(message) = deprecation {
        meta.insert(
            format!("{META_PREFIX}deprecated"),
            serde_json::json!({ "message": message }),
        );
    }
    if let Some(reason) = yanked {
        meta.insert(
            format!("{META_PREFIX}yanked"),
            serde_json::json!({ "reason": reason }),
        );
    }
    meta.insert(format!("{META_PREFIX}scan"), scan_meta(scan));
    meta
}

/// A version's content scan as hosts see it in `_meta` (`dev.skillreg/scan`): the verdict
/// (`clean`, `flagged`, `blocked` or `unscanned`) and the findings per severity.
pub fn scan_meta(summary: &Summary) -> Value {
    serde_json::json!({ "verdict": summary.verdict, "counts": summary.counts })
}

/// Where a version was read from as hosts see it in `_meta` (`dev.skillreg/source`):
/// `{"type":"git","repository","ref","commit","path"}` or `{"type":"mcp","server","uri"}`.
fn source_meta(provenance: &Provenance) -> Value {
    match provenance {
        Provenance::Git {
            repository,
            reference,
            commit,
            path,
        } => serde_json::json!({
            "type": "git", "repository": repository, "ref": reference, "commit": commit, "path": path,
        }),
        Provenance::Mcp { server, uri } => {
            serde_json::json!({ "type": "mcp", "server": server, "uri": uri })
        }
    }
}

/// `name` and `description` are checked strings in every stored frontmatter.
fn take_string(map: &mut Map<String, Value>, key: &str) -> String {
    match map.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The serialized entries of current versions, by version and subpath; one per process (every
/// MCP session shares it). Never invalidated: a version's entry is the same bytes for as long
/// as the version exists.
pub struct Entries {
    cache: Cache<(VersionId, String), Arc<str>>,
    /// `skills/get` answers' entries without what varies per moment, typed (rmcp serializes
    /// what a handler returns), by version, subpath and whether the URI is pinned (the URIs in
    /// an entry name the version as it was asked for).
    typed: Cache<(VersionId, String, bool), Typed>,
}

/// A kept [`own_skill`], with its weight: its serialized length, twice (a typed entry holds its
/// text in many allocations).
#[derive(Clone)]
struct Typed {
    skill: Arc<Skill>,
    weight: usize,
}

impl Default for Entries {
    fn default() -> Self {
        Self {
            cache: Cache::weighed(ENTRY_CACHE_BYTES, ENTRY_MAX_BYTES, None, |b| b.len()),
            typed: Cache::weighed(ENTRY_CACHE_BYTES, ENTRY_MAX_BYTES, None, |t| t.weight),
        }
    }
}

impl Entries {
    /// A `skills/get` entry: its version's own part made once and kept, then what varies per
    /// moment. The same as [`skill`] makes.
    pub fn skill(&self, entry: &SkillEntry) -> Skill {
        let key = (entry.version_id, entry.subpath.clone(), entry.is_pinned());
        let own = match self.typed.get(&key) {
            Some(kept) => kept.skill,
            None => {
                let skill = Arc::new(own_skill(entry));
                let weight = 2 * serde_json::to_vec(&*skill).map_or(usize::MAX, |b| b.len());
                self.typed.insert(
                    key,
                    Typed {
                        skill: skill.clone(),
                        weight,
                    },
                );
                skill
            }
        };
        with_moment(Skill::clone(&own), entry)
    }

    /// The entries of a page of current versions, as the elements of a JSON array (without the
    /// brackets): the immutable part as the registry has it (through the registered [`Codec`]),
    /// or, without a codec, from this cache or serialized now; then what varies per moment.
    pub fn page(&self, entries: &[Listed]) -> Vec<u8> {
        let mut out = Vec::with_capacity(entries.len() * 1536);
        for (i, listed) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let moment = match listed {
                Listed::Kept {
                    own,
                    deprecation,
                    scan,
                } => {
                    out.extend_from_slice(own.as_bytes());
                    moment_meta_of(deprecation.as_deref(), None, scan)
                }
                Listed::Built(entry) => {
                    out.extend_from_slice(self.own_part(entry).as_bytes());
                    moment_meta(entry)
                }
            };
            close_entry(&mut out, moment);
        }
        out
    }

    /// The immutable part of a current entry, from the cache or serialized now.
    fn own_part(&self, entry: &SkillEntry) -> Arc<str> {
        debug_assert!(!entry.is_pinned(), "pages list current versions");
        let key = (entry.version_id, entry.subpath.clone());
        if let Some(body) = self.cache.get(&key) {
            return body;
        }
        let body: Arc<str> = own_part(entry).into();
        self.cache.insert(key, body.clone());
        body
    }
}

/// The version's own part of a current entry: a `Skill` whose `_meta` holds its version and
/// source, serialized and left open:
/// `{"uri":…,"frontmatter":…,"resources":[…],"_meta":{"dev.skillreg/version":…` (serde writes
/// `_meta` last, and the version first in it). Compact JSON, so one line.
fn own_part(entry: &SkillEntry) -> String {
    let mut text = serde_json::to_string(&skill_with(entry, own_meta(entry)))
        .expect("a skill entry serializes");
    debug_assert!(text.ends_with("}}"));
    text.truncate(text.len() - 2);
    text
}

/// The serialization of [`own_part`], which the store keeps with each listing row.
pub struct Codec;

/// Bump whenever [`own_part`] writes other bytes for some entry (a field added, renamed or
/// reordered in `Skill` or in the version's own `_meta`, or an rmcp upgrade that does so): the
/// entries kept in the previous format are then dropped and serialized again. 2: a mirrored
/// version's `_meta` source names its upstream as `core::provenance::public_server` shows it
/// (`stdio`, a URL without user information or query), where format 1 kept the command line.
const CODEC_FORMAT: i64 = 2;

impl EntryCodec for Codec {
    fn format(&self) -> i64 {
        CODEC_FORMAT
    }

    fn serialize(&self, entry: &SkillEntry) -> String {
        own_part(entry)
    }
}

/// The per-moment members of an entry's `_meta`, then the closing braces.
fn close_entry(out: &mut Vec<u8>, moment: Map<String, Value>) {
    for (key, value) in moment {
        out.push(b',');
        serde_json::to_writer(&mut *out, &key).expect("a string serializes");
        out.push(b':');
        serde_json::to_writer(&mut *out, &value).expect("a JSON value serializes");
    }
    let _ = out.write_all(b"}}");
}
