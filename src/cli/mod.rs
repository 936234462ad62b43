//! The command line: `serve`, `import`, `mirror`, `sync`, `reindex`, `verify` and `backup` work
//! on a data directory (`sources` holds the commands that read Git repositories and upstream
//! servers); `publish`, `yank`, `deprecate`, `search` and `token` talk to a running registry over
//! its REST API (`client`); `config` prints the configuration.

mod client;
mod credentials;
mod install;
mod lifecycle;
mod log;
mod namespace;
mod output;
mod publish;
mod search;
mod sources;
mod token;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::config::{self, Config, Engine, Storage};
use crate::core::{Code, Namespace, SkillVersion};
use crate::http;
use crate::mcp::{McpOptions, SkillServer};
use crate::registry::{ImportLine, ImportOptions, ImportOutcome, ImportSummary, Registry};
pub use log::{DEFAULT_LOG_FILTER, LogGuard, MAX_LOG_RECORD, init_logging};

#[derive(Parser, Debug)]
#[command(
    name = "skillreg",
    version,
    about = "A versioned Agent Skills registry served over MCP (SEP-2640)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the registry over MCP (Streamable HTTP at /mcp, or stdio).
    #[command(
        after_help = "Examples:\n  skillreg serve\n  skillreg serve --listen 0.0.0.0:8080 --allowed-host skills.example.com\n  skillreg serve --stdio --data-dir /var/lib/skillreg"
    )]
    Serve(ServeArgs),
    /// Import every skill found under the given directories, or in a Git repository
    /// (`import git`).
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        after_help = "Prints one line per skill (imported, unchanged or skipped with the reason) and a summary.\n\nExit status: 0 when every skill was imported or unchanged, 1 when any was skipped, 2 on a fatal error.\n\nExamples:\n  skillreg import --namespace acme ./skills\n  skillreg import git https://github.com/acme/skills --namespace acme"
    )]
    Import(ImportArgs),
    /// Validate a skill directory locally, then pack and upload it to a registry.
    #[command(
        after_help = "The version is --version, else the frontmatter's semver `version` or `metadata.version`, else 0.1.0.\n\nExit status: 0 published (or unchanged), 1 refused (the reason and its code are printed), 2 usage or connection error.\n\nExample:\n  SKILLREG_TOKEN=skr_... skillreg publish ./refund-emails --namespace acme --registry https://skills.example.com"
    )]
    Publish(publish::PublishArgs),
    /// Yank a version (it stays readable by its pinned URI), or undo it with --undo.
    #[command(
        after_help = "Example:\n  skillreg yank acme/refund-emails@1.2.0 --reason \"leaks a customer address\""
    )]
    Yank(lifecycle::YankArgs),
    /// Revoke a version for security reasons: it is served to nobody (pinned URIs included),
    /// leaves the listing and is announced in the revocation feed. --undo (admin only)
    /// reverses it.
    #[command(
        after_help = "Needs a token with the `revoke` action for the namespace, or the admin token.\n\nExample:\n  skillreg revoke acme/refund-emails@1.2.0 --reason \"exfiltrates ~/.ssh to a webhook\""
    )]
    Revoke(lifecycle::RevokeArgs),
    /// Approve a version waiting for review in a namespace that requires it: it may become
    /// current and is served over MCP from then on.
    #[command(
        after_help = "Needs a token with the `approve` action for the namespace, or the admin token.\n\nExample:\n  skillreg approve acme/refund-emails@1.3.0"
    )]
    Approve(lifecycle::ApproveArgs),
    /// Scan every stored version again under the scan policy (after a rule or policy change):
    /// each changed verdict is stored and audited; no byte changes.
    #[command(
        after_help = "Versions that the policy now blocks are reported, and stay served until revoked (`skillreg revoke`).\n\nExample:\n  skillreg rescan --data-dir /var/lib/skillreg --scan-policy 'remote_code_execution=block'"
    )]
    Rescan {
        #[command(flatten)]
        data: DataArgs,
        #[arg(long)]
        json: bool,
    },
    /// Deprecate a skill (it stays listed and says so), or undo it with --undo.
    #[command(
        after_help = "Example:\n  skillreg deprecate acme/refund-emails --message \"use acme/refunds instead\""
    )]
    Deprecate(lifecycle::DeprecateArgs),
    /// Scan skill directories for what an operator wants to know before agents load them:
    /// hidden characters, prompt-injection markers, download-and-run commands, credentials,
    /// binaries and archives, data-collecting endpoints, over-broad allowed-tools.
    #[command(
        after_help = "Prints each skill's verdict under the scan policy (the registry's, from --scan-policy or SKILLREG_SCAN_POLICY) with its findings (severity, rule, file:line, an escaped excerpt), then how many skills each rule flags. `skillreg scan --rules` lists the rules and what the policy does with each.\n\nExit status: 0 when no skill would be blocked at publish, 1 when one would, 2 on error.\n\nExample:\n  skillreg scan ./skills\n  skillreg scan --scan-policy 'remote_code_execution=block' ./skills"
    )]
    Scan {
        /// Directories to search for skills (as `import` finds them).
        #[arg(required_unless_present = "rules")]
        paths: Vec<PathBuf>,
        /// List the rules instead.
        #[arg(long)]
        rules: bool,
        /// One JSON object per skill, then a summary object.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scanning: config::Scanning,
    },
    /// Copy every skill another SEP-2640 server lists into a namespace, each file checked
    /// against its listed digest and size; re-running stores only what changed.
    #[command(
        after_help = "A skill with a file that does not match its listing is refused whole. A changed skill becomes a new version: the upstream's (skillreg's `_meta` version, or the frontmatter's), else the next patch. Each version records its upstream URI (served in `_meta` as `dev.skillreg/source`); a skill the upstream no longer lists is deprecated. The upstream is recorded for `skillreg sync`.\n\nExit status: 0 when every listed skill is stored or unchanged, 1 when one was refused, 2 on error.\n\nExample:\n  skillreg mirror https://skills.example.com/mcp --namespace upstream --data-dir /var/lib/skillreg"
    )]
    Mirror(sources::MirrorArgs),
    /// Read every recorded source again (`import git`, `mirror`): changed skills become new
    /// versions, unchanged ones are left alone, removed ones are deprecated.
    #[command(
        after_help = "A source that cannot be read is reported and the others are still read.\n\nExit status: 0 when every source was read and every skill stored or unchanged, 1 otherwise, 2 on a fatal error.\n\nExamples:\n  skillreg sync --data-dir /var/lib/skillreg\n  skillreg sync --namespace acme --json"
    )]
    Sync(sources::SyncArgs),
    /// List or forget the sources `skillreg sync` reads.
    #[command(
        subcommand,
        after_help = "Examples:\n  skillreg sources list\n  skillreg sources remove 3"
    )]
    Sources(sources::SourcesCommand),
    /// Install skills from a registry (any SEP-2640 server) into agents' skill folders, and
    /// record them in skills.lock.
    #[command(
        after_help = "Every file is written only after its sha256 and size match the source's entry.\n\nExamples:\n  skillreg add acme/pdf-tools\n  skillreg add acme/pdf-tools@^1.2 --agent claude-code --agent codex\n  skillreg add alpha-docs --from 'stdio:node server.mjs --stdio'"
    )]
    Add(install::AddArgs),
    /// Install every skill of skills.lock (--frozen: exactly the lock, or fail; for CI).
    #[command(
        after_help = "Example:\n  skillreg install --frozen\n  skillreg install --frozen --from https://mirror.example.com/mcp"
    )]
    Install(install::InstallArgs),
    /// Compare the installed files with skills.lock: each modified, missing or extra file,
    /// and locked versions since revoked (exit 1).
    #[command(
        after_help = "Exit status: 0 when everything matches, 1 when not (or when a source could not be asked about revocations, unless --offline), 2 on error.\n\nExample:\n  skillreg check\n  skillreg check --global --offline"
    )]
    Check(install::CheckArgs),
    /// Show, without changing anything, which locked skills have a newer version.
    #[command(after_help = "Example:\n  skillreg outdated\n  skillreg outdated --json")]
    Outdated(install::OutdatedArgs),
    /// Move locked skills to the newest version their requirement allows, show what changed,
    /// and rewrite skills.lock.
    #[command(after_help = "Example:\n  skillreg update\n  skillreg update acme/pdf-tools")]
    Update(install::UpdateArgs),
    /// Remove skills from every agent folder and from skills.lock.
    #[command(after_help = "Example:\n  skillreg remove acme/pdf-tools")]
    Remove(install::RemoveArgs),
    /// Search a running registry.
    #[command(
        after_help = "Example:\n  skillreg search \"review a pull request\" --namespace acme"
    )]
    Search(search::SearchArgs),
    /// Rebuild the search index of a data directory from SQLite (stop the server first; a
    /// running server keeps its own index current).
    #[command(after_help = "Example:\n  skillreg reindex --data-dir /var/lib/skillreg")]
    Reindex {
        #[command(flatten)]
        data: DataArgs,
        /// Print a JSON summary.
        #[arg(long)]
        json: bool,
    },
    /// Bring the data directory's search index up to date with the database, then write it to
    /// FILE as a snapshot that new replicas start from (`serve --index-snapshot FILE`).
    #[command(
        after_help = "Run it as a job beside the replicas (not on a serving replica's data directory): it keeps its own index in --data-dir and catches it up on each run. FILE is replaced atomically.\n\nExample:\n  skillreg index-snapshot /snapshots/index.tar --data-dir /var/lib/skillreg-snapshot --database-url postgres://skillreg@db/skillreg"
    )]
    IndexSnapshot {
        /// Where to write the snapshot (replaced if it exists).
        file: PathBuf,
        #[command(flatten)]
        data: DataArgs,
        /// Print a JSON summary.
        #[arg(long)]
        json: bool,
    },
    /// Check every stored byte against its digest and every row against the blobs it needs.
    #[command(
        after_help = "Exit status: 0 when nothing is damaged, 1 when something is (each problem is printed), 2 on error.\n\nExample:\n  skillreg verify --data-dir /var/lib/skillreg"
    )]
    Verify {
        #[command(flatten)]
        data: DataArgs,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a consistent copy of the database to PATH while the registry keeps running.
    #[command(
        after_help = "Restore by stopping the server and copying PATH to <data-dir>/skillreg.db in an empty data directory; the search index rebuilds itself.\n\nExample:\n  skillreg backup /backups/skillreg-$(date +%F).db --data-dir /var/lib/skillreg"
    )]
    Backup {
        /// Where to write the copy (must not exist).
        path: PathBuf,
        #[command(flatten)]
        data: DataArgs,
    },
    /// Copy a whole registry into an empty one, on the same engine or the other (SQLite ↔
    /// PostgreSQL), then verify the copy.
    #[command(
        after_help = "Stop every server that writes to the source first: a copy whose source changed meanwhile is rolled back. The target must be empty (a new data directory, or a database that has only the schema), and stays empty if the copy fails. Afterwards every blob is re-hashed, every version's content digest recomputed, and the row counts compared with the source's.\n\nExit status: 0 copied and verified, 1 the copy is damaged (each problem is printed), 2 on error.\n\nExample:\n  skillreg migrate --from sqlite:///var/lib/skillreg --to postgres://skillreg@db/skillreg"
    )]
    Migrate {
        /// The registry to copy: sqlite://DIR (a data directory) or postgres://…
        #[arg(
            long,
            value_name = "URL",
            env = "SKILLREG_MIGRATE_FROM",
            hide_env_values = true
        )]
        from: config::Secret,
        /// Where to copy it: sqlite://DIR (a new data directory) or postgres://… (an empty
        /// database).
        #[arg(
            long,
            value_name = "URL",
            env = "SKILLREG_MIGRATE_TO",
            hide_env_values = true
        )]
        to: config::Secret,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the example or the effective configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Create, list or revoke API tokens (needs the admin token).
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Make a namespace private or public again (needs the admin token).
    #[command(subcommand)]
    Namespace(namespace::NamespaceCommand),
}

