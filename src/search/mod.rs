//! Full-text search over the catalog (tantivy, BM25). Derived data: rebuilt from SQLite at any
//! time, kept current by one writer task, and marked with the catalog generation it reflects
//! (the commit payload) so startup knows whether it is stale.
//!
//! This module knows nothing of SQLite or transports: the registry feeds it [`SearchDoc`]s.

mod schema;
pub mod snapshot;
mod stats;
mod top_k;

pub use stats::StatisticsScope;

use std::path::Path;
use std::sync::Mutex;

use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::schema::Value;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use schema::Fields;

/// Writer heap budget (tantivy needs at least ~15 MB).
const WRITER_HEAP_BYTES: usize = 64 * 1024 * 1024;
/// Up to this many documents, every update is followed by a merge into one segment, so replaced
/// documents stop counting in term statistics at once and scores equal a fresh rebuild's. Larger
/// indexes leave it to tantivy's merge policy.
const COMPACT_BELOW_DOCS: u64 = 50_000;
/// Most hits one query returns.
pub const MAX_LIMIT: usize = 50;
/// Most candidates one query ranks when some namespaces are hidden from the caller: past this,
/// a caller who sees few of the matching skills may get fewer than `limit` hits.
const MAX_FILTERED_WINDOW: usize = 16_384;

/// Which namespaces a search may return, by name.
pub type NamespaceFilter<'a> = dyn Fn(&str) -> bool + Sync + 'a;
/// The fields a query searches and their boosts: a word in a skill's name counts three times as
/// much as in its body.
pub const SEARCHED_FIELDS: [(&str, f32); 5] = [
    ("name_text", 3.0),
    ("description", 2.0),
    ("namespace_text", 1.5),
    ("body", 1.0),
    ("paths", 0.5),
];

pub use crate::core::Status;

/// One skill as the index sees it.
#[derive(Debug, Clone)]
pub struct SearchDoc {
    pub namespace: String,
    pub name: String,
    pub uri: String,
    pub version: String,
    pub description: String,
    /// The SKILL.md body (frontmatter excluded).
    pub body: String,
    /// Every file path of the skill, space-separated.
    pub paths: String,
    pub status: Status,
    pub deprecation: Option<String>,
}

/// One ranked result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hit {
    pub uri: String,
    pub namespace: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub score: f32,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("search index: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("search index directory: {0}")]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    #[error("search index: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "the search index is owned by another process (is a server running on this data directory?)"
    )]
    ReadOnly,
    #[error("search task failed: {0}")]
    Task(String),
}

/// The on-disk index and a reader; the writer when this process owns the index (behind a mutex:
/// only the indexer task writes).
pub struct SearchIndex {
    index: Index,
    fields: Fields,
    reader: IndexReader,
    /// `None` when another process owns the index, or after [`SearchIndex::release_writer`].
    writer: Mutex<Option<IndexWriter>>,
    /// Whether this process owned the writer when it opened the index.
    owner: bool,
    /// The directory it lives in (`None` in memory).
    dir: Option<std::path::PathBuf>,
}

/// What an index commit records (its payload, `GENERATION CATALOG`): the catalog generation
/// the documents reflect, and which catalog they come from (absent in indexes written before
/// catalogs had ids, and after [`SearchIndex::clear`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    pub generation: u64,
    pub catalog: Option<i64>,
}

impl Mark {
    fn parse(payload: Option<&str>) -> Self {
        let mut words = payload.unwrap_or_default().split(' ');
        Self {
            generation: words.next().and_then(|g| g.parse().ok()).unwrap_or(0),
            catalog: words.next().and_then(|c| c.parse().ok()),
        }
    }

    fn payload(&self) -> String {
        match self.catalog {
            Some(catalog) => format!("{} {catalog}", self.generation),
            None => self.generation.to_string(),
        }
    }
}

/// How one [`SearchIndex::apply`] relates to the index.
#[derive(Debug, Clone, Copy)]
pub struct Update {
    /// None of the documents is in the index yet (a load into an empty index): skip the deletes.
    pub fresh: bool,
    /// The last commit of a catch-up: compact a small, fragmented index afterwards.
    pub last: bool,
}

