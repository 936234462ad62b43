//! Signed versions in the OpenSSF Model Signing v1.0 format, so that its own tools verify an
//! installed skill directory offline (`model_signing verify key --public_key … --signature …`).
//!
//! A signature is a Sigstore bundle (v0.3 JSON) holding a DSSE envelope whose payload is an
//! in-toto Statement v1:
//! - `predicateType` `https://model_signing/signature/v1.0`;
//! - `predicate.resources`: one `{name, algorithm, digest}` per file, the path relative to the
//!   skill's directory and its lowercase hex sha256 (the same list `skills/list` serves), in the
//!   tool's order (path components compared in turn);
//! - `subject[0]`: the skill's name and a sha256 over the resources' raw digests in that order;
//! - `predicate.skill`: what the registry adds, the version's identity (namespace, name, version,
//!   content digest). Model Signing v1.0 verifiers ignore predicate fields they do not know.
//!
//! The envelope is signed with ECDSA (P-256 with SHA-256, or P-384 with SHA-384) over DSSE's
//! pre-authentication encoding, the signature DER-encoded; with a bare key the bundle names it by
//! a hint, the sha256 of its PEM `SubjectPublicKeyInfo` text. Verification needs no network.
//!
//! An author may sign with a certificate instead (`model_signing sign certificate`): the bundle
//! carries the chain, checked against the CAs the namespace registers ([`cert`]). Or keyless
//! (`model_signing sign sigstore`, Sigstore in CI): a Fulcio certificate for the author's OIDC
//! identity and a Rekor log entry, checked offline against a Sigstore trusted root and the
//! issuer and identity the namespace accepts ([`keyless`]).
//!
//! Building and checking are here (pure, shared by the registry and the install client); holding
//! a private key and signing are the registry's.

pub mod cert;
pub mod keyless;

use std::cmp::Ordering;

use aws_lc_rs::signature::{self as ecdsa, UnparsedPublicKey};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use rustls_pki_types::SubjectPublicKeyInfoDer;
use rustls_pki_types::pem::PemObject as _;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest as _, Sha256};

use super::{Digest, Namespace, SkillName, SkillVersion, VersionRef};

/// The Sigstore bundle media type Model Signing writes.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The Model Signing v1.0 predicate.
pub const PREDICATE_TYPE: &str = "https://model_signing/signature/v1.0";
/// The paths `model_signing` ignores by default, recorded as it records them.
const IGNORE_PATHS: [&str; 4] = [".gitattributes", ".github", ".git", ".gitignore"];

/// What a signature is over: a version's identity and its files.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub namespace: &'a Namespace,
    pub name: &'a SkillName,
    pub version: &'a SkillVersion,
    pub content_digest: Digest,
    /// Every file's path and digest, in any order.
    pub files: &'a [(&'a str, Digest)],
}

/// Who signed a version, as `_meta["dev.skillreg/signatures"]` and REST show it (stored with
/// the version; the bundles are kept beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signed {
    pub by: Signer,
    /// The key's hint: the sha256 of its PEM `SubjectPublicKeyInfo` text (with a certificate,
    /// its leaf's key).
    pub key_id: String,
    /// The name the key is registered under in its namespace (an author's); with a
    /// certificate, the leaf's subject alternative name the CA's policy accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The registry checked the signature against a key it trusts for the namespace.
    pub verified: bool,
    /// With a certificate: its subject and the CA it chains to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<SignedCertificate>,
    /// Keyless (a Fulcio certificate and a Rekor entry): the OIDC issuer and the log entry;
    /// `identity` is the certificate's email or URI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyless: Option<SignedKeyless>,
}

/// What a keyless signature was verified with, as served beside who signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedKeyless {
    /// The OIDC issuer the Fulcio certificate names, e.g.
    /// `https://token.actions.githubusercontent.com`.
    pub issuer: String,
    /// The Rekor entry's log index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_index: Option<u64>,
    /// When the log (or a timestamp authority) says it was signed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<String>,
}

impl SignedKeyless {
    /// The summary of a verified keyless signer.
    pub fn of(signer: &keyless::KeylessSigner) -> Self {
        Self {
            issuer: signer.issuer.clone(),
            log_index: signer.log_index,
            signed_at: signer
                .signed_at
                .map(|secs| super::Timestamp::from_epoch_secs(secs).to_string()),
        }
    }
}

