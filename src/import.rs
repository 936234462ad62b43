//! Bulk import from directories: find every `SKILL.md`, read each skill's files, publish them.
//!
//! Hidden directories are searched; symbolic links are never followed. A `SKILL.md` inside another
//! skill's directory belongs to that skill's bundle (where it may become a nested skill).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use crate::core::uri::SKILL_MD;
use crate::core::{InputFile, InputKind, Namespace, SkillVersion, Warning};
use crate::error::Error;
use crate::registry::Registry;

/// A directory that looks like a skill, or why it cannot be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub dir: PathBuf,
    /// `None` when the directory can be read as a skill.
    pub problem: Option<(String, String)>,
}

/// What happened to one skill directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Imported {
        uri: String,
        version: String,
    },
    Unchanged {
        uri: String,
        version: String,
    },
    /// `code` is a stable snake_case error code.
    Skipped {
        code: String,
        reason: String,
    },
}

/// One line of the import report.
#[derive(Debug, Clone)]
pub struct Line {
    pub dir: PathBuf,
    pub outcome: Outcome,
    pub warnings: Vec<Warning>,
}

/// Totals of an import run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub imported: usize,
    pub unchanged: usize,
    pub skipped: usize,
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
            let problem = if ft.is_symlink() {
                Some((
                    "not_a_regular_file",
                    "SKILL.md is a symbolic link; links are never followed".to_owned(),
                ))
            } else if !ft.is_file() {
                Some((
                    "not_a_regular_file",
                    "SKILL.md is not a regular file".to_owned(),
                ))
            } else {
                None
            };
            found.push(Candidate {
                dir: dir.to_path_buf(),
                problem: problem.map(|(c, r)| (c.to_owned(), r)),
            });
        } else if name.eq_ignore_ascii_case(SKILL_MD) && !dir.join(SKILL_MD).exists() {
            found.push(Candidate {
                dir: dir.to_path_buf(),
                problem: Some((
                    "missing_skill_md".to_owned(),
                    format!("found {name}; the entry point must be named exactly SKILL.md"),
                )),
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

/// Read every entry below `dir` as bundle input. Stops reading past the bundle limits (the
/// bundle validation then reports which limit), so a huge directory is never read whole.
pub fn read_dir_files(dir: &Path) -> Result<Vec<InputFile>, (String, String)> {
    let mut files = Vec::new();
    let mut total = 0u64;
    let io = |e: &dyn std::fmt::Display| ("io_error".to_owned(), e.to_string());
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
            return Err((
                "unsafe_path".to_owned(),
                format!("{} is not a UTF-8 file name", rel.display()),
            ));
        };
        let (kind, bytes, executable) = if ft.is_symlink() {
            (InputKind::Symlink, Vec::new(), false)
        } else if ft.is_file() {
            let meta = entry.metadata().map_err(|e| io(&e))?;
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
            let bytes = std::fs::read(entry.path()).map_err(|e| io(&e))?;
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
    Ok(files)
}

/// Skills read, validated and stored per transaction.
const IMPORT_BATCH: usize = 256;

/// Import every skill found under `paths` into `namespace`, calling `report` once per skill
/// (in discovery order, once its batch is committed).
///
/// Skills are read and validated on a blocking thread, a batch ahead of the writer, and stored
/// `IMPORT_BATCH` to a transaction. A skill that cannot be imported is skipped with its code;
/// a storage failure stops the run (batches already reported stay stored).
pub async fn import_paths(
    registry: &Registry,
    namespace: &Namespace,
    version: Option<&SkillVersion>,
    paths: &[PathBuf],
    mut report: impl FnMut(&Line),
) -> Result<Summary, Error> {
    let mut candidates = Vec::new();
    for path in paths {
        if !path.is_dir() {
            candidates.push(Candidate {
                dir: path.clone(),
                problem: Some(("not_found".to_owned(), "not a directory".to_owned())),
            });
            continue;
        }
        let found = discover(path);
        if found.is_empty() {
            candidates.push(Candidate {
                dir: path.clone(),
                problem: Some((
                    "missing_skill_md".to_owned(),
                    "no SKILL.md found below this path".to_owned(),
                )),
            });
        }
        candidates.extend(found);
    }
    let prepare = |chunk: Vec<Candidate>| {
        let namespace = namespace.clone();
        let version = version.cloned();
        tokio::task::spawn_blocking(move || {
            chunk
                .into_iter()
                .map(|c| prepare_one(&namespace, version.as_ref(), c))
                .collect::<Vec<_>>()
        })
    };
    let mut summary = Summary::default();
    let mut chunks = candidates.chunks(IMPORT_BATCH).map(<[Candidate]>::to_vec);
    let mut next = chunks.next().map(prepare);
    while let Some(pending) = next.take() {
        let prepared = pending
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        next = chunks.next().map(prepare);
        for line in store_chunk(registry, prepared).await? {
            match line.outcome {
                Outcome::Imported { .. } => summary.imported += 1,
                Outcome::Unchanged { .. } => summary.unchanged += 1,
                Outcome::Skipped { .. } => summary.skipped += 1,
            }
            report(&line);
        }
    }
    Ok(summary)
}

/// A candidate read and validated: ready to store, or already a "skipped" line.
type PreparedCandidate = (PathBuf, Result<crate::registry::Prepared, Line>);

fn skipped(dir: PathBuf, code: String, reason: String) -> Line {
    Line {
        dir,
        outcome: Outcome::Skipped { code, reason },
        warnings: Vec::new(),
    }
}

fn prepare_one(
    namespace: &Namespace,
    version: Option<&SkillVersion>,
    candidate: Candidate,
) -> PreparedCandidate {
    let dir = candidate.dir;
    if let Some((code, reason)) = candidate.problem {
        return (dir.clone(), Err(skipped(dir, code, reason)));
    }
    let prepared = match read_dir_files(&dir) {
        Err((code, reason)) => Err(skipped(dir.clone(), code, reason)),
        Ok(files) => Registry::prepare(
            namespace.clone(),
            files,
            None,
            version.cloned(),
            Some("import"),
        )
        .map_err(|e| skipped(dir.clone(), e.code().to_owned(), e.to_string())),
    };
    (dir, prepared)
}

/// Store one chunk in one transaction and turn every candidate into its report line.
async fn store_chunk(
    registry: &Registry,
    chunk: Vec<PreparedCandidate>,
) -> Result<Vec<Line>, Error> {
    let mut lines: Vec<Option<Line>> = Vec::with_capacity(chunk.len());
    let mut dirs = Vec::new();
    let mut ready = Vec::new();
    for (dir, prepared) in chunk {
        match prepared {
            Ok(p) => {
                dirs.push((lines.len(), dir));
                ready.push(p);
                lines.push(None);
            }
            Err(line) => lines.push(Some(line)),
        }
    }
    let results = registry.publish_prepared(ready).await?;
    for ((slot, dir), result) in dirs.into_iter().zip(results) {
        lines[slot] = Some(match result {
            Ok(published) => imported_line(dir, published),
            Err(Error::Storage(e)) => return Err(Error::Storage(e)),
            Err(e) => skipped(dir, e.code().to_owned(), e.to_string()),
        });
    }
    Ok(lines.into_iter().flatten().collect())
}

fn imported_line(dir: PathBuf, published: crate::registry::Published) -> Line {
    let mut warnings = published.warnings;
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    if dir_name.as_deref() != Some(published.name.as_str()) {
        warnings.push(Warning::new(
            "directory_name_mismatch",
            format!(
                "directory {:?} differs from the skill name {:?}",
                dir_name.unwrap_or_default(),
                published.name.as_str()
            ),
        ));
    }
    let uri = published.uri;
    let version = published.version.to_string();
    Line {
        dir,
        outcome: if published.created {
            Outcome::Imported { uri, version }
        } else {
            Outcome::Unchanged { uri, version }
        },
        warnings,
    }
}

/// The embedded `skills-seed/` files.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/seed.rs"));
}

/// Namespace the embedded seed skills are served in.
pub const SEED_NAMESPACE: &str = "skillreg";

/// Publish the embedded seed skills (idempotent: unchanged content is a no-op).
pub async fn import_seed(registry: &Registry) -> Result<Summary, Error> {
    let namespace = Namespace::new(SEED_NAMESPACE).expect("valid seed namespace");
    let mut by_skill: std::collections::BTreeMap<&str, Vec<InputFile>> = Default::default();
    for (path, bytes, executable) in embedded::SEED_FILES {
        let Some((skill, rel)) = path.split_once('/') else {
            continue;
        };
        by_skill.entry(skill).or_default().push(InputFile {
            path: rel.to_owned(),
            bytes: bytes.to_vec(),
            executable: *executable,
            kind: InputKind::File,
        });
    }
    let mut summary = Summary::default();
    for (skill, files) in by_skill {
        match registry
            .publish(&namespace, files, None, None, Some("seed"))
            .await
        {
            Ok(p) if p.created => summary.imported += 1,
            Ok(_) => summary.unchanged += 1,
            Err(Error::Storage(e)) => return Err(Error::Storage(e)),
            Err(e) => {
                tracing::warn!(skill, error = %e, "seed skill not imported");
                summary.skipped += 1;
            }
        }
    }
    Ok(summary)
}
