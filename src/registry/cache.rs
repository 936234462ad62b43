//! Every in-memory cache of the process, built here from one budget (`cache_memory_mib`), with
//! one bounding rule, one poisoning policy and one set of counters each (exported to
//! `/metrics`).
//!
//! Everything cached is derived from storage, so the policy is simple: a cache that grows past its
//! limit drops its least recently used items until it fits again, and one whose lock was poisoned
//! by a panic is emptied and used on (a panic never makes every later read fail). Items leave one
//! at a time: emptying a full cache of 15,000 manifests at once frees about a million allocations
//! inside one request, while every other reader of that cache waits.
//!
//! # The budget
//!
//! [`Budget::new`] splits the configured bytes across the caches by the weights of [`CACHES`]
//! (each cache's share is its weight over the sum; what rounding leaves goes to the first cache,
//! so the shares sum to the budget). At the default, 384 MiB, a weight is a MiB. Every cache is
//! bounded in bytes: items are weighed by the heap they own as the allocator hands it out
//! ([`allocated`]: vectors and strings by their capacity, decoded JSON maps by their tables) plus
//! a per-item overhead (the LRU node with its key and value), and an eighth more for what
//! eviction leaves behind in the allocator ([`SLACK`]). The budget bounds what the caches
//! hold; the process holds more besides, a constant that does not grow with the budget (SQLite's
//! page cache, 2 MB a connection; the search index's mapped files; threads; requests in flight):
//! `benches/e2e/whole_process.py --budgets` measures both, and BENCHMARKS.md has the figures.
//!
//! # What invalidates each cache
//!
//! | cache | owner | key | invalidated by |
//! | --- | --- | --- | --- |
//! | `manifests` | registry | version id | never: a version's files never change |
//! | `resolutions` | registry | skill, pinned version | what is current: whole cache after [`RESOLVE_TTL`] (30 s with a change feed), and dropped on every change made or heard |
//! | `completions` | registry | template variable, namespace, prefix, viewer | what is current (as resolutions) |
//! | `private_namespaces` | registry | (one item) | what is current (as resolutions) |
//! | `requirements` | registry | (one item: the resolved requirement graph) | what is current (as resolutions) |
//! | `blobs` | registry | file digest | never: bytes are addressed by their digest (verified when read) |
//! | `exports` | registry | version id, archive format | never: a version's archive never changes |
//! | `archive_digests` | registry | version id | never (as exports) |
//! | `entries` | registry (serialized by the transport's codec) | version id, subpath | never: a version's entry is the same bytes for as long as it exists |
//! | `get_entries` | mcp (`skills/get`: an entry's own part, serialized) | version id, subpath, pinned | never (as entries) |
//! | `contents` | mcp (`resources/read`) | file digest, MIME type by name | never (as blobs) |
//! | `pages` | mcp (`skills/list` pages as served) | viewer, cursor | epoch: an item made before the last change, or older than [`RESOLVE_TTL`], is not served ([`Registry::current_stamp`]) |
//! | `rendered` | http (web pages) | Markdown file digest, its file viewer address | never: neither the bytes nor the files its links point to change |
//! | `facets` | registry | catalog generation (one item: the web catalog's counts per namespace) | never: a generation's counts never change; a change bumps the generation |
//!
//! Each datum is held in one layer: a file read over MCP is kept as its content string only (a
//! hit reads no bytes; a miss reads them without keeping them in `blobs`), and a current entry's
//! serialized bytes only in `entries`.
//!
//! [`RESOLVE_TTL`]: super::RESOLVE_TTL
//! [`Registry::current_stamp`]: super::Registry::current_stamp

use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lru::LruCache;
use serde_json::{Map, Value};

use crate::store::{EntryRecord, FileRecord, Manifest};

/// The caches of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheId {
    Manifests,
    Resolutions,
    Completions,
    PrivateNamespaces,
    Requirements,
    Blobs,
    Exports,
    ArchiveDigests,
    Entries,
    GetEntries,
    Contents,
    Pages,
    Rendered,
    Facets,
    CatalogPages,
}

