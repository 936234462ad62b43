//! Reading skills from directories: find every `SKILL.md` below a path, and read one skill
//! directory as bundle input.
//!
//! Hidden directories are searched; directory links are never followed. A link to a file inside
//! the same skill is packed as a regular file holding the target's bytes (as `npm pack` and
//! `cargo package` do), with a warning; a link that leaves the skill, dangles or loops is refused.
//! A `SKILL.md` inside another skill's directory belongs to that skill's bundle (where it may
//! become a nested skill).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use crate::core::uri::SKILL_MD;
use crate::core::{Code, InputFile, InputKind, Warning};

/// Why a directory cannot be read as a skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error(
        "SKILL.md is a symbolic link that does not stay inside the skill; only links to files in the skill are followed"
    )]
    LinkedSkillMd,
    #[error("SKILL.md is not a regular file")]
    SkillMdNotRegular,
    #[error("found {0}; the entry point must be named exactly SKILL.md")]
    MisnamedSkillMd(String),
    #[error("no SKILL.md found below this path")]
    NoSkillMd,
    #[error("not a directory")]
    NotADirectory,
    #[error("{0} is not a UTF-8 file name")]
    NonUtf8Name(String),
    #[error("{0}")]
    Io(String),
}

impl ReadError {
    pub fn code(&self) -> Code {
        match self {
            Self::LinkedSkillMd | Self::SkillMdNotRegular => Code::NotARegularFile,
            Self::MisnamedSkillMd(_) | Self::NoSkillMd => Code::MissingSkillMd,
            Self::NotADirectory => Code::NotADirectory,
            Self::NonUtf8Name(_) => Code::UnsafePath,
            Self::Io(_) => Code::IoError,
        }
    }
}

/// A directory that looks like a skill, or why it cannot be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub dir: PathBuf,
    /// `None` when the directory can be read as a skill.
    pub problem: Option<ReadError>,
}

/// The candidates under each of `paths`: a path that is not a directory, or holds no skill, is a
/// candidate with its problem.
pub fn candidates(paths: &[PathBuf]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(Candidate {
                dir: path.clone(),
                problem: Some(ReadError::NotADirectory),
            });
            continue;
        }
        let found = discover(path);
        if found.is_empty() {
            out.push(Candidate {
                dir: path.clone(),
                problem: Some(ReadError::NoSkillMd),
            });
        }
        out.extend(found);
    }
    out
}

/// Find the top-level skill directories under `root` (which may itself be one).
pub fn discover(root: &Path) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = Vec::new();
    let walker = WalkDir::new(root).follow_links(false).sort_by_file_name();
    for entry in walker.into_iter().filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy();
        let Some(dir) = entry.path().parent() else {
            continue;
        };
        let ft = entry.file_type();
        if name == SKILL_MD {
            let problem = if ft.is_symlink() && in_tree_target(dir, entry.path()).is_none() {
                Some(ReadError::LinkedSkillMd)
            } else if ft.is_symlink() {
                None
            } else if !ft.is_file() {
                Some(ReadError::SkillMdNotRegular)
            } else {
                None
            };
            found.push(Candidate {
                dir: dir.to_path_buf(),
                problem,
            });
        } else if name.eq_ignore_ascii_case(SKILL_MD) && !dir.join(SKILL_MD).exists() {
            found.push(Candidate {
                dir: dir.to_path_buf(),
                problem: Some(ReadError::MisnamedSkillMd(name.into_owned())),
            });
        }
    }
    found.sort_by(|a, b| a.dir.cmp(&b.dir));
    found.dedup_by(|a, b| a.dir == b.dir);
    // Drop skills nested inside an importable skill: they travel in its bundle.
    let roots: BTreeSet<PathBuf> = found
        .iter()
        .filter(|c| c.problem.is_none())
        .map(|c| c.dir.clone())
        .collect();
    found
        .into_iter()
        .filter(|c| !c.dir.ancestors().skip(1).any(|a| roots.contains(a)))
        .collect()
}

/// A skill directory as read: its files, and what reading changed (links packed as files).
#[derive(Debug, Clone)]
pub struct SkillDir {
    pub files: Vec<InputFile>,
    /// `link_packed`, one per link packed as the file it points at.
    pub warnings: Vec<Warning>,
}

/// The file a link at `link` points at, when it is a regular file inside `root` (both resolved,
/// so `..` and chains of links count where they end). `None` for a link that leaves `root`,
/// dangles, loops or ends at a directory.
fn in_tree_target(root: &Path, link: &Path) -> Option<PathBuf> {
    let root = root.canonicalize().ok()?;
    let target = link.canonicalize().ok()?;
    (target.starts_with(&root) && target.is_file()).then_some(target)
}

/// Read every entry below `dir` as bundle input. Stops reading past the bundle limits (the
/// bundle validation then reports which limit), so a huge directory is never read whole. A
/// link to a file in the skill is read as that file; any other link stays a link (which the
/// bundle validation refuses).
pub fn read_files(dir: &Path) -> Result<SkillDir, ReadError> {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut total = 0u64;
    let io = |e: &dyn std::fmt::Display| ReadError::Io(e.to_string());
    for entry in WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
    {
        let entry = entry.map_err(|e| io(&e))?;
        let ft = entry.file_type();
        if ft.is_dir() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).map_err(|e| io(&e))?;
        let Some(rel) = rel.to_str() else {
            return Err(ReadError::NonUtf8Name(rel.display().to_string()));
        };
        let target = ft
            .is_symlink()
            .then(|| in_tree_target(dir, entry.path()))
            .flatten();
        if let Some(target) = &target {
            let shown = target
                .strip_prefix(dir.canonicalize().map_err(|e| io(&e))?)
                .unwrap_or(target);
            warnings.push(Warning::new(
                crate::core::fix::LINK_PACKED,
                format!(
                    "{rel} is a symbolic link to {}; packed as a regular file with its bytes",
                    shown.display()
                ),
            ));
        }
        let (kind, bytes, executable) = if ft.is_symlink() && target.is_none() {
            (InputKind::Symlink, Vec::new(), false)
        } else if ft.is_file() || target.is_some() {
            let path = target.as_deref().unwrap_or(entry.path());
            let meta = std::fs::metadata(path).map_err(|e| io(&e))?;
            total += meta.len();
            if files.len() > MAX_FILES || total > MAX_TOTAL_BYTES {
                // Enough to fail validation with the right error; no need to read the rest.
                files.push(InputFile {
                    path: rel.to_owned(),
                    bytes: vec![
                        0;
                        usize::try_from(meta.len().min(MAX_TOTAL_BYTES + 1)).unwrap_or(0)
                    ],
                    executable: false,
                    kind: InputKind::File,
                });
                break;
            }
            let bytes = std::fs::read(path).map_err(|e| io(&e))?;
            (
                InputKind::File,
                bytes,
                meta.permissions().mode() & 0o111 != 0,
            )
        } else {
            (InputKind::Other, Vec::new(), false)
        };
        files.push(InputFile {
            path: rel.to_owned(),
            bytes,
            executable,
            kind,
        });
    }
    Ok(SkillDir { files, warnings })
}
