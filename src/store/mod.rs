//! Storage: every SQL statement of the crate lives under this module, behind two interfaces.
//!
//! - [`Store`]: every role below, as the registry holds it. The registry talks to storage only
//!   through it, so a second engine implements it without touching the registry, the transports
//!   or the tests. Its roles: [`Catalog`] (publishing skills, versions, files and entries; the
//!   listing; manifests), [`Browse`] (resolving, skills and versions, catalog pages,
//!   completion), [`Lifecycle`] (withdrawal, deprecation, scans, review, revocations, private
//!   namespaces), [`Sources`], [`Access`] (tokens, the audit log), [`TrustedPublishing`]
//!   (trusted publishers, the exchange's tokens and used OIDC token ids), [`Signing`] (signature
//!   bundles, signing keys), [`Maintenance`] (the change feed the search index follows,
//!   counters, scrubbing, backups, copies), [`Sessions`] (2025-era MCP sessions, ephemeral:
//!   copies leave them), [`UsageCounts`] (reads per version, day and kind, added to by the
//!   registry's background flush) and [`Events`] (the events feed, written in the transaction of
//!   each change it records, and the webhooks' delivery queue). What only one engine
//!   keeps is an optional capability: [`KeptEntries`] (SQLite's serialized listing entries).
//! - [`Blobs`]: file bytes by digest (get, put if absent), so that bytes can later live outside
//!   the database. A publish stores its blobs first, then the version's rows in one transaction:
//!   a version is visible completely or not at all, and a crash in between leaves at most
//!   unreferenced blobs.
//!
//! Engines: [`sqlite`] (the embedded default: one data directory, WAL, one writer) and
//! [`postgres`] (one database that any number of replicas share). Outside this module only
//! [`Location`] (built from the settings by [`Location::of`]) says which.
//!
//! Each table group is written once for both engines, in `store/sql/` (`access`, `catalog`,
//! `completion`, `events`, `lifecycle`, `sources`, `maintenance`, `sessions`, `signing`,
//! `trustpub`, `usage`): each engine compiles those
//! modules as its own children (`#[path = "../sql/…"]`), with its own `dialect` in scope, which
//! supplies what the two engines truly say differently as macros usable in `concat!` (`now!`,
//! the bound `limit!`, flags, `visible!`, lists given as one parameter) and the types that go
//! with them;
//! and its own `write` (the write lock as `write::begin`, the generation stamp, the current
//! version and its listing). One SQL text serves both engines: sqlx binds `$N` by number on
//! SQLite as on PostgreSQL. A role method is implemented in one place: in `sql/` when it is
//! shared; in the engine's `skills` (its [`Catalog`]: publishing, the listing, manifests; SQLite's
//! kept entries), `across` (completion across
//! namespaces), `blobs` and `checks` (SQLite's derived columns, backup) where the engines
//! differ. Adding a shared method is two edits: the role trait's declaration and one body.
//!
//! Rows are decoded into typed records here and nowhere else (`rows`, `records`): times are
//! text columns on both engines, decoded into [`Timestamp`] by `time`; a row that does not
//! decode is a [`StoreError::Corrupt`], never a default.

pub mod copy;
mod error;
pub mod postgres;
mod records;
mod rows;
pub mod sqlite;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
mod time;

use std::path::Path;

use async_trait::async_trait;

pub use copy::{Batch, CopyReport, Table};
pub use error::StoreError;
pub use records::{
    AuditRecord, CatalogFilter, CatalogKey, CatalogRecord, ChangedSkill, EntryId, EntryRecord,
    Exchange, FacetRecord, FileRecord, FindingsRecord, ListingRecord, Manifest, Manifests,
    NameMatch, NamespaceKeyRecord, NamespaceSigning, NewToken, NewVersion, PackRecord,
    PublishOutcome, RequiredSkill, RequiringVersion, ResolvedVersion, RevocationRecord, ScanTarget,
    SerializedEntry, SignatureRecord, SigningKeyRecord, SkillId, SkillRecord, SkillUsage, SourceId,
    SourceMember, SourceRecord, Stats, TokenRecord, UsageCount, UsageRecord, VerifyReport,
    VersionId, VersionRecord, Withdrawal,
};

