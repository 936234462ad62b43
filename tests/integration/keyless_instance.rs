//! A Sigstore instance for tests, in-process and offline: a Fulcio root CA, a certificate
//! transparency log and a Rekor log, each with its own key made at test time, and the
//! `trusted_root.json` that lists them. It makes real keyless bundles (Sigstore bundle v0.3, a
//! DSSE envelope over the Model Signing v1.0 statement of a skill's files, as
//! `model_signing sign sigstore` writes them) that `sigstore-verify` accepts under skillreg's
//! production policy (`VerificationPolicy::any_identity()`): nothing in them is skipped or
//! mocked, only the keys are not Sigstore's public-good ones.
//!
//! What a bundle holds, as the public-good instance makes it:
//! - a leaf certificate issued by the Fulcio CA for an email identity: key usage
//!   `digitalSignature`, extended key usage `codeSigning`, the OIDC issuer in Fulcio's
//!   extensions (`1.3.6.1.4.1.57264.1.1`, raw, and `.1.8`, a DER UTF8String), ten minutes of
//!   validity around the time the log integrates the entry, and an embedded SCT (RFC 6962
//!   precertificate SCT over the certificate's TBS without that extension and the sha256 of
//!   the CA's `SubjectPublicKeyInfo`, signed by the CT log's key);
//! - a Rekor `dsse` v0.0.1 entry: its canonicalized body (payload hash, the envelope's
//!   signature and the PEM certificate as verifier), its signed entry timestamp (over
//!   `{body, integratedTime, logID, logIndex}` canonicalized) and an inclusion proof in a tree
//!   of two entries with a checkpoint (signed note) signed by the log's key;
//! - the DSSE envelope signed by the leaf's key over the statement
//!   `skillreg::core::signature::statement` builds (the one the registry signs).
//!
//! A bundle can be made wrong on purpose ([`Signing`]): another identity or issuer, a
//! certificate expired when the entry was logged, an entry logged by a log the trusted root
//! does not list.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::{SecureRandom as _, SystemRandom};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use rcgen::{
    BasicConstraints, CertificateParams, CustomExtension, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose, PublicKeyData as _, SanType,
    SerialNumber, date_time_ymd,
};
use serde_json::{Value, json};
use skillreg::core::signature::{
    BUNDLE_MEDIA_TYPE, PAYLOAD_TYPE, PublicKey, Subject, pae, pem, statement,
};
use skillreg::core::{Digest, Namespace, SkillName, SkillVersion};

/// Fulcio's OIDC issuer extensions: the legacy raw one and the DER UTF8String one.
const OID_ISSUER_V1: &[u64] = &[1, 3, 6, 1, 4, 1, 57264, 1, 1];
const OID_ISSUER_V2: &[u64] = &[1, 3, 6, 1, 4, 1, 57264, 1, 8];
/// RFC 6962's embedded SCT list extension.
const OID_SCT_LIST: &[u64] = &[1, 3, 6, 1, 4, 1, 11129, 2, 4, 2];
/// The start of every validity window of the trusted root.
const ROOT_VALID_FROM: &str = "2020-01-01T00:00:00Z";
/// The name of the Rekor log, in its checkpoints.
const LOG_ORIGIN: &str = "rekor.skillreg.test";

/// A log's ECDSA P-256 key (Rekor's or the CT log's): its id is the sha256 of its DER
/// `SubjectPublicKeyInfo`, as both kinds of log name their keys.
pub(super) struct LogKey {
    pair: EcdsaKeyPair,
    spki: Vec<u8>,
}

impl LogKey {
    fn new() -> Self {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new())
                .unwrap();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref()).unwrap();
        let spki = aws_lc_rs::encoding::AsDer::<aws_lc_rs::encoding::PublicKeyX509Der>::as_der(
            pair.public_key(),
        )
        .unwrap()
        .as_ref()
        .to_vec();
        Self { pair, spki }
    }

    fn id(&self) -> [u8; 32] {
        *Digest::of(&self.spki).as_bytes()
    }

    /// ECDSA P-256 SHA-256 over `message`, DER.
    fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.pair
            .sign(&SystemRandom::new(), message)
            .unwrap()
            .as_ref()
            .to_vec()
    }

    /// Its entry in `tlogs` or `ctlogs`.
    fn listed(&self, url: &str) -> Value {
        json!({
            "baseUrl": url,
            "hashAlgorithm": "SHA2_256",
            "publicKey": {
                "rawBytes": B64.encode(&self.spki),
                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                "validFor": {"start": ROOT_VALID_FROM},
            },
            "logId": {"keyId": B64.encode(self.id())},
        })
    }
}

