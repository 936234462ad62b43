//! [`Events`]: the events feed and the webhooks that deliver it. Written once for both engines:
//! each compiles this module with its own `dialect`.
//!
//! An event is written by [`record`] inside the transaction of the change it records (publish,
//! withdrawal, deprecation, approval, rescan, source read), so a change and its event commit
//! together or not at all, and every replica reads the same feed. Writes hold the writer lock
//! (SQLite's one writer, PostgreSQL's advisory lock), so ids are given out in commit order: a
//! reader that has seen id N never later finds a new event below N.
//!
//! Webhook deliveries go through a queue: [`Events::queue_deliveries`] fans new events out to the
//! hooks whose namespace and filter they match, [`Events::claim_deliveries`] hands due ones to one
//! worker (one statement under the writer lock marks them with the round's random claim until a
//! lease ends: on PostgreSQL one replica delivers each), and [`Events::finish_deliveries`]
//! records a round's attempts in one transaction, retries with backoff or pauses a hook after
//! repeated failure.

use super::dialect::{
    Conn, Engine, epoch, in_list, is_set, is_unset, limit, now, text, visibility_args, visible,
};
use super::write::{self, Target};
use crate::core::event::{
    Attempt, Delivery, EventKind, EventRecord, EventsPage, NewEvent, NewWebhook, WebhookRecord,
};
use crate::core::{Namespace, Timestamp, Visibility};
use crate::store::rows::pow2_chunks;
use crate::store::{Events, Result, StoreError};

