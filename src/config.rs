//! The configuration, declared once: each setting is one field of [`Config`], whose clap
//! attributes give its flag, its environment variable and its default, and whose doc comment is
//! its help text. Everything else is derived from that one declaration: `--help`, the
//! precedence, the commented example file (`skillreg config print-default`) and the printed
//! effective configuration.
//!
//! Precedence: defaults < TOML file (`--config` / `SKILLREG_CONFIG`) < environment (`SKILLREG_*`)
//! < flags. A file's values become the flags' defaults before the command line is parsed, so clap
//! applies the rest of the order itself. Unknown keys in the file are errors; secrets never print.
//!
//! This module is a leaf: it imports nothing else of the crate.

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::{ArgAction, Args, FromArgMatches};
use serde::{Deserialize, Serialize};

/// A secret string: redacted in `Debug`, `Display` and when the configuration is printed.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("<redacted>")
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

/// How logs are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

/// Where the registry keeps its data: the part of the configuration every command that opens a
/// data directory shares.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Storage {
    /// Directory holding the database and the search index (with PostgreSQL, only this
    /// replica's search index).
    #[arg(long, env = "SKILLREG_DATA_DIR", default_value = "skillreg-data")]
    pub data_dir: PathBuf,
    /// Keep the registry in PostgreSQL (`postgres://user:password@host:port/database`), which
    /// any number of replicas may share; unset, or `sqlite://DIR`, keeps it in the SQLite
    /// database of the data directory (DIR, when given, is the data directory).
    #[arg(long, env = "SKILLREG_DATABASE_URL", hide_env_values = true)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_url: Option<Secret>,
    /// PostgreSQL connections this process keeps open at most.
    #[arg(long, env = "SKILLREG_DATABASE_POOL_SIZE", default_value = "16")]
    pub database_pool_size: u32,
    /// Seconds a PostgreSQL statement may run before the server cancels it (503
    /// `storage_busy`).
    #[arg(
        long,
        env = "SKILLREG_DATABASE_STATEMENT_TIMEOUT_SECS",
        default_value = "30"
    )]
    pub database_statement_timeout_secs: u64,
    /// Seconds a request waits for a PostgreSQL connection: while the database is unreachable,
    /// requests fail after this with 503 `storage_unavailable`.
    #[arg(
        long,
        env = "SKILLREG_DATABASE_ACQUIRE_TIMEOUT_SECS",
        default_value = "5"
    )]
    pub database_acquire_timeout_secs: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub scanning: Scanning,
    #[command(flatten)]
    #[serde(flatten)]
    pub signing: Signing,
}

/// How the registry signs the versions it stores, whatever the command that stores them
/// (`serve`, `import`, `sync`).
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Signing {
    /// The registry's signing key (PEM, ECDSA P-256 or P-384, PKCS#8 or SEC1): each version
    /// stored is signed with it in the OpenSSF Model Signing format. Unset: `signing-key.pem` in
    /// the data directory, made on first use. Replicas sharing PostgreSQL should share one key;
    /// every key ever used stays published at /.well-known/skillreg/signing-keys.json.
    #[arg(long, env = "SKILLREG_SIGNING_KEY", value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_key: Option<PathBuf>,
    /// Sign each version stored; --no-signing stores versions unsigned (their bytes and
    /// digests are the same either way).
    #[arg(long = "no-signing", env = "SKILLREG_NO_SIGNING", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
        default_value = "false", default_missing_value = "true", value_parser = off_switch)]
    pub signing: bool,
    /// The Sigstore trusted root (`trusted_root.json`, as `cosign` and `sigstore-python` read
    /// it) authors' keyless signatures are verified against, offline: its Fulcio CAs, Rekor and
    /// CT log keys and timestamp authorities. Unset: Sigstore's public-good production root,
    /// built in (a newer one comes from its TUF repository, e.g. `cosign trusted-root create`
    /// or sigstore-python's cache).
    #[arg(long, env = "SKILLREG_SIGSTORE_TRUSTED_ROOT", value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigstore_trusted_root: Option<PathBuf>,
}

/// The content scan every publish runs, whatever the command that publishes (`serve`,
/// `import`, `rescan`, `scan`).
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Scanning {
    /// What each scan rule's findings do to a version, as `rule=treatment` pairs
    /// (comma-separated) over the defaults that `skillreg scan --rules` lists. Treatments: off
    /// (not run), note (stored and shown), flag (the version is served as flagged), block (a
    /// publish is refused). `*=treatment` sets every rule first; `*=off` turns scanning off.
    #[arg(long, env = "SKILLREG_SCAN_POLICY", default_value = "")]
    pub scan_policy: String,
}

/// Which engine a [`Storage`] names. Its `Debug` never shows a database URL (it may carry a
/// password).
#[derive(Clone, PartialEq, Eq)]
pub enum Engine {
    /// The SQLite database in this data directory.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by URL.
    Postgres(String),
}

impl Storage {
    /// The engine and where its data is.
    pub fn engine(&self) -> Result<Engine, ConfigError> {
        match &self.database_url {
            None => Ok(Engine::Sqlite(self.data_dir.clone())),
            Some(url) => Engine::parse(url.expose()),
        }
    }
}

/// Where the registry is, for logs and messages: never the password of a database URL.
impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.engine() {
            Ok(engine) => write!(f, "{engine:?}"),
            Err(_) => f.write_str("an invalid database URL"),
        }
    }
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(dir) => write!(f, "data directory {}", dir.display()),
            Self::Postgres(url) => write!(f, "PostgreSQL database {}", without_secrets(url)),
        }
    }
}

