-- Each listing row carries what a skills/list page shows of its entry, skill and version, as
-- SQLite's does (migrations/sqlite/0011 and 0012): the entry's name and description, the
-- namespace id, the skill's name and deprecation, the version and its scan; and, unlike
-- SQLite's, its namespace's name and privacy. `version_entries`, `skills`, `versions` and
-- `namespaces` stay the record. A page is then one range of the listing's primary key, instead
-- of a join of five tables that PostgreSQL planned again for every page (a page took 5-7x
-- SQLite's time, most of it planning; even a join with the namespaces alone took longer to plan
-- than to run).
--
-- Written with every listing row (store::postgres::write), brought up to date in `touch`, which
-- every other change to a skill or its versions ends with, and for a namespace's privacy when
-- it is set; filled here for rows written before, and by `skillreg migrate` for rows copied in
-- (`FILL_LISTING`, `FILL_LISTING_VERSION` in store/sql/listing.rs).
ALTER TABLE listing
    ADD COLUMN name TEXT,
    ADD COLUMN description TEXT,
    ADD COLUMN namespace_id BIGINT,
    ADD COLUMN skill TEXT,
    ADD COLUMN version TEXT,
    ADD COLUMN verdict TEXT,
    ADD COLUMN findings TEXT,
    ADD COLUMN deprecated BOOLEAN,
    ADD COLUMN deprecation_message TEXT,
    ADD COLUMN namespace TEXT,
    ADD COLUMN private BOOLEAN;

UPDATE listing SET (name, description) =
    (SELECT e.name, e.description FROM version_entries e
     WHERE e.version_id = listing.version_id AND e.subpath = listing.subpath)
WHERE name IS NULL;

UPDATE listing SET (namespace_id, skill, version, verdict, findings, deprecated,
                    deprecation_message, namespace, private) =
    (SELECT s.namespace_id, s.name, v.version, v.verdict, v.findings,
            s.deprecated_at IS NOT NULL, s.deprecation_message, n.name, n.private
     FROM versions v JOIN skills s ON s.id = v.skill_id JOIN namespaces n ON n.id = s.namespace_id WHERE v.id = listing.version_id)
WHERE skill IS NULL;
