//! Requirements: the other skills a skill needs, and the MCP servers it expects the agent to have.
//!
//! # Where a skill declares them
//!
//! In its root `SKILL.md`, as two `metadata` keys under the registry's prefix (the Agent Skills
//! format has no field for them, and `metadata` maps strings to strings, so the skill stays valid
//! Agent Skills and the declaration travels with its files):
//!
//! ```yaml
//! metadata:
//!   dev.skillreg/requires: "acme/style-guide@^1.2; acme/lint@>=0.3, <1; acme/glossary"
//!   dev.skillreg/requires-mcp: "github; postgres https://registry.modelcontextprotocol.io/v0/servers/postgres"
//! ```
//!
//! - `dev.skillreg/requires`: skills, separated by `;` or line breaks, each `namespace/name`
//!   with an optional `@` and a version requirement (a semver range, `^1.2`, `>=1, <2`; an exact
//!   version; none, `*` or `latest` for any).
//! - `dev.skillreg/requires-mcp`: MCP servers, separated the same way, each a name and,
//!   optionally after a space, an `http(s)` URL where it is registered. They are reported to whoever
//!   installs the skill, never installed.
//!
//! A nested skill's declaration is not read (a warning says so): a version is one node of the
//! graph. `--fix` never touches either key.
//!
//! # What is checked where
//!
//! The syntax here ([`declared`], run by [`super::bundle::validate`] on the client and on the
//! server alike); the graph by the registry at publish (every edge names a skill whose installable
//! versions satisfy its range, visible to whoever sees the requiring skill, and no cycle:
//! [`find_cycle`]); the whole graph of an install by the client ([`resolve`]).

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::fmt;

use serde_json::{Map, Value};

use super::code::Code;
use super::refs::SkillRef;
use super::version::{Requirement, SkillVersion};

/// The `metadata` key listing the skills a skill requires.
pub const SKILLS_KEY: &str = "dev.skillreg/requires";
/// The `metadata` key listing the MCP servers a skill expects.
pub const MCP_KEY: &str = "dev.skillreg/requires-mcp";
/// The most requirements of each kind one skill may declare.
pub const MAX_REQUIREMENTS: usize = 64;
/// The longest MCP server name or URL accepted.
const MAX_MCP_TEXT: usize = 512;

/// What a skill declares it needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requires {
    /// Other skills, in declaration order; each skill once.
    pub skills: Vec<SkillRequirement>,
    pub mcp_servers: Vec<McpRequirement>,
}

impl Requires {
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.mcp_servers.is_empty()
    }
}

/// One required skill and the versions that satisfy it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRequirement {
    pub skill: SkillRef,
    pub range: Requirement,
}

impl fmt::Display for SkillRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.skill, self.range)
    }
}

/// An MCP server a skill expects the agent to have.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct McpRequirement {
    pub name: String,
    /// Where the server is registered (an `http(s)` URL), when the author said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

/// Why a declaration does not parse. Code `requires_invalid`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("metadata.{key}: {reason}")]
pub struct RequiresError {
    pub key: &'static str,
    pub reason: String,
}

impl RequiresError {
    pub fn code(&self) -> Code {
        Code::RequiresInvalid
    }
}

/// The requirements `frontmatter` declares (none when it declares none).
pub fn declared(frontmatter: &Map<String, Value>) -> Result<Requires, RequiresError> {
    let Some(Value::Object(metadata)) = frontmatter.get("metadata") else {
        return Ok(Requires::default());
    };
    let text = |key: &'static str| -> Result<Option<&str>, RequiresError> {
        match metadata.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(RequiresError {
                key,
                reason: "must be a string".into(),
            }),
        }
    };
    let mut requires = Requires::default();
    if let Some(text) = text(SKILLS_KEY)? {
        let err = |reason: String| RequiresError {
            key: SKILLS_KEY,
            reason,
        };
        for item in items(text) {
            let (path, range) = item.split_once('@').unwrap_or((item, ""));
            let skill = SkillRef::parse_joined(path.trim()).map_err(|e| {
                err(format!(
                    "{item:?} does not name a skill as namespace/name[@range] ({e})"
                ))
            })?;
            let range = Requirement::parse(range).map_err(|e| err(format!("{item:?}: {e}")))?;
            if requires.skills.iter().any(|r| r.skill == skill) {
                return Err(err(format!("{skill} is named twice")));
            }
            requires.skills.push(SkillRequirement { skill, range });
        }
        if requires.skills.len() > MAX_REQUIREMENTS {
            return Err(err(format!(
                "names {} skills; at most {MAX_REQUIREMENTS} are allowed",
                requires.skills.len()
            )));
        }
    }
    if let Some(text) = text(MCP_KEY)? {
        let err = |reason: String| RequiresError {
            key: MCP_KEY,
            reason,
        };
        for item in items(text) {
            let mut words = item.split_whitespace();
            let name = words.next().unwrap_or_default();
            let registry = words.next();
            if words.next().is_some() {
                return Err(err(format!(
                    "{item:?}: give a server's name and, optionally, one URL"
                )));
            }
            if name.len() > MAX_MCP_TEXT || name.chars().any(char::is_control) {
                return Err(err(format!("{item:?} is not a server name")));
            }
            if let Some(url) = registry
                && (url.len() > MAX_MCP_TEXT
                    || !(url.starts_with("https://") || url.starts_with("http://")))
            {
                return Err(err(format!("{url:?} is not an http(s) URL")));
            }
            if requires.mcp_servers.iter().any(|m| m.name == name) {
                return Err(err(format!("{name} is named twice")));
            }
            requires.mcp_servers.push(McpRequirement {
                name: name.to_owned(),
                registry: registry.map(str::to_owned),
            });
        }
        if requires.mcp_servers.len() > MAX_REQUIREMENTS {
            return Err(err(format!(
                "names {} servers; at most {MAX_REQUIREMENTS} are allowed",
                requires.mcp_servers.len()
            )));
        }
    }
    Ok(requires)
}

