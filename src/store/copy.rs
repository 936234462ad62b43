//! Copying a whole registry from one store to another, whatever their engines (`skillreg
//! migrate`): every row of every table, ids, times and the generation included, so that the copy
//! serves byte for byte what the source served.
//!
//! The source is read a batch at a time in key order ([`Store::export_rows`]); the target takes
//! the batches in one transaction ([`Store::import_rows`]) and commits only when the last one
//! has arrived, so a copy that fails half way leaves the target as empty as it found it. Reading
//! and writing overlap: the batches pass through a short channel.
//!
//! Each table is described once, in the `tables!` list below: its name, primary key, columns
//! with their Rust types, and the columns the target derives instead. From that come the row
//! struct, [`Table`], [`Batch`] and one SQL text per statement that serves both engines (both
//! number their `$N` parameters): the export's `SELECT`, a range of the primary key in key
//! order, and the head of the `INSERT`. The engines add only what truly differs: SQLite inserts
//! multi-row `VALUES`, PostgreSQL one array per column; SQLite fills its derived columns after
//! the rows are in. A table or column a copy should move is one entry or line in that list; a
//! store test compares the list with both engines' live schemas and fails until it is there.

pub use crate::core::records::CopyReport;
use sqlx::postgres::PgRow;
use sqlx::query_builder::Separated;
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Postgres, Sqlite};
use tokio::sync::mpsc;

use super::{Result, Store, StoreError};

/// The SQL text of one table's parts, spliced from its description at compile time.
macro_rules! sql {
    // The columns (or keys), comma-separated.
    (list $first:ident $(, $rest:ident)*) => {
        concat!(stringify!($first) $(, ", ", stringify!($rest))*)
    };
    // The parameter a key part is bound to (see [`Key`]).
    (param int) => { "$1" };
    (param text) => { "$2" };
    (param int2) => { "$4" };
    // The rows after the key: a range of the primary key, on one column or a row value.
    (after $key:ident: $part:ident) => {
        concat!(stringify!($key), " > ", sql!(param $part))
    };
    (after $first:ident: $fpart:ident $(, $key:ident: $part:ident)+) => {
        concat!(
            "(", sql!(list $first $(, $key)+), ") > (",
            sql!(param $fpart) $(, ", ", sql!(param $part))+, ")"
        )
    };
}

/// PostgreSQL's statement that lets new rows of a table keyed by an integer `id` (an identity
/// column) take ids after the copied ones; none for other keys.
macro_rules! next_id {
    ($table:literal; id: int) => {
        Some(concat!(
            "SELECT setval(pg_get_serial_sequence('",
            $table,
            "', 'id'), ",
            "coalesce(max(id), 0) + 1, false) FROM ",
            $table
        ))
    };
    ($table:literal; $($key:tt)*) => {
        None
    };
}

/// The first of its arguments: an optional part of a description, or its default.
macro_rules! first {
    ($first:expr $(, $rest:expr)*) => {
        $first
    };
}

