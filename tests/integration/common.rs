//! Shared test harness: a real server on a loopback port over a temporary data directory, a raw
//! MCP client for both protocol eras, the `skillreg` binary as a command, and the location of the
//! external test tools.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillreg::Registry;
use skillreg::config::{Config, Secret};
use skillreg::core::{InputFile, Namespace, SkillVersion};
use skillreg::http;
use skillreg::registry::PublishRequest;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// The shared real-world corpus, read-only.
pub fn corpus_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/real");
    assert!(
        dir.join("MANIFEST.tsv").is_file(),
        "the shared corpus must be at {}",
        dir.display()
    );
    dir
}

/// A registry served over HTTP on 127.0.0.1:<random port>, stopped on drop.
pub struct TestServer {
    pub url: String,
    pub registry: Registry,
    pub data_dir: PathBuf,
    /// The PostgreSQL database holding the catalog; `None`: the data directory's SQLite file.
    pub database_url: Option<String>,
    shutdown: CancellationToken,
    _tmp: Option<TempDir>,
}

/// How to start a [`TestServer`]: by default an empty fresh data directory and the default
/// configuration.
#[must_use = "a builder does nothing until `start`"]
pub struct TestServerBuilder {
    seeded: bool,
    data_dir: Option<PathBuf>,
    /// A PostgreSQL database URL to keep the catalog in instead of the data directory.
    database_url: Option<String>,
    /// Stay on SQLite whatever `SKILLREG_TEST_ENGINE` says.
    sqlite_only: bool,
    config: Config,
    rate_limits: bool,
}

impl TestServer {
    /// Describe the server to start; nothing runs until [`TestServerBuilder::start`].
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder {
            seeded: false,
            data_dir: None,
            database_url: None,
            sqlite_only: false,
            config: Config::default(),
            rate_limits: false,
        }
    }
}

impl TestServerBuilder {
    /// Publish the embedded seed skills before serving.
    pub fn seeded(mut self) -> Self {
        self.seeded = true;
        self
    }

    /// Serve this existing data directory instead of a fresh temporary one.
    pub fn data_dir(mut self, dir: &Path) -> Self {
        self.data_dir = Some(dir.to_path_buf());
        self
    }

    /// Keep the catalog in the PostgreSQL database at `url` (see [`fresh_postgres`]); the data
    /// directory then holds only this server's search index. Servers given the same URL are
    /// replicas of one registry.
    pub fn postgres(mut self, url: &str) -> Self {
        self.database_url = Some(url.to_owned());
        self
    }

    /// Keep the catalog in the data directory's SQLite database even when the suite runs on
    /// PostgreSQL: for tests of SQLite's own files (backup, damage to the file).
    pub fn sqlite(mut self) -> Self {
        self.sqlite_only = true;
        self
    }

    /// Items per page of paginated MCP methods.
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.config.page_size = page_size;
        self
    }

    /// Keep the configured rate limits (off by default in tests, which send many requests from
    /// one address).
    pub fn rate_limits(mut self) -> Self {
        self.rate_limits = true;
        self
    }

    /// The server's configuration (tokens, limits, timeouts). Its page size is kept when
    /// [`TestServerBuilder::page_size`] set one before.
    pub fn config(mut self, config: Config) -> Self {
        let page_size = self.config.page_size;
        self.config = config;
        if self.config.page_size == Config::default().page_size {
            self.config.page_size = page_size;
        }
        self
    }

    /// Open (and seed) the registry, bring its search index up to date, and serve it.
    pub async fn start(mut self) -> TestServer {
        let (data_dir, tmp) = match self.data_dir {
            Some(dir) => (dir, None),
            None => {
                let tmp = TempDir::new().unwrap();
                if self.database_url.is_none() && !self.sqlite_only && postgres_by_default() {
                    self.database_url = Some(fresh_postgres().await);
                }
                (tmp.path().to_path_buf(), Some(tmp))
            }
        };
        if !self.rate_limits {
            // Most tests send many requests from one address; the rate-limit tests opt in.
            self.config.rate_limit_writes_per_minute = 0;
            self.config.rate_limit_auth_failures_per_minute = 0;
        }
        self.config.storage.data_dir = data_dir.clone();
        self.config.storage.database_url =
            self.database_url.clone().map(skillreg::config::Secret::new);
        let registry = Registry::builder_for(&self.config.storage)
            .unwrap()
            .page_size(self.config.page_size)
            .cache_memory_mib(self.config.cache_memory_mib)
            .admin_token(self.config.admin_token())
            .trusted_publishing(skillreg::registry::TrustSettings {
                audience: self.config.trusted_publishing_audience.clone(),
                token_secs: self.config.trusted_publishing_token_secs,
            })
            .search()
            .usage_counting(self.config.usage_flush())
            .search_popularity(self.config.search_popularity)
            .events(skillreg::registry::EventSettings {
                retention_days: self.config.event_retention_days,
                pause_after: self.config.webhook_pause_after,
                allow_hosts: self.config.webhook_allow_hosts.clone(),
            })
            .open()
            .await
            .unwrap();
        if self.seeded {
            registry.publisher().import_seed().await.unwrap();
        }
        registry.index().catch_up_search().await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        let app = http::router(registry.clone(), &self.config, shutdown.clone());
        tokio::spawn(http::serve(
            listener,
            app,
            (&self.config).into(),
            None,
            shutdown.clone(),
        ));
        TestServer {
            url,
            registry,
            data_dir,
            database_url: self.database_url,
            shutdown,
            _tmp: tmp,
        }
    }
}

