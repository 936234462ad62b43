-- Signed versions (core::signature, the OpenSSF Model Signing v1.0 format). Signing never
-- changes a stored byte or digest: the signatures are kept beside the version.

-- Who signed the version, as served with it (`_meta["dev.skillreg/signatures"]`): a JSON array
-- of core::signature::Signed. NULL for a version stored unsigned (before signing, or with it off).
ALTER TABLE versions ADD COLUMN signatures TEXT;

-- The Sigstore bundles themselves, exactly as made (the registry's) or uploaded (an author's).
CREATE TABLE version_signatures (
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    signer      TEXT NOT NULL,   -- 'registry' or 'author'
    key_id      TEXT NOT NULL,   -- the sha256 of the key's PEM text, hex (the bundle's hint)
    bundle      TEXT NOT NULL,
    PRIMARY KEY (version_id, signer)
) WITHOUT ROWID;

-- Every public key the registry has signed with (a rotated key, or replicas each holding their
-- own), published at /.well-known/skillreg/signing-keys.json so that older signatures stay
-- verifiable.
CREATE TABLE signing_keys (
    key_id      TEXT PRIMARY KEY,
    public_key  TEXT NOT NULL,   -- PEM SubjectPublicKeyInfo
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) WITHOUT ROWID;

-- The keys a namespace's authors sign with (`publish --signature`), registered by an admin,
-- and whether every new version of the namespace must carry an author's signature.
CREATE TABLE namespace_keys (
    namespace_id  INTEGER NOT NULL REFERENCES namespaces (id),
    key_id        TEXT NOT NULL,
    identity      TEXT NOT NULL,   -- whose key it is, as served with the versions it signs
    public_key    TEXT NOT NULL,   -- PEM SubjectPublicKeyInfo
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (namespace_id, key_id)
) WITHOUT ROWID;

ALTER TABLE namespaces ADD COLUMN signature_required INTEGER NOT NULL DEFAULT 0;