/// The data directory, and the configuration file it may come from.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    #[command(flatten)]
    pub storage: Storage,
    /// TOML configuration file (see `skillreg config print-default`).
    #[arg(long = "config", env = "SKILLREG_CONFIG", value_name = "PATH")]
    pub config_file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub config: Config,
    /// TOML configuration file (see `skillreg config print-default`).
    #[arg(long = "config", env = "SKILLREG_CONFIG", value_name = "PATH")]
    pub config_file: Option<PathBuf>,
    /// Speak MCP on stdin/stdout instead of HTTP (logs go to stderr).
    #[arg(long)]
    pub stdio: bool,
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print a commented example configuration with every default.
    #[command(after_help = "Example:\n  skillreg config print-default > /etc/skillreg.toml")]
    PrintDefault,
    /// Print the effective configuration (defaults, file, environment, flags), secrets redacted.
    #[command(
        after_help = "Example:\n  SKILLREG_PAGE_SIZE=50 skillreg config print --config /etc/skillreg.toml"
    )]
    Print {
        #[command(flatten)]
        serve: Box<ServeArgs>,
    },
}

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

/// Parse the command line. A configuration file (`--config` or `SKILLREG_CONFIG`) is read first
/// and its values become the flags' defaults, so the environment and flags override it. A secret
/// given as a flag gets a warning on stderr ([`warn_secrets_on_command_line`]).
pub fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let mut command = Cli::command();
    if let Some(path) = config::config_path(&args) {
        match config::read_file(&path) {
            Ok(file) => command = config::apply_file(command, &file),
            Err(e) => {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::InvalidValue,
                    format!("{e}\n"),
                ));
            }
        }
    }
    let matches = command.try_get_matches_from_mut(args)?;
    warn_secrets_on_command_line(&command, &matches);
    Cli::from_arg_matches(&matches)
}

