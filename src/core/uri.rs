//! The `skill://` URI grammar, parsed and formatted in this one place.
//!
//! ```text
//! skill://<namespace>/<name>/SKILL.md                current version of a skill
//! skill://<namespace>/<name>/<path>                  a file (or directory) of the current version
//! skill://<namespace>/<name>                         the skill root directory
//! skill://<namespace>/@<version>/<name>/<path>       the same, pinned to one published version
//! ```
//!
//! The namespace is the URI authority (an RFC 3986 reg-name, never resolved). A pinned URI keeps
//! the skill name as the segment before `SKILL.md` (SEP-2640 requires it) and puts the version in
//! a segment that starts with `@`, which no skill name can, so it cannot collide with another
//! skill or with a nested skill (those live under `<name>/`). File path segments are
//! percent-encoded per segment: RFC 3986 `pchar`s stay literal, everything else is `%XX` of its
//! UTF-8 bytes.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use super::code::Code;
use super::limits::MAX_URI_BYTES;
use super::name::{NameError, Namespace, SkillName};
use super::version::{SkillVersion, VersionError};

pub const SCHEME_PREFIX: &str = "skill://";
/// File name of a skill's entry point (SEP-2640: always explicit in the URI).
pub const SKILL_MD: &str = "SKILL.md";

/// RFC 6570 templates of the URIs above, registered in `resources/templates/list` and completed
/// by `completion/complete` (`{+path}` is reserved expansion: it keeps its `/`).
pub const TEMPLATE_SKILL_MD: &str = "skill://{namespace}/{name}/SKILL.md";
/// `$schema` of an Agent Skills discovery index (0.2.0), served over MCP (`skill://index.json`)
/// and over HTTP (`/.well-known/agent-skills/index.json`).
pub const DISCOVERY_INDEX_SCHEMA: &str =
    "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
pub const TEMPLATE_FILE: &str = "skill://{namespace}/{name}/{+path}";
pub const TEMPLATE_PINNED_SKILL_MD: &str = "skill://{namespace}/@{version}/{name}/SKILL.md";
pub const TEMPLATE_PINNED_FILE: &str = "skill://{namespace}/@{version}/{name}/{+path}";
/// The legacy discovery index (April 2026 SEP-2640 draft), still read by older hosts.
pub const INDEX_JSON: &str = "skill://index.json";
/// FastMCP's per-skill manifest resource name, served beside SKILL.md unless a real file has it.
pub const FASTMCP_MANIFEST: &str = "_manifest";

/// Bytes escaped in a path segment: everything except RFC 3986 `pchar`.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// A parsed `skill://` URI that addresses something inside one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUri {
    pub namespace: Namespace,
    pub name: SkillName,
    /// `Some` for a pinned URI.
    pub version: Option<SkillVersion>,
    pub target: Target,
}

/// What inside the skill a URI points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The skill root directory, `skill://ns/name`.
    Root,
    /// A path below the root (decoded, `/`-separated): a file or a subdirectory.
    Path(String),
}

/// Why a string is not a `skill://` URI this registry can serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("is longer than {MAX_URI_BYTES} bytes")]
    TooLong,
    #[error("does not start with skill://")]
    WrongScheme,
    #[error("has a query or fragment")]
    QueryOrFragment,
    #[error("has userinfo in its authority")]
    Userinfo,
    #[error("has a port in its authority")]
    Port,
    #[error("has an invalid namespace: it {0}")]
    Namespace(NameError),
    #[error("names no skill")]
    NoSkill,
    #[error("has an empty path segment")]
    EmptySegment,
    #[error("has an invalid percent-encoding")]
    Encoding,
    #[error("has a segment that decodes to '/', '\\\\', NUL, '.' or '..'")]
    UnsafeSegment,
    #[error("has an invalid skill name: it {0}")]
    Name(NameError),
    #[error("has an invalid version: {0}")]
    Version(VersionError),
}

impl SkillUri {
    /// Parse a URI. Accepts any valid percent-encoding; [`SkillUri::to_string`] gives the
    /// canonical form.
    pub fn parse(s: &str) -> Result<Self, UriError> {
        if s.len() > MAX_URI_BYTES {
            return Err(UriError::TooLong);
        }
        let rest = s.strip_prefix(SCHEME_PREFIX).ok_or(UriError::WrongScheme)?;
        if rest.contains(['?', '#']) {
            return Err(UriError::QueryOrFragment);
        }
        let (authority, path) = rest.split_once('/').ok_or(UriError::NoSkill)?;
        if authority.contains('@') {
            return Err(UriError::Userinfo);
        }
        if authority.contains(':') {
            return Err(UriError::Port);
        }
        let namespace = Namespace::new(authority).map_err(UriError::Namespace)?;
        let mut segments = path.split('/').map(decode_segment);
        let mut first = segments.next().ok_or(UriError::NoSkill)??;
        let version = match first.strip_prefix('@') {
            Some(v) => {
                let version = SkillVersion::parse(v).map_err(UriError::Version)?;
                first = segments.next().ok_or(UriError::NoSkill)??;
                Some(version)
            }
            None => None,
        };
        let name = SkillName::new(&first).map_err(UriError::Name)?;
        let mut rest = String::new();
        for segment in segments {
            if !rest.is_empty() {
                rest.push('/');
            }
            rest.push_str(&segment?);
        }
        let target = if rest.is_empty() {
            Target::Root
        } else {
            Target::Path(rest)
        };
        let uri = Self {
            namespace,
            name,
            version,
            target,
        };
        // Percent-encoding can make the canonical form up to 3x longer than the input; refuse a
        // URI whose canonical form could not itself be parsed back (found by fuzzing). Only an
        // input over a third of the limit can have such a form.
        if s.len() > MAX_URI_BYTES / 3 {
            let mut length = Length::default();
            fmt::write(&mut length, format_args!("{uri}")).expect("counting never fails");
            if length.0 > MAX_URI_BYTES {
                return Err(UriError::TooLong);
            }
        }
        Ok(uri)
    }

