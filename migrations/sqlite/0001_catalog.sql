-- The catalog: namespaces own skills; a skill has immutable versions; a version has files whose
-- bytes live once in `blobs`, addressed by digest. `listing` is the current catalog in URI order,
-- kept in step with `skills.current_version_id` inside every publish transaction, so a page of
-- skills/list is one index range scan.

CREATE TABLE namespaces (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE skills (
    id                  INTEGER PRIMARY KEY,
    namespace_id        INTEGER NOT NULL REFERENCES namespaces (id),
    name                TEXT NOT NULL,
    created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    -- Highest non-yanked version (releases before pre-releases); NULL when every version is yanked.
    current_version_id  INTEGER REFERENCES versions (id),
    deprecated_at       TEXT,
    deprecation_message TEXT,
    UNIQUE (namespace_id, name)
);

-- Exact bytes, stored once however many versions share them. `digest` is 'sha256:<hex>'.
CREATE TABLE blobs (
    digest  TEXT PRIMARY KEY,
    size    INTEGER NOT NULL,
    data    BLOB NOT NULL
);

CREATE TABLE versions (
    id              INTEGER PRIMARY KEY,
    skill_id        INTEGER NOT NULL REFERENCES skills (id),
    version         TEXT NOT NULL,
    -- Digest over (path, mode, file digest) of every file: equal content, equal value.
    content_digest  TEXT NOT NULL,
    file_count      INTEGER NOT NULL,
    total_size      INTEGER NOT NULL,
    warnings        TEXT NOT NULL DEFAULT '[]',  -- JSON array of {code, message}
    published_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    published_by    TEXT,
    yanked_at       TEXT,
    yank_reason     TEXT,
    UNIQUE (skill_id, version)
);

CREATE TABLE version_files (
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    path        TEXT NOT NULL,
    digest      TEXT NOT NULL REFERENCES blobs (digest),
    size        INTEGER NOT NULL,
    mode        INTEGER NOT NULL,
    PRIMARY KEY (version_id, path)
) WITHOUT ROWID;

-- The skills a version serves: the root one (subpath '') and nested ones.
CREATE TABLE version_entries (
    version_id   INTEGER NOT NULL REFERENCES versions (id),
    subpath      TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    frontmatter  TEXT NOT NULL,  -- JSON object, verbatim
    PRIMARY KEY (version_id, subpath)
) WITHOUT ROWID;

CREATE TABLE listing (
    uri         TEXT PRIMARY KEY,  -- skill://<namespace>/<name>[/<subpath>]/SKILL.md
    skill_id    INTEGER NOT NULL REFERENCES skills (id),
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    subpath     TEXT NOT NULL
) WITHOUT ROWID;

CREATE INDEX listing_by_skill ON listing (skill_id);
