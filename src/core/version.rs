//! Semantic versions of a skill (semver 2.0.0).

use std::cmp::Ordering;
use std::fmt;

/// A published version number. Ordered by semver precedence, build metadata as a tie-break.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SkillVersion(semver::Version);

/// A string that is not a semver 2.0.0 version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD]): {reason}")]
pub struct VersionError {
    pub input: String,
    pub reason: String,
}

impl SkillVersion {
    pub fn parse(s: &str) -> Result<Self, VersionError> {
        if s.len() > super::limits::MAX_VERSION_BYTES {
            return Err(VersionError {
                input: s.chars().take(80).collect(),
                reason: format!("longer than {} bytes", super::limits::MAX_VERSION_BYTES),
            });
        }
        semver::Version::parse(s)
            .map(Self)
            .map_err(|e| VersionError {
                input: s.chars().take(80).collect(),
                reason: e.to_string(),
            })
    }

    /// The default for skills whose frontmatter names no version.
    pub fn initial() -> Self {
        Self(semver::Version::new(0, 1, 0))
    }

    /// The next patch release: `1.2.3` → `1.2.4`, `1.2.3-rc.1` → `1.2.4` (pre-release and build
    /// dropped).
    pub fn next_patch(&self) -> Self {
        Self(semver::Version::new(
            self.0.major,
            self.0.minor,
            self.0.patch + 1,
        ))
    }

    /// This version with `build` as its build metadata (`1.2.4` → `1.2.4+git.3f2a9c1`); `None`
    /// when `build` is not dot-separated identifiers of `[0-9A-Za-z-]`.
    pub fn with_build(&self, build: &str) -> Option<Self> {
        let mut v = self.0.clone();
        v.build = semver::BuildMetadata::new(build).ok()?;
        Some(Self(v))
    }

    /// Pre-releases are never chosen as current while a release exists.
    pub fn is_prerelease(&self) -> bool {
        !self.0.pre.is_empty()
    }
}

impl Ord for SkillVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for SkillVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for SkillVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for SkillVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for SkillVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, VersionError> {
        Self::parse(s)
    }
}

/// The versions a consumer accepts: any, exactly one (`1.2.0`, as npm reads a full version), or
/// a semver range (`^1.2`, `~1.2.3`, `>=1, <2`; pre-releases only when the range names one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    Any,
    Exact(SkillVersion),
    Range(semver::VersionReq),
}

impl Requirement {
    pub fn parse(s: &str) -> Result<Self, VersionError> {
        let s = s.trim();
        if s.is_empty() || s == "*" || s == "latest" {
            return Ok(Requirement::Any);
        }
        if let Ok(v) = SkillVersion::parse(s) {
            return Ok(Requirement::Exact(v));
        }
        semver::VersionReq::parse(s)
            .map(Requirement::Range)
            .map_err(|e| VersionError {
                input: s.chars().take(80).collect(),
                reason: e.to_string(),
            })
    }

    pub fn matches(&self, v: &SkillVersion) -> bool {
        match self {
            Requirement::Any => true,
            Requirement::Exact(x) => x == v,
            Requirement::Range(r) => r.matches(&v.0),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Any => f.write_str("*"),
            Requirement::Exact(v) => fmt::Display::fmt(v, f),
            Requirement::Range(r) => fmt::Display::fmt(r, f),
        }
    }
}

/// The version that changed content from a tracked source (a Git repository, an upstream
/// server) is stored as, given the versions the skill already has.
///
/// The declared version when it is new and above the highest stored one ([`pick_current`] of
/// every stored version, yanked ones included), so that it can become current; otherwise the
/// next patch after that highest version, with `build` as its build metadata (naming the commit
/// it came from). A version is immutable, so content that changed without a version bump cannot
/// take the declared version again.
pub fn tracked(
    declared: Option<&SkillVersion>,
    stored: &[SkillVersion],
    build: Option<&str>,
) -> SkillVersion {
    let Some(highest) = pick_current(stored) else {
        return declared.cloned().unwrap_or_else(SkillVersion::initial);
    };
    if let Some(d) = declared
        && d > highest
        && !stored.contains(d)
    {
        return d.clone();
    }
    let next = highest.next_patch();
    build.and_then(|b| next.with_build(b)).unwrap_or(next)
}