impl TestServer {
    /// Base URL, e.g. `http://127.0.0.1:1234`.
    pub fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_owned()
    }

    /// The environment a `skillreg` command needs, besides `--data-dir`, to open this server's
    /// storage.
    pub fn storage_env(&self) -> Vec<(&'static str, &str)> {
        self.database_url
            .iter()
            .map(|url| ("SKILLREG_DATABASE_URL", url.as_str()))
            .collect()
    }

    /// Run one statement on the server's database behind the registry's back (to damage it),
    /// the SQLite or the PostgreSQL text as the engine needs; returns the rows it changed.
    pub async fn sql(&self, sqlite: &str, postgres: &str) -> u64 {
        use sqlx::Connection as _;
        match &self.database_url {
            Some(url) => {
                let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                sqlx::query(sqlx::AssertSqlSafe(postgres.to_owned()))
                    .execute(&mut conn)
                    .await
                    .unwrap()
                    .rows_affected()
            }
            None => {
                let db = self.data_dir.join("skillreg.db");
                let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", db.display()))
                    .await
                    .unwrap();
                sqlx::query(sqlx::AssertSqlSafe(sqlite.to_owned()))
                    .execute(&mut conn)
                    .await
                    .unwrap()
                    .rows_affected()
            }
        }
    }
}

/// Whether servers on fresh storage use PostgreSQL (`SKILLREG_TEST_ENGINE=postgres`): `.ci/run`
/// runs the integration tests once per engine. A server given a data directory keeps that
/// directory's SQLite database.
pub fn postgres_by_default() -> bool {
    match std::env::var("SKILLREG_TEST_ENGINE").as_deref() {
        Ok("postgres") => true,
        Ok("sqlite") | Err(_) => false,
        Ok(other) => panic!("SKILLREG_TEST_ENGINE={other}: use sqlite or postgres"),
    }
}

/// A fresh, empty PostgreSQL database on the test server, by URL. The server is the one
/// `SKILLREG_TEST_POSTGRES_URL` names (`.ci/run` starts one with `scripts/test-postgres.sh`);
/// without it, this panics with the fix: PostgreSQL tests never skip silently.
pub async fn fresh_postgres() -> String {
    use sqlx::Connection as _;
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let admin = std::env::var("SKILLREG_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "SKILLREG_TEST_POSTGRES_URL is not set: start a throwaway server with \
             `eval \"$(bash scripts/test-postgres.sh start)\"; export SKILLREG_TEST_POSTGRES_URL` \
             (or run .ci/run, which does)"
        )
    });
    let name = format!(
        "skillreg_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL server: {e}"));
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name}"
    )))
    .execute(&mut conn)
    .await
    .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let (server, _) = admin.rsplit_once('/').expect("a URL with a database path");
    format!("{server}/{name}")
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// What one run of the `skillreg` binary left behind.
#[derive(Debug)]
pub struct CliOutput {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the `skillreg` binary to completion with `args`. It logs at `warn` and inherits no
/// `SKILLREG_TOKEN`; `envs` are set last, so they can set either (`("SKILLREG_TOKEN", t)`).
pub fn run_cli(args: &[&str], envs: &[(&str, &str)]) -> CliOutput {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_skillreg"));
    cmd.args(args)
        .env("SKILLREG_LOG", "warn")
        .env_remove("SKILLREG_TOKEN")
        .envs(envs.iter().copied());
    let out = cmd.output().unwrap();
    CliOutput {
        code: out
            .status
            .code()
            .unwrap_or_else(|| panic!("skillreg {args:?} ended by a signal: {}", out.status)),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`run_cli`] from async code: on the blocking pool, so the runtime's workers keep serving
/// (the command may be talking to a [`TestServer`] of the same runtime).
pub async fn run_cli_async(args: &[&str], envs: &[(&str, &str)]) -> CliOutput {
    let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
    let envs: Vec<(String, String)> = envs
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run_cli(&args, &envs)
    })
    .await
    .unwrap()
}

