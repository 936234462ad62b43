//! CPU-heavy work, off the async workers.

use crate::error::{Error, Result};

/// Blobs up to this size are verified on the async worker that reads them; larger ones on a
/// blocking thread (hashing 1 MiB takes about a millisecond).
pub(super) const HASH_INLINE_BYTES: usize = 256 * 1024;

/// Bounds CPU-heavy work (packing archives, rendering pages, hashing large files): it runs on
/// blocking threads, at most as many at once as there are cores, so it never holds up the async
/// workers serving requests.
pub(super) struct Heavy(tokio::sync::Semaphore);

impl Heavy {
    pub(super) fn new() -> Self {
        Self(tokio::sync::Semaphore::new(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        ))
    }

    /// Run `work` on a blocking thread once a permit is free.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let _permit = self
            .0
            .acquire()
            .await
            .map_err(|e| Error::Internal(e.to_string()))?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Error::Internal(format!("a blocking task failed: {e}")))
    }
}
