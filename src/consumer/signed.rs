//! `skillreg add --require-signed`: a version is installed only when a signature by a key the
//! user trusts covers exactly the files its entry lists (every file's bytes are then checked
//! against those digests before anything is written, as always). The bundle and the key are
//! kept beside the lock (`.skillreg/signatures/<ns>/<name>.sigstore.json`,
//! `.skillreg/keys/<key>.pem`), so that `skillreg check` verifies the installed files again,
//! offline, and so can `model_signing verify key` (OpenSSF Model Signing).
//!
//! Trusted keys: the `--key` files given; without any, the keys the source publishes
//! (`skillreg://signing-keys`), trusted on first use and recorded in the lock. With
//! `--identity`, only an author's signature the source verified for that identity counts, and
//! it must verify with a `--key` (the author's public key).
//!
//! A `--key` file may be a CA certificate instead: a bundle signed with a certificate
//! (`model_signing sign certificate`) then verifies here, offline, when its chain leads to that
//! CA with every certificate valid now, its leaf may sign and has the `--identity` as an email
//! or URI name (any, without `--identity`), and the leaf's key verifies the signature. The leaf's
//! public key is what is kept and recorded (its id in the lock, the name the CA's policy
//! accepted as the identity): `check` verifies the signature again with it, not the chain,
//! which was checked at install (its certificates may expire since).
//!
//! With `--issuer` (and `--identity`), a keyless bundle (a Sigstore Fulcio certificate and a
//! Rekor entry, `model_signing sign sigstore`) verifies here, offline, against Sigstore's
//! public-good production trusted root (built in), or the `trusted_root.json` of a private
//! Sigstore instance given with `--sigstore-trusted-root`: the log entry, the certificate's
//! chain to Fulcio at the time the log says it was signed, its SCT, the signature, and a
//! certificate naming that issuer and identity (`prefix*` and `*` as for a CA). The
//! certificate's key is kept and recorded, with the issuer, as for a CA-issued certificate.

use std::path::{Path, PathBuf};

use super::error::{Code, Error, Result};
use super::lock::{LockedFile, LockedSignature, LockedSkill};
use super::remote::{Entry, Remote};
use crate::core::signature::cert::Anchor;
use crate::core::signature::keyless::{KeylessPolicy, TrustRoot};
use crate::core::signature::{Bundle, PublicKey, Subject};
use crate::core::{Digest, Namespace, SkillName, SkillVersion};

/// What `--require-signed` asks of a version.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// `--key`: the public keys trusted; empty (with no `cas`) trusts the source's published
    /// keys.
    pub keys: Vec<PublicKey>,
    /// `--key` files that are CA certificates, for certificate-signed bundles (their policy is
    /// `--identity`, or any name without it).
    pub cas: Vec<Anchor>,
    /// `--identity`: the author whose signature is required.
    pub identity: Option<String>,
    /// `--issuer`: keyless bundles whose certificate names this OIDC issuer and `identity`
    /// verify (against `trusted_root`).
    pub issuer: Option<String>,
    /// `--sigstore-trusted-root`: the Sigstore trusted root keyless bundles are verified
    /// against; `None`: the public-good production root, built in.
    pub trusted_root: Option<std::sync::Arc<TrustRoot>>,
}

/// A verified signature, ready to be kept with the install.
pub struct Verified {
    pub locked: LockedSignature,
    bundle: String,
    key: PublicKey,
}

impl Verified {
    /// The signature of `by` in `bundle`, verified with `key`: the identity a certificate
    /// names (or the registry announced, for a key) and, keyless, the OIDC issuer.
    fn new(
        by: &str,
        key: PublicKey,
        identity: Option<String>,
        issuer: Option<String>,
        bundle: String,
    ) -> Self {
        Self {
            locked: LockedSignature {
                by: by.to_owned(),
                key: key.key_id(),
                identity,
                issuer,
            },
            bundle,
            key,
        }
    }
}