/// `postgres://user:password@host:port/db?options` → `host:port/db`.
pub fn without_secrets(url: &str) -> &str {
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('?').next().unwrap_or_default()
}

impl Engine {
    /// An engine from a database URL: `postgres://…` or `postgresql://…`, or `sqlite://DIR`
    /// (a data directory).
    pub fn parse(url: &str) -> Result<Self, ConfigError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        if let Some(dir) = url.strip_prefix("sqlite://").filter(|d| !d.is_empty()) {
            return Ok(Self::Sqlite(PathBuf::from(dir)));
        }
        // Never echo the URL: it may carry a password.
        let scheme = url.split_once("://").map_or("(none)", |(s, _)| s);
        Err(ConfigError::Invalid(format!(
            "database_url must start with postgres://, postgresql:// or sqlite://DIR; its scheme \
             is {scheme}"
        )))
    }
}

/// The effective configuration of `skillreg serve`.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Config {
    #[command(flatten)]
    #[serde(flatten)]
    pub storage: Storage,
    /// Address the HTTP server listens on.
    #[arg(long, env = "SKILLREG_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Serve HTTPS with this certificate chain (PEM, the server's certificate first) and the
    /// key of `tls_key`; both or neither. Both files are read again on SIGHUP. Unset, the server
    /// speaks plain HTTP (for TLS at a reverse proxy, see `trusted_proxies`).
    #[arg(long, env = "SKILLREG_TLS_CERT", value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `tls_cert` (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "SKILLREG_TLS_KEY", value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_key: Option<PathBuf>,
    /// Extra Host header values every route accepts besides localhost, 127.0.0.1 and ::1; "*"
    /// accepts any (repeatable; comma-separated in the environment).
    #[arg(
        long = "allowed-host",
        env = "SKILLREG_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    /// Origin header values accepted besides the http(s) origins of the allowed hosts (browser
    /// clients); "*" accepts any (repeatable; comma-separated in the environment).
    #[arg(
        long = "allowed-origin",
        env = "SKILLREG_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// The admin bearer token (creates tokens, publishes anywhere): at least 128 bits of entropy,
    /// e.g. `openssl rand -hex 32`. Prefer the environment variable for secrets.
    #[arg(long, env = "SKILLREG_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<Secret>,
    /// Require a valid token for every read, REST and MCP over HTTP.
    #[arg(long, env = "SKILLREG_REQUIRE_READ_TOKEN")]
    pub require_read_token: bool,
    /// Largest accepted upload (a compressed skill archive), in bytes.
    #[arg(long, env = "SKILLREG_MAX_UPLOAD_BYTES", default_value = "33554432")]
    pub max_upload_bytes: usize,
    /// An index snapshot (`skillreg index-snapshot`) to start from when this data directory has
    /// no search index yet: a new replica then catches up from the snapshot's generation
    /// instead of indexing the whole catalog. Missing or unreadable, the index is built from
    /// storage as without it.
    #[arg(long, env = "SKILLREG_INDEX_SNAPSHOT", value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_snapshot: Option<PathBuf>,
    /// Skills per skills/list and resources/list page, 1 to 1000.
    #[arg(long, env = "SKILLREG_PAGE_SIZE", default_value = "100")]
    pub page_size: u32,
    /// Memory for the in-memory caches, all together, in MiB (manifests, file bytes and
    /// contents, serialized entries, archives, pages; each has a declared share, and each
    /// shows its bytes, hits and evictions in /metrics). Serving RSS stays within this plus
    /// about 110 MiB (measured with 1M skills).
    #[arg(long, env = "SKILLREG_CACHE_MEMORY_MIB", default_value = "384")]
    pub cache_memory_mib: usize,
    /// Catalog size up to which skill://index.json lists every skill.
    #[arg(long, env = "SKILLREG_INDEX_JSON_MAX_SKILLS", default_value = "1000")]
    pub index_json_max_skills: usize,
    /// Publish the embedded seed skills (namespace "skillreg") at startup; --no-seed turns it
    /// off.
    #[arg(long = "no-seed", env = "SKILLREG_NO_SEED", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
        default_value = "false", default_missing_value = "true", value_parser = off_switch)]
    pub seed: bool,
    /// Log format on stderr: "human" or "json".
    #[arg(long, env = "SKILLREG_LOG_FORMAT", value_enum, default_value = "human")]
    pub log_format: LogFormat,
    /// Time limit for one request (REST, MCP, the web page), in seconds; an MCP event stream
    /// (GET /mcp) is not a request and is not limited.
    #[arg(long, env = "SKILLREG_REQUEST_TIMEOUT_SECS", default_value = "30")]
    pub request_timeout_secs: u64,
    /// Connections served at once; further clients wait in the listen backlog.
    #[arg(long, env = "SKILLREG_MAX_CONNECTIONS", default_value = "1024")]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers; also the longest a keep-alive
    /// connection may stay idle between requests, and with TLS the time to finish a handshake.
    #[arg(long, env = "SKILLREG_HEADER_READ_TIMEOUT_SECS", default_value = "10")]
    pub header_read_timeout_secs: u64,
    /// Connections one client address (an IPv6 client: its /64) may hold at once; past it,
    /// further connections from that address are closed at once. Peers in `trusted_proxies` are
    /// not capped (they carry many clients).
    #[arg(
        long,
        env = "SKILLREG_MAX_CONNECTIONS_PER_CLIENT",
        default_value = "64"
    )]
    pub max_connections_per_client: usize,
    /// Reverse proxies (IP addresses or CIDR networks) whose `X-Forwarded-For` and
    /// `X-Forwarded-Proto` are believed: for a request from one of them, the client is the
    /// right-most address of `X-Forwarded-For` that is not a trusted proxy. From any other peer
    /// both headers are ignored (repeatable; comma-separated in the environment).
    #[arg(
        long = "trusted-proxy",
        env = "SKILLREG_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<String>,
    /// Bytes of request bodies the server holds at once, all clients together; a request whose
    /// body would pass it is answered 503 `server_busy`.
    #[arg(
        long,
        env = "SKILLREG_MAX_BODY_BYTES_IN_FLIGHT",
        default_value = "134217728"
    )]
    pub max_body_bytes_in_flight: usize,
    /// Seconds a client has to send a request's body, from the end of its headers (408
    /// `body_read_timeout`).
    #[arg(long, env = "SKILLREG_BODY_READ_TIMEOUT_SECS", default_value = "10")]
    pub body_read_timeout_secs: u64,
    /// Give 2025-era MCP clients sessions (`initialize` answers an `Mcp-Session-Id`; answers come
    /// as SSE streams, and the catalog's `list_changed` notifications reach them). Sessions are
    /// kept in storage too, so that any replica answers any of them.
    /// --no-mcp-sessions serves the 2025 era statelessly, as the 2026 era always is: plain JSON
    /// answers and no notifications. Faster.
    #[arg(long = "no-mcp-sessions", env = "SKILLREG_NO_MCP_SESSIONS", action = ArgAction::Set, num_args = 0..=1, require_equals = true,
        default_value = "false", default_missing_value = "true", value_parser = off_switch)]
    pub mcp_sessions: bool,
    /// MCP sessions (2025-era `initialize`) open at once; more are answered 503.
    #[arg(long, env = "SKILLREG_MAX_MCP_SESSIONS", default_value = "1000")]
    pub max_mcp_sessions: usize,
    /// MCP sessions open at once from one client address.
    #[arg(
        long,
        env = "SKILLREG_MAX_MCP_SESSIONS_PER_CLIENT",
        default_value = "64"
    )]
    pub max_mcp_sessions_per_client: usize,
    /// Seconds an MCP session lives without a request.
    #[arg(long, env = "SKILLREG_MCP_SESSION_IDLE_SECS", default_value = "300")]
    pub mcp_session_idle_secs: u64,
    /// Seconds an MCP session that sends nothing after its handshake lives.
    #[arg(
        long,
        env = "SKILLREG_MCP_SESSION_FIRST_REQUEST_SECS",
        default_value = "30"
    )]
    pub mcp_session_first_request_secs: u64,
    /// Resources one MCP session (or one 2026-era `subscriptions/listen`) may subscribe to at
    /// once; a `resources/subscribe` past it is refused, a listen's filter is cut to it.
    #[arg(
        long,
        env = "SKILLREG_MAX_SUBSCRIPTIONS_PER_SESSION",
        default_value = "100"
    )]
    pub max_subscriptions_per_session: usize,
    /// `events/stream` requests (the Events extension's push delivery) open at once; one past
    /// it is refused with `too_many_event_streams`.
    #[arg(long, env = "SKILLREG_MAX_EVENT_STREAMS", default_value = "256")]
    pub max_event_streams: usize,
    /// REST writes per minute from one client address, and with one token (0: no limit).
    #[arg(
        long,
        env = "SKILLREG_RATE_LIMIT_WRITES_PER_MINUTE",
        default_value = "600"
    )]
    pub rate_limit_writes_per_minute: u32,
    /// Failed authentications per minute from one client address before it must wait
    /// (0: no limit).
    #[arg(
        long,
        env = "SKILLREG_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE",
        default_value = "30"
    )]
    pub rate_limit_auth_failures_per_minute: u32,
    /// The registry's home page, given to MCP clients (`serverInfo.websiteUrl`) and in the
    /// server card (an http or https URL). Unset: the server card names the web catalog at the
    /// address the client used, and `serverInfo` names none.
    #[arg(long, env = "SKILLREG_WEBSITE_URL")]
    pub website_url: Option<String>,
    /// The icon MCP clients show for this registry (`serverInfo.icons`, the server card): an
    /// https URL or a `data:image/...` URI. Unset: skillreg's own icon, embedded.
    #[arg(long, env = "SKILLREG_ICON_URL")]
    pub icon_url: Option<String>,
    /// Show remote (https) images of a SKILL.md on the web catalog's pages. Off by default: a
    /// remote image tells its host of every view of the page; off, it shows as a link.
    #[arg(long, env = "SKILLREG_WEB_REMOTE_IMAGES")]
    pub web_remote_images: bool,
    /// Count the reads of each version per UTC day and kind (skills/get, SKILL.md and other file
    /// reads, archive, discovery and ClawHub downloads, installs), in memory, flushed to storage
    /// in the background; nothing about who read is kept. --no-usage-counting counts nothing.
    #[arg(long = "no-usage-counting", env = "SKILLREG_NO_USAGE_COUNTING", action = ArgAction::Set,
        num_args = 0..=1, require_equals = true, default_value = "false",
        default_missing_value = "true", value_parser = off_switch)]
    pub usage_counting: bool,
    /// Seconds between flushes of the usage counts to storage (a crash loses at most the
    /// counts of one interval; a graceful shutdown flushes them all).
    #[arg(long, env = "SKILLREG_USAGE_FLUSH_SECS", default_value = "10")]
    pub usage_flush_secs: u64,
    /// Rank search results by relevance times a popularity factor, 1 + ln(1 + reads) / 10, from
    /// each skill's reads of the last 30 days (its usage counts): an even match goes to the
    /// skill people use. Off: relevance alone.
    #[arg(long, env = "SKILLREG_SEARCH_POPULARITY")]
    pub search_popularity: bool,
    /// Days the events feed keeps each change to the catalog (`GET /v1/events`, MCP
    /// `events/poll`, webhooks); older events and delivery records are pruned hourly, and a
    /// cursor from before them is answered `truncated`.
    #[arg(long, env = "SKILLREG_EVENT_RETENTION_DAYS", default_value = "30")]
    pub event_retention_days: u64,
    /// Consecutive failed deliveries (no answer, or not a 2xx) after which a webhook is paused;
    /// each event is retried with exponential backoff until then.
    #[arg(long, env = "SKILLREG_WEBHOOK_PAUSE_AFTER", default_value = "10")]
    pub webhook_pause_after: u32,
    /// Webhook hosts (names or IP addresses, as the URL writes them) called although they are,
    /// or resolve to, loopback, private or link-local addresses, which webhooks are refused
    /// otherwise, at registration and at every delivery (repeatable; comma-separated in the
    /// environment).
    #[arg(
        long = "webhook-allow-host",
        env = "SKILLREG_WEBHOOK_ALLOW_HOSTS",
        value_delimiter = ','
    )]
    pub webhook_allow_hosts: Vec<String>,
    /// The audience (`aud`) a CI's OIDC token must be issued for to be exchanged by trusted
    /// publishing (`POST /api/v1/trusted_publishing/tokens`); `skillreg publish --trusted` asks
    /// the CI for a token with it (`--audience`). Where one CI job may publish to more than one
    /// registry, give each its own (its URL).
    #[arg(
        long,
        env = "SKILLREG_TRUSTED_PUBLISHING_AUDIENCE",
        default_value = "skillreg"
    )]
    pub trusted_publishing_audience: String,
    /// Seconds a token exchanged by trusted publishing is accepted, 1 to 1800 (it may publish
    /// to the matched namespace only, and is revoked early by `DELETE` of the exchange path).
    #[arg(
        long,
        env = "SKILLREG_TRUSTED_PUBLISHING_TOKEN_SECS",
        default_value = "900"
    )]
    pub trusted_publishing_token_secs: u64,
}