/// A JSON-RPC error or result, as the server sent it.
pub type Response = Value;

/// Raw MCP over Streamable HTTP, 2026-07-28 stateless requests.
pub struct Modern {
    http: reqwest::Client,
    url: String,
}

impl Modern {
    pub fn new(url: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    pub async fn call(&self, method: &str, params: Value) -> Response {
        let resp = self.send(method, params).await;
        parse_body(&resp.text().await.unwrap())
    }

    /// The HTTP response to one request, headers and all.
    pub async fn send(&self, method: &str, params: Value) -> reqwest::Response {
        let mut params = params;
        params.as_object_mut().unwrap().insert(
            "_meta".into(),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "skillreg-tests", "version": "0"}
            }),
        );
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut req = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method);
        // SEP-2243: the request's target travels in Mcp-Name as well as in the body.
        let target = match method {
            "resources/read" => params.get("uri"),
            "tools/call" | "prompts/get" => params.get("name"),
            _ => None,
        };
        if let Some(target) = target.and_then(Value::as_str) {
            // SEP-2243: values that cannot travel as a bare header go base64-wrapped.
            let bare = !target.is_empty()
                && target.bytes().all(|b| (0x20..=0x7e).contains(&b))
                && !target.starts_with([' ', '\t'])
                && !target.ends_with([' ', '\t']);
            let value = if bare {
                target.to_owned()
            } else {
                use base64::Engine as _;
                format!(
                    "=?base64?{}?=",
                    base64::engine::general_purpose::STANDARD.encode(target)
                )
            };
            req = req.header("Mcp-Name", value);
        }
        req.json(&body).send().await.unwrap()
    }
}