/// The version `path` @ the entry's version, as a signature's subject.
struct Owned {
    namespace: Namespace,
    name: SkillName,
    version: SkillVersion,
    files: Vec<(String, Digest)>,
}

impl Owned {
    fn new(path: &str, version: Option<&str>, files: &[LockedFile]) -> Result<Self> {
        let bad = |what: &str| Error::new(Code::Unsigned, format!("{path}: {what}"));
        let (ns, name) = path
            .split_once('/')
            .ok_or_else(|| bad("only NAMESPACE/NAME skills carry signatures"))?;
        let version = version.ok_or_else(|| bad("the source names no version to verify"))?;
        let files = files
            .iter()
            .map(|f| {
                Ok((
                    f.path.clone(),
                    f.digest.parse().map_err(|_| bad("bad digest"))?,
                ))
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            namespace: Namespace::new(ns).map_err(|e| bad(&e.to_string()))?,
            name: SkillName::new(name).map_err(|e| bad(&e.to_string()))?,
            version: SkillVersion::parse(version).map_err(|e| bad(&e.to_string()))?,
            files,
        })
    }

    fn check(&self, text: &str) -> Result<Bundle, String> {
        let files: Vec<(&str, Digest)> = self.files.iter().map(|(p, d)| (p.as_str(), *d)).collect();
        let subject = Subject {
            namespace: &self.namespace,
            name: &self.name,
            version: &self.version,
            // Not part of what is checked: the statement's files are.
            content_digest: Digest::of(b""),
            files: &files,
        };
        Bundle::read(text, &subject).map_err(|e| e.to_string())
    }
}

/// Verify `entry` (installed as `path`) against `policy`, before any byte is written.
pub async fn verify(
    remote: &Remote,
    path: &str,
    entry: &Entry,
    policy: &Policy,
) -> Result<Verified> {
    let version = entry.version.as_ref().map(ToString::to_string);
    let owned = Owned::new(path, version.as_deref(), &entry.locked_files())?;
    let shown = format!("{path} {}", version.as_deref().unwrap_or(""));
    let wanted: Vec<_> = entry
        .signatures
        .iter()
        .filter(|s| match &policy.identity {
            // With --issuer, --identity may be a keyless policy (`prefix*`, `*`).
            Some(identity) if policy.issuer.is_some() => {
                let wanted = crate::core::signature::cert::IdentityPolicy::parse(identity);
                s.by == "author"
                    && s.verified
                    && s.identity.as_deref().is_some_and(|i| wanted.matches(i))
            }
            Some(identity) => {
                s.by == "author" && s.verified && s.identity.as_deref() == Some(identity)
            }
            None => true,
        })
        .collect();
    if wanted.is_empty() {
        let what = match &policy.identity {
            Some(identity) => format!("no signature by {identity:?} the source verified"),
            None => "no signature".to_owned(),
        };
        return Err(Error::new(
            Code::Unsigned,
            format!("{shown}: {what}; nothing was written"),
        ));
    }
    let keyless = match (&policy.issuer, &policy.identity) {
        (Some(issuer), Some(identity)) => Some(
            KeylessPolicy::new(issuer, identity)
                .map_err(|e| Error::new(Code::Usage, format!("--issuer: {e}")))?,
        ),
        (Some(_), None) => {
            return Err(Error::new(Code::Usage, "--issuer needs --identity"));
        }
        (None, _) => None,
    };
    let keys = if policy.keys.is_empty() && policy.cas.is_empty() && keyless.is_none() {
        if policy.identity.is_some() {
            return Err(Error::new(
                Code::Usage,
                "--identity needs the author's public key or their certificates' CA (pass it \
                 with --key FILE), or, signed keyless, their OIDC issuer (--issuer URL)",
            ));
        }
        remote.signing_keys().await?
    } else {
        policy.keys.clone()
    };
    // The built-in root, read only when a keyless bundle is met.
    let mut production = None;
    let mut failures = Vec::new();
    for announced in wanted {
        let text = remote.read_bundle(&announced.uri).await?;
        let bundle = owned.check(&text).map_err(|why| {
            Error::new(
                Code::SignatureInvalid,
                format!(
                    "{shown}: the {} signature: {why}; nothing was written",
                    announced.by
                ),
            )
        })?;
        if bundle.is_keyless() {
            let Some(keyless) = &keyless else {
                failures.push(format!(
                    "{} (keyless: pass the signer's --issuer and --identity)",
                    announced.by
                ));
                continue;
            };
            let root = match &policy.trusted_root {
                Some(root) => &**root,
                None => production.get_or_insert_with(TrustRoot::production),
            };
            match bundle.verify_keyless(root, std::slice::from_ref(keyless)) {
                Ok(signer) => {
                    return Ok(Verified::new(
                        &announced.by,
                        signer.key,
                        Some(signer.identity),
                        Some(signer.issuer),
                        text,
                    ));
                }
                Err(e) => {
                    failures.push(format!("{} (keyless: {e} [{}])", announced.by, e.code()));
                    continue;
                }
            }
        }
        if bundle.has_certificate() {
            let now = rustls_pki_types::UnixTime::now();
            match bundle.verify_certificate(&policy.cas, now) {
                Ok(signer) => {
                    return Ok(Verified::new(
                        &announced.by,
                        signer.key,
                        Some(signer.identity),
                        None,
                        text,
                    ));
                }
                Err(e) => {
                    failures.push(format!(
                        "{} (certificate: {e} [{}])",
                        announced.by,
                        e.code()
                    ));
                    continue;
                }
            }
        }
        match keys.iter().find(|k| bundle.verify(k).is_ok()) {
            Some(key) => {
                return Ok(Verified::new(
                    &announced.by,
                    key.clone(),
                    announced.identity.clone(),
                    None,
                    text,
                ));
            }
            None => failures.push(format!("{} (key {})", announced.by, announced.key_id)),
        }
    }
    Err(Error::new(
        Code::Unsigned,
        format!(
            "{shown}: no trusted key verifies its signatures ({}); nothing was written",
            failures.join(", ")
        ),
    ))
}