/// Whether `frontmatter` has either key, well formed or not.
pub fn declares(frontmatter: &Map<String, Value>) -> bool {
    frontmatter
        .get("metadata")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(SKILLS_KEY) || m.contains_key(MCP_KEY))
}

/// The non-empty items of a list separated by `;` or line breaks, trimmed.
fn items(text: &str) -> impl Iterator<Item = &str> {
    text.split([';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A path through the graph that leads from `start`'s requirements back to `start`, if one does:
/// `[start, a, b, start]`. `edges` gives the skills a skill requires (as resolved now).
pub fn find_cycle(
    start: &SkillRef,
    mut edges: impl FnMut(&SkillRef) -> Vec<SkillRef>,
) -> Option<Vec<SkillRef>> {
    // Breadth first, remembering how each skill was reached: the shortest cycle is named.
    let mut came_from: BTreeMap<SkillRef, SkillRef> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    let mut seen = HashSet::from([start.clone()]);
    while let Some(skill) = queue.pop_front() {
        for next in edges(&skill) {
            if &next == start {
                let mut path = vec![skill.clone()];
                let mut at = skill;
                while let Some(prev) = came_from.get(&at) {
                    path.push(prev.clone());
                    at = prev.clone();
                }
                path.reverse();
                path.push(start.clone());
                return Some(path);
            }
            if seen.insert(next.clone()) {
                came_from.insert(next.clone(), skill.clone());
                queue.push_back(next);
            }
        }
    }
    None
}

/// A path of skills as an error message names it: `a/x -> a/y -> a/x`.
pub fn show_path(path: &[SkillRef]) -> String {
    path.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// What the resolver asks of a catalog: the versions a skill offers, installable ones only
/// (neither yanked nor revoked), newest first; and what one of them requires. `None` when the
/// catalog has not been asked yet (the caller fetches it and runs [`resolve`] again).
pub trait Catalog {
    /// `Some(&[])` when the skill is not served.
    fn versions(&self, skill: &SkillRef) -> Option<&[SkillVersion]>;
    fn requires(&self, skill: &SkillRef, version: &SkillVersion) -> Option<&[SkillRequirement]>;
}

/// Who asked for a version: the command line (or the lock's roots), or another skill.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Requirer {
    Root,
    Skill(SkillRef),
}

impl fmt::Display for Requirer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Root => f.write_str("the request"),
            Self::Skill(s) => fmt::Display::fmt(s, f),
        }
    }
}

/// One skill of a resolved graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub skill: SkillRef,
    pub version: SkillVersion,
    /// Who requires it, with the range each asked for (`Root` for a skill asked for directly).
    pub required_by: Vec<(Requirer, Requirement)>,
}

impl Member {
    /// Asked for directly, not only as another skill's requirement.
    pub fn is_root(&self) -> bool {
        self.required_by.iter().any(|(r, _)| *r == Requirer::Root)
    }

    /// Every range it must satisfy, as one requirement text (`^1.2, >=1.3`).
    pub fn ranges(&self) -> String {
        let mut ranges: Vec<String> = self
            .required_by
            .iter()
            .map(|(_, r)| r.to_string())
            .filter(|r| r != "*")
            .collect();
        ranges.sort();
        ranges.dedup();
        if ranges.is_empty() {
            "*".into()
        } else {
            ranges.join(", ")
        }
    }
}

