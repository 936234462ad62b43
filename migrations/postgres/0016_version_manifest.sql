-- Each version's manifest on its own row, as one JSON value, as SQLite's
-- (migrations/sqlite/0010): its files (path, digest, size, mode) by path, then its entries
-- (subpath, name, description, frontmatter as JSON text) by subpath. Derived from version_files
-- and version_entries, which stay the record: a manifest read is then one row per version, not
-- a row per file and per entry. Written at publish; filled here for versions published before,
-- and by `skillreg migrate` for versions copied in (the same statement,
-- store::postgres::skills::FILL_MANIFESTS).
ALTER TABLE versions ADD COLUMN manifest TEXT;

UPDATE versions SET manifest = json_build_array(
    (SELECT coalesce(json_agg(json_build_array(f.path, f.digest, f.size, f.mode) ORDER BY f.path),
                     '[]')
     FROM version_files f WHERE f.version_id = versions.id),
    (SELECT coalesce(json_agg(json_build_array(e.subpath, e.name, e.description, e.frontmatter)
                              ORDER BY e.subpath), '[]')
     FROM version_entries e WHERE e.version_id = versions.id))::text
WHERE manifest IS NULL;