/// Raw MCP over Streamable HTTP, a 2025-11-25 session (initialize, then Mcp-Session-Id).
pub struct Legacy {
    http: reqwest::Client,
    url: String,
    /// `None` against a server without 2025-era sessions (`--no-mcp-sessions`).
    session: Option<String>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Legacy {
    /// A session: the server must answer `initialize` with an `Mcp-Session-Id`.
    pub async fn connect(url: &str) -> Self {
        let this = Self::initialize(url).await;
        assert!(
            this.session.is_some(),
            "initialize answered no Mcp-Session-Id"
        );
        this
    }

    /// Against a server without 2025-era sessions: `initialize` must answer no session id, in
    /// plain JSON.
    pub async fn stateless(url: &str) -> Self {
        let this = Self::initialize(url).await;
        assert_eq!(this.session, None, "a stateless server issued a session");
        this
    }

    async fn initialize(url: &str) -> Self {
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"skillreg-tests","version":"0"}}});
        let resp = http
            .post(url)
            .header("Accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await
            .unwrap();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .map(|id| id.to_str().unwrap().to_owned());
        let body = parse_body(&resp.text().await.unwrap());
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25", "{body}");
        let this = Self {
            http,
            url: url.to_owned(),
            session,
            next_id: 1.into(),
        };
        this.post(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        this
    }

    /// Session `session`, opened elsewhere, at `url` (another process serving the same
    /// storage): no new `initialize`.
    pub fn resumed(url: &str, session: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            session: Some(session.to_owned()),
            next_id: 1.into(),
        }
    }

    /// This session at `url`: no new `initialize`.
    pub fn at(&self, url: &str) -> Self {
        Self::resumed(url, self.session.as_deref().expect("a session"))
    }

    /// Send notification `method`.
    pub async fn notify(&self, method: &str) {
        self.post(json!({"jsonrpc":"2.0","method":method})).await;
    }

    /// The headers every request of this session carries.
    pub fn session_headers(&self) -> reqwest::header::HeaderMap {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(session) = &self.session {
            headers.insert("Mcp-Session-Id", session.parse().unwrap());
        }
        headers.insert("MCP-Protocol-Version", "2025-11-25".parse().unwrap());
        headers
    }

    /// POST `body` in this session; the answer's body as sent.
    pub async fn post(&self, body: Value) -> String {
        self.http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .headers(self.session_headers())
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    pub async fn call(&self, method: &str, params: Value) -> Response {
        parse_body(&self.call_raw(method, params).await.1)
    }

    /// One request's id and the body of its answer as sent (an SSE stream, event ids and all).
    pub async fn call_raw(&self, method: &str, params: Value) -> (u64, String) {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let text = self
            .post(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        (id, text)
    }

    /// The HTTP response to one request, headers and all.
    pub async fn send(&self, method: &str, params: Value) -> reqwest::Response {
        self.try_send(method, params).await.unwrap()
    }

    /// [`Legacy::send`], or the error of a connection that failed.
    pub async fn try_send(
        &self,
        method: &str,
        params: Value,
    ) -> reqwest::Result<reqwest::Response> {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .headers(self.session_headers())
            .json(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .send()
            .await
    }

    /// The session's standalone SSE stream (a GET), open for reading as events arrive.
    pub async fn stream(&self) -> reqwest::Response {
        self.get_stream(None).await
    }

    /// The stream an event id belongs to, resumed after that event (GET with `Last-Event-ID`).
    pub async fn resume(&self, last_event_id: &str) -> String {
        let resp = self.get_stream(Some(last_event_id)).await;
        resp.text().await.unwrap()
    }

    async fn get_stream(&self, last_event_id: Option<&str>) -> reqwest::Response {
        let mut req = self
            .http
            .get(&self.url)
            .header("Accept", "text/event-stream")
            .headers(self.session_headers());
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        req.send().await.unwrap()
    }
}

/// `skillreg serve --stdio` over a server's data directory: a second process, 2025-11-25
/// JSON-RPC lines, initialized. Its calls block; it never waits on the test server, so calling
/// it from a test's runtime thread stalls nothing it needs.
pub struct StdioClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl StdioClient {
    pub fn start(server: &TestServer) -> Self {
        use std::process::{Command, Stdio};
        let mut child = Command::new(env!("CARGO_BIN_EXE_skillreg"))
            .args(["serve", "--stdio", "--no-seed", "--data-dir"])
            .arg(&server.data_dir)
            .envs(server.storage_env())
            .env("SKILLREG_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut this = Self {
            stdin: child.stdin.take().unwrap(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
            next_id: 0,
        };
        let init = this.call(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"skillreg-tests","version":"0"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        // rmcp serves requests once initialize has been answered; a ping proves the session.
        let ping = this.call("ping", json!({}));
        assert!(ping["result"].is_object(), "{ping}");
        this
    }

    /// One request, and its answer (lines for other ids, such as notifications, are skipped).
    pub fn call(&mut self, method: &str, params: Value) -> Response {
        use std::io::{BufRead as _, Write as _};
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
        writeln!(self.stdin, "{message}").unwrap();
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(read > 0, "stdio server exited");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

impl StdioClient {
    /// Write one message, without waiting for anything.
    pub fn write(&mut self, message: &Value) {
        use std::io::Write as _;
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next message the server writes, whatever it is.
    pub fn next_message(&mut self) -> Value {
        use std::io::BufRead as _;
        let mut line = String::new();
        let read = self.stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "stdio server exited");
        serde_json::from_str(&line).unwrap()
    }

    /// Write `line` as it is, and read the next line that is not a notification.
    pub fn send_line(&mut self, line: &[u8]) -> Response {
        use std::io::{BufRead as _, Write as _};
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        loop {
            let mut answer = String::new();
            let read = self.stdout.read_line(&mut answer).unwrap();
            assert!(read > 0, "stdio server exited");
            let v: Value = serde_json::from_str(&answer).unwrap();
            if v.get("method").is_none() {
                return v;
            }
        }
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON body, or the last `data:` event of an SSE body that carries a JSON-RPC response.
pub fn parse_body(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in body: {text}"))
}

/// Follow `nextCursor` to the end of a paginated method; returns (items, pages).
pub async fn all_pages(call: impl AsyncFn(Value) -> Response, key: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let resp = call(params).await;
        let result = &resp["result"];
        assert!(result.is_object(), "error on page {pages}: {resp}");
        items.extend(result[key].as_array().unwrap().iter().cloned());
        pages += 1;
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => return (items, pages),
        }
        assert!(pages < 10_000, "pagination does not end");
    }
}

/// External tools installed by `scripts/install-test-tools.sh`.
pub struct Tools {
    pub dir: PathBuf,
    pub node22: PathBuf,
    pub conformance: PathBuf,
    pub python: PathBuf,
    /// The venv Python with fastmcp 4.2.x (its skills client and proxy).
    pub python_fastmcp42: PathBuf,
}

/// Locate the external tools: `SKILLREG_TOOLS` or `<repo>/.tools`. Panics with the fix if absent:
/// these tests never skip silently.
pub fn tools() -> Tools {
    Tools {
        node22: tool("SKILLREG_NODE22"),
        conformance: tool("SKILLREG_CONFORMANCE"),
        python: tool("SKILLREG_PYTHON"),
        python_fastmcp42: tool("SKILLREG_PYTHON_FASTMCP42"),
        dir: tools_dir(),
    }
}

fn tools_dir() -> PathBuf {
    std::env::var_os("SKILLREG_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools"))
}

/// One path that `scripts/install-test-tools.sh` recorded in `<tools>/env.sh` (`SKILLREG_…`).
pub fn tool(name: &str) -> PathBuf {
    let env_file = tools_dir().join("env.sh");
    let env = std::fs::read_to_string(&env_file).unwrap_or_else(|_| {
        panic!(
            "{} is missing: run scripts/install-test-tools.sh (or .ci/run) first",
            env_file.display()
        )
    });
    env.lines()
        .find_map(|l| l.strip_prefix(&format!("export {name}=")))
        .map(|v| PathBuf::from(v.trim().trim_matches(['"', '\''])))
        .unwrap_or_else(|| {
            panic!(
                "{name} not set in {}: re-run scripts/install-test-tools.sh",
                env_file.display()
            )
        })
}

/// sha256 hex of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    skillreg::core::Digest::of(bytes).hex()
}

/// A `.tar.gz` with raw entry names (so hostile names can be built); links point outside.
pub fn tar_gz(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    use flate2::Compression;
    use flate2::write::GzEncoder;
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    for (path, kind, data) in entries {
        let regular = *kind == tar::EntryType::Regular;
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(*kind);
        h.set_size(if regular { data.len() as u64 } else { 0 });
        h.set_mode(0o644);
        if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
            h.set_link_name("../../etc/passwd").unwrap();
        }
        // set_path refuses `..`; write the raw name.
        h.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_cksum();
        builder
            .append(&h, if regular { *data } else { &[][..] })
            .unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

/// A data directory holding the seed (namespace `skillreg`) and every importable skill of the
/// real corpus (namespace `corpus`), and how many skills that is.
pub async fn corpus_catalog() -> (TempDir, usize) {
    let tmp = TempDir::new().unwrap();
    let registry = Registry::open(tmp.path()).await.unwrap();
    registry.publisher().import_seed().await.unwrap();
    let ns = skillreg::core::Namespace::new("corpus").unwrap();
    let summary = registry
        .publisher()
        .import_dirs(&ns, &Default::default(), &[corpus_dir()], |_| {})
        .await
        .unwrap();
    assert!(summary.imported >= 100, "{summary:?}");
    registry.close().await;
    (tmp, summary.imported + 3)
}

/// The bytes a `resources/read` response carries: its `text` as UTF-8, or its base64 `blob`.
pub fn content_bytes(read: &Value) -> Vec<u8> {
    use base64::Engine as _;
    let c = &read["result"]["contents"][0];
    match (c.get("text"), c.get("blob")) {
        (Some(t), None) => t.as_str().unwrap().as_bytes().to_vec(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b.as_str().unwrap())
            .unwrap(),
        _ => panic!("neither text nor blob: {read}"),
    }
}

/// A publish through the registry (as import does): `files` into `namespace`, at `version` or
/// the frontmatter's.
pub fn publish_request(
    namespace: &Namespace,
    files: Vec<InputFile>,
    version: Option<SkillVersion>,
) -> PublishRequest {
    PublishRequest {
        namespace: namespace.clone(),
        files,
        expected_name: None,
        version,
        actor: "test".to_owned(),
        warnings: Vec::new(),
    }
}

/// Validate `instance` against the JSON Schema `schema` (draft 2020-12) with Python's
/// `jsonschema`, an implementation independent of the one that wrote the schema.
pub fn check_json_schema(schema: &Value, instance: &Value) -> Result<(), String> {
    use std::io::Write as _;
    let script = "import json, sys, jsonschema\n\
        d = json.load(sys.stdin)\n\
        jsonschema.Draft202012Validator.check_schema(d['schema'])\n\
        errors = [e.message for e in jsonschema.Draft202012Validator(d['schema']).iter_errors(d['instance'])]\n\
        print('\\n'.join(errors)); sys.exit(1 if errors else 0)\n";
    let mut child = std::process::Command::new(tools().python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!({"schema": schema, "instance": instance}).to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The admin token of [`admin_server`].
pub const ADMIN: &str = "test-admin-735bacc10bffd93e8bfeb7a103606031";

/// A test server on default settings with [`ADMIN`] as its admin token.
pub async fn admin_server() -> TestServer {
    TestServer::builder()
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await
}
