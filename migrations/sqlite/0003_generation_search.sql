-- Change tracking for derived data (the search index) and recency for completion.
--
-- Every change to what a skill serves bumps the catalog generation and stamps the skill with it,
-- so a reader that last saw generation G finds what changed with `updated_gen > G`, even when
-- another process (an import) made the change.

CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO meta (key, value) VALUES ('generation', 1);

ALTER TABLE skills ADD COLUMN updated_gen INTEGER NOT NULL DEFAULT 1;
ALTER TABLE skills ADD COLUMN last_published_at TEXT;
ALTER TABLE namespaces ADD COLUMN last_published_at TEXT;

UPDATE skills SET last_published_at =
    (SELECT max(v.published_at) FROM versions v WHERE v.skill_id = skills.id);
UPDATE namespaces SET last_published_at =
    (SELECT max(s.last_published_at) FROM skills s WHERE s.namespace_id = namespaces.id);

CREATE INDEX skills_by_updated_gen ON skills (updated_gen);
CREATE INDEX skills_by_name ON skills (name, last_published_at);
CREATE INDEX skills_by_recency ON skills (last_published_at);
CREATE INDEX skills_by_namespace_recency ON skills (namespace_id, last_published_at);
CREATE INDEX namespaces_by_recency ON namespaces (last_published_at);
