-- 2025-era MCP sessions (`initialize` → `Mcp-Session-Id`), kept so that any process sharing the
-- database answers any session, and a session outlives the process that opened it. What rmcp needs to bring a session
-- back is its `initialize` parameters (`state`, JSON). Times are Unix seconds by the database's
-- clock. `used_at` is NULL until a process sees a request of the session, then bumped while the
-- session is in use (at most once a minute per process); a session whose last use (or creation)
-- is older than the idle limit is deleted. Ephemeral: `skillreg migrate` does not copy them.
-- As migrations/postgres/0007.
CREATE TABLE mcp_sessions (
    id          TEXT PRIMARY KEY,
    state       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    used_at     INTEGER
);

CREATE INDEX mcp_sessions_last_use ON mcp_sessions ((coalesce(used_at, created_at)));
