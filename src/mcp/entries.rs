//! Skill entries on the wire, and `skills/list` pages put together from entries serialized once.
//!
//! A version never changes, so most of its entry (`uri`, the frontmatter verbatim, every
//! resource with its digest and size, and the `_meta` that is the version's own: its version
//! and where it came from) is the same bytes for as long as the version exists. Those bytes are
//! serialized once through the registered [`Codec`] and kept by the registry (its `entries`
//! cache, and the store), the one layer that holds them; what varies per moment (deprecation,
//! yank, the scan verdict, which a rescan may change) is written per request after them.
//!
//! rmcp serializes every result it is handed, so a page of cached bytes cannot travel through
//! its typed `ListSkillsResult`: over HTTP the page goes around it (`super::slots`), and so does
//! a `skills/get` answer's entry (its own part kept here, [`Entries`]).
//!
//! The store keeps these bytes with each listing row ([`Codec`]), tagged with a format: when
//! the format differs, kept entries are dropped and serialized again. The format is never
//! bumped by hand: it is derived from the bytes themselves, the first 8 bytes of the SHA-256
//! of the canonical entries' own parts (`SkillEntry::canonical_examples`, one per line), so any
//! change in what is written for them (a field added, renamed or reordered here or in `Skill`,
//! an rmcp upgrade) is a new format. Those bytes are snapshotted in
//! `tests/snapshots/canonical-entries.jsonl`, and a test shows any change (`UPDATE_SNAPSHOTS=1`
//! writes it after review); a change in serialization must show in the canonical entries, so
//! a new kind of field gets a canonical entry that writes it.

use std::io::Write as _;
use std::sync::{Arc, LazyLock};

use rmcp::model::{MetaObject, Skill, SkillFrontmatter, SkillResource, SkillResources};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::META_PREFIX;
use crate::core::provenance::Provenance;
use crate::core::records::VersionId;
use crate::core::scan::Summary;
use crate::core::{SkillRef, SkillUri, signature};
use crate::registry::cache::{self, Budget, Cache, CacheId};
use crate::registry::{EntryCodec, Listed, Resolved, SkillEntry};

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

/// The version's own `_meta`, which never changes: its version, where it was read from, which
/// of its files are executable (`dev.skillreg/executables`: paths in the skill's directory),
/// who published it from CI (`dev.skillreg/publisher`, trusted publishing), and who signed it
/// (`dev.skillreg/signatures`: `[{by, keyId, identity?, verified, certificate?, keyless?,
/// uri}]`; each bundle is read at its `uri` with `resources/read`, never as a file of the
/// skill).
fn own_meta(entry: &SkillEntry) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(
        format!("{META_PREFIX}version"),
        Value::String(entry.version.to_string()),
    );
    if let Some(provenance) = entry.provenance() {
        meta.insert(format!("{META_PREFIX}source"), source_meta(provenance));
    }
    // Which files are executable (mode 0755), relative to the skill's directory as its
    // resources' URIs are: installers set the bit (SEP-2640 carries no mode).
    let prefix = if entry.subpath.is_empty() {
        String::new()
    } else {
        format!("{}/", entry.subpath)
    };
    let executables: Vec<&str> = entry
        .files()
        .iter()
        .filter(|f| f.mode & 0o111 != 0)
        .map(|f| f.path.strip_prefix(&prefix).unwrap_or(&f.path))
        .collect();
    if !executables.is_empty() {
        meta.insert(
            format!("{META_PREFIX}executables"),
            serde_json::json!(executables),
        );
    }
    if let Some(publisher) = entry.publisher() {
        meta.insert(
            format!("{META_PREFIX}publisher"),
            Value::Object(publisher.clone()),
        );
    }
    if !entry.signatures().is_empty() {
        let version = SkillRef::new(entry.root.namespace.clone(), entry.root.name.clone())
            .at(entry.version.clone());
        let signatures = entry
            .signatures()
            .iter()
            .map(|signed| {
                let mut value = serde_json::to_value(signed).expect("a signature serializes");
                value["uri"] = signature::bundle_uri(&version, signed.by).into();
                value
            })
            .collect();
        meta.insert(format!("{META_PREFIX}signatures"), Value::Array(signatures));
    }
    meta
}

