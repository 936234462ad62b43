//! One typed configuration: defaults < TOML file (`--config` / `SKILLREG_CONFIG`) < environment
//! (`SKILLREG_*`) < flags. Unknown keys in the file are errors; secrets never print.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

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

/// How logs are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

/// The effective configuration of `skillreg serve` (and the data directory of every command).
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    /// Directory holding the database and the search index.
    pub data_dir: PathBuf,
    /// Address the HTTP server listens on.
    pub listen: SocketAddr,
    /// Extra Host header values `/mcp` accepts besides the loopback names; `*` accepts any.
    pub allowed_hosts: Vec<String>,
    /// Origin header values `/mcp` accepts from browsers; empty accepts any (non-browser clients
    /// send none).
    pub allowed_origins: Vec<String>,
    /// The admin bearer token.
    pub admin_token: Option<Secret>,
    /// Every read (REST and MCP over HTTP) requires a valid token.
    pub require_read_token: bool,
    /// Largest accepted upload, in bytes.
    pub max_upload_bytes: usize,
    /// Skills per skills/list and resources/list page.
    pub page_size: u32,
    /// Catalog size up to which skill://index.json lists every skill.
    pub index_json_max_skills: usize,
    /// Publish the embedded seed skills at startup.
    pub seed: bool,
    /// `human` or `json`.
    pub log_format: LogFormat,
    /// Time limit for one REST request, in seconds.
    pub request_timeout_secs: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("skillreg-data"),
            listen: "127.0.0.1:8080".parse().expect("valid default address"),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            admin_token: None,
            require_read_token: false,
            max_upload_bytes: crate::http::DEFAULT_MAX_UPLOAD_BYTES,
            page_size: crate::registry::DEFAULT_PAGE_SIZE,
            index_json_max_skills: crate::mcp::DEFAULT_INDEX_MAX_SKILLS,
            seed: true,
            log_format: LogFormat::Human,
            request_timeout_secs: 30,
        }
    }
}

/// The same settings, every one optional: a file's content, or what flags and the environment
/// gave.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    pub data_dir: Option<PathBuf>,
    pub listen: Option<SocketAddr>,
    pub allowed_hosts: Option<Vec<String>>,
    pub allowed_origins: Option<Vec<String>>,
    pub admin_token: Option<Secret>,
    pub require_read_token: Option<bool>,
    pub max_upload_bytes: Option<usize>,
    pub page_size: Option<u32>,
    pub index_json_max_skills: Option<usize>,
    pub seed: Option<bool>,
    pub log_format: Option<LogFormat>,
    pub request_timeout_secs: Option<u64>,
}

/// A configuration file that cannot be used.
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

