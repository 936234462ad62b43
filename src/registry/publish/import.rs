//! Bulk loading: every skill found under some directories, and the embedded seed skills.
//!
//! Skills are read, validated and scanned on a blocking thread, a batch ahead of the writer, and
//! stored up to [`IMPORT_BATCH`] to a transaction (a small import in smaller batches, so that
//! reading and writing still overlap). A skill that cannot be imported is skipped with its code; a
//! storage failure stops the run (batches already reported stay stored).

use std::path::PathBuf;

use super::{Prepared, PublishRequest, Published, Publisher};
use crate::core::fix::{self, Fix};
use crate::core::scan::Policy;
use crate::core::uri::SKILL_MD;
use crate::core::{Code, InputFile, Namespace, SkillVersion, Warning};
use crate::error::{Error, Result};
use crate::source::{Candidate, ReadError, dir, seed};

/// Skills read, validated and stored per transaction, at most.
const IMPORT_BATCH: usize = 256;
/// Batches an import is cut into at least (down to [`MIN_BATCH`] skills each), so that a small
/// import overlaps reading one batch with writing the one before, as a large one does. (The
/// reading thread runs beside the writer, not on every core: the writer's many short statements
/// run fastest while the other core is busy; see BENCHMARKS.md, "What the content scan costs".)
const MIN_BATCHES: usize = 4;
const MIN_BATCH: usize = 16;

/// Skills per batch for an import of `n`.
fn batch_size(n: usize) -> usize {
    n.div_ceil(MIN_BATCHES).clamp(MIN_BATCH, IMPORT_BATCH)
}

/// What happened to one skill directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportOutcome {
    Imported {
        uri: String,
        version: String,
    },
    Unchanged {
        uri: String,
        version: String,
    },
    Skipped {
        code: Code,
        reason: String,
    },
    /// A skill its source no longer has: deprecated, never deleted (`sync`, `mirror`).
    Deprecated {
        uri: String,
        message: String,
    },
    /// A skill found at its source again, or no longer deprecated upstream: the deprecation the
    /// run set is lifted.
    Restored {
        uri: String,
    },
}

/// One line of the import report.
#[derive(Debug, Clone)]
pub struct ImportLine {
    pub dir: PathBuf,
    pub outcome: ImportOutcome,
    pub warnings: Vec<Warning>,
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The version of every skill (else each one's declared version, else 0.1.0).
    pub version: Option<SkillVersion>,
    /// Repair what `core::fix` can in each SKILL.md's frontmatter before validating (each fix
    /// is stored with the version as a `fixed_*` warning). Without it, a refusal that a fix
    /// would repair says so.
    pub fix: bool,
    /// With `fix`, also quote the plain scalars YAML 1.1 parsers read otherwise
    /// (`core::fix::quote_yaml_1_1`).
    pub quote_yaml_1_1: bool,
}

/// Totals of an import run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub imported: usize,
    pub unchanged: usize,
    pub skipped: usize,
    /// Imported or unchanged skills that `--fix` changed.
    pub fixed: usize,
    /// Skipped skills by the code of their refusal.
    pub skipped_by: std::collections::BTreeMap<Code, usize>,
    /// Skills deprecated because their source no longer has them.
    pub deprecated: usize,
    /// Skills found at their source again, their deprecation lifted.
    pub restored: usize,
}

impl ImportSummary {
    /// Add another run's totals (`sync` of many sources).
    pub fn add(&mut self, other: &ImportSummary) {
        self.imported += other.imported;
        self.unchanged += other.unchanged;
        self.skipped += other.skipped;
        self.fixed += other.fixed;
        self.deprecated += other.deprecated;
        self.restored += other.restored;
        for (code, n) in &other.skipped_by {
            *self.skipped_by.entry(*code).or_default() += n;
        }
    }

    /// Count one skill's outcome.
    pub fn count(&mut self, line: &ImportLine) {
        match &line.outcome {
            ImportOutcome::Imported { .. } => self.imported += 1,
            ImportOutcome::Unchanged { .. } => self.unchanged += 1,
            ImportOutcome::Skipped { code, .. } => {
                self.skipped += 1;
                *self.skipped_by.entry(*code).or_default() += 1;
            }
            ImportOutcome::Deprecated { .. } => self.deprecated += 1,
            ImportOutcome::Restored { .. } => self.restored += 1,
        }
        if line
            .warnings
            .iter()
            .any(|w| fix::CODES.contains(&w.code.as_str()))
        {
            self.fixed += 1;
        }
    }
}

/// A candidate read and validated: ready to store, or already a "skipped" line.
type PreparedCandidate = (PathBuf, std::result::Result<Prepared, ImportLine>);

impl Publisher {
    /// Import every skill found under `paths` into `namespace`, calling `report` once per skill
    /// (in discovery order, once its batch is committed).
    pub async fn import_dirs(
        &self,
        namespace: &Namespace,
        options: &ImportOptions,
        paths: &[PathBuf],
        report: impl FnMut(&ImportLine),
    ) -> Result<ImportSummary> {
        self.import_candidates(namespace, options, dir::candidates(paths), report)
            .await
    }