/// How resolving a graph ends when it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// Ask the catalog for the versions of this skill, then resolve again.
    NeedVersions(SkillRef),
    /// Ask the catalog what this version requires, then resolve again.
    NeedRequires(SkillRef, SkillVersion),
    /// No version satisfies every requirer; the message names them.
    Conflict { skill: SkillRef, message: String },
}

/// Rounds of choosing before a graph that keeps changing its mind is given up on.
const MAX_ROUNDS: usize = 64;

/// Resolve the graph below `roots` to one version per skill: the newest installable version that
/// satisfies every range asked of it by the members chosen. Rounds repeat until the choice stops
/// changing (a member that moves changes what it asks of others). There is no backtracking over
/// a requirer's own version: when the newest fitting versions conflict, the conflict is reported
/// with both requirers named, and pinning one of them resolves it.
pub fn resolve(
    roots: &[(SkillRef, Requirement)],
    catalog: &impl Catalog,
) -> Result<Vec<Member>, Unresolved> {
    let mut chosen: BTreeMap<SkillRef, SkillVersion> = BTreeMap::new();
    for _ in 0..MAX_ROUNDS {
        // What every member reachable from the roots asks, under the current choice.
        let mut asked: BTreeMap<SkillRef, Vec<(Requirer, Requirement)>> = BTreeMap::new();
        let mut queue: VecDeque<SkillRef> = VecDeque::new();
        for (skill, range) in roots {
            asked
                .entry(skill.clone())
                .or_default()
                .push((Requirer::Root, range.clone()));
            queue.push_back(skill.clone());
        }
        let mut expanded: BTreeSet<SkillRef> = BTreeSet::new();
        let mut next: BTreeMap<SkillRef, SkillVersion> = BTreeMap::new();
        while let Some(skill) = queue.pop_front() {
            if !expanded.insert(skill.clone()) {
                continue;
            }
            let version = match chosen.get(&skill) {
                Some(v) => v.clone(),
                None => pick(&skill, &asked[&skill], catalog)?,
            };
            let requires = catalog
                .requires(&skill, &version)
                .ok_or_else(|| Unresolved::NeedRequires(skill.clone(), version.clone()))?;
            for r in requires {
                asked
                    .entry(r.skill.clone())
                    .or_default()
                    .push((Requirer::Skill(skill.clone()), r.range.clone()));
                queue.push_back(r.skill.clone());
            }
            next.insert(skill, version);
        }
        // With everything asked known, choose again.
        let mut settled = true;
        for (skill, version) in next.iter_mut() {
            let fits = pick(skill, &asked[skill], catalog)?;
            if &fits != version {
                *version = fits;
                settled = false;
            }
        }
        if settled && next == chosen {
            return Ok(next
                .into_iter()
                .map(|(skill, version)| Member {
                    required_by: asked.remove(&skill).unwrap_or_default(),
                    skill,
                    version,
                })
                .collect());
        }
        chosen = next;
    }
    Err(Unresolved::Conflict {
        skill: roots.first().map(|(s, _)| s.clone()).expect("a root"),
        message: format!("the graph did not settle after {MAX_ROUNDS} rounds"),
    })
}

