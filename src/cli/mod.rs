//! The command line. Each command is a module holding its options and what it runs:
//!
//! - on a data directory: `serve` (and `config`, which prints what it serves with), `import`,
//!   `scan` (`scan`, `rescan`), `index` (`reindex`, `index-snapshot`), `storage` (`verify`,
//!   `backup`, `migrate`), `stats` (usage counts) and `sources` (`import git`, `mirror`,
//!   `sync`, `sources`);
//! - against a running registry over its REST API (`client`): `publish`, `lifecycle` (`yank`,
//!   `revoke`, `approve`, `deprecate`), `search`, `token` and `namespace`;
//! - installing skills from any SEP-2640 server: `install` (`add`, `install`, `check`,
//!   `outdated`, `update`, `remove`).
//!
//! Every `--json` shape is a type in `output`. This module keeps the `Command` enum (each
//! command's help and examples), parsing, dispatch, and what commands share (`DataArgs`,
//! `Progress`).

mod client;
mod credentials;
mod import;
mod index;
mod install;
mod lifecycle;
mod log;
mod namespace;
mod output;
mod pack;
mod publish;
mod scan;
mod search;
mod serve;
mod sources;
mod stats;
mod storage;
mod token;
mod trustpub;
mod webhook;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::{self, Storage};
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
    Serve(serve::ServeArgs),
    /// Import every skill found under the given directories, or in a Git repository
    /// (`import git`).
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        after_help = "Prints one line per skill (imported, unchanged or skipped with the reason) and a summary.\n\nExit status: 0 when every skill was imported or unchanged, 1 when any was skipped, 2 on a fatal error.\n\nExamples:\n  skillreg import --namespace acme ./skills\n  skillreg import git https://github.com/acme/skills --namespace acme"
    )]
    Import(import::ImportArgs),
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
    Rescan(scan::RescanArgs),
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
    Scan(scan::ScanArgs),
    /// Copy every skill another SEP-2640 server lists into a namespace, each file checked
    /// against its listed digest and size; re-running stores only what changed.
    #[command(
        after_help = "A skill with a file that does not match its listing is refused whole. A changed skill becomes a new version: the upstream's (skillreg's `_meta` version, or the frontmatter's), else the next patch. Each version records its upstream URI (served in `_meta` as `dev.skillreg/source`); a skill the upstream no longer lists is deprecated, and one the upstream deprecates is deprecated here with its message. `--upstream-namespace` takes one upstream namespace only. The upstream is recorded for `skillreg sync`.\n\nExit status: 0 when every listed skill is stored or unchanged, 1 when one was refused, 2 on error.\n\nExample:\n  skillreg mirror https://skills.example.com/mcp --namespace upstream --data-dir /var/lib/skillreg\n  skillreg mirror https://skills.example.com/mcp --upstream-namespace acme --namespace acme-mirror"
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
    Reindex(index::ReindexArgs),
    /// Bring the data directory's search index up to date with the database, then write it to
    /// FILE as a snapshot that new replicas start from (`serve --index-snapshot FILE`).
    #[command(
        after_help = "Run it as a job beside the replicas (not on a serving replica's data directory): it keeps its own index in --data-dir and catches it up on each run. FILE is replaced atomically.\n\nExample:\n  skillreg index-snapshot /snapshots/index.tar --data-dir /var/lib/skillreg-snapshot --database-url postgres://skillreg@db/skillreg"
    )]
    IndexSnapshot(index::IndexSnapshotArgs),
    /// Check every stored byte against its digest and every row against the blobs it needs.
    #[command(
        after_help = "Exit status: 0 when nothing is damaged, 1 when something is (each problem is printed), 2 on error.\n\nExample:\n  skillreg verify --data-dir /var/lib/skillreg"
    )]
    Verify(storage::VerifyArgs),
    /// Write a consistent copy of the database to PATH while the registry keeps running.
    #[command(
        after_help = "Restore by stopping the server and copying PATH to <data-dir>/skillreg.db in an empty data directory; the search index rebuilds itself.\n\nExample:\n  skillreg backup /backups/skillreg-$(date +%F).db --data-dir /var/lib/skillreg"
    )]
    Backup(storage::BackupArgs),
    /// Copy a whole registry into an empty one, on the same engine or the other (SQLite ↔
    /// PostgreSQL), then verify the copy.
    #[command(
        after_help = "Stop every server that writes to the source first: a copy whose source changed meanwhile is rolled back. The target must be empty (a new data directory, or a database that has only the schema), and stays empty if the copy fails. Afterwards every blob is re-hashed, every version's content digest recomputed, and the row counts compared with the source's.\n\nExit status: 0 copied and verified, 1 the copy is damaged (each problem is printed), 2 on error.\n\nExample:\n  skillreg migrate --from sqlite:///var/lib/skillreg --to postgres://skillreg@db/skillreg"
    )]
    Migrate(storage::MigrateArgs),
    /// List skills with how often they were read (MCP, REST, ClawHub, installs), most read
    /// first; or with --unused DAYS, the skills nobody read in the last DAYS days.
    #[command(
        after_help = "Counts reach storage within the server's usage_flush_secs. Every skill is listed, private and pending ones too.\n\nExamples:\n  skillreg stats --data-dir /var/lib/skillreg\n  skillreg stats --unused 90 --database-url postgres://skillreg@db/skillreg\n  skillreg stats --days 7 --json"
    )]
    Stats(stats::StatsArgs),
    /// Print the example or the effective configuration.
    #[command(subcommand)]
    Config(serve::ConfigCommand),
    /// Create, list or revoke API tokens (needs the admin token).
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Make a namespace private or public again (needs the admin token).
    #[command(subcommand)]
    Namespace(namespace::NamespaceCommand),
    /// Register, list or remove the CI jobs that may publish to a namespace without a secret
    /// (trusted publishing, OIDC; needs the admin token).
    #[command(subcommand)]
    TrustedPublisher(trustpub::TrustedPublisherCommand),
    /// Publish, list or show packs: named, versioned sets of exact skill versions that
    /// `skillreg add NAMESPACE/PACK` installs as one.
    #[command(subcommand)]
    Pack(pack::PackCommand),
    /// Register, list or remove the webhooks a namespace's events are POSTed to (a token with
    /// the `webhook` action there).
    #[command(subcommand)]
    Webhook(webhook::WebhookCommand),
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
        Command::Serve(args) => serve::serve(args).await,
        Command::Import(import::ImportArgs {
            source: Some(sources::ImportSource::Git(args)),
            ..
        }) => sources::import_git(args).await,
        Command::Import(args) => import::import(args).await,
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
        Command::TrustedPublisher(command) => return trustpub::run(command).await,
        Command::Pack(command) => return pack::run(command).await,
        Command::Webhook(command) => return webhook::run(command).await,
        Command::Search(args) => return search::run(args).await,
        Command::Add(args) => return install::add(args).await,
        Command::Install(args) => return install::install(args).await,
        Command::Check(args) => return install::check(args).await,
        Command::Outdated(args) => return install::outdated(args).await,
        Command::Update(args) => return install::update(args).await,
        Command::Remove(args) => return install::remove(args),
        Command::Reindex(args) => index::reindex(args).await,
        Command::Verify(args) => storage::verify(args).await,
        Command::Rescan(args) => scan::rescan(args).await,
        Command::Scan(args) => scan::scan(args),
        Command::IndexSnapshot(args) => index::index_snapshot(args).await,
        Command::Backup(args) => storage::backup(args).await,
        Command::Migrate(args) => storage::migrate(args).await,
        Command::Stats(args) => stats::run(args).await,
        Command::Config(command) => serve::config(command),
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
