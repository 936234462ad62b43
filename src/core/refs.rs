//! References to a skill and to one of its versions, parsed once at the edge (URL path segments,
//! CLI arguments) so that nothing further in handles an unvalidated name.

use std::fmt;

use super::code::Code;
use super::name::{NameError, Namespace, SkillName};
use super::uri::{SKILL_MD, SkillUri, Target};
use super::version::{SkillVersion, VersionError};

/// `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SkillRef {
    pub namespace: Namespace,
    pub name: SkillName,
}

/// `namespace/name@version`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionRef {
    pub skill: SkillRef,
    pub version: SkillVersion,
}

/// Why a reference does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    #[error("invalid namespace {value:?}: it {error}")]
    Namespace { value: String, error: NameError },
    #[error("invalid skill name {value:?}: it {error}")]
    Name { value: String, error: NameError },
    #[error("{0}")]
    Version(#[from] VersionError),
    #[error("expected NAMESPACE/NAME, got {0:?}")]
    Shape(String),
}

impl RefError {
    pub fn code(&self) -> Code {
        match self {
            Self::Namespace { .. } | Self::Shape(_) => Code::InvalidNamespace,
            Self::Name { .. } => Code::InvalidSkillName,
            Self::Version(_) => Code::InvalidVersion,
        }
    }
}

/// Parse a namespace, keeping (a bounded prefix of) the input for the error.
pub fn parse_namespace(s: &str) -> Result<Namespace, RefError> {
    Namespace::new(s).map_err(|error| RefError::Namespace {
        value: s.chars().take(80).collect(),
        error,
    })
}

/// Parse a skill name, keeping (a bounded prefix of) the input for the error.
pub fn parse_name(s: &str) -> Result<SkillName, RefError> {
    SkillName::new(s).map_err(|error| RefError::Name {
        value: s.chars().take(80).collect(),
        error,
    })
}

impl SkillRef {
    pub fn new(namespace: Namespace, name: SkillName) -> Self {
        Self { namespace, name }
    }

    /// From separate namespace and name strings (URL path segments).
    pub fn parse(namespace: &str, name: &str) -> Result<Self, RefError> {
        Ok(Self::new(parse_namespace(namespace)?, parse_name(name)?))
    }

    /// From `namespace/name` (a CLI argument).
    pub fn parse_joined(s: &str) -> Result<Self, RefError> {
        let (ns, name) = s
            .split_once('/')
            .ok_or_else(|| RefError::Shape(s.chars().take(80).collect()))?;
        Self::parse(ns, name)
    }

    /// Pin this skill to `version`.
    pub fn at(self, version: SkillVersion) -> VersionRef {
        VersionRef {
            skill: self,
            version,
        }
    }

    /// The URI of the skill root, current (`None`) or pinned.
    pub fn root_uri(&self, version: Option<&SkillVersion>) -> SkillUri {
        SkillUri {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            version: version.cloned(),
            target: Target::Root,
        }
    }

    /// The URI of the current version's SKILL.md.
    pub fn skill_md_uri(&self) -> SkillUri {
        self.root_uri(None).join(SKILL_MD)
    }
}

impl SkillUri {
    /// The skill this URI points into.
    pub fn skill_ref(&self) -> SkillRef {
        SkillRef::new(self.namespace.clone(), self.name.clone())
    }
}

impl VersionRef {
    /// From URL path segments.
    pub fn parse(namespace: &str, name: &str, version: &str) -> Result<Self, RefError> {
        Ok(SkillRef::parse(namespace, name)?.at(SkillVersion::parse(version)?))
    }

    pub fn namespace(&self) -> &Namespace {
        &self.skill.namespace
    }

    pub fn name(&self) -> &SkillName {
        &self.skill.name
    }

    /// The pinned URI of this version's root.
    pub fn root_uri(&self) -> SkillUri {
        self.skill.root_uri(Some(&self.version))
    }

    /// The pinned URI of this version's SKILL.md.
    pub fn skill_md_uri(&self) -> SkillUri {
        self.root_uri().join(SKILL_MD)
    }
}

impl fmt::Display for SkillRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl fmt::Display for VersionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.skill, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        let v = VersionRef::parse("acme", "refunds", "1.2.0").unwrap();
        assert_eq!(v.to_string(), "acme/refunds@1.2.0");
        assert_eq!(
            v.skill_md_uri().to_string(),
            "skill://acme/@1.2.0/refunds/SKILL.md"
        );
        assert_eq!(
            v.skill.skill_md_uri().to_string(),
            "skill://acme/refunds/SKILL.md"
        );
        assert_eq!(SkillRef::parse_joined("acme/refunds").unwrap(), v.skill);
        let codes = [
            SkillRef::parse("Acme", "x").unwrap_err().code(),
            SkillRef::parse("acme", "X y").unwrap_err().code(),
            VersionRef::parse("acme", "x", "latest").unwrap_err().code(),
            SkillRef::parse_joined("acme").unwrap_err().code(),
        ];
        assert_eq!(
            codes,
            [
                Code::InvalidNamespace,
                Code::InvalidSkillName,
                Code::InvalidVersion,
                Code::InvalidNamespace
            ]
        );
    }
}
