-- Each listing row carries what a skills/list page shows of its skill and version besides the
-- entry: the namespace id, the skill's name and deprecation, the version and its scan (which
-- `skills` and `versions` stay the record of). A page then reads the listing's own rows, one
-- range in URI order, and the small namespaces table, instead of looking up a `skills` and a
-- `versions` row per entry, which lie far apart in a 1M catalog. Kept current by every
-- write to a skill (store::sqlite::write: after the listing rows are written, and in `touch`);
-- filled here for rows written before, and by `skillreg migrate` for rows copied in (the same
-- statement).
ALTER TABLE listing ADD COLUMN namespace_id INTEGER;
ALTER TABLE listing ADD COLUMN skill TEXT;
ALTER TABLE listing ADD COLUMN version TEXT;
ALTER TABLE listing ADD COLUMN verdict TEXT;
ALTER TABLE listing ADD COLUMN findings TEXT;
ALTER TABLE listing ADD COLUMN deprecated INTEGER;
ALTER TABLE listing ADD COLUMN deprecation_message TEXT;

UPDATE listing SET (namespace_id, skill, version, verdict, findings, deprecated,
                    deprecation_message) =
    (SELECT s.namespace_id, s.name, v.version, v.verdict, v.findings,
            s.deprecated_at IS NOT NULL, s.deprecation_message
     FROM versions v JOIN skills s ON s.id = v.skill_id WHERE v.id = listing.version_id)
WHERE skill IS NULL;
