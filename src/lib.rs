//! skillreg: a versioned Agent Skills registry served over MCP (SEP-2640).
//!
//! Module map, and the rule for imports between them (arrows point the way imports go):
//!
//! ```text
//! cli ─┬─▶ http ─▶ mcp ─┐
//!      │                ├─▶ registry ─┬─▶ store ─▶ core
//!      └─▶ import ──────┘             └─────────▶ core
//! ```
//!
//! - [`core`]: pure domain rules (names, URIs, frontmatter, bundles, digests, versions, limits);
//!   no I/O and no tokio/sqlx/axum/rmcp.
//! - [`store`]: SQLite through sqlx; every SQL statement lives there.
//! - [`registry`]: the use-cases (publish, list, get, read, read a directory).
//! - [`mcp`]: the rmcp handler; every MCP wire shape lives there.
//! - [`http`]: the axum router (`/mcp`, `/healthz`).
//! - [`import`]: reading skill directories from disk, and the embedded seed.
//! - [`cli`]: the command line.

pub mod archive;
pub mod auth;
pub mod bench;
pub mod cli;
pub mod config;
pub mod core;
pub mod error;
pub mod http;
pub mod import;
pub mod mcp;
pub mod metrics;
pub mod registry;
pub mod search;
pub mod store;

pub use error::{Error, Result};
pub use registry::Registry;
