-- Each version's manifest on its own row, as one JSON value: its files (path, digest, size,
-- mode) by path, then its entries (subpath, name, description, frontmatter as JSON text) by
-- subpath. Derived from version_files and version_entries, which stay the record: a skills/list
-- page then reads one row per version instead of two index ranges, about a third of the pages
-- it read at 1M skills. Written at publish; filled here for versions published before, and by
-- `skillreg migrate` for versions copied in (the same statement, store::sqlite::skills).
ALTER TABLE versions ADD COLUMN manifest TEXT;

UPDATE versions SET manifest = json_array(
    (SELECT json_group_array(json_array(f.path, f.digest, f.size, f.mode) ORDER BY f.path)
     FROM version_files f WHERE f.version_id = versions.id),
    (SELECT json_group_array(json_array(e.subpath, e.name, e.description, e.frontmatter)
                             ORDER BY e.subpath)
     FROM version_entries e WHERE e.version_id = versions.id))
WHERE manifest IS NULL;
