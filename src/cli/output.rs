//! What the commands print with `--json`, one type per shape: one JSON object a line (an
//! `import` or `mirror` run's skills, then its totals), or one document (`migrate`).
//! `tests/snapshots/foreign-shapes.json` holds one example of each, beside ClawHub's and the
//! discovery index's answers, so a change to any shape shows as a diff (`UPDATE_SNAPSHOTS=1`
//! writes it after review).

use std::collections::BTreeMap;

use serde::Serialize;

use super::Progress;

use crate::core::provenance::public_server;
use crate::core::records::{CopyReport, SourceId, SourceRecord, VerifyReport};
use crate::core::scan::{Finding, Verdict};
use crate::core::{Code, Timestamp, Warning};
use crate::registry::{ImportLine, ImportOutcome, ImportSummary};

/// `value` as one line of JSON. The shapes here hold strings, numbers and maps keyed by
/// strings, which always serialize (as `serde_json::json!`, which they replace, assumed).
pub(super) fn line(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("a CLI output shape serializes")
}

/// One skill of an `import` or `mirror` run: a JSON object, or a line above the progress bar.
pub(super) fn print_import_line(skill: &ImportLine, json: bool, progress: &Progress) {
    progress.inc();
    if json {
        println!("{}", line(&Line::of(skill)));
        return;
    }
    // An upstream names the directories and writes the frontmatter that warnings and reasons
    // quote: shown, never obeyed by the terminal.
    let dir = skill.dir.display();
    progress.println(&crate::core::text::printable(&match &skill.outcome {
        ImportOutcome::Imported { uri, version } => format!("imported  {uri} {version}  ({dir})"),
        ImportOutcome::Unchanged { uri, version } => format!("unchanged {uri} {version}  ({dir})"),
        ImportOutcome::Skipped { code, reason } => format!("skipped   {dir}: {reason} [{code}]"),
        ImportOutcome::Deprecated { uri, message } => format!("deprecated {uri}: {message}"),
        ImportOutcome::Restored { uri } => {
            format!("restored  {uri}: no longer deprecated (the source has it again, or lifted its deprecation)")
        }
    }));
    for w in &skill.warnings {
        progress.println(&crate::core::text::printable(&format!("  warning: {w}")));
    }
}

/// The totals that end an `import`, `mirror` or `sync` run.
pub(super) fn print_import_summary(
    summary: &ImportSummary,
    json: bool,
    started: std::time::Instant,
) {
    if json {
        let totals = Summary {
            summary: Totals::of(summary, started.elapsed()),
        };
        println!("{}", line(&totals));
        return;
    }
    let mut line = format!(
        "{} imported, {} unchanged, {} skipped",
        summary.imported, summary.unchanged, summary.skipped
    );
    if summary.skipped > 0 {
        let reasons: Vec<String> = summary
            .skipped_by
            .iter()
            .map(|(code, n)| format!("{n} {code}"))
            .collect();
        line.push_str(&format!(" ({})", reasons.join(", ")));
    }
    if summary.fixed > 0 {
        line.push_str(&format!("; {} fixed", summary.fixed));
    }
    if summary.deprecated > 0 {
        line.push_str(&format!("; {} deprecated", summary.deprecated));
    }
    if summary.restored > 0 {
        line.push_str(&format!("; {} restored", summary.restored));
    }
    println!("{line}");
}

/// `reindex --json`.
#[derive(Serialize)]
pub(super) struct Indexed {
    pub indexed: u64,
}

/// `scan --json`: one skill directory's findings.
#[derive(Serialize)]
pub(super) struct Scanned<'a> {
    pub dir: String,
    pub verdict: Verdict,
    pub findings: &'a [Finding],
}

/// `scan --json`'s last line.
#[derive(Serialize)]
pub(super) struct ScanSummary {
    pub summary: ScanTotals,
}

#[derive(Serialize)]
pub(super) struct ScanTotals {
    pub skills: usize,
    pub verdicts: BTreeMap<Verdict, usize>,
    /// How many skills each rule flags.
    pub skills_per_rule: BTreeMap<String, usize>,
}

/// `migrate --json`: what was copied, and the copy's scrub.
#[derive(Serialize)]
pub(super) struct Migrated<'a> {
    pub copied: &'a CopyReport,
    pub verify: &'a VerifyReport,
}

