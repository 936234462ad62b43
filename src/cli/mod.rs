//! The command line: `serve` and `import` work on a data directory; `publish`, `yank`,
//! `deprecate` and `token` talk to a running registry.

mod client;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use rmcp::ServiceExt as _;
use tokio_util::sync::CancellationToken;

use crate::core::{Namespace, SkillVersion};
use crate::http::{self, HttpOptions};
use crate::import::{self, Outcome};
use crate::mcp::SkillServer;
use crate::registry::Registry;

/// Default data directory, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = "skillreg-data";
/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

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
    },
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

#[derive(Args, Debug)]
pub struct DataDir {
    /// Directory holding the database (created if missing).
    #[arg(long, env = "SKILLREG_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    pub data_dir: PathBuf,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub data: DataDir,
    /// Address to listen on for HTTP.
    #[arg(long, env = "SKILLREG_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
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
    pub allowed_hosts: Vec<String>,
    /// The admin bearer token (creates tokens, publishes anywhere). Without it, only scoped
    /// tokens created earlier can publish.
    #[arg(long, env = "SKILLREG_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Require a valid token for every read (REST and MCP over HTTP).
    #[arg(long, env = "SKILLREG_REQUIRE_READ_TOKEN")]
    pub require_read_token: bool,
    /// Largest accepted upload (compressed archive), in bytes.
    #[arg(long, env = "SKILLREG_MAX_UPLOAD_BYTES", default_value_t = http::DEFAULT_MAX_UPLOAD_BYTES)]
    pub max_upload_bytes: usize,
    /// Catalog size up to which skill://index.json lists every skill (above it, a partial index).
    #[arg(long, env = "SKILLREG_INDEX_JSON_MAX_SKILLS", default_value_t = crate::mcp::DEFAULT_INDEX_MAX_SKILLS)]
    pub index_json_max_skills: usize,
    /// Skills per skills/list and resources/list page.
    #[arg(long, env = "SKILLREG_PAGE_SIZE", default_value_t = crate::registry::DEFAULT_PAGE_SIZE)]
    pub page_size: u32,
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
        Command::Reindex { data } => reindex(data).await,
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

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let registry = Registry::open(&args.data.data_dir)
        .await?
        .with_page_size(args.page_size)
        .with_search(&search_dir(&args.data.data_dir))?;
    if !args.no_seed {
        let s = import::import_seed(&registry).await?;
        tracing::info!(
            imported = s.imported,
            unchanged = s.unchanged,
            skipped = s.skipped,
            "seed skills"
        );
    }
    if args.stdio {
        tracing::info!(data_dir = %args.data.data_dir.display(), "serving MCP on stdio");
        let service = SkillServer::new(registry)
            .with_index_max_skills(args.index_json_max_skills)
            .serve(rmcp::transport::stdio())
            .await?;
        service.waiting().await?;
        return Ok(ExitCode::SUCCESS);
    }
    let shutdown = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let app = http::router(
        registry,
        &HttpOptions {
            allowed_hosts: args.allowed_hosts,
            admin_token: args.admin_token,
            require_read_token: args.require_read_token,
            max_upload_bytes: args.max_upload_bytes,
            index_max_skills: args.index_json_max_skills,
        },
        shutdown.clone(),
    );
    tracing::info!(
        addr = %listener.local_addr()?,
        data_dir = %args.data.data_dir.display(),
        "serving MCP at http://{}/mcp",
        listener.local_addr()?
    );
    let signal = shutdown.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down");
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

async fn reindex(data: DataDir) -> anyhow::Result<ExitCode> {
    let registry = Registry::open(&data.data_dir)
        .await?
        .with_search(&search_dir(&data.data_dir))?;
    let count = registry.rebuild_search().await?;
    println!("indexed {count} skills");
    Ok(ExitCode::SUCCESS)
}

async fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let namespace = Namespace::new(&args.namespace)
        .map_err(|e| anyhow::anyhow!("invalid namespace {:?}: it {e}", args.namespace))?;
    let version = args
        .version
        .as_deref()
        .map(SkillVersion::parse)
        .transpose()?;
    let registry = Registry::open(&args.data.data_dir).await?;
    let summary = import::import_paths(
        &registry,
        &namespace,
        version.as_ref(),
        &args.paths,
        |line| {
            let dir = line.dir.display();
            match &line.outcome {
                Outcome::Imported { uri, version } => {
                    println!("imported  {uri} {version}  ({dir})")
                }
                Outcome::Unchanged { uri, version } => {
                    println!("unchanged {uri} {version}  ({dir})")
                }
                Outcome::Skipped { code, reason } => println!("skipped   {dir}: {reason} [{code}]"),
            }
            for w in &line.warnings {
                println!("  warning: {w}");
            }
        },
    )
    .await?;
    println!(
        "{} imported, {} unchanged, {} skipped",
        summary.imported, summary.unchanged, summary.skipped
    );
    registry.store().close().await;
    Ok(if summary.skipped > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
