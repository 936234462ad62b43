//! The registry's in-memory caches, with one bounding rule and one poisoning policy.
//!
//! Everything cached is derived from storage, so the policy is simple: a cache that grows past its
//! limit drops its least recently used items until it fits again, and one whose lock was poisoned
//! by a panic is emptied and used on (a panic never makes every later read fail). Items leave one
//! at a time: emptying a full cache of 15,000 manifests at once frees about a million allocations
//! inside one request, while every other reader of that cache waits.

use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lru::LruCache;

/// A map bounded by total weight, optionally expiring as a whole `ttl` after it was started.
pub struct Cache<K, V> {
    state: Mutex<State<K, V>>,
    /// Total weight at most.
    limit: usize,
    /// Items heavier than this are not kept.
    max_item: usize,
    ttl: Option<Duration>,
    weigh: fn(&V) -> usize,
}

struct State<K, V> {
    map: LruCache<K, V>,
    weight: usize,
    started: Instant,
}

impl<K: Eq + Hash, V> State<K, V> {
    /// Start over empty; the old items are returned, to be dropped outside the lock.
    fn reset(&mut self) -> LruCache<K, V> {
        self.weight = 0;
        self.started = Instant::now();
        std::mem::replace(&mut self.map, LruCache::unbounded())
    }
}

impl<K: Eq + Hash, V: Clone> Cache<K, V> {
    /// A cache of at most `limit` items.
    pub fn counted(limit: usize, ttl: Option<Duration>) -> Self {
        Self::weighed(limit, usize::MAX, ttl, |_| 1)
    }

    /// A cache of at most `limit` total weight, refusing items over `max_item`.
    pub fn weighed(
        limit: usize,
        max_item: usize,
        ttl: Option<Duration>,
        weigh: fn(&V) -> usize,
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
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<K, V>> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => {
                let mut guard = poisoned.into_inner();
                drop(guard.reset());
                self.state.clear_poison();
                guard
            }
        }
    }

    fn expired(&self, state: &State<K, V>) -> bool {
        self.ttl.is_some_and(|ttl| state.started.elapsed() >= ttl)
    }

    pub fn get(&self, key: &K) -> Option<V> {
        let mut state = self.lock();
        if self.expired(&state) {
            return None;
        }
        state.map.get(key).cloned()
    }

    pub fn insert(&self, key: K, value: V) {
        let weight = (self.weigh)(&value);
        if weight > self.max_item {
            return;
        }
        // What leaves the cache is dropped after the lock is released.
        let mut evicted = Vec::new();
        let mut state = self.lock();
        let expired = self.expired(&state).then(|| state.reset());
        state.weight += weight;
        if let Some((_, old)) = state.map.push(key, value) {
            state.weight -= (self.weigh)(&old);
            evicted.push(old);
        }
        while state.weight > self.limit {
            let Some((_, old)) = state.map.pop_lru() else {
                break;
            };
            state.weight -= (self.weigh)(&old);
            evicted.push(old);
        }
        drop(state);
        drop((evicted, expired));
    }

    /// Drop everything (after a change to the catalog).
    pub fn clear(&self) {
        let old = self.lock().reset();
        drop(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_weight_dropping_the_least_recently_used() {
        let c: Cache<u32, Vec<u8>> = Cache::weighed(10, 6, None, Vec::len);
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
