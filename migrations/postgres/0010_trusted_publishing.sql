-- Trusted publishing: CI jobs publish with a short-lived token exchanged for their OIDC token.
-- As migrations/sqlite/0019.
--
-- A trusted publisher of a namespace: an OIDC issuer and the claims a token of it must carry
-- (`claims`, JSON: repository, workflow, optional environment and ref; `core::trustpub`).
CREATE TABLE trusted_publishers (
    id          TEXT COLLATE "C" PRIMARY KEY,   -- `tp_` + 12 hex digits, safe to log
    namespace   TEXT COLLATE "C" NOT NULL,
    provider    TEXT NOT NULL,                  -- "github" | "gitlab"
    issuer      TEXT NOT NULL,
    claims      TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT skillreg_now()
);

CREATE INDEX trusted_publishers_issuer ON trusted_publishers (issuer);
CREATE INDEX trusted_publishers_namespace ON trusted_publishers (namespace);

-- A namespace that accepts versions only from its trusted publishers (and the admin).
ALTER TABLE namespaces ADD COLUMN trusted_only BOOLEAN NOT NULL DEFAULT false;

-- An exchanged token expires (Unix seconds by the database's clock; NULL: never) and names the
-- trusted publisher it was exchanged for (NULL: an ordinary token).
ALTER TABLE tokens ADD COLUMN expires_at BIGINT;
ALTER TABLE tokens ADD COLUMN publisher TEXT;
-- The CI job's claims an exchanged token publishes with (JSON: provider, issuer, repository,
-- workflow, ref, commit, run; `core::trustpub::publisher_claims`).
ALTER TABLE tokens ADD COLUMN claims TEXT;

-- Who published a version from CI (the exchanged token's claims, JSON); NULL otherwise. Served
-- as `_meta["dev.skillreg/publisher"]`.
ALTER TABLE versions ADD COLUMN publisher TEXT;

-- The OIDC tokens already exchanged, by `jti`, kept until they expire: a token is exchanged
-- once, so one replayed after its exchanged token was revoked is refused.
CREATE TABLE oidc_jtis (
    jti         TEXT COLLATE "C" PRIMARY KEY,
    issuer      TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);

CREATE INDEX oidc_jtis_expiry ON oidc_jtis (expires_at);
