-- Packs (core::pack): a named, versioned, immutable set of exact skill versions, published by a
-- token with the `pack` action and installed as one. A pack version never changes.
CREATE TABLE pack_versions (
    id            INTEGER PRIMARY KEY,
    namespace_id  INTEGER NOT NULL REFERENCES namespaces (id),
    name          TEXT NOT NULL,
    version       TEXT NOT NULL,
    description   TEXT NOT NULL,
    members       TEXT NOT NULL,   -- JSON array of "namespace/name@version", sorted
    published_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    published_by  TEXT,
    UNIQUE (namespace_id, name, version)
);
