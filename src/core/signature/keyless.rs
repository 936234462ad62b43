//! Keyless mode: a bundle made by `model_signing sign sigstore` (or any Sigstore client signing
//! a Model Signing statement) carries a short-lived Fulcio certificate for its author's OIDC
//! identity and a Rekor transparency log entry, with no key of the author's to register. It is
//! trusted when, offline, against a Sigstore trusted root ([`TrustRoot`]; the public-good
//! production one is embedded):
//! - the log entry verifies: its signed entry timestamp (SET) or inclusion proof and checkpoint
//!   under a log key of the root, and it describes this bundle's envelope and certificate;
//! - the certificate chains to a Fulcio CA of the root and is valid at the time the log (or a
//!   timestamp authority of the root) says the signature was made, and carries a valid SCT;
//! - the DSSE signature verifies with the certificate's key;
//! - and the certificate's OIDC issuer (exact) and identity (its email or URI name) satisfy one
//!   of the namespace's keyless policies ([`KeylessPolicy`]).
//!
//! The cryptography is the `sigstore-verify` crate's (no network: the root is given); which
//! identities may sign for a namespace is decided here.

use sigstore_verify::trust_root::{SIGSTORE_PRODUCTION_TRUSTED_ROOT, TrustedRoot};
use sigstore_verify::types::{ArtifactDigest, Sha256Hash};
use sigstore_verify::{CertificateError, Error as SigstoreError, VerificationPolicy, Verifier};

use super::cert::IdentityPolicy;
use super::{Digest, PublicKey, SignatureError};

/// A Sigstore trusted root: the Fulcio CAs, Rekor and CT log keys and timestamp authorities
/// keyless bundles are checked against, prepared for verifying.
pub struct TrustRoot {
    verifier: Verifier,
}

impl std::fmt::Debug for TrustRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustRoot").finish_non_exhaustive()
    }
}

impl TrustRoot {
    /// Sigstore's public-good production root, as the `sigstore-trust-root` crate embeds it.
    pub fn production() -> Self {
        Self::from_json(SIGSTORE_PRODUCTION_TRUSTED_ROOT)
            .expect("the embedded production trusted root is valid")
    }

    /// From the text of a `trusted_root.json` (`application/vnd.dev.sigstore.trustedroot+json`).
    pub fn from_json(text: &str) -> Result<Self, String> {
        let root = TrustedRoot::from_json(text).map_err(|e| e.to_string())?;
        let verifier = Verifier::new(&root).map_err(|e| e.to_string())?;
        Ok(Self { verifier })
    }
}

/// A keyless identity a namespace accepts: the OIDC issuer the certificate names (exact) and
/// its identity, the email or URI subject alternative name Fulcio wrote (`*`, `prefix*` or a
/// value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeylessPolicy {
    pub issuer: String,
    pub identity: IdentityPolicy,
}

impl KeylessPolicy {
    /// From an issuer URL and an identity policy's text. The issuer is compared exactly, so it
    /// must be an `https://` (or, for a local provider, `http://`) URL without surrounding
    /// space.
    pub fn new(issuer: &str, identity: &str) -> Result<Self, String> {
        let url_like = (issuer.starts_with("https://") || issuer.starts_with("http://"))
            && issuer.len() <= 200
            && !issuer.chars().any(|c| c.is_whitespace() || c.is_control());
        if !url_like {
            return Err(format!(
                "{issuer:?} is not an http(s) URL (the OIDC issuer exactly as Fulcio \
                 certificates name it, e.g. https://token.actions.githubusercontent.com)"
            ));
        }
        Ok(Self {
            issuer: issuer.to_owned(),
            identity: IdentityPolicy::parse(identity),
        })
    }

    /// Its id among the namespace's keys: the sha256 of `keyless`, the issuer and the identity
    /// policy, each on its own line, hex.
    pub fn id(&self) -> String {
        Digest::of(format!("keyless\n{}\n{}", self.issuer, self.identity).as_bytes()).hex()
    }

    fn accepts(&self, issuer: &str, identity: &str) -> bool {
        self.issuer == issuer && self.identity.matches(identity)
    }
}

