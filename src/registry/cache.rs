//! The registry's in-memory caches, with one bounding rule and one poisoning policy.
//!
//! Everything cached is derived from storage, so the policy is simple: a cache that grows past its
//! limit is emptied, and one whose lock was poisoned by a panic is emptied too and used on (a
//! panic never makes every later read fail).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// A map bounded by total weight, optionally expiring as a whole `ttl` after it was started.
pub struct Cache<K, V> {
    state: RwLock<State<K, V>>,
    /// Total weight at most.
    limit: usize,
    /// Items heavier than this are not kept.
    max_item: usize,
    ttl: Option<Duration>,
    weigh: fn(&V) -> usize,
}

struct State<K, V> {
    map: HashMap<K, V>,
    weight: usize,
    started: Instant,
}

impl<K, V> State<K, V> {
    fn reset(&mut self) {
        self.map.clear();
        self.weight = 0;
        self.started = Instant::now();
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
            state: RwLock::new(State {
                map: HashMap::new(),
                weight: 0,
                started: Instant::now(),
            }),
            limit,
            max_item,
            ttl,
            weigh,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State<K, V>> {
        if self.state.is_poisoned() {
            drop(self.write());
        }
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State<K, V>> {
        match self.state.write() {
            Ok(guard) => guard,
            Err(poisoned) => {
                let mut guard = poisoned.into_inner();
                guard.reset();
                self.state.clear_poison();
                guard
            }
        }
    }

    fn expired(&self, state: &State<K, V>) -> bool {
        self.ttl.is_some_and(|ttl| state.started.elapsed() >= ttl)
    }

    pub fn get(&self, key: &K) -> Option<V> {
        let state = self.read();
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
        let mut state = self.write();
        if self.expired(&state) || state.weight.saturating_add(weight) > self.limit {
            state.reset();
        }
        state.weight += weight;
        if let Some(old) = state.map.insert(key, value) {
            state.weight -= (self.weigh)(&old);
        }
    }

    /// Drop everything (after a change to the catalog).
    pub fn clear(&self) {
        self.write().reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_weight_and_emptied_when_full() {
        let c: Cache<u32, Vec<u8>> = Cache::weighed(10, 6, None, Vec::len);
        c.insert(1, vec![0; 4]);
        c.insert(2, vec![0; 4]);
        assert_eq!(c.get(&1).map(|v| v.len()), Some(4));
        c.insert(3, vec![0; 7]);
        assert!(c.get(&3).is_none(), "heavier than one item may be");
        c.insert(4, vec![0; 4]);
        assert!(
            c.get(&1).is_none() && c.get(&4).is_some(),
            "full: emptied first"
        );
        c.insert(4, vec![0; 2]);
        c.insert(5, vec![0; 6]);
        assert!(
            c.get(&4).is_some(),
            "a replaced item's weight is given back"
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
            let _guard = c2.state.write().unwrap();
            panic!("poison the lock");
        })
        .join();
        assert!(c.state.is_poisoned());
        assert_eq!(c.get(&1), None, "a poisoned cache starts over");
        c.insert(2, 2);
        assert_eq!(c.get(&2), Some(2));
    }
}
