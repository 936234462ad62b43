//! Plain records every layer shares: ids of stored things, a version's file, a recorded source, a token, an audit
//! log entry, and the reports of operations on the whole store. Storage decodes its rows into
//! them; the registry and the transports read them as they are (no layer renames them).

use serde_json::Value;

use super::provenance::SourceSpec;
use super::{Action, Digest, Namespace, Scope, Timestamp};

/// A published version's id: given once, never reused.
pub type VersionId = i64;
/// One file of a version: its path, the digest and size of its exact bytes, and its mode
/// (0644 or 0755).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub path: String,
    pub digest: Digest,
    pub size: u64,
    pub mode: u32,
}

/// A recorded source's id.
pub type SourceId = i64;

/// A recorded source (`skillreg import git`, `skillreg mirror`), as `skillreg sync` reads it
/// again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRecord {
    pub id: SourceId,
    pub namespace: Namespace,
    pub spec: SourceSpec,
    pub created_at: Timestamp,
    /// When the last read of it finished.
    pub synced_at: Option<Timestamp>,
    /// The commit the last read took (Git).
    pub revision: Option<String>,
}

/// A stored token (never its secret).
#[derive(Debug, Clone)]
pub struct TokenRecord {
    pub id: String,
    pub description: String,
    pub scope: Scope,
    pub actions: Vec<Action>,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
    /// When it stops being accepted (Unix seconds): tokens exchanged by trusted publishing.
    pub expires_at: Option<i64>,
    /// The trusted publisher it was exchanged for (`tp_…`); `None` for an ordinary token.
    pub publisher: Option<String>,
    /// The CI job's claims its versions record (JSON text), for an exchanged token.
    pub claims: Option<String>,
}

/// One audit log entry.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    pub id: i64,
    pub at: Timestamp,
    pub actor: String,
    pub action: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub details: Value,
}

/// Row counts and stored bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub namespaces: i64,
    pub skills: i64,
    pub versions: i64,
    pub files: i64,
    pub blobs: i64,
    pub blob_bytes: i64,
    pub audit_entries: i64,
    pub tokens: i64,
}

/// What a scrub of the whole store found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct VerifyReport {
    pub blobs_checked: u64,
    pub bytes_checked: u64,
    pub versions_checked: u64,
    /// Each damaged thing, described.
    pub problems: Vec<String>,
}

impl VerifyReport {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What a copy moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CopyReport {
    /// Rows copied, all tables together.
    pub rows: u64,
    /// Bytes of blobs copied.
    pub blob_bytes: u64,
    /// The generation the copy reflects (the source's, unchanged during the copy).
    pub generation: i64,
}

/// A public key the registry has signed versions with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeyRecord {
    pub key_id: String,
    /// PEM `SubjectPublicKeyInfo`.
    pub public_key: String,
    pub created_at: Timestamp,
}

/// A key a namespace's authors sign with, a CA their signing certificates chain to (its PEM
/// is a certificate; `core::signature::cert`), or a keyless identity (an `issuer`;
/// `core::signature::keyless`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceKeyRecord {
    /// A key's hint, a CA certificate's sha256 (DER), or a keyless policy's id.
    pub key_id: String,
    /// Whose key it is, as served with the versions it signs; for a CA, the policy its leaves'
    /// email or URI names must meet (`*`, `prefix*` or a value); keyless, the policy for the
    /// Fulcio certificate's email or URI name.
    pub identity: String,
    /// PEM `SubjectPublicKeyInfo`, or a PEM CA certificate; empty for a keyless identity.
    pub public_key: String,
    /// Keyless: the OIDC issuer the Fulcio certificate must name (exact).
    pub issuer: Option<String>,
    pub created_at: Timestamp,
}

impl NamespaceKeyRecord {
    /// What it is: `key`, `ca` or `keyless`.
    pub fn kind(&self) -> &'static str {
        if self.issuer.is_some() {
            "keyless"
        } else if super::signature::cert::is_certificate_pem(&self.public_key) {
            "ca"
        } else {
            "key"
        }
    }
}

/// What a namespace asks of signatures: its authors' keys, and whether a version must carry
/// one of their signatures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceSigning {
    pub required: bool,
    pub keys: Vec<NamespaceKeyRecord>,
}

/// A signature bundle kept with a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureRecord {
    pub signer: String,
    pub key_id: String,
    pub bundle: String,
}
