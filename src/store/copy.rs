//! Copying a whole registry from one store to another, whatever their engines (`skillreg
//! migrate`): every row of every table, ids, times and the generation included, so that the copy
//! serves byte for byte what the source served.
//!
//! The source is read a batch at a time in key order ([`Store::export_rows`]); the target takes
//! the batches in one transaction ([`Store::import_rows`]) and commits only when the last one
//! has arrived, so a copy that fails half way leaves the target as empty as it found it. Reading
//! and writing overlap: the batches pass through a short channel.

use tokio::sync::mpsc;

use super::{Result, Store, StoreError};

/// The tables, in the order a copy fills them (each after the tables its rows point at; a
/// skill's current version is set once the versions are in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Namespaces,
    Skills,
    Blobs,
    Versions,
    Files,
    Entries,
    Listing,
    Tokens,
    Audit,
    Sources,
    SourceSkills,
}

impl Table {
    pub const ALL: [Table; 11] = [
        Table::Namespaces,
        Table::Skills,
        Table::Blobs,
        Table::Versions,
        Table::Files,
        Table::Entries,
        Table::Listing,
        Table::Tokens,
        Table::Audit,
        Table::Sources,
        Table::SourceSkills,
    ];

    /// Rows per batch: blobs are up to 16 MiB each, every other row is small.
    fn batch(self) -> u32 {
        match self {
            Table::Blobs => 16,
            _ => 2_000,
        }
    }
}

