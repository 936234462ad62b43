//! Commands that take skills in from sources the registry reads itself: `import git` (a Git
//! repository), `mirror` (another SEP-2640 server), `sync` (every recorded source again) and
//! `sources` (what is recorded). Each ends with the same summary as `import`, or `--json`.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::{DataArgs, Progress, print_import_line, print_import_summary};
use crate::consumer::remote::{Remote, Source};
use crate::core::provenance::{SourceKind, SourceSpec, short_commit};
use crate::core::{Code, InputFile, Namespace};
use crate::error::Error;
use crate::registry::{ImportSummary, MirrorItem, Registry, SourceRecord};
use crate::source::git;

/// Where `import` reads from when it is not a set of directories.
#[derive(Subcommand, Debug)]
pub enum ImportSource {
    /// Import every skill of a Git repository (one commit of a branch, tag or commit id), and
    /// record the repository so that `skillreg sync` reads it again.
    #[command(
        after_help = "Each version records the repository, ref, commit and directory it came from (served in `_meta` as `dev.skillreg/source`, shown on the web page). A skill whose files equal its newest stored version is unchanged; a changed one becomes its declared version when that is new, else the next patch with the commit as build metadata (1.2.4+git.3f2a9c1).\n\nNeeds git on PATH. Credentials go in a git credential helper, never in the URL.\n\nExamples:\n  skillreg import git https://github.com/anthropics/skills --path skills --namespace anthropic\n  skillreg import git git@github.com:acme/skills.git --ref v2.1.0 --namespace acme --fix"
    )]
    Git(GitImportArgs),
}

#[derive(Args, Debug)]
pub struct GitImportArgs {
    /// The repository: https://, ssh://, git://, file://, user@host:path or an absolute path.
    pub url: String,
    /// The branch, tag or full commit id to read (default: the remote's HEAD).
    #[arg(long = "ref", value_name = "REF")]
    pub reference: Option<String>,
    /// Read only this directory of the repository.
    #[arg(long, value_name = "SUBDIR")]
    pub path: Option<String>,
    #[command(flatten)]
    pub common: SourceArgs,
    /// Repair what breaks the rules in fixable ways in each SKILL.md's frontmatter before
    /// importing (as `import --fix`); `sync` repeats it.
    #[arg(long)]
    pub fix: bool,
}

/// What every source command takes.
#[derive(Args, Debug)]
pub struct SourceArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Namespace to store the skills in.
    #[arg(long, short, default_value = "default")]
    pub namespace: String,
    /// One JSON object per skill, then a summary object, instead of text lines.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct MirrorArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// The upstream: an MCP endpoint (http(s)://host/mcp) or `stdio:<command> <args>`.
    pub source: String,
    /// Namespace to store the upstream's skills in.
    #[arg(long, short)]
    pub namespace: String,
    /// Bearer token sent to an HTTP upstream.
    #[arg(long, env = "SKILLREG_MIRROR_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// One JSON object per skill, then a summary object, instead of text lines.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SyncArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Read only the sources feeding this namespace.
    #[arg(long, short)]
    pub namespace: Option<String>,
    /// Bearer token sent to HTTP upstreams of mirrored sources.
    #[arg(long, env = "SKILLREG_MIRROR_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// One JSON object per skill, a summary object per source, then the totals.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum SourcesCommand {
    /// List the recorded sources: id, namespace, what is read, and the last read.
    #[command(after_help = "Example:\n  skillreg sources list --data-dir /var/lib/skillreg --json")]
    List {
        #[command(flatten)]
        data: DataArgs,
        #[arg(long)]
        json: bool,
    },
    /// Forget a source: `sync` no longer reads it; its skills and versions stay as they are.
    #[command(after_help = "Example:\n  skillreg sources remove 3 --data-dir /var/lib/skillreg")]
    Remove {
        /// The source's id (`skillreg sources list`).
        id: i64,
        #[command(flatten)]
        data: DataArgs,
    },
}

fn namespace(name: &str) -> anyhow::Result<Namespace> {
    Namespace::new(name).map_err(|e| anyhow::anyhow!("invalid namespace {name:?}: it {e}"))
}

fn invalid_source(message: String) -> Error {
    Error::Source {
        code: Code::InvalidSource,
        message,
    }
}

