-- Private namespaces, and catalog counts kept current by triggers.
--
-- A private namespace's skills are visible only to tokens that may read it (and the admin), on
-- every surface. The counts let /metrics (which anyone may scrape) read eight rows instead of
-- counting every table: a scrape costs the same at any catalog size. Upserts that find the row
-- (`ON CONFLICT DO UPDATE`/`DO NOTHING`) fire no INSERT trigger, so a count moves only when a
-- row is really added or removed.

ALTER TABLE namespaces ADD COLUMN private INTEGER NOT NULL DEFAULT 0;

INSERT INTO meta (key, value) SELECT 'count_namespaces', count(*) FROM namespaces;
INSERT INTO meta (key, value) SELECT 'count_skills', count(*) FROM skills;
INSERT INTO meta (key, value) SELECT 'count_versions', count(*) FROM versions;
INSERT INTO meta (key, value) SELECT 'count_files', count(*) FROM version_files;
INSERT INTO meta (key, value) SELECT 'count_blobs', count(*) FROM blobs;
INSERT INTO meta (key, value) SELECT 'count_blob_bytes', coalesce(sum(size), 0) FROM blobs;
INSERT INTO meta (key, value) SELECT 'count_audit_entries', count(*) FROM audit_log;
INSERT INTO meta (key, value) SELECT 'count_tokens', count(*) FROM tokens;

CREATE TRIGGER count_namespaces_insert AFTER INSERT ON namespaces
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'count_namespaces'; END;
CREATE TRIGGER count_namespaces_delete AFTER DELETE ON namespaces
BEGIN UPDATE meta SET value = value - 1 WHERE key = 'count_namespaces'; END;

CREATE TRIGGER count_skills_insert AFTER INSERT ON skills
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'count_skills'; END;
CREATE TRIGGER count_skills_delete AFTER DELETE ON skills
BEGIN UPDATE meta SET value = value - 1 WHERE key = 'count_skills'; END;

CREATE TRIGGER count_versions_insert AFTER INSERT ON versions
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'count_versions'; END;
CREATE TRIGGER count_versions_delete AFTER DELETE ON versions
BEGIN UPDATE meta SET value = value - 1 WHERE key = 'count_versions'; END;

CREATE TRIGGER count_files_insert AFTER INSERT ON version_files
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'count_files'; END;
CREATE TRIGGER count_files_delete AFTER DELETE ON version_files
BEGIN UPDATE meta SET value = value - 1 WHERE key = 'count_files'; END;

CREATE TRIGGER count_blobs_insert AFTER INSERT ON blobs
BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'count_blobs';
    UPDATE meta SET value = value + NEW.size WHERE key = 'count_blob_bytes';
END;
CREATE TRIGGER count_blobs_delete AFTER DELETE ON blobs
BEGIN
    UPDATE meta SET value = value - 1 WHERE key = 'count_blobs';
    UPDATE meta SET value = value - OLD.size WHERE key = 'count_blob_bytes';
END;

CREATE TRIGGER count_audit_insert AFTER INSERT ON audit_log
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'count_audit_entries'; END;

CREATE TRIGGER count_tokens_insert AFTER INSERT ON tokens
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'count_tokens'; END;
CREATE TRIGGER count_tokens_delete AFTER DELETE ON tokens
BEGIN UPDATE meta SET value = value - 1 WHERE key = 'count_tokens'; END;