/// The certificate a version was signed with, as served beside who signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedCertificate {
    /// The leaf's subject (RFC 4514), e.g. `CN=Release, O=Acme`.
    pub subject: String,
    /// The sha256 of the registered CA certificate it chains to (DER), hex.
    pub ca: String,
}

/// Which party made a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signer {
    /// The registry, at publish, with its own key.
    Registry,
    /// The publisher, with a bundle made before the upload (`publish --signature`).
    Author,
}

impl Signer {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registry => "registry",
            Self::Author => "author",
        }
    }
}

/// Where MCP serves a version's bundle (`resources/read`; never one of the skill's files):
/// `skillreg://signatures/{namespace}/{name}/{version}/{registry|author}`.
pub const BUNDLE_URI_PREFIX: &str = "skillreg://signatures/";

/// Where MCP serves the public keys the registry signs with (`resources/read`, JSON:
/// `{"current", "keys": [{"keyId", "publicKey", "createdAt"}]}`, as at
/// `/.well-known/skillreg/signing-keys.json`).
pub const SIGNING_KEYS_URI: &str = "skillreg://signing-keys";

/// The MCP resource URI of the bundle `by` made for `version`.
pub fn bundle_uri(version: &VersionRef, by: Signer) -> String {
    format!(
        "{BUNDLE_URI_PREFIX}{}/{}/{}/{}",
        version.namespace(),
        version.name(),
        version.version,
        by.as_str()
    )
}

/// The version and signer a [`bundle_uri`] names; `None` for anything else.
pub fn parse_bundle_uri(uri: &str) -> Option<(VersionRef, Signer)> {
    let rest = uri.strip_prefix(BUNDLE_URI_PREFIX)?;
    let mut parts = rest.split('/');
    let (ns, name, version, by) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let by = match by {
        "registry" => Signer::Registry,
        "author" => Signer::Author,
        _ => return None,
    };
    Some((VersionRef::parse(ns, name, version).ok()?, by))
}

/// Why a signature is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// Not a Model Signing bundle this registry reads.
    #[error("the signature is not a Model Signing bundle: {0}")]
    Malformed(String),
    /// The bundle is over other files or another skill.
    #[error("the signature does not match the skill's files: {0}")]
    Mismatch(String),
    /// It does not verify with the key it names.
    #[error("the signature does not verify with {0}")]
    Invalid(String),
    /// No key trusted for the namespace verifies it.
    #[error("no key registered for namespace {0:?} verifies the signature")]
    Untrusted(String),
    /// The certificate chain does not lead to a CA registered for the namespace, or its leaf
    /// may not sign.
    #[error("the signing certificate is not trusted: {0}")]
    CertificateUntrusted(String),
    /// A certificate of the chain is expired or not yet valid.
    #[error("the signing certificate is not valid now: {0}")]
    CertificateExpired(String),
    /// The leaf's names do not satisfy the identity policy of the CA it chains to (keyless:
    /// its issuer and identity satisfy none of the namespace's keyless policies).
    #[error("the signing certificate's identity is not accepted: {0}")]
    IdentityMismatch(String),
    /// A keyless bundle's transparency log entry (or signed timestamp) does not verify against
    /// the trusted root, or does not describe the bundle.
    #[error("the signature's transparency log entry does not verify: {0}")]
    LogInvalid(String),
    /// The namespace requires a signature and there is none.
    #[error(
        "namespace {0:?} requires each version to be signed by a registered key (publish --signature)"
    )]
    Required(String),
}

impl SignatureError {
    pub fn code(&self) -> super::Code {
        use super::Code;
        match self {
            Self::Malformed(_) => Code::SignatureMalformed,
            Self::Mismatch(_) => Code::SignatureMismatch,
            Self::Invalid(_) => Code::SignatureInvalid,
            Self::Untrusted(_) => Code::SignatureUntrusted,
            Self::CertificateUntrusted(_) => Code::SignatureCertificateUntrusted,
            Self::CertificateExpired(_) => Code::SignatureCertificateExpired,
            Self::IdentityMismatch(_) => Code::SignatureIdentityMismatch,
            Self::LogInvalid(_) => Code::SignatureTlogInvalid,
            Self::Required(_) => Code::SignatureRequired,
        }
    }
}