/// The value of an off switch (`--no-seed`, `SKILLREG_NO_SEED=true`): whether the setting it
/// turns off stays on. The flag alone and `true`, `1`, `yes`, `on` turn it off; `false`, `0`,
/// `no`, `off` leave it on, whether given as `--no-seed=false` or in the environment.
fn off_switch(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(false),
        "false" | "0" | "no" | "off" => Ok(true),
        other => Err(format!(
            "{other:?} is not a switch: use true or false (1/0, yes/no, on/off)"
        )),
    }
}

/// An argument declared as an off switch (`--no-…`, parsed by [`off_switch`]).
fn is_off_switch(arg: &clap::Arg) -> bool {
    arg.get_long().is_some_and(|long| long.starts_with("no-"))
}

impl Default for Config {
    /// Every setting at its declared default (the environment is not read).
    fn default() -> Self {
        let command = Self::augment_args(clap::Command::new("defaults").no_binary_name(true))
            .mut_args(|a| a.env(None::<&str>));
        let matches = command.get_matches_from(Vec::<OsString>::new());
        Self::from_arg_matches(&matches).expect("the declared defaults are valid")
    }
}

impl Default for Storage {
    fn default() -> Self {
        Config::default().storage
    }
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the configuration file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid configuration file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// The settings a configuration file may hold, by key, with their clap argument.
fn settings() -> Vec<clap::Arg> {
    Config::augment_args(clap::Command::new("config"))
        .get_arguments()
        .filter(|a| a.get_id() != "help" && a.get_id() != "version")
        .cloned()
        .collect()
}

/// Read a TOML configuration file: every key must be a setting, and every value must have the
/// setting's type.
pub fn read_file(path: &Path) -> Result<toml::Table, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_file(&text, path)
}