    /// The URI of the skill root directory (no trailing slash).
    pub fn format_root(
        namespace: &Namespace,
        name: &SkillName,
        version: Option<&SkillVersion>,
    ) -> String {
        let mut root = String::new();
        write_root(&mut root, namespace, name, version).expect("a String takes any text");
        root
    }

    /// The URI of `path` (a `/`-separated relative path) below a root from [`SkillUri::root`].
    pub fn append(root: &str, path: &str) -> String {
        let mut out = String::with_capacity(root.len() + path.len() + 8);
        out.push_str(root);
        write_path(&mut out, path).expect("a String takes any text");
        out
    }
}

/// A skill root as [`SkillUri::format_root`] spells it, written to `out`.
fn write_root(
    out: &mut impl fmt::Write,
    namespace: &Namespace,
    name: &SkillName,
    version: Option<&SkillVersion>,
) -> fmt::Result {
    out.write_str(SCHEME_PREFIX)?;
    out.write_str(namespace.as_str())?;
    if let Some(v) = version {
        write!(out, "/@{}", utf8_percent_encode(&v.to_string(), SEGMENT))?;
    }
    out.write_char('/')?;
    out.write_str(name.as_str())
}

/// Each `/`-separated segment of `path`, percent-encoded, after a `/`.
fn write_path(out: &mut impl fmt::Write, path: &str) -> fmt::Result {
    for segment in path.split('/') {
        out.write_char('/')?;
        for chunk in utf8_percent_encode(segment, SEGMENT) {
            out.write_str(chunk)?;
        }
    }
    Ok(())
}

/// Counts what is written to it: the length of a canonical form without building it.
#[derive(Default)]
struct Length(usize);

impl fmt::Write for Length {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

impl SkillUri {
    /// The URI of `path` (a `/`-separated relative path) below this one.
    pub fn join(&self, path: &str) -> SkillUri {
        let target = match &self.target {
            Target::Root => Target::Path(path.to_owned()),
            Target::Path(p) => Target::Path(format!("{p}/{path}")),
        };
        SkillUri {
            target,
            ..self.clone()
        }
    }

    /// Whether the URI names one published version rather than the current one.
    pub fn is_pinned(&self) -> bool {
        self.version.is_some()
    }

    /// The path below the skill root (`""` for the root itself).
    pub fn path(&self) -> &str {
        match &self.target {
            Target::Root => "",
            Target::Path(p) => p,
        }
    }
}

impl UriError {
    pub fn code(&self) -> Code {
        Code::InvalidUri
    }
}

impl fmt::Display for SkillUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_root(f, &self.namespace, &self.name, self.version.as_ref())?;
        match &self.target {
            Target::Root => Ok(()),
            Target::Path(p) => write_path(f, p),
        }
    }
}

/// Percent-encode each `/`-separated segment of a relative path (for URLs and URIs alike).
pub fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// Percent-encode a URL query value (everything but unreserved characters).
pub fn encode_query_value(value: &str) -> String {
    const QUERY: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    utf8_percent_encode(value, QUERY).to_string()
}