/// Warn, one line each, about secrets given as flags: the command line shows in `ps`,
/// `/proc/*/cmdline` and shell history, the environment and the configuration file do not. A
/// secret is an argument whose environment value is hidden from `--help` (`hide_env_values`).
fn warn_secrets_on_command_line(command: &clap::Command, matches: &clap::ArgMatches) {
    for arg in command
        .get_arguments()
        .filter(|a| a.is_hide_env_values_set())
    {
        let id = arg.get_id().as_str();
        let from_flag = matches.ids().any(|i| i.as_str() == id)
            && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
        let secret = matches
            .get_raw(id)
            .into_iter()
            .flatten()
            .any(|v| carries_secret(&v.to_string_lossy()));
        if from_flag && secret {
            let flag = arg
                .get_long()
                .map_or_else(|| id.to_owned(), |l| format!("--{l}"));
            let env = arg
                .get_env()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default();
            eprintln!(
                "warning: {flag} on the command line can be read by other local users (ps, \
                 /proc/*/cmdline) and stays in shell history; set {env} in the environment instead"
            );
        }
    }
    if let Some((name, sub_matches)) = matches.subcommand()
        && let Some(sub) = command.find_subcommand(name)
    {
        warn_secrets_on_command_line(sub, sub_matches);
    }
}