use crate::core::event::{Attempt, Delivery, EventKind, EventsPage, NewWebhook, WebhookRecord};
use crate::core::provenance::SourceSpec;
use crate::core::scan::{Scan, Verdict};
use crate::core::trustpub::{NewPublisher, TrustedPublisher};
use crate::core::usage::Day;
use crate::core::{
    Digest, Namespace, SkillName, SkillRef, SkillVersion, Timestamp, VersionRef, Visibility,
};

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The catalog's storage engine: every role, as the registry holds it (`Arc<dyn Store>`, whose
/// methods need no role trait in scope).
pub trait Store:
    Catalog
    + Browse
    + Lifecycle
    + Sources
    + Access
    + TrustedPublishing
    + Maintenance
    + Sessions
    + Signing
    + UsageCounts
    + Requirements
    + Packs
    + Events
{
}

impl<T> Store for T where
    T: Catalog
        + Browse
        + Lifecycle
        + Sources
        + Access
        + TrustedPublishing
        + Maintenance
        + Sessions
        + Signing
        + UsageCounts
        + Requirements
        + Packs
        + Events
{
}

/// The catalog as each engine keeps it its own way: publishing, the listing, manifests.
#[async_trait]
pub trait Catalog: Send + Sync + 'static {
    /// Store a version's rows in one transaction (its blobs are already stored): the version,
    /// files, entries, the new current version, the listing, the generation and the audit row.
    /// Identical content under an existing version is a no-op; different content is
    /// [`StoreError::VersionExists`].
    async fn publish(&self, new: NewVersion<'_>) -> Result<PublishOutcome>;

    /// Store many versions with one commit (bulk loading). A conflicting version is left out with
    /// its error and the rest are kept; any other failure fails the whole batch. The batch is one
    /// change: one generation and one publish time.
    async fn publish_many(
        &self,
        versions: Vec<NewVersion<'_>>,
    ) -> Result<Vec<Result<PublishOutcome>>>;

    /// The content digest of every given version that exists (a publish's pre-check).
    async fn content_digests(&self, versions: &[VersionRef]) -> Result<Vec<Option<Digest>>>;

    /// One page of the current catalog that `visibility` sees: entries whose listing URI is
    /// after `after`, in URI order.
    async fn list_page(
        &self,
        after: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<ListingRecord>>;

    /// The manifests of many versions; versions that do not exist are absent.
    async fn manifests(&self, version_ids: &[VersionId]) -> Result<Manifests>;

    /// The serialized entries this engine keeps, when it keeps any.
    fn kept_entries(&self) -> Option<&dyn KeptEntries> {
        None
    }
}

/// Reading the catalog beyond the listing: resolving a version, a skill and its versions,
/// catalog pages and completion. Written once for both engines (`store/sql/catalog.rs`).
#[async_trait]
pub trait Browse: Send + Sync + 'static {
    /// The current version of a skill (`version == None`) or one pinned version.
    async fn resolve(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
    ) -> Result<Option<ResolvedVersion>>;

    /// [`Browse::resolve`], and what this engine reads in the same statement (PostgreSQL,
    /// where every statement is a round trip to the server; else nothing, and the caller reads
    /// them apart): the version's manifest when `wanted` says so of its id, and the stored
    /// bytes of the file at `file` when it has one of at most [`INLINE_FILE_BYTES`].
    async fn resolve_with_manifest(
        &self,
        skill: &SkillRef,
        version: Option<&SkillVersion>,
        wanted: &(dyn Fn(VersionId) -> bool + Send + Sync),
        file: Option<&str>,
    ) -> Result<Option<Resolution>>;

    /// A skill by reference.
    async fn skill(&self, skill: &SkillRef) -> Result<Option<SkillRecord>>;

    /// Every version of a skill, unordered.
    async fn versions(&self, skill_id: SkillId) -> Result<Vec<VersionRecord>>;

    /// One version of a skill.
    async fn version(
        &self,
        skill_id: SkillId,
        version: &SkillVersion,
    ) -> Result<Option<VersionRecord>>;

    /// Skills that `visibility` sees, in (namespace, name) order after `after`, optionally in
    /// one namespace.
    async fn catalog_page(
        &self,
        namespace: Option<&Namespace>,
        after: Option<&SkillRef>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>>;

    /// A page of the web catalog: skills that `visibility` sees and `filter` keeps, in the order
    /// `recent` names ((namespace, name), or most recently published first), after `after`
    /// (which must be of that order). Keyset paging on an index in either order.
    async fn catalog_browse(
        &self,
        filter: &CatalogFilter<'_>,
        recent: bool,
        after: Option<&CatalogKey>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>>;

    /// How many skills each namespace holds per current verdict and source, and how many only
    /// pending versions: the web catalog's facet counts, read once per change of the catalog (a
    /// scan of every skill; per viewer, the registry adds up the namespaces it sees).
    async fn catalog_facets(&self) -> Result<Vec<FacetRecord>>;

    /// The catalog rows of `skills` (those `visibility` sees), in no order: what a page of
    /// search results shows of each hit.
    async fn catalog_rows(
        &self,
        skills: &[SkillRef],
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>>;

    /// Skills that `visibility` sees whose name matches `names`, in (name, namespace) order after
    /// `after`, in every namespace.
    async fn catalog_by_name(
        &self,
        names: NameMatch<'_>,
        after: Option<&SkillRef>,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<CatalogRecord>>;

    /// Up to `limit` namespaces that `visibility` sees starting with `prefix` (the exact match
    /// first, then by most recent publish), and how many there are (counted up to
    /// [`COMPLETION_COUNT_CAP`]).
    async fn complete_namespaces(
        &self,
        prefix: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<(Vec<String>, u64)>;

    /// The same for skill names, in one namespace or across all.
    async fn complete_names(
        &self,
        namespace: Option<&Namespace>,
        prefix: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<(Vec<String>, u64)>;
}

/// What happens to versions and namespaces after publishing: withdrawal, deprecation, scans
/// and their findings, the review gate, revocations and private namespaces.
#[async_trait]
pub trait Lifecycle: Send + Sync + 'static {
    /// Withdraw (`reason = Some`) a version, as a yank or a revocation, or reverse that;
    /// recompute the current version and the listing, and audit it, in one transaction. `false`
    /// when the version does not exist.
    async fn withdraw(
        &self,
        version: &VersionRef,
        kind: Withdrawal,
        reason: Option<&str>,
        actor: &str,
    ) -> Result<bool>;

    /// Deprecate (`message = Some`) or undeprecate a skill, audited. `false` when it is unknown.
    async fn set_deprecated(
        &self,
        skill: &SkillRef,
        message: Option<&str>,
        actor: &str,
    ) -> Result<bool>;

    /// Versions with their scans, by version id after `after`, of one verdict or any, in the
    /// namespaces `visibility` sees (revoked versions included: their findings are the record).
    async fn findings_page(
        &self,
        verdict: Option<Verdict>,
        after: VersionId,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<FindingsRecord>>;

    /// Every stored version by id after `after`, with its scan so far (`skillreg rescan`).
    async fn scan_targets(&self, after: VersionId, limit: u32) -> Result<Vec<ScanTarget>>;

    /// Store new scans of versions, each with an audit row saying what changed, in one
    /// transaction that bumps the generation of their skills.
    async fn set_scans(&self, changes: &[(ScanTarget, Scan)], actor: &str) -> Result<()>;

    /// Turn the review gate of `namespace` on or off (creating the namespace), audited.
    async fn set_review_required(
        &self,
        namespace: &Namespace,
        required: bool,
        actor: &str,
    ) -> Result<()>;

    /// The namespaces whose new versions wait for review.
    async fn review_namespaces(&self) -> Result<Vec<Namespace>>;

    /// Approve a pending version: it may become current; recompute the listing and audit it.
    /// `false` when no such pending version exists.
    async fn approve(&self, version: &VersionRef, actor: &str) -> Result<bool>;

    /// Revoked versions after the position `(revoked_at, version id)`, oldest first, in the
    /// namespaces `visibility` sees.
    async fn revocations(
        &self,
        after: (&str, VersionId),
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<RevocationRecord>>;

    /// Make a namespace private or public (creating it when it has no skill yet), audited.
    async fn set_private(&self, namespace: &Namespace, private: bool, actor: &str) -> Result<()>;

    /// Every private namespace.
    async fn private_namespaces(&self) -> Result<Vec<Namespace>>;
}

/// The sources `skillreg sync` reads again.
#[async_trait]
pub trait Sources: Send + Sync + 'static {
    /// Record a source feeding `namespace` (created if new), audited when it is new; an
    /// existing one (same namespace, kind, location, ref and directory) keeps its id and takes
    /// the new `fix`.
    async fn record_source(
        &self,
        namespace: &Namespace,
        spec: &SourceSpec,
        actor: &str,
    ) -> Result<SourceRecord>;

    /// Every recorded source, by id.
    async fn sources(&self) -> Result<Vec<SourceRecord>>;

    /// Forget a source, audited (its versions keep their provenance). `false` when unknown.
    async fn remove_source(&self, id: SourceId, actor: &str) -> Result<bool>;

    /// The skills a source holds, by name.
    async fn source_members(&self, id: SourceId) -> Result<Vec<SourceMember>>;

    /// The skills of `namespace` that a source holds (not removed from it), with the source.
    async fn source_claims(&self, namespace: &Namespace) -> Result<Vec<(SkillName, SourceId)>>;

    /// Record a finished read of a source: the commit it took, the skills found there (members
    /// again) and the members no longer found (marked removed).
    async fn finish_source_read(
        &self,
        id: SourceId,
        revision: Option<&str>,
        present: &[SkillName],
        removed: &[SkillName],
    ) -> Result<()>;
}

/// Tokens and the audit log.
#[async_trait]
pub trait Access: Send + Sync + 'static {
    /// Store a new token (its hash only) and audit it.
    async fn create_token(&self, token: NewToken<'_>) -> Result<TokenRecord>;

    /// Revoke a token, audited. `false` when it does not exist or was already revoked.
    async fn revoke_token(&self, id: &str, actor: &str) -> Result<bool>;

    /// The live (not revoked) token whose secret hashes to `hash`.
    async fn token_by_hash(&self, hash: &Digest) -> Result<Option<TokenRecord>>;

    /// Every token, newest first.
    async fn tokens(&self) -> Result<Vec<TokenRecord>>;

    /// Audit entries with `id > after`, oldest first.
    async fn audit_page(&self, after: i64, limit: u32) -> Result<Vec<AuditRecord>>;
}

/// Signed versions: their bundles, the registry's public keys, and each namespace's author keys
/// and signature requirement (the audited changes).
#[async_trait]
pub trait Signing: Send + Sync + 'static {
    /// Every public key the registry has signed with, oldest first.
    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>>;

    /// Record a public key the registry signs with; `false` when it was recorded already.
    async fn add_signing_key(&self, key_id: &str, public_key: &str) -> Result<bool>;

    /// The bundles kept with version `version_id`: the author's first, then the registry's.
    async fn version_signatures(&self, version_id: VersionId) -> Result<Vec<SignatureRecord>>;

    /// The author keys of `namespace` and whether it requires their signature.
    async fn namespace_signing(&self, namespace: &Namespace) -> Result<NamespaceSigning>;

    /// Register an author key of `namespace` (or a CA, or with `issuer` a keyless identity),
    /// audited; `false` when it is registered already.
    async fn add_namespace_key(
        &self,
        namespace: &Namespace,
        key_id: &str,
        identity: &str,
        public_key: &str,
        issuer: Option<&str>,
        actor: &str,
    ) -> Result<bool>;

    /// Forget an author key of `namespace`, audited; `false` when it was not registered.
    async fn remove_namespace_key(
        &self,
        namespace: &Namespace,
        key_id: &str,
        actor: &str,
    ) -> Result<bool>;

    /// Require (or stop requiring) an author's signature on new versions of `namespace`,
    /// audited.
    async fn set_signature_required(
        &self,
        namespace: &Namespace,
        required: bool,
        actor: &str,
    ) -> Result<()>;
}

/// Trusted publishing: each namespace's trusted publishers, the namespaces that accept only
/// them, and the tokens exchanged for a CI's OIDC token.
#[async_trait]
pub trait TrustedPublishing: Send + Sync + 'static {
    /// Register a trusted publisher (creating its namespace), audited; returns it as stored.
    async fn add_trusted_publisher(
        &self,
        publisher: NewPublisher<'_>,
        actor: &str,
    ) -> Result<TrustedPublisher>;

    /// The trusted publishers of `namespace`, oldest first.
    async fn trusted_publishers(&self, namespace: &Namespace) -> Result<Vec<TrustedPublisher>>;

    /// Every trusted publisher whose issuer is exactly `issuer`, in any namespace.
    async fn trusted_publishers_of(&self, issuer: &str) -> Result<Vec<TrustedPublisher>>;

    /// Remove a trusted publisher of `namespace`, audited. `false` when it has none of that id.
    async fn remove_trusted_publisher(
        &self,
        namespace: &Namespace,
        id: &str,
        actor: &str,
    ) -> Result<bool>;

    /// Make `namespace` accept versions only from its trusted publishers (and the admin), or
    /// not (creating the namespace), audited.
    async fn set_trusted_only(&self, namespace: &Namespace, only: bool, actor: &str) -> Result<()>;

    /// Whether `namespace` accepts versions only from its trusted publishers.
    async fn trusted_only(&self, namespace: &Namespace) -> Result<bool>;

    /// Store the token of an exchange, expiring `ttl_secs` from now by the database's clock, and
    /// remember the OIDC token's `jti` until it expires, audited, in one transaction. `None`
    /// (and nothing stored) when that `jti` was exchanged before.
    async fn exchange_token(&self, exchange: Exchange<'_>) -> Result<Option<TokenRecord>>;
}

/// 2025-era MCP sessions: what brings one back on a process that does not hold it (its state,
/// JSON text), and when it was last used. Ages are in seconds, by the database's clock.
#[async_trait]
pub trait Sessions: Send + Sync + 'static {
    /// Keep session `id` with `state`, created now and never used (an existing one is
    /// replaced).
    async fn put_session(&self, id: &str, state: &str) -> Result<()>;

    /// The state of session `id`, unless it is unknown or its last use (or creation) is older
    /// than `max_age_secs`.
    async fn session(&self, id: &str, max_age_secs: u64) -> Result<Option<String>>;

    /// Mark the sessions `ids` used now (those still kept); returns how many were.
    async fn touch_sessions(&self, ids: &[&str]) -> Result<u64>;

    /// Forget session `id`. `false` when it was not kept.
    async fn delete_session(&self, id: &str) -> Result<bool>;

    /// Forget session `id` if it was never marked used. `false` when it was, or is not kept.
    async fn delete_unused_session(&self, id: &str) -> Result<bool>;

    /// Forget the sessions whose last use (or creation) is older than `max_age_secs`; returns
    /// how many.
    async fn sweep_sessions(&self, max_age_secs: u64) -> Result<u64>;
}

/// How often each version was read, per UTC day and kind (`core::usage`): added to by the
/// registry's flushes, read by the stats views. Written once for both engines
/// (`store/sql/usage.rs`).
#[async_trait]
pub trait UsageCounts: Send + Sync + 'static {
    /// Add `counts` to the stored ones (a row not stored yet starts at zero), in one
    /// transaction: all of them or none.
    async fn add_usage(&self, counts: &[UsageCount]) -> Result<()>;

    /// The counts of every version of a skill from day `since` on, by day, kind and version.
    async fn skill_usage(&self, skill_id: SkillId, since: Day) -> Result<Vec<UsageRecord>>;

    /// Per-kind totals from day `since` on of each of `skills` that has any, versions pending
    /// review left out (these totals are shown to anyone who sees the skill).
    async fn usage_totals(&self, skills: &[SkillRef], since: Day) -> Result<Vec<SkillUsage>>;

    /// Per-kind totals from day `since` on of every skill, in (namespace, name) order; a skill
    /// read by nobody since has one row with no kind and a count of zero.
    async fn usage_by_skill(&self, since: Day) -> Result<Vec<SkillUsage>>;
}

/// What versions require (`core::requires`): kept by each engine's publish, in its transaction,
/// from the bundle's declaration; read whole to resolve requirements and find dependents.
/// Written once for both engines (`store/sql/requires.rs`).
#[async_trait]
pub trait Requirements: Send + Sync + 'static {
    /// Every version that is not revoked and declares requirements, with its skill and whether
    /// it is the skill's current version.
    async fn requiring_versions(&self) -> Result<Vec<RequiringVersion>>;

    /// Every skill some version requires that exists, with the versions of it that can be
    /// installed (neither yanked, revoked nor pending review), newest first, and whether its
    /// namespace is private.
    async fn required_skills(&self) -> Result<Vec<RequiredSkill>>;
}

/// Pack versions (`core::pack`): stored once each, with an audit row, never changed. Written
/// once for both engines (`store/sql/packs.rs`).
#[async_trait]
pub trait Packs: Send + Sync + 'static {
    /// Store a pack version. `Unchanged` when the same members are stored under that version
    /// already; [`StoreError::VersionExists`] when other members are.
    async fn publish_pack(
        &self,
        pack: &crate::core::pack::PackRef,
        version: &SkillVersion,
        contents: &crate::core::pack::PackContents,
        actor: &str,
    ) -> Result<PublishOutcome>;

    /// Every version of a pack, newest first.
    async fn pack_versions(&self, pack: &crate::core::pack::PackRef) -> Result<Vec<PackRecord>>;

    /// Every version of every pack (of one namespace), by pack, newest first.
    async fn packs(&self, namespace: Option<&Namespace>) -> Result<Vec<PackRecord>>;
}

/// The events feed (every change to the catalog, written in its own transaction) and the
/// webhooks that deliver it. Written once for both engines (`store/sql/events.rs`).
#[async_trait]
pub trait Events: Send + Sync + 'static {
    /// Up to `limit` events with id after `after` that `visibility` sees (a pending version's
    /// publish only where it holds the namespace), of one kind and namespace or any, oldest
    /// first; with where the feed stands.
    async fn events_page(
        &self,
        after: i64,
        limit: u32,
        kind: Option<EventKind>,
        namespace: Option<&Namespace>,
        visibility: &Visibility,
    ) -> Result<EventsPage>;

    /// Forget the events older than `before`, the deliveries queued for them and the attempts
    /// older than it; returns how many events.
    async fn prune_events(&self, before: Timestamp) -> Result<u64>;

    /// Register a webhook, delivered every event from the next one on, audited.
    async fn add_webhook(&self, new: NewWebhook<'_>) -> Result<WebhookRecord>;

    /// The webhooks of `namespace` (or of every namespace), oldest first.
    async fn webhooks(&self, namespace: Option<&Namespace>) -> Result<Vec<WebhookRecord>>;

    /// Forget a webhook of `namespace` and its queued deliveries, audited. `false` when unknown.
    async fn remove_webhook(&self, namespace: &Namespace, id: &str, actor: &str) -> Result<bool>;

    /// Make a paused webhook of `namespace` active again with no failures counted, audited
    /// (the events of its pause are not delivered). `false` when unknown.
    async fn resume_webhook(&self, namespace: &Namespace, id: &str, actor: &str) -> Result<bool>;

    /// Queue a delivery of each event not yet queued to every active webhook of its namespace
    /// whose filter it matches; returns how many.
    async fn queue_deliveries(&self) -> Result<u64>;

    /// Claim up to `limit` due deliveries of active webhooks for `lease_secs`: no other worker
    /// (of any replica) gets them until the lease ends or the attempt is recorded.
    async fn claim_deliveries(&self, limit: u32, lease_secs: u64) -> Result<Vec<Delivery>>;

    /// Record attempts, in one transaction: each done when it succeeded; else due again after
    /// its delay (or given up) and its hook's consecutive failures counted, pausing the hook at
    /// the limit. Returns the hooks these attempts paused.
    async fn finish_deliveries(&self, attempts: &[Attempt<'_>]) -> Result<Vec<String>>;
}

/// The change feed, counters, scrubbing, backups, copying a whole store (`skillreg migrate`,
/// see [`copy`]), and the connections.
#[async_trait]
pub trait Maintenance: Send + Sync + 'static {
    /// The catalog generation: bumped by every change to what a skill serves.
    async fn generation(&self) -> Result<i64>;

    /// Which catalog this is: drawn at random when the store is created, kept by copies. A
    /// search index built from one catalog is not current for another at any generation.
    async fn catalog_id(&self) -> Result<i64>;

    /// Skills changed after generation `since`, in skill id order after `after_id`.
    async fn changed_since(
        &self,
        since: i64,
        after_id: SkillId,
        limit: u32,
    ) -> Result<Vec<ChangedSkill>>;

    /// Row counts and stored bytes, kept current as rows are written: constant cost at any
    /// catalog size (anyone may scrape `/metrics`).
    async fn stats(&self) -> Result<Stats>;

    /// Scrub everything: every blob re-hashed, every row pointing at what it needs. `progress`
    /// is called after each blob.
    async fn verify(&self, progress: &(dyn Fn(u64) + Send + Sync)) -> Result<VerifyReport>;

    /// A consistent copy of the whole store at `path` (which must not exist), taken while the
    /// registry keeps serving.
    async fn backup(&self, path: &Path) -> Result<()>;

    /// Up to `limit` rows of `table` after `after`, in key order.
    async fn export_rows(&self, table: Table, after: &copy::Key, limit: u32) -> Result<Batch>;

    /// Fill this store, which must hold nothing yet, with the batches `rows` brings, in one
    /// transaction: committed when [`Batch::End`] arrives, rolled back when the channel closes
    /// before it. Returns the rows stored.
    async fn import_rows(&self, rows: tokio::sync::mpsc::Receiver<Batch>) -> Result<u64>;

    /// Connections of the pool reads use: open, and idle among them.
    fn connections(&self) -> (u32, usize);

    /// Close every connection.
    async fn close(&self);
}

/// Serialized `skills/list` entries kept with their listing rows: an engine that keeps them
/// (SQLite) offers this through [`Catalog::kept_entries`]; one that keeps none (PostgreSQL
/// reads the tables of record) has its pages built by the registry.
#[async_trait]
pub trait KeptEntries: Send + Sync + 'static {
    /// The bytes of the kept serialized entries `entries` (as listing rows name them), by
    /// position: `None` for one no longer kept (its row has changed since it was read).
    async fn serialized(&self, entries: &[EntryId]) -> Result<Vec<Option<String>>>;

    /// Make `format` the format of kept serialized entries: when the kept ones are in another
    /// (a build that serializes entries differently), drop them all.
    async fn serialized_format(&self, format: i64) -> Result<()>;

    /// Up to `limit` listing rows, in URI order, that keep no serialized entry.
    async fn unserialized(&self, limit: u32) -> Result<Vec<ListingRecord>>;

    /// Keep each serialized entry with its listing row, where the row still lists its version
    /// and keeps none yet; returns how many were kept. A body with a newline is refused.
    async fn keep_serialized(&self, entries: &[SerializedEntry]) -> Result<u64>;
}

/// File bytes, addressed by the digest of those exact bytes.
#[async_trait]
pub trait Blobs: Send + Sync + 'static {
    /// The bytes stored under `digest`, as stored (the caller verifies them).
    async fn get(&self, digest: &Digest) -> Result<Option<Vec<u8>>>;

    /// Store each `(digest, bytes)` unless a blob with that digest exists. Durable on return.
    async fn put_if_absent(&self, blobs: &[(Digest, &[u8])]) -> Result<()>;
}