/// How a cache's items stop being served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalidation {
    /// Never: what is cached is immutable (a version's, or addressed by its digest).
    Never,
    /// What is current: the whole cache expires after the registry's current TTL and is dropped
    /// on every change.
    Current,
    /// Each item carries the epoch it was made in; its reader serves it only while the epoch is
    /// the same and it is younger than the current TTL.
    Epoch,
}

/// One cache's declaration.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub id: CacheId,
    /// Its label in `/metrics`.
    pub name: &'static str,
    /// Its share of the budget: `weight / sum of weights` (MiB at the default budget).
    pub weight: usize,
    /// Items heavier than this are not kept...
    pub max_item: usize,
    /// ...nor heavier than this fraction of the cache.
    pub max_item_share: usize,
    pub invalidation: Invalidation,
}

const MIB: usize = 1 << 20;

/// The default of `cache_memory_mib`: today's bounds of the caches (see [`CACHES`]).
pub const DEFAULT_BUDGET_MIB: usize = 384;

/// How many caches there are. A literal, not `CACHES.len()`: array lengths in types that are
/// computed from `CACHES` make the release build's query system cycle (E0391, through the `Send`
/// check of async fns that hold a `Budget`).
const CACHE_COUNT: usize = 15;

/// Every cache, its weight and what invalidates it. The weights are the MiB each had as a
/// constant before the budget (15,000 manifests of about 3 KiB; 50,000 resolutions, 200,000
/// archive digests and 10,000 completions of a few hundred bytes), so the default budget keeps
/// the bounds as they were.
pub const CACHES: [Declared; CACHE_COUNT] = [
    declare(
        CacheId::Manifests,
        "manifests",
        48,
        usize::MAX,
        64,
        Invalidation::Never,
    ),
    declare(
        CacheId::Resolutions,
        "resolutions",
        12,
        usize::MAX,
        64,
        Invalidation::Current,
    ),
    declare(
        CacheId::Completions,
        "completions",
        6,
        usize::MAX,
        64,
        Invalidation::Current,
    ),
    declare(
        CacheId::PrivateNamespaces,
        "private_namespaces",
        2,
        usize::MAX,
        1,
        Invalidation::Current,
    ),
    declare(
        CacheId::Requirements,
        "requirements",
        4,
        usize::MAX,
        1,
        Invalidation::Current,
    ),
    declare(CacheId::Blobs, "blobs", 64, MIB, 4, Invalidation::Never),
    declare(
        CacheId::Exports,
        "exports",
        60,
        usize::MAX,
        2,
        Invalidation::Never,
    ),
    declare(
        CacheId::ArchiveDigests,
        "archive_digests",
        12,
        usize::MAX,
        64,
        Invalidation::Never,
    ),
    declare(CacheId::Entries, "entries", 32, MIB, 4, Invalidation::Never),
    declare(
        CacheId::GetEntries,
        "get_entries",
        32,
        MIB,
        4,
        Invalidation::Never,
    ),
    declare(
        CacheId::Contents,
        "contents",
        64,
        2 * MIB,
        4,
        Invalidation::Never,
    ),
    declare(
        CacheId::Pages,
        "pages",
        16,
        usize::MAX,
        16,
        Invalidation::Epoch,
    ),
    // Its weight was 30; 4 of it went to the web catalog's pages.
    declare(
        CacheId::Rendered,
        "rendered",
        26,
        usize::MAX,
        4,
        Invalidation::Never,
    ),
    // The web catalog's facet counts: one item, a few counts per namespace (2 MiB holds about
    // 20,000 namespaces); its weight was the rendered pages'.
    declare(
        CacheId::Facets,
        "facets",
        2,
        usize::MAX,
        1,
        Invalidation::Never,
    ),
    // The web catalog's browse pages as served (about 28 KiB of HTML each: ~140 of them).
    declare(
        CacheId::CatalogPages,
        "catalog_pages",
        4,
        usize::MAX,
        16,
        Invalidation::Epoch,
    ),
];

