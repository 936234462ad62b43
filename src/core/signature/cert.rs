//! Certificate mode: a bundle made by `model_signing sign certificate` carries the signing
//! certificate and the chain its author gave (`verificationMaterial.x509CertificateChain`, leaf
//! first). It is trusted when, offline and at the time given:
//! - the chain leads from the leaf to one of the namespace's registered CA certificates
//!   ([`Anchor`]), every certificate on it valid then (WebPKI path building; no transparency
//!   log, so the time is the verifier's own, not a logged signing time);
//! - the leaf may sign, as `model_signing verify certificate` requires: key usage
//!   `digitalSignature`, or extended key usage `codeSigning`;
//! - one of the leaf's subject alternative names (email or URI) satisfies the anchor's identity
//!   policy ([`IdentityPolicy`]);
//! - and the DSSE signature verifies with the leaf's public key (ECDSA P-256 or P-384).
//!
//! `model_signing verify certificate` checks the chain at the leaf's `notBefore`; the registry
//! and the install client check it now, so an expired certificate is refused
//! ([`SignatureError::CertificateExpired`]).

use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, UnixTime};
use webpki::{EndEntityCert, ExtendedKeyUsageValidator, KeyPurposeIdIter};
use x509_parser::extensions::GeneralName;

use super::{Digest, PublicKey, SignatureError};

/// What a registered CA asks of a leaf's subject alternative names (email or URI): `*` any,
/// `prefix*` one that starts with `prefix`, else one equal to the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityPolicy {
    Any,
    Prefix(String),
    Exact(String),
}

impl IdentityPolicy {
    /// From its text (`*`, `prefix*` or a value).
    pub fn parse(text: &str) -> Self {
        match text.strip_suffix('*') {
            Some("") => Self::Any,
            Some(prefix) => Self::Prefix(prefix.to_owned()),
            None => Self::Exact(text.to_owned()),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Prefix(prefix) => name.starts_with(prefix.as_str()),
            Self::Exact(value) => name == value,
        }
    }
}

impl std::fmt::Display for IdentityPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Prefix(prefix) => write!(f, "{prefix}*"),
            Self::Exact(value) => f.write_str(value),
        }
    }
}

/// A CA certificate a namespace trusts for its authors' certificates, with its identity policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    der: Vec<u8>,
    pub policy: IdentityPolicy,
}

/// Whether a PEM text is a certificate (a CA to register) rather than a public key.
pub fn is_certificate_pem(text: &str) -> bool {
    text.trim_start().starts_with("-----BEGIN CERTIFICATE-----")
}

impl Anchor {
    /// From one PEM `CERTIFICATE` block and a policy's text.
    pub fn from_pem(text: &str, policy: &str) -> Result<Self, SignatureError> {
        let der = CertificateDer::from_pem_slice(text.as_bytes())
            .map_err(|e| SignatureError::Malformed(format!("not a PEM certificate: {e}")))?;
        webpki::anchor_from_trusted_cert(&der).map_err(|e| {
            SignatureError::Malformed(format!("the certificate is not a usable CA: {e}"))
        })?;
        Ok(Self {
            der: der.as_ref().to_vec(),
            policy: IdentityPolicy::parse(policy),
        })
    }

    /// Its id: the sha256 of its DER, hex (`openssl x509 -fingerprint -sha256`, lowercase,
    /// without colons).
    pub fn id(&self) -> String {
        Digest::of(&self.der).hex()
    }

    /// The certificate as PEM.
    pub fn pem(&self) -> String {
        super::pem("CERTIFICATE", &self.der)
    }
}

/// Who a certificate chain says signed: what the registry serves and the lock records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSigner {
    /// The subject alternative name the policy accepted (or, under `*` with no email or URI
    /// name, the leaf's subject).
    pub identity: String,
    /// The leaf's subject, as OpenSSL prints it (RFC 4514).
    pub subject: String,
    /// The leaf's public key: what verifies the envelope.
    pub key: PublicKey,
    /// The [`Anchor::id`] the chain ends at.
    pub anchor: String,
}

/// Key purposes are checked with key usage after path building (as the reference verifier
/// does: either one suffices), so path building itself accepts any.
struct AnyPurpose;

impl ExtendedKeyUsageValidator for AnyPurpose {
    fn validate(&self, iter: KeyPurposeIdIter<'_, '_>) -> Result<(), webpki::Error> {
        for id in iter {
            id?;
        }
        Ok(())
    }
}