/// One skill of an `import`, `mirror` or `sync` run.
#[derive(Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(super) enum Line<'a> {
    Imported {
        dir: String,
        uri: &'a str,
        version: &'a str,
        warnings: &'a [Warning],
    },
    Unchanged {
        dir: String,
        uri: &'a str,
        version: &'a str,
        warnings: &'a [Warning],
    },
    Skipped {
        dir: String,
        code: Code,
        reason: &'a str,
    },
    Deprecated {
        uri: &'a str,
        message: &'a str,
    },
    Restored {
        uri: &'a str,
    },
}

impl<'a> Line<'a> {
    pub fn of(line: &'a ImportLine) -> Self {
        let dir = line.dir.display().to_string();
        let warnings = line.warnings.as_slice();
        match &line.outcome {
            ImportOutcome::Imported { uri, version } => Self::Imported {
                dir,
                uri,
                version,
                warnings,
            },
            ImportOutcome::Unchanged { uri, version } => Self::Unchanged {
                dir,
                uri,
                version,
                warnings,
            },
            ImportOutcome::Skipped { code, reason } => Self::Skipped {
                dir,
                code: *code,
                reason,
            },
            ImportOutcome::Deprecated { uri, message } => Self::Deprecated { uri, message },
            ImportOutcome::Restored { uri } => Self::Restored { uri },
        }
    }
}

/// The totals of a run (`import`, `mirror`), of one source of a `sync`, or of the whole `sync`
/// (which also counts its sources).
#[derive(Serialize)]
pub(super) struct Totals<'a> {
    pub imported: usize,
    pub unchanged: usize,
    pub skipped: usize,
    pub fixed: usize,
    pub skipped_by: &'a BTreeMap<Code, usize>,
    pub deprecated: usize,
    pub restored: usize,
    /// Sources read (the whole `sync` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<usize>,
    /// Sources whose read or store failed (the whole `sync` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_sources: Option<usize>,
    pub seconds: f64,
}

impl<'a> Totals<'a> {
    pub fn of(summary: &'a ImportSummary, took: std::time::Duration) -> Self {
        Self {
            imported: summary.imported,
            unchanged: summary.unchanged,
            skipped: summary.skipped,
            fixed: summary.fixed,
            skipped_by: &summary.skipped_by,
            deprecated: summary.deprecated,
            restored: summary.restored,
            sources: None,
            failed_sources: None,
            seconds: took.as_secs_f64(),
        }
    }
}

/// The last line of an `import` or `mirror` run.
#[derive(Serialize)]
pub(super) struct Summary<'a> {
    pub summary: Totals<'a>,
}

/// The last line of a `sync`.
#[derive(Serialize)]
pub(super) struct Total<'a> {
    pub total: Totals<'a>,
}

/// A recorded source (`sources list --json`, and each source of a `sync`).
#[derive(Serialize)]
pub(super) struct Source<'a> {
    pub id: SourceId,
    pub namespace: &'a str,
    pub kind: &'static str,
    pub location: String,
    #[serde(rename = "ref")]
    pub reference: Option<&'a str>,
    pub path: &'a str,
    pub fix: bool,
    pub created_at: Timestamp,
    pub synced_at: Option<Timestamp>,
    pub revision: Option<&'a str>,
}

impl<'a> Source<'a> {
    pub fn of(source: &'a SourceRecord) -> Self {
        Self {
            id: source.id,
            namespace: source.namespace.as_str(),
            kind: source.spec.kind.as_str(),
            // A URL refused now (recorded by an older version) may carry a secret: not printed
            // whole.
            location: if source.spec.check().is_ok() {
                source.spec.location.clone()
            } else {
                public_server(&source.spec.location)
            },
            reference: source.spec.reference.as_deref(),
            path: &source.spec.subpath,
            fix: source.spec.fix,
            created_at: source.created_at,
            synced_at: source.synced_at,
            revision: source.revision.as_deref(),
        }
    }
}

/// One source of a `sync`, read and stored.
#[derive(Serialize)]
pub(super) struct SourceSynced<'a> {
    pub source: Source<'a>,
    pub summary: Totals<'a>,
}

/// One source of a `sync` that failed.
#[derive(Serialize)]
pub(super) struct SourceFailed<'a> {
    pub source: Source<'a>,
    pub error: SourceError,
    pub seconds: f64,
}

#[derive(Serialize)]
pub(super) struct SourceError {
    pub code: Code,
    pub message: String,
}

/// A log record over the size limit, cut, when the log is JSON.
#[derive(Serialize)]
pub(super) struct CutRecord<'a> {
    /// Always `WARN`.
    pub level: &'static str,
    /// Always `skillreg::log`.
    pub target: &'static str,
    /// Always `log record cut`.
    pub message: &'static str,
    pub record_bytes: usize,
    pub record_start: &'a str,
}