/// Everything a copy knows of its tables, from one description per table (see the list below):
/// the row struct, [`Table`], [`Batch`], and each row type's [`CopyRow`] (the export `SELECT`,
/// the `INSERT`, and how each engine binds a row or a column).
macro_rules! tables {
    ($(
        $(#[$attr:meta])*
        $variant:ident($row:ident) in $table:literal,
        key [$($key:ident: $part:ident),+]
        $(, batch $batch:literal)?
        $(, derived [$($derived:ident),* $(,)?])?
        { $($col:ident: $ty:ty),+ $(,)? }
    )+) => {
        /// The tables, in the order a copy fills them (each after the tables its rows point
        /// at; a skill's current version is set once the versions are in).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Table {
            $($variant,)+
        }

        impl Table {
            pub const ALL: [Table; [$(Table::$variant),+].len()] = [$(Table::$variant),+];

            /// Rows per batch.
            fn batch(self) -> u32 {
                match self {
                    $(Table::$variant => first!($($batch,)? DEFAULT_BATCH),)+
                }
            }

            /// The table's name in both schemas.
            pub fn name(self) -> &'static str {
                match self {
                    $(Table::$variant => $table,)+
                }
            }

            /// The columns a copy moves.
            pub fn columns(self) -> &'static [&'static str] {
                match self {
                    $(Table::$variant => &[$(stringify!($col)),+],)+
                }
            }

            /// The columns a copy leaves out: derived from the others, the target fills them
            /// (SQLite's, in its import's `finish`).
            pub fn derived(self) -> &'static [&'static str] {
                match self {
                    $(Table::$variant => &[$($(stringify!($derived)),*)?],)+
                }
            }

            /// PostgreSQL: the statement that sets the table's id sequence past the copied
            /// ids (for a table keyed by an integer `id`).
            pub(super) fn next_id(self) -> Option<&'static str> {
                match self {
                    $(Table::$variant => next_id!($table; $($key: $part),+),)+
                }
            }

            /// The export's statement, [`CopyRow::SELECT`] of the table's rows.
            #[cfg(test)]
            pub(super) fn select(self) -> &'static str {
                match self {
                    $(Table::$variant => <$row as CopyRow>::SELECT,)+
                }
            }
        }

        $(
            $(#[$attr])*
            #[derive(Clone, PartialEq, sqlx::FromRow)]
            pub struct $row {
                $(pub $col: $ty,)+
            }

            impl CopyRow for $row {
                const SELECT: &'static str = concat!(
                    "SELECT ", sql!(list $($col),+), " FROM ", $table,
                    " WHERE ", sql!(after $($key: $part),+),
                    " ORDER BY ", sql!(list $($key),+), " LIMIT +$3"
                );
                const INSERT: &'static str =
                    concat!("INSERT INTO ", $table, " (", sql!(list $($col),+), ") ");

                fn bind_sqlite(&self, row: &mut Separated<'_, Sqlite, &'static str>) {
                    $(row.push_bind(&self.$col);)+
                }

                fn bind_postgres(
                    rows: &[Self],
                    columns: &mut Separated<'_, Postgres, &'static str>,
                ) {
                    $(columns.push_bind(rows.iter().map(|r| &r.$col).collect::<Vec<_>>());)+
                }
            }
        )+

        /// Rows of one table, in key order; or the end of a copy.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Batch {
            $($variant(Vec<$row>),)+
            /// Every row has been sent: the target records the source's generation and catalog
            /// id (a copy is the same catalog) and commits.
            End {
                generation: i64,
                catalog_id: i64,
            },
        }

        impl Batch {
            pub fn len(&self) -> usize {
                match self {
                    $(Batch::$variant(rows) => rows.len(),)+
                    Batch::End { .. } => 0,
                }
            }

            /// The key of the last row, where the next batch of its table starts.
            pub fn last_key(&self) -> Option<Key> {
                match self {
                    $(Batch::$variant(rows) => rows.last().map(|r| {
                        let mut key = Key::default();
                        $(key.$part = owned(&r.$key);)+
                        key
                    }),)+
                    Batch::End { .. } => None,
                }
            }

            /// Store the rows through `tx`.
            async fn insert_into(&self, tx: &mut impl Importer) -> Result<()> {
                match self {
                    $(Batch::$variant(rows) => tx.insert(rows).await,)+
                    Batch::End { .. } => Ok(()),
                }
            }
        }

        /// Up to `limit` rows of `table` after `after`, read from `from` (the engines'
        /// [`Store::export_rows`]).
        pub(super) async fn export(
            from: &impl Export,
            table: Table,
            after: &Key,
            limit: u32,
        ) -> Result<Batch> {
            Ok(match table {
                $(Table::$variant => Batch::$variant(from.page::<$row>(after, limit).await?),)+
            })
        }
    };
}

/// Rows per batch unless a table says otherwise.
const DEFAULT_BATCH: u32 = 2_000;

fn owned<T: Clone>(value: &T) -> T {
    value.clone()
}