/// Write `events` inside `tx`, the transaction of the change they record.
pub(super) async fn record(tx: &mut Conn, events: &[NewEvent<'_>]) -> Result<()> {
    for chunk in pow2_chunks(events) {
        let mut insert = sqlx::QueryBuilder::new(
            "INSERT INTO events (kind, namespace, name, version, pending, payload) ",
        );
        insert.push_values(chunk, |mut row, e| {
            row.push_bind(e.kind.as_str())
                .push_bind(e.namespace)
                .push_bind(e.name)
                .push_bind(e.version)
                .push_bind(e.pending)
                .push_bind(e.payload.to_string());
        });
        insert.build().execute(&mut *tx).await?;
    }
    Ok(())
}

/// The columns of an [`EventRow`] from events `e`.
macro_rules! event_columns {
    () => {
        concat!(
            "e.id, e.at, e.kind, e.namespace, e.name, e.version, ",
            is_set!("e.pending"),
            " AS pending, e.payload"
        )
    };
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    at: Timestamp,
    kind: String,
    namespace: String,
    name: Option<String>,
    version: Option<String>,
    pending: bool,
    payload: String,
}

impl EventRow {
    fn decode(self) -> Result<EventRecord> {
        Ok(EventRecord {
            id: self.id,
            kind: EventKind::parse(&self.kind).ok_or_else(|| corrupt(&self.kind))?,
            payload: serde_json::from_str(&self.payload).map_err(|_| corrupt(&self.payload))?,
            at: self.at,
            namespace: self.namespace,
            name: self.name,
            version: self.version,
            pending: self.pending,
        })
    }
}

#[derive(sqlx::FromRow)]
struct WebhookRow {
    id: String,
    namespace: String,
    url: String,
    kinds: String,
    secret: String,
    created_at: Timestamp,
    created_by: String,
    failures: i64,
    paused_at: Option<Timestamp>,
    last_status: Option<i64>,
    last_attempt_at: Option<Timestamp>,
}

impl WebhookRow {
    fn decode(self) -> Result<WebhookRecord> {
        let kinds = self
            .kinds
            .split(',')
            .filter(|k| !k.is_empty())
            .map(|k| EventKind::parse(k).ok_or_else(|| corrupt(k)))
            .collect::<Result<_>>()?;
        Ok(WebhookRecord {
            id: self.id,
            namespace: self.namespace,
            url: self.url,
            kinds,
            secret: self.secret,
            created_at: self.created_at,
            created_by: self.created_by,
            failures: self.failures,
            paused_at: self.paused_at,
            last_status: self.last_status,
            last_attempt_at: self.last_attempt_at,
        })
    }
}

/// The stored form of an event filter: `,published,yanked,` (empty: every kind), so that one
/// `LIKE` matches a kind on both engines.
fn kinds_text(kinds: &[EventKind]) -> String {
    if kinds.is_empty() {
        return String::new();
    }
    let mut text = String::from(",");
    for kind in kinds {
        text.push_str(kind.as_str());
        text.push(',');
    }
    text
}

/// The columns of a [`WebhookRow`].
macro_rules! webhook_columns {
    () => {
        "id, namespace, url, kinds, secret, created_at, created_by, failures, paused_at, \
         last_status, last_attempt_at"
    };
}

#[async_trait::async_trait]
impl Events for Engine {
    async fn events_page(
        &self,
        after: i64,
        limit: u32,
        kind: Option<EventKind>,
        namespace: Option<&Namespace>,
        visibility: &Visibility,
    ) -> Result<EventsPage> {
        // Where the feed stands, read before the page: any event the page may miss (committed
        // after this) has a greater id.
        let (latest, pruned_through): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT coalesce(max(id), 0) FROM events),
                    (SELECT coalesce(max(pruned_through), 0) FROM event_horizon)",
        )
        .fetch_one(self.read())
        .await?;
        let (mode, names) = visibility_args(visibility)?;
        let rows: Vec<EventRow> = sqlx::query_as(concat!(
            "SELECT ",
            event_columns!(),
            " FROM events e JOIN namespaces n ON n.name = e.namespace
             WHERE e.id > $1 AND ",
            visible!("n", "$3", "$4"),
            " AND (",
            is_unset!("e.pending"),
            " OR $3 = 2 OR ",
            in_list!("e.namespace", "$4"),
            ") AND (",
            text!("$5"),
            " IS NULL OR e.kind = $5) AND (",
            text!("$6"),
            " IS NULL OR e.namespace = $6) ORDER BY e.id ",
            limit!("$2")
        ))
        .bind(after)
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .bind(kind.map(EventKind::as_str))
        .bind(namespace.map(Namespace::as_str))
        .fetch_all(self.read())
        .await?;
        Ok(EventsPage {
            events: rows
                .into_iter()
                .map(EventRow::decode)
                .collect::<Result<_>>()?,
            latest,
            pruned_through,
        })
    }

    async fn prune_events(&self, before: Timestamp) -> Result<u64> {
        let mut tx = write::begin(self.write()).await?;
        let through: Option<i64> = sqlx::query_scalar("SELECT max(id) FROM events WHERE at < $1")
            .bind(before)
            .fetch_one(&mut *tx)
            .await?;
        let Some(through) = through else {
            return Ok(0);
        };
        let pruned = sqlx::query("DELETE FROM events WHERE id <= $1")
            .bind(through)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        sqlx::query(
            "INSERT INTO event_horizon (one, pruned_through) VALUES (1, $1)
             ON CONFLICT (one) DO UPDATE SET pruned_through = excluded.pruned_through",
        )
        .bind(through)
        .execute(&mut *tx)
        .await?;
        // Deliveries of pruned events are given up; their attempts age out with them.
        sqlx::query("DELETE FROM webhook_queue WHERE event_id <= $1")
            .bind(through)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM webhook_deliveries WHERE at < $1")
            .bind(before)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(pruned)
    }

    async fn add_webhook(&self, new: NewWebhook<'_>) -> Result<WebhookRecord> {
        let mut tx = write::begin(self.write()).await?;
        // Delivered from the next event on.
        let row: WebhookRow = sqlx::query_as(concat!(
            "INSERT INTO webhooks (id, namespace, url, kinds, secret, created_by, queued_through)
             VALUES ($1, $2, $3, $4, $5, $6, (SELECT coalesce(max(id), 0) FROM events))
             RETURNING ",
            webhook_columns!()
        ))
        .bind(new.id)
        .bind(new.namespace)
        .bind(new.url)
        .bind(kinds_text(new.kinds))
        .bind(new.secret)
        .bind(new.actor)
        .fetch_one(&mut *tx)
        .await?;
        let details = serde_json::json!({
            "namespace": new.namespace,
            "webhook": new.id,
            "url": new.url,
            "types": new.kinds,
        });
        write::audit(&mut tx, new.actor, "webhook_add", Target::None, &details).await?;
        tx.commit().await?;
        row.decode()
    }

    async fn webhooks(&self, namespace: Option<&Namespace>) -> Result<Vec<WebhookRecord>> {
        let rows: Vec<WebhookRow> = sqlx::query_as(concat!(
            "SELECT ",
            webhook_columns!(),
            " FROM webhooks WHERE ",
            text!("$1"),
            " IS NULL OR namespace = $1 ORDER BY created_at, id"
        ))
        .bind(namespace.map(Namespace::as_str))
        .fetch_all(self.read())
        .await?;
        rows.into_iter().map(WebhookRow::decode).collect()
    }

    async fn remove_webhook(&self, namespace: &Namespace, id: &str, actor: &str) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let removed = sqlx::query("DELETE FROM webhooks WHERE namespace = $1 AND id = $2")
            .bind(namespace.as_str())
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if removed == 0 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM webhook_queue WHERE hook_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let details = serde_json::json!({ "namespace": namespace.as_str(), "webhook": id });
        write::audit(&mut tx, actor, "webhook_remove", Target::None, &details).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn resume_webhook(&self, namespace: &Namespace, id: &str, actor: &str) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let resumed = sqlx::query(
            "UPDATE webhooks SET paused_at = NULL, failures = 0 WHERE namespace = $1 AND id = $2",
        )
        .bind(namespace.as_str())
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if resumed == 0 {
            return Ok(false);
        }
        let details = serde_json::json!({ "namespace": namespace.as_str(), "webhook": id });
        write::audit(&mut tx, actor, "webhook_resume", Target::None, &details).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn queue_deliveries(&self) -> Result<u64> {
        // Most calls find nothing new: answered without the writer lock.
        let behind: Option<i64> = sqlx::query_scalar(
            "SELECT queued_through FROM webhooks
             WHERE queued_through < (SELECT coalesce(max(id), 0) FROM events) LIMIT 1",
        )
        .fetch_optional(self.read())
        .await?;
        if behind.is_none() {
            return Ok(0);
        }
        // Under the writer lock no event commits meanwhile: what is queued and how far each hook
        // is marked are the same events.
        let mut tx = write::begin(self.write()).await?;
        let queued = sqlx::query(concat!(
            "INSERT INTO webhook_queue (hook_id, event_id, due_at)
             SELECT h.id, e.id, ",
            epoch!(),
            " FROM webhooks h JOIN events e ON e.namespace = h.namespace AND e.id > h.queued_through
             WHERE h.paused_at IS NULL AND (h.kinds = '' OR h.kinds LIKE '%,' || e.kind || ',%')
             ON CONFLICT (hook_id, event_id) DO NOTHING"
        ))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        sqlx::query(
            "UPDATE webhooks SET queued_through = (SELECT coalesce(max(id), 0) FROM events)
             WHERE queued_through < (SELECT coalesce(max(id), 0) FROM events)",
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(queued)
    }

    async fn claim_deliveries(&self, limit: u32, lease_secs: u64) -> Result<Vec<Delivery>> {
        let due: Option<i64> = sqlx::query_scalar(concat!(
            "SELECT event_id FROM webhook_queue WHERE due_at <= ",
            epoch!(),
            " AND claimed_until <= ",
            epoch!(),
            " LIMIT 1"
        ))
        .fetch_optional(self.read())
        .await?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        // Claimed in one statement under the writer lock (another worker, of any replica, waits
        // for it and then sees them claimed), marked with this round's random claim.
        let mut claim = [0u8; 16];
        getrandom::fill(&mut claim)
            .map_err(|e| StoreError::Corrupt(format!("no randomness for a claim: {e}")))?;
        let claim: String = claim.iter().map(|b| format!("{b:02x}")).collect();
        let lease = i64::try_from(lease_secs).unwrap_or(i64::MAX / 2);
        let mut tx = write::begin(self.write()).await?;
        sqlx::query(concat!(
            "UPDATE webhook_queue SET claim = $3, claimed_until = ",
            epoch!(),
            " + $2 WHERE (hook_id, event_id) IN (
                SELECT q.hook_id, q.event_id FROM webhook_queue q
                JOIN webhooks h ON h.id = q.hook_id
                WHERE q.due_at <= ",
            epoch!(),
            " AND q.claimed_until <= ",
            epoch!(),
            " AND h.paused_at IS NULL ORDER BY q.due_at, q.event_id ",
            limit!("$1"),
            ")"
        ))
        .bind(i64::from(limit))
        .bind(lease)
        .bind(&claim)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        #[derive(sqlx::FromRow)]
        struct Claimed {
            hook_id: String,
            url: String,
            secret: String,
            attempts: i64,
            #[sqlx(flatten)]
            event: EventRow,
        }
        let rows: Vec<Claimed> = sqlx::query_as(concat!(
            "SELECT q.hook_id, h.url, h.secret, q.attempts, ",
            event_columns!(),
            " FROM webhook_queue q JOIN webhooks h ON h.id = q.hook_id
             JOIN events e ON e.id = q.event_id
             WHERE q.claim = $1 ORDER BY q.event_id, q.hook_id"
        ))
        .bind(&claim)
        .fetch_all(self.read())
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(Delivery {
                    hook_id: r.hook_id,
                    url: r.url,
                    secret: r.secret,
                    attempts: r.attempts,
                    event: r.event.decode()?,
                })
            })
            .collect()
    }

    async fn finish_deliveries(&self, attempts: &[Attempt<'_>]) -> Result<Vec<String>> {
        if attempts.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = write::begin(self.write()).await?;
        // Every attempt recorded; the delivered ones leave the queue; in a few statements.
        for chunk in pow2_chunks(attempts) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO webhook_deliveries (hook_id, event_id, attempt, status, error) ",
            );
            insert.push_values(chunk, |mut row, a| {
                row.push_bind(a.hook_id)
                    .push_bind(a.event_id)
                    .push_bind(a.attempt)
                    .push_bind(a.status.map(i64::from))
                    .push_bind(a.error);
            });
            insert.build().execute(&mut *tx).await?;
        }
        let delivered: Vec<&Attempt<'_>> = attempts.iter().filter(|a| a.succeeded()).collect();
        for chunk in pow2_chunks(&delivered) {
            let mut delete =
                sqlx::QueryBuilder::new("DELETE FROM webhook_queue WHERE (hook_id, event_id) IN (");
            let mut pairs = delete.separated(", ");
            for a in chunk {
                pairs.push("(");
                pairs.push_bind_unseparated(a.hook_id);
                pairs.push_unseparated(", ");
                pairs.push_bind_unseparated(a.event_id);
                pairs.push_unseparated(")");
            }
            delete.push(")");
            delete.build().execute(&mut *tx).await?;
        }
        // Each hook's state once: reset by its last success, or its failures counted.
        let mut hooks: Vec<&str> = attempts.iter().map(|a| a.hook_id).collect();
        hooks.sort_unstable();
        hooks.dedup();
        let mut paused = Vec::new();
        // Hooks whose every attempt succeeded, by their last status: reset in one statement
        // per status (most often one), not one per hook.
        let mut all_ok: Vec<(Option<i64>, &str)> = Vec::new();
        for hook in hooks {
            let mine: Vec<&Attempt<'_>> = attempts.iter().filter(|a| a.hook_id == hook).collect();
            let last = mine[mine.len() - 1];
            for failed in mine.iter().filter(|a| !a.succeeded()) {
                requeue(&mut tx, failed).await?;
            }
            if mine.iter().all(|a| a.succeeded()) {
                all_ok.push((last.status.map(i64::from), hook));
                continue;
            }
            // A success among them resets the count first; the failures after it count.
            let (reset, counted) = match mine.iter().rposition(|a| a.succeeded()) {
                Some(i) => (true, (mine.len() - i - 1) as i64),
                None => (false, mine.len() as i64),
            };
            let failures_now: Option<i64> = sqlx::query_scalar(concat!(
                "UPDATE webhooks SET
                    failures = CASE WHEN $4 THEN 0 ELSE failures END + $5,
                    last_status = $2, last_attempt_at = ",
                now!(),
                ", paused_at = CASE WHEN paused_at IS NULL
                     AND CASE WHEN $4 THEN 0 ELSE failures END + $5 >= $3 THEN ",
                now!(),
                " ELSE paused_at END
                 WHERE id = $1 RETURNING failures"
            ))
            .bind(hook)
            .bind(last.status.map(i64::from))
            .bind(i64::from(last.pause_after))
            .bind(reset)
            .bind(counted)
            .fetch_optional(&mut *tx)
            .await?;
            // Paused by these attempts: the count crossed the limit with them.
            let limit = i64::from(last.pause_after);
            let paused_now =
                failures_now.is_some_and(|now| now >= limit && (reset || now - counted < limit));
            if paused_now {
                paused.push(hook.to_owned());
            }
        }
        all_ok.sort_unstable();
        for same in all_ok.chunk_by(|a, b| a.0 == b.0) {
            let status = same[0].0;
            for chunk in pow2_chunks(same) {
                let mut reset = sqlx::QueryBuilder::new(concat!(
                    "UPDATE webhooks SET failures = 0, last_attempt_at = ",
                    now!(),
                    ", last_status = "
                ));
                reset.push_bind(status).push(" WHERE id IN (");
                let mut ids = reset.separated(", ");
                for (_, hook) in chunk {
                    ids.push_bind(*hook);
                }
                reset.push(")");
                reset.build().execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        Ok(paused)
    }
}

/// A failed attempt's delivery, inside `tx`: due again after its delay, or given up.
async fn requeue(tx: &mut Conn, attempt: &Attempt<'_>) -> Result<()> {
    match attempt.retry_in {
        Some(secs) => {
            sqlx::query(concat!(
                "UPDATE webhook_queue SET attempts = $3, claimed_until = 0, claim = NULL, due_at = ",
                epoch!(),
                " + $4 WHERE hook_id = $1 AND event_id = $2"
            ))
            .bind(attempt.hook_id)
            .bind(attempt.event_id)
            .bind(attempt.attempt)
            .bind(i64::try_from(secs).unwrap_or(i64::MAX / 2))
            .execute(&mut *tx)
            .await?;
        }
        None => {
            sqlx::query("DELETE FROM webhook_queue WHERE hook_id = $1 AND event_id = $2")
                .bind(attempt.hook_id)
                .bind(attempt.event_id)
                .execute(&mut *tx)
                .await?;
        }
    }
    Ok(())
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("an event row that does not decode: {what:.200}"))
}