/// One example of every `--json` shape, named, from fixed values (no moving times), with those
/// the registry's and the install client's own types print as they are (`index-snapshot`,
/// `rescan`, `verify`, `check`, `outdated`). The remote commands' `--json` prints the REST
/// API's answer, whose shapes the OpenAPI snapshot holds.
#[cfg(test)]
fn examples() -> Vec<(&'static str, serde_json::Value)> {
    use std::path::PathBuf;
    use std::time::Duration;

    use serde_json::to_value;

    use crate::consumer::install::{CheckReport, FolderCheck, OutdatedRow, SkillCheck};
    use crate::core::provenance::{SourceKind, SourceSpec};
    use crate::core::scan::Severity;
    use crate::registry::{RescanReport, SnapshotInfo};

    let warnings = vec![Warning::new(
        "unknown_field",
        "frontmatter field `foo` is unknown",
    )];
    let line = |outcome| ImportLine {
        dir: PathBuf::from("skills/pdf"),
        outcome,
        warnings: warnings.clone(),
    };
    let imported = line(ImportOutcome::Imported {
        uri: "skill://acme/pdf/SKILL.md".to_owned(),
        version: "1.2.0".to_owned(),
    });
    let unchanged = line(ImportOutcome::Unchanged {
        uri: "skill://acme/pdf/SKILL.md".to_owned(),
        version: "1.2.0".to_owned(),
    });
    let skipped = line(ImportOutcome::Skipped {
        code: Code::VersionExists,
        reason: "acme/pdf@1.2.0 already exists with different content".to_owned(),
    });
    let deprecated = line(ImportOutcome::Deprecated {
        uri: "skill://acme/old/SKILL.md".to_owned(),
        message: "no longer at its source".to_owned(),
    });
    let restored = line(ImportOutcome::Restored {
        uri: "skill://acme/old/SKILL.md".to_owned(),
    });
    let summary = ImportSummary {
        imported: 3,
        unchanged: 2,
        skipped: 1,
        fixed: 1,
        skipped_by: [(Code::VersionExists, 1)].into(),
        deprecated: 1,
        restored: 1,
    };
    let took = Duration::from_millis(1500);
    let source = SourceRecord {
        id: 7,
        namespace: crate::core::Namespace::new("acme").expect("a namespace"),
        spec: SourceSpec {
            kind: SourceKind::Git,
            location: "https://github.com/acme/skills".to_owned(),
            reference: Some("main".to_owned()),
            subpath: "skills".to_owned(),
            fix: false,
        },
        created_at: "2026-01-01T00:00:00Z".parse().unwrap(),
        synced_at: Some("2026-01-02T00:00:00Z".parse().unwrap()),
        revision: Some("0123456789abcdef0123456789abcdef01234567".to_owned()),
    };
    let findings = vec![Finding {
        rule: "shell-pipe".to_owned(),
        severity: Severity::High,
        file: "install.sh".to_owned(),
        line: 3,
        excerpt: "curl https://x | sh".to_owned(),
    }];
    let report = VerifyReport {
        blobs_checked: 4,
        bytes_checked: 4096,
        versions_checked: 2,
        problems: vec!["blob sha256:ab… is missing".to_owned()],
    };
    let rescan = RescanReport {
        scanned: 2,
        changed: 1,
        verdicts: [(Verdict::Clean, 1), (Verdict::Blocked, 1)].into(),
        blocked: vec!["acme/pdf@1.2.0".to_owned()],
    };
    let shapes: Vec<(&'static str, serde_json::Result<serde_json::Value>)> = vec![
        ("cli reindex", to_value(Indexed { indexed: 42 })),
        (
            "cli index-snapshot",
            to_value(SnapshotInfo {
                generation: 9,
                skills: 42,
                bytes: 65536,
            }),
        ),
        (
            "cli scan (a skill)",
            to_value(Scanned {
                dir: "skills/pdf".to_owned(),
                verdict: Verdict::Flagged,
                findings: &findings,
            }),
        ),
        (
            "cli scan (summary)",
            to_value(ScanSummary {
                summary: ScanTotals {
                    skills: 2,
                    verdicts: [(Verdict::Clean, 1), (Verdict::Flagged, 1)].into(),
                    skills_per_rule: [("shell-pipe".to_owned(), 1)].into(),
                },
            }),
        ),
        ("cli rescan", to_value(&rescan)),
        ("cli verify", to_value(&report)),
        (
            "cli migrate",
            to_value(Migrated {
                copied: &CopyReport {
                    rows: 120,
                    blob_bytes: 4096,
                    generation: 9,
                },
                verify: &report,
            }),
        ),
        ("cli import (imported)", to_value(Line::of(&imported))),
        ("cli import (unchanged)", to_value(Line::of(&unchanged))),
        ("cli import (skipped)", to_value(Line::of(&skipped))),
        ("cli import (deprecated)", to_value(Line::of(&deprecated))),
        ("cli import (restored)", to_value(Line::of(&restored))),
        (
            "cli import (summary)",
            to_value(Summary {
                summary: Totals::of(&summary, took),
            }),
        ),
        ("cli sources list", to_value(Source::of(&source))),
        (
            "cli sync (a source)",
            to_value(SourceSynced {
                source: Source::of(&source),
                summary: Totals::of(&summary, took),
            }),
        ),
        (
            "cli sync (a source that failed)",
            to_value(SourceFailed {
                source: Source::of(&source),
                error: SourceError {
                    code: Code::SourceUnavailable,
                    message: "the upstream answered 503".to_owned(),
                },
                seconds: took.as_secs_f64(),
            }),
        ),
        (
            "cli sync (total)",
            to_value(Total {
                total: Totals {
                    sources: Some(2),
                    failed_sources: Some(1),
                    ..Totals::of(&summary, took)
                },
            }),
        ),
        (
            "cli check",
            to_value(CheckReport {
                skills: vec![SkillCheck {
                    path: "acme/pdf".to_owned(),
                    version: Some("1.2.0".to_owned()),
                    folders: vec![FolderCheck {
                        folder: ".claude/skills/pdf".to_owned(),
                        missing: vec!["scripts/run.sh".to_owned()],
                        modified: vec!["SKILL.md".to_owned()],
                        extra: vec!["notes.txt".to_owned()],
                    }],
                    source: Some("revoked: leaks a key".to_owned()),
                    revoked: true,
                    unchecked: true,
                    signature: Some("the signature does not verify with key 3f2a…".to_owned()),
                }],
            }),
        ),
        (
            "cli outdated",
            to_value(vec![OutdatedRow {
                path: "acme/pdf".to_owned(),
                requested: "^1.2".to_owned(),
                locked: Some("1.2.0".to_owned()),
                wanted: Some("1.3.0".to_owned()),
                latest: Some("2.0.0".to_owned()),
                update_available: true,
            }]),
        ),
        (
            "cli stats",
            to_value(SkillUsage::of(
                &crate::core::SkillRef::parse("acme", "pdf").expect("a valid name"),
                {
                    let mut totals = crate::core::usage::Totals::default();
                    totals.add(crate::core::usage::Kind::Get, 5);
                    totals.add(crate::core::usage::Kind::ClientInstall, 1);
                    totals
                },
                30,
            )),
        ),
        (
            "cli log record cut",
            to_value(CutRecord {
                level: "WARN",
                target: "skillreg::log",
                message: "log record cut",
                record_bytes: 70000,
                record_start: "{\"level\":\"INFO\"",
            }),
        ),
    ];
    shapes
        .into_iter()
        .map(|(name, value)| (name, value.expect("a shape serializes")))
        .collect()
}

