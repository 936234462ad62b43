//! Benchmark peer for the end-to-end load harness (benches/e2e).
//!
//! `rmcp-catalog --dir DIR --listen 127.0.0.1:PORT` serves rmcp 3.11.0's in-memory
//! `SkillCatalog::from_dir(DIR)` at `/mcp` over Streamable HTTP with a default
//! `StreamableHttpServerConfig`, delegating exactly as rmcp's module docs show.
//!
//! `rmcp-catalog --trivial --listen 127.0.0.1:PORT` answers every POST/GET on any path with a
//! fixed small JSON-RPC body: it measures the load generator's own ceiling on this machine.
//!
//! Both print `listening http://ADDR/mcp` on stdout once bound, set TCP_NODELAY on every
//! accepted socket, and stop on SIGINT/SIGTERM. Logs go to stderr.

use std::{net::SocketAddr, sync::Arc};

use anyhow::{Context as _, bail};
use axum::{Router, serve::ListenerExt as _};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    handler::server::skill_catalog::SkillCatalog,
    model::*,
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio_util::sync::CancellationToken;

/// Cache hints on cacheable results (rmcp would otherwise fill `ttlMs:0, cacheScope:"private"`).
/// Same values as skillreg's current-version reads and the TS reference server's default.
const TTL_MS: u64 = 60_000;
const CACHE_SCOPE: CacheScope = CacheScope::Public;

#[derive(Clone)]
struct Anchor {
    skills: Arc<SkillCatalog>,
}

impl ServerHandler for Anchor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-catalog", "3.11.0"))
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self
            .skills
            .list_skills()
            .with_ttl_ms(TTL_MS)
            .with_cache_scope(CACHE_SCOPE))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.skills
            .get_skill(&request.uri)
            .map(|r| r.with_ttl_ms(TTL_MS).with_cache_scope(CACHE_SCOPE))
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.skills.read_resource_directory(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.skills.resources())
            .with_ttl_ms(TTL_MS)
            .with_cache_scope(CACHE_SCOPE))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.skills
            .read_resource(&request.uri)
            .map(|r| r.with_ttl_ms(TTL_MS).with_cache_scope(CACHE_SCOPE).into())
            .ok_or_else(|| {
                ErrorData::resource_not_found(format!("no resource at {}", request.uri), None)
            })
    }
}

struct Args {
    dir: Option<String>,
    trivial: bool,
    /// No 2025-era sessions and plain JSON answers: rmcp as fast as it is configured to go.
    stateless: bool,
    listen: SocketAddr,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut dir = None;
    let mut trivial = false;
    let mut stateless = false;
    let mut listen: SocketAddr = "127.0.0.1:0".parse()?;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--dir" => dir = Some(it.next().context("--dir needs a value")?),
            "--listen" => {
                listen = it
                    .next()
                    .context("--listen needs a value")?
                    .parse()
                    .context("--listen wants HOST:PORT")?
            }
            "--trivial" => trivial = true,
            "--stateless" => stateless = true,
            "-h" | "--help" => {
                println!("usage: rmcp-catalog (--dir DIR | --trivial) [--stateless] [--listen 127.0.0.1:PORT]");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}"),
        }
    }
    if dir.is_some() == trivial {
        bail!("pass exactly one of --dir DIR, --trivial");
    }
    Ok(Args {
        dir,
        trivial,
        stateless,
        listen,
    })
}

async fn shutdown_signal(token: CancellationToken) {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    token.cancel();
}

const TRIVIAL_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#;

async fn trivial() -> ([(axum::http::HeaderName, &'static str); 1], &'static str) {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        TRIVIAL_BODY,
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = parse_args()?;
    let token = CancellationToken::new();

    let app = if args.trivial {
        Router::new().fallback(axum::routing::any(trivial))
    } else {
        let dir = args.dir.clone().expect("checked");
        let catalog = tokio::task::spawn_blocking(move || SkillCatalog::from_dir(dir))
            .await?
            .context("loading the skills directory")?;
        eprintln!("rmcp-catalog: {} skills", catalog.skills().len());
        let handler = Anchor {
            skills: Arc::new(catalog),
        };
        let cfg = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!args.stateless)
            .with_json_response(args.stateless)
            .with_cancellation_token(token.child_token());
        let svc = StreamableHttpService::new(
            move || Ok(handler.clone()),
            LocalSessionManager::default().into(),
            cfg,
        );
        Router::new().nest_service("/mcp", svc)
    };

    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let addr = listener.local_addr()?;
    println!("listening http://{addr}/mcp");
    use std::io::Write as _;
    std::io::stdout().flush()?;

    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let t = token.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal(t).await;
        })
        .await?;
    Ok(())
}