impl Config {
    /// Parse a TOML configuration (unknown keys are errors).
    pub fn parse_file(text: &str, path: &Path) -> Result<Overrides, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Defaults, then the file at `file` (if any), then `over` (environment and flags).
    pub fn resolve(file: Option<&Path>, over: Overrides) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            config.apply(Self::parse_file(&text, path)?);
        }
        config.apply(over);
        config.check()?;
        Ok(config)
    }

    fn apply(&mut self, o: Overrides) {
        macro_rules! set {
            ($($field:ident),*) => { $( if let Some(v) = o.$field { self.$field = v; } )* };
        }
        set!(
            data_dir,
            listen,
            allowed_hosts,
            allowed_origins,
            require_read_token,
            max_upload_bytes,
            page_size,
            index_json_max_skills,
            seed,
            log_format,
            request_timeout_secs
        );
        if let Some(token) = o.admin_token {
            self.admin_token = Some(token).filter(|t| !t.expose().is_empty());
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
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
        if self.request_timeout_secs == 0 {
            return Err(ConfigError::Invalid(
                "request_timeout_secs must be at least 1".to_owned(),
            ));
        }
        if let Some(t) = &self.admin_token
            && t.expose().len() < 16
        {
            return Err(ConfigError::Invalid(
                "admin_token must be at least 16 characters".to_owned(),
            ));
        }
        Ok(())
    }

    /// The effective configuration as TOML, secrets redacted.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

/// A commented example configuration with every setting at its default.
pub fn example() -> String {
    let d = Config::default();
    format!(
        r#"# skillreg configuration. Every setting is optional; the values shown are the defaults.
# Precedence: defaults < this file (--config, SKILLREG_CONFIG) < SKILLREG_* environment < flags.

# Directory holding the database and the search index (SKILLREG_DATA_DIR, --data-dir).
data_dir = "{data_dir}"

# Address the HTTP server listens on (SKILLREG_LISTEN, --listen).
listen = "{listen}"

# Extra Host header values /mcp accepts besides localhost, 127.0.0.1 and ::1; "*" accepts any
# (SKILLREG_ALLOWED_HOSTS, comma-separated; --allowed-host, repeatable).
allowed_hosts = []

# Origin header values /mcp accepts (browser clients); empty accepts any
# (SKILLREG_ALLOWED_ORIGINS, comma-separated; --allowed-origin, repeatable).
allowed_origins = []

# The admin bearer token, at least 16 characters (SKILLREG_ADMIN_TOKEN, --admin-token).
# Prefer the environment variable for secrets.
# admin_token = "..."

# Require a valid token for every read, REST and MCP over HTTP (SKILLREG_REQUIRE_READ_TOKEN).
require_read_token = {require_read_token}

# Largest accepted upload (a compressed skill archive), in bytes (SKILLREG_MAX_UPLOAD_BYTES).
max_upload_bytes = {max_upload_bytes}

# Skills per skills/list and resources/list page, 1 to 1000 (SKILLREG_PAGE_SIZE).
page_size = {page_size}

# Catalog size up to which skill://index.json lists every skill (SKILLREG_INDEX_JSON_MAX_SKILLS).
index_json_max_skills = {index_json_max_skills}

# Publish the embedded seed skills (namespace "skillreg") at startup (--no-seed, SKILLREG_NO_SEED).
seed = {seed}

# Log format on stderr: "human" or "json" (SKILLREG_LOG_FORMAT, --log-format).
log_format = "human"

# Time limit for one REST request, in seconds (SKILLREG_REQUEST_TIMEOUT_SECS).
request_timeout_secs = {request_timeout_secs}
"#,
        data_dir = d.data_dir.display(),
        listen = d.listen,
        require_read_token = d.require_read_token,
        max_upload_bytes = d.max_upload_bytes,
        page_size = d.page_size,
        index_json_max_skills = d.index_json_max_skills,
        seed = d.seed,
        request_timeout_secs = d.request_timeout_secs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_example_parses_to_the_defaults() {
        let over = Config::parse_file(&example(), Path::new("example.toml")).unwrap();
        let mut c = Config::default();
        c.apply(over);
        assert_eq!(c.to_toml(), Config::default().to_toml());
    }

    #[test]
    fn precedence_unknown_keys_and_redaction() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "page_size = 7\nlisten = \"0.0.0.0:9000\"\nadmin_token = \"file-token-0123456789\"\n",
        )
        .unwrap();
        let over = Overrides {
            page_size: Some(9),
            ..Overrides::default()
        };
        let c = Config::resolve(Some(&path), over).unwrap();
        assert_eq!(c.page_size, 9, "flags and environment beat the file");
        assert_eq!(c.listen.port(), 9000, "the file beats the defaults");
        assert_eq!(
            c.admin_token.as_ref().unwrap().expose(),
            "file-token-0123456789"
        );
        let printed = format!("{c:?}\n{}", c.to_toml());
        assert!(!printed.contains("file-token"), "{printed}");
        assert!(printed.contains("<redacted>"));

        std::fs::write(&path, "page_sise = 7\n").unwrap();
        let err = Config::resolve(Some(&path), Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("page_sise"), "{err}");
        std::fs::write(&path, "page_size = 0\n").unwrap();
        assert!(Config::resolve(Some(&path), Overrides::default()).is_err());
        assert!(
            Config::resolve(Some(Path::new("/nonexistent/x.toml")), Overrides::default()).is_err()
        );
    }
}