/// The instance: its CA and logs. [`Instance::trusted_root`] describes it.
pub(super) struct Instance {
    fulcio: Issuer<'static, KeyPair>,
    fulcio_der: Vec<u8>,
    fulcio_spki: Vec<u8>,
    ct: LogKey,
    rekor: LogKey,
    /// A Rekor log no trusted root lists.
    unlisted: LogKey,
}

/// What to sign and how ([`Signing::new`]: a good bundle).
#[derive(Debug, Clone)]
pub(super) struct Signing<'a> {
    /// The certificate's email identity.
    pub identity: &'a str,
    /// The OIDC issuer the certificate names.
    pub issuer: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub version: &'a str,
    /// The skill's files (path, text), in any order.
    pub files: &'a [(&'a str, &'a str)],
    /// The statement's `predicate.skill.contentDigest` (not checked by verifiers).
    pub content_digest: Option<Digest>,
    /// The certificate's notBefore and notAfter, in seconds from the time the log integrates
    /// the entry (Fulcio's: ten minutes from a moment before).
    pub validity: (i64, i64),
    /// Log the entry in a log the trusted root does not list.
    pub unlisted_log: bool,
}

impl<'a> Signing<'a> {
    pub fn new(
        identity: &'a str,
        issuer: &'a str,
        namespace: &'a str,
        version: &'a str,
        files: &'a [(&'a str, &'a str)],
    ) -> Self {
        Self {
            identity,
            issuer,
            namespace,
            name: "signed",
            version,
            files,
            content_digest: None,
            validity: (-60, 540),
            unlisted_log: false,
        }
    }
}

/// A keyless bundle made by the instance, and what a verifier should report of it.
#[derive(Debug, Clone)]
pub(super) struct Made {
    /// The bundle's JSON text.
    pub bundle: String,
    /// The leaf certificate's key, as skillreg names keys (sha256 of its PEM).
    pub key_id: String,
    /// The Rekor entry's log index.
    pub log_index: u64,
    /// When the log integrated the entry (seconds since the epoch).
    pub integrated_time: i64,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A DER length.
fn der_len(len: usize) -> Vec<u8> {
    if len < 0x80 {
        vec![len as u8]
    } else if len < 0x100 {
        vec![0x81, len as u8]
    } else {
        vec![0x82, (len >> 8) as u8, len as u8]
    }
}

/// A DER TLV of `tag` around `content`.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend(der_len(content.len()));
    out.extend_from_slice(content);
    out
}

/// The header and content lengths of the DER TLV `tlv` starts with.
fn der_header(tlv: &[u8]) -> (usize, usize) {
    let first = tlv[1] as usize;
    if first < 0x80 {
        return (2, first);
    }
    let n = first & 0x7f;
    let len = tlv[2..2 + n]
        .iter()
        .fold(0usize, |len, b| (len << 8) | *b as usize);
    (2 + n, len)
}

/// A certificate's `tbsCertificate` (the first element of its outer SEQUENCE), DER.
fn tbs_of(certificate: &[u8]) -> &[u8] {
    let (header, _) = der_header(certificate);
    let inner = &certificate[header..];
    let (header, len) = der_header(inner);
    &inner[..header + len]
}

/// RFC 6962's leaf and node hashes.
fn leaf_hash(entry: &[u8]) -> [u8; 32] {
    let mut data = vec![0u8];
    data.extend_from_slice(entry);
    *Digest::of(&data).as_bytes()
}

fn node_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut data = vec![1u8];
    data.extend_from_slice(left);
    data.extend_from_slice(right);
    *Digest::of(&data).as_bytes()
}

