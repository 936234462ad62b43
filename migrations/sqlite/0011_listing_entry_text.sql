-- Each listing row carries its entry's name and description, as version_entries holds them
-- (which stays the record). A skills/list page then reads no version_entries row: that table
-- keeps whole rows in its interior pages too (WITHOUT ROWID), so a lookup there read more pages
-- than any other part of a page at 1M skills. Written with every listing row; filled here for
-- rows written before, and by `skillreg migrate` for rows copied in (the same statement,
-- store::sqlite::write).
ALTER TABLE listing ADD COLUMN name TEXT;
ALTER TABLE listing ADD COLUMN description TEXT;

UPDATE listing SET (name, description) =
    (SELECT e.name, e.description FROM version_entries e
     WHERE e.version_id = listing.version_id AND e.subpath = listing.subpath)
WHERE name IS NULL;