/// The newest version of `skill` that satisfies everything asked of it.
fn pick(
    skill: &SkillRef,
    asked: &[(Requirer, Requirement)],
    catalog: &impl Catalog,
) -> Result<SkillVersion, Unresolved> {
    let versions = catalog
        .versions(skill)
        .ok_or_else(|| Unresolved::NeedVersions(skill.clone()))?;
    if let Some(v) = versions
        .iter()
        .find(|v| asked.iter().all(|(_, r)| r.matches(v)))
    {
        return Ok(v.clone());
    }
    let who = asked
        .iter()
        .map(|(by, r)| format!("{by} requires {r}"))
        .collect::<Vec<_>>()
        .join(" and ");
    let offered = if versions.is_empty() {
        "none is offered".to_owned()
    } else {
        format!(
            "offered: {}",
            versions
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let message = if asked.len() > 1 {
        format!("{skill}: {who}; no version satisfies all of them ({offered})")
    } else {
        format!("{skill}: {who}; no installable version satisfies it ({offered})")
    };
    Err(Unresolved::Conflict {
        skill: skill.clone(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn skill(s: &str) -> SkillRef {
        SkillRef::parse_joined(s).unwrap()
    }

    fn v(s: &str) -> SkillVersion {
        SkillVersion::parse(s).unwrap()
    }

    fn fm(metadata: serde_json::Value) -> Map<String, Value> {
        serde_json::json!({"name": "x", "description": "d", "metadata": metadata})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn declarations_parse_in_order_with_ranges_and_servers() {
        let r = declared(&fm(serde_json::json!({
            SKILLS_KEY: "acme/style@^1.2; acme/lint@>=0.3, <1\n  acme/glossary ;",
            MCP_KEY: "github; postgres https://mcp.example/servers/postgres",
        })))
        .unwrap();
        let shown: Vec<String> = r.skills.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            ["acme/style@^1.2", "acme/lint@>=0.3, <1", "acme/glossary@*"]
        );
        assert!(r.skills[1].range.matches(&v("0.9.1")));
        assert!(!r.skills[1].range.matches(&v("1.0.0")));
        assert_eq!(r.mcp_servers[0].name, "github");
        assert_eq!(r.mcp_servers[0].registry, None);
        assert_eq!(
            r.mcp_servers[1].registry.as_deref(),
            Some("https://mcp.example/servers/postgres")
        );
        assert!(
            declared(&fm(serde_json::json!({"author": "me"})))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn bad_declarations_are_refused_naming_the_item() {
        for (metadata, needle) in [
            (
                serde_json::json!({SKILLS_KEY: "style-guide"}),
                "namespace/name",
            ),
            (serde_json::json!({SKILLS_KEY: "acme/Style"}), "acme/Style"),
            (serde_json::json!({SKILLS_KEY: "acme/a@^x"}), "acme/a@^x"),
            (serde_json::json!({SKILLS_KEY: "acme/a; acme/a@1"}), "twice"),
            (serde_json::json!({MCP_KEY: "gh ftp://x"}), "ftp://x"),
            (
                serde_json::json!({MCP_KEY: "gh https://a https://b"}),
                "one URL",
            ),
        ] {
            let e = declared(&fm(metadata.clone())).unwrap_err();
            assert_eq!(e.code(), Code::RequiresInvalid);
            assert!(e.to_string().contains(needle), "{metadata}: {e}");
        }
        let many = (0..=MAX_REQUIREMENTS)
            .map(|i| format!("acme/s{i}"))
            .collect::<Vec<_>>()
            .join(";");
        let e = declared(&fm(serde_json::json!({ SKILLS_KEY: many }))).unwrap_err();
        assert!(e.to_string().contains("at most 64"), "{e}");
    }

    #[test]
    fn a_cycle_is_found_with_its_path_and_a_tree_has_none() {
        let graph: HashMap<&str, Vec<&str>> = HashMap::from([
            ("a/x", vec!["a/y", "a/z"]),
            ("a/y", vec!["a/w"]),
            ("a/z", vec!["a/w"]),
            ("a/w", vec![]),
        ]);
        fn edges(
            g: &HashMap<&'static str, Vec<&'static str>>,
        ) -> impl FnMut(&SkillRef) -> Vec<SkillRef> {
            let g = g.clone();
            move |s: &SkillRef| -> Vec<SkillRef> {
                g.get(s.to_string().as_str())
                    .map(|v| v.iter().map(|s| skill(s)).collect())
                    .unwrap_or_default()
            }
        }
        assert_eq!(find_cycle(&skill("a/x"), edges(&graph)), None, "a diamond");
        let mut cyclic = graph.clone();
        cyclic.insert("a/w", vec!["a/x"]);
        let path = find_cycle(&skill("a/x"), edges(&cyclic)).unwrap();
        assert_eq!(show_path(&path), "a/x -> a/y -> a/w -> a/x");
        let mut selfish = graph;
        selfish.insert("a/x", vec!["a/x"]);
        let path = find_cycle(&skill("a/x"), edges(&selfish)).unwrap();
        assert_eq!(show_path(&path), "a/x -> a/x");
    }

    /// A catalog in memory: versions newest first, and each version's requirements.
    #[derive(Default)]
    struct Memory {
        versions: HashMap<SkillRef, Vec<SkillVersion>>,
        requires: HashMap<(SkillRef, SkillVersion), Vec<SkillRequirement>>,
    }

    impl Memory {
        fn add(&mut self, s: &str, version: &str, requires: &[&str]) {
            let entry = self.versions.entry(skill(s)).or_default();
            entry.push(v(version));
            entry.sort_by(|a, b| b.cmp(a));
            let reqs = requires
                .iter()
                .map(|r| {
                    let (p, range) = r.split_once('@').unwrap_or((r, ""));
                    SkillRequirement {
                        skill: skill(p),
                        range: Requirement::parse(range).unwrap(),
                    }
                })
                .collect();
            self.requires.insert((skill(s), v(version)), reqs);
        }
    }

    impl Catalog for Memory {
        fn versions(&self, s: &SkillRef) -> Option<&[SkillVersion]> {
            Some(self.versions.get(s).map_or(&[][..], Vec::as_slice))
        }
        fn requires(&self, s: &SkillRef, v: &SkillVersion) -> Option<&[SkillRequirement]> {
            self.requires
                .get(&(s.clone(), v.clone()))
                .map(Vec::as_slice)
        }
    }

    fn shown(members: &[Member]) -> Vec<String> {
        members
            .iter()
            .map(|m| format!("{}@{}", m.skill, m.version))
            .collect()
    }

    #[test]
    fn a_diamond_resolves_to_one_version_of_the_shared_skill() {
        let mut c = Memory::default();
        c.add("a/top", "1.0.0", &["a/left@^1", "a/right@^1"]);
        c.add("a/left", "1.0.0", &["a/base@>=1.1"]);
        c.add("a/right", "1.0.0", &["a/base@<1.3"]);
        for base in ["1.0.0", "1.1.0", "1.2.0", "1.3.0"] {
            c.add("a/base", base, &[]);
        }
        let members = resolve(&[(skill("a/top"), Requirement::Any)], &c).unwrap();
        assert_eq!(
            shown(&members),
            [
                "a/base@1.2.0",
                "a/left@1.0.0",
                "a/right@1.0.0",
                "a/top@1.0.0"
            ]
        );
        let base = &members[0];
        assert!(!base.is_root());
        assert_eq!(base.ranges(), "<1.3, >=1.1");
        assert_eq!(base.required_by.len(), 2);
        assert!(members[3].is_root());
    }

    #[test]
    fn a_conflict_names_both_requirers() {
        let mut c = Memory::default();
        c.add("a/top", "1.0.0", &["a/left", "a/right"]);
        c.add("a/left", "1.0.0", &["a/base@^1"]);
        c.add("a/right", "1.0.0", &["a/base@^2"]);
        c.add("a/base", "1.4.0", &[]);
        c.add("a/base", "2.0.0", &[]);
        let Err(Unresolved::Conflict { skill: s, message }) =
            resolve(&[(skill("a/top"), Requirement::Any)], &c)
        else {
            panic!("a conflict")
        };
        assert_eq!(s, skill("a/base"));
        assert!(message.contains("a/left requires ^1"), "{message}");
        assert!(message.contains("a/right requires ^2"), "{message}");
        assert!(message.contains("offered: 2.0.0, 1.4.0"), "{message}");
    }

    #[test]
    fn a_member_that_moves_changes_what_it_asks() {
        // top asks lib <2; the util it gets narrows lib to ^1.2: the lib chosen satisfies both.
        let mut c = Memory::default();
        c.add("a/top", "1.0.0", &["a/lib@<2", "a/util@^1"]);
        c.add("a/util", "1.0.0", &["a/lib@^1.1"]);
        c.add("a/util", "1.1.0", &["a/lib@^1.2"]);
        c.add("a/lib", "1.1.0", &[]);
        c.add("a/lib", "1.2.0", &[]);
        c.add("a/lib", "2.0.0", &[]);
        let members = resolve(&[(skill("a/top"), Requirement::Any)], &c).unwrap();
        assert_eq!(
            shown(&members),
            ["a/lib@1.2.0", "a/top@1.0.0", "a/util@1.1.0"]
        );
    }

    #[test]
    fn missing_data_is_asked_for_and_cycles_do_not_loop() {
        struct Partial(Memory);
        impl Catalog for Partial {
            fn versions(&self, s: &SkillRef) -> Option<&[SkillVersion]> {
                self.0.versions.get(s).map(Vec::as_slice)
            }
            fn requires(&self, s: &SkillRef, v: &SkillVersion) -> Option<&[SkillRequirement]> {
                self.0.requires(s, v)
            }
        }
        let mut c = Memory::default();
        c.add("a/x", "1.0.0", &["a/y"]);
        assert_eq!(
            resolve(&[(skill("a/x"), Requirement::Any)], &Partial(c)),
            Err(Unresolved::NeedVersions(skill("a/y")))
        );
        let mut c = Memory::default();
        c.add("a/x", "1.0.0", &["a/y"]);
        c.add("a/y", "1.0.0", &["a/x"]);
        let members = resolve(&[(skill("a/x"), Requirement::Any)], &c).unwrap();
        assert_eq!(shown(&members), ["a/x@1.0.0", "a/y@1.0.0"]);
    }
}