/// The statement (the DSSE payload) for `subject`, as bytes to sign.
pub fn statement(subject: &Subject<'_>) -> Vec<u8> {
    let files = ordered(subject.files);
    let resources: Vec<_> = files
        .iter()
        .map(|(path, digest)| json!({"name": path, "algorithm": "sha256", "digest": digest.hex()}))
        .collect();
    let statement = json!({
        "_type": STATEMENT_TYPE,
        "subject": [{
            "name": subject.name.as_str(),
            "digest": {"sha256": resources_digest(&files).hex()},
        }],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "serialization": {
                "method": "files",
                "hash_type": "sha256",
                "allow_symlinks": false,
                "ignore_paths": IGNORE_PATHS,
            },
            "resources": resources,
            "skill": {
                "namespace": subject.namespace.as_str(),
                "name": subject.name.as_str(),
                "version": subject.version.to_string(),
                "contentDigest": subject.content_digest.to_string(),
            },
        },
    });
    serde_json::to_vec(&statement).expect("a JSON value serializes")
}

/// DSSE's pre-authentication encoding of a payload: what is signed.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The files in Model Signing's order: by path, component by component (Python's `PurePath`).
fn ordered<'a>(files: &[(&'a str, Digest)]) -> Vec<(&'a str, Digest)> {
    let mut files = files.to_vec();
    files.sort_by(|a, b| by_components(a.0, b.0));
    files
}

fn by_components(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// The subject digest: sha256 over the resources' raw digests, in order.
fn resources_digest(files: &[(&str, Digest)]) -> Digest {
    let mut hasher = Sha256::new();
    for (_, digest) in files {
        hasher.update(digest.as_bytes());
    }
    Digest::from_raw(hasher.finalize().into())
}

/// A public key that verifies signatures: ECDSA on P-256 or P-384.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// DER `SubjectPublicKeyInfo`.
    der: Vec<u8>,
    /// The PEM text, as Model Signing hashes it for the hint.
    pem: String,
}

impl PublicKey {
    /// From DER `SubjectPublicKeyInfo`.
    pub fn from_der(der: &[u8]) -> Result<Self, SignatureError> {
        let key = Self {
            der: der.to_vec(),
            pem: pem("PUBLIC KEY", der),
        };
        key.algorithm()?;
        Ok(key)
    }

    /// From a PEM `PUBLIC KEY` block.
    pub fn from_pem(text: &str) -> Result<Self, SignatureError> {
        let der = SubjectPublicKeyInfoDer::from_pem_slice(text.as_bytes())
            .map_err(|e| SignatureError::Malformed(format!("not a PEM public key: {e}")))?;
        Self::from_der(der.as_ref())
    }

    /// The PEM text (64-column base64, as OpenSSL and Python's `cryptography` write it).
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// The key's hint in a bundle: the sha256 of its PEM text, hex.
    pub fn key_id(&self) -> String {
        Digest::of(self.pem.as_bytes()).hex()
    }

    fn algorithm(&self) -> Result<&'static ecdsa::EcdsaVerificationAlgorithm, SignatureError> {
        [
            &ecdsa::ECDSA_P256_SHA256_ASN1,
            &ecdsa::ECDSA_P384_SHA384_ASN1,
        ]
        .into_iter()
        .find(|alg| ecdsa::ParsedPublicKey::new(*alg, &self.der).is_ok())
        .ok_or_else(|| {
            SignatureError::Malformed("the key is not an ECDSA P-256 or P-384 key".into())
        })
    }

    fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        self.algorithm().is_ok_and(|alg| {
            UnparsedPublicKey::new(alg, &self.der)
                .verify(message, signature)
                .is_ok()
        })
    }
}

