//! Skill entries serialized once and kept by the store, so that a `skills/list` page of a large
//! catalog is a range of listing rows, a lookup of their kept bytes and a concatenation.
//!
//! What a current entry says of its version never changes, but its wire shape is the transport's
//! business, not the registry's. So the transport that serves pages registers an [`EntryCodec`]
//! ([`Reads::keep_entries`]); the registry has it serialize each listing row's entry in the
//! background ([`Reads::serialize_entries`], run by the indexer task) and hands the store the
//! bytes to keep with the row ([`Store::keep_serialized`]). The store treats them as opaque and
//! drops them with the row. A page ([`Reads::list_entries`]) takes each entry's bytes from a
//! bounded cache, else from the store's kept bytes, else serializes the entry now (a new row, or
//! one the fill has not reached): all three give the same bytes. A catalog that fits the cache
//! is then served from memory, and a page deep in a large one reads its kept bytes in one lookup
//! instead of decoding and serializing its manifests: by the entry id each row named when the
//! page read it, which names those bytes and no others, ever (a row changed since has nothing
//! under its old id, and its entry is built).
//!
//! An engine may keep none (PostgreSQL): every entry is then serialized when first listed, and
//! cached.
//!
//! [`Store::keep_serialized`]: crate::store::Store::keep_serialized

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use super::skills::listed_entry;
use super::{Reads, SkillEntry};
use crate::core::Visibility;
use crate::core::scan::Summary;
use crate::error::Result;
use crate::registry::cache::{self, Budget, Cache, CacheId};
use crate::registry::page::Page;
use crate::registry::requires::Resolved;
use crate::store::VersionId;
use crate::store::{EntryId, ListingRecord, SerializedEntry};

/// Listing rows serialized per batch (one transaction each).
const FILL_BATCH: u32 = 500;
/// Batches per run of the fill: the indexer task comes back at once while rows remain, and
/// keeps the search index current in between.
const FILL_BATCHES_PER_RUN: usize = 20;

/// How a transport serializes the part of a current skill entry that is its version's own.
pub trait EntryCodec: Send + Sync + 'static {
    /// Changes whenever [`EntryCodec::serialize`] would write other bytes for some entry: kept
    /// entries in another format are dropped and serialized again.
    fn format(&self) -> i64;

    /// The entry's own part (everything but what varies per moment: deprecation, yank, the
    /// scan), as one line of JSON text: no newline.
    fn serialize(&self, entry: &SkillEntry) -> String;
}

/// One entry of a `skills/list` page: serialized by the registered codec (now, or once and
/// kept), or built, when no codec is registered.
pub enum Listed {
    Kept {
        /// What the registered [`EntryCodec`] wrote for the entry.
        own: Arc<str>,
        /// The deprecation message when the skill is deprecated.
        deprecation: Option<String>,
        /// The version's scan verdict and findings per severity.
        scan: Summary,
        /// What the version requires, resolved now (root entries that require something).
        requires: Option<Arc<Resolved>>,
    },
    Built(Box<SkillEntry>),
}

/// The registered codec, and whether the store's kept entries are known to be in its format.
pub(super) struct Codec {
    codec: std::sync::OnceLock<Arc<dyn EntryCodec>>,
    state: AtomicU8,
    /// The entries served lately, by version and subpath, as the codec wrote them: never
    /// invalidated, since a version's entry is the same bytes for as long as the version exists.
    /// The only cache of these bytes (the transport keeps none of its own).
    cache: Cache<(VersionId, String), Arc<str>>,
    /// Entries kept since the fill last found rows waiting, and when it did (for its log).
    fill: std::sync::Mutex<Option<(u64, std::time::Instant)>>,
}

impl Codec {
    pub(super) fn new(budget: &Budget) -> Self {
        Self {
            codec: Default::default(),
            state: AtomicU8::new(UNCHECKED),
            cache: budget.cache(CacheId::Entries, |(_, subpath), b| {
                cache::string_bytes(subpath) + cache::arc_bytes(b.len())
            }),
            fill: Default::default(),
        }
    }
}

/// The store's kept entries may be in another format: not read until the fill has checked.
const UNCHECKED: u8 = 0;
/// The store's kept entries are in the codec's format.
const CHECKED: u8 = 1;
/// Storage cannot keep entries (read-only): pages are built.
const OFF: u8 = 2;

impl Codec {
    /// The codec, once the store's kept entries are in its format.
    fn ready(&self) -> bool {
        self.state.load(Ordering::Acquire) == CHECKED
    }

    /// Count `kept` entries towards the fill under way. A fill longer than one batch (after a
    /// migration, or a codec format change) is logged when it starts and when it is `done`, so
    /// an operator sees why pages are built meanwhile; the entry or two a publish adds are not.
    fn filled(&self, kept: u64, done: bool) {
        let mut fill = self.fill.lock().unwrap_or_else(|e| e.into_inner());
        if done && fill.is_none() {
            return;
        }
        let (total, began) = fill.get_or_insert_with(|| {
            tracing::info!("serializing the listing's skills/list entries, in the background");
            (0, std::time::Instant::now())
        });
        *total += kept;
        if done {
            tracing::info!(
                entries = *total,
                seconds = began.elapsed().as_secs_f64(),
                "skills/list entries serialized and kept"
            );
            *fill = None;
        }
    }
}