fn parse_file(text: &str, path: &Path) -> Result<toml::Table, ConfigError> {
    let parse_error = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| parse_error(e.to_string()))?;
    let known = settings();
    if let Some(key) = table
        .keys()
        .find(|k| !known.iter().any(|a| a.get_id() == k.as_str()))
    {
        return Err(parse_error(format!("unknown setting `{key}`")));
    }
    // Typed check, so that a wrong type names its key (clap would name the flag).
    let mut merged =
        toml::Table::try_from(Config::default()).map_err(|e| parse_error(e.to_string()))?;
    merged.remove("admin_token");
    merged.extend(table.clone());
    toml::Value::Table(merged)
        .try_into::<Config>()
        .map_err(|e| parse_error(e.to_string()))?;
    Ok(table)
}

/// Make `file`'s values the defaults of the matching arguments of `command` and all its
/// subcommands, so that the environment and flags still override them.
pub fn apply_file(command: clap::Command, file: &toml::Table) -> clap::Command {
    let command = command.mut_args(|arg| match file.get(arg.get_id().as_str()) {
        None => arg,
        Some(toml::Value::Array(items)) => arg.default_values(items.iter().map(value_text)),
        // An off switch (`--no-seed`) holds the opposite of its setting (`seed = false`).
        Some(toml::Value::Boolean(on)) if is_off_switch(&arg) => {
            arg.default_value(if *on { "false" } else { "true" })
        }
        Some(value) => arg.default_value(value_text(value)),
    });
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.into_iter().fold(command, |command, name| {
        command.mut_subcommand(name, |sub| apply_file(sub, file))
    })
}

fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The `--config` path given on the command line (`--config PATH` or `--config=PATH`) or in
/// `SKILLREG_CONFIG`, found before the command line is parsed.
pub fn config_path(args: &[OsString]) -> Option<PathBuf> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy();
        if arg == "--" {
            break;
        }
        if arg == "--config" {
            return args.next().map(PathBuf::from);
        }
        if let Some(path) = arg.strip_prefix("--config=") {
            return Some(PathBuf::from(path));
        }
    }
    std::env::var_os("SKILLREG_CONFIG").map(PathBuf::from)
}

/// The entropy an admin token must carry, in bits.
pub const MIN_ADMIN_TOKEN_BITS: f64 = 128.0;

/// The least Shannon entropy per character of an admin token, in bits: few characters repeated
/// are refused at any length. Random hex has about 3.7 and random base64 about 5; a short random
/// token counts less, as its characters repeat by chance (`openssl rand -hex 16`: 2.80 at the
/// least in a million draws, under 3.0 once in about 9,000).
const MIN_ADMIN_TOKEN_BITS_PER_CHAR: f64 = 2.5;

/// Why `token` is too weak for the admin token, if it is. Its entropy is estimated from its
/// length and the kinds of characters it uses (lowercase, uppercase, digits, other; a token of
/// hex digits only counts 4 bits a character); besides, its characters must vary (Shannon
/// entropy per character), it must not repeat a shorter string, and at most a quarter of its
/// characters may follow from those before them ([`predictable_chars`]).
fn check_admin_token(token: &str) -> Result<(), String> {
    let chars: Vec<char> = token.chars().collect();
    let len = chars.len();
    let hex = !chars.is_empty()
        && (chars.iter().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
            || chars.iter().all(|c| matches!(c, '0'..='9' | 'A'..='F')));
    let has = |f: fn(&char) -> bool| chars.iter().any(f);
    let mut kinds = Vec::new();
    let mut pool = 0u32;
    if hex {
        kinds.push("hex digits");
        pool = 16;
    } else {
        for (name, size, present) in [
            ("lowercase", 26, has(char::is_ascii_lowercase)),
            ("uppercase", 26, has(char::is_ascii_uppercase)),
            ("digits", 10, has(char::is_ascii_digit)),
            ("other", 33, has(|c| !c.is_ascii_alphanumeric())),
        ] {
            if present {
                kinds.push(name);
                pool += size;
            }
        }
    }
    let bits = len as f64 * f64::from(pool.max(1)).log2();
    if bits < MIN_ADMIN_TOKEN_BITS {
        return Err(format!(
            "its {len} characters ({}) carry about {bits:.0} bits",
            if kinds.is_empty() {
                "none".to_owned()
            } else {
                kinds.join(", ")
            }
        ));
    }
    let mut counts = std::collections::HashMap::new();
    for c in &chars {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let per_char: f64 = counts
        .values()
        .map(|&n| {
            let p = n as f64 / len as f64;
            -p * p.log2()
        })
        .sum();
    if per_char < MIN_ADMIN_TOKEN_BITS_PER_CHAR {
        return Err(format!(
            "it repeats a few characters ({per_char:.1} bits of entropy per character, at least \
             {MIN_ADMIN_TOKEN_BITS_PER_CHAR} needed)"
        ));
    }
    // Periods up to 512 (a random token has none; longer ones cost more than they find).
    if let Some(period) =
        (1..=(len / 2).min(512)).find(|&p| (p..len).all(|i| chars[i] == chars[i - p]))
    {
        return Err(format!("it repeats its first {period} characters"));
    }
    let predictable = predictable_chars(&chars);
    if predictable * 4 > len {
        return Err(format!(
            "{predictable} of its {len} characters follow from those before them (runs such as \
             abcd, zyxw or 2468, or repeated pieces)"
        ));
    }
    Ok(())
}

/// How many characters of a token (its first 1,024) follow from those before them: the fourth
/// and later characters of a run with a constant step, between neighbours or up to 4 apart
/// (`aaaa`, `abcd`, `zyxw`, `2468`, `a1b2c3d4`), and the last character of a 4-character piece
/// that already occurred. A random token has few: the chance is about 4/N² per character for N
/// possible characters, and about one in 16,000 per character for a repeated piece of 32 hex
/// digits.
fn predictable_chars(chars: &[char]) -> usize {
    let c: Vec<i64> = chars
        .iter()
        .take(1024)
        .map(|&c| i64::from(u32::from(c)))
        .collect();
    let run = |i: usize, p: usize| {
        i >= 3 * p && {
            let step = c[i] - c[i - p];
            step == c[i - p] - c[i - 2 * p] && step == c[i - 2 * p] - c[i - 3 * p]
        }
    };
    let repeated = |i: usize| {
        i >= 7 && {
            let piece = &c[i - 3..=i];
            (0..i - 6).any(|j| &c[j..j + 4] == piece)
        }
    };
    (0..c.len())
        .filter(|&i| (1..=4).any(|p| run(i, p)) || repeated(i))
        .count()
}

impl Config {
    /// How often usage counts are flushed, or `None` when reads are not counted
    /// (`usage_counting`, `usage_flush_secs`).
    pub fn usage_flush(&self) -> Option<std::time::Duration> {
        self.usage_counting
            .then(|| std::time::Duration::from_secs(self.usage_flush_secs))
    }

    /// Check the settings' ranges.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.page_size == 0 || self.page_size > 1000 {
            return Err(ConfigError::Invalid(format!(
                "page_size must be 1 to 1000, not {}",
                self.page_size
            )));
        }
        if self.max_upload_bytes < 1024 {
            return Err(ConfigError::Invalid(
                "max_upload_bytes must be at least 1024".to_owned(),
            ));
        }
        self.storage.engine()?;
        for (name, value) in [
            (
                "database_pool_size",
                u64::from(self.storage.database_pool_size),
            ),
            (
                "database_statement_timeout_secs",
                self.storage.database_statement_timeout_secs,
            ),
            (
                "database_acquire_timeout_secs",
                self.storage.database_acquire_timeout_secs,
            ),
            ("request_timeout_secs", self.request_timeout_secs),
            ("header_read_timeout_secs", self.header_read_timeout_secs),
            ("body_read_timeout_secs", self.body_read_timeout_secs),
            (
                "max_connections_per_client",
                self.max_connections_per_client as u64,
            ),
            ("mcp_session_idle_secs", self.mcp_session_idle_secs),
            ("usage_flush_secs", self.usage_flush_secs),
            ("event_retention_days", self.event_retention_days),
            ("webhook_pause_after", u64::from(self.webhook_pause_after)),
            (
                "mcp_session_first_request_secs",
                self.mcp_session_first_request_secs,
            ),
            ("max_connections", self.max_connections as u64),
            ("max_mcp_sessions", self.max_mcp_sessions as u64),
            (
                "max_mcp_sessions_per_client",
                self.max_mcp_sessions_per_client as u64,
            ),
            (
                "max_subscriptions_per_session",
                self.max_subscriptions_per_session as u64,
            ),
            ("max_event_streams", self.max_event_streams as u64),
        ] {
            if value == 0 {
                return Err(ConfigError::Invalid(format!("{name} must be at least 1")));
            }
        }
        if self.max_body_bytes_in_flight < self.max_upload_bytes {
            return Err(ConfigError::Invalid(format!(
                "max_body_bytes_in_flight ({}) must be at least max_upload_bytes ({})",
                self.max_body_bytes_in_flight, self.max_upload_bytes
            )));
        }
        self.trusted_proxies()?;
        if !(1..=1800).contains(&self.trusted_publishing_token_secs) {
            return Err(ConfigError::Invalid(format!(
                "trusted_publishing_token_secs must be 1 to 1800, not {}",
                self.trusted_publishing_token_secs
            )));
        }
        if self.trusted_publishing_audience.trim().is_empty() {
            return Err(ConfigError::Invalid(
                "trusted_publishing_audience must not be empty".to_owned(),
            ));
        }
        if let Some(url) = &self.website_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(ConfigError::Invalid(format!(
                "website_url must be an http or https URL, not {url:?}"
            )));
        }
        if let Some(url) = &self.icon_url
            && !(url.starts_with("https://") || url.starts_with("data:image/"))
        {
            return Err(ConfigError::Invalid(format!(
                "icon_url must be an https URL or a data:image/... URI, not {url:?}"
            )));
        }
        self.tls()?;
        if let Some(t) = &self.admin_token {
            check_admin_token(t.expose()).map_err(|why| {
                ConfigError::Invalid(format!(
                    "admin_token is too weak: {why}. It needs at least {MIN_ADMIN_TOKEN_BITS} \
                     bits of entropy; generate one with `openssl rand -hex 32` (or \
                     `openssl rand -base64 32`)"
                ))
            })?;
        }
        Ok(())
    }

    /// The `trusted_proxies` networks: an address is its own network (/32, /128).
    pub fn trusted_proxies(&self) -> Result<Vec<ipnet::IpNet>, ConfigError> {
        self.trusted_proxies
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse::<ipnet::IpNet>()
                    .or_else(|_| p.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map(|net| net.trunc())
                    .map_err(|_| {
                        ConfigError::Invalid(format!(
                            "trusted_proxies: {p:?} is neither an IP address nor a CIDR network"
                        ))
                    })
            })
            .collect()
    }

    /// The certificate chain and key files to serve HTTPS with (`tls_cert`, `tls_key`), when
    /// both are set; one without the other is an error.
    pub fn tls(&self) -> Result<Option<(&Path, &Path)>, ConfigError> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some((cert, key))),
            (None, None) => Ok(None),
            (Some(_), None) => Err(ConfigError::Invalid(
                "tls_cert is set but tls_key is not: serving HTTPS needs both the certificate \
                 chain and its private key (set both, or neither for plain HTTP)"
                    .to_owned(),
            )),
            (None, Some(_)) => Err(ConfigError::Invalid(
                "tls_key is set but tls_cert is not: serving HTTPS needs both the certificate \
                 chain and its private key (set both, or neither for plain HTTP)"
                    .to_owned(),
            )),
        }
    }

    /// The admin token, when one is set and not empty.
    pub fn admin_token(&self) -> Option<&str> {
        self.admin_token
            .as_ref()
            .map(Secret::expose)
            .filter(|t| !t.is_empty())
    }

    /// The effective configuration as TOML, secrets redacted.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// A commented example configuration with every setting at its default, generated from the
    /// declarations above.
    pub fn example() -> String {
        let defaults = toml::Table::try_from(Self::default()).unwrap_or_default();
        let mut out = String::from(
            "# skillreg configuration. Every setting is optional; the values shown are the defaults.\n\
             # Precedence: defaults < this file (--config, SKILLREG_CONFIG) < SKILLREG_* environment < flags.\n",
        );
        for arg in settings() {
            let key = arg.get_id().as_str();
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            out.push('\n');
            for line in help.lines() {
                out.push_str(&format!("# {line}\n"));
            }
            let flag = match (arg.get_long(), arg.get_action()) {
                (Some(long), ArgAction::Append) => format!(", --{long} (repeatable)"),
                (Some(long), _) => format!(", --{long}"),
                (None, _) => String::new(),
            };
            if let Some(env) = arg.get_env() {
                out.push_str(&format!("# ({}{flag})\n", env.to_string_lossy()));
            }
            match defaults.get(key) {
                Some(value) => out.push_str(&format!("{key} = {value}\n")),
                None if key == "admin_token" => out.push_str("# admin_token = \"...\"\n"),
                None => out.push_str(&format!("# {key} =\n")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse `args` for a command holding the whole configuration, with `file` applied and the
    /// environment ignored.
    fn parse(file: &toml::Table, args: &[&str]) -> Config {
        let command = Config::augment_args(clap::Command::new("serve").no_binary_name(true))
            .mut_args(|a| a.env(None::<&str>));
        let matches = apply_file(command, file).get_matches_from(args);
        Config::from_arg_matches(&matches).unwrap()
    }

    #[test]
    fn the_example_parses_to_the_defaults_and_lists_every_setting() {
        let example = Config::example();
        let file = parse_file(&example, Path::new("example.toml")).unwrap();
        assert_eq!(parse(&file, &[]), Config::default());
        for arg in settings() {
            assert!(
                example.contains(arg.get_id().as_str()),
                "{} is missing from the example",
                arg.get_id()
            );
        }
        let d = Config::default();
        assert_eq!(
            (d.listen.port(), d.page_size, d.seed, d.require_read_token),
            (8080, 100, true, false)
        );
        assert!(d.mcp_sessions, "2025-era clients get sessions by default");
        assert!(!d.web_remote_images, "remote images are off by default");
    }

    #[test]
    fn off_switches_read_the_way_they_are_named() {
        let none = toml::Table::new();
        assert!(!parse(&none, &["--no-seed"]).seed);
        assert!(parse(&none, &["--no-seed=false"]).seed);
        assert!(parse(&none, &[]).storage.signing.signing);
        let file = parse_file(
            "signing = false\nmcp_sessions = false\nseed = true\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let c = parse(&file, &[]);
        assert!(!c.storage.signing.signing && !c.mcp_sessions && c.seed);
        // The environment's `SKILLREG_NO_SEED=true` reaches the same parser.
        assert_eq!(off_switch("true"), Ok(false));
        assert_eq!(off_switch("1"), Ok(false));
        assert_eq!(off_switch("false"), Ok(true));
        assert_eq!(off_switch("off"), Ok(true));
        assert!(off_switch("maybe").is_err());
    }

    #[test]
    fn flags_beat_the_file_which_beats_the_defaults() {
        let file = parse_file(
            "page_size = 7\nlisten = \"0.0.0.0:9000\"\nadmin_token = \"file-token-c2c96dbdcba5527dcf6e3c497a540479\"\nallowed_hosts = [\"a.example\", \"b.example\"]\nseed = false\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let c = parse(&file, &["--page-size", "9"]);
        assert_eq!(c.page_size, 9, "flags beat the file");
        assert_eq!(c.listen.port(), 9000, "the file beats the defaults");
        assert_eq!(c.allowed_hosts, ["a.example", "b.example"]);
        assert!(!c.seed);
        assert_eq!(
            c.admin_token(),
            Some("file-token-c2c96dbdcba5527dcf6e3c497a540479")
        );
        assert!(c.check().is_ok(), "the file's admin token is strong enough");
        let c = parse(&file, &["--allowed-host", "c.example"]);
        assert_eq!(
            c.allowed_hosts,
            ["c.example"],
            "a repeated flag replaces the list"
        );
        let printed = format!("{c:?}\n{}", c.to_toml());
        assert!(!printed.contains("file-token"), "{printed}");
        assert!(printed.contains("<redacted>"));
    }

    #[test]
    fn bad_files_name_the_problem() {
        let err = |text: &str| {
            parse_file(text, Path::new("c.toml"))
                .unwrap_err()
                .to_string()
        };
        assert!(err("page_sise = 7\n").contains("page_sise"));
        assert!(err("page_size = \"many\"\n").contains("page_size"));
        assert!(err("not toml").contains("c.toml"));
        assert!(read_file(Path::new("/nonexistent/x.toml")).is_err());
        let c = Config {
            page_size: 0,
            ..Config::default()
        };
        assert!(c.check().is_err());
        let c = Config {
            admin_token: Some(Secret::new("short")),
            ..Config::default()
        };
        assert!(c.check().is_err());
        assert!(Config::default().check().is_ok());
    }

    #[test]
    fn the_admin_token_needs_128_bits_of_entropy() {
        let check = |token: &str| {
            Config {
                admin_token: Some(Secret::new(token)),
                ..Config::default()
            }
            .check()
            .map_err(|e| e.to_string())
        };
        // What `openssl rand -hex 32` and `openssl rand -base64 32` print, a thousand times each.
        use base64::Engine as _;
        use sha2::Digest as _;
        for i in 0..1000u32 {
            let bytes = sha2::Sha256::digest(i.to_le_bytes());
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            assert_eq!((hex.len(), b64.len()), (64, 44));
            assert_eq!(check(&hex), Ok(()), "{hex}");
            assert_eq!(check(&b64), Ok(()), "{b64}");
        }
        for weak in [
            "a".repeat(16),
            "a".repeat(500),
            "ab".repeat(100),
            "abcdefgh".repeat(10),
            "0123456789".repeat(8),
            "Password1!".repeat(4),
            "0123456789abcdef".to_owned(),
            "3f9c0e7a1b5d2c8e4a6f0b9d7c1e3a5".to_owned(), // 31 hex digits: 124 bits
            "change-me".to_owned(),
            String::new(),
        ] {
            let err = check(&weak).expect_err(&weak);
            assert!(
                err.contains("admin_token") && err.contains("openssl rand -hex 32"),
                "{weak}: {err}"
            );
        }
        let err = check(&"a".repeat(16)).unwrap_err();
        assert!(err.contains("128 bits"), "{err}");
        let err = check(&"ab".repeat(100)).unwrap_err();
        assert!(err.contains("repeat"), "{err}");
    }

    #[test]
    fn an_admin_token_made_of_runs_or_repeated_pieces_is_refused() {
        let check = |token: &str| {
            Config {
                admin_token: Some(Secret::new(token)),
                ..Config::default()
            }
            .check()
            .map_err(|e| e.to_string())
        };
        // Long enough, varied enough, not periodic, but predictable: runs with a constant step
        // (ascending, descending, by two, interleaved) and repeated pieces.
        for weak in [
            "abcdefghijklmnopqrstuvwxyzabcdefgh",
            "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQ",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "acegikmoqsuwyACEGIKMOQSUWY02468bdf",
            "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
            "Tr0ub4dor&3xKq9!Tr0ub4dor&3xKq9!zz",
            "0123456789abcdef0123456789abcdefedcba98",
        ] {
            let err = check(weak).expect_err(weak);
            assert!(
                err.contains("follow from those before them"),
                "{weak}: {err}"
            );
        }
        // Random tokens pass: `openssl rand -hex 32` and `-base64 32`, 10,000 of each; and this
        // rule never refuses `openssl rand -hex 16` (exactly 128 bits).
        use base64::Engine as _;
        use sha2::Digest as _;
        for i in 0..10_000u32 {
            let bytes = sha2::Sha256::digest(i.to_le_bytes());
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            for token in [&hex, &b64] {
                assert_eq!(check(token), Ok(()), "{token}");
            }
            let short: Vec<char> = hex[..32].chars().collect();
            assert!(predictable_chars(&short) * 4 <= 32, "{}", &hex[..32]);
        }
        // A 128-bit random hex token whose characters repeat by chance (2.9 bits a character).
        assert_eq!(check("1cc9e9f1851199519ed5bd958cec119b"), Ok(()));
    }

    #[test]
    fn the_config_path_is_found_before_parsing() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            config_path(&args(&["skillreg", "serve", "--config", "/etc/s.toml"])),
            Some(PathBuf::from("/etc/s.toml"))
        );
        assert_eq!(
            config_path(&args(&["skillreg", "serve", "--config=/x.toml"])),
            Some(PathBuf::from("/x.toml"))
        );
    }

    #[test]
    fn a_database_url_is_parsed_and_its_password_never_shown() {
        let url = "postgres://reg:hunter2@db.internal:5432/skills?sslmode=require";
        let engine = Engine::parse(url).unwrap();
        assert_eq!(engine, Engine::Postgres(url.to_owned()));
        assert_eq!(
            format!("{engine:?}"),
            "PostgreSQL database db.internal:5432/skills"
        );
        let storage = Storage {
            database_url: Some(Secret::new(url)),
            ..Storage::default()
        };
        assert!(!format!("{storage} {storage:?}").contains("hunter2"));
        assert_eq!(
            Engine::parse("sqlite:///var/lib/skillreg").unwrap(),
            Engine::Sqlite(PathBuf::from("/var/lib/skillreg"))
        );
        let err = Engine::parse("mysql://root:hunter2@x/db")
            .unwrap_err()
            .to_string();
        assert!(err.contains("mysql") && !err.contains("hunter2"), "{err}");
    }

    #[test]
    fn tls_needs_both_the_certificate_and_its_key() {
        let file = parse_file(
            "tls_cert = \"/etc/skillreg/cert.pem\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let err = parse(&file, &[]).check().unwrap_err().to_string();
        assert!(
            err.contains("tls_cert is set but tls_key is not") && err.contains("needs both"),
            "{err}"
        );
        let err = parse(&toml::Table::new(), &["--tls-key", "/k.pem"])
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains("tls_key is set but tls_cert is not"), "{err}");
        let both = parse(&file, &["--tls-key", "/k.pem"]);
        assert_eq!(
            both.tls().unwrap(),
            Some((Path::new("/etc/skillreg/cert.pem"), Path::new("/k.pem")))
        );
        assert!(both.check().is_ok());
        assert_eq!(Config::default().tls().unwrap(), None);
        assert!(both.to_toml().contains("tls_key = \"/k.pem\""));
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks() {
        let config = Config {
            trusted_proxies: vec![
                "10.1.2.3".into(),
                " 172.28.0.0/16".into(),
                "fd00::1/64".into(),
            ],
            ..Config::default()
        };
        let nets: Vec<String> = config
            .trusted_proxies()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(nets, ["10.1.2.3/32", "172.28.0.0/16", "fd00::/64"]);
        let bad = Config {
            trusted_proxies: vec!["haproxy".into()],
            ..Config::default()
        };
        let err = bad.check().unwrap_err().to_string();
        assert!(
            err.contains("trusted_proxies") && err.contains("haproxy"),
            "{err}"
        );
    }

    #[test]
    fn an_exchanged_token_lives_at_most_30_minutes() {
        let with = |secs: u64| Config {
            trusted_publishing_token_secs: secs,
            ..Config::default()
        };
        assert_eq!(Config::default().trusted_publishing_token_secs, 900);
        assert!(with(1).check().is_ok() && with(1800).check().is_ok());
        for bad in [0, 1801] {
            let err = with(bad).check().unwrap_err().to_string();
            assert!(err.contains("trusted_publishing_token_secs"), "{err}");
        }
        let empty = Config {
            trusted_publishing_audience: " ".into(),
            ..Config::default()
        };
        assert!(empty.check().is_err());
    }
}
