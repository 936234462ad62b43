//! Commands that take skills in from sources the registry reads itself: `import git` (a Git
//! repository), `mirror` (another SEP-2640 server), `sync` (every recorded source again) and
//! `sources` (what is recorded). Each ends with the same summary as `import`, or `--json`.
//!
//! Upstreams are not trusted to end: each source is read within `--source-timeout-secs` (an
//! MCP upstream dropped, a `stdio:` server killed, a git child killed with its process group),
//! and `sync` reads up to 4 sources at once in tasks of their own (network only), storing each
//! read in the main task, one at a time, so stores never race on a shared namespace. Tokens
//! for upstreams come from `super::credentials` by origin and are never stored.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::credentials::Credentials;
use super::output::{self, Totals, print_import_line, print_import_summary};
use super::{DataArgs, Progress};
use crate::core::provenance::{SourceKind, SourceSpec, short_commit};
use crate::core::records::SourceRecord;
use crate::core::{Code, Namespace};
use crate::error::Error;
use crate::mcp::upstream::RemoteUpstream;
use crate::registry::{ImportSummary, ReadLimits, Registry, SourceRead};
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
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How long one source may take to be read, and how large a Git checkout may be.
#[derive(Args, Debug, Clone, Copy)]
pub struct LimitArgs {
    /// Give a source up (git and what it started killed, an upstream disconnected) when reading
    /// it takes longer than this.
    #[arg(long, value_name = "SECS", default_value_t = git::Limits::DEFAULT_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub source_timeout_secs: u64,
    /// Refuse a Git repository whose fetched objects or checked-out tree take more than this
    /// (`source_too_large`).
    #[arg(long, value_name = "MIB", default_value_t = git::Limits::DEFAULT_MAX_MIB, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_checkout_mib: u64,
}

impl LimitArgs {
    fn read(self) -> ReadLimits {
        ReadLimits {
            timeout: Duration::from_secs(self.source_timeout_secs),
            max_checkout_mib: self.max_checkout_mib,
        }
    }
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
    /// Take only the upstream's skills of this namespace (`skill://<namespace>/…`), as `sync`
    /// will each time; map several upstream namespaces with one mirror each, into namespaces of
    /// their own.
    #[arg(long, value_name = "NAMESPACE")]
    pub upstream_namespace: Option<String>,
    /// Bearer token sent to this upstream's origin only (never stored); without it, the
    /// credentials file's token for that origin.
    #[arg(long, env = "SKILLREG_MIRROR_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[command(flatten)]
    pub credentials: CredentialsArgs,
    /// Give the upstream up when reading it takes longer than this.
    #[arg(long, value_name = "SECS", default_value_t = git::Limits::DEFAULT_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub source_timeout_secs: u64,
    /// One JSON object per skill, then a summary object, instead of text lines.
    #[arg(long)]
    pub json: bool,
}

/// Where the tokens of upstream servers are read from.
#[derive(Args, Debug)]
pub struct CredentialsArgs {
    /// A TOML file of bearer tokens by origin (`[tokens]` `"https://host" = "skr_…"`), each sent
    /// only to its origin [default: ~/.config/skillreg/credentials.toml, when it exists].
    #[arg(long, value_name = "FILE", env = "SKILLREG_CREDENTIALS")]
    pub credentials: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SyncArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Read only the sources feeding this namespace.
    #[arg(long, short)]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub credentials: CredentialsArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// One JSON object per skill, a summary object per source, then the totals.
    #[arg(long)]
    pub json: bool,
}

/// How many sources `sync` reads at once.
const SYNC_READERS: usize = 4;

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
    let registry = open(&args.common.data).await?;
    let started = std::time::Instant::now();
    let result = async {
        let spinner = Progress::spinner("fetching");
        let read = read(&registry, &spec, None, args.limits).await;
        spinner.finish();
        let read = read?;
        if let SourceRead::Git(checkout) = &read {
            // The directory asked for is there before the source is recorded.
            checkout.dir(&spec.location, &spec.subpath)?;
        }
        let source = registry
            .publisher()
            .record_source(&namespace, &spec)
            .await?;
        store(&registry, &source, read, args.common.json).await
    }
    .await;
    registry.close().await;
    let summary = result?;
    print_import_summary(&summary, args.common.json, started);
    Ok(exit(&summary))
}

/// `skillreg mirror <upstream>`: read every listed skill, record the source, store them.
pub async fn mirror(args: MirrorArgs) -> anyhow::Result<ExitCode> {
    let namespace = namespace(&args.namespace)?;
    let spec = SourceSpec::mcp_namespace(&args.source, args.upstream_namespace.as_deref())
        .map_err(invalid_source)?;
    // `--token` goes to the upstream named here, and only to it; the credentials file's token
    // to the origin it is written under.
    let token = match args.token {
        Some(token) => Some(token),
        None => Credentials::load(args.credentials.credentials.as_deref())?
            .token_for(&args.source)
            .map(str::to_owned),
    };
    let limits = LimitArgs {
        source_timeout_secs: args.source_timeout_secs,
        max_checkout_mib: git::Limits::DEFAULT_MAX_MIB,
    };
    let registry = open(&args.data).await?;
    let started = std::time::Instant::now();
    let result = async {
        let spinner = if args.json {
            Progress(None)
        } else {
            Progress::spinner("reading")
        };
        let read = read(&registry, &spec, token.as_deref(), limits).await;
        spinner.finish();
        let read = read?;
        let source = registry
            .publisher()
            .record_source(&namespace, &spec)
            .await?;
        store(&registry, &source, read, args.json).await
    }
    .await;
    registry.close().await;
    let summary = result?;
    print_import_summary(&summary, args.json, started);
    Ok(exit(&summary))
}