/// Whether a secret argument's value holds a secret: a URL only when it names a password
/// (`postgres://user:password@host/db` or `?password=`), anything else always.
fn carries_secret(value: &str) -> bool {
    match value.split_once("://") {
        Some((_, rest)) => {
            let authority = rest.split(['/', '?']).next().unwrap_or_default();
            authority
                .rsplit_once('@')
                .is_some_and(|(userinfo, _)| userinfo.contains(':'))
                || rest.contains("password=")
        }
        None => true,
    }
}

/// Run a parsed command line.
pub async fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Import(ImportArgs {
            source: Some(sources::ImportSource::Git(args)),
            ..
        }) => sources::import_git(args).await,
        Command::Import(args) => import(args).await,
        Command::Mirror(args) => sources::mirror(args).await,
        Command::Sync(args) => sources::sync(args).await,
        Command::Sources(command) => sources::sources(command).await,
        Command::Publish(args) => return publish::run(args).await,
        Command::Yank(args) => return lifecycle::yank(args).await,
        Command::Revoke(args) => return lifecycle::revoke(args).await,
        Command::Approve(args) => return lifecycle::approve(args).await,
        Command::Deprecate(args) => return lifecycle::deprecate(args).await,
        Command::Token(command) => return token::run(command).await,
        Command::Namespace(command) => return namespace::run(command).await,
        Command::Search(args) => return search::run(args).await,
        Command::Add(args) => return install::add(args).await,
        Command::Install(args) => return install::install(args).await,
        Command::Check(args) => return install::check(args).await,
        Command::Outdated(args) => return install::outdated(args).await,
        Command::Update(args) => return install::update(args).await,
        Command::Remove(args) => return install::remove(args),
        Command::Reindex { data, json } => reindex(data, json).await,
        Command::Verify { data, json } => verify(data, json).await,
        Command::Rescan { data, json } => rescan(data, json).await,
        Command::Scan {
            paths,
            rules,
            json,
            scanning,
        } => scan(&paths, rules, json, &scanning.scan_policy),
        Command::IndexSnapshot { file, data, json } => index_snapshot(data, &file, json).await,
        Command::Backup { path, data } => backup(data, &path).await,
        Command::Migrate { from, to, json } => migrate(&from, &to, json).await,
        Command::Config(ConfigCommand::PrintDefault) => {
            print!("{}", Config::example());
            Ok(ExitCode::SUCCESS)
        }
        Command::Config(ConfigCommand::Print { serve }) => serve
            .config
            .check()
            .map(|()| {
                print!("{}", serve.config.to_toml());
                ExitCode::SUCCESS
            })
            .map_err(Into::into),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, each cause once (many errors already quote their
/// source), with the stable code when the error is the registry's.
fn error_chain(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !line.contains(&cause) {
            line = format!("{line}: {cause}");
        }
    }
    match e.downcast_ref::<crate::error::Error>() {
        Some(registry) => format!("{line} [{}]", registry.code()),
        None => line,
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = args.config;
    config.check()?;
    // Unusable certificate or key files refuse the start, before anything is opened.
    let tls = match config.tls()? {
        Some((cert, key)) if !args.stdio => Some(http::Tls::load(cert, key)?),
        _ => None,
    };
    let _log = init_logging(config.log_format);
    tracing::debug!(?config, "configuration");
    let registry = Registry::builder_for(&config.storage)?
        .page_size(config.page_size)
        .cache_memory_mib(config.cache_memory_mib)
        .admin_token(config.admin_token())
        .search()
        .index_snapshot(config.index_snapshot.as_deref())
        .open()
        .await?;
    if config.seed {
        match registry.publisher().import_seed().await {
            Ok(s) => tracing::info!(
                imported = s.imported,
                unchanged = s.unchanged,
                skipped = s.skipped,
                "seed skills"
            ),
            // A read-only data directory still serves what it holds.
            Err(e) if e.code() == Code::StorageReadOnly => {
                tracing::warn!("seed skills not published: storage is read-only");
            }
            Err(e) => return Err(e.into()),
        }
    }
    if args.stdio {
        tracing::info!(storage = %config.storage, "serving MCP on stdio");
        let options = McpOptions {
            reads_need_token: false,
            index_max_skills: config.index_json_max_skills,
            website_url: config.website_url.clone(),
            icon_url: config.icon_url.clone(),
        };
        let shared = std::sync::Arc::new(crate::mcp::Shared::new(registry.caches(), &options));
        crate::mcp::stdio::serve(SkillServer::new(registry.clone(), &options, shared)).await?;
        registry.close().await;
        return Ok(ExitCode::SUCCESS);
    }
    let shutdown = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let app = http::router(registry.clone(), &config, shutdown.clone());
    let addr = listener.local_addr()?;
    if let Some(tls) = &tls {
        reload_on_hangup(tls.clone())?;
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(
        %addr,
        storage = %config.storage,
        "serving MCP at {scheme}://{addr}/mcp, the web catalog at {scheme}://{addr}/"
    );
    match config.admin_token() {
        Some(_) => tracing::info!(
            "to publish: `SKILLREG_TOKEN=<the admin token> skillreg token create --registry \
             {scheme}://{addr} --namespace <ns> --action publish`, then `skillreg publish <dir> \
             --namespace <ns>` with that token"
        ),
        None => tracing::info!(
            "no admin token is set, so nobody can publish or manage tokens: set one \
             (SKILLREG_ADMIN_TOKEN=$(openssl rand -hex 32), or admin_token in the config \
             file) and restart"
        ),
    }
    let signal = shutdown.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing requests in flight");
        signal.cancel();
    });
    http::serve(listener, app, (&config).into(), tls, shutdown).await?;
    registry.close().await;
    Ok(ExitCode::SUCCESS)
}