    /// Import skill directories already found ([`dir::candidates`]; a caller that shows
    /// progress knows the total first).
    pub async fn import_candidates(
        &self,
        namespace: &Namespace,
        options: &ImportOptions,
        candidates: Vec<Candidate>,
        mut report: impl FnMut(&ImportLine),
    ) -> Result<ImportSummary> {
        // Versions are signed where they are prepared, beside the writer rather than on it.
        let key = self.signing_key.get(&*self.store).await?.cloned();
        let prepare = |chunk: Vec<Candidate>| {
            let namespace = namespace.clone();
            let options = options.clone();
            let policy = self.scan_policy().clone();
            let key = key.clone();
            tokio::task::spawn_blocking(move || {
                chunk
                    .into_iter()
                    .map(|c| {
                        let (dir, mut prepared) = prepare_one(&namespace, &options, &policy, c);
                        if let (Ok(p), Some(key)) = (&mut prepared, &key) {
                            // A failure here is the store's to report: it signs again.
                            let _ = p.sign_ahead(key);
                        }
                        (dir, prepared)
                    })
                    .collect::<Vec<_>>()
            })
        };
        let mut summary = ImportSummary::default();
        let batch = batch_size(candidates.len());
        let mut chunks = candidates.chunks(batch).map(<[Candidate]>::to_vec);
        let mut next = chunks.next().map(prepare);
        while let Some(pending) = next.take() {
            let prepared = pending
                .await
                .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
            next = chunks.next().map(prepare);
            for line in self.store_chunk(prepared).await? {
                summary.count(&line);
                report(&line);
            }
        }
        Ok(summary)
    }

    /// Store one chunk with one commit and turn every candidate into its report line.
    async fn store_chunk(&self, chunk: Vec<PreparedCandidate>) -> Result<Vec<ImportLine>> {
        let mut lines: Vec<Option<ImportLine>> = Vec::with_capacity(chunk.len());
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
        let results = self.publish_prepared(ready).await?;
        for ((slot, dir), result) in dirs.into_iter().zip(results) {
            lines[slot] = Some(match result {
                Ok(published) => imported_line(dir, published),
                Err(Error::Storage(e)) => return Err(Error::Storage(e)),
                Err(e) => skipped(dir, e.code(), e.to_string()),
            });
        }
        Ok(lines.into_iter().flatten().collect())
    }

    /// Publish the embedded seed skills (idempotent: unchanged content is a no-op).
    pub async fn import_seed(&self) -> Result<ImportSummary> {
        let mut summary = ImportSummary::default();
        for (skill, files) in seed::skills() {
            let result = self
                .publish(PublishRequest {
                    namespace: seed::namespace(),
                    files,
                    expected_name: None,
                    version: None,
                    actor: "seed".to_owned(),
                    warnings: Vec::new(),
                })
                .await;
            match result {
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
}

pub(super) fn skipped(dir: PathBuf, code: Code, reason: String) -> ImportLine {
    ImportLine {
        dir,
        outcome: ImportOutcome::Skipped { code, reason },
        warnings: Vec::new(),
    }
}

pub(super) fn prepare_one(
    namespace: &Namespace,
    options: &ImportOptions,
    policy: &Policy,
    candidate: Candidate,
) -> PreparedCandidate {
    let dir = candidate.dir;
    match candidate.problem {
        None => {}
        // --fix packs a `skill.md` as SKILL.md.
        Some(ReadError::MisnamedSkillMd(_)) if options.fix => {}
        Some(problem) => {
            let mut reason = problem.to_string();
            if let ReadError::MisnamedSkillMd(found) = &problem {
                reason = format!("{reason} (run with --fix to pack {found} as SKILL.md)");
            }
            return (dir.clone(), Err(skipped(dir, problem.code(), reason)));
        }
    }
    let read = match dir::read_files(&dir) {
        Ok(read) => read,
        Err(e) => return (dir.clone(), Err(skipped(dir, e.code(), e.to_string()))),
    };
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (mut files, mut warnings) = (read.files, read.warnings);
    // Without --fix, what a fix would change, to name it in a refusal.
    let unfixed: Vec<InputFile> = if options.fix {
        warnings.extend(
            fix::apply(&mut files, &dir_name, options.quote_yaml_1_1)
                .iter()
                .map(Fix::warning),
        );
        Vec::new()
    } else {
        files
            .iter()
            .filter(|f| f.path.ends_with(SKILL_MD))
            .cloned()
            .collect()
    };
    let prepared = Publisher::prepare(
        PublishRequest {
            namespace: namespace.clone(),
            files,
            expected_name: None,
            version: options.version.clone(),
            actor: "import".to_owned(),
            warnings,
        },
        policy,
    )
    .map_err(|e| {
        let mut reason = e.to_string();
        let mut unfixed = unfixed;
        if fix::FIXABLE.contains(&e.code())
            && let Some(hint) = fix::hint(&fix::fix_files(&mut unfixed, &dir_name))
        {
            reason = format!("{reason} ({hint})");
        }
        skipped(dir.clone(), e.code(), reason)
    });
    (dir, prepared)
}

/// The line of a skill read from a directory: [`published_line`], with a warning when the
/// directory is not named as the skill.
pub(super) fn imported_line(dir: PathBuf, published: Published) -> ImportLine {
    let name = published.version.name().as_str().to_owned();
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let mut line = published_line(dir, published);
    if dir_name.as_deref() != Some(name.as_str()) {
        line.warnings.push(Warning::new(
            "directory_name_mismatch",
            format!(
                "directory {:?} differs from the skill name {name:?}",
                dir_name.unwrap_or_default(),
            ),
        ));
    }
    line
}

/// The line of a stored (or unchanged) version, labelled `label`, with its warnings.
pub(super) fn published_line(label: PathBuf, published: Published) -> ImportLine {
    let uri = published.uri().to_string();
    let version = published.version.version.to_string();
    ImportLine {
        dir: label,
        outcome: if published.created {
            ImportOutcome::Imported { uri, version }
        } else {
            ImportOutcome::Unchanged { uri, version }
        },
        warnings: published.warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_imports_are_cut_into_batches_that_overlap() {
        assert_eq!(batch_size(1), MIN_BATCH);
        assert_eq!(batch_size(141), 36);
        assert_eq!(batch_size(100_000), IMPORT_BATCH);
    }
}
