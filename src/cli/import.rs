//! `skillreg import`: every skill found under directories, into a namespace of the data
//! directory (`import git` is in [`super::sources`]), and the lines and totals every run that
//! stores skills prints (`import`, `mirror`, `sync`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{DataArgs, Progress, output, sources};
use crate::core::{Namespace, SkillVersion};
use crate::registry::{ImportLine, ImportOptions, ImportOutcome, ImportSummary, Registry};

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Namespace to import into.
    #[arg(long, short, default_value = "default")]
    pub namespace: String,
    /// Version for every imported skill (default: the frontmatter's semver `version` or
    /// `metadata.version`, else 0.1.0).
    #[arg(long)]
    pub version: Option<String>,
    /// Directories to search for SKILL.md files (hidden directories included).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// One JSON object per skill, then a summary object, instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// Repair what breaks the rules in fixable ways in each SKILL.md's frontmatter before
    /// importing (a display name as `name`, an `allowed-tools` list, non-string `metadata`
    /// values, an over-long description). Each fix is printed and stored with the version.
    #[arg(long)]
    pub fix: bool,
    /// With --fix, also quote the plain scalars that YAML 1.1 parsers (FastMCP's) read as
    /// another type (dates, yes/no, on/off, octal-looking numbers).
    #[arg(long, requires = "fix")]
    pub quote_yaml_1_1: bool,
    #[command(subcommand)]
    pub source: Option<sources::ImportSource>,
}

pub async fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let namespace = Namespace::new(&args.namespace)
        .map_err(|e| anyhow::anyhow!("invalid namespace {:?}: it {e}", args.namespace))?;
    let options = ImportOptions {
        version: args
            .version
            .as_deref()
            .map(SkillVersion::parse)
            .transpose()?,
        fix: args.fix,
        quote_yaml_1_1: args.quote_yaml_1_1,
    };
    let registry = Registry::builder_for(&args.data.storage)?.open().await?;
    let candidates = crate::source::dir::candidates(&args.paths);
    let progress = if args.json {
        Progress(None)
    } else {
        Progress::bar("importing", candidates.len() as u64)
    };
    let started = std::time::Instant::now();
    let summary = registry
        .publisher()
        .import_candidates(&namespace, &options, candidates, |line| {
            print_import_line(line, args.json, &progress);
        })
        .await?;
    progress.finish();
    print_import_summary(&summary, args.json, started);
    registry.close().await;
    Ok(if summary.skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One skill of an `import` or `mirror` run: a JSON object, or a line above the progress bar.
pub(super) fn print_import_line(line: &ImportLine, json: bool, progress: &Progress) {
    progress.inc();
    if json {
        println!("{}", output::line(&output::Line::of(line)));
        return;
    }
    // An upstream names the directories and writes the frontmatter that warnings and reasons
    // quote: shown, never obeyed by the terminal.
    let dir = line.dir.display();
    progress.println(&crate::core::text::printable(&match &line.outcome {
        ImportOutcome::Imported { uri, version } => format!("imported  {uri} {version}  ({dir})"),
        ImportOutcome::Unchanged { uri, version } => format!("unchanged {uri} {version}  ({dir})"),
        ImportOutcome::Skipped { code, reason } => format!("skipped   {dir}: {reason} [{code}]"),
        ImportOutcome::Deprecated { uri, message } => format!("deprecated {uri}: {message}"),
        ImportOutcome::Restored { uri } => {
            format!("restored  {uri}: found at its source again, no longer deprecated")
        }
    }));
    for w in &line.warnings {
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
        let totals = output::Summary {
            summary: output::Totals::of(summary, started.elapsed()),
        };
        println!("{}", output::line(&totals));
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
