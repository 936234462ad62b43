//! `skillreg serve` (the registry over HTTP, or MCP over stdio), and `skillreg config`, which
//! prints the configuration it serves with.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tokio_util::sync::CancellationToken;

use super::init_logging;
use crate::config::Config;
use crate::core::Code;
use crate::http;
use crate::mcp::{McpOptions, SkillServer};
use crate::registry::{EventSettings, Registry, TrustSettings};

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

/// `skillreg config print-default|print`.
pub fn config(command: ConfigCommand) -> anyhow::Result<ExitCode> {
    match command {
        ConfigCommand::PrintDefault => {
            print!("{}", Config::example());
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Print { serve } => serve
            .config
            .check()
            .map(|()| {
                print!("{}", serve.config.to_toml());
                ExitCode::SUCCESS
            })
            .map_err(Into::into),
    }
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
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
        .trusted_publishing(TrustSettings {
            audience: config.trusted_publishing_audience.clone(),
            token_secs: config.trusted_publishing_token_secs,
        })
        .search()
        .index_snapshot(config.index_snapshot.as_deref())
        .usage_counting(config.usage_flush())
        .search_popularity(config.search_popularity)
        .events(EventSettings {
            retention_days: config.event_retention_days,
            pause_after: config.webhook_pause_after,
            allow_hosts: config.webhook_allow_hosts.clone(),
        })
        .open()
        .await?;
    // The signing key is read (or made) now, so that a bad key file stops the start.
    match registry.publisher().signing_key().await {
        Ok(Some(key)) => tracing::info!(
            key_id = %key.key_id(),
            "signing each version stored; public keys at /.well-known/skillreg/signing-keys.json"
        ),
        Ok(None) => tracing::info!("signing is off: versions are stored unsigned"),
        Err(e) if e.code() == Code::StorageReadOnly => {
            tracing::warn!("the signing key is not recorded: storage is read-only");
        }
        // A key file configured but unusable stops the start; the default one that cannot be
        // made (a read-only data directory) does not: reads are served, and a publish fails
        // rather than store a version unsigned.
        Err(e) if config.storage.signing.signing_key.is_none() => {
            tracing::warn!(error = %e, "no signing key: publishes will fail until one can be made");
        }
        Err(e) => return Err(e.into()),
    }
    // A Sigstore trusted root configured for keyless signatures is read now: a bad file stops
    // the start rather than every keyless publish.
    if let Some(path) = &config.storage.signing.sigstore_trusted_root {
        registry.publisher().sigstore_root().await?;
        tracing::info!(path = %path.display(), "keyless signatures are verified against this Sigstore trusted root");
    }
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
            max_subscriptions: config.max_subscriptions_per_session,
            max_event_streams: config.max_event_streams,
            sessions: true,
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
             {scheme}://{addr} --description <what for> --namespace <ns> --action publish`, \
             then `skillreg publish <dir> --namespace <ns>` with that token"
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