fn encode_segment(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

fn decode_segment(segment: &str) -> Result<String, UriError> {
    if segment.is_empty() {
        return Err(UriError::EmptySegment);
    }
    if !segment.contains('%') {
        // Nothing to decode (the common case).
        if segment.contains(['\\', '\0']) || segment == "." || segment == ".." {
            return Err(UriError::UnsafeSegment);
        }
        return Ok(segment.to_owned());
    }
    // percent_decode_str passes a malformed escape through literally; refuse it instead.
    let bytes = segment.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit())
        {
            return Err(UriError::Encoding);
        }
    }
    let decoded = percent_decode_str(segment)
        .decode_utf8()
        .map_err(|_| UriError::Encoding)?;
    if decoded.contains(['/', '\\', '\0']) || decoded == "." || decoded == ".." {
        return Err(UriError::UnsafeSegment);
    }
    Ok(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Namespace {
        Namespace::new(s).unwrap()
    }
    fn nm(s: &str) -> SkillName {
        SkillName::new(s).unwrap()
    }

    #[test]
    fn parses_current_pinned_and_root() {
        let u = SkillUri::parse("skill://acme/refunds/SKILL.md").unwrap();
        assert_eq!(
            (u.namespace, u.name, u.version),
            (ns("acme"), nm("refunds"), None)
        );
        assert_eq!(u.target, Target::Path("SKILL.md".into()));

        let u = SkillUri::parse("skill://acme/@1.2.0-rc.1/refunds/examples/a%20b.md").unwrap();
        assert_eq!(u.version.unwrap().to_string(), "1.2.0-rc.1");
        assert_eq!(u.target, Target::Path("examples/a b.md".into()));

        let u = SkillUri::parse("skill://acme/refunds").unwrap();
        assert_eq!(u.target, Target::Root);
    }

    #[test]
    fn formats_canonically_and_round_trips() {
        let v = SkillVersion::parse("1.0.0+build.7").unwrap();
        let root = SkillUri::format_root(&ns("acme"), &nm("x"), Some(&v));
        assert_eq!(root, "skill://acme/@1.0.0+build.7/x");
        let uri = SkillUri::append(&root, "dir/(quality) ü?#%.md");
        assert_eq!(
            uri,
            "skill://acme/@1.0.0+build.7/x/dir/(quality)%20%C3%BC%3F%23%25.md"
        );
        let back = SkillUri::parse(&uri).unwrap();
        assert_eq!(back.target, Target::Path("dir/(quality) ü?#%.md".into()));
        assert_eq!(back.to_string(), uri);
        // Non-canonical encodings are accepted and canonicalised.
        let u = SkillUri::parse("skill://acme/x/%41.md").unwrap();
        assert_eq!(u.to_string(), "skill://acme/x/A.md");
    }

    #[test]
    fn canonical_forms_always_parse_back() {
        // Regression (fuzz/regressions/uri): raw spaces are accepted in input and encoded as %20
        // in the canonical form, which exceeded the length limit and failed to re-parse.
        let spaces = format!("skill://acme/x/{}", " ".repeat(2000));
        assert_eq!(SkillUri::parse(&spaces), Err(UriError::TooLong));
        for input in [
            include_str!("../../fuzz/regressions/uri/tmin-from-fuzzer"),
            include_str!("../../fuzz/regressions/uri/canonical-longer-than-max-uri-bytes"),
        ] {
            if let Ok(uri) = SkillUri::parse(input) {
                let canonical = uri.to_string();
                assert_eq!(SkillUri::parse(&canonical).as_ref(), Ok(&uri));
            }
        }
        let fine = format!("skill://acme/x/{}", " ".repeat(100));
        let uri = SkillUri::parse(&fine).unwrap();
        assert_eq!(SkillUri::parse(&uri.to_string()).unwrap(), uri);
    }

    #[test]
    fn rejects_hostile_uris() {
        let long = format!("skill://acme/x/{}", "a".repeat(5000));
        let cases: &[(&str, UriError)] = &[
            ("file:///etc/passwd", UriError::WrongScheme),
            ("SKILL://acme/x/SKILL.md", UriError::WrongScheme),
            ("skill://acme/x/SKILL.md?x=1", UriError::QueryOrFragment),
            ("skill://acme/x/SKILL.md#top", UriError::QueryOrFragment),
            ("skill://user@acme/x/SKILL.md", UriError::Userinfo),
            ("skill://acme:80/x/SKILL.md", UriError::Port),
            (
                "skill://Acme/x/SKILL.md",
                UriError::Namespace(NameError::InvalidChar('A')),
            ),
            ("skill://acme", UriError::NoSkill),
            ("skill://acme/", UriError::EmptySegment),
            ("skill://acme/x/", UriError::EmptySegment),
            ("skill://acme/x//SKILL.md", UriError::EmptySegment),
            ("skill://acme/x/../y/SKILL.md", UriError::UnsafeSegment),
            ("skill://acme/x/%2e%2e/SKILL.md", UriError::UnsafeSegment),
            ("skill://acme/x/a%2fb", UriError::UnsafeSegment),
            ("skill://acme/x/a%5cb", UriError::UnsafeSegment),
            ("skill://acme/x/a%00b", UriError::UnsafeSegment),
            ("skill://acme/x/a\\b", UriError::UnsafeSegment),
            ("skill://acme/x/a\0b", UriError::UnsafeSegment),
            ("skill://acme/x/./SKILL.md", UriError::UnsafeSegment),
            ("skill://acme/x/a%zz", UriError::Encoding),
            ("skill://acme/x/a%e", UriError::Encoding),
            ("skill://acme/x/%ff", UriError::Encoding),
            (
                "skill://acme/Ｘ/SKILL.md",
                UriError::Name(NameError::InvalidChar('Ｘ')),
            ),
            (
                "skill://acme/@1.0/x/SKILL.md",
                UriError::Version(SkillVersion::parse("1.0").unwrap_err()),
            ),
            ("skill://acme/@1.0.0", UriError::NoSkill),
            (&long, UriError::TooLong),
        ];
        for (input, want) in cases {
            assert_eq!(SkillUri::parse(input).as_ref(), Err(want), "{input}");
        }
    }
}