/// Who a keyless bundle says signed, once verified: what the registry serves and the lock
/// records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeylessSigner {
    /// The certificate's email or URI name.
    pub identity: String,
    /// The OIDC issuer the certificate names.
    pub issuer: String,
    /// The certificate's public key: what verifies the envelope.
    pub key: PublicKey,
    /// The Rekor entry's index, to look it up.
    pub log_index: Option<u64>,
    /// When the log (or a timestamp authority) says it was signed, seconds since the epoch.
    pub signed_at: Option<i64>,
}

/// Verify `bundle` (already read as Sigstore's model) over the statement subject `digest`
/// against `root`, then its issuer and identity against `policies` (the first that accepts).
pub(super) fn verify(
    bundle: &sigstore_verify::types::Bundle,
    digest: Digest,
    root: &TrustRoot,
    policies: &[KeylessPolicy],
) -> Result<KeylessSigner, SignatureError> {
    let artifact = ArtifactDigest::sha256(
        Sha256Hash::try_from(digest.as_bytes().as_slice()).expect("a sha256 is 32 bytes"),
    );
    // The cryptography for any identity; which identities may sign is the policies' to say.
    let result = root
        .verifier
        .verify(artifact, bundle, &VerificationPolicy::any_identity())
        .map_err(refusal)?;
    let (Some(identity), Some(issuer)) = (result.identity(), result.issuer()) else {
        return Err(SignatureError::IdentityMismatch(
            "the certificate names no email or URI identity, or no OIDC issuer".into(),
        ));
    };
    let identity = identity.as_str().to_owned();
    if !policies.iter().any(|p| p.accepts(issuer, &identity)) {
        let accepted: Vec<String> = policies
            .iter()
            .map(|p| format!("{} from {}", p.identity, p.issuer))
            .collect();
        return Err(SignatureError::IdentityMismatch(format!(
            "the certificate names {identity} from issuer {issuer}; the namespace accepts {}",
            if accepted.is_empty() {
                "no keyless identity".to_owned()
            } else {
                accepted.join(", ")
            }
        )));
    }
    let certificate = result
        .certificate()
        .ok_or_else(|| SignatureError::Malformed("it carries no signing certificate".to_owned()))?;
    let key = PublicKey::from_der(certificate.public_key.as_bytes())?;
    Ok(KeylessSigner {
        identity,
        issuer: issuer.to_owned(),
        key,
        log_index: bundle
            .verification_material
            .tlog_entries
            .first()
            .map(|e| e.log_index.get()),
        signed_at: result
            .verified_timestamps()
            .iter()
            .min()
            .or(result.integrated_time().as_ref())
            .map(|t| t.as_second()),
    })
}

