-- A kept skills/list entry's id names its bytes and no others, ever: a page reads each row's
-- entry id with the row and the bodies by id afterwards, in another statement. A rowid table
-- gives the largest id again once its row is deleted, so ids come from this counter instead
-- (store::sqlite::skills, `keep_serialized`), which only grows.
INSERT INTO meta (key, value)
VALUES ('last_entry_id', (SELECT coalesce(max(id), 0) FROM listing_entries));
