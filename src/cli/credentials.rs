//! Tokens for the upstream servers `mirror` and `sync` read, one per origin, from a file the
//! operator keeps (`~/.config/skillreg/credentials.toml`, or `--credentials`): a token is sent
//! only to the origin it is written under, and never stored in the registry's database.
//!
//! ```toml
//! [tokens]
//! "https://skills.example.com" = "skr_…"
//! "http://127.0.0.1:8080" = "skr_…"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::core::provenance::origin;

/// The tokens of a credentials file, by origin (`scheme://host[:port]`).
#[derive(Default)]
pub struct Credentials {
    tokens: BTreeMap<String, String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.tokens.keys()).finish()
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    tokens: BTreeMap<String, String>,
}

impl Credentials {
    /// Parse a credentials file's text. Every key must be an origin (no path, query or user
    /// information), written as the URL's origin or with a trailing `/`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        let mut tokens = BTreeMap::new();
        for (key, token) in file.tokens {
            let bound = origin(&key)
                .filter(|_| is_origin(&key))
                .ok_or_else(|| {
                    format!(
                        "{key:?} is not an origin (http(s)://host[:port], no path): a token is bound to one server"
                    )
                })?;
            if token.is_empty() || token.chars().any(|c| c.is_control() || c == ' ') {
                return Err(format!("the token of {bound} is empty or has spaces"));
            }
            if tokens.insert(bound.clone(), token).is_some() {
                return Err(format!("{bound} has two tokens"));
            }
        }
        Ok(Self { tokens })
    }

    /// The credentials at `path`, or at the default path when `None` (a missing default file is
    /// no tokens; a missing named one is an error).
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        let (path, named) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => match default_path() {
                Some(p) => (p, false),
                None => return Ok(Self::default()),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if !named && e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::default());
            }
            Err(e) => anyhow::bail!("reading the credentials file {}: {e}", path.display()),
        };
        {
            use std::os::unix::fs::PermissionsExt as _;
            if std::fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o077 != 0) {
                eprintln!(
                    "warning: the credentials file {} can be read by others (chmod 600 it)",
                    path.display()
                );
            }
        }
        Self::parse(&text)
            .map_err(|e| anyhow::anyhow!("the credentials file {}: {e}", path.display()))
    }

    /// The token written for `location`'s origin, if any (never for a `stdio:` command).
    pub fn token_for(&self, location: &str) -> Option<&str> {
        self.tokens.get(&origin(location)?).map(String::as_str)
    }
}

/// Whether `key` is a URL naming an origin only (its path `/` or empty).
fn is_origin(key: &str) -> bool {
    url::Url::parse(key).is_ok_and(|u| {
        u.path() == "/"
            && u.query().is_none()
            && u.fragment().is_none()
            && u.username().is_empty()
            && u.password().is_none()
    })
}

/// `$XDG_CONFIG_HOME/skillreg/credentials.toml`, else `~/.config/skillreg/credentials.toml`.
pub fn default_path() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("skillreg").join("credentials.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_sent_only_to_the_origin_it_is_written_under() {
        let creds = Credentials::parse(
            r#"
            [tokens]
            "https://Skills.Example.com" = "skr_one"
            "http://127.0.0.1:8080/" = "skr_two"
            "#,
        )
        .unwrap();
        assert_eq!(
            creds.token_for("https://skills.example.com:443/mcp"),
            Some("skr_one")
        );
        assert_eq!(
            creds.token_for("http://127.0.0.1:8080/mcp"),
            Some("skr_two")
        );
        for other in [
            "http://skills.example.com/mcp",
            "https://evil.example/mcp",
            "http://127.0.0.1:8081/mcp",
            "stdio:python3 up.py",
        ] {
            assert_eq!(creds.token_for(other), None, "{other}");
        }
        assert!(!format!("{creds:?}").contains("skr_"));
        for bad in [
            "[tokens]\n\"https://x.example/mcp\" = \"t\"\n",
            "[tokens]\n\"x.example\" = \"t\"\n",
            "[tokens]\n\"https://x.example?k=1\" = \"t\"\n",
            "[tokens]\n\"https://x.example\" = \"\"\n",
            "[tokens]\n\"https://x.example\" = \"a\"\n\"https://X.example/\" = \"b\"\n",
            "token = \"t\"\n",
        ] {
            assert!(Credentials::parse(bad).is_err(), "{bad}");
        }
        assert!(Credentials::parse("").unwrap().tokens.is_empty());
    }
}
