//! 2025-era MCP sessions as storage keeps them, for the HTTP transport's session store: any
//! process sharing the storage answers any session, and a session outlives the process that
//! opened it. What a session's state is, and when to bring one back, is the transport's business;
//! this keeps the rows: put, get (refusing a session unused for longer than an age), marking
//! sessions used, delete (also only when never used), and the sweep of those unused for longer
//! than an age.

use std::sync::Arc;

use crate::error::Result;
use crate::store::Store;

/// The kept MCP sessions.
pub struct Sessions {
    store: Arc<dyn Store>,
}

impl Sessions {
    pub(super) fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// Keep session `id` with `state` (JSON text), used now.
    pub async fn put(&self, id: &str, state: &str) -> Result<()> {
        Ok(self.store.put_session(id, state).await?)
    }

    /// The state of session `id`, unless it is unknown or unused for longer than `max_age_secs`.
    pub async fn get(&self, id: &str, max_age_secs: u64) -> Result<Option<String>> {
        Ok(self.store.session(id, max_age_secs).await?)
    }

    /// Mark the sessions `ids` used now; returns how many are kept.
    pub async fn touch(&self, ids: &[&str]) -> Result<u64> {
        Ok(self.store.touch_sessions(ids).await?)
    }

    /// Forget session `id`; `false` when it was not kept.
    pub async fn delete(&self, id: &str) -> Result<bool> {
        Ok(self.store.delete_session(id).await?)
    }

    /// Forget session `id` if no process ever marked it used (a session that sent nothing after
    /// its handshake); `false` when one did, or it is not kept.
    pub async fn delete_unused(&self, id: &str) -> Result<bool> {
        Ok(self.store.delete_unused_session(id).await?)
    }

    /// Forget the sessions unused for longer than `max_age_secs`; returns how many.
    pub async fn sweep(&self, max_age_secs: u64) -> Result<u64> {
        Ok(self.store.sweep_sessions(max_age_secs).await?)
    }
}
