-- Sources: what the registry reads skills from itself (`skillreg import git`, `skillreg mirror`)
-- and `skillreg sync` reads again, each feeding one namespace.

-- Where a version's bytes were taken from (core::provenance::Provenance as JSON):
-- {"type":"git","repository","ref","commit","path"} or {"type":"mcp","server","uri"}. NULL for
-- versions uploaded or imported from a directory. Recorded once; never changes a byte.
ALTER TABLE versions ADD COLUMN provenance TEXT;

CREATE TABLE sources (
    id            INTEGER PRIMARY KEY,
    namespace_id  INTEGER NOT NULL REFERENCES namespaces (id),
    kind          TEXT NOT NULL,              -- 'git' or 'mcp'
    location      TEXT NOT NULL,              -- the repository URL, or the upstream server
    reference     TEXT NOT NULL DEFAULT '',   -- the Git ref asked for; '' reads the remote's HEAD
    subpath       TEXT NOT NULL DEFAULT '',   -- the repository's directory read; '' the whole tree
    fix           INTEGER NOT NULL DEFAULT 0, -- --fix repairs each SKILL.md's frontmatter
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    synced_at     TEXT,                       -- the last read that finished
    revision      TEXT,                       -- the commit it read (Git)
    UNIQUE (namespace_id, kind, location, reference, subpath)
);

-- The skills each source holds. A skill no longer found at its source is deprecated (never
-- deleted) and marked removed; when it is found there again, that deprecation is lifted.
CREATE TABLE source_skills (
    source_id   INTEGER NOT NULL REFERENCES sources (id),
    skill_id    INTEGER NOT NULL REFERENCES skills (id),
    removed_at  TEXT,
    PRIMARY KEY (source_id, skill_id)
) WITHOUT ROWID;
