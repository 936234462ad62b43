-- A listing row may carry its skills/list entry as the MCP surface serializes it (the part that
-- is the version's own: URI, frontmatter, resources with digests and sizes, version, source), so
-- a page at 1M skills is one range of listing rows and a concatenation instead of a manifest
-- read, decoded and serialized per entry. The bytes are derived and opaque to the store: the
-- registry has them made by the transport that serves them and fills rows that have none in the
-- background (store::sqlite::skills, `keep_serialized`); a page built without them is the same.
--
-- They live in a table of their own, not on the listing row: `listing` is WITHOUT ROWID, where a
-- row over about a kilobyte spills into an overflow page of its own, while here a row up to a
-- page stays inline and the rows filled in URI order lie in URI order. No foreign key: deleting
-- an entry would then scan the listing for rows naming it. The trigger keeps one entry per row.
CREATE TABLE listing_entries (
    id     INTEGER PRIMARY KEY,
    body  TEXT NOT NULL
);

ALTER TABLE listing ADD COLUMN entry_id INTEGER;

-- The rows the background fill has yet to serialize (every row, right after this migration).
CREATE INDEX listing_unserialized ON listing (uri) WHERE entry_id IS NULL;

CREATE TRIGGER listing_entry_dropped AFTER DELETE ON listing
    WHEN old.entry_id IS NOT NULL
BEGIN
    DELETE FROM listing_entries WHERE id = old.entry_id;
END;

-- Which serialization the kept entries are in (the transport's format number; 0: none yet).
INSERT INTO meta (key, value) VALUES ('entry_format', 0);
