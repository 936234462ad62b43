//! A skill bundle: the set of files of one skill version, validated as a whole.
//!
//! Rules: relative safe paths ([`BundlePath`]), regular files only, no path twice, no file where
//! another needs a directory, no two paths (files or directories) that are one on macOS or
//! Windows ([`super::path::first_collision`]), `SKILL.md` at the root, at most [`MAX_FILES`] files and
//! [`MAX_TOTAL_BYTES`] bytes. A nested `SKILL.md` whose frontmatter name equals its directory name
//! becomes a skill of its own (SEP-2640 §Nested Skills); any other nested `SKILL.md` stays a plain
//! file, with a warning.

use super::code::Code;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::digest::Digest;
use super::frontmatter::{self, FrontmatterError, Warning};
use super::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use super::name::SkillName;
use super::path::{BundlePath, PathError, first_collision};
use super::requires::{self, Requires, RequiresError};
use super::uri::SKILL_MD;
use super::version::SkillVersion;

/// What kind of file-system entry an input was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    File,
    Symlink,
    HardLink,
    Other,
}

/// One entry as it arrived (from a directory walk or an archive), not yet trusted.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub path: String,
    pub bytes: Vec<u8>,
    pub executable: bool,
    pub kind: InputKind,
}

impl InputFile {
    pub fn regular(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            path: path.into(),
            bytes: bytes.into(),
            executable: false,
            kind: InputKind::File,
        }
    }
}

/// One validated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    pub path: BundlePath,
    pub bytes: Vec<u8>,
    pub digest: Digest,
    /// `0o755` for executables, `0o644` otherwise.
    pub mode: u32,
}

/// A skill served by a bundle: the root one (`subpath == ""`) or a nested one.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Directory of the skill inside the bundle, `""` for the root.
    pub subpath: String,
    pub name: SkillName,
    pub description: String,
    pub frontmatter: Map<String, Value>,
}

/// A validated skill bundle, ready to store.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub name: SkillName,
    /// Sorted by path.
    pub files: Vec<BundleFile>,
    /// The root entry first, then nested ones by subpath.
    pub entries: Vec<Entry>,
    pub warnings: Vec<Warning>,
    /// Identifies the content: equal for equal (path, mode, bytes) sets.
    pub content_digest: Digest,
    pub total_size: u64,
    /// A semver `version` or `metadata.version` from the root frontmatter.
    pub declared_version: Option<SkillVersion>,
    /// What the root skill requires (`metadata.dev.skillreg/requires*`, [`super::requires`]).
    pub requires: Requires,
}

impl Bundle {
    pub fn root(&self) -> &Entry {
        &self.entries[0]
    }
}