/// The refusal a verification failure is.
fn refusal(error: SigstoreError) -> SignatureError {
    let text = error.to_string();
    match error {
        SigstoreError::Certificate(
            CertificateError::Expired { .. } | CertificateError::NotYetValid { .. },
        ) => SignatureError::CertificateExpired(format!("at the time it was logged: {text}")),
        // The chain is checked (by WebPKI) at the logged time before the leaf's own validity
        // is: a certificate of it expired or not yet valid then fails there, and only WebPKI's
        // error (its variant's name, in the detail) says which check it was.
        SigstoreError::Certificate(CertificateError::ChainInvalid(detail))
            if detail.contains("CertExpired") || detail.contains("CertNotValidYet") =>
        {
            SignatureError::CertificateExpired(format!("at the time it was logged: {text}"))
        }
        SigstoreError::Certificate(_)
        | SigstoreError::InvalidTrustRoot(_)
        | SigstoreError::TrustRoot(_)
        | SigstoreError::TrustedCertificate(_) => SignatureError::CertificateUntrusted(format!(
            "{text} (against the configured Sigstore trusted root)"
        )),
        // No proof of when it was signed, or that it was logged.
        SigstoreError::TransparencyLog(_) | SigstoreError::Timestamp(_) => {
            SignatureError::LogInvalid(text)
        }
        SigstoreError::SignatureInvalid(_) | SigstoreError::Crypto(_) => {
            SignatureError::Invalid(format!("its Fulcio certificate: {text}"))
        }
        SigstoreError::ArtifactMismatch(_) => SignatureError::Mismatch(text),
        _ => SignatureError::Malformed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::signature::{Bundle, Subject};
    use crate::core::{Namespace, SkillName, SkillVersion};
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as B64;
    use serde_json::Value;

    /// A real keyless Model Signing bundle from Sigstore's production instance
    /// (`tests/fixtures/keyless/README.md`).
    const BUNDLE: &str =
        include_str!("../../../tests/fixtures/keyless/model-signing-sigstore.bundle.json");
    const IDENTITY: &str = "stefanb@us.ibm.com";
    const ISSUER: &str = "https://sigstore.verify.ibm.com/oauth2";
    /// The files it signs, as its statement lists them.
    const FILES: [(&str, &str); 2] = [
        (
            "signme-1",
            "f6310066c7320497ea554260c32c43660bff648cb2a61194832cc086077085e1",
        ),
        (
            "signme-2",
            "32dcb1f8e1ae52d5963e56a6ba06ab58b424c15ed2a6b70d2feca1d089370028",
        ),
    ];

    struct Skill {
        ns: Namespace,
        name: SkillName,
        version: SkillVersion,
        files: Vec<(&'static str, Digest)>,
    }

    impl Skill {
        fn new(files: &[(&'static str, &str)]) -> Self {
            Self {
                ns: "acme".parse().unwrap(),
                name: "signme".parse().unwrap(),
                version: "1.0.0".parse().unwrap(),
                files: files
                    .iter()
                    .map(|(p, hex)| (*p, format!("sha256:{hex}").parse().unwrap()))
                    .collect(),
            }
        }

        fn read(&self, text: &str) -> Result<Bundle, SignatureError> {
            Bundle::read(
                text,
                &Subject {
                    namespace: &self.ns,
                    name: &self.name,
                    version: &self.version,
                    content_digest: Digest::of(b""),
                    files: &self.files,
                },
            )
        }
    }

    fn policy(issuer: &str, identity: &str) -> KeylessPolicy {
        KeylessPolicy::new(issuer, identity).unwrap()
    }

    fn verify(text: &str, policies: &[KeylessPolicy]) -> Result<KeylessSigner, SignatureError> {
        let bundle = Skill::new(&FILES).read(text)?;
        assert!(bundle.is_keyless() && !bundle.has_certificate());
        bundle.verify_keyless(&TrustRoot::production(), policies)
    }

    /// The bundle with `edit` applied to its JSON.
    fn edited(edit: impl FnOnce(&mut Value)) -> String {
        let mut value: Value = serde_json::from_str(BUNDLE).unwrap();
        edit(&mut value);
        value.to_string()
    }

    /// `text` (base64) with one bit of its byte `at` flipped.
    fn flip(text: &str, at: usize) -> String {
        let mut bytes = B64.decode(text).unwrap();
        bytes[at] ^= 1;
        B64.encode(bytes)
    }

    #[test]
    fn a_production_keyless_bundle_verifies_for_its_issuer_and_identity() {
        let signer = verify(BUNDLE, &[policy(ISSUER, IDENTITY)]).unwrap();
        assert_eq!(signer.identity, IDENTITY);
        assert_eq!(signer.issuer, ISSUER);
        assert_eq!(signer.log_index, Some(598_151_086));
        // Signed at 2025-10-10, as the log and the timestamp authority say (not now).
        let at = signer.signed_at.unwrap();
        assert!((1_760_062_000..1_760_063_000).contains(&at), "{at}");
        // The key `check` verifies with later: the certificate's, and it verifies the envelope.
        let bundle = Skill::new(&FILES).read(BUNDLE).unwrap();
        bundle.verify(&signer.key).unwrap();
        // A prefix or any identity, from that issuer, among other policies.
        for accepted in [
            vec![policy(ISSUER, "stefanb@*")],
            vec![
                policy("https://accounts.google.com", "*"),
                policy(ISSUER, "*"),
            ],
        ] {
            assert_eq!(verify(BUNDLE, &accepted).unwrap().identity, IDENTITY);
        }
    }

    #[test]
    fn another_identity_or_issuer_is_refused() {
        for policies in [
            vec![policy(ISSUER, "someone@us.ibm.com")],
            vec![policy(ISSUER, "stefanb@us.ibm.com.evil")],
            vec![policy(ISSUER, "other*")],
            vec![policy("https://accounts.google.com", IDENTITY)],
            vec![policy("https://sigstore.verify.ibm.com/oauth2/", IDENTITY)],
            vec![],
        ] {
            let err = verify(BUNDLE, &policies).unwrap_err();
            assert!(matches!(err, SignatureError::IdentityMismatch(_)), "{err}");
            assert_eq!(err.code(), crate::core::Code::SignatureIdentityMismatch);
            assert!(err.to_string().contains(IDENTITY), "{err}");
        }
    }

    #[test]
    fn other_file_bytes_are_a_mismatch_and_a_changed_statement_fails_the_signature() {
        let mut changed = FILES;
        changed[1].1 = "32dcb1f8e1ae52d5963e56a6ba06ab58b424c15ed2a6b70d2feca1d089370029";
        let err = Skill::new(&changed).read(BUNDLE).unwrap_err();
        assert!(matches!(err, SignatureError::Mismatch(_)), "{err}");
        // The statement itself rewritten for other bytes (its subject digest made consistent):
        // it reads, but the envelope's signature (and the log entry) is over the original.
        let text = edited(|v| {
            let payload = B64
                .decode(v["dsseEnvelope"]["payload"].as_str().unwrap())
                .unwrap();
            let mut statement: Value = serde_json::from_slice(&payload).unwrap();
            statement["predicate"]["resources"][1]["digest"] = changed[1].1.into();
            let skill = Skill::new(&changed);
            let digest = crate::core::signature::resources_digest(&skill.files);
            statement["subject"][0]["digest"]["sha256"] = digest.hex().into();
            v["dsseEnvelope"]["payload"] = B64.encode(statement.to_string()).into();
        });
        let bundle = Skill::new(&changed).read(&text).unwrap();
        let err = bundle
            .verify_keyless(&TrustRoot::production(), &[policy(ISSUER, IDENTITY)])
            .unwrap_err();
        assert!(
            matches!(
                err,
                SignatureError::Invalid(_) | SignatureError::LogInvalid(_)
            ),
            "{err}"
        );
    }

    #[test]
    fn a_tampered_signature_or_log_entry_is_refused() {
        let policies = [policy(ISSUER, IDENTITY)];
        let tamper = |v: &mut Value| {
            let sig = v["dsseEnvelope"]["signatures"][0]["sig"].as_str().unwrap();
            v["dsseEnvelope"]["signatures"][0]["sig"] = flip(sig, 40).into();
        };
        // The timestamp authority's token is over the signature: it no longer matches.
        let err = verify(&edited(tamper), &policies).unwrap_err();
        assert!(matches!(err, SignatureError::LogInvalid(_)), "{err}");
        // Without that token, the log's time stands, and the signature itself fails.
        let signature = edited(|v| {
            tamper(v);
            v["verificationMaterial"]
                .as_object_mut()
                .unwrap()
                .remove("timestampVerificationData");
        });
        let err = verify(&signature, &policies).unwrap_err();
        assert!(matches!(err, SignatureError::Invalid(_)), "{err}");
        assert_eq!(err.code(), crate::core::Code::SignatureInvalid);
        // The untouched bundle without the token still verifies (the log's time suffices).
        let untimed = edited(|v| {
            v["verificationMaterial"]
                .as_object_mut()
                .unwrap()
                .remove("timestampVerificationData");
        });
        assert_eq!(verify(&untimed, &policies).unwrap().identity, IDENTITY);
        let entry = &["verificationMaterial", "tlogEntries"];
        let set = edited(|v| {
            let promise = &mut v[entry[0]][entry[1]][0]["inclusionPromise"];
            let set = promise["signedEntryTimestamp"].as_str().unwrap();
            promise["signedEntryTimestamp"] = flip(set, 40).into();
        });
        let err = verify(&set, &policies).unwrap_err();
        assert!(matches!(err, SignatureError::LogInvalid(_)), "{err}");
        assert_eq!(err.code(), crate::core::Code::SignatureTlogInvalid);
        // Another integrated time than the one the log signed.
        let time = edited(|v| {
            v[entry[0]][entry[1]][0]["integratedTime"] = "1760062341".into();
        });
        let err = verify(&time, &policies).unwrap_err();
        assert!(matches!(err, SignatureError::LogInvalid(_)), "{err}");
        // An inclusion proof for another tree.
        let proof = edited(|v| {
            let proof = &mut v[entry[0]][entry[1]][0]["inclusionProof"];
            let hash = proof["hashes"][0].as_str().unwrap();
            proof["hashes"][0] = flip(hash, 0).into();
        });
        let err = verify(&proof, &policies).unwrap_err();
        assert!(matches!(err, SignatureError::LogInvalid(_)), "{err}");
    }

    #[test]
    fn a_root_without_the_fulcio_ca_does_not_trust_it() {
        let mut root: Value = serde_json::from_str(SIGSTORE_PRODUCTION_TRUSTED_ROOT).unwrap();
        root["certificateAuthorities"] = Value::Array(Vec::new());
        let root = TrustRoot::from_json(&root.to_string()).unwrap();
        let bundle = Skill::new(&FILES).read(BUNDLE).unwrap();
        let err = bundle
            .verify_keyless(&root, &[policy(ISSUER, IDENTITY)])
            .unwrap_err();
        assert!(
            matches!(err, SignatureError::CertificateUntrusted(_)),
            "{err}"
        );
        assert_eq!(err.code(), crate::core::Code::SignatureCertificateUntrusted);
        assert!(TrustRoot::from_json("{}").is_err());
        // Sigstore's staging instance (its own Fulcio, Rekor and CT logs) vouches for nothing
        // production signed.
        let staging = sigstore_verify::trust_root::SIGSTORE_STAGING_TRUSTED_ROOT;
        let err = bundle
            .verify_keyless(
                &TrustRoot::from_json(staging).unwrap(),
                &[policy(ISSUER, IDENTITY)],
            )
            .unwrap_err();
        assert!(matches!(err, SignatureError::LogInvalid(_)), "{err}");
    }

    #[test]
    fn a_keyless_bundle_is_not_a_key_or_certificate_bundle() {
        let bundle = Skill::new(&FILES).read(BUNDLE).unwrap();
        assert!(bundle.hint.is_none());
        let now = rustls_pki_types::UnixTime::now();
        assert!(matches!(
            bundle.verify_certificate(&[], now),
            Err(SignatureError::Malformed(_))
        ));
        // A key hint beside a log entry is refused; so is a log entry with no certificate.
        let with_key = edited(|v| {
            v["verificationMaterial"]["publicKey"] = serde_json::json!({"hint": "x"});
        });
        let err = Skill::new(&FILES).read(&with_key).unwrap_err();
        assert!(matches!(err, SignatureError::Malformed(_)), "{err}");
        let no_cert = edited(|v| {
            v["verificationMaterial"]
                .as_object_mut()
                .unwrap()
                .remove("certificate");
        });
        let err = Skill::new(&FILES).read(&no_cert).unwrap_err();
        assert!(matches!(err, SignatureError::Malformed(_)), "{err}");
    }

    #[test]
    fn policies_need_an_http_issuer_and_have_stable_ids() {
        for bad in ["", "accounts.google.com", "https://a b", " https://x"] {
            assert!(KeylessPolicy::new(bad, "*").is_err(), "{bad:?}");
        }
        let a = policy(ISSUER, "stefanb@*");
        assert_eq!(a.id(), policy(ISSUER, "stefanb@*").id());
        assert_ne!(a.id(), policy(ISSUER, "stefanb@").id());
        assert_ne!(
            a.id(),
            policy("https://accounts.google.com", "stefanb@*").id()
        );
    }
}