/// PEM text of one DER block.
pub fn pem(label: &str, der: &[u8]) -> String {
    let body = B64.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A Sigstore bundle with a DSSE envelope, as Model Signing writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BundleJson {
    media_type: String,
    verification_material: Material,
    dsse_envelope: Envelope,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Material {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    public_key: Option<KeyHint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    certificate: Option<RawCertificate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x509_certificate_chain: Option<CertificateChain>,
    #[serde(default)]
    tlog_entries: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCertificate {
    raw_bytes: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CertificateChain {
    certificates: Vec<RawCertificate>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct KeyHint {
    #[serde(default)]
    hint: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    payload: String,
    payload_type: String,
    signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct EnvelopeSignature {
    sig: String,
    #[serde(default)]
    keyid: String,
}

/// The bundle text for a statement signed by `key` (`signature`: DER ECDSA over [`pae`]).
pub fn bundle(payload: &[u8], signature: &[u8], key: &PublicKey) -> String {
    let bundle = BundleJson {
        media_type: BUNDLE_MEDIA_TYPE.into(),
        verification_material: Material {
            public_key: Some(KeyHint { hint: key.key_id() }),
            certificate: None,
            x509_certificate_chain: None,
            tlog_entries: Vec::new(),
        },
        dsse_envelope: Envelope {
            payload: B64.encode(payload),
            payload_type: PAYLOAD_TYPE.into(),
            signatures: vec![EnvelopeSignature {
                sig: B64.encode(signature),
                keyid: String::new(),
            }],
        },
    };
    serde_json::to_string(&bundle).expect("a bundle serializes")
}

/// A bundle read and checked against the files it must cover, not yet against a key.
#[derive(Debug, Clone)]
pub struct Bundle {
    payload: Vec<u8>,
    signature: Vec<u8>,
    /// The key hint the bundle carries, if any.
    pub hint: Option<String>,
    /// With a certificate: the chain, DER, leaf first (empty with a key).
    chain: Vec<Vec<u8>>,
    /// Keyless: the bundle as Sigstore's model reads it (its certificate is `chain`'s leaf).
    keyless: Option<Box<sigstore_verify::types::Bundle>>,
    /// The statement's subject digest (over its resources), checked against the files.
    digest: Digest,
}

impl Bundle {
    /// Read `text` and check that its statement covers exactly `subject`'s files (and, when the
    /// statement names a skill, that skill's namespace, name and version).
    pub fn read(text: &str, subject: &Subject<'_>) -> Result<Self, SignatureError> {
        let malformed = |what: &str| SignatureError::Malformed(what.to_owned());
        let bundle: BundleJson = serde_json::from_str(text)
            .map_err(|e| SignatureError::Malformed(format!("not a Sigstore bundle: {e}")))?;
        if !bundle
            .media_type
            .starts_with("application/vnd.dev.sigstore.bundle")
        {
            return Err(malformed("its mediaType is not a Sigstore bundle's"));
        }
        let material = &bundle.verification_material;
        // A log entry makes it keyless: a Fulcio certificate, checked against a trusted root.
        let keyless = if material.tlog_entries.is_empty() {
            None
        } else if material.public_key.is_some() {
            return Err(malformed(
                "a bundle with a key and a transparency log entry is not accepted: sign with a \
                 key alone (`model_signing sign key`), or keyless (`model_signing sign sigstore`)",
            ));
        } else {
            let read = sigstore_verify::types::Bundle::from_json(text).map_err(|e| {
                SignatureError::Malformed(format!("not a keyless Sigstore bundle: {e}"))
            })?;
            Some(Box::new(read))
        };
        let raw: Vec<&RawCertificate> =
            match (&material.certificate, &material.x509_certificate_chain) {
                (Some(one), None) => vec![one],
                (None, Some(chain)) => chain.certificates.iter().collect(),
                (None, None) => Vec::new(),
                (Some(_), Some(_)) => {
                    return Err(malformed(
                        "it has both a certificate and a certificate chain",
                    ));
                }
            };
        if material.x509_certificate_chain.is_some() && raw.is_empty() {
            return Err(malformed("its certificate chain is empty"));
        }
        let chain = raw
            .iter()
            .map(|c| B64.decode(&c.raw_bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| malformed("a certificate of its chain is not base64"))?;
        let envelope = &bundle.dsse_envelope;
        if envelope.payload_type != PAYLOAD_TYPE {
            return Err(malformed("its payloadType is not an in-toto statement"));
        }
        let [signature] = envelope.signatures.as_slice() else {
            return Err(malformed("its envelope must hold exactly one signature"));
        };
        let payload = B64
            .decode(&envelope.payload)
            .map_err(|_| malformed("its payload is not base64"))?;
        let signature = B64
            .decode(&signature.sig)
            .map_err(|_| malformed("its signature is not base64"))?;
        let digest = check_statement(&payload, subject)?;
        if keyless.is_some() && chain.is_empty() {
            return Err(malformed(
                "its transparency log entry has no certificate beside it",
            ));
        }
        Ok(Self {
            payload,
            signature,
            hint: bundle
                .verification_material
                .public_key
                .map(|k| k.hint)
                .filter(|h| !h.is_empty()),
            chain,
            keyless,
            digest,
        })
    }

    /// The bundle is signed with a certificate of the author's CA (its chain must be checked,
    /// not a key); a keyless one is not.
    pub fn has_certificate(&self) -> bool {
        !self.chain.is_empty() && self.keyless.is_none()
    }

    /// The bundle is keyless: a Fulcio certificate and a transparency log entry.
    pub fn is_keyless(&self) -> bool {
        self.keyless.is_some()
    }

    /// Verify a keyless bundle against `root`, then its issuer and identity against `policies`
    /// ([`keyless`]). Who signed.
    pub fn verify_keyless(
        &self,
        root: &keyless::TrustRoot,
        policies: &[keyless::KeylessPolicy],
    ) -> Result<keyless::KeylessSigner, SignatureError> {
        let Some(bundle) = &self.keyless else {
            return Err(SignatureError::Malformed(
                "it is not keyless (it has no transparency log entry)".into(),
            ));
        };
        keyless::verify(bundle, self.digest, root, policies)
    }

    /// Verify a certificate bundle: its chain against `anchors` at `now` ([`cert`]), then the
    /// signature with the leaf's key. Who signed.
    pub fn verify_certificate(
        &self,
        anchors: &[cert::Anchor],
        now: rustls_pki_types::UnixTime,
    ) -> Result<cert::CertSigner, SignatureError> {
        if !self.has_certificate() {
            return Err(SignatureError::Malformed(
                "it is signed with a key, not a certificate".into(),
            ));
        }
        let signer = cert::verify_chain(&self.chain, anchors, now)?;
        if !signer
            .key
            .verifies(&pae(PAYLOAD_TYPE, &self.payload), &self.signature)
        {
            return Err(SignatureError::Invalid(format!(
                "the certificate of {}",
                signer.identity
            )));
        }
        Ok(signer)
    }

    /// Verify the signature with `key`.
    pub fn verify(&self, key: &PublicKey) -> Result<(), SignatureError> {
        if let Some(hint) = &self.hint
            && *hint != key.key_id()
        {
            return Err(SignatureError::Invalid(format!(
                "key {}: the bundle names key {hint}",
                key.key_id()
            )));
        }
        if key.verifies(&pae(PAYLOAD_TYPE, &self.payload), &self.signature) {
            Ok(())
        } else {
            Err(SignatureError::Invalid(format!("key {}", key.key_id())))
        }
    }
}

/// The statement in a Model Signing payload, the fields read.
#[derive(Deserialize)]
struct StatementJson {
    #[serde(rename = "_type")]
    kind: String,
    #[serde(rename = "predicateType")]
    predicate_type: String,
    subject: Vec<SubjectJson>,
    predicate: PredicateJson,
}

#[derive(Deserialize)]
struct SubjectJson {
    digest: DigestJson,
}

#[derive(Deserialize)]
struct DigestJson {
    sha256: String,
}

#[derive(Deserialize)]
struct PredicateJson {
    resources: Vec<ResourceJson>,
    #[serde(default)]
    skill: Option<SkillJson>,
}

#[derive(Deserialize)]
struct ResourceJson {
    name: String,
    algorithm: String,
    digest: String,
}

#[derive(Deserialize)]
struct SkillJson {
    namespace: String,
    name: String,
    version: String,
}

/// Check the statement against `subject`; its subject digest.
fn check_statement(payload: &[u8], subject: &Subject<'_>) -> Result<Digest, SignatureError> {
    let statement: StatementJson = serde_json::from_slice(payload)
        .map_err(|e| SignatureError::Malformed(format!("its statement does not read: {e}")))?;
    if statement.kind != STATEMENT_TYPE || statement.predicate_type != PREDICATE_TYPE {
        return Err(SignatureError::Malformed(format!(
            "its statement is not a Model Signing v1.0 statement ({})",
            statement.predicate_type
        )));
    }
    let mismatch = |what: String| Err(SignatureError::Mismatch(what));
    if let Some(skill) = &statement.predicate.skill {
        let signed = format!("{}/{}@{}", skill.namespace, skill.name, skill.version);
        let here = format!("{}/{}@{}", subject.namespace, subject.name, subject.version);
        if signed != here {
            return mismatch(format!("it was made for {signed}, not {here}"));
        }
    }
    let files = ordered(subject.files);
    let mut signed: Vec<(&str, &str)> = Vec::with_capacity(statement.predicate.resources.len());
    for resource in &statement.predicate.resources {
        if resource.algorithm != "sha256" {
            return mismatch(format!(
                "{} is hashed with {}",
                resource.name, resource.algorithm
            ));
        }
        signed.push((&resource.name, &resource.digest));
    }
    signed.sort_by(|a, b| by_components(a.0, b.0));
    let hex: Vec<(&str, String)> = files.iter().map(|(p, d)| (*p, d.hex())).collect();
    for (path, digest) in &hex {
        match signed.binary_search_by(|s| by_components(s.0, path)) {
            Ok(i) if signed[i].1 == digest => {}
            Ok(_) => return mismatch(format!("{path} has other bytes than the ones signed")),
            Err(_) => return mismatch(format!("{path} is not signed")),
        }
    }
    if let Some((extra, _)) = signed
        .iter()
        .find(|(p, _)| hex.binary_search_by(|h| by_components(h.0, p)).is_err())
    {
        return mismatch(format!("{extra} is signed but not in the skill"));
    }
    let [only] = statement.subject.as_slice() else {
        return Err(SignatureError::Malformed(
            "its statement must have one subject".into(),
        ));
    };
    let digest = resources_digest(&files);
    if only.digest.sha256 != digest.hex() {
        return mismatch("its subject digest is not over its resources".into());
    }
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};

    fn key_pair() -> (EcdsaKeyPair, PublicKey) {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_ASN1_SIGNING).unwrap();
        let der = aws_lc_rs::encoding::AsDer::<aws_lc_rs::encoding::PublicKeyX509Der>::as_der(
            pair.public_key(),
        )
        .unwrap();
        let key = PublicKey::from_der(der.as_ref()).unwrap();
        (pair, key)
    }

    fn sign(pair: &EcdsaKeyPair, key: &PublicKey, subject: &Subject<'_>) -> String {
        let payload = statement(subject);
        let sig = pair
            .sign(&SystemRandom::new(), &pae(PAYLOAD_TYPE, &payload))
            .unwrap();
        bundle(&payload, sig.as_ref(), key)
    }

    struct Owned {
        ns: Namespace,
        name: SkillName,
        version: SkillVersion,
        files: Vec<(&'static str, Digest)>,
    }

    impl Owned {
        fn new(files: &[(&'static str, &str)]) -> Self {
            Self {
                ns: "acme".parse().unwrap(),
                name: "refunds".parse().unwrap(),
                version: "1.0.0".parse().unwrap(),
                files: files
                    .iter()
                    .map(|(p, b)| (*p, Digest::of(b.as_bytes())))
                    .collect(),
            }
        }

        fn subject(&self) -> Subject<'_> {
            Subject {
                namespace: &self.ns,
                name: &self.name,
                version: &self.version,
                content_digest: Digest::of(b"content"),
                files: &self.files,
            }
        }
    }

    #[test]
    fn resources_are_in_the_tools_order_and_the_subject_digest_is_over_them() {
        let skill = Owned::new(&[("a/x", "1"), ("a-b/x", "2"), ("SKILL.md", "3")]);
        let value: serde_json::Value =
            serde_json::from_slice(&statement(&skill.subject())).unwrap();
        let names: Vec<&str> = value["predicate"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        // PurePosixPath order: "a" < "a-b" as components, though "a-b/x" < "a/x" as strings.
        assert_eq!(names, ["SKILL.md", "a/x", "a-b/x"]);
        let mut hasher = Sha256::new();
        for (_, content) in [("SKILL.md", "3"), ("a/x", "1"), ("a-b/x", "2")] {
            hasher.update(Digest::of(content.as_bytes()).as_bytes());
        }
        let expected: [u8; 32] = hasher.finalize().into();
        assert_eq!(
            value["subject"][0]["digest"]["sha256"],
            Digest::from_raw(expected).hex()
        );
        assert_eq!(value["subject"][0]["name"], "refunds");
        assert_eq!(value["predicate"]["skill"]["version"], "1.0.0");
    }

    #[test]
    fn a_bundle_verifies_with_its_key_and_no_other() {
        let skill = Owned::new(&[("SKILL.md", "body"), ("references/a.md", "ref")]);
        let (pair, key) = key_pair();
        let text = sign(&pair, &key, &skill.subject());
        let read = Bundle::read(&text, &skill.subject()).unwrap();
        assert_eq!(read.hint.as_deref(), Some(key.key_id().as_str()));
        read.verify(&key).unwrap();
        let (_, other) = key_pair();
        assert!(matches!(
            read.verify(&other),
            Err(SignatureError::Invalid(_))
        ));
    }

    #[test]
    fn a_bundle_over_other_bytes_or_files_is_a_mismatch() {
        let skill = Owned::new(&[("SKILL.md", "body"), ("references/a.md", "ref")]);
        let (pair, key) = key_pair();
        let text = sign(&pair, &key, &skill.subject());
        for other in [
            Owned::new(&[("SKILL.md", "body"), ("references/a.md", "reF")]),
            Owned::new(&[("SKILL.md", "body")]),
            Owned::new(&[("SKILL.md", "body"), ("references/a.md", "ref"), ("b", "")]),
        ] {
            let err = Bundle::read(&text, &other.subject()).unwrap_err();
            assert!(matches!(err, SignatureError::Mismatch(_)), "{err}");
        }
        let mut later = Owned::new(&[("SKILL.md", "body"), ("references/a.md", "ref")]);
        later.version = "1.0.1".parse().unwrap();
        let err = Bundle::read(&text, &later.subject()).unwrap_err();
        assert!(err.to_string().contains("acme/refunds@1.0.0"), "{err}");
    }

    #[test]
    fn a_tampered_payload_fails_the_signature() {
        let skill = Owned::new(&[("SKILL.md", "body")]);
        let (pair, key) = key_pair();
        let text = sign(&pair, &key, &skill.subject());
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let payload = B64
            .decode(value["dsseEnvelope"]["payload"].as_str().unwrap())
            .unwrap();
        let tampered = String::from_utf8(payload)
            .unwrap()
            .replace("\"acme\"", "\"acme\" ");
        value["dsseEnvelope"]["payload"] = B64.encode(tampered).into();
        let read = Bundle::read(&value.to_string(), &skill.subject()).unwrap();
        assert!(matches!(read.verify(&key), Err(SignatureError::Invalid(_))));
    }

    #[test]
    fn the_pem_round_trips_and_names_the_key() {
        let (_, key) = key_pair();
        assert!(key.pem().starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert!(key.pem().lines().all(|l| l.len() <= 64));
        let again = PublicKey::from_pem(key.pem()).unwrap();
        assert_eq!(again, key);
        assert_eq!(key.key_id().len(), 64);
        assert!(PublicKey::from_pem("not a key").is_err());
    }

    #[test]
    fn bundle_uris_round_trip_and_nothing_else_parses() {
        let version = VersionRef::parse("acme", "refunds", "1.0.0-rc.1").unwrap();
        let uri = bundle_uri(&version, Signer::Author);
        assert_eq!(uri, "skillreg://signatures/acme/refunds/1.0.0-rc.1/author");
        assert_eq!(parse_bundle_uri(&uri), Some((version, Signer::Author)));
        for bad in [
            "skillreg://signatures/acme/refunds/1.0.0/notary",
            "skillreg://signatures/acme/refunds/1.0.0/registry/x",
            "skillreg://signatures/acme/refunds/latest/registry",
            "skill://acme/refunds/SKILL.md",
        ] {
            assert_eq!(parse_bundle_uri(bad), None, "{bad}");
        }
    }

    #[test]
    fn pae_is_dsse_v1() {
        assert_eq!(pae("t", b"ab"), b"DSSEv1 1 t 2 ab");
    }
}