impl Instance {
    pub fn new() -> Self {
        let key = KeyPair::generate().unwrap();
        let fulcio_spki = key.subject_public_key_info();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::OrganizationName, "skillreg.test");
        params
            .distinguished_name
            .push(DnType::CommonName, "skillreg-test-fulcio");
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2050, 1, 1);
        let fulcio_der = params.self_signed(&key).unwrap().der().to_vec();
        Self {
            fulcio: Issuer::new(params, key),
            fulcio_der,
            fulcio_spki,
            ct: LogKey::new(),
            rekor: LogKey::new(),
            unlisted: LogKey::new(),
        }
    }

    /// The `trusted_root.json` of the instance: its Fulcio CA, its Rekor log and its CT log
    /// (no timestamp authority: the log's integrated time is the signing time).
    pub fn trusted_root(&self) -> String {
        json!({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [self.rekor.listed("https://rekor.skillreg.test")],
            "certificateAuthorities": [{
                "subject": {"organization": "skillreg.test", "commonName": "skillreg-test-fulcio"},
                "uri": "https://fulcio.skillreg.test",
                "certChain": {"certificates": [{"rawBytes": B64.encode(&self.fulcio_der)}]},
                "validFor": {"start": ROOT_VALID_FROM},
            }],
            "ctlogs": [self.ct.listed("https://ctfe.skillreg.test")],
            "timestampAuthorities": [],
        })
        .to_string()
    }

    /// A keyless bundle for `signing`, logged a little before now.
    pub fn sign(&self, signing: &Signing<'_>) -> Made {
        let logged_at = now() - 30;
        let (not_before, not_after) = (
            logged_at + signing.validity.0,
            logged_at + signing.validity.1,
        );

        // Fulcio: the leaf, first as the precertificate the CT log signs (no SCT extension),
        // then with the SCT; everything else is the same, so the verifier's reconstruction
        // (the TBS without the SCT extension) is the precertificate's TBS.
        let leaf_key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = DistinguishedName::new();
        params.subject_alt_names = vec![SanType::Rfc822Name(
            signing.identity.to_owned().try_into().unwrap(),
        )];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::CodeSigning];
        params.use_authority_key_identifier_extension = true;
        let mut serial = [0u8; 16];
        SystemRandom::new().fill(&mut serial).unwrap();
        serial[0] = (serial[0] & 0x7f) | 0x01;
        params.serial_number = Some(SerialNumber::from_slice(&serial));
        // `secs` since the epoch, as rcgen takes a time.
        let at = |secs: i64| date_time_ymd(1970, 1, 1) + Duration::from_secs(secs as u64);
        params.not_before = at(not_before);
        params.not_after = at(not_after);
        params.custom_extensions = vec![
            CustomExtension::from_oid_content(OID_ISSUER_V1, signing.issuer.as_bytes().to_vec()),
            CustomExtension::from_oid_content(OID_ISSUER_V2, der(0x0c, signing.issuer.as_bytes())),
        ];
        let precert = params.signed_by(&leaf_key, &self.fulcio).unwrap();
        let sct = self.sct(tbs_of(precert.der()), not_before);
        params
            .custom_extensions
            .push(CustomExtension::from_oid_content(OID_SCT_LIST, sct));
        let certificate = params
            .signed_by(&leaf_key, &self.fulcio)
            .unwrap()
            .der()
            .to_vec();
        let leaf_spki = leaf_key.subject_public_key_info();

        // The DSSE envelope over the statement the registry builds for these files.
        let files: Vec<(&str, Digest)> = signing
            .files
            .iter()
            .map(|(path, text)| (*path, Digest::of(text.as_bytes())))
            .collect();
        let namespace: Namespace = signing.namespace.parse().unwrap();
        let name: SkillName = signing.name.parse().unwrap();
        let version: SkillVersion = signing.version.parse().unwrap();
        let payload = statement(&Subject {
            namespace: &namespace,
            name: &name,
            version: &version,
            content_digest: signing.content_digest.unwrap_or_else(|| Digest::of(b"")),
            files: &files,
        });
        let signer =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &leaf_key.serialize_der())
                .unwrap();
        let signature = signer
            .sign(&SystemRandom::new(), &pae(PAYLOAD_TYPE, &payload))
            .unwrap()
            .as_ref()
            .to_vec();
        let envelope = json!({
            "payload": B64.encode(&payload),
            "payloadType": PAYLOAD_TYPE,
            "signatures": [{"sig": B64.encode(&signature)}],
        });

        // Rekor: the entry, its SET, and its inclusion in a tree of two with a checkpoint.
        let body = json!({
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {
                    "algorithm": "sha256",
                    "value": Digest::of(envelope.to_string().as_bytes()).hex(),
                },
                "payloadHash": {"algorithm": "sha256", "value": Digest::of(&payload).hex()},
                "signatures": [{
                    "signature": B64.encode(&signature),
                    "verifier": B64.encode(pem("CERTIFICATE", &certificate)),
                }],
            },
        })
        .to_string();
        let log = if signing.unlisted_log {
            &self.unlisted
        } else {
            &self.rekor
        };
        let log_index = 1u64;
        let set_payload = format!(
            r#"{{"body":"{}","integratedTime":{logged_at},"logID":"{}","logIndex":{log_index}}}"#,
            B64.encode(&body),
            Digest::from_raw(log.id()).hex(),
        );
        let set = log.sign(set_payload.as_bytes());
        let earlier = leaf_hash(br#"{"apiVersion":"0.0.1","kind":"an earlier entry"}"#);
        let root = node_hash(&earlier, &leaf_hash(body.as_bytes()));
        let note = format!("{LOG_ORIGIN} - 1\n2\n{}\n", B64.encode(root));
        let mut note_signature = log.id()[..4].to_vec();
        note_signature.extend(log.sign(note.as_bytes()));
        let checkpoint = format!(
            "{note}\n\u{2014} {LOG_ORIGIN} {}\n",
            B64.encode(note_signature)
        );

        let bundle = json!({
            "mediaType": BUNDLE_MEDIA_TYPE,
            "verificationMaterial": {
                "certificate": {"rawBytes": B64.encode(&certificate)},
                "tlogEntries": [{
                    "logIndex": log_index.to_string(),
                    "logId": {"keyId": B64.encode(log.id())},
                    "kindVersion": {"kind": "dsse", "version": "0.0.1"},
                    "integratedTime": logged_at.to_string(),
                    "inclusionPromise": {"signedEntryTimestamp": B64.encode(&set)},
                    "inclusionProof": {
                        "logIndex": log_index.to_string(),
                        "rootHash": B64.encode(root),
                        "treeSize": "2",
                        "hashes": [B64.encode(earlier)],
                        "checkpoint": {"envelope": checkpoint},
                    },
                    "canonicalizedBody": B64.encode(&body),
                }],
            },
            "dsseEnvelope": envelope,
        });
        Made {
            bundle: serde_json::to_string_pretty(&bundle).unwrap(),
            key_id: PublicKey::from_der(&leaf_spki).unwrap().key_id(),
            log_index,
            integrated_time: logged_at,
        }
    }

    /// The value of the embedded SCT list extension for a certificate whose TBS (without
    /// that extension) is `tbs`, issued at `issued` (seconds): an OCTET STRING holding the TLS
    /// `SignedCertificateTimestampList` of one v1 SCT by the CT log.
    fn sct(&self, tbs: &[u8], issued: i64) -> Vec<u8> {
        let timestamp = u64::try_from(issued).unwrap() * 1000;
        // RFC 6962 §3.2, the digitally-signed struct of a precertificate entry.
        let mut signed = vec![0u8, 0u8]; // v1, certificate_timestamp
        signed.extend(timestamp.to_be_bytes());
        signed.extend(1u16.to_be_bytes()); // precert_entry
        signed.extend(Digest::of(&self.fulcio_spki).as_bytes());
        signed.extend(&u32::try_from(tbs.len()).unwrap().to_be_bytes()[1..]);
        signed.extend_from_slice(tbs);
        signed.extend(0u16.to_be_bytes()); // no extensions
        let signature = self.ct.sign(&signed);
        let mut sct = vec![0u8]; // v1
        sct.extend(self.ct.id());
        sct.extend(timestamp.to_be_bytes());
        sct.extend(0u16.to_be_bytes()); // no extensions
        sct.extend([4u8, 3u8]); // sha256, ecdsa
        sct.extend(u16::try_from(signature.len()).unwrap().to_be_bytes());
        sct.extend(signature);
        let mut list = u16::try_from(sct.len() + 2).unwrap().to_be_bytes().to_vec();
        list.extend(u16::try_from(sct.len()).unwrap().to_be_bytes());
        list.extend(sct);
        der(0x04, &list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sigstore_verify::trust_root::TrustedRoot;
    use sigstore_verify::types::{ArtifactDigest, Sha256Hash};
    use sigstore_verify::{VerificationPolicy, Verifier};
    use skillreg::core::signature::keyless::{KeylessPolicy, TrustRoot};
    use skillreg::core::signature::{Bundle, SignatureError};

    const FILES: [(&str, &str); 2] = [
        (
            "SKILL.md",
            "---\nname: signed\ndescription: Signed.\n---\n# Signed\n",
        ),
        ("references/a.md", "A\n"),
    ];
    const ISSUER: &str = "https://issuer.skillreg.test";
    const IDENTITY: &str = "release@acme.example";

    fn subject_digest(files: &[(&str, &str)]) -> Digest {
        let mut sorted: Vec<(&str, Digest)> = files
            .iter()
            .map(|(p, t)| (*p, Digest::of(t.as_bytes())))
            .collect();
        sorted.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
        let mut all = Vec::new();
        for (_, d) in &sorted {
            all.extend_from_slice(d.as_bytes());
        }
        Digest::of(&all)
    }

    /// sigstore-verify itself, with skillreg's policy: every check ran, none was skipped.
    #[test]
    fn sigstore_verify_accepts_a_bundle_of_the_instance_with_every_check() {
        let instance = Instance::new();
        let made = instance.sign(&Signing::new(IDENTITY, ISSUER, "acme", "1.0.0", &FILES));
        let root = TrustedRoot::from_json(&instance.trusted_root()).unwrap();
        let bundle = sigstore_verify::types::Bundle::from_json(&made.bundle).unwrap();
        let digest = || {
            ArtifactDigest::sha256(
                Sha256Hash::try_from(subject_digest(&FILES).as_bytes().as_slice()).unwrap(),
            )
        };
        let result = Verifier::new(&root)
            .unwrap()
            .verify(digest(), &bundle, &VerificationPolicy::any_identity())
            .unwrap();
        assert!(result.certificate_verified());
        assert!(result.sct_verified());
        assert!(result.tlog_verified());
        assert_eq!(
            result.integrated_time().map(|t| t.as_second()),
            Some(made.integrated_time)
        );
        assert_eq!(result.identity().unwrap().as_str(), IDENTITY);
        assert_eq!(result.issuer(), Some(ISSUER));
        // Against the public-good root, nothing of it is trusted.
        let production = Verifier::new(
            &TrustedRoot::from_json(sigstore_verify::trust_root::SIGSTORE_PRODUCTION_TRUSTED_ROOT)
                .unwrap(),
        )
        .unwrap();
        assert!(
            production
                .verify(digest(), &bundle, &VerificationPolicy::any_identity())
                .is_err()
        );
    }

    /// Through skillreg's core, as publish and `add` verify.
    #[test]
    fn skillregs_core_accepts_it_and_refuses_each_broken_variant_with_its_reason() {
        let instance = Instance::new();
        let root = TrustRoot::from_json(&instance.trusted_root()).unwrap();
        let policies = [KeylessPolicy::new(ISSUER, IDENTITY).unwrap()];
        let ns: Namespace = "acme".parse().unwrap();
        let name: SkillName = "signed".parse().unwrap();
        let version: SkillVersion = "1.0.0".parse().unwrap();
        let files: Vec<(&str, Digest)> = FILES
            .iter()
            .map(|(p, t)| (*p, Digest::of(t.as_bytes())))
            .collect();
        let verify = |text: &str| {
            let bundle = Bundle::read(
                text,
                &Subject {
                    namespace: &ns,
                    name: &name,
                    version: &version,
                    content_digest: Digest::of(b""),
                    files: &files,
                },
            )?;
            assert!(bundle.is_keyless());
            bundle.verify_keyless(&root, &policies)
        };
        let good = Signing::new(IDENTITY, ISSUER, "acme", "1.0.0", &FILES);
        let made = instance.sign(&good);
        let signer = verify(&made.bundle).unwrap();
        assert_eq!(signer.identity, IDENTITY);
        assert_eq!(signer.issuer, ISSUER);
        assert_eq!(signer.key.key_id(), made.key_id);
        assert_eq!(signer.log_index, Some(made.log_index));
        assert_eq!(signer.signed_at, Some(made.integrated_time));

        let expired = instance.sign(&Signing {
            validity: (-1200, -600),
            ..good.clone()
        });
        let unlisted = instance.sign(&Signing {
            unlisted_log: true,
            ..good.clone()
        });
        let stranger = instance.sign(&Signing {
            identity: "intruder@acme.example",
            ..good.clone()
        });
        for (text, expected) in [
            (expired.bundle, "certificate_expired"),
            (unlisted.bundle, "tlog"),
            (stranger.bundle, "identity"),
        ] {
            let err = verify(&text).unwrap_err();
            let got = match err {
                SignatureError::CertificateExpired(_) => "certificate_expired",
                SignatureError::LogInvalid(_) => "tlog",
                SignatureError::IdentityMismatch(_) => "identity",
                _ => "other",
            };
            assert_eq!(got, expected, "{err}");
        }
    }
}
