//! The command line: `serve` and `import` work on a data directory; `publish`, `yank`,
//! `deprecate` and `token` talk to a running registry.

mod client;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use rmcp::ServiceExt as _;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, LogFormat, Overrides, Secret};
use crate::core::{Namespace, SkillVersion};
use crate::http::{self, HttpOptions};
use crate::import::{self, Outcome};
use crate::mcp::SkillServer;
use crate::registry::Registry;

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
    /// Import every skill found under the given directories.
    #[command(
        after_help = "Prints one line per skill (imported, unchanged or skipped with the reason) and a summary.\n\nExit status: 0 when every skill was imported or unchanged, 1 when any was skipped, 2 on a fatal error.\n\nExample:\n  skillreg import --namespace acme ./skills"
    )]
    Import(ImportArgs),
    /// Validate a skill directory locally, then pack and upload it to a registry.
    #[command(
        after_help = "The version is --version, else the frontmatter's semver `version` or `metadata.version`, else 0.1.0.\n\nExit status: 0 published (or unchanged), 1 refused (the reason and its code are printed), 2 usage or connection error.\n\nExample:\n  SKILLREG_TOKEN=skr_... skillreg publish ./refund-emails --namespace acme --registry https://skills.example.com"
    )]
    Publish {
        /// The skill directory (SKILL.md at its root).
        dir: PathBuf,
        #[arg(long, short, env = "SKILLREG_NAMESPACE", default_value = "default")]
        namespace: String,
        #[arg(long)]
        version: Option<String>,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Yank a version (it stays readable by its pinned URI), or undo it with --undo.
    #[command(
        after_help = "Example:\n  skillreg yank acme/refund-emails 1.2.0 --reason \"leaks a customer address\""
    )]
    Yank {
        /// NAMESPACE/NAME
        skill: String,
        version: String,
        #[arg(long, default_value = "")]
        reason: String,
        #[arg(long)]
        undo: bool,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Deprecate a skill (it stays listed and says so), or undo it with --undo.
    #[command(
        after_help = "Example:\n  skillreg deprecate acme/refund-emails --message \"use acme/refunds instead\""
    )]
    Deprecate {
        /// NAMESPACE/NAME
        skill: String,
        #[arg(long, default_value = "")]
        message: String,
        #[arg(long)]
        undo: bool,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Search a running registry.
    #[command(
        after_help = "Example:\n  skillreg search \"review a pull request\" --namespace acme"
    )]
    Search {
        /// What the skill should do, in plain words.
        query: String,
        #[arg(long, short)]
        namespace: Option<String>,
        #[arg(long, default_value_t = 10)]
        limit: usize,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Rebuild the search index of a data directory from SQLite (stop the server first; a
    /// running server keeps its own index current).
    #[command(after_help = "Example:\n  skillreg reindex --data-dir /var/lib/skillreg")]
    Reindex {
        #[command(flatten)]
        data: DataDir,
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
        data: DataDir,
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
        data: DataDir,
    },
    /// Benchmark helpers: generate a synthetic catalog, measure read-path latency.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Print the example or the effective configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Create, list or revoke API tokens (needs the admin token).
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create a token scoped to namespaces and actions; its secret is printed once.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg token create --description ci --namespace acme --action publish --action yank"
    )]
    Create {
        #[arg(long)]
        description: String,
        /// Namespace the token may act on (repeatable; `*` for all).
        #[arg(long = "namespace", required = true)]
        namespaces: Vec<String>,
        /// publish, yank, deprecate or read (repeatable).
        #[arg(long = "action", required = true)]
        actions: Vec<String>,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// List tokens (never their secrets).
    #[command(after_help = "Example:\n  skillreg token list --token $SKILLREG_ADMIN_TOKEN")]
    List {
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Revoke a token by its id (tok_...).
    #[command(after_help = "Example:\n  skillreg token revoke tok_1a2b3c4d5e6f")]
    Revoke {
        id: String,
        #[command(flatten)]
        remote: client::Remote,
    },
}

#[derive(Args, Debug, Clone, Default)]
pub struct DataDir {
    /// Directory holding the database and the search index (created if missing)
    /// [default: ./skillreg-data].
    #[arg(long, env = "SKILLREG_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// TOML configuration file (see `skillreg config print-default`).
    #[arg(long, env = "SKILLREG_CONFIG")]
    pub config: Option<PathBuf>,
}

impl DataDir {
    /// The configuration these flags, the environment and the file give.
    fn resolve(&self, over: Overrides) -> Result<Config, crate::config::ConfigError> {
        Config::resolve(
            self.config.as_deref(),
            Overrides {
                data_dir: self.data_dir.clone(),
                ..over
            },
        )
    }
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub data: DataDir,
    /// Address to listen on for HTTP [default: 127.0.0.1:8080].
    #[arg(long, env = "SKILLREG_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Speak MCP on stdin/stdout instead of HTTP (logs go to stderr).
    #[arg(long)]
    pub stdio: bool,
    /// Do not publish the embedded skills-seed/ skills at startup.
    #[arg(long, env = "SKILLREG_NO_SEED")]
    pub no_seed: bool,
    /// Extra Host header value accepted on /mcp (repeatable; comma-separated in the env var);
    /// `*` accepts any. Loopback names are always accepted.
    #[arg(
        long = "allowed-host",
        env = "SKILLREG_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Option<Vec<String>>,
    /// Origin header value accepted on /mcp (repeatable; comma-separated in the env var);
    /// none given accepts any origin.
    #[arg(
        long = "allowed-origin",
        env = "SKILLREG_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Option<Vec<String>>,
    /// The admin bearer token, at least 16 characters (creates tokens, publishes anywhere).
    #[arg(long, env = "SKILLREG_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Require a valid token for every read (REST and MCP over HTTP).
    #[arg(long, env = "SKILLREG_REQUIRE_READ_TOKEN")]
    pub require_read_token: bool,
    /// Largest accepted upload (compressed archive), in bytes [default: 33554432].
    #[arg(long, env = "SKILLREG_MAX_UPLOAD_BYTES")]
    pub max_upload_bytes: Option<usize>,
    /// Catalog size up to which skill://index.json lists every skill [default: 1000].
    #[arg(long, env = "SKILLREG_INDEX_JSON_MAX_SKILLS")]
    pub index_json_max_skills: Option<usize>,
    /// Skills per skills/list and resources/list page, 1-1000 [default: 100].
    #[arg(long, env = "SKILLREG_PAGE_SIZE")]
    pub page_size: Option<u32>,
    /// Log format on stderr [default: human].
    #[arg(long, env = "SKILLREG_LOG_FORMAT")]
    pub log_format: Option<LogFormat>,
    /// Time limit for one REST request, in seconds [default: 30].
    #[arg(long, env = "SKILLREG_REQUEST_TIMEOUT_SECS")]
    pub request_timeout_secs: Option<u64>,
}

impl ServeArgs {
    fn config(&self) -> Result<Config, crate::config::ConfigError> {
        self.data.resolve(Overrides {
            listen: self.listen,
            allowed_hosts: self.allowed_hosts.clone(),
            allowed_origins: self.allowed_origins.clone(),
            admin_token: self.admin_token.clone().map(Secret::new),
            require_read_token: self.require_read_token.then_some(true),
            max_upload_bytes: self.max_upload_bytes,
            page_size: self.page_size,
            index_json_max_skills: self.index_json_max_skills,
            seed: self.no_seed.then_some(false),
            log_format: self.log_format,
            request_timeout_secs: self.request_timeout_secs,
            ..Overrides::default()
        })
    }
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Fill a data directory with synthetic skills shaped like the real corpus, then index them.
    #[command(
        after_help = "Skills are numbered; --from continues an earlier run. Publishes 1,000 skills per transaction.\n\nExample:\n  skillreg bench generate --skills 100000 --data-dir /tmp/bench-100k\n  skillreg bench generate --skills 1000 --export /tmp/skills-1k"
    )]
    Generate {
        #[arg(long)]
        skills: u64,
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Write the skills as a folder of skill folders (DIR/<name>/SKILL.md ...) instead of
        /// publishing them: the same catalog for peers that serve a directory.
        #[arg(long, value_name = "DIR")]
        export: Option<std::path::PathBuf>,
        #[command(flatten)]
        data: DataDir,
    },
    /// Print the namespace and name of synthetic skills by number (for load scripts).
    #[command(
        hide = true,
        after_help = "Prints one \"NAMESPACE NAME\" line per number.\n\nExample:\n  skillreg bench names 0 20 999999"
    )]
    Names { numbers: Vec<u64> },
    /// Measure p50/p99 latency of completion, search, listing and reads, in-process.
    #[command(
        after_help = "Example:\n  skillreg bench latency --data-dir /tmp/bench-100k --iterations 2000"
    )]
    Latency {
        #[arg(long, default_value_t = 1000)]
        iterations: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        data: DataDir,
    },
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
    pub data: DataDir,
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
}