/// Check `chain` (DER, leaf first) against `anchors` at `now`: the signer, or why not. Among
/// several anchors, the first one that both roots the chain and accepts the leaf's names wins.
pub fn verify_chain(
    chain: &[Vec<u8>],
    anchors: &[Anchor],
    now: UnixTime,
) -> Result<CertSigner, SignatureError> {
    let Some((leaf_der, rest)) = chain.split_first() else {
        return Err(SignatureError::Malformed(
            "its certificate chain is empty".into(),
        ));
    };
    let leaf_der = CertificateDer::from(leaf_der.as_slice());
    let leaf = EndEntityCert::try_from(&leaf_der)
        .map_err(|e| SignatureError::Malformed(format!("its signing certificate: {e}")))?;
    let intermediates: Vec<CertificateDer<'_>> = rest
        .iter()
        .map(|c| CertificateDer::from(c.as_slice()))
        .collect();
    let (_, parsed) = x509_parser::parse_x509_certificate(leaf_der.as_ref())
        .map_err(|e| SignatureError::Malformed(format!("its signing certificate: {e}")))?;
    let subject = parsed.subject().to_string();
    let names = alternative_names(&parsed)?;
    let mut refused: Option<SignatureError> = None;
    for anchor in anchors {
        let anchor_der = CertificateDer::from(anchor.der.as_slice());
        let Ok(trust) = webpki::anchor_from_trusted_cert(&anchor_der) else {
            continue;
        };
        let trusted = [trust];
        let path = leaf.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &trusted,
            &intermediates,
            now,
            AnyPurpose,
            None,
            None,
        );
        let error = match path {
            Ok(_) => {
                let accepted = names.iter().find(|n| anchor.policy.matches(n));
                match (accepted, &anchor.policy) {
                    (Some(name), _) => return signer(&parsed, name.clone(), subject, anchor),
                    (None, IdentityPolicy::Any) => {
                        return signer(&parsed, subject.clone(), subject, anchor);
                    }
                    (None, policy) => SignatureError::IdentityMismatch(format!(
                        "the certificate names {} ({subject}); CA {} accepts {policy}",
                        if names.is_empty() {
                            "no email or URI".to_owned()
                        } else {
                            names.join(", ")
                        },
                        anchor.id()
                    )),
                }
            }
            Err(
                e @ (webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. }),
            ) => SignatureError::CertificateExpired(format!("{subject}: {e}")),
            Err(e) => SignatureError::CertificateUntrusted(format!("{subject}: {e}")),
        };
        // The most telling reason: a name that does not match, then a validity period, then an
        // untrusted chain.
        let rank = |e: &SignatureError| match e {
            SignatureError::IdentityMismatch(_) => 2,
            SignatureError::CertificateExpired(_) => 1,
            _ => 0,
        };
        if refused.as_ref().is_none_or(|r| rank(&error) > rank(r)) {
            refused = Some(error);
        }
    }
    Err(refused
        .unwrap_or_else(|| SignatureError::CertificateUntrusted("no CA is trusted for it".into())))
}

