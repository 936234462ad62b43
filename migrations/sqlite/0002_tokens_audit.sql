-- Publishing: scoped API tokens (stored only as hashes) and an append-only audit log.

CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,          -- public identifier, safe to log
    hash         TEXT NOT NULL UNIQUE,      -- sha256 of the secret; the secret is never stored
    description  TEXT NOT NULL,
    namespaces   TEXT NOT NULL,             -- JSON array of namespaces; ["*"] means every one
    actions      TEXT NOT NULL,             -- JSON array of "publish" | "yank" | "deprecate" | "read"
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    revoked_at   TEXT
);

CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    actor      TEXT NOT NULL,               -- "admin", a token id, "import" or "seed"
    action     TEXT NOT NULL,
    namespace  TEXT,
    name       TEXT,
    version    TEXT,
    details    TEXT NOT NULL DEFAULT '{}'   -- JSON: digests, reasons, scopes
);

CREATE TRIGGER audit_log_is_append_only_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE TRIGGER audit_log_is_append_only_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