impl SearchIndex {
    /// Open or create the index in `dir`. When another process holds the writer lock (a second
    /// `serve --stdio` on the same data directory), open it read-only: it still searches, and sees
    /// the owner's commits.
    pub fn open(dir: &Path) -> Result<Self, SearchError> {
        private_dir(dir)?;
        if !dir_writable(dir) {
            // Read-only storage: tantivy's readers need lock files, so index into memory instead
            // (the indexer rebuilds it from SQLite at startup).
            tracing::warn!(dir = %dir.display(), "search index directory is read-only: indexing in memory");
            return Self::in_memory();
        }
        let (schema, fields) = schema::build();
        let directory = MmapDirectory::open(dir)?;
        let mut index = match Index::open_or_create(directory, schema.clone()) {
            Ok(index) if index.schema() == schema => index,
            // A schema from another build: start over; it is derived data.
            _ => {
                std::fs::remove_dir_all(dir)?;
                private_dir(dir)?;
                Index::create_in_dir(dir, schema)?
            }
        };
        schema::register_tokenizers(&index);
        search_in_parallel(&mut index)?;
        let writer = match index.writer(WRITER_HEAP_BYTES) {
            Ok(w) => Some(w),
            // Another process owns the index, or the directory is read-only: search read-only.
            Err(tantivy::TantivyError::LockFailure(..)) => None,
            Err(e) if !dir_writable(dir) => {
                tracing::warn!(error = %e, "search index directory is read-only");
                None
            }
            Err(e) => return Err(e.into()),
        };
        // The owner reloads after its own commits; a second process follows the owner's commits;
        // on read-only storage nothing changes (and watching would need a lock file).
        let policy = if writer.is_none() && dir_writable(dir) {
            ReloadPolicy::OnCommitWithDelay
        } else {
            ReloadPolicy::Manual
        };
        let reader = index.reader_builder().reload_policy(policy).try_into()?;
        Ok(Self {
            index,
            fields,
            reader,
            owner: writer.is_some(),
            writer: Mutex::new(writer),
            dir: Some(dir.to_path_buf()),
        })
    }