// Every table a copy moves, in the order it fills them: the variant of [`Table`] and [`Batch`]
// and its row struct, the table's name, its primary key (each column with the part of [`Key`]
// that carries it), the rows per batch when not `DEFAULT_BATCH`, the columns the copy leaves out
// because the target derives them, and the columns it moves with their Rust types. A table of
// either schema that is neither here nor in `NOT_COPIED` fails a store test.
tables! {
    #[derive(Debug)]
    Namespaces(NamespaceRow) in "namespaces", key [id: int] {
        id: i64,
        name: String,
        created_at: String,
        last_published_at: Option<String>,
        private: bool,
        review_required: bool,
        signature_required: bool,
        trusted_only: bool,
    }

    /// Sent with its current version; stored without it until the versions are in.
    #[derive(Debug)]
    Skills(SkillRow) in "skills", key [id: int] {
        id: i64,
        namespace_id: i64,
        name: String,
        created_at: String,
        current_version_id: Option<i64>,
        deprecated_at: Option<String>,
        deprecation_message: Option<String>,
        updated_gen: i64,
        last_published_at: Option<String>,
    }

    /// Up to 16 MiB each: a few per batch.
    Blobs(BlobRow) in "blobs", key [digest: text], batch 16 {
        digest: String,
        size: i64,
        data: Vec<u8>,
    }

    #[derive(Debug)]
    Versions(VersionRow) in "versions", key [id: int], derived [manifest] {
        id: i64,
        skill_id: i64,
        version: String,
        content_digest: String,
        file_count: i64,
        total_size: i64,
        warnings: String,
        published_at: String,
        published_by: Option<String>,
        yanked_at: Option<String>,
        yank_reason: Option<String>,
        verdict: String,
        findings: String,
        revoked_at: Option<String>,
        revoke_reason: Option<String>,
        pending: bool,
        provenance: Option<String>,
        signatures: Option<String>,
        publisher: Option<String>,
    }

    #[derive(Debug)]
    Files(FileRow) in "version_files", key [version_id: int, path: text] {
        version_id: i64,
        path: String,
        digest: String,
        size: i64,
        mode: i64,
    }

    #[derive(Debug)]
    VersionSignatures(VersionSignatureRow) in "version_signatures",
    key [version_id: int, signer: text] {
        version_id: i64,
        signer: String,
        key_id: String,
        bundle: String,
    }

    #[derive(Debug)]
    VersionRequires(VersionRequireRow) in "version_requires",
    key [version_id: int, position: int2] {
        version_id: i64,
        position: i64,
        namespace: Option<String>,
        name: String,
        requirement: Option<String>,
    }

    #[derive(Debug)]
    PackVersions(PackVersionRow) in "pack_versions", key [id: int] {
        id: i64,
        namespace_id: i64,
        name: String,
        version: String,
        description: String,
        members: String,
        published_at: String,
        published_by: Option<String>,
    }

    #[derive(Debug)]
    SigningKeys(SigningKeyRow) in "signing_keys", key [key_id: text] {
        key_id: String,
        public_key: String,
        created_at: String,
    }

    #[derive(Debug)]
    NamespaceKeys(NamespaceKeyRow) in "namespace_keys", key [namespace_id: int, key_id: text] {
        namespace_id: i64,
        key_id: String,
        identity: String,
        public_key: String,
        created_at: String,
        issuer: Option<String>,
    }

    #[derive(Debug)]
    Entries(EntryRow) in "version_entries", key [version_id: int, subpath: text] {
        version_id: i64,
        subpath: String,
        name: String,
        description: String,
        frontmatter: String,
    }

    #[derive(Debug)]
    Listing(ListingRow) in "listing", key [uri: text],
    derived [
        name, description, namespace_id, skill, version, verdict, findings, deprecated,
        deprecation_message, entry_id, namespace, private,
    ] {
        uri: String,
        skill_id: i64,
        version_id: i64,
        subpath: String,
    }

    #[derive(Debug)]
    Tokens(TokenRow) in "tokens", key [id: text] {
        id: String,
        hash: String,
        description: String,
        namespaces: String,
        actions: String,
        created_at: String,
        revoked_at: Option<String>,
        expires_at: Option<i64>,
        publisher: Option<String>,
        claims: Option<String>,
    }

    #[derive(Debug)]
    TrustedPublishers(TrustedPublisherRow) in "trusted_publishers", key [id: text] {
        id: String,
        namespace: String,
        provider: String,
        issuer: String,
        claims: String,
        created_at: String,
    }

    /// The OIDC tokens exchanged and not yet expired: a copy refuses them again.
    #[derive(Debug)]
    OidcJtis(OidcJtiRow) in "oidc_jtis", key [jti: text] {
        jti: String,
        issuer: String,
        expires_at: i64,
    }

    #[derive(Debug)]
    Audit(AuditRow) in "audit_log", key [id: int] {
        id: i64,
        at: String,
        actor: String,
        action: String,
        namespace: Option<String>,
        name: Option<String>,
        version: Option<String>,
        details: String,
    }

    #[derive(Debug)]
    Sources(SourceRow) in "sources", key [id: int] {
        id: i64,
        namespace_id: i64,
        kind: String,
        location: String,
        reference: String,
        subpath: String,
        fix: bool,
        created_at: String,
        synced_at: Option<String>,
        revision: Option<String>,
    }

    #[derive(Debug)]
    SourceSkills(SourceSkillRow) in "source_skills", key [source_id: int, skill_id: int2] {
        source_id: i64,
        skill_id: i64,
        removed_at: Option<String>,
    }

    #[derive(Debug)]
    Usage(UsageRow) in "usage_daily", key [version_id: int, day: int2, kind: text] {
        version_id: i64,
        day: i64,
        kind: String,
        count: i64,
    }

    #[derive(Debug)]
    Events(EventRow) in "events", key [id: int] {
        id: i64,
        at: String,
        kind: String,
        namespace: String,
        name: Option<String>,
        version: Option<String>,
        pending: bool,
        payload: String,
    }

    #[derive(Debug)]
    EventHorizon(EventHorizonRow) in "event_horizon", key [one: int] {
        one: i64,
        pruned_through: i64,
    }

    #[derive(Debug)]
    Webhooks(WebhookRow) in "webhooks", key [id: text] {
        id: String,
        namespace: String,
        url: String,
        kinds: String,
        secret: String,
        created_at: String,
        created_by: String,
        queued_through: i64,
        failures: i64,
        paused_at: Option<String>,
        last_status: Option<i64>,
        last_attempt_at: Option<String>,
    }

    #[derive(Debug)]
    WebhookQueue(WebhookQueueRow) in "webhook_queue", key [hook_id: text, event_id: int2] {
        hook_id: String,
        event_id: i64,
        attempts: i64,
        due_at: i64,
        claimed_until: i64,
        claim: Option<String>,
    }

    #[derive(Debug)]
    WebhookDeliveries(WebhookDeliveryRow) in "webhook_deliveries", key [id: int] {
        id: i64,
        hook_id: String,
        event_id: i64,
        attempt: i64,
        at: String,
        status: Option<i64>,
        error: Option<String>,
    }
}

