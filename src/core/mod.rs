//! The domain: names, URIs, frontmatter, bundles, digests, versions and limits.
//!
//! Pure code only: nothing here does I/O or imports tokio, sqlx, axum or rmcp, so the CLI can run
//! the same validation before an upload that the server runs on publish.

pub mod archive;
pub mod auth;
pub mod bundle;
pub mod clawhub;
pub mod code;
pub mod digest;
pub mod event;
pub mod fix;
pub mod frontmatter;
pub mod limits;
pub mod mime;
pub mod name;
pub mod pack;
pub mod path;
pub mod provenance;
pub mod quirks;
pub mod records;
pub mod refs;
pub mod requires;
pub mod scan;
pub mod signature;
pub mod status;
pub mod text;
pub mod time;
pub mod trustpub;
pub mod uri;
pub mod usage;
pub mod version;

pub use auth::{AccessError, Action, Principal, Scope, Unauthenticated, Visibility};
pub use bundle::{Bundle, BundleError, BundleFile, Entry, InputFile, InputKind};
pub use code::{Code, McpKind};
pub use digest::Digest;
pub use frontmatter::{FrontmatterError, SkillMd, Warning};
pub use name::{NameError, Namespace, SkillName};
pub use path::{BundlePath, PathError};
pub use refs::{RefError, SkillRef, VersionRef};
pub use status::Status;
pub use time::{Timestamp, TimestampError};
pub use uri::{SkillUri, Target, UriError};
pub use version::{Requirement, SkillVersion, VersionError};