/// `skillreg sync`: every recorded source read again, up to [`SYNC_READERS`] at once, each
/// within `--source-timeout-secs`; each is stored as soon as it has been read, one at a time,
/// and reported with its outcome. A source that cannot be read is reported and the others
/// still are.
pub async fn sync(args: SyncArgs) -> anyhow::Result<ExitCode> {
    let only = args.namespace.as_deref().map(namespace).transpose()?;
    let credentials = Credentials::load(args.credentials.credentials.as_deref())?;
    if std::env::var_os("SKILLREG_MIRROR_TOKEN").is_some() {
        eprintln!(
            "warning: sync does not send SKILLREG_MIRROR_TOKEN (it would go to every source); write each upstream's token in the credentials file under its origin"
        );
    }
    let registry = open(&args.data).await?;
    let started = std::time::Instant::now();
    let result = async {
        let sources: Vec<SourceRecord> = registry
            .publisher()
            .sources()
            .await?
            .into_iter()
            .filter(|s| only.as_ref().is_none_or(|ns| &s.namespace == ns))
            .collect();
        // Every source is read in its own task; storing stays here, one source at a time.
        let (done, mut reads) = tokio::sync::mpsc::unbounded_channel();
        let readers = std::sync::Arc::new(tokio::sync::Semaphore::new(SYNC_READERS));
        let mut tasks = tokio::task::JoinSet::new();
        for (i, source) in sources.iter().enumerate() {
            let spec = source.spec.clone();
            let token = match spec.kind {
                SourceKind::Mcp => credentials.token_for(&spec.location).map(str::to_owned),
                SourceKind::Git => None,
            };
            let (done, readers, limits) = (done.clone(), readers.clone(), args.limits);
            let registry = registry.clone();
            tasks.spawn(async move {
                let _reader = readers.acquire_owned().await;
                let started = std::time::Instant::now();
                let read = read(&registry, &spec, token.as_deref(), limits).await;
                let _ = done.send((i, read, started.elapsed()));
            });
        }
        drop(done);
        let mut total = ImportSummary::default();
        let mut failed = 0usize;
        while let Some((i, read, took)) = reads.recv().await {
            let source = &sources[i];
            let shown = shown(&source.spec);
            if !args.json {
                println!("== {shown} into {}", source.namespace);
            }
            let stored = match read {
                Ok(read) => store(&registry, source, read, args.json).await,
                Err(e) => Err(e),
            };
            match stored {
                Ok(summary) => {
                    if args.json {
                        let synced = output::SourceSynced {
                            source: output::Source::of(source),
                            summary: Totals::of(&summary, took),
                        };
                        println!("{}", output::line(&synced));
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
                        let failure = output::SourceFailed {
                            source: output::Source::of(source),
                            error: output::SourceError {
                                code,
                                message: e.to_string(),
                            },
                            seconds: took.as_secs_f64(),
                        };
                        println!("{}", output::line(&failure));
                    } else {
                        // The error may quote the upstream's own words.
                        println!(
                            "{}",
                            crate::core::text::printable(&format!(
                                "failed    {shown}: {e} [{code}]"
                            ))
                        );
                    }
                }
            }
        }
        tasks.shutdown().await;
        Ok::<_, Error>((sources.len(), total, failed))
    }
    .await;
    registry.close().await;
    let (count, total, failed) = result?;
    if args.json {
        let total = output::Total {
            total: Totals {
                sources: Some(count),
                failed_sources: Some(failed),
                ..Totals::of(&total, started.elapsed())
            },
        };
        println!("{}", output::line(&total));
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
            let sources = registry.publisher().sources().await;
            registry.close().await;
            for source in sources? {
                if json {
                    println!("{}", output::line(&output::Source::of(&source)));
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
                        shown(&source.spec)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        SourcesCommand::Remove { id, data } => {
            let registry = Registry::builder_for(&data.storage)?.open().await?;
            let removed = registry.publisher().remove_source(id).await;
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

/// The registry a source command works on, reading MCP upstreams through `consumer::remote`.
async fn open(data: &DataArgs) -> anyhow::Result<Registry> {
    let registry = Registry::builder_for(&data.storage)?.open().await?;
    registry
        .publisher()
        .read_upstreams_with(std::sync::Arc::new(RemoteUpstream));
    Ok(registry)
}

/// Read a source for `registry` within `limits`.
async fn read(
    registry: &Registry,
    spec: &SourceSpec,
    token: Option<&str>,
    limits: LimitArgs,
) -> Result<SourceRead, Error> {
    registry
        .publisher()
        .read_source(spec, token, limits.read())
        .await
}

/// Store what was read from `source`, with progress (a bar when the upstream's size is known).
async fn store(
    registry: &Registry,
    source: &SourceRecord,
    read: SourceRead,
    json: bool,
) -> Result<ImportSummary, Error> {
    let progress = match (json, read.listed()) {
        (true, _) => Progress(None),
        (false, Some(listed)) => Progress::bar("mirroring", listed as u64),
        (false, None) => Progress::spinner("importing"),
    };
    let summary = registry
        .publisher()
        .store_read(source, read, |line| {
            print_import_line(line, json, &progress)
        })
        .await;
    progress.finish();
    summary
}

/// A recorded source as printed: whole, unless it is refused now (an older version recorded a
/// URL that may carry a secret).
fn shown(spec: &SourceSpec) -> String {
    if spec.check().is_ok() {
        spec.to_string()
    } else {
        spec.public()
    }
}
