-- What each version requires (core::requires), as its root SKILL.md declares it: one row per
-- required skill (`namespace` set, `requirement` its version range) or expected MCP server
-- (`namespace` NULL, `name` the server, `requirement` where it is registered, if said), in
-- declaration order. Written in the version's publish transaction and never changed (a version
-- is immutable); read to resolve requirements and to find what requires a skill.
CREATE TABLE version_requires (
    version_id   INTEGER NOT NULL REFERENCES versions (id),
    position     INTEGER NOT NULL,
    namespace    TEXT,
    name         TEXT NOT NULL,
    requirement  TEXT,
    PRIMARY KEY (version_id, position)
);

CREATE INDEX version_requires_by_skill ON version_requires (namespace, name)
    WHERE namespace IS NOT NULL;