/// On each SIGHUP, read the TLS certificate and key files again; a pair that cannot be used
/// leaves the previous one serving.
fn reload_on_hangup(tls: http::Tls) -> std::io::Result<()> {
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            match tls.reload() {
                Ok(()) => tracing::info!(
                    cert = %tls.cert_path().display(),
                    "TLS certificate and key reloaded"
                ),
                Err(e) => tracing::warn!(
                    error = %e,
                    "TLS certificate and key not reloaded: still serving the previous ones"
                ),
            }
        }
    });
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("install SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {}
        _ = term.recv() => {}
    }
}

async fn reindex(data: DataArgs, json: bool) -> anyhow::Result<ExitCode> {
    let registry = Registry::builder_for(&data.storage)?
        .search()
        .open()
        .await?;
    let progress = Progress::spinner("indexing");
    let count = registry.index().rebuild_search().await?;
    progress.finish();
    if json {
        println!("{}", output::line(&output::Indexed { indexed: count }));
    } else {
        println!("indexed {count} skills");
    }
    registry.close().await;
    Ok(ExitCode::SUCCESS)
}

async fn index_snapshot(
    data: DataArgs,
    file: &std::path::Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let registry = Registry::builder_for(&data.storage)?
        .search()
        .open()
        .await?;
    let progress = Progress::spinner("indexing");
    let written = registry.index().write_snapshot(file).await;
    progress.finish();
    registry.close().await;
    let snapshot = written?;
    if json {
        println!("{}", serde_json::to_string(&snapshot)?);
    } else {
        println!(
            "wrote {} ({} bytes): {} skills at generation {}",
            file.display(),
            snapshot.bytes,
            snapshot.skills,
            snapshot.generation
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `skillreg scan`: read each skill as `import` would (links in the skill packed, a `skill.md`
/// entry point taken) and print what `core::scan` finds, and the verdict `policy` gives.
fn scan(paths: &[PathBuf], rules: bool, json: bool, policy: &str) -> anyhow::Result<ExitCode> {
    use crate::core::scan::{self, Policy, RULES, ScanFile, Verdict};
    let policy = Policy::parse(policy).map_err(|e| anyhow::anyhow!("scan_policy: {e}"))?;
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
    for candidate in crate::source::dir::candidates(paths) {
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
async fn rescan(data: DataArgs, json: bool) -> anyhow::Result<ExitCode> {
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

async fn verify(data: DataArgs, json: bool) -> anyhow::Result<ExitCode> {
    if let Engine::Sqlite(dir) = data.storage.engine()? {
        anyhow::ensure!(
            crate::registry::holds_registry(&dir),
            "no registry database in {}",
            dir.display()
        );
    }
    let registry = Registry::builder_for(&data.storage)?
        .search()
        .open()
        .await?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("verifying blobs")
    };
    let report = registry.verify(&|_| progress.inc()).await?;
    progress.finish();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_verify_report(&report, "checked");
    }
    registry.close().await;
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn backup(data: DataArgs, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let registry = Registry::builder_for(&data.storage)?.open().await?;
    registry.backup(path).await?;
    let size = std::fs::metadata(path)?.len();
    println!(
        "backed up {} to {} ({size} bytes)",
        data.storage,
        path.display()
    );
    registry.close().await;
    Ok(ExitCode::SUCCESS)
}

async fn migrate(
    from: &config::Secret,
    to: &config::Secret,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let storage = |url: &config::Secret| Storage {
        database_url: Some(url.clone()),
        database_pool_size: 4,
        ..Storage::default()
    };
    let (from, to) = (storage(from), storage(to));
    if let Engine::Sqlite(dir) = from.engine()? {
        anyhow::ensure!(
            crate::registry::holds_registry(&dir),
            "no registry database in {}",
            dir.display()
        );
    }
    to.engine()?;
    let source = Registry::builder_for(&from)?.open().await?;
    let target = Registry::builder_for(&to)?.open().await?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("copying rows")
    };
    let copied = source
        .copy_to(&target, &|rows| progress.set_position(rows))
        .await;
    progress.finish();
    let copied = match copied {
        Ok(copied) => copied,
        Err(e) => {
            source.close().await;
            target.close().await;
            return Err(e.into());
        }
    };
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("verifying the copy")
    };
    let mut report = target.verify(&|_| progress.inc()).await?;
    progress.finish();
    let (before, after) = (source.stats().await?, target.stats().await?);
    if before != after {
        report
            .problems
            .push(format!("the source holds {before:?}, the copy {after:?}"));
    }
    if json {
        let migrated = output::Migrated {
            copied: &copied,
            verify: &report,
        };
        println!("{}", serde_json::to_string_pretty(&migrated)?);
    } else {
        println!(
            "copied {} rows ({} bytes of files) at generation {} from {from} to {to}",
            copied.rows, copied.blob_bytes, copied.generation
        );
        print_verify_report(
            &report,
            "verified the copy (row counts equal to the source's too):",
        );
    }
    source.close().await;
    target.close().await;
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Each problem of a scrub, then `{lead} N blobs (B bytes) and V versions: no damage` (or the
/// number of problems).
fn print_verify_report(report: &crate::core::records::VerifyReport, lead: &str) {
    for p in &report.problems {
        println!("damaged: {p}");
    }
    println!(
        "{lead} {} blobs ({} bytes) and {} versions: {}",
        report.blobs_checked,
        report.bytes_checked,
        report.versions_checked,
        if report.is_clean() {
            "no damage".to_owned()
        } else {
            format!("{} problems", report.problems.len())
        }
    );
}

/// A spinner on a terminal; nothing otherwise (the command's own lines are the progress).
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn spinner(message: &'static str) -> Self {
        use std::io::IsTerminal as _;
        if !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = indicatif::ProgressBar::new_spinner().with_message(message);
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Self(Some(bar))
    }

    /// A bar of `total` steps on a terminal; nothing otherwise.
    fn bar(message: &'static str, total: u64) -> Self {
        use std::io::IsTerminal as _;
        if !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = indicatif::ProgressBar::new(total).with_message(message);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {pos}/{len} skills, {per_sec}, eta {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Self(Some(bar))
    }

    fn set_position(&self, position: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(position);
        }
    }

    fn inc(&self) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
        }
    }

    /// Print a line without tearing the spinner.
    fn println(&self, line: &str) {
        match &self.0 {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

async fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
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
fn print_import_line(line: &ImportLine, json: bool, progress: &Progress) {
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
fn print_import_summary(summary: &ImportSummary, json: bool, started: std::time::Instant) {
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
