-- Which catalog this is, as a random number drawn once: a search index records it with its
-- generation, so that an index built from another database (a snapshot restored on the wrong
-- replica, a data directory pointed at another database) is rebuilt rather than trusted.
-- `skillreg migrate` copies it: a copy is the same catalog.
INSERT INTO meta (key, value) VALUES ('catalog_id', floor(random() * 4611686018427387903)::bigint);
