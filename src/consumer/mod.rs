//! The consumer side: install skills from any SEP-2640 server into agents' skill folders,
//! reproducibly.
//!
//! `skillreg add` resolves a skill over MCP (`skills/get`, `resources/read`, and the version
//! template's completion where a server offers one), checks every file against the digest and
//! size its entry announced before writing anything, places the skill in each agent's folder
//! ([`agents`]), and records it in `skills.lock` ([`lock`]); `install --frozen`, `check`,
//! `outdated`, `update` and `remove` work from that lock ([`install`]); a skill that requires
//! others brings them, resolved as one graph ([`graph`]). It imports nothing but
//! `core`: a client of the wire, not of the registry.

pub mod agents;
pub mod error;
pub mod graph;
pub mod install;
pub mod lock;
pub mod remote;
pub mod signed;
pub mod source;

pub use agents::{Agent, Scope};
pub use error::{Code, Error};
pub use install::{CheckReport, Context, Installed, OutdatedRow, Request, Updated};
pub use lock::Lock;
pub use source::Source;
