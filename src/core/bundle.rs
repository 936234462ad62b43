//! A skill bundle: the set of files of one skill version, validated as a whole.
//!
//! Rules: relative safe paths ([`BundlePath`]), regular files only, no path twice, no file where
//! another needs a directory, `SKILL.md` at the root, at most [`MAX_FILES`] files and
//! [`MAX_TOTAL_BYTES`] bytes. A nested `SKILL.md` whose frontmatter name equals its directory name
//! becomes a skill of its own (SEP-2640 §Nested Skills); any other nested `SKILL.md` stays a plain
//! file, with a warning.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::digest::Digest;
use super::frontmatter::{self, FrontmatterError, Warning};
use super::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use super::name::SkillName;
use super::path::{BundlePath, PathError};
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
    #[error("there is no SKILL.md at the root of the skill")]
    MissingSkillMd,
    #[error("{0}")]
    SkillMd(#[from] FrontmatterError),
}

impl BundleError {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooManyFiles(_) => "too_many_files",
            Self::TooLarge(_) => "skill_too_large",
            Self::BadPath { .. } => "unsafe_path",
            Self::NotRegular { .. } => "not_a_regular_file",
            Self::Duplicate(_) => "duplicate_path",
            Self::PathConflict(_) => "path_conflict",
            Self::MissingSkillMd => "missing_skill_md",
            Self::SkillMd(e) => e.code(),
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

    let skill_md = by_path
        .iter()
        .find(|(p, _)| p.as_str() == SKILL_MD)
        .map(|(_, f)| &f.bytes)
        .ok_or(BundleError::MissingSkillMd)?;
    let root = frontmatter::parse(skill_md)?;
    let mut warnings = root.warnings.clone();
    let declared_version = declared_version(&root.frontmatter, &mut warnings);
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
            Ok(nested) if nested.name.as_str() == dir_name => entries.push(Entry {
                subpath: dir.to_owned(),
                name: nested.name,
                description: nested.description,
                frontmatter: nested.frontmatter,
            }),
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
    let mut lower: HashMap<String, &BundlePath> = HashMap::new();
    for path in by_path.keys() {
        if let Some(other) = lower.insert(path.as_str().to_lowercase(), path) {
            warnings.push(Warning::new(
                "case_collision",
                format!("{other} and {path} differ only in case"),
            ));
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
