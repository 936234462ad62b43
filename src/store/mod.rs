//! SQLite storage: every SQL statement of the crate lives under this module.
//!
//! One database file (`skillreg.db`, WAL mode) under the data directory. Writes go through a
//! single-connection pool and `BEGIN IMMEDIATE` transactions, so a publish is atomic and never
//! deadlocks against another writer (another process included); reads use a separate pool and
//! never block on writes.

mod admin;
mod catalog;
mod db;

pub use admin::{
    AuditRow, CatalogRow, SearchSource, SkillRow, Stats, TokenRow, VerifyReport, VersionRow,
};
pub use catalog::{
    FileRow, ListingRow, Manifest, ManifestEntry, NewVersion, PublishOutcome, ResolvedVersion,
    StoreError,
};
pub use db::{DB_FILE, Store};