/// The leaf's email and URI subject alternative names.
fn alternative_names(
    cert: &x509_parser::certificate::X509Certificate<'_>,
) -> Result<Vec<String>, SignatureError> {
    let san = cert.subject_alternative_name().map_err(|e| {
        SignatureError::Malformed(format!("its subject alternative names do not read: {e}"))
    })?;
    Ok(san
        .map(|ext| {
            ext.value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    GeneralName::RFC822Name(s) | GeneralName::URI(s) => Some((*s).to_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default())
}

/// The signer of a leaf whose chain and names are accepted, once it may sign.
fn signer(
    cert: &x509_parser::certificate::X509Certificate<'_>,
    identity: String,
    subject: String,
    anchor: &Anchor,
) -> Result<CertSigner, SignatureError> {
    let unreadable = |e: x509_parser::error::X509Error| {
        SignatureError::Malformed(format!("its signing certificate's extensions: {e}"))
    };
    let digital_signature = cert
        .key_usage()
        .map_err(unreadable)?
        .is_some_and(|ku| ku.value.digital_signature());
    let code_signing = cert
        .extended_key_usage()
        .map_err(unreadable)?
        .is_some_and(|eku| eku.value.code_signing);
    if !digital_signature && !code_signing {
        return Err(SignatureError::CertificateUntrusted(format!(
            "{subject}: the certificate may not sign (neither key usage digitalSignature nor \
             extended key usage codeSigning)"
        )));
    }
    Ok(CertSigner {
        identity,
        subject,
        key: PublicKey::from_der(cert.public_key().raw)?,
        anchor: anchor.id(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_policies_read_and_match() {
        assert_eq!(IdentityPolicy::parse("*"), IdentityPolicy::Any);
        let prefix = IdentityPolicy::parse("https://github.com/acme/*");
        assert!(prefix.matches("https://github.com/acme/skills/.github/workflows/r.yml@main"));
        assert!(!prefix.matches("https://github.com/acmex/skills"));
        let exact = IdentityPolicy::parse("release@acme.example");
        assert!(exact.matches("release@acme.example"));
        assert!(!exact.matches("release@acme.example.evil"));
        for text in ["*", "https://github.com/acme/*", "release@acme.example"] {
            assert_eq!(IdentityPolicy::parse(text).to_string(), text);
        }
    }

    #[test]
    fn only_a_pem_certificate_is_an_anchor() {
        assert!(is_certificate_pem(
            "\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        ));
        assert!(!is_certificate_pem(
            "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n"
        ));
        let err = Anchor::from_pem(
            "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n",
            "*",
        )
        .unwrap_err();
        assert!(matches!(err, SignatureError::Malformed(_)), "{err}");
    }

    use rcgen::{
        BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
        KeyUsagePurpose, SanType, date_time_ymd,
    };

    /// A CA made with rcgen: its anchor (under `policy`) and what issues under it.
    fn ca(policy: &str) -> (Anchor, Issuer<'static, KeyPair>) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign];
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "Test CA");
        let cert = params.self_signed(&key).unwrap();
        let anchor = Anchor::from_pem(&cert.pem(), policy).unwrap();
        (anchor, Issuer::new(params, key))
    }

    /// A leaf for `email` issued by `issuer`; `edit` changes its parameters first.
    fn leaf(
        issuer: &Issuer<'_, KeyPair>,
        email: &str,
        edit: impl FnOnce(&mut CertificateParams),
    ) -> Vec<u8> {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.subject_alt_names = vec![SanType::Rfc822Name(email.try_into().unwrap())];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "Release");
        edit(&mut params);
        params.signed_by(&key, issuer).unwrap().der().to_vec()
    }

    /// 2026-06-01, inside rcgen's default validity.
    fn now() -> UnixTime {
        UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_780_272_000))
    }

    #[test]
    fn a_leaf_of_a_registered_ca_signs_as_its_email() {
        let (anchor, issuer) = ca("release@acme.example");
        let leaf = leaf(&issuer, "release@acme.example", |_| {});
        let signer = verify_chain(&[leaf], std::slice::from_ref(&anchor), now()).unwrap();
        assert_eq!(signer.identity, "release@acme.example");
        assert_eq!(signer.subject, "CN=Release");
        assert_eq!(signer.anchor, anchor.id());
    }

    #[test]
    fn each_refusal_has_its_own_reason() {
        let (anchor, issuer) = ca("https://ci.acme.example/*");
        let (_, stranger) = ca("*");
        let anchors = std::slice::from_ref(&anchor);
        let uri = |p: &mut CertificateParams| {
            p.subject_alt_names = vec![SanType::URI(
                "https://ci.acme.example/release".try_into().unwrap(),
            )];
        };
        let ok = leaf(&issuer, "", uri);
        assert_eq!(
            verify_chain(&[ok], anchors, now()).unwrap().identity,
            "https://ci.acme.example/release"
        );
        let expired = leaf(&issuer, "", |p| {
            uri(p);
            p.not_before = date_time_ymd(2024, 1, 1);
            p.not_after = date_time_ymd(2024, 2, 1);
        });
        let other_ca = leaf(&stranger, "", uri);
        let mismatch = leaf(&issuer, "release@acme.example", |_| {});
        let may_not_sign = leaf(&issuer, "", |p| {
            uri(p);
            p.key_usages = vec![KeyUsagePurpose::KeyEncipherment];
        });
        let code_signing = leaf(&issuer, "", |p| {
            uri(p);
            p.key_usages = vec![KeyUsagePurpose::KeyEncipherment];
            p.extended_key_usages = vec![ExtendedKeyUsagePurpose::CodeSigning];
        });
        assert!(verify_chain(&[code_signing], anchors, now()).is_ok());
        for (chain, expected) in [
            (expired, "expired"),
            (other_ca, "untrusted"),
            (mismatch, "identity"),
            (may_not_sign, "untrusted"),
        ] {
            let err = verify_chain(&[chain], anchors, now()).unwrap_err();
            let got = match err {
                SignatureError::CertificateExpired(_) => "expired",
                SignatureError::CertificateUntrusted(_) => "untrusted",
                SignatureError::IdentityMismatch(_) => "identity",
                _ => "other",
            };
            assert_eq!(got, expected, "{err}");
        }
    }

    #[test]
    fn an_empty_chain_or_no_anchor_is_refused() {
        assert!(matches!(
            verify_chain(&[], &[], now()),
            Err(SignatureError::Malformed(_))
        ));
        let (_, issuer) = ca("*");
        let leaf = leaf(&issuer, "release@acme.example", |_| {});
        assert!(matches!(
            verify_chain(&[leaf], &[], now()),
            Err(SignatureError::CertificateUntrusted(_))
        ));
    }
}