const fn declare(
    id: CacheId,
    name: &'static str,
    weight: usize,
    max_item: usize,
    max_item_share: usize,
    invalidation: Invalidation,
) -> Declared {
    Declared {
        id,
        name,
        weight,
        max_item,
        max_item_share,
        invalidation,
    }
}

/// What a cache did, read lock-free by `/metrics`.
#[derive(Debug, Default)]
pub struct Counters {
    capacity: AtomicU64,
    held: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

/// The memory budget of the caches: each cache's share, and its counters.
pub struct Budget {
    total: usize,
    current_ttl: Duration,
    counters: [Arc<Counters>; CACHE_COUNT],
    shares: [usize; CACHE_COUNT],
}

impl Budget {
    /// `total` bytes split by [`CACHES`]' weights; `current_ttl` is how long what is current
    /// stays cached ([`Invalidation::Current`]).
    pub fn new(total: usize, current_ttl: Duration) -> Self {
        let weights: usize = CACHES.iter().map(|c| c.weight).sum();
        let mut shares = CACHES.map(|c| {
            usize::try_from(total as u128 * c.weight as u128 / weights as u128).unwrap_or(total)
        });
        shares[0] += total - shares.iter().sum::<usize>();
        let counters = std::array::from_fn(|i| {
            let c = Counters::default();
            c.capacity.store(shares[i] as u64, Ordering::Relaxed);
            Arc::new(c)
        });
        Self {
            total,
            current_ttl,
            counters,
            shares,
        }
    }

    /// The budget in bytes.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The bytes `id` may hold.
    pub fn share(&self, id: CacheId) -> usize {
        self.shares[index(id)]
    }

    /// The cache `id`, sized from the budget, its items weighed by `weigh` (their heap bytes;
    /// the per-item overhead is added). Build each once per process: a second one of the same
    /// id gets a budget of its own and shares the counters.
    pub fn cache<K: Eq + Hash, V: Clone>(
        &self,
        id: CacheId,
        weigh: fn(&K, &V) -> usize,
    ) -> Cache<K, V> {
        let at = index(id);
        let declared = &CACHES[at];
        let limit = self.shares[at];
        let ttl = (declared.invalidation == Invalidation::Current).then_some(self.current_ttl);
        Cache {
            state: Mutex::new(State {
                map: LruCache::unbounded(),
                weight: 0,
                started: Instant::now(),
            }),
            limit,
            max_item: declared
                .max_item
                .min(limit / declared.max_item_share.max(1)),
            ttl,
            weigh,
            overhead: overhead::<K, V>(),
            slack: true,
            counters: self.counters[at].clone(),
        }
    }