/// Why a set of files is not a publishable skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("the skill has {0} files; at most {MAX_FILES} are allowed")]
    TooManyFiles(usize),
    #[error("the skill's files add up to {0} bytes; at most {MAX_TOTAL_BYTES} are allowed")]
    TooLarge(u64),
    #[error("path {path:?} {error}")]
    BadPath { path: String, error: PathError },
    #[error("{path:?} is a {kind}; only regular files can be published")]
    NotRegular { path: String, kind: &'static str },
    #[error("{0:?} appears twice")]
    Duplicate(String),
    #[error("{0:?} is a file but other paths use it as a directory")]
    PathConflict(String),
    #[error(
        "{0:?} and {1:?} differ only in case or Unicode normalization: they are one path on macOS and Windows"
    )]
    PathCollision(String, String),
    #[error("there is no SKILL.md at the root of the skill")]
    MissingSkillMd,
    #[error("{0}")]
    SkillMd(#[from] FrontmatterError),
    #[error("SKILL.md {0}")]
    Requires(#[from] RequiresError),
}

impl BundleError {
    /// Stable snake_case code.
    pub fn code(&self) -> Code {
        match self {
            Self::TooManyFiles(_) => Code::TooManyFiles,
            Self::TooLarge(_) => Code::SkillTooLarge,
            Self::BadPath { .. } => Code::UnsafePath,
            Self::NotRegular { .. } => Code::NotARegularFile,
            Self::Duplicate(_) => Code::DuplicatePath,
            Self::PathConflict(_) => Code::PathConflict,
            Self::PathCollision(..) => Code::PathCollision,
            Self::MissingSkillMd => Code::MissingSkillMd,
            Self::SkillMd(e) => e.code(),
            Self::Requires(e) => e.code(),
        }
    }
}

/// Validate `inputs` as one skill.
pub fn validate(inputs: Vec<InputFile>) -> Result<Bundle, BundleError> {
    if inputs.len() > MAX_FILES {
        return Err(BundleError::TooManyFiles(inputs.len()));
    }
    let total_size: u64 = inputs.iter().map(|f| f.bytes.len() as u64).sum();
    if total_size > MAX_TOTAL_BYTES {
        return Err(BundleError::TooLarge(total_size));
    }
    let mut by_path: BTreeMap<BundlePath, InputFile> = BTreeMap::new();
    for input in inputs {
        let path = BundlePath::new(&input.path).map_err(|error| BundleError::BadPath {
            path: input.path.chars().take(200).collect(),
            error,
        })?;
        let kind = match input.kind {
            InputKind::File => None,
            InputKind::Symlink => Some("symbolic link"),
            InputKind::HardLink => Some("hard link"),
            InputKind::Other => Some("special file"),
        };
        if let Some(kind) = kind {
            return Err(BundleError::NotRegular {
                path: input.path,
                kind,
            });
        }
        if by_path.contains_key(&path) {
            return Err(BundleError::Duplicate(input.path));
        }
        by_path.insert(path, input);
    }
    // A file may not also be a directory of another file ("a" and "a/b").
    let dirs: BTreeSet<&str> = by_path
        .keys()
        .flat_map(|p| {
            let s = p.as_str();
            s.match_indices('/').map(move |(i, _)| &s[..i])
        })
        .collect();
    if let Some(p) = by_path.keys().find(|p| dirs.contains(p.as_str())) {
        return Err(BundleError::PathConflict(p.to_string()));
    }
    // No two paths, files or directories, may be one on a case-insensitive or normalizing file
    // system: unpacked there, what was validated is not what the agent loads.
    if let Some((a, b)) = first_collision(by_path.keys().map(BundlePath::as_str)) {
        return Err(BundleError::PathCollision(a, b));
    }

    let skill_md = by_path
        .iter()
        .find(|(p, _)| p.as_str() == SKILL_MD)
        .map(|(_, f)| &f.bytes)
        .ok_or(BundleError::MissingSkillMd)?;
    let root = frontmatter::parse(skill_md)?;
    let mut warnings = root.warnings.clone();
    // What a major client reads differently: warned, never refused.
    warnings.extend(super::quirks::warnings(skill_md, &root.frontmatter));
    let declared_version = declared_version(&root.frontmatter, &mut warnings);
    let requires = requires::declared(&root.frontmatter)?;
    let mut entries = vec![Entry {
        subpath: String::new(),
        name: root.name.clone(),
        description: root.description.clone(),
        frontmatter: root.frontmatter,
    }];
    for (path, file) in &by_path {
        if path.file_name() != SKILL_MD || path.parent().is_empty() {
            continue;
        }
        let dir = path.parent();
        let dir_name = dir.rsplit('/').next().unwrap_or(dir);
        match frontmatter::parse(&file.bytes) {
            Ok(nested) if nested.name.as_str() == dir_name => {
                if requires::declares(&nested.frontmatter) {
                    warnings.push(Warning::new(
                        "nested_requires_ignored",
                        format!("{path} declares requirements; only the root SKILL.md's are read"),
                    ));
                }
                entries.push(Entry {
                    subpath: dir.to_owned(),
                    name: nested.name,
                    description: nested.description,
                    frontmatter: nested.frontmatter,
                })
            }
            Ok(nested) => warnings.push(Warning::new(
                "nested_skill_name_mismatch",
                format!(
                    "{path} names {:?}, not its directory {dir_name:?}; served as a plain file",
                    nested.name.as_str()
                ),
            )),
            Err(e) => warnings.push(Warning::new(
                "nested_skill_invalid",
                format!("{path} is not a valid skill ({e}); served as a plain file"),
            )),
        }
    }

    let files: Vec<BundleFile> = by_path
        .into_iter()
        .map(|(path, input)| BundleFile {
            digest: Digest::of(&input.bytes),
            mode: if input.executable { 0o755 } else { 0o644 },
            bytes: input.bytes,
            path,
        })
        .collect();
    let content_digest = content_digest(files.iter().map(|f| (f.path.as_str(), f.mode, &f.digest)));
    Ok(Bundle {
        name: root.name,
        files,
        entries,
        warnings,
        content_digest,
        total_size,
        declared_version,
        requires,
    })
}

/// The digest identifying a whole version: over `path NUL mode NUL digest LF` lines, in path
/// order. Two publishes of the same files give the same value.
pub fn content_digest<'a>(files: impl IntoIterator<Item = (&'a str, u32, &'a Digest)>) -> Digest {
    let mut h = Sha256::new();
    for (path, mode, digest) in files {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(format!("{mode:o}").as_bytes());
        h.update([0]);
        h.update(digest.hex().as_bytes());
        h.update(b"\n");
    }
    Digest::from_raw(h.finalize().into())
}