/// What varies per moment: deprecation, yank and the scan verdict (always last).
fn moment_meta(entry: &SkillEntry) -> Map<String, Value> {
    moment_meta_of(
        entry.deprecation.as_deref(),
        entry.yanked.as_deref(),
        entry.requires.as_deref(),
        &entry.scan,
    )
}

fn moment_meta_of(
    deprecation: Option<&str>,
    yanked: Option<&str>,
    requires: Option<&Resolved>,
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
    if let Some(requires) = requires {
        meta.insert(format!("{META_PREFIX}requires"), requires_meta(requires));
    }
    meta.insert(format!("{META_PREFIX}scan"), scan_meta(scan));
    meta
}

/// What a version requires as hosts see it in `_meta` (`dev.skillreg/requires`): each skill
/// with its range as declared and the version it resolves to now (`null` when none does), and
/// the MCP servers it expects: `{"skills":[{"skill","range","resolved","uri"}],
/// "mcpServers":[{"name","registry"?}]}`. `uri` is the resolved version's pinned SKILL.md.
pub fn requires_meta(requires: &Resolved) -> Value {
    let skills: Vec<Value> = requires
        .skills
        .iter()
        .map(|r| {
            let uri = r
                .resolved
                .as_ref()
                .map(|v| r.skill.clone().at(v.clone()).skill_md_uri().to_string());
            serde_json::json!({
                "skill": r.skill.to_string(),
                "range": r.range.to_string(),
                "resolved": r.resolved.as_ref().map(ToString::to_string),
                "uri": uri,
            })
        })
        .collect();
    serde_json::json!({ "skills": skills, "mcpServers": requires.mcp_servers })
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

/// `name` and `description` are checked strings in every stored frontmatter. Taken out without
/// moving the others (`shift_remove`), so an entry's frontmatter keeps the author's order.
fn take_string(map: &mut Map<String, Value>, key: &str) -> String {
    match map.shift_remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The entries of `skills/get` answers; one per process (every MCP session shares it). Never
/// invalidated: a version's own part is the same for as long as the version exists.
pub struct Entries {
    /// The [`own_part`] of `skills/get` answers' entries, by version, subpath and whether the
    /// URI is pinned (the URIs in an entry name the version as it was asked for).
    own: Cache<(VersionId, String, bool), Arc<str>>,
}

impl Entries {
    pub fn new(budget: &Budget) -> Self {
        Self {
            own: budget.cache(CacheId::GetEntries, |(_, subpath, _), own| {
                cache::string_bytes(subpath) + cache::arc_bytes(own.len())
            }),
        }
    }

    /// A `skills/get` entry serialized, the same bytes as rmcp writes for [`skill`]: its
    /// version's own part made once and kept, then what varies per moment.
    pub fn serialized(&self, entry: &SkillEntry) -> Vec<u8> {
        let key = (entry.version_id, entry.subpath.clone(), entry.is_pinned());
        let own = match self.own.get(&key) {
            Some(own) => own,
            None => {
                let own: Arc<str> = own_part(entry).into();
                self.own.insert(key, own.clone());
                own
            }
        };
        let mut out = Vec::with_capacity(own.len() + 256);
        out.extend_from_slice(own.as_bytes());
        close_entry(
            &mut out,
            entry.deprecation.as_deref(),
            entry.yanked.as_deref(),
            entry.requires.as_deref(),
            &entry.scan,
        );
        out
    }

    /// The entries of a page of current versions, as the elements of a JSON array (without the
    /// brackets): the immutable part as the registry has it (through the registered [`Codec`]),
    /// or, without a codec, serialized now; then what varies per moment.
    pub fn page(entries: &[Listed]) -> Vec<u8> {
        let mut out = Vec::with_capacity(entries.len() * 1536);
        for (i, listed) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match listed {
                Listed::Kept {
                    own,
                    deprecation,
                    requires,
                    scan,
                } => {
                    out.extend_from_slice(own.as_bytes());
                    close_entry(
                        &mut out,
                        deprecation.as_deref(),
                        None,
                        requires.as_deref(),
                        scan,
                    );
                }
                Listed::Built(entry) => {
                    debug_assert!(!entry.is_pinned(), "pages list current versions");
                    out.extend_from_slice(own_part(entry).as_bytes());
                    close_entry(
                        &mut out,
                        entry.deprecation.as_deref(),
                        entry.yanked.as_deref(),
                        entry.requires.as_deref(),
                        &entry.scan,
                    );
                }
            }
        }
        out
    }
}

/// The version's own part of an entry: a `Skill` whose `_meta` holds its version and source,
/// serialized and left open:
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

/// The format of [`Codec`]'s bytes, derived from them: see [`canonical_entries`].
static FORMAT: LazyLock<i64> = LazyLock::new(|| format_of(&canonical_entries()));

/// The [`own_part`] of each of the registry's canonical entries (`SkillEntry::canonical_examples`),
/// one per line: what `tests/snapshots/canonical-entries.jsonl` holds.
fn canonical_entries() -> String {
    let mut lines = String::new();
    for entry in SkillEntry::canonical_examples() {
        lines.push_str(&own_part(&entry));
        lines.push('\n');
    }
    lines
}

/// The first 8 bytes of the SHA-256 of `canonical`, as a positive `i64` (never 0, which the
/// store reads as "none kept").
fn format_of(canonical: &str) -> i64 {
    let digest = Sha256::digest(canonical.as_bytes());
    let mut first = [0; 8];
    first.copy_from_slice(&digest[..8]);
    (i64::from_be_bytes(first) & i64::MAX).max(1)
}

impl EntryCodec for Codec {
    fn format(&self) -> i64 {
        *FORMAT
    }

    fn serialize(&self, entry: &SkillEntry) -> String {
        own_part(entry)
    }
}

/// The per-moment members of an entry's `_meta` ([`moment_meta_of`], written as serde writes
/// that map, without building it), then the closing braces.
fn close_entry(
    out: &mut Vec<u8>,
    deprecation: Option<&str>,
    yanked: Option<&str>,
    requires: Option<&Resolved>,
    scan: &Summary,
) {
    let mut member = |key: &str, inner: Option<(&str, &str)>| {
        let _ = write!(out, ",\"{META_PREFIX}{key}\":");
        if let Some((name, text)) = inner {
            let _ = write!(out, "{{\"{name}\":");
            serde_json::to_writer(&mut *out, text).expect("a string serializes");
            out.push(b'}');
        }
    };
    if let Some(message) = deprecation {
        member("deprecated", Some(("message", message)));
    }
    if let Some(reason) = yanked {
        member("yanked", Some(("reason", reason)));
    }
    if let Some(requires) = requires {
        let _ = write!(out, ",\"{META_PREFIX}requires\":");
        serde_json::to_writer(&mut *out, &requires_meta(requires)).expect("JSON serializes");
    }
    let _ = write!(out, ",\"{META_PREFIX}scan\":");
    serde_json::to_writer(&mut *out, scan).expect("a scan summary serializes");
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_entries_match_the_snapshot() {
        let actual = canonical_entries();
        crate::testing::assert_snapshot(
            "canonical-entries.jsonl",
            &actual,
            "the serialized entries changed, and with them the format of kept entries (which are \
             then serialized again)",
        );
        assert_eq!(
            Codec.format(),
            format_of(&actual),
            "the format is the snapshot's"
        );
    }

    #[test]
    fn a_serialized_entry_is_what_rmcp_writes_for_the_typed_one() {
        let entries = Entries::new(&Budget::new(1 << 20, std::time::Duration::from_secs(1)));
        let mut all = SkillEntry::canonical_examples();
        // The same entries as a pinned URI names them.
        for current in SkillEntry::canonical_examples() {
            let mut pinned = current.clone();
            let root = current.root.to_string();
            let (ns, name) = root["skill://".len()..].split_once('/').unwrap();
            let at = format!("skill://{ns}/@{}/{name}", current.version);
            pinned.root = SkillUri::parse(&at).unwrap();
            assert!(pinned.is_pinned(), "{at}");
            all.push(pinned);
        }
        for mut entry in all {
            for (deprecation, yanked) in [(None, None), (Some("use b"), Some("broken \"x\""))] {
                entry.deprecation = deprecation.map(str::to_owned);
                entry.yanked = yanked.map(str::to_owned);
                // What a version requires rides with what varies per moment.
                entry.requires = yanked.map(|_| Arc::new(example_requires()));
                if yanked.is_some() {
                    entry.scan = Summary {
                        verdict: crate::core::scan::Verdict::Flagged,
                        counts: [
                            (crate::core::scan::Severity::High, 2),
                            (crate::core::scan::Severity::Low, 1),
                        ]
                        .into(),
                    };
                }
                let typed = serde_json::to_vec(&skill(&entry)).unwrap();
                // Made, then kept: the same bytes.
                for _ in 0..2 {
                    assert_eq!(
                        String::from_utf8(entries.serialized(&entry)).unwrap(),
                        String::from_utf8(typed.clone()).unwrap()
                    );
                }
            }
        }
    }

    fn example_requires() -> Resolved {
        let (style, lint) = (
            SkillRef::parse_joined("acme/style").unwrap(),
            SkillRef::parse_joined("acme/lint").unwrap(),
        );
        Resolved {
            skills: vec![
                crate::registry::ResolvedSkill {
                    skill: style,
                    range: crate::core::Requirement::parse("^1.2").unwrap(),
                    resolved: Some(crate::core::SkillVersion::parse("1.4.0").unwrap()),
                },
                crate::registry::ResolvedSkill {
                    skill: lint,
                    range: crate::core::Requirement::parse(">=2").unwrap(),
                    resolved: None,
                },
            ],
            mcp_servers: vec![crate::core::requires::McpRequirement {
                name: "github".into(),
                registry: Some("https://mcp.example/github".into()),
            }],
        }
    }

    #[test]
    fn requirements_are_served_with_what_they_resolve_to() {
        let meta = requires_meta(&example_requires());
        assert_eq!(
            meta,
            serde_json::json!({
                "skills": [
                    {"skill": "acme/style", "range": "^1.2", "resolved": "1.4.0",
                     "uri": "skill://acme/@1.4.0/style/SKILL.md"},
                    {"skill": "acme/lint", "range": ">=2", "resolved": null, "uri": null},
                ],
                "mcpServers": [{"name": "github", "registry": "https://mcp.example/github"}],
            })
        );
    }

    #[test]
    fn the_entry_format_is_stable_positive_and_follows_the_bytes() {
        let format = Codec.format();
        assert!(format > 0, "{format}");
        assert_eq!(Codec.format(), format);
        assert_eq!(format_of(&canonical_entries()), format);
        let mut changed = canonical_entries();
        changed.insert(1, ' ');
        assert_ne!(format_of(&changed), format, "other bytes, another format");
    }

    #[test]
    fn canonical_entries_exercise_every_own_part() {
        let entries = SkillEntry::canonical_examples();
        let text = canonical_entries();
        assert!(entries.iter().any(|e| e.subpath.is_empty()));
        assert!(entries.iter().any(|e| !e.subpath.is_empty()));
        assert!(entries.iter().any(|e| e.provenance().is_none()));
        assert!(entries.iter().any(|e| e.files().len() > 1));
        for needle in [
            r#""license":"MIT""#,
            r#""type":"git""#,
            r#""server":"stdio""#,
            r#""server":"https://mirror.example/mcp""#,
            "dev.skillreg/version",
            r#""dev.skillreg/executables":["scripts/run.sh","tools/lint/fix.sh"]"#,
            r#""dev.skillreg/executables":["fix.sh"]"#,
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
        assert!(!text.contains("secret"), "{text}");
        // The frontmatter keeps the author's order (license, allowed-tools, metadata) once name
        // and description are taken out.
        let first = text.lines().next().unwrap();
        let at = |key: &str| first.find(&format!("\"{key}\":")).unwrap();
        assert!(
            at("license") < at("allowed-tools") && at("allowed-tools") < at("metadata"),
            "{first}"
        );
        for line in text.lines() {
            assert!(line.starts_with(r#"{"uri":"skill://canonical/"#), "{line}");
        }
    }
}