/// Where a table's export continues: after this key (an integer id, a text key, both for the
/// tables keyed by version and path, or two integers for `source_skills`). The start is
/// `Key::default()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Key {
    pub int: i64,
    pub text: String,
    /// The second integer of a key of two.
    pub int2: i64,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct NamespaceRow {
    pub id: i64,
    pub name: String,
    pub created_at: String,
    pub last_published_at: Option<String>,
    pub private: bool,
    pub review_required: bool,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SkillRow {
    pub id: i64,
    pub namespace_id: i64,
    pub name: String,
    pub created_at: String,
    pub current_version_id: Option<i64>,
    pub deprecated_at: Option<String>,
    pub deprecation_message: Option<String>,
    pub updated_gen: i64,
    pub last_published_at: Option<String>,
}

#[derive(Clone, PartialEq, sqlx::FromRow)]
pub struct BlobRow {
    pub digest: String,
    pub size: i64,
    pub data: Vec<u8>,
}

impl std::fmt::Debug for BlobRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlobRow({}, {} bytes)", self.digest, self.size)
    }
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct VersionRow {
    pub id: i64,
    pub skill_id: i64,
    pub version: String,
    pub content_digest: String,
    pub file_count: i64,
    pub total_size: i64,
    pub warnings: String,
    pub published_at: String,
    pub published_by: Option<String>,
    pub yanked_at: Option<String>,
    pub yank_reason: Option<String>,
    pub verdict: String,
    pub findings: String,
    pub revoked_at: Option<String>,
    pub revoke_reason: Option<String>,
    pub pending: bool,
    pub provenance: Option<String>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct FileRow {
    pub version_id: i64,
    pub path: String,
    pub digest: String,
    pub size: i64,
    pub mode: i64,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct EntryRow {
    pub version_id: i64,
    pub subpath: String,
    pub name: String,
    pub description: String,
    pub frontmatter: String,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ListingRow {
    pub uri: String,
    pub skill_id: i64,
    pub version_id: i64,
    pub subpath: String,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct TokenRow {
    pub id: String,
    pub hash: String,
    pub description: String,
    pub namespaces: String,
    pub actions: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct AuditRow {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub action: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub details: String,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SourceRow {
    pub id: i64,
    pub namespace_id: i64,
    pub kind: String,
    pub location: String,
    pub reference: String,
    pub subpath: String,
    pub fix: bool,
    pub created_at: String,
    pub synced_at: Option<String>,
    pub revision: Option<String>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SourceSkillRow {
    pub source_id: i64,
    pub skill_id: i64,
    pub removed_at: Option<String>,
}

/// Rows of one table, in key order; or the end of a copy.
#[derive(Debug, Clone, PartialEq)]
pub enum Batch {
    Namespaces(Vec<NamespaceRow>),
    Skills(Vec<SkillRow>),
    Blobs(Vec<BlobRow>),
    Versions(Vec<VersionRow>),
    Files(Vec<FileRow>),
    Entries(Vec<EntryRow>),
    Listing(Vec<ListingRow>),
    Tokens(Vec<TokenRow>),
    Audit(Vec<AuditRow>),
    Sources(Vec<SourceRow>),
    SourceSkills(Vec<SourceSkillRow>),
    /// Every row has been sent: the target records the source's generation and catalog id (a
    /// copy is the same catalog) and commits.
    End {
        generation: i64,
        catalog_id: i64,
    },
}

impl Batch {
    pub fn len(&self) -> usize {
        match self {
            Batch::Namespaces(r) => r.len(),
            Batch::Skills(r) => r.len(),
            Batch::Blobs(r) => r.len(),
            Batch::Versions(r) => r.len(),
            Batch::Files(r) => r.len(),
            Batch::Entries(r) => r.len(),
            Batch::Listing(r) => r.len(),
            Batch::Tokens(r) => r.len(),
            Batch::Audit(r) => r.len(),
            Batch::Sources(r) => r.len(),
            Batch::SourceSkills(r) => r.len(),
            Batch::End { .. } => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key of the last row, where the next batch of its table starts.
    pub fn last_key(&self) -> Option<Key> {
        let int = |int: i64| Key {
            int,
            ..Key::default()
        };
        let text = |text: &str| Key {
            text: text.to_owned(),
            ..Key::default()
        };
        Some(match self {
            Batch::Namespaces(r) => int(r.last()?.id),
            Batch::Skills(r) => int(r.last()?.id),
            Batch::Blobs(r) => text(&r.last()?.digest),
            Batch::Versions(r) => int(r.last()?.id),
            Batch::Files(r) => r.last().map(|f| Key {
                int: f.version_id,
                text: f.path.clone(),
                int2: 0,
            })?,
            Batch::Entries(r) => r.last().map(|e| Key {
                int: e.version_id,
                text: e.subpath.clone(),
                int2: 0,
            })?,
            Batch::Listing(r) => text(&r.last()?.uri),
            Batch::Tokens(r) => text(&r.last()?.id),
            Batch::Audit(r) => int(r.last()?.id),
            Batch::Sources(r) => int(r.last()?.id),
            Batch::SourceSkills(r) => r.last().map(|m| Key {
                int: m.source_id,
                int2: m.skill_id,
                ..Key::default()
            })?,
            Batch::End { .. } => return None,
        })
    }

    /// Blob bytes in this batch.
    fn bytes(&self) -> u64 {
        match self {
            Batch::Blobs(r) => r.iter().map(|b| b.data.len() as u64).sum(),
            _ => 0,
        }
    }
}

/// What a copy moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CopyReport {
    /// Rows copied, all tables together.
    pub rows: u64,
    /// Bytes of blobs copied.
    pub blob_bytes: u64,
    /// The generation the copy reflects (the source's, unchanged during the copy).
    pub generation: i64,
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

    /// Store a batch of rows (skills without their current version: see `set_current`).
    async fn insert(&mut self, batch: Batch) -> Result<()>;

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
    while let Some(batch) = rows.recv().await {
        match &batch {
            Batch::End {
                generation,
                catalog_id,
            } => {
                tx.set_current(&current).await?;
                tx.finish(*generation, *catalog_id).await?;
                return Ok(stored);
            }
            Batch::Skills(skills) => current.extend(
                skills
                    .iter()
                    .filter_map(|s| Some((s.id, s.current_version_id?))),
            ),
            _ => {}
        }
        stored += batch.len() as u64;
        tx.insert(batch).await?;
    }
    Err(StoreError::Unsupported(
        "the copy stopped before its last batch: nothing was stored".to_owned(),
    ))
}
