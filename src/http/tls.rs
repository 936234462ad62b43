//! Native TLS for `serve` (`tls_cert`, `tls_key`): the certificate chain and private key are
//! read from their PEM files at start, where a file that cannot be used refuses the start, and
//! again by [`Tls::reload`] (`serve` calls it on SIGHUP). A reload swaps the pair that new
//! handshakes get; connections already open keep theirs, and a reload that fails keeps the
//! previous pair. The server speaks HTTP/1.1 only, so that is all ALPN offers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{InconsistentKeys, ServerConfig};
use rustls_pki_types::pem::{self, PemObject as _};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::config::ConfigError;

/// The TLS side of the server: the acceptor every connection's handshake goes through, and the
/// pair it serves, which [`Tls::reload`] replaces. Clones share the pair.
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
    pair: Arc<Pair>,
}

/// The certificate chain and key the handshakes get, and where they are read from.
#[derive(Debug)]
struct Pair {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl Tls {
    /// Read the certificate chain of `cert` and the private key of `key` (PEM files).
    pub fn load(cert: &Path, key: &Path) -> Result<Self, ConfigError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let certified = read_pair(cert, key, &provider)?;
        let pair = Arc::new(Pair {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            provider: provider.clone(),
            current: RwLock::new(Arc::new(certified)),
        });
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigError::Invalid(format!("TLS: {e}")))?
            .with_no_client_auth()
            .with_cert_resolver(pair.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            pair,
        })
    }

    /// Read both files again: new handshakes get the new pair. On an error (which names the
    /// file) the previous pair stays.
    pub fn reload(&self) -> Result<(), ConfigError> {
        let certified = read_pair(&self.pair.cert, &self.pair.key, &self.pair.provider)?;
        *self.pair.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(certified);
        Ok(())
    }

    /// The certificate file (for logs).
    pub fn cert_path(&self) -> &Path {
        &self.pair.cert
    }

    pub(super) fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }
}

impl ResolvesServerCert for Pair {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

/// The chain of `cert` with the key of `key`, checked to belong together.
fn read_pair(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, ConfigError> {
    let invalid = |setting: &str, path: &Path, why: String| {
        ConfigError::Invalid(format!("{setting} {}: {why}", path.display()))
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid("tls_cert", cert, pem_problem(&e)))?;
    if chain.is_empty() {
        return Err(invalid(
            "tls_cert",
            cert,
            "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned(),
        ));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| match e {
        pem::Error::NoItemsFound => invalid(
            "tls_key",
            key,
            "holds no PEM private key (PKCS#8, PKCS#1 or SEC1)".to_owned(),
        ),
        e => invalid("tls_key", key, pem_problem(&e)),
    })?;
    CertifiedKey::from_der(chain, private, provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch) => invalid(
            "tls_key",
            key,
            format!("is not the key of the certificate in {}", cert.display()),
        ),
        rustls::Error::General(why) => invalid("tls_key", key, format!("unusable key: {why}")),
        e => invalid(
            "tls_cert",
            cert,
            format!("its first certificate is unusable: {e}"),
        ),
    })
}

/// What is wrong with a PEM file, without its contents.
fn pem_problem(e: &pem::Error) -> String {
    match e {
        pem::Error::Io(e) => format!("cannot read it: {e}"),
        e => format!("not valid PEM: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate for `name` and its key, both PEM, written to `dir`.
    fn write_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf, Vec<u8>) {
        let made = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
        let (cert, key) = (
            dir.join(format!("{name}.crt")),
            dir.join(format!("{name}.key")),
        );
        std::fs::write(&cert, made.cert.pem()).unwrap();
        std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
        (cert, key, made.cert.der().to_vec())
    }

    fn served(tls: &Tls) -> Vec<u8> {
        let current = tls.pair.current.read().unwrap().clone();
        current.cert[0].to_vec()
    }

    #[test]
    fn a_reload_swaps_the_pair_and_a_failed_one_keeps_it() {
        let dir = tempfile::TempDir::new().unwrap();
        let (cert, key, a) = write_pair(dir.path(), "a.example");
        let tls = Tls::load(&cert, &key).unwrap();
        assert_eq!(served(&tls), a);
        let (cert_b, key_b, b) = write_pair(dir.path(), "b.example");
        std::fs::copy(&cert_b, &cert).unwrap();
        std::fs::copy(&key_b, &key).unwrap();
        tls.reload().unwrap();
        assert_eq!(served(&tls), b);
        std::fs::write(&key, "not a key\n").unwrap();
        let err = tls.reload().unwrap_err().to_string();
        assert!(
            err.contains(&key.display().to_string()) && err.contains("no PEM private key"),
            "{err}"
        );
        assert_eq!(served(&tls), b, "a failed reload keeps the pair");
    }

    #[test]
    fn files_that_cannot_serve_name_the_file_and_the_problem() {
        let dir = tempfile::TempDir::new().unwrap();
        let (cert_a, key_a, _) = write_pair(dir.path(), "a.example");
        let (_, key_b, _) = write_pair(dir.path(), "b.example");
        let err = |cert: &Path, key: &Path| Tls::load(cert, key).err().unwrap().to_string();
        let missing = dir.path().join("missing.pem");
        let e = err(&missing, &key_a);
        assert!(
            e.contains("tls_cert") && e.contains("missing.pem") && e.contains("cannot read"),
            "{e}"
        );
        let e = err(&key_a, &key_a);
        assert!(
            e.contains("tls_cert") && e.contains("no PEM certificate"),
            "{e}"
        );
        let e = err(&cert_a, &cert_a);
        assert!(
            e.contains("tls_key") && e.contains("no PEM private key"),
            "{e}"
        );
        let e = err(&cert_a, &key_b);
        assert!(
            e.contains(&key_b.display().to_string())
                && e.contains("is not the key of the certificate"),
            "{e}"
        );
        let broken = dir.path().join("broken.crt");
        std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\nAAAA\n").unwrap();
        let e = err(&broken, &key_a);
        assert!(
            e.contains("broken.crt") && e.contains("not valid PEM"),
            "{e}"
        );
    }
}
