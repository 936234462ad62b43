//! Change announcements over `LISTEN/NOTIFY`: every write that bumps the generation notifies
//! [`CHANGES_CHANNEL`] inside its transaction, so a listener hears of it exactly when it commits.

use async_trait::async_trait;
use sqlx::PgPool;
use sqlx::postgres::PgListener;

use super::CHANGES_CHANNEL;
use crate::store::{ChangeFeed, Heard, Result};

/// A [`ChangeFeed`] on its own connection (not one of the pool's), opened on first use.
pub struct PgFeed {
    pool: PgPool,
    listener: Option<PgListener>,
}

impl PgFeed {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            listener: None,
        }
    }
}

#[async_trait]
impl ChangeFeed for PgFeed {
    async fn next(&mut self) -> Result<Heard> {
        let Some(listener) = &mut self.listener else {
            let mut listener = PgListener::connect_with(&self.pool).await?;
            listener.listen(CHANGES_CHANNEL).await?;
            self.listener = Some(listener);
            // Whatever committed before the subscription was not heard.
            return Ok(Heard::Gap);
        };
        match listener.try_recv().await {
            Ok(Some(notification)) => Ok(parse(notification.payload()).unwrap_or(Heard::Gap)),
            // The connection was lost (notifications in between are gone); the listener
            // reconnects and re-subscribes on the next call.
            Ok(None) => Ok(Heard::Gap),
            Err(e) => {
                self.listener = None;
                Err(e.into())
            }
        }
    }
}

/// `GENERATION SENT_MS`; anything else is treated as a gap (a generation check).
fn parse(payload: &str) -> Option<Heard> {
    let (generation, sent_ms) = payload.split_once(' ')?;
    Some(Heard::Change {
        generation: generation.parse().ok()?,
        sent_ms: sent_ms.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_parse_or_ask_for_a_generation_check() {
        assert_eq!(
            parse("42 1764547200123"),
            Some(Heard::Change {
                generation: 42,
                sent_ms: 1_764_547_200_123
            })
        );
        assert_eq!(parse("42"), None);
        assert_eq!(parse("x 1"), None);
    }
}