/// The tables of either schema a copy does not move: `meta` (the copy carries its generation
/// and catalog id in [`Batch::End`]; the counts follow the rows), SQLite's `listing_entries`
/// (serialized entries, derived and filled again in the background), `mcp_sessions` (2025-era
/// MCP sessions: ephemeral, they end when the idle limit passes, and a client whose session is
/// unknown opens a new one), and each engine's own migration history.
pub const NOT_COPIED: [&str; 4] = [
    "meta",
    "listing_entries",
    "mcp_sessions",
    "_sqlx_migrations",
];

/// A row of a copied table, as both engines read and write it (generated by `tables!`).
pub(super) trait CopyRow:
    Send + Sync + Unpin + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow>
{
    /// Up to `$3` rows after the key in `$1` (integer), `$2` (text) and `$4` (second
    /// integer), in key order. SQLite and PostgreSQL both number `$N` parameters; the limit is
    /// `+$3` for SQLite (see `store::sqlite`).
    const SELECT: &'static str;

    /// `INSERT INTO <table> (<columns>) `, followed by the rows: SQLite's `VALUES`,
    /// PostgreSQL's `SELECT * FROM UNNEST(<one array per column>)`.
    const INSERT: &'static str;

    /// Bind this row's values, one per column (SQLite).
    fn bind_sqlite(&self, row: &mut Separated<'_, Sqlite, &'static str>);

    /// Bind each column of `rows` as one array (PostgreSQL).
    fn bind_postgres(rows: &[Self], columns: &mut Separated<'_, Postgres, &'static str>)
    where
        Self: Sized;
}

/// One engine's side of an export: a page of rows with [`CopyRow::SELECT`].
#[async_trait::async_trait]
pub(super) trait Export: Sync {
    async fn page<R: CopyRow>(&self, after: &Key, limit: u32) -> Result<Vec<R>>;
}

/// Where a table's export continues: after this key (an integer id, a text key, both for the
/// tables keyed by version and path, two integers for `source_skills`, all three for
/// `usage_daily`'s version, day and kind). The start is
/// `Key::default()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Key {
    pub int: i64,
    pub text: String,
    /// The second integer of a key of two.
    pub int2: i64,
}

