-- The content scan of every version (core::scan): its verdict under the policy it was scanned
-- with, and the findings behind it (JSON array of {rule, severity, file, line, excerpt}).
-- Versions stored before scanning existed are 'unscanned' until `skillreg rescan`. Scanning
-- reads the bytes; it never changes them.
ALTER TABLE versions ADD COLUMN verdict TEXT NOT NULL DEFAULT 'unscanned';
ALTER TABLE versions ADD COLUMN findings TEXT NOT NULL DEFAULT '[]';
CREATE INDEX versions_by_verdict ON versions (verdict, id);

-- Revocation: a version withdrawn for security reasons. Stronger than a yank: it is served to
-- nobody (pinned URIs included), leaves the listing, and is announced in the public revocation
-- feed (GET /v1/revocations?since=) until the admin reverses it.
ALTER TABLE versions ADD COLUMN revoked_at TEXT;
ALTER TABLE versions ADD COLUMN revoke_reason TEXT;
CREATE INDEX versions_by_revocation ON versions (revoked_at, id) WHERE revoked_at IS NOT NULL;

-- The review gate: in a namespace that requires review, a new version is stored pending until
-- a token with the `approve` action approves it. A pending version is never current, never
-- served over MCP, and shown over REST and on the web page only to holders of the namespace's
-- tokens.
ALTER TABLE namespaces ADD COLUMN review_required INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