/// Run a parsed command line.
pub async fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Import(args) => import(args).await,
        Command::Publish {
            dir,
            namespace,
            version,
            remote,
        } => {
            return client::finish(
                client::publish(&remote, &dir, &namespace, version.as_deref()).await,
            );
        }
        Command::Yank {
            skill,
            version,
            reason,
            undo,
            remote,
        } => {
            return client::finish(client::yank(&remote, &skill, &version, &reason, undo).await);
        }
        Command::Deprecate {
            skill,
            message,
            undo,
            remote,
        } => {
            return client::finish(client::deprecate(&remote, &skill, &message, undo).await);
        }
        Command::Token(TokenCommand::Create {
            description,
            namespaces,
            actions,
            remote,
        }) => {
            return client::finish(
                client::token_create(&remote, &description, &namespaces, &actions).await,
            );
        }
        Command::Search {
            query,
            namespace,
            limit,
            remote,
        } => {
            return client::finish(
                client::search(&remote, &query, namespace.as_deref(), limit).await,
            );
        }
        Command::Reindex { data, json } => reindex(data, json).await,
        Command::Verify { data, json } => verify(data, json).await,
        Command::Bench(BenchCommand::Generate {
            skills,
            from,
            export: Some(dir),
            ..
        }) => bench_export(&dir, from, skills),
        Command::Bench(BenchCommand::Generate {
            skills,
            from,
            export: None,
            data,
        }) => bench_generate(data, from, skills).await,
        Command::Bench(BenchCommand::Names { numbers }) => {
            for i in numbers {
                println!(
                    "{} {}",
                    crate::bench::synthetic_namespace(i),
                    crate::bench::synthetic_name(i)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::Latency {
            iterations,
            json,
            data,
        }) => bench_latency(data, iterations, json).await,
        Command::Backup { path, data } => backup(data, &path).await,
        Command::Config(ConfigCommand::PrintDefault) => {
            print!("{}", crate::config::example());
            Ok(ExitCode::SUCCESS)
        }
        Command::Config(ConfigCommand::Print { serve }) => serve
            .config()
            .map(|c| {
                print!("{}", c.to_toml());
                ExitCode::SUCCESS
            })
            .map_err(Into::into),
        Command::Token(TokenCommand::List { remote }) => {
            return client::finish(client::token_list(&remote).await);
        }
        Command::Token(TokenCommand::Revoke { id, remote }) => {
            return client::finish(client::token_revoke(&remote, &id).await);
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Set up logging on stderr (stdout carries MCP in stdio mode). `SKILLREG_LOG` filters.
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILLREG_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = args.config()?;
    init_logging(config.log_format);
    tracing::debug!(?config, "configuration");
    let registry = Registry::open(&config.data_dir)
        .await?
        .with_page_size(config.page_size)
        .with_search(&search_dir(&config.data_dir))?;
    if config.seed {
        match import::import_seed(&registry).await {
            Ok(s) => tracing::info!(
                imported = s.imported,
                unchanged = s.unchanged,
                skipped = s.skipped,
                "seed skills"
            ),
            // A read-only data directory still serves what it holds.
            Err(e) if e.code() == "storage_read_only" => {
                tracing::warn!("seed skills not published: storage is read-only")
            }
            Err(e) => return Err(e.into()),
        }
    }
    if args.stdio {
        tracing::info!(data_dir = %config.data_dir.display(), "serving MCP on stdio");
        let service = SkillServer::new(registry)
            .with_index_max_skills(config.index_json_max_skills)
            .serve(rmcp::transport::stdio())
            .await?;
        service.waiting().await?;
        return Ok(ExitCode::SUCCESS);
    }
    let shutdown = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let app = http::router(registry, &HttpOptions::from(&config), shutdown.clone());
    tracing::info!(
        addr = %listener.local_addr()?,
        data_dir = %config.data_dir.display(),
        "serving MCP at http://{}/mcp",
        listener.local_addr()?
    );
    let signal = shutdown.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing requests in flight");
        signal.cancel();
    });
    http::serve(listener, app, shutdown).await?;
    Ok(ExitCode::SUCCESS)
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

/// Where a data directory keeps its search index.
pub fn search_dir(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("search-index")
}

async fn reindex(data: DataDir, json: bool) -> anyhow::Result<ExitCode> {
    let config = data.resolve(Overrides::default())?;
    let registry = Registry::open(&config.data_dir)
        .await?
        .with_search(&search_dir(&config.data_dir))?;
    let progress = Progress::spinner("indexing");
    let count = registry.rebuild_search().await?;
    progress.finish();
    if json {
        println!("{}", serde_json::json!({ "indexed": count }));
    } else {
        println!("indexed {count} skills");
    }
    Ok(ExitCode::SUCCESS)
}

async fn verify(data: DataDir, json: bool) -> anyhow::Result<ExitCode> {
    let config = data.resolve(Overrides::default())?;
    let db = config.data_dir.join(crate::store::DB_FILE);
    anyhow::ensure!(db.exists(), "no database at {}", db.display());
    let registry = Registry::open(&config.data_dir).await?;
    let progress = if json {
        Progress(None)
    } else {
        Progress::spinner("verifying blobs")
    };
    let mut report = registry.store().verify(|_| progress.inc()).await?;
    progress.finish();
    // The search index is derived data: a stale one rebuilds itself, a wrong one is a problem.
    if let Ok(with_search) = registry.clone().with_search(&search_dir(&config.data_dir)) {
        with_search.catch_up_search().await.ok();
        let current =
            with_search.search_generation() == Some(registry.store().generation().await? as u64);
        // An index another process owns may lag a moment behind; compare only a current one.
        if let (true, Ok(docs)) = (current, with_search.search_documents()) {
            let expected = registry.store().stats().await?.skills;
            if docs.len() as i64 != expected {
                report.problems.push(format!(
                    "search index holds {} skills, the database {expected}",
                    docs.len()
                ));
            }
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for p in &report.problems {
            println!("damaged: {p}");
        }
        println!(
            "checked {} blobs ({} bytes) and {} versions: {}",
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
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn bench_export(dir: &std::path::Path, from: u64, skills: u64) -> anyhow::Result<ExitCode> {
    let written = crate::bench::export(dir, from, from + skills)
        .map_err(|e| anyhow::anyhow!("writing skills under {}: {e}", dir.display()))?;
    println!("wrote {written} skills under {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

async fn bench_generate(data: DataDir, from: u64, skills: u64) -> anyhow::Result<ExitCode> {
    let config = data.resolve(Overrides::default())?;
    let registry = Registry::open(&config.data_dir).await?;
    let started = std::time::Instant::now();
    let progress = Progress::spinner("generating");
    let created = crate::bench::generate(&registry, from, from + skills, |done| {
        progress.inc();
        if done % 100_000 == 0 {
            progress.println(&format!(
                "{done} skills, {:.0} s",
                started.elapsed().as_secs_f64()
            ));
        }
    })
    .await?;
    progress.finish();
    let stored = started.elapsed();
    println!(
        "stored {created} skills in {:.1} s ({:.0} skills/s)",
        stored.as_secs_f64(),
        created as f64 / stored.as_secs_f64()
    );
    let indexing = std::time::Instant::now();
    let registry = registry.with_search(&search_dir(&config.data_dir))?;
    registry.catch_up_search().await?;
    println!(
        "indexed for search in {:.1} s",
        indexing.elapsed().as_secs_f64()
    );
    let stats = registry.store().stats().await?;
    println!(
        "catalog: {} skills, {} versions, {} files, {} blobs, {} blob bytes",
        stats.skills, stats.versions, stats.files, stats.blobs, stats.blob_bytes
    );
    Ok(ExitCode::SUCCESS)
}

async fn bench_latency(data: DataDir, iterations: usize, json: bool) -> anyhow::Result<ExitCode> {
    let config = data.resolve(Overrides::default())?;
    let registry = Registry::open(&config.data_dir)
        .await?
        .with_search(&search_dir(&config.data_dir))?;
    registry.catch_up_search().await?;
    let results = crate::bench::latency(&registry, iterations).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        println!(
            "| operation | samples | p50 (µs) | p99 (µs) | max (µs) |\n| --- | --- | --- | --- | --- |"
        );
        for r in results {
            println!(
                "| {} | {} | {:.0} | {:.0} | {:.0} |",
                r.operation, r.samples, r.p50_us, r.p99_us, r.max_us
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn backup(data: DataDir, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let config = data.resolve(Overrides::default())?;
    let registry = Registry::open(&config.data_dir).await?;
    registry.store().backup(path).await?;
    let size = std::fs::metadata(path)?.len();
    println!(
        "backed up {} to {} ({size} bytes)",
        config.data_dir.display(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
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
    let config = args.data.resolve(Overrides::default())?;
    let namespace = Namespace::new(&args.namespace)
        .map_err(|e| anyhow::anyhow!("invalid namespace {:?}: it {e}", args.namespace))?;
    let version = args
        .version
        .as_deref()
        .map(SkillVersion::parse)
        .transpose()?;
    let registry = Registry::open(&config.data_dir).await?;
    let progress = if args.json {
        Progress(None)
    } else {
        Progress::spinner("importing")
    };
    let started = std::time::Instant::now();
    let summary = import::import_paths(
        &registry,
        &namespace,
        version.as_ref(),
        &args.paths,
        |line| {
            progress.inc();
            if args.json {
                println!("{}", import_line_json(line));
                return;
            }
            let dir = line.dir.display();
            progress.println(&match &line.outcome {
                Outcome::Imported { uri, version } => format!("imported  {uri} {version}  ({dir})"),
                Outcome::Unchanged { uri, version } => {
                    format!("unchanged {uri} {version}  ({dir})")
                }
                Outcome::Skipped { code, reason } => format!("skipped   {dir}: {reason} [{code}]"),
            });
            for w in &line.warnings {
                progress.println(&format!("  warning: {w}"));
            }
        },
    )
    .await?;
    progress.finish();
    if args.json {
        println!(
            "{}",
            serde_json::json!({"summary": {
                "imported": summary.imported,
                "unchanged": summary.unchanged,
                "skipped": summary.skipped,
                "seconds": started.elapsed().as_secs_f64(),
            }})
        );
    } else {
        println!(
            "{} imported, {} unchanged, {} skipped",
            summary.imported, summary.unchanged, summary.skipped
        );
    }
    registry.store().close().await;
    Ok(if summary.skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn import_line_json(line: &import::Line) -> serde_json::Value {
    let warnings: Vec<_> = line
        .warnings
        .iter()
        .map(|w| serde_json::json!({"code": w.code, "message": w.message}))
        .collect();
    let dir = line.dir.display().to_string();
    match &line.outcome {
        Outcome::Imported { uri, version } => {
            serde_json::json!({"status": "imported", "dir": dir, "uri": uri, "version": version, "warnings": warnings})
        }
        Outcome::Unchanged { uri, version } => {
            serde_json::json!({"status": "unchanged", "dir": dir, "uri": uri, "version": version, "warnings": warnings})
        }
        Outcome::Skipped { code, reason } => {
            serde_json::json!({"status": "skipped", "dir": dir, "code": code, "reason": reason})
        }
    }
}