impl Reads {
    /// Have `codec` serialize each current entry once, for the store to keep: from now on a
    /// page reads the kept bytes of every row that has them. A second codec is ignored (there is
    /// one wire shape per process).
    pub fn keep_entries(&self, codec: Arc<dyn EntryCodec>) {
        if self.codec.codec.set(codec).is_err() {
            tracing::debug!("an entry codec is registered already: keeping the first");
        }
        self.current.wake_indexer();
    }

    /// One page of the current entries `viewer` sees. With a codec, each entry's own part comes
    /// from the cache, else from the store's kept bytes, else is built from its manifest and
    /// serialized now; without one, every entry is built.
    pub async fn list_entries(
        &self,
        viewer: &Visibility,
        cursor: Option<&str>,
    ) -> Result<Page<Listed>> {
        let codec = &self.codec;
        let Some(encoder) = codec.codec.get() else {
            let page = self.list_skills(viewer, cursor).await?;
            return Ok(Page {
                items: page
                    .items
                    .into_iter()
                    .map(Box::new)
                    .map(Listed::Built)
                    .collect(),
                next_cursor: page.next_cursor,
            });
        };
        let (rows, next_cursor) = self.listing_page(viewer, cursor).await?;
        let key = |row: &ListingRecord| (row.version_id, row.subpath.clone());
        let mut own: Vec<Option<Arc<str>>> =
            rows.iter().map(|row| codec.cache.get(&key(row))).collect();
        if codec.ready()
            && let Some(kept) = self.store.kept_entries()
        {
            // The kept entries the rows named when this page read them: an id names one body
            // ever, so each is the row's, or gone.
            let (at, ids): (Vec<usize>, Vec<EntryId>) = rows
                .iter()
                .zip(&own)
                .enumerate()
                .filter_map(|(at, (row, own))| Some((at, row.entry.filter(|_| own.is_none())?)))
                .unzip();
            for (at, body) in at.into_iter().zip(kept.serialized(&ids).await?) {
                if let Some(body) = body {
                    let body: Arc<str> = body.into();
                    codec.cache.insert(key(&rows[at]), body.clone());
                    own[at] = Some(body);
                }
            }
        }
        let ids: Vec<i64> = rows
            .iter()
            .zip(&own)
            .filter(|(_, own)| own.is_none())
            .map(|(row, _)| row.version_id)
            .collect();
        let manifests = self.manifests(&ids).await?;
        let graph = self.current.requirements().await?;
        let items = rows
            .into_iter()
            .zip(own)
            .map(|(row, own)| match own {
                Some(own) => Ok(Listed::Kept {
                    own,
                    requires: graph.of(row.version_id).filter(|_| row.subpath.is_empty()),
                    deprecation: row.deprecation,
                    scan: row.scan,
                }),
                None => {
                    let key = key(&row);
                    let entry = listed_entry(row, &manifests)?;
                    let own: Arc<str> = encoder.serialize(&entry).into();
                    codec.cache.insert(key, own.clone());
                    Ok(Listed::Kept {
                        own,
                        requires: graph
                            .of(entry.version_id)
                            .filter(|_| entry.subpath.is_empty()),
                        deprecation: entry.deprecation,
                        scan: entry.scan,
                    })
                }
            })
            .collect::<Result<_>>()?;
        Ok(Page { items, next_cursor })
    }

    /// Serialize, with the registered codec, the entries of listing rows that keep none, and
    /// have the store keep them: up to a bounded number of batches. Returns whether rows may
    /// remain. Without a codec, or on storage that cannot keep entries, does nothing.
    pub async fn serialize_entries(&self) -> Result<bool> {
        let codec = &self.codec;
        let (Some(encoder), Some(kept)) = (codec.codec.get(), self.store.kept_entries()) else {
            return Ok(false);
        };
        if codec.state.load(Ordering::Acquire) == UNCHECKED {
            match kept.serialized_format(encoder.format()).await {
                Ok(()) => codec.state.store(CHECKED, Ordering::Release),
                Err(e) if e.code() == crate::core::Code::StorageReadOnly => {
                    tracing::info!(
                        "storage is read-only: skills/list entries are serialized when first listed"
                    );
                    codec.state.store(OFF, Ordering::Release);
                }
                Err(e) => return Err(e.into()),
            }
        }
        if !codec.ready() {
            return Ok(false);
        }
        for _ in 0..FILL_BATCHES_PER_RUN {
            let rows = kept.unserialized(FILL_BATCH).await?;
            if rows.is_empty() {
                codec.filled(0, true);
                return Ok(false);
            }
            let last = rows.len() < FILL_BATCH as usize;
            // Read straight from the store, as the indexer does: a fill must not flush the
            // serving cache.
            let ids: Vec<i64> = rows.iter().map(|r| r.version_id).collect();
            let manifests = self
                .store
                .manifests(&ids)
                .await?
                .into_iter()
                .map(|(id, m)| (id, Arc::new(m)))
                .collect();
            let entries: Vec<SerializedEntry> = rows
                .into_iter()
                .map(|row| {
                    let (uri, version_id) = (row.uri.clone(), row.version_id);
                    let entry = listed_entry(row, &manifests)?;
                    Ok(SerializedEntry {
                        uri,
                        version_id,
                        body: encoder.serialize(&entry),
                    })
                })
                .collect::<Result<_>>()?;
            let count = kept.keep_serialized(&entries).await?;
            codec.filled(count, last);
            if last {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
