-- As migrations/sqlite/0020.
CREATE TABLE version_requires (
    version_id   BIGINT NOT NULL REFERENCES versions (id),
    position     BIGINT NOT NULL,
    namespace    TEXT COLLATE "C",
    name         TEXT COLLATE "C" NOT NULL,
    requirement  TEXT,
    PRIMARY KEY (version_id, position)
);

CREATE INDEX version_requires_by_skill ON version_requires (namespace, name)
    WHERE namespace IS NOT NULL;
