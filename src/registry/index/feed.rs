//! Hears changes other processes commit (replicas sharing one PostgreSQL database), so this one
//! serves them at once instead of at its next periodic generation check: each announcement
//! drops the short-lived caches and wakes the indexer, which catches up from the generation it
//! recorded and then tells MCP sessions (`list_changed`). A reconnect may have missed
//! announcements; it triggers the same generation check, which finds whatever was missed.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Current;
use crate::store::{ChangeFeed, Heard};

/// Waits before listening again after the feed failed (the database restarting, say): doubling
/// from the first to the last, and back to the first once it works again.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_LAST: Duration = Duration::from_secs(30);

/// Run until the registry is dropped or closed.
pub(in crate::registry) async fn run(
    weak: std::sync::Weak<Current>,
    mut feed: Box<dyn ChangeFeed>,
    stop: CancellationToken,
) {
    let mut retry = RETRY_FIRST;
    loop {
        let heard = tokio::select! {
            () = stop.cancelled() => return,
            heard = feed.next() => heard,
        };
        let Some(current) = weak.upgrade() else {
            return;
        };
        if heard.is_ok() {
            retry = RETRY_FIRST;
        }
        match heard {
            Ok(Heard::Change {
                generation,
                sent_ms,
            }) => {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                tracing::debug!(generation, lag_ms = now_ms - sent_ms, "heard a change");
                crate::metrics::change_heard(now_ms - sent_ms);
                current.changed();
            }
            Ok(Heard::Gap) => {
                tracing::debug!("listening for changes (again): checking the generation");
                current.changed();
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?retry, "change feed failed");
                drop(current);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(retry) => {}
                }
                retry = (retry * 2).min(RETRY_LAST);
            }
        }
    }
}
