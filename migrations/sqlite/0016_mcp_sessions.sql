-- 2025-era MCP sessions (`initialize` → `Mcp-Session-Id`), kept so that any process serving this
-- database answers any session, and a session outlives the process that opened it. What rmcp
-- needs to bring a session back is its `initialize` parameters (`state`, JSON). Times are Unix
-- seconds by the database's clock: `used_at` is bumped while the session is in use (at most once
-- a minute per process), and rows unused for longer than the idle limit are deleted. Ephemeral:
-- `skillreg migrate` does not copy them. As migrations/postgres/0007.
CREATE TABLE mcp_sessions (
    id          TEXT PRIMARY KEY,
    state       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    used_at     INTEGER NOT NULL
);

CREATE INDEX mcp_sessions_used_at ON mcp_sessions (used_at);