    /// Each cache's counters, for `/metrics`.
    pub fn samples(&self) -> Vec<crate::metrics::CacheSample> {
        CACHES
            .iter()
            .zip(&self.counters)
            .map(|(declared, c)| crate::metrics::CacheSample {
                cache: declared.name,
                held_bytes: c.held.load(Ordering::Relaxed),
                capacity_bytes: c.capacity.load(Ordering::Relaxed),
                hits: c.hits.load(Ordering::Relaxed),
                misses: c.misses.load(Ordering::Relaxed),
                evictions: c.evictions.load(Ordering::Relaxed),
            })
            .collect()
    }
}

fn index(id: CacheId) -> usize {
    CACHES
        .iter()
        .position(|c| c.id == id)
        .expect("every cache is declared")
}

/// The bytes the allocator (mimalloc) hands out for a request of `n`: its size classes step by
/// 16 bytes up to 128, then by an eighth of the next power of two (four classes to a doubling)
/// up to 128 KiB; a larger block is pages of 4 KiB. Zero for nothing.
pub const fn allocated(n: usize) -> usize {
    let step = if n == 0 {
        return 0;
    } else if n <= 128 {
        16
    } else if n <= 128 << 10 {
        n.next_power_of_two() / 8
    } else {
        4096
    };
    n.div_ceil(step) * step
}

/// The heap bytes of a `String` (its capacity, as allocated).
pub fn string_bytes(s: &String) -> usize {
    allocated(s.capacity())
}

/// The heap bytes of a `Vec<u8>` (its capacity, as allocated).
pub fn vec_bytes(v: &Vec<u8>) -> usize {
    allocated(v.capacity())
}

/// The heap bytes of an `Arc` of `n` bytes (an `Arc<str>` of that length, or of a value of
/// that size): the two counts and the bytes, as allocated.
pub const fn arc_bytes(n: usize) -> usize {
    allocated(2 * std::mem::size_of::<usize>() + n)
}

/// The heap bytes of a decoded JSON value: its strings, arrays and maps, as allocated.
pub fn json_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => string_bytes(s),
        Value::Array(items) => {
            allocated(items.capacity() * std::mem::size_of::<Value>())
                + items.iter().map(json_bytes).sum::<usize>()
        }
        Value::Object(map) => map_bytes(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// The heap bytes of a decoded JSON map. serde_json keeps maps in insertion order (its
/// `preserve_order` feature: an `IndexMap`), which grows as its hash table does: room for 3, 7,
/// then 7/8 of a power of two buckets; each entry is a hash, a key and a value, each bucket an
/// index and a control byte (and a group of 16 control bytes more).
pub fn map_bytes(map: &Map<String, Value>) -> usize {
    if map.is_empty() {
        return 0;
    }
    let buckets = match map.len() {
        0..4 => 4,
        4..8 => 8,
        n => (n * 8 / 7).next_power_of_two(),
    };
    let room = if buckets < 8 {
        buckets - 1
    } else {
        buckets / 8 * 7
    };
    let entry = std::mem::size_of::<(usize, String, Value)>();
    let table = buckets * (std::mem::size_of::<usize>() + 1) + 16;
    allocated(room * entry)
        + allocated(table)
        + map
            .iter()
            .map(|(k, v)| string_bytes(k) + json_bytes(v))
            .sum::<usize>()
}

/// The heap bytes of a decoded manifest behind its `Arc`: its files and entries (their vectors'
/// room, paths, names, descriptions and frontmatter) and its provenance, as allocated.
pub fn manifest_bytes(manifest: &Manifest) -> usize {
    use crate::core::provenance::Provenance;
    let files = allocated(manifest.files.capacity() * std::mem::size_of::<FileRecord>())
        + manifest
            .files
            .iter()
            .map(|f| string_bytes(&f.path))
            .sum::<usize>();
    let entries = allocated(manifest.entries.capacity() * std::mem::size_of::<EntryRecord>())
        + manifest
            .entries
            .iter()
            .map(|e| {
                string_bytes(&e.subpath)
                    + allocated(e.name.as_str().len())
                    + string_bytes(&e.description)
                    + map_bytes(&e.frontmatter)
            })
            .sum::<usize>();
    let provenance = match &manifest.provenance {
        None => 0,
        Some(Provenance::Git {
            repository,
            reference,
            commit,
            path,
        }) => [repository, reference, commit, path]
            .into_iter()
            .map(string_bytes)
            .sum(),
        Some(Provenance::Mcp { server, uri }) => string_bytes(server) + string_bytes(uri),
    };
    let publisher = manifest.publisher.as_ref().map_or(0, map_bytes);
    arc_bytes(std::mem::size_of::<Manifest>()) + files + entries + provenance + publisher
}

/// What an item costs besides what its weigher counts (the heap it owns): the LRU's node (its
/// key, its value with its weight, two links), and the node's slot in the hash table (a
/// pointer and a control byte, the table at most half empty).
fn overhead<K, V>() -> usize {
    allocated(std::mem::size_of::<K>() + std::mem::size_of::<(V, usize)>() + 16)
        + 2 * (std::mem::size_of::<usize>() + 1)
}

/// Each item of the budget's caches weighs an eighth more than it holds: what evicting items
/// leaves behind in the allocator. An evicted item's bytes go back to mimalloc, which returns a
/// page to the system only once every block on it is free, and purges free pages only when the
/// thread that owns them allocates again. Measured at 1M skills with every cache evicting, RSS
/// grew by 1.14 bytes per byte the caches held (1.07 with mimalloc purging at once), and by
/// less than 1.0 when nothing was evicted.
const SLACK: usize = 8;

/// A map bounded by total weight, optionally expiring as a whole `ttl` after it was started.
pub struct Cache<K, V> {
    state: Mutex<State<K, V>>,
    /// Total weight at most.
    limit: usize,
    /// Items heavier than this are not kept.
    max_item: usize,
    ttl: Option<Duration>,
    weigh: fn(&K, &V) -> usize,
    /// Added to each item's weight ([`overhead`]).
    overhead: usize,
    /// Whether each item is weighed with [`SLACK`] (every cache of the budget).
    slack: bool,
    counters: Arc<Counters>,
}

struct State<K, V> {
    /// Each item with its weight (weighed once, outside the lock).
    map: LruCache<K, (V, usize)>,
    weight: usize,
    started: Instant,
}

impl<K: Eq + Hash, V> State<K, V> {
    /// Start over empty; the old items are returned, to be dropped outside the lock.
    fn reset(&mut self) -> LruCache<K, (V, usize)> {
        self.weight = 0;
        self.started = Instant::now();
        std::mem::replace(&mut self.map, LruCache::unbounded())
    }
}

impl Counters {
    /// The cache went from holding `before` bytes to `after`.
    fn held(&self, before: usize, after: usize) {
        if after >= before {
            self.held
                .fetch_add((after - before) as u64, Ordering::Relaxed);
        } else {
            self.held
                .fetch_sub((before - after) as u64, Ordering::Relaxed);
        }
    }
}

impl<K: Eq + Hash, V: Clone> Cache<K, V> {
    /// A cache of its own (outside the budget) of at most `limit` items.
    #[cfg(test)]
    fn counted(limit: usize, ttl: Option<Duration>) -> Self {
        Self::weighed(limit, usize::MAX, ttl, |_, _| 1)
    }

    /// A cache of its own (outside the budget) of at most `limit` total weight, refusing items
    /// over `max_item`, with no per-item overhead.
    #[cfg(test)]
    fn weighed(
        limit: usize,
        max_item: usize,
        ttl: Option<Duration>,
        weigh: fn(&K, &V) -> usize,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                map: LruCache::unbounded(),
                weight: 0,
                started: Instant::now(),
            }),
            limit,
            max_item,
            ttl,
            weigh,
            overhead: 0,
            slack: false,
            counters: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<K, V>> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => {
                let mut guard = poisoned.into_inner();
                let before = guard.weight;
                drop(guard.reset());
                self.counters.held(before, 0);
                self.state.clear_poison();
                guard
            }
        }
    }

    fn expired(&self, state: &State<K, V>) -> bool {
        self.ttl.is_some_and(|ttl| state.started.elapsed() >= ttl)
    }

    fn weight(&self, key: &K, value: &V) -> usize {
        let weight = (self.weigh)(key, value).saturating_add(self.overhead);
        if self.slack {
            weight.saturating_add(weight / SLACK)
        } else {
            weight
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        let found = {
            let mut state = self.lock();
            if self.expired(&state) {
                None
            } else {
                state.map.get(key).map(|(value, _)| value.clone())
            }
        };
        let counter = match found {
            Some(_) => &self.counters.hits,
            None => &self.counters.misses,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Whether `key` is held, without counting a hit or a miss or making it the most recent.
    pub fn contains(&self, key: &K) -> bool {
        let state = self.lock();
        !self.expired(&state) && state.map.contains(key)
    }

    pub fn insert(&self, key: K, value: V) {
        let weight = self.weight(&key, &value);
        if weight > self.max_item {
            return;
        }
        // What leaves the cache is dropped after the lock is released.
        let mut evicted = Vec::new();
        let mut state = self.lock();
        let before = state.weight;
        let expired = self.expired(&state).then(|| state.reset());
        state.weight += weight;
        if let Some(old) = state.map.push(key, (value, weight)) {
            state.weight -= old.1.1;
            evicted.push(old);
        }
        let mut dropped = 0;
        while state.weight > self.limit {
            let Some(old) = state.map.pop_lru() else {
                break;
            };
            state.weight -= old.1.1;
            evicted.push(old);
            dropped += 1;
        }
        self.counters.held(before, state.weight);
        drop(state);
        if dropped > 0 {
            self.counters
                .evictions
                .fetch_add(dropped, Ordering::Relaxed);
        }
        drop((evicted, expired));
    }

    /// Drop everything (after a change to the catalog).
    pub fn clear(&self) {
        let mut state = self.lock();
        let before = state.weight;
        let old = state.reset();
        self.counters.held(before, 0);
        drop(state);
        drop(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_weight_dropping_the_least_recently_used() {
        let c: Cache<u32, Vec<u8>> = Cache::weighed(10, 6, None, |_, v| v.len());
        c.insert(1, vec![0; 4]);
        c.insert(2, vec![0; 4]);
        assert_eq!(
            c.get(&1).map(|v| v.len()),
            Some(4),
            "1 is now the most recent"
        );
        c.insert(3, vec![0; 7]);
        assert!(c.get(&3).is_none(), "heavier than one item may be");
        c.insert(4, vec![0; 4]);
        assert!(
            c.get(&2).is_none() && c.get(&1).is_some() && c.get(&4).is_some(),
            "full: the least recently used left, and only it"
        );
        // 4 replaced by a lighter item (weight 6 in all), then 5: 12 > 10, so 1 leaves.
        c.insert(4, vec![0; 2]);
        c.insert(5, vec![0; 6]);
        assert_eq!(c.get(&4).map(|v| v.len()), Some(2));
        assert!(
            c.get(&5).is_some() && c.get(&1).is_none(),
            "a replaced item's weight is given back: only one item had to leave"
        );
    }

    #[test]
    fn the_budget_is_split_by_the_declared_weights_and_sums_to_it() {
        let weights: usize = CACHES.iter().map(|c| c.weight).sum();
        assert_eq!(
            weights, DEFAULT_BUDGET_MIB,
            "at the default, a weight is a MiB"
        );
        for total in [DEFAULT_BUDGET_MIB << 20, 16 << 20, 1 << 30, 1_000_003, 0] {
            let budget = Budget::new(total, Duration::from_secs(1));
            let shares: Vec<usize> = CACHES.iter().map(|c| budget.share(c.id)).collect();
            assert_eq!(shares.iter().sum::<usize>(), total, "{total}: {shares:?}");
            for (declared, share) in CACHES.iter().zip(&shares).skip(1) {
                assert_eq!(
                    *share,
                    (total as u128 * declared.weight as u128 / weights as u128) as usize,
                    "{}",
                    declared.name
                );
            }
            // The first takes what rounding leaves: less than one byte per cache.
            let exact = total as u128 * CACHES[0].weight as u128 / weights as u128;
            assert!(shares[0] as u128 - exact < CACHES.len() as u128);
            let samples = budget.samples();
            assert_eq!(samples.len(), CACHES.len());
            assert!(
                samples
                    .iter()
                    .zip(&shares)
                    .all(|(s, share)| s.capacity_bytes == *share as u64)
            );
        }
        let budget = Budget::new(DEFAULT_BUDGET_MIB << 20, Duration::from_secs(1));
        assert_eq!(
            budget.share(CacheId::Blobs),
            64 << 20,
            "as before the budget"
        );
        assert_eq!(budget.share(CacheId::Pages), 16 << 20);
        let names: std::collections::HashSet<_> = CACHES.iter().map(|c| c.name).collect();
        assert_eq!(names.len(), CACHES.len(), "one series per cache");
    }

    #[test]
    fn a_small_budget_evicts_and_counts_what_its_caches_do() {
        let budget = Budget::new(4 << 20, Duration::from_secs(60));
        let share = budget.share(CacheId::Blobs);
        let blobs: Cache<u32, Arc<Vec<u8>>> = budget.cache(CacheId::Blobs, |_, b| b.len());
        let item = share / 8;
        for key in 0..16 {
            blobs.insert(key, Arc::new(vec![0; item]));
        }
        assert!(blobs.get(&0).is_none(), "the first left");
        assert!(blobs.get(&15).is_some(), "the last stayed");
        let sample = |name| {
            budget
                .samples()
                .into_iter()
                .find(|s| s.cache == name)
                .unwrap()
        };
        let blob = sample("blobs");
        assert!(blob.evictions >= 8, "{blob:?}");
        assert!(
            blob.held_bytes <= share as u64 && blob.held_bytes >= 6 * item as u64,
            "{blob:?}"
        );
        assert_eq!((blob.hits, blob.misses), (1, 1));
        // An item over its share's bound is not kept (a quarter of the blobs' share here).
        blobs.insert(99, Arc::new(vec![0; share / 3]));
        assert!(blobs.get(&99).is_none());
        blobs.clear();
        assert_eq!(sample("blobs").held_bytes, 0, "cleared");
        // An item of the budget weighs what it holds, its node, and an eighth more.
        blobs.insert(7, Arc::new(vec![0; 1000]));
        let node = overhead::<u32, Arc<Vec<u8>>>();
        assert_eq!(
            node,
            48 + 18,
            "a 4-byte key, an Arc and a weight, two links"
        );
        assert_eq!(sample("blobs").held_bytes, (1000 + 66 + 133) as u64);
        // A cache of what is current expires whole; the others are untouched.
        let current = Budget::new(4 << 20, Duration::ZERO);
        let resolved: Cache<u32, u32> = current.cache(CacheId::Resolutions, |_, _| 0);
        resolved.insert(1, 1);
        assert_eq!(resolved.get(&1), None, "expired");
        let manifests: Cache<u32, u32> = current.cache(CacheId::Manifests, |_, _| 0);
        manifests.insert(1, 1);
        assert_eq!(manifests.get(&1), Some(1), "immutable: never expires");
    }

    #[test]
    fn allocations_are_weighed_as_mimalloc_rounds_them() {
        let rounded = [
            0, 1, 16, 17, 100, 128, 129, 200, 1000, 1025, 4000, 131_072, 131_073,
        ];
        assert_eq!(
            rounded.map(allocated),
            [
                0, 16, 16, 32, 112, 128, 160, 224, 1024, 1280, 4096, 131_072, 135_168
            ]
        );
        let mut grown = Vec::with_capacity(1000);
        grown.extend_from_slice(&[0u8; 600]);
        assert_eq!(
            vec_bytes(&grown),
            1024,
            "a vector by its capacity, not its length"
        );
        assert_eq!(string_bytes(&String::with_capacity(20)), 32);
        assert_eq!(
            arc_bytes(5),
            32,
            "an Arc<str> of 5 bytes: two counts and the bytes"
        );
    }

    /// A synthetic catalog's frontmatter, decoded (serde_json in insertion order).
    fn frontmatter() -> Map<String, Value> {
        serde_json::from_str(
            r#"{"name":"remote-router-reviewer-0","description":"Static cache for log queries.","metadata":{"owner":"team-0000"}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_decoded_json_map_is_weighed_with_its_tables_keys_and_values() {
        // 64-bit, serde_json with `preserve_order`: a value is 72 bytes (a map inline), an
        // entry of a map 104 (its hash, key and value).
        assert_eq!(std::mem::size_of::<Value>(), 72);
        assert_eq!(std::mem::size_of::<(usize, String, Value)>(), 104);
        // Up to 3 entries: room for 3 (312 bytes: 320 as allocated) and a table of 4 buckets
        // (4 indices, 4 + 16 control bytes: 52, so 64).
        let inner = 320 + 64 + 16 + 16; // "owner", "team-0000"
        let outer = 320 + 64 + 16 + 16 + 16 + 32 + 32; // 3 keys; the name (24), description (29)
        assert_eq!(map_bytes(&frontmatter()), outer + inner);
        assert_eq!(outer + inner, 912, "eight times its 114 bytes of text");
        assert_eq!(json_bytes(&Value::Object(frontmatter())), outer + inner);
        // 4 entries: room for 7 (728: 768) and 8 buckets (8 × 9 + 16 = 88: 96).
        let mut four = frontmatter();
        four.insert("license".into(), Value::Null);
        assert_eq!(map_bytes(&four), 768 + 96 + (outer - 320 - 64) + inner + 16);
        let list: Value = serde_json::from_str(r#"["ab", 1, ["c"]]"#).unwrap();
        // Room for 4 values as a vector grows (288 bytes: 320), "ab", and the inner list of one
        // (room for 4 again) with "c".
        assert_eq!(json_bytes(&list), 320 + 16 + 320 + 16);
        assert_eq!(map_bytes(&Map::new()), 0, "an empty map allocates nothing");
    }

    #[test]
    fn a_manifest_is_weighed_as_allocated() {
        let files: Vec<FileRecord> = ["SKILL.md", "assets/figure-0.png", "references/guide.md"]
            .into_iter()
            .map(|path| FileRecord {
                path: path.to_owned(),
                digest: crate::core::Digest::of(path.as_bytes()),
                size: 1,
                mode: 0o644,
            })
            .collect();
        let frontmatter = frontmatter();
        let mut entries = Vec::with_capacity(4);
        entries.push(EntryRecord {
            subpath: String::new(),
            name: crate::core::SkillName::new("remote-router-reviewer-0").unwrap(),
            description: "Static cache for log queries.".to_owned(),
            frontmatter: frontmatter.clone(),
        });
        let manifest = Manifest {
            version_id: 1,
            files,
            entries,
            provenance: None,
            signatures: Vec::new(),
            publisher: None,
        };
        let file = std::mem::size_of::<FileRecord>();
        let entry = std::mem::size_of::<EntryRecord>();
        assert_eq!((file, entry), (72, 144));
        let expected = arc_bytes(std::mem::size_of::<Manifest>())
            + allocated(3 * file) // 216: 224
            + 16 + 32 + 32 // the three paths
            + allocated(4 * entry) // room for 4 entries: 576, 640
            + 32 + 32 // name, description
            + map_bytes(&frontmatter);
        assert_eq!(manifest_bytes(&manifest), expected);
        assert_eq!(
            expected,
            arc_bytes(std::mem::size_of::<Manifest>()) + 224 + 80 + 640 + 64 + 912,
            "a manifest of three files and one entry holds about 2 KB"
        );
        let with_source = Manifest {
            provenance: Some(crate::core::provenance::Provenance::Mcp {
                server: "https://upstream.example".to_owned(),
                uri: "skill://acme/x/SKILL.md".to_owned(),
            }),
            ..manifest
        };
        assert_eq!(manifest_bytes(&with_source), expected + 32 + 32);
    }

    #[test]
    fn expires_whole_and_survives_a_poisoned_lock() {
        let c: Cache<u32, u32> = Cache::counted(10, Some(Duration::ZERO));
        c.insert(1, 1);
        assert_eq!(c.get(&1), None, "expired");
        let c = std::sync::Arc::new(Cache::<u32, u32>::counted(10, None));
        c.insert(1, 1);
        let c2 = c.clone();
        let _ = std::thread::spawn(move || {
            let _guard = c2.state.lock().unwrap();
            panic!("poison the lock");
        })
        .join();
        assert!(c.state.is_poisoned());
        assert_eq!(c.get(&1), None, "a poisoned cache starts over");
        c.insert(2, 2);
        assert_eq!(c.get(&2), Some(2));
    }
}
