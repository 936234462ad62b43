//! The registry's signing key: each version stored is signed with it ([`core::signature`]), and
//! its public key is recorded in storage ([`crate::store::Signing`]) so that every key ever used
//! stays published, whatever replica or rotation signed with it.
//!
//! The key is a PEM file (ECDSA P-256 or P-384; PKCS#8, or SEC1 as `openssl ecparam -genkey`
//! writes it): the `signing_key` setting, else `signing-key.pem` in the data directory, made on
//! first use (P-256, mode 0600, never overwritten). It is read when first needed, so commands
//! that never publish never touch it.
//!
//! Beside it, the Sigstore trusted root authors' keyless signatures are checked against
//! ([`RootSlot`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aws_lc_rs::encoding::{AsDer, PublicKeyX509Der};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_ASN1_SIGNING, ECDSA_P384_SHA384_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _,
};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;

use crate::core::signature::keyless::TrustRoot;
use crate::core::signature::{self, PublicKey, Signed, Signer, Subject};
use crate::error::{Error, Result};
use crate::store::Store;

/// The file name of the key made in the data directory.
pub const DEFAULT_KEY_FILE: &str = "signing-key.pem";

/// A private key the registry signs versions with.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    public: PublicKey,
    rng: SystemRandom,
}

impl SigningKey {
    /// The key in `path`, made there first when there is none.
    pub fn load_or_create(path: &Path) -> Result<Self> {
        match std::fs::read(path) {
            Ok(pem) => Self::from_pem(&pem).map_err(|e| key_error(path, &e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(path),
            Err(e) => Err(key_error(path, &e.to_string())),
        }
    }

    /// A new P-256 key, written to `path` (0600) unless another process wrote one first.
    fn create(path: &Path) -> Result<Self> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new())
                .map_err(|_| key_error(path, &"generating a key failed"))?;
        let text = signature::pem("PRIVATE KEY", pkcs8.as_ref());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| key_error(path, &e.to_string()))?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(path) {
            Ok(mut file) => {
                std::io::Write::write_all(&mut file, text.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| key_error(path, &e.to_string()))?;
                tracing::info!(path = %path.display(), "made the registry's signing key");
                Self::from_pem(text.as_bytes()).map_err(|e| key_error(path, &e))
            }
            // Another process made it between the read and this open.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::load_or_create(path),
            Err(e) => Err(key_error(path, &e.to_string())),
        }
    }

    fn from_pem(pem: &[u8]) -> std::result::Result<Self, String> {
        let der = PrivateKeyDer::from_pem_slice(pem)
            .map_err(|e| format!("not a PEM private key: {e}"))?;
        let pair = [
            &ECDSA_P256_SHA256_ASN1_SIGNING,
            &ECDSA_P384_SHA384_ASN1_SIGNING,
        ]
        .into_iter()
        .find_map(|alg| EcdsaKeyPair::from_private_key_der(alg, der.secret_der()).ok())
        .ok_or("not an ECDSA P-256 or P-384 key")?;
        let spki: PublicKeyX509Der<'static> = pair
            .public_key()
            .as_der()
            .map_err(|_| "its public key does not encode")?;
        let public = PublicKey::from_der(spki.as_ref()).map_err(|e| e.to_string())?;
        Ok(Self {
            pair,
            public,
            rng: SystemRandom::new(),
        })
    }

    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// Sign `subject`: who signed, and the bundle.
    pub fn sign(&self, subject: &Subject<'_>) -> Result<(Signed, String)> {
        let payload = signature::statement(subject);
        let sig = self
            .pair
            .sign(
                &self.rng,
                &signature::pae(signature::PAYLOAD_TYPE, &payload),
            )
            .map_err(|_| Error::Internal("signing a version failed".into()))?;
        Ok((
            Signed {
                by: Signer::Registry,
                key_id: self.public.key_id(),
                identity: None,
                verified: true,
                certificate: None,
                keyless: None,
            },
            signature::bundle(&payload, sig.as_ref(), &self.public),
        ))
    }
}

fn key_error(path: &Path, why: &dyn std::fmt::Display) -> Error {
    Error::Internal(format!("the signing key {}: {why}", path.display()))
}

/// The key a registry signs with, read (and recorded in storage) when first needed.
pub struct KeySlot {
    path: Option<PathBuf>,
    key: tokio::sync::OnceCell<Arc<SigningKey>>,
}

impl KeySlot {
    /// Signing with the key at `path`; `None` stores versions unsigned.
    pub fn new(path: Option<PathBuf>) -> Self {
        Self {
            path,
            key: tokio::sync::OnceCell::new(),
        }
    }

    /// The key, or `None` when signing is off. Its public key is recorded in `store` once.
    pub async fn get(&self, store: &dyn Store) -> Result<Option<&Arc<SigningKey>>> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let key = self
            .key
            .get_or_try_init(|| async {
                let path = path.clone();
                let key = tokio::task::spawn_blocking(move || SigningKey::load_or_create(&path))
                    .await
                    .map_err(|e| Error::Internal(format!("reading the signing key: {e}")))??;
                let public = key.public();
                if store
                    .add_signing_key(&public.key_id(), public.pem())
                    .await?
                {
                    tracing::info!(key_id = %public.key_id(), "recorded a new signing key");
                }
                Ok::<_, Error>(Arc::new(key))
            })
            .await?;
        Ok(Some(key))
    }
}

/// The Sigstore trusted root keyless author signatures are verified against
/// (`core::signature::keyless`): the `sigstore_trusted_root` file, else the public-good
/// production root the `sigstore-trust-root` crate embeds. Read when first needed.
pub struct RootSlot {
    path: Option<PathBuf>,
    root: tokio::sync::OnceCell<Arc<TrustRoot>>,
}

impl RootSlot {
    pub fn new(path: Option<PathBuf>) -> Self {
        Self {
            path,
            root: tokio::sync::OnceCell::new(),
        }
    }

    /// The root, read (and prepared) once; a file that does not read or is no trusted root is
    /// an error each time it is asked for.
    pub async fn get(&self) -> Result<&Arc<TrustRoot>> {
        self.root
            .get_or_try_init(|| async {
                let Some(path) = self.path.clone() else {
                    return Ok(Arc::new(TrustRoot::production()));
                };
                let root = tokio::task::spawn_blocking(move || {
                    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
                    TrustRoot::from_json(&text)
                })
                .await
                .map_err(|e| Error::Internal(format!("reading the Sigstore trusted root: {e}")))?
                .map_err(|e| {
                    Error::Internal(format!(
                        "the Sigstore trusted root {}: {e}",
                        self.path.as_deref().unwrap_or(Path::new("")).display()
                    ))
                })?;
                Ok::<_, Error>(Arc::new(root))
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_trusted_root_is_the_file_named_or_the_embedded_one() {
        RootSlot::new(None).get().await.unwrap();
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("trusted_root.json");
        std::fs::write(
            &file,
            sigstore_verify::trust_root::SIGSTORE_STAGING_TRUSTED_ROOT,
        )
        .unwrap();
        RootSlot::new(Some(file.clone())).get().await.unwrap();
        // A file that is missing, or not a trusted root, is an error naming it.
        std::fs::write(&file, "{\"mediaType\": 1}").unwrap();
        let missing = dir.path().join("missing.json");
        for path in [file, missing] {
            let err = RootSlot::new(Some(path.clone())).get().await.unwrap_err();
            assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
        }
    }
}
