-- Covering index for name completion within a namespace: the prefix range scan reads name and
-- recency without touching the table.
CREATE INDEX skills_by_namespace_name_recency ON skills (namespace_id, name, last_published_at);
