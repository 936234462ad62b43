-- 2025-era MCP sessions (`initialize` → `Mcp-Session-Id`), kept so that any replica answers any
-- session, and a session outlives the replica that opened it. What rmcp needs to bring a session
-- back is its `initialize` parameters (`state`, JSON). Times are Unix seconds by the database's
-- clock. `used_at` is NULL until a replica sees a request of the session, then bumped while the
-- session is in use (at most once a minute per replica); a session whose last use (or creation)
-- is older than the idle limit is deleted. Ephemeral: `skillreg migrate` does not copy them.
-- As migrations/sqlite/0016.
CREATE TABLE mcp_sessions (
    id          TEXT COLLATE "C" PRIMARY KEY,
    state       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    used_at     BIGINT
);

CREATE INDEX mcp_sessions_last_use ON mcp_sessions ((coalesce(used_at, created_at)));