    /// An index held in memory only.
    pub fn in_memory() -> Result<Self, SearchError> {
        let (schema, fields) = schema::build();
        let index = Index::create_in_ram(schema);
        let writer = index.writer(WRITER_HEAP_BYTES)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            index,
            fields,
            reader,
            owner: true,
            writer: Mutex::new(Some(writer)),
            dir: None,
        })
    }

    /// Whether this process owns the index (and must keep it current).
    pub fn is_writable(&self) -> bool {
        self.owner
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, Option<IndexWriter>> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Give up the writer (waiting for merges in flight), then write the index to `to` as a
    /// [`snapshot`]. Returns the bytes written.
    pub fn write_snapshot(&self, to: &Path) -> Result<u64, SearchError> {
        let Some(dir) = &self.dir else {
            return Err(SearchError::ReadOnly);
        };
        self.release_writer();
        snapshot::write(dir, to)
    }

    /// Give up the writer (and the directory's lock), waiting for merges in flight, so that
    /// another process can own the index. Searching keeps working.
    pub fn release_writer(&self) {
        let writer = self.writer().take();
        if let Some(writer) = writer
            && let Err(e) = writer.wait_merging_threads()
        {
            tracing::warn!(error = %e, "search index merges did not finish");
        }
    }

    /// The generation the index reflects, when its metadata reads back (a cheap check: no
    /// query runs).
    pub fn healthy(&self) -> Result<u64, SearchError> {
        let metas = self.index.load_metas()?;
        Ok(Mark::parse(metas.payload.as_deref()).generation)
    }

    /// What the last commit recorded (generation 0 for a new index).
    pub fn mark(&self) -> Mark {
        Mark::parse(
            self.index
                .load_metas()
                .ok()
                .and_then(|m| m.payload)
                .as_deref(),
        )
    }

    /// The catalog generation the last commit reflects (0 for a new index).
    pub fn generation(&self) -> u64 {
        self.mark().generation
    }

    /// Replace these skills' documents and record `mark`, in one commit.
    ///
    /// `update` is how the documents relate to the index: during a bulk load into an empty
    /// index nothing needs deleting first, and only the last commit compacts small indexes.
    pub fn apply(
        &self,
        docs: &[SearchDoc],
        removed: &[(String, String)],
        mark: Mark,
        update: Update,
    ) -> Result<(), SearchError> {
        let mut guard = self.writer();
        let writer = guard.as_mut().ok_or(SearchError::ReadOnly)?;
        for doc in docs {
            if !update.fresh {
                writer.delete_term(Term::from_field_text(
                    self.fields.key,
                    &key(&doc.namespace, &doc.name),
                ));
            }
            writer.add_document(self.fields.document(doc))?;
        }
        for (ns, name) in removed {
            writer.delete_term(Term::from_field_text(self.fields.key, &key(ns, name)));
        }
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&mark.payload());
        commit.commit()?;
        self.reader.reload()?;
        let searcher = self.reader.searcher();
        let fragmented = searcher.segment_readers().len() > 1
            || searcher
                .segment_readers()
                .iter()
                .any(|s| s.num_deleted_docs() > 0);
        if update.last && fragmented && searcher.num_docs() <= COMPACT_BELOW_DOCS {
            let segments = self.index.searchable_segment_ids()?;
            writer.merge(&segments).wait()?;
            self.reader.reload()?;
        }
        Ok(())
    }

    /// Remove every document (before a full rebuild). Uncommitted work is dropped first: after a
    /// failed update (a full disk) the writer may hold a half-applied batch.
    pub fn clear(&self) -> Result<(), SearchError> {
        let mut guard = self.writer();
        let writer = guard.as_mut().ok_or(SearchError::ReadOnly)?;
        writer.rollback()?;
        writer.delete_all_documents()?;
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&Mark::default().payload());
        commit.commit()?;
        drop(guard);
        self.reader.reload()?;
        Ok(())
    }

    /// Number of indexed skills.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The documents of the last commit, with the generation it recorded; `None` when a commit
    /// landed while counting (the index is owned by another process that is writing).
    pub fn committed_len(&self) -> Option<(u64, u64)> {
        let before = self.generation();
        self.reader.reload().ok()?;
        let docs = self.reader.searcher().num_docs();
        (self.generation() == before).then_some((before, docs))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every indexed skill, ordered by URI (for checks and diagnostics).
    pub fn all(&self) -> Result<Vec<Hit>, SearchError> {
        let searcher = self.reader.searcher();
        let n = (searcher.num_docs() as usize).max(1);
        let docs = searcher.search(
            &tantivy::query::AllQuery,
            &TopDocs::with_limit(n).order_by_score(),
        )?;
        let mut hits = Vec::with_capacity(docs.len());
        for (_, address) in docs {
            let doc: TantivyDocument = searcher.doc(address)?;
            hits.push(self.fields.hit(&doc, 0.0));
        }
        hits.sort_by(|a, b| a.uri.cmp(&b.uri));
        Ok(hits)
    }

    /// Rank skills for `query` (any text: syntax errors never fail the search). Active skills
    /// come first, then deprecated, then yanked-only; BM25 order within each. With `visible`,
    /// only skills of the namespaces it accepts are ranked (the others are skipped, never
    /// counted), so a caller is never shown, or told of, a skill it may not see. With
    /// `statistics`, scores are weighted with the BM25 statistics of only the namespaces it
    /// counts (those the caller sees), so no score depends on a hidden skill.
    pub fn search(
        &self,
        query: &str,
        namespace: Option<&str>,
        limit: usize,
        visible: Option<&NamespaceFilter<'_>>,
        statistics: Option<&StatisticsScope>,
    ) -> Result<Vec<Hit>, SearchError> {
        let limit = limit.clamp(1, MAX_LIMIT);
        let clauses = self.clauses(query);
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let filter = namespace.map(|ns| Term::from_field_text(self.fields.namespace, ns));
        let searcher = self.reader.searcher();
        let scoped = statistics
            .map(|scope| stats::ScopedStatistics::new(&searcher, self.fields.namespace, scope))
            .transpose()?;
        let counted: &dyn tantivy::query::Bm25StatisticsProvider = match &scoped {
            Some(scoped) => scoped,
            None => &searcher,
        };
        // Demoted (deprecated, yanked) skills go below active ones. When the best `limit` hits
        // are all active they are the answer; otherwise over-fetch and re-rank. A small window
        // keeps the pruning threshold high, which is what makes a query over a large catalog
        // cheap. Status comes from a fast-field column; only the final hits' documents are read.
        // Hidden skills need wider windows: they are dropped before ranking.
        let windows: &[usize] = if visible.is_some() {
            &[limit * 4 + 16, 256, 2048, MAX_FILTERED_WINDOW]
        } else {
            &[limit, limit * 4 + 16]
        };
        let mut ranked = Vec::new();
        let mut namespace = String::new();
        for &window in windows {
            let candidates = top_k::top_k(
                &searcher,
                counted,
                self.index.search_executor(),
                &clauses,
                filter.as_ref(),
                window,
            )?;
            let exhausted = candidates.len() < window;
            ranked.clear();
            for (score, address) in candidates {
                let fast = searcher.segment_reader(address.segment_ord).fast_fields();
                if let Some(visible) = visible {
                    let column = fast.str("namespace")?;
                    let ord = column
                        .as_ref()
                        .and_then(|c| c.term_ords(address.doc_id).next());
                    namespace.clear();
                    if let (Some(column), Some(ord)) = (&column, ord) {
                        column.ord_to_str(ord, &mut namespace)?;
                    }
                    if !visible(&namespace) {
                        continue;
                    }
                }
                let status = fast.u64("status")?.first(address.doc_id).unwrap_or(0);
                ranked.push((status, score, address));
            }
            if exhausted
                || (ranked.len() >= limit
                    && ranked
                        .iter()
                        .take(limit)
                        .all(|(status, ..)| *status == Status::Active as u64))
            {
                break;
            }
        }
        ranked.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        ranked.truncate(limit);
        let mut hits = Vec::with_capacity(ranked.len());
        for (_, score, address) in ranked {
            let doc: TantivyDocument = searcher.doc(address)?;
            hits.push(self.fields.hit(&doc, score));
        }
        Ok(hits)
    }
}

