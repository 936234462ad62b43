-- Keyless Sigstore signatures (core::signature::keyless): a namespace key row may be an
-- identity policy instead of a key or CA, the OIDC issuer its Fulcio certificates must name
-- (exact) with `identity` the policy for their email or URI name. NULL for keys and CAs.
ALTER TABLE namespace_keys ADD COLUMN issuer TEXT;
