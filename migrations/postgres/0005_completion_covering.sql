-- Name completion across namespaces counts up to 10,000 matches. With the namespace id in the
-- index the count and the ranking can read the index alone. As migrations/sqlite/0009.
DROP INDEX skills_by_name;
CREATE INDEX skills_by_name ON skills (name, last_published_at, namespace_id);