/// Create the index directory, or keep it, readable by its owner only: the index holds the text
/// of private skills. (tantivy creates its files with the default mode; the directory's keeps
/// everyone else out of them.) A directory this process may not change keeps its mode.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    if !dir.exists() {
        return std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 != 0
        && let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    {
        tracing::warn!(dir = %dir.display(), error = %e, "the search index directory is readable by others");
    }
    Ok(())
}

impl SearchIndex {
    /// The words of `text` (analysed like the indexed text), each searched in every text field
    /// with that field's boost: BM25 summed over every field and word, as a query parser's
    /// nested OR-of-ORs scores it. Empty when no word is left.
    fn clauses(&self, text: &str) -> Vec<top_k::Clause> {
        let Ok(mut analyzer) = self.index.tokenizer_for_field(self.fields.body) else {
            return Vec::new();
        };
        let mut words: Vec<String> = Vec::new();
        let text = sanitize(text);
        let mut stream = analyzer.token_stream(&text);
        while let Some(token) = stream.next() {
            if !words.contains(&token.text) {
                words.push(token.text.clone());
            }
        }
        let mut clauses = Vec::with_capacity(self.fields.searched.len() * words.len());
        for (field, boost) in self.fields.searched {
            for word in &words {
                clauses.push(top_k::Clause {
                    term: Term::from_field_text(field, word),
                    boost,
                });
            }
        }
        clauses
    }
}

/// How many threads search one query: the cores this process may use, at most four.
pub fn search_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// Give the index a pool of search threads: a query over a large catalog is split into document
/// ranges searched side by side (see `top_k`), so its latency roughly halves on two cores.
fn search_in_parallel(index: &mut Index) -> Result<(), SearchError> {
    let threads = search_threads();
    if threads > 1 {
        index.set_multithread_executor(threads)?;
    }
    Ok(())
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Keep the words, drop the query syntax: users type plain text, and operators like `-`, `*`,
/// unbalanced quotes or `field:` prefixes should neither fail nor change the meaning.
fn sanitize(query: &str) -> String {
    query
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .take(64)
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn text_of(doc: &TantivyDocument, field: tantivy::schema::Field) -> String {
    doc.get_first(field)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

fn dir_writable(dir: &Path) -> bool {
    let probe = dir.join(".skillreg-write-probe");
    let ok = std::fs::File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}
