//! Packs: a named, versioned, immutable set of exact skill versions (`acme/onboarding` 1.2.0 =
//! these members at these versions), installed as one.
//!
//! A pack lives in a namespace beside its skills, under a name of the same rules as a skill's
//! ([`SkillName`]); a namespace may not hold a pack and a skill of one name, so `skillreg add
//! acme/onboarding` names one thing. Its members are exact versions (`namespace/name@1.2.0`),
//! each skill once; what they require themselves is resolved when the pack is installed, with
//! the members pinned. Publishing checks each member against storage (it exists, is visible to
//! whoever sees the pack, and is neither revoked nor pending): the rules here are the shape.

use std::fmt;

use super::code::Code;
use super::limits::MAX_DESCRIPTION_CHARS;
use super::name::{Namespace, SkillName};
use super::refs::{SkillRef, VersionRef};
use super::time::Timestamp;
use super::version::SkillVersion;

/// The most members a pack may have.
pub const MAX_MEMBERS: usize = 256;

/// `namespace/name` of a pack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackRef {
    pub namespace: Namespace,
    pub name: SkillName,
}

impl PackRef {
    pub fn new(namespace: Namespace, name: SkillName) -> Self {
        Self { namespace, name }
    }

    /// The skill of the same name (which may not exist beside it).
    pub fn as_skill(&self) -> SkillRef {
        SkillRef::new(self.namespace.clone(), self.name.clone())
    }

    /// The resource a pack version is read at over MCP (`skillreg://packs/ns/name`, the newest
    /// version; `…/name@1.2.0`, one version).
    pub fn uri(&self, version: Option<&SkillVersion>) -> String {
        match version {
            Some(v) => format!("{PACK_URI_PREFIX}{self}@{v}"),
            None => format!("{PACK_URI_PREFIX}{self}"),
        }
    }
}

impl fmt::Display for PackRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Where pack versions are read over MCP with `resources/read`.
pub const PACK_URI_PREFIX: &str = "skillreg://packs/";

/// The pack (and version, when pinned) a `skillreg://packs/ns/name[@version]` URI names.
pub fn parse_uri(uri: &str) -> Option<(PackRef, Option<SkillVersion>)> {
    let rest = uri.strip_prefix(PACK_URI_PREFIX)?;
    let (path, version) = match rest.split_once('@') {
        Some((p, v)) => (p, Some(SkillVersion::parse(v).ok()?)),
        None => (rest, None),
    };
    let skill = SkillRef::parse_joined(path).ok()?;
    Some((PackRef::new(skill.namespace, skill.name), version))
}

/// A pack version's contents, as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackContents {
    pub description: String,
    /// Sorted by skill.
    pub members: Vec<VersionRef>,
}

/// A pack version as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackRecord {
    pub pack: PackRef,
    pub version: SkillVersion,
    pub contents: PackContents,
    pub published_at: Timestamp,
    pub published_by: Option<String>,
    /// Its namespace is private.
    pub private: bool,
}

/// Why a pack cannot be published as sent. Code `pack_invalid`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PackError(pub String);

impl PackError {
    pub fn code(&self) -> Code {
        Code::PackInvalid
    }
}

/// Check a pack's description and members (`namespace/name@version`, exact versions, each
/// skill once, at least one and at most [`MAX_MEMBERS`]).
pub fn contents(description: &str, members: &[String]) -> Result<PackContents, PackError> {
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(PackError(format!(
            "the description is longer than {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    if members.is_empty() {
        return Err(PackError("a pack has at least one member".into()));
    }
    if members.len() > MAX_MEMBERS {
        return Err(PackError(format!(
            "a pack has at most {MAX_MEMBERS} members, not {}",
            members.len()
        )));
    }
    let mut out: Vec<VersionRef> = Vec::with_capacity(members.len());
    for member in members {
        let shown: String = member.chars().take(120).collect();
        let (path, version) = member.split_once('@').ok_or_else(|| {
            PackError(format!(
                "member {shown:?} names no version: give namespace/name@version"
            ))
        })?;
        let skill = SkillRef::parse_joined(path.trim())
            .map_err(|e| PackError(format!("member {shown:?}: {e}")))?;
        let version = SkillVersion::parse(version.trim()).map_err(|e| {
            PackError(format!(
                "member {shown:?}: a pack holds exact versions ({e})"
            ))
        })?;
        if out.iter().any(|m| m.skill == skill) {
            return Err(PackError(format!("{skill} is a member twice")));
        }
        out.push(skill.at(version));
    }
    out.sort_by(|a, b| a.skill.cmp(&b.skill));
    Ok(PackContents {
        description: description.trim().to_owned(),
        members: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn members_are_exact_versions_each_skill_once_sorted() {
        let c = contents(" Start here. ", &strings(&["acme/b@2.0.0", "acme/a@1.2.0"])).unwrap();
        assert_eq!(c.description, "Start here.");
        let shown: Vec<String> = c.members.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["acme/a@1.2.0", "acme/b@2.0.0"]);
        for (members, needle) in [
            (strings(&[]), "at least one"),
            (strings(&["acme/a"]), "names no version"),
            (strings(&["acme/a@^1"]), "exact versions"),
            (strings(&["acme/a@1.0.0", "acme/a@2.0.0"]), "twice"),
            (strings(&["Acme/a@1.0.0"]), "Acme/a"),
        ] {
            let e = contents("", &members).unwrap_err();
            assert_eq!(e.code(), Code::PackInvalid);
            assert!(e.to_string().contains(needle), "{members:?}: {e}");
        }
        let many: Vec<String> = (0..=MAX_MEMBERS)
            .map(|i| format!("acme/s{i}@1.0.0"))
            .collect();
        assert!(
            contents("", &many)
                .unwrap_err()
                .to_string()
                .contains("at most 256")
        );
    }

    #[test]
    fn a_pack_is_read_at_its_uri() {
        let pack = PackRef::new(
            Namespace::new("acme").unwrap(),
            SkillName::new("onboarding").unwrap(),
        );
        assert_eq!(pack.uri(None), "skillreg://packs/acme/onboarding");
        let v = SkillVersion::parse("1.2.0").unwrap();
        assert_eq!(pack.uri(Some(&v)), "skillreg://packs/acme/onboarding@1.2.0");
        assert_eq!(
            parse_uri(&pack.uri(Some(&v))),
            Some((pack.clone(), Some(v)))
        );
        assert_eq!(parse_uri(&pack.uri(None)), Some((pack, None)));
        for bad in [
            "skillreg://packs/acme",
            "skillreg://packs/acme/x@^1",
            "skill://acme/x",
        ] {
            assert_eq!(parse_uri(bad), None, "{bad}");
        }
    }
}
