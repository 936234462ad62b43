-- How often each version was read, per UTC day (days since 1970-01-01) and kind
-- (`core::usage::Kind`: get, skill_md, file, archive, well_known, clawhub_install,
-- client_install). Counted in memory by each replica and added here by a background flush (an
-- upsert that adds, so replicas sum). Nothing about who read is kept. As migrations/sqlite/0018.
CREATE TABLE usage_daily (
    version_id  BIGINT NOT NULL REFERENCES versions (id),
    day         BIGINT NOT NULL,
    kind        TEXT COLLATE "C" NOT NULL,
    count       BIGINT NOT NULL,
    PRIMARY KEY (version_id, day, kind)
);
