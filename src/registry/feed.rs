//! Hears changes other processes commit (replicas sharing one PostgreSQL database), so this one
//! serves them at once instead of at its next periodic generation check: each announcement
//! drops the short-lived caches and wakes the indexer, which catches up from the generation it
//! recorded and then tells MCP sessions (`list_changed`). A reconnect may have missed
//! announcements; it triggers the same generation check, which finds whatever was missed.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Registry;
use crate::store::{ChangeFeed, Heard};

/// Wait before listening again after the feed failed (the database restarting, say).
const RETRY: Duration = Duration::from_secs(1);

/// Run until the registry is dropped or closed.
pub(super) async fn run(
    registry: std::sync::Weak<super::Inner>,
    mut feed: Box<dyn ChangeFeed>,
    stop: CancellationToken,
) {
    loop {
        let heard = tokio::select! {
            () = stop.cancelled() => return,
            heard = feed.next() => heard,
        };
        let Some(inner) = registry.upgrade() else {
            return;
        };
        let registry = Registry { inner };
        match heard {
            Ok(Heard::Change(generation)) => {
                tracing::debug!(generation, "heard a change");
                crate::metrics::change_heard();
                registry.notify_changed();
            }
            Ok(Heard::Gap) => {
                tracing::debug!("listening for changes (again): checking the generation");
                registry.notify_changed();
            }
            Err(e) => {
                tracing::warn!(error = %e, "change feed failed; listening again shortly");
                drop(registry);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(RETRY) => {}
                }
            }
        }
    }
}
