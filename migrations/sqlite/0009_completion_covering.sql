-- Name completion across namespaces counts up to 10,000 matches. With the namespace id in the
-- index the count and the ranking read the index alone: before, each match read its skills row
-- (for namespace_id), 32 ms of a 1M catalog's 42 ms completion.
DROP INDEX skills_by_name;
CREATE INDEX skills_by_name ON skills (name, last_published_at, namespace_id);
