//! `skillreg import`: every skill found under directories, into a namespace of the data
//! directory (`import git` is in [`super::sources`]; the lines and totals every run that stores
//! skills prints are in [`super::output`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{DataArgs, Progress, output, sources};
use crate::core::{Namespace, SkillVersion};
use crate::registry::{ImportOptions, Registry};

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
            output::print_import_line(line, args.json, &progress);
        })
        .await?;
    progress.finish();
    output::print_import_summary(&summary, args.json, started);
    registry.close().await;
    Ok(if summary.skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