/// A resolution with what the store read in the same statement
/// ([`Browse::resolve_with_manifest`]).
#[derive(Debug)]
pub struct Resolution {
    pub resolved: ResolvedVersion,
    pub manifest: Option<Manifest>,
    /// The stored bytes of the file asked for, as stored (the caller verifies them).
    pub file: Option<Vec<u8>>,
}

/// The largest file a resolution brings with it ([`Browse::resolve_with_manifest`]): a
/// `SKILL.md` and most text files, not the large binaries a read of its own is worth.
pub const INLINE_FILE_BYTES: i64 = 64 * 1024;

/// Completion totals count at most this many matches.
pub const COMPLETION_COUNT_CAP: u64 = 10_000;

/// Where a registry's data lives. Its `Debug` never shows a database URL (it may carry a
/// password).
#[derive(Clone)]
pub enum Location {
    /// The embedded engine: the SQLite database in this data directory.
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL database, by URL, and how to use it.
    Postgres(String, postgres::PgOptions),
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite(dir) => write!(f, "Sqlite({})", dir.display()),
            Self::Postgres(url, options) => write!(
                f,
                "Postgres({}, {options:?})",
                crate::config::without_secrets(url)
            ),
        }
    }
}

impl Location {
    /// The location the `data_dir` and `database_*` settings name.
    pub fn of(storage: &crate::config::Storage) -> Result<Self, crate::config::ConfigError> {
        Ok(match storage.engine()? {
            crate::config::Engine::Sqlite(dir) => Self::Sqlite(dir),
            crate::config::Engine::Postgres(url) => {
                Self::Postgres(url, postgres::PgOptions::from(storage))
            }
        })
    }
}

