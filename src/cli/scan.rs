//! `skillreg scan` (skill directories, before they are imported) and `skillreg rescan` (every
//! stored version again, under the scan policy).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{DataArgs, Progress, output};
use crate::config;
use crate::core::scan::{self, Policy, RULES, ScanFile, Verdict};
use crate::registry::Registry;

#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Directories to search for skills (as `import` finds them).
    #[arg(required_unless_present = "rules")]
    pub paths: Vec<PathBuf>,
    /// List the rules instead.
    #[arg(long)]
    pub rules: bool,
    /// One JSON object per skill, then a summary object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub scanning: config::Scanning,
}

#[derive(Args, Debug)]
pub struct RescanArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[arg(long)]
    pub json: bool,
}

/// `skillreg scan`: read each skill as `import` would (links in the skill packed, a `skill.md`
/// entry point taken) and print what `core::scan` finds, and the verdict `policy` gives.
pub fn scan(args: ScanArgs) -> anyhow::Result<ExitCode> {
    let ScanArgs {
        paths,
        rules,
        json,
        scanning,
    } = args;
    let policy =
        Policy::parse(&scanning.scan_policy).map_err(|e| anyhow::anyhow!("scan_policy: {e}"))?;
    if rules {
        for r in RULES {
            println!(
                "{:<22} {:<8} {:<5} {}",
                r.id,
                r.severity,
                policy.treatment(r.id).as_str(),
                r.explanation
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Skills each rule flags, and skills per verdict.
    let mut per_rule: std::collections::BTreeMap<String, usize> = Default::default();
    let mut per_verdict: std::collections::BTreeMap<Verdict, usize> = Default::default();
    for candidate in crate::source::dir::candidates(&paths) {
        let dir = candidate.dir.display().to_string();
        let read = match candidate.problem {
            None | Some(crate::source::ReadError::MisnamedSkillMd(_)) => {
                crate::source::dir::read_files(&candidate.dir)
            }
            Some(problem) => Err(problem),
        };
        let mut files = match read {
            Ok(read) => read.files,
            Err(e) => {
                if !json {
                    println!("{dir}: not scanned: {e} [{}]", e.code());
                }
                continue;
            }
        };
        crate::core::fix::fix_entry_point(&mut files);
        let frontmatter = files
            .iter()
            .find(|f| f.path == crate::core::uri::SKILL_MD)
            .and_then(|f| crate::core::frontmatter::parse(&f.bytes).ok())
            .map(|md| md.frontmatter);
        let scanned: Vec<ScanFile<'_>> = files
            .iter()
            .filter(|f| f.kind == crate::core::InputKind::File)
            .map(|f| ScanFile {
                path: &f.path,
                bytes: &f.bytes,
                executable: f.executable,
            })
            .collect();
        let result =
            policy.scan_files(&scanned, frontmatter.as_ref().and_then(scan::allowed_tools));
        *per_verdict.entry(result.verdict).or_default() += 1;
        let rules: std::collections::BTreeSet<&str> =
            result.findings.iter().map(|f| f.rule.as_str()).collect();
        for rule in rules {
            *per_rule.entry(rule.to_owned()).or_default() += 1;
        }
        if json {
            let line = output::Scanned {
                dir,
                verdict: result.verdict,
                findings: &result.findings,
            };
            println!("{}", output::line(&line));
        } else if !result.findings.is_empty() {
            println!(
                "{dir}: {} ({} findings)",
                result.verdict,
                result.findings.len()
            );
            for f in &result.findings {
                let at = if f.line > 0 {
                    format!("{}:{}", f.file, f.line)
                } else {
                    f.file.clone()
                };
                println!("  {:<8} {:<22} {at}  {}", f.severity, f.rule, f.excerpt);
            }
        }
    }
    let skills: usize = per_verdict.values().sum();
    if json {
        let summary = output::ScanSummary {
            summary: output::ScanTotals {
                skills,
                verdicts: per_verdict.clone(),
                skills_per_rule: per_rule,
            },
        };
        println!("{}", output::line(&summary));
    } else {
        let list = |pairs: Vec<String>| {
            if pairs.is_empty() {
                "none".to_owned()
            } else {
                pairs.join(", ")
            }
        };
        println!(
            "scanned {skills} skills: {}; skills flagged per rule: {}",
            list(
                per_verdict
                    .iter()
                    .map(|(v, n)| format!("{n} {v}"))
                    .collect()
            ),
            list(per_rule.iter().map(|(r, n)| format!("{r} {n}")).collect()),
        );
    }
    Ok(if per_verdict.contains_key(&Verdict::Blocked) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `skillreg rescan`: scan every stored version again and report the verdicts.
pub async fn rescan(args: RescanArgs) -> anyhow::Result<ExitCode> {
    let RescanArgs { data, json } = args;
    let registry = Registry::builder_for(&data.storage)?.open().await?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("rescanning")
    };
    let report = registry
        .trust()
        .rescan(&crate::core::Principal::Admin, |n| progress.set_position(n))
        .await;
    progress.finish();
    let report = report?;
    registry.close().await;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        let verdicts: Vec<String> = report
            .verdicts
            .iter()
            .map(|(v, n)| format!("{n} {v}"))
            .collect();
        println!(
            "rescanned {} versions under {}: {} changed; {}",
            report.scanned,
            registry.publisher().scan_policy().describe(),
            report.changed,
            verdicts.join(", ")
        );
        for v in &report.blocked {
            println!("  blocked by the policy, still served until revoked: {v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