/// Where the bundle and key of `skill` are kept, beside the lock at `lock_path`.
fn kept(lock_path: &Path, skill_path: &str, key_id: &str) -> (PathBuf, PathBuf) {
    let dir = lock_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(".skillreg");
    (
        dir.join("signatures")
            .join(format!("{skill_path}.sigstore.json")),
        dir.join("keys").join(format!("{key_id}.pem")),
    )
}

/// Keep `verified`'s bundle and key beside the lock.
pub fn keep(lock_path: &Path, skill_path: &str, verified: &Verified) -> Result<()> {
    let (bundle, key) = kept(lock_path, skill_path, &verified.locked.key);
    for (file, text) in [
        (&bundle, verified.bundle.as_str()),
        (&key, verified.key.pem()),
    ] {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        }
        std::fs::write(file, text).map_err(|e| Error::io(file.display(), e))?;
    }
    Ok(())
}

/// `check`: the kept bundle still covers the locked files and verifies with the kept key whose
/// id the lock records. The reason when it does not.
pub fn check(lock_path: &Path, skill: &LockedSkill) -> Option<String> {
    let signed = skill.signature.as_ref()?;
    let (bundle, key_file) = kept(lock_path, &skill.path, &signed.key);
    let run = || -> Result<(), String> {
        let text =
            std::fs::read_to_string(&bundle).map_err(|e| format!("{}: {e}", bundle.display()))?;
        let pem = std::fs::read_to_string(&key_file)
            .map_err(|e| format!("{}: {e}", key_file.display()))?;
        let key = PublicKey::from_pem(&pem).map_err(|e| e.to_string())?;
        if key.key_id() != signed.key {
            return Err(format!(
                "{} is not the key {} the lock records",
                key_file.display(),
                signed.key
            ));
        }
        let owned = Owned::new(&skill.path, skill.version.as_deref(), &skill.files)
            .map_err(|e| e.message)?;
        owned.check(&text)?.verify(&key).map_err(|e| e.to_string())
    };
    run().err()
}
