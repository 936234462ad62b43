//! skillreg: a versioned Agent Skills registry served over MCP (SEP-2640).
//!
//! Layers, lowest first; a module imports only from layers below its own (`ARCHITECTURE.md`
//! draws them, and a test enforces the rule):
//!
//! ```text
//! cli ─▶ http ─┐
//!        mcp ──┴─▶ registry (+ error) ─┬─▶ store ──┐
//!                                      ├─▶ search ─┼─▶ core
//!                                      └─▶ source ─┘
//! cli ─▶ consumer ─▶ core      (installing skills from any SEP-2640 server)
//! config, metrics: leaves that import nothing of the crate
//! ```
//!
//! - [`core`]: pure domain rules (names, URIs and references, frontmatter, bundles, digests,
//!   versions, limits, the error-code table, the access policy); no I/O.
//! - [`source`]: input readers: skill directories, uploaded archives, the embedded seed.
//! - [`store`]: storage behind the [`store::Store`] and [`store::Blobs`] interfaces; every SQL
//!   statement lives there (SQLite by default, or PostgreSQL).
//! - [`search`]: the tantivy index, derived data fed by the registry.
//! - [`registry`]: the use cases every transport calls, typed in and out; [`error`] is its error.
//! - [`mcp`]: the rmcp handler; every MCP wire shape lives there.
//! - [`http`]: the axum router (`/mcp`, `/v1`, `/`, `/healthz`, `/readyz`, `/metrics`); every
//!   REST wire shape lives in [`http::api`].
//! - [`consumer`]: `skills.lock` and the install commands (`add`, `install`, `check`,
//!   `outdated`, `update`, `remove`): installs skills from any SEP-2640 server into agents'
//!   folders, over rmcp's client.
//! - [`cli`]: the command line, the REST client of `publish`, `yank`, `revoke`, `approve`,
//!   `deprecate`, `namespace`, `search` and `token`, and the install commands over [`consumer`].
//! - [`config`]: the one declaration of every setting; [`metrics`]: Prometheus counters.

pub mod cli;
pub mod config;
pub mod consumer;
pub mod core;
pub mod error;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod registry;
pub mod search;
pub mod source;
pub mod store;
#[cfg(test)]
mod testing;

pub use error::{Error, Result};
pub use registry::Registry;