/// `stats --json`: one skill and its reads by kind over `days` (0: every day counted).
#[derive(Serialize)]
pub(super) struct SkillUsage {
    pub skill: String,
    pub days: u32,
    pub total: u64,
    pub counts: crate::http::api::UsageCountsView,
}

impl SkillUsage {
    pub fn of(
        skill: &crate::core::SkillRef,
        totals: crate::core::usage::Totals,
        days: u32,
    ) -> Self {
        Self {
            skill: skill.to_string(),
            days,
            total: totals.all(),
            counts: totals.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    /// One example of every foreign shape (ClawHub's and the discovery index's answers, each
    /// `--json` output), compared with its reviewed snapshot: a shape that changes shows as a
    /// diff (`UPDATE_SNAPSHOTS=1` writes it after review).
    #[test]
    fn the_foreign_shapes_match_their_snapshot() {
        let mut document = serde_json::Map::new();
        let examples = crate::http::foreign_shape_examples()
            .into_iter()
            .chain(super::examples());
        for (name, example) in examples {
            assert!(
                document.insert(name.to_owned(), example).is_none(),
                "{name} is named once"
            );
        }
        let actual = serde_json::to_string_pretty(&document).expect("JSON") + "\n";
        crate::testing::assert_snapshot(
            "foreign-shapes.json",
            &actual,
            "a foreign answer or --json output shape changed",
        );
    }
}
