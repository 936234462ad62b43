//! [`Usage`]: how often each version is read, counted in memory off the request path's storage
//! and flushed in the background.
//!
//! A read adds one to the counter of (version id, UTC day, [`Kind`]) in one of [`SHARDS`]
//! small maps, picked by the version id: a lock held for one hash-map increment, no allocation
//! once the key exists, and nothing about who read. Every `flush_every` a task takes every
//! shard's counts and adds them to storage (`UsageCounts::add_usage`, an upsert that adds, so
//! replicas sharing PostgreSQL sum); a flush that fails puts its counts back for the next one
//! (a failure is logged once until a flush works again: read-only storage does not fill the
//! log).
//! [`Registry::close`](super::Registry::close) flushes last, so a graceful shutdown loses
//! nothing and a crash at most one interval. Counting off, nothing is counted or written.
//!
//! Where reads are counted (each in one place every transport goes through): `skills/get` in the
//! MCP handler once its answer is certain, MCP file reads in [`super::Reads::locate`] (told
//! whether the reader installs by the handler, which alone sees the request's `_meta`), REST and
//! ClawHub downloads in the catalog reads the endpoint names a kind for (`core::usage` lists
//! them). With `search_popularity`, search multiplies relevance by [`popularity`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::core::records::VersionId;
use crate::core::usage::{Day, Kind};
use crate::error::Result;
use crate::store::{Store, UsageCount};

/// Counter maps; a version's counts are all in one.
pub const SHARDS: usize = 16;
/// How often counts are flushed unless said otherwise (`usage_flush_secs`).
pub const DEFAULT_FLUSH: Duration = Duration::from_secs(10);

type Counters = HashMap<(VersionId, Day, Kind), u64>;

/// The usage counters of this process.
pub struct Usage {
    counting: bool,
    /// Search ranks by relevance times [`popularity`] (`search_popularity`).
    popularity: bool,
    store: Arc<dyn Store>,
    shards: [Mutex<Counters>; SHARDS],
    /// One flush at a time (the task's and a final one).
    flushing: tokio::sync::Mutex<()>,
    /// A flush failed and no flush has worked since (the failure was logged).
    failing: AtomicBool,
}

impl Usage {
    pub(super) fn new(store: Arc<dyn Store>, counting: bool, popularity: bool) -> Self {
        Self {
            counting,
            popularity,
            store,
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            flushing: tokio::sync::Mutex::new(()),
            failing: AtomicBool::new(false),
        }
    }

    /// Whether reads are counted (`usage_counting`).
    pub fn counting(&self) -> bool {
        self.counting
    }

    /// Whether search ranks by relevance times [`popularity`] (`search_popularity`).
    pub fn ranks_search(&self) -> bool {
        self.popularity
    }

    /// Count one read of `kind` of the version `version_id`, today (UTC).
    pub fn count(&self, version_id: VersionId, kind: Kind) {
        if !self.counting {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let shard = &self.shards[version_id.unsigned_abs() as usize % SHARDS];
        let mut counters = shard.lock().unwrap_or_else(|e| e.into_inner());
        *counters
            .entry((version_id, Day::of_unix(now), kind))
            .or_insert(0) += 1;
    }

    /// Add every count not stored yet to storage; returns how many rows it added to. When
    /// storage refuses them, they are kept for the next flush.
    pub async fn flush(&self) -> Result<usize> {
        let _one = self.flushing.lock().await;
        let mut counts = Vec::new();
        for shard in &self.shards {
            let taken = std::mem::take(&mut *shard.lock().unwrap_or_else(|e| e.into_inner()));
            counts.extend(
                taken
                    .into_iter()
                    .map(|((version_id, day, kind), count)| UsageCount {
                        version_id,
                        day,
                        kind,
                        count,
                    }),
            );
        }
        if counts.is_empty() {
            return Ok(0);
        }
        match self.store.add_usage(&counts).await {
            Ok(()) => Ok(counts.len()),
            Err(e) => {
                for c in counts {
                    let shard = &self.shards[c.version_id.unsigned_abs() as usize % SHARDS];
                    *shard
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .entry((c.version_id, c.day, c.kind))
                        .or_insert(0) += c.count;
                }
                Err(e.into())
            }
        }
    }
}

/// Days of reads the search popularity factor looks at.
pub const POPULARITY_DAYS: u32 = 30;

/// What a skill's relevance is multiplied by in search when `search_popularity` is on:
/// `1 + ln(1 + reads) / 10` over its reads of the last [`POPULARITY_DAYS`] days (1 with no read,
/// about 1.46 with 100, 1.69 with 1000): a clearly better match still wins, an even one goes to
/// the skill people use.
pub fn popularity(reads: u64) -> f32 {
    1.0 + (reads as f32).ln_1p() / 10.0
}

/// Flush `usage` every `every` until `stop` (the final flush is [`super::Registry::close`]'s).
pub(super) async fn run(usage: Weak<Usage>, every: Duration, stop: CancellationToken) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let Some(usage) = usage.upgrade() else { return };
        match usage.flush().await {
            Ok(_) => {
                if usage.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("usage counts flushed again");
                }
            }
            Err(e) if usage.failing.swap(true, Ordering::Relaxed) => {
                tracing::debug!(error = %e, "usage counts not flushed: kept for the next flush");
            }
            Err(e) => {
                tracing::warn!(error = %e, "usage counts not flushed: kept for the next flush");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn popularity_starts_at_one_and_grows_slowly() {
        assert_eq!(popularity(0), 1.0);
        assert!((popularity(100) - 1.4615).abs() < 1e-3);
        assert!((popularity(1000) - 1.6909).abs() < 1e-3);
        assert!(popularity(1_000_000) < 2.5);
    }
}