impl std::fmt::Debug for BlobRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlobRow({}, {} bytes)", self.digest, self.size)
    }
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Blob bytes in this batch.
    fn bytes(&self) -> u64 {
        match self {
            Batch::Blobs(r) => r.iter().map(|b| b.data.len() as u64).sum(),
            _ => 0,
        }
    }
}

/// Batches in flight between the reader and the writer.
const IN_FLIGHT: usize = 4;

/// Copy every row of `from` into `to`, which must hold nothing yet (no namespace, token, audit
/// entry or blob), in one transaction of `to`. `progress` is called with the rows copied so far.
///
/// The source must not change meanwhile (stop the servers that write to it): a copy whose
/// source generation moved is rolled back and fails, rather than leaving a copy of no single
/// moment.
pub async fn copy(
    from: &dyn Store,
    to: &dyn Store,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<CopyReport> {
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    let import = to.import_rows(rx);
    let export = async move {
        let generation = from.generation().await?;
        let catalog_id = from.catalog_id().await?;
        let mut report = CopyReport {
            generation,
            ..CopyReport::default()
        };
        for table in Table::ALL {
            let mut after = Key::default();
            loop {
                let batch = from.export_rows(table, &after, table.batch()).await?;
                let Some(last) = batch.last_key() else { break };
                after = last;
                report.rows += batch.len() as u64;
                report.blob_bytes += batch.bytes();
                if tx.send(batch).await.is_err() {
                    // The import ended early: its error is the one to report.
                    return Ok(report);
                }
                progress(report.rows);
            }
        }
        let now = from.generation().await?;
        if now != generation {
            return Err(StoreError::Unsupported(format!(
                "the source changed during the copy (generation {generation}, now {now}): \
                 stop every server that writes to it, then copy again"
            )));
        }
        // Dropping `tx` without an End rolls the import back; sending it commits.
        let _ = tx
            .send(Batch::End {
                generation,
                catalog_id,
            })
            .await;
        Ok(report)
    };
    let (report, imported) = match tokio::join!(export, import) {
        (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
        (Ok(report), Ok(imported)) => (report, imported),
    };
    if imported != report.rows {
        return Err(StoreError::Corrupt(format!(
            "the copy sent {} rows and stored {imported}",
            report.rows
        )));
    }
    Ok(report)
}

/// One engine's side of an import: a write transaction that takes batches, then commits.
/// Dropped before [`Importer::finish`], it rolls back.
#[async_trait::async_trait]
pub(super) trait Importer: Send {
    /// Whether the store holds nothing a copy could collide with.
    async fn is_empty(&mut self) -> Result<bool>;

    /// Store rows of one table, all columns of [`CopyRow`] (skills without their current
    /// version: see `set_current`).
    async fn insert<R: CopyRow>(&mut self, rows: &[R]) -> Result<()>;

    /// Point each skill `(id, version id)` at its current version (once the versions are in).
    async fn set_current(&mut self, current: &[(i64, i64)]) -> Result<()>;

    /// Record the generation and the catalog id, let new ids follow the copied ones, and commit.
    async fn finish(self, generation: i64, catalog_id: i64) -> Result<()>;
}

/// Take `rows` into `tx` (the engines' [`Store::import_rows`]): refuse a store that holds
/// anything, commit at [`Batch::End`], roll back when the sender goes away first.
pub(super) async fn import(mut tx: impl Importer, mut rows: mpsc::Receiver<Batch>) -> Result<u64> {
    if !tx.is_empty().await? {
        return Err(StoreError::Unsupported(
            "the target already holds a registry (namespaces, tokens, audit entries or blobs): \
             a copy goes into an empty one only"
                .to_owned(),
        ));
    }
    let mut stored = 0u64;
    let mut current = Vec::new();
    while let Some(mut batch) = rows.recv().await {
        match &mut batch {
            Batch::End {
                generation,
                catalog_id,
            } => {
                tx.set_current(&current).await?;
                tx.finish(*generation, *catalog_id).await?;
                return Ok(stored);
            }
            // Set once the versions it points at are in.
            Batch::Skills(skills) => current.extend(
                skills
                    .iter_mut()
                    .filter_map(|s| Some((s.id, s.current_version_id.take()?))),
            ),
            _ => {}
        }
        stored += batch.len() as u64;
        batch.insert_into(&mut tx).await?;
    }
    Err(StoreError::Unsupported(
        "the copy stopped before its last batch: nothing was stored".to_owned(),
    ))
}