fn declared_version(fm: &Map<String, Value>, warnings: &mut Vec<Warning>) -> Option<SkillVersion> {
    let candidates = [
        ("version", fm.get("version")),
        (
            "metadata.version",
            fm.get("metadata").and_then(|m| m.get("version")),
        ),
    ];
    for (field, value) in candidates {
        let Some(value) = value else { continue };
        match value.as_str().map(SkillVersion::parse) {
            Some(Ok(v)) => return Some(v),
            _ => warnings.push(Warning::new(
                "version_not_semver",
                format!("frontmatter {field} {value} is not a semantic version; ignored"),
            )),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n";

    fn files(extra: &[(&str, &[u8])]) -> Vec<InputFile> {
        let mut v = vec![InputFile::regular("SKILL.md", SKILL)];
        v.extend(extra.iter().map(|(p, b)| InputFile::regular(*p, *b)));
        v
    }

    #[test]
    fn requirements_are_read_from_the_root_only() {
        let root = "---\nname: demo\ndescription: A demo skill.\nmetadata:\n  dev.skillreg/requires: \"acme/base@^1\"\n---\n";
        let nested = b"---\nname: inner\ndescription: Inner.\nmetadata:\n  dev.skillreg/requires: \"acme/x\"\n---\n";
        let b = validate(vec![
            InputFile::regular("SKILL.md", root),
            InputFile::regular("sub/inner/SKILL.md", &nested[..]),
        ])
        .unwrap();
        let required: Vec<String> = b.requires.skills.iter().map(ToString::to_string).collect();
        assert_eq!(required, ["acme/base@^1"]);
        assert!(
            b.warnings
                .iter()
                .any(|w| w.code == "nested_requires_ignored"),
            "{:?}",
            b.warnings
        );
        let bad = "---\nname: demo\ndescription: A demo skill.\nmetadata:\n  dev.skillreg/requires: \"base\"\n---\n";
        let e = validate(vec![InputFile::regular("SKILL.md", bad)]).unwrap_err();
        assert_eq!(e.code(), Code::RequiresInvalid, "{e}");
    }

    #[test]
    fn valid_bundle_with_nested_skills() {
        let nested = b"---\nname: inner\ndescription: Inner skill.\n---\n";
        let mismatched = b"---\nname: other\ndescription: Misnamed.\n---\n";
        let b = validate(files(&[
            ("refs/b.md", b"b"),
            ("sub/inner/SKILL.md", nested),
            ("sub/inner/x.txt", b"x"),
            ("misc/wrong/SKILL.md", mismatched),
            ("empty.py", b""),
        ]))
        .unwrap();
        assert_eq!(b.name.as_str(), "demo");
        let paths: Vec<&str> = b.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "SKILL.md",
                "empty.py",
                "misc/wrong/SKILL.md",
                "refs/b.md",
                "sub/inner/SKILL.md",
                "sub/inner/x.txt"
            ]
        );
        let subpaths: Vec<&str> = b.entries.iter().map(|e| e.subpath.as_str()).collect();
        assert_eq!(subpaths, ["", "sub/inner"]);
        assert_eq!(
            b.warnings
                .iter()
                .map(|w| w.code.as_str())
                .collect::<Vec<_>>(),
            ["nested_skill_name_mismatch"]
        );
        assert_eq!(
            b.total_size,
            SKILL.len() as u64 + 1 + nested.len() as u64 + 1 + mismatched.len() as u64
        );
        assert_eq!(
            b.files[1].digest.to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn content_digest_depends_on_bytes_paths_and_modes_only() {
        let a = validate(files(&[("x.md", b"1")])).unwrap();
        let b = validate(files(&[("x.md", b"1")]).into_iter().rev().collect()).unwrap();
        assert_eq!(
            a.content_digest, b.content_digest,
            "input order does not matter"
        );
        let c = validate(files(&[("x.md", b"2")])).unwrap();
        assert_ne!(a.content_digest, c.content_digest);
        let mut exec = files(&[("x.md", b"1")]);
        exec[1].executable = true;
        assert_ne!(a.content_digest, validate(exec).unwrap().content_digest);
    }

    #[test]
    fn declared_version() {
        let with = |fm: &str| {
            let md = format!("---\nname: demo\ndescription: d\n{fm}---\n");
            validate(vec![InputFile::regular("SKILL.md", md)]).unwrap()
        };
        assert_eq!(
            with("version: 1.2.3\n")
                .declared_version
                .unwrap()
                .to_string(),
            "1.2.3"
        );
        assert_eq!(
            with("metadata:\n  version: 2.0.0-rc.1\n")
                .declared_version
                .unwrap()
                .to_string(),
            "2.0.0-rc.1"
        );
        let b = with("version: 1.0\n");
        assert!(b.declared_version.is_none());
        assert!(b.warnings.iter().any(|w| w.code == "version_not_semver"));
    }

    #[test]
    fn error_table() {
        let mut symlink = files(&[]);
        symlink.push(InputFile {
            path: "id_rsa".into(),
            bytes: vec![],
            executable: false,
            kind: InputKind::Symlink,
        });
        let mut hardlink = files(&[]);
        hardlink.push(InputFile {
            path: "h".into(),
            bytes: vec![],
            executable: false,
            kind: InputKind::HardLink,
        });
        let mut device = files(&[]);
        device.push(InputFile {
            path: "dev".into(),
            bytes: vec![],
            executable: false,
            kind: InputKind::Other,
        });
        let too_many: Vec<InputFile> = files(&[])
            .into_iter()
            .chain((0..MAX_FILES).map(|i| InputFile::regular(format!("f{i}"), "x")))
            .collect();
        let big = vec![0u8; (MAX_TOTAL_BYTES as usize) + 1 - SKILL.len()];
        let cases: Vec<(Vec<InputFile>, &str)> = vec![
            (
                vec![InputFile::regular("README.md", "x")],
                "missing_skill_md",
            ),
            (
                vec![InputFile::regular("sub/SKILL.md", SKILL)],
                "missing_skill_md",
            ),
            (files(&[("../escape", b"x")]), "unsafe_path"),
            (files(&[("/abs", b"x")]), "unsafe_path"),
            (files(&[("a\\b", b"x")]), "unsafe_path"),
            (files(&[("a\0b", b"x")]), "unsafe_path"),
            (files(&[("a/./b", b"x")]), "unsafe_path"),
            (files(&[("x.md", b"1"), ("x.md", b"2")]), "duplicate_path"),
            (files(&[("a", b"1"), ("a/b", b"2")]), "path_conflict"),
            (symlink, "not_a_regular_file"),
            (hardlink, "not_a_regular_file"),
            (device, "not_a_regular_file"),
            (too_many, "too_many_files"),
            (files(&[("big.bin", &big)]), "skill_too_large"),
            (
                vec![InputFile::regular(
                    "SKILL.md",
                    "---\nname: Bad\ndescription: d\n---\n",
                )],
                "invalid_skill_name",
            ),
        ];
        for (input, code) in cases {
            assert_eq!(
                validate(input).map(|_| ()).map_err(|e| e.code().as_str()),
                Err(code)
            );
        }
        // Exactly at the limits is fine.
        let at_limit: Vec<InputFile> = files(&[])
            .into_iter()
            .chain((1..MAX_FILES).map(|i| InputFile::regular(format!("f{i}"), "x")))
            .collect();
        assert!(validate(at_limit).is_ok());
        let exact = vec![0u8; MAX_TOTAL_BYTES as usize - SKILL.len()];
        assert!(validate(files(&[("big.bin", &exact)])).is_ok());
    }

    /// Paths that are one on a case-insensitive or normalizing file system (macOS, Windows) are
    /// refused: unpacked there, one file would replace the other, or land in another directory.
    #[test]
    fn paths_equal_after_nfc_and_lowercasing_collide() {
        let cases: &[(&[&str], (&str, &str))] = &[
            (&["Readme.md", "README.md"], ("README.md", "Readme.md")),
            (&["skill.md"], ("SKILL.md", "skill.md")),
            (&["Docs/a.md", "docs/A.md"], ("Docs", "docs")),
            (&["docs/a.md", "docs/A.md"], ("docs/A.md", "docs/a.md")),
            (&["Docs/a.md", "docs/b.md"], ("Docs", "docs")),
            (
                &["caf\u{e9}.md", "cafe\u{301}.md"],
                ("cafe\u{301}.md", "caf\u{e9}.md"),
            ),
            (&["ref", "REF/x.md"], ("REF", "ref")),
            (&["r\u{e9}f/x.md", "RE\u{301}F"], ("RE\u{301}F", "r\u{e9}f")),
            (&["\u{212A}.md", "k.md"], ("k.md", "\u{212A}.md")),
            (
                &["\u{3a3}\u{3a3}.md", "\u{3c3}\u{3c2}.md"],
                ("\u{3a3}\u{3a3}.md", "\u{3c3}\u{3c2}.md"),
            ),
        ];
        let mut failures = Vec::new();
        for (paths, (a, b)) in cases {
            let input = files(&paths.iter().map(|p| (*p, &b"x"[..])).collect::<Vec<_>>());
            match validate(input) {
                Err(BundleError::PathCollision(x, y)) if (x.as_str(), y.as_str()) == (*a, *b) => {}
                other => failures.push(format!(
                    "{paths:?}: {:?}",
                    other
                        .map(|b| b.warnings)
                        .map_err(|e| (e.code(), e.to_string()))
                )),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        let err = validate(files(&[("ref", b"1"), ("REF/x.md", b"2")])).unwrap_err();
        assert_eq!(err.code(), Code::PathCollision);
        assert!(err.to_string().contains("macOS"), "{err}");
        // Different names, or one name alone in any form, are fine.
        assert!(validate(files(&[("a.md", b"1"), ("b.md", b"2"), ("A/c.md", b"3")])).is_ok());
        assert!(validate(files(&[("cafe\u{301}.md", b"1"), ("Docs/a.md", b"2")])).is_ok());
    }
}
