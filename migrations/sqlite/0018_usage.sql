-- How often each version was read, per UTC day (days since 1970-01-01) and kind
-- (`core::usage::Kind`: get, skill_md, file, archive, well_known, clawhub_install,
-- client_install). Counted in memory and added here by a background flush (an upsert that adds).
-- Nothing about who read is kept. As migrations/postgres/0009.
CREATE TABLE usage_daily (
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    day         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    count       INTEGER NOT NULL,
    PRIMARY KEY (version_id, day, kind)
) WITHOUT ROWID;