/// Whether `data_dir` holds a catalog of the embedded engine.
pub fn holds_catalog(data_dir: &Path) -> bool {
    data_dir.join(sqlite::DB_FILE).is_file()
}

/// Open (creating and migrating as needed) the store and its blobs at `location`.
pub async fn open(location: &Location) -> Result<Backend> {
    fn backend<S: Store + Blobs>(store: S, feed: Option<Box<dyn ChangeFeed>>) -> Backend {
        let store = std::sync::Arc::new(store);
        Backend {
            store: store.clone(),
            blobs: store,
            feed,
        }
    }
    Ok(match location {
        Location::Sqlite(dir) => backend(sqlite::SqliteStore::open(dir).await?, None),
        Location::Postgres(url, options) => {
            let store = postgres::PgStore::connect(url, options).await?;
            let feed = postgres::PgFeed::new(store.pool().clone());
            backend(store, Some(Box::new(feed)))
        }
    })
}

/// A store and its blobs, as the registry holds them.
pub struct Backend {
    pub store: std::sync::Arc<dyn Store>,
    pub blobs: std::sync::Arc<dyn Blobs>,
    /// How this process hears of changes that other processes commit, when the engine announces
    /// them (PostgreSQL). Without one, the registry's periodic generation check sees them.
    pub feed: Option<Box<dyn ChangeFeed>>,
}

/// What a [`ChangeFeed`] heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// A change committed: the generation it made, and when it was sent (Unix milliseconds, by
    /// the database's clock).
    Change { generation: i64, sent_ms: i64 },
    /// The feed (re)connected: changes may have been missed before this point, so compare
    /// generations.
    Gap,
}

/// Announcements of committed changes, from any process sharing the storage.
#[async_trait]
pub trait ChangeFeed: Send + 'static {
    /// Wait for the next announcement. After an error the next call reconnects (and then
    /// reports a [`Heard::Gap`]).
    async fn next(&mut self) -> Result<Heard>;
}