/// The version a registry should consider current: the highest release, or the highest
/// pre-release when there is no release. `None` when the list is empty.
pub fn pick_current<'a, I>(candidates: I) -> Option<&'a SkillVersion>
where
    I: IntoIterator<Item = &'a SkillVersion>,
{
    let mut best_release: Option<&SkillVersion> = None;
    let mut best_pre: Option<&SkillVersion> = None;
    for v in candidates {
        let slot = if v.is_prerelease() {
            &mut best_pre
        } else {
            &mut best_release
        };
        if slot.is_none_or(|b| v > b) {
            *slot = Some(v);
        }
    }
    best_release.or(best_pre)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements() {
        let v = |s| SkillVersion::parse(s).unwrap();
        let r = |s: &str| Requirement::parse(s).unwrap();
        assert_eq!(r(""), Requirement::Any);
        assert_eq!(r("latest"), Requirement::Any);
        assert!(r("1.2.0").matches(&v("1.2.0")));
        assert!(!r("1.2.0").matches(&v("1.2.1")), "a full version is exact");
        assert!(r("^1.2").matches(&v("1.9.0")) && !r("^1.2").matches(&v("2.0.0")));
        assert!(!r("^1").matches(&v("1.5.0-rc.1")));
        assert!(r(">=1, <2").matches(&v("1.0.0")));
        for s in ["*", "1.2.0", "^1.2", ">=1, <2"] {
            let shown = r(s).to_string();
            assert_eq!(r(&shown), r(s), "{s}");
        }
        assert!(Requirement::parse("one").is_err());
    }

    #[test]
    fn parse_table() {
        for ok in [
            "0.1.0",
            "1.2.3",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "10.20.30",
        ] {
            assert_eq!(SkillVersion::parse(ok).unwrap().to_string(), ok);
        }
        for bad in [
            "", "1", "1.0", "v1.0.0", "01.0.0", "1.0.0-", "1.0.0 ", "latest", "1.0.0/x",
        ] {
            assert!(SkillVersion::parse(bad).is_err(), "{bad:?}");
        }
        // The longest accepted version, and one byte more.
        let longest = format!(
            "1.0.0-{}",
            "a".repeat(super::super::limits::MAX_VERSION_BYTES - 6)
        );
        assert_eq!(SkillVersion::parse(&longest).unwrap().to_string(), longest);
        let err = SkillVersion::parse(&format!("{longest}a")).unwrap_err();
        assert!(err.reason.contains("longer than 128 bytes"), "{err}");
    }

    #[test]
    fn tracked_changes_take_the_declared_version_or_the_next_patch_naming_the_commit() {
        let v = |s: &str| SkillVersion::parse(s).unwrap();
        let vs = |l: &[&str]| l.iter().map(|s| v(s)).collect::<Vec<_>>();
        let build = Some("git.3f2a9c1");
        // Nothing stored: the declared version, else 0.1.0.
        assert_eq!(tracked(Some(&v("1.2.0")), &[], build), v("1.2.0"));
        assert_eq!(tracked(None, &[], build), v("0.1.0"));
        // A bump above everything stored is the author's.
        assert_eq!(
            tracked(Some(&v("1.3.0")), &vs(&["1.2.0"]), build),
            v("1.3.0")
        );
        // Changed without a bump: the next patch, naming the commit.
        assert_eq!(
            tracked(Some(&v("1.2.0")), &vs(&["1.2.0"]), build),
            v("1.2.1+git.3f2a9c1")
        );
        assert_eq!(tracked(None, &vs(&["0.1.0"]), None), v("0.1.1"));
        // A declared version below one the registry numbered would never become current.
        assert_eq!(
            tracked(
                Some(&v("1.2.1")),
                &vs(&["1.2.0", "1.2.1+git.aaaaaaa"]),
                build
            ),
            v("1.2.2+git.3f2a9c1")
        );
        // The base is the highest release; a stored pre-release is not taken again.
        assert_eq!(
            tracked(Some(&v("2.0.0-rc.1")), &vs(&["1.0.0", "2.0.0-rc.1"]), build),
            v("1.0.1+git.3f2a9c1")
        );
        assert_eq!(
            tracked(Some(&v("2.0.0-rc.2")), &vs(&["1.0.0", "2.0.0-rc.1"]), build),
            v("2.0.0-rc.2")
        );
        // Build metadata that semver refuses is left out rather than guessed at.
        assert_eq!(tracked(None, &vs(&["1.0.0"]), Some("a b")), v("1.0.1"));
    }

    #[test]
    fn current_prefers_releases() {
        let vs: Vec<SkillVersion> = ["1.0.0", "2.0.0-rc.1", "1.5.0", "0.9.0"]
            .iter()
            .map(|s| SkillVersion::parse(s).unwrap())
            .collect();
        assert_eq!(pick_current(&vs).unwrap().to_string(), "1.5.0");
        let pre: Vec<SkillVersion> = ["2.0.0-rc.1", "2.0.0-rc.2"]
            .iter()
            .map(|s| SkillVersion::parse(s).unwrap())
            .collect();
        assert_eq!(pick_current(&pre).unwrap().to_string(), "2.0.0-rc.2");
        assert!(pick_current(&[]).is_none());
    }
}