/// The exit status of a finished run: 1 when a skill was refused.
fn exit(summary: &ImportSummary) -> ExitCode {
    if summary.skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `skillreg import git <url>`: check out the commit, record the source, take every skill in.
pub async fn import_git(args: GitImportArgs) -> anyhow::Result<ExitCode> {
    let namespace = namespace(&args.common.namespace)?;
    let spec = SourceSpec::git(
        &args.url,
        args.reference.as_deref(),
        args.path.as_deref(),
        args.fix,
    )
    .map_err(invalid_source)?;
    let registry = Registry::builder_for(&args.common.data.storage)?
        .open()
        .await?;
    let started = std::time::Instant::now();
    let result = async {
        let checkout = fetch(&spec).await?;
        checkout.dir(&spec.location, &spec.subpath)?;
        let source = registry.record_source(&namespace, &spec).await?;
        read_checkout(&registry, &source, &checkout, args.common.json).await
    }
    .await;
    registry.close().await;
    let summary = result?;
    print_import_summary(&summary, args.common.json, started);
    Ok(exit(&summary))
}

/// `skillreg mirror <upstream>`: connect, record the source, take every listed skill in.
pub async fn mirror(args: MirrorArgs) -> anyhow::Result<ExitCode> {
    let namespace = namespace(&args.namespace)?;
    let upstream = Source::parse(&args.source).map_err(|e| invalid_source(e.message))?;
    let remote = connect(&upstream, args.token.as_deref()).await?;
    let registry = Registry::builder_for(&args.data.storage)?.open().await?;
    let started = std::time::Instant::now();
    let result = async {
        let source = registry
            .record_source(&namespace, &SourceSpec::mcp(&args.source))
            .await?;
        read_upstream(&registry, &source, &remote, args.json).await
    }
    .await;
    remote.close().await;
    registry.close().await;
    let summary = result?;
    print_import_summary(&summary, args.json, started);
    Ok(exit(&summary))
}

/// `skillreg sync`: every recorded source read again, one after the other. A source that
/// cannot be read is reported and the others still are.
pub async fn sync(args: SyncArgs) -> anyhow::Result<ExitCode> {
    let only = args.namespace.as_deref().map(namespace).transpose()?;
    let registry = Registry::builder_for(&args.data.storage)?.open().await?;
    let started = std::time::Instant::now();
    let result = async {
        let sources: Vec<SourceRecord> = registry
            .sources()
            .await?
            .into_iter()
            .filter(|s| only.as_ref().is_none_or(|ns| &s.namespace == ns))
            .collect();
        let mut total = ImportSummary::default();
        let mut failed = 0usize;
        for source in &sources {
            if !args.json {
                println!("== {} into {}", source.spec, source.namespace);
            }
            match read_source(&registry, source, args.token.as_deref(), args.json).await {
                Ok(summary) => {
                    if args.json {
                        println!(
                            "{}",
                            serde_json::json!({"source": source_json(source), "summary": summary_json(&summary)})
                        );
                    } else {
                        print_import_summary(&summary, false, started);
                    }
                    total.add(&summary);
                }
                // The registry's own storage failing ends the run, as it ends an import.
                Err(e @ Error::Storage(_)) => return Err(e),
                Err(e) => {
                    failed += 1;
                    let code = e.code();
                    if args.json {
                        println!(
                            "{}",
                            serde_json::json!({"source": source_json(source), "error": {"code": code, "message": e.to_string()}})
                        );
                    } else {
                        println!("failed    {}: {e} [{code}]", source.spec);
                    }
                }
            }
        }
        Ok::<_, Error>((sources.len(), total, failed))
    }
    .await;
    registry.close().await;
    let (count, total, failed) = result?;
    if args.json {
        let mut summary = summary_json(&total);
        summary["sources"] = serde_json::json!(count);
        summary["failed_sources"] = serde_json::json!(failed);
        summary["seconds"] = serde_json::json!(started.elapsed().as_secs_f64());
        println!("{}", serde_json::json!({ "total": summary }));
    } else {
        print!("{count} sources read, {failed} failed: ");
        print_import_summary(&total, false, started);
    }
    Ok(if failed > 0 || total.skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `skillreg sources list|remove`.
pub async fn sources(command: SourcesCommand) -> anyhow::Result<ExitCode> {
    match command {
        SourcesCommand::List { data, json } => {
            let registry = Registry::builder_for(&data.storage)?.open().await?;
            let sources = registry.sources().await;
            registry.close().await;
            for source in sources? {
                if json {
                    println!("{}", source_json(&source));
                } else {
                    let read = match (&source.synced_at, &source.revision) {
                        (Some(at), Some(commit)) => {
                            format!("read {at} at {}", short_commit(commit))
                        }
                        (Some(at), None) => format!("read {at}"),
                        _ => "never read".to_owned(),
                    };
                    println!(
                        "{:>4}  {:<16} {}  ({read})",
                        source.id,
                        source.namespace.as_str(),
                        source.spec
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        SourcesCommand::Remove { id, data } => {
            let registry = Registry::builder_for(&data.storage)?.open().await?;
            let removed = registry.remove_source(id).await;
            registry.close().await;
            if removed? {
                println!("source {id} removed; its skills stay as they are");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: no source {id} (see `skillreg sources list`)");
                Ok(ExitCode::from(1))
            }
        }
    }
}

/// Read one recorded source again.
async fn read_source(
    registry: &Registry,
    source: &SourceRecord,
    token: Option<&str>,
    json: bool,
) -> Result<ImportSummary, Error> {
    match source.spec.kind {
        SourceKind::Git => {
            let checkout = fetch(&source.spec).await?;
            read_checkout(registry, source, &checkout, json).await
        }
        SourceKind::Mcp => {
            let upstream =
                Source::parse(&source.spec.location).map_err(|e| invalid_source(e.message))?;
            let remote = connect(&upstream, token).await?;
            let summary = read_upstream(registry, source, &remote, json).await;
            remote.close().await;
            summary
        }
    }
}

/// Check out a Git source's commit (git runs on a blocking thread).
async fn fetch(spec: &SourceSpec) -> Result<git::Checkout, Error> {
    let (url, reference) = (spec.location.clone(), spec.reference.clone());
    let spinner = Progress::spinner("fetching");
    let checkout = tokio::task::spawn_blocking(move || git::checkout(&url, reference.as_deref()))
        .await
        .map_err(|e| Error::Internal(e.to_string()))?;
    spinner.finish();
    Ok(checkout?)
}

async fn read_checkout(
    registry: &Registry,
    source: &SourceRecord,
    checkout: &git::Checkout,
    json: bool,
) -> Result<ImportSummary, Error> {
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("importing")
    };
    let summary = registry
        .import_checkout(source, checkout, |line| {
            print_import_line(line, json, &progress);
        })
        .await;
    progress.finish();
    summary
}

async fn connect(upstream: &Source, token: Option<&str>) -> Result<Remote, Error> {
    Remote::connect(upstream, token)
        .await
        .map_err(|e| Error::Source {
            code: Code::SourceUnavailable,
            message: e.message,
        })
}

/// Every skill an upstream lists, read and checked file by file (`consumer::remote`), stored
/// one at a time.
async fn read_upstream(
    registry: &Registry,
    source: &SourceRecord,
    remote: &Remote,
    json: bool,
) -> Result<ImportSummary, Error> {
    let unavailable = |message: String| Error::Source {
        code: Code::SourceUnavailable,
        message,
    };
    let entries = remote.list().await.map_err(|e| unavailable(e.message))?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::bar("mirroring", entries.len() as u64)
    };
    let mut run = registry.source_run(source.clone(), None).await?;
    for (i, entry) in entries.into_iter().enumerate() {
        let item = match entry {
            Err(e) => MirrorItem {
                upstream: format!("entry {} of {}", i + 1, source.spec.location),
                name: None,
                files: Err(e.message),
                version: None,
            },
            Ok(entry) => match remote.read_all(&entry).await {
                Ok(files) => MirrorItem {
                    upstream: entry.uri,
                    name: Some(entry.name),
                    files: Ok(files
                        .into_iter()
                        .map(|(f, bytes)| InputFile::regular(f.path, bytes))
                        .collect()),
                    version: entry.version,
                },
                Err(e) if e.code == crate::consumer::Code::SourceUnreachable => {
                    return Err(unavailable(e.message));
                }
                Err(e) => MirrorItem {
                    upstream: entry.uri,
                    name: Some(entry.name),
                    files: Err(e.message),
                    version: entry.version,
                },
            },
        };
        let line = run.take_mirrored(item).await?;
        print_import_line(&line, json, &progress);
    }
    let summary = run
        .finish(|line| print_import_line(line, json, &progress))
        .await;
    progress.finish();
    summary
}

fn source_json(source: &SourceRecord) -> serde_json::Value {
    serde_json::json!({
        "id": source.id,
        "namespace": source.namespace.as_str(),
        "kind": source.spec.kind.as_str(),
        "location": source.spec.location,
        "ref": source.spec.reference,
        "path": source.spec.subpath,
        "fix": source.spec.fix,
        "created_at": source.created_at,
        "synced_at": source.synced_at,
        "revision": source.revision,
    })
}

pub(super) fn summary_json(summary: &ImportSummary) -> serde_json::Value {
    serde_json::json!({
        "imported": summary.imported,
        "unchanged": summary.unchanged,
        "skipped": summary.skipped,
        "fixed": summary.fixed,
        "skipped_by": summary.skipped_by,
        "deprecated": summary.deprecated,
        "restored": summary.restored,
    })
}
