//! Where skills come from, as a lock or a command line names it: an MCP endpoint over HTTP, or
//! a command that speaks MCP on stdin and stdout. Parsing only; `remote` connects.

use super::error::{Code, Error, Result};
use crate::core::provenance::origin;

/// Where skills come from: an MCP endpoint over HTTP, or a server started as a command that
/// speaks MCP on stdin and stdout (`stdio:<program> <args>`, arguments split on spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Http(String),
    Stdio(Vec<String>),
}

impl Source {
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.starts_with("http://") || s.starts_with("https://") {
            return Ok(Source::Http(s.to_owned()));
        }
        if let Some(command) = s.strip_prefix("stdio:") {
            let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
            if !argv.is_empty() {
                return Ok(Source::Stdio(argv));
            }
        }
        Err(Error::new(
            Code::Usage,
            format!(
                "{s:?} is not a source: give an MCP endpoint (http://host:port/mcp) or stdio:<command>"
            ),
        ))
    }

    /// The origin (`scheme://host:port`) of an HTTP source, which a token is bound to; `None`
    /// for a stdio source or a URL that does not parse.
    pub fn origin(&self) -> Option<String> {
        match self {
            Source::Http(url) => origin(url),
            Source::Stdio(_) => None,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Http(url) => f.write_str(url),
            Source::Stdio(argv) => write!(f, "stdio:{}", argv.join(" ")),
        }
    }
}
