-- The events feed (`GET /v1/events`, MCP's `events/poll`) and the webhooks that deliver it.
-- As migrations/postgres/0012.
--
-- Every change to the catalog is one row of `events`, written in the transaction of the change
-- it records. Ids are given out in commit order (one writer at a time) and never reused
-- (AUTOINCREMENT): the id is the feed's cursor. `kind` is `core::event::EventKind`; the subject
-- is the namespace, and the skill and version where there is one; `pending` marks the publish of
-- a version waiting for review (shown only to those who see pending versions).
CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    kind       TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    name       TEXT,
    version    TEXT,
    pending    INTEGER NOT NULL DEFAULT 0,
    payload    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_at ON events (at);

-- The highest event id pruned by the retention window (one row, absent before the first
-- prune): a cursor before it has missed events (`truncated`).
CREATE TABLE event_horizon (
    one             INTEGER PRIMARY KEY CHECK (one = 1),
    pruned_through  INTEGER NOT NULL
);

-- A namespace's webhooks: where its events are POSTed, signed with `secret` (Standard
-- Webhooks). `kinds` is the event filter as ",published,yanked," (empty: every kind).
-- `queued_through` is the last event id fanned out to the queue (or before the hook existed).
-- `failures` counts consecutive failed attempts; the hook is paused (`paused_at`) when it
-- reaches `webhook_pause_after`.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    namespace       TEXT NOT NULL,
    url             TEXT NOT NULL,
    kinds           TEXT NOT NULL,
    secret          TEXT NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    created_by      TEXT NOT NULL,
    queued_through  INTEGER NOT NULL,
    failures        INTEGER NOT NULL DEFAULT 0,
    paused_at       TEXT,
    last_status     INTEGER,
    last_attempt_at TEXT
);
CREATE INDEX webhooks_namespace ON webhooks (namespace);

-- Deliveries not done yet: due at `due_at` (Unix seconds), claimed by one worker (its round's
-- random `claim`) until `claimed_until`.
CREATE TABLE webhook_queue (
    hook_id        TEXT NOT NULL,
    event_id       INTEGER NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    due_at         INTEGER NOT NULL,
    claimed_until  INTEGER NOT NULL DEFAULT 0,
    claim          TEXT,
    PRIMARY KEY (hook_id, event_id)
) WITHOUT ROWID;
CREATE INDEX webhook_queue_due ON webhook_queue (due_at);

-- Every delivery attempt: its HTTP status (NULL when no answer came) or what went wrong.
CREATE TABLE webhook_deliveries (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    hook_id   TEXT NOT NULL,
    event_id  INTEGER NOT NULL,
    attempt   INTEGER NOT NULL,
    at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    status    INTEGER,
    error     TEXT
);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (hook_id, id);
