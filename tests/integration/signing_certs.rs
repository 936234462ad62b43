//! Certificate-signed versions: a namespace registers a CA (with a policy for its leaves'
//! names), an author signs with `model_signing sign certificate` using a leaf `openssl` issued,
//! and the registry verifies the chain offline at publish; `skillreg add --identity --key CA`
//! verifies it again before writing. Certificates, keys and bundles are all made by the real
//! tools, in a temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::signing::{FILES, add, check, model_signing, publish_signed, write_dir};
use crate::common::{ADMIN, admin_server, run_cli_async};
use crate::rest::{Api, code};

/// `openssl <args>` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str], envs: &[(&str, &str)]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A small PKI made with `openssl`: CAs (`req -x509`) and leaves they issue (`ca`), each with
/// a P-256 key, in one directory.
struct Pki {
    dir: PathBuf,
}

/// The `openssl ca` configuration: leaves that may sign code, with one email name.
const CA_CONFIG: &str = "\
[ca]
default_ca = ca_default
[ca_default]
database = index.txt
unique_subject = no
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
[any]
commonName = supplied
organizationName = optional
[leaf]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = codeSigning
subjectAltName = email:${ENV::SAN}
";

impl Pki {
    fn new(dir: &Path) -> Self {
        std::fs::write(dir.join("ca.cnf"), CA_CONFIG).unwrap();
        std::fs::write(dir.join("index.txt"), "").unwrap();
        std::fs::write(dir.join("serial"), "01\n").unwrap();
        Self {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// A self-signed CA `name` (`name.pem`, `name.key`).
    fn ca(&self, name: &str, cn: &str) -> PathBuf {
        openssl(
            &self.dir,
            &[
                "req",
                "-x509",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.pem"),
                "-days",
                "30",
                "-subj",
                &format!("/CN={cn}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
            &[],
        );
        self.path(&format!("{name}.pem"))
    }

    /// A leaf `name` issued by CA `ca` for `email`: valid from now for a year, or over `dates`
    /// (`YYYYMMDDHHMMSSZ` start and end).
    fn leaf(&self, name: &str, ca: &str, email: &str, dates: Option<(&str, &str)>) {
        let (key, csr) = (format!("{name}.key"), format!("{name}.csr"));
        openssl(
            &self.dir,
            &[
                "ecparam",
                "-name",
                "prime256v1",
                "-genkey",
                "-noout",
                "-out",
                &key,
            ],
            &[],
        );
        openssl(
            &self.dir,
            &[
                "req",
                "-new",
                "-key",
                &key,
                "-subj",
                &format!("/CN={name}/O=Acme"),
                "-out",
                &csr,
            ],
            &[],
        );
        let (ca_pem, ca_key, out) = (
            format!("{ca}.pem"),
            format!("{ca}.key"),
            format!("{name}.pem"),
        );
        let mut args = vec![
            "ca",
            "-batch",
            "-config",
            "ca.cnf",
            "-cert",
            &ca_pem,
            "-keyfile",
            &ca_key,
            "-in",
            &csr,
            "-out",
            &out,
            "-notext",
            "-extensions",
            "leaf",
        ];
        match dates {
            Some((start, end)) => args.extend(["-startdate", start, "-enddate", end]),
            None => args.extend(["-days", "365"]),
        }
        openssl(&self.dir, &args, &[("SAN", email)]);
    }

    /// `model_signing sign certificate` over `files` with leaf `name` and its chain (`ca`): the
    /// bundle text.
    fn sign(&self, name: &str, ca: &str, files: &[(&str, &str)]) -> String {
        let dir = TempDir::new_in(&self.dir).unwrap();
        let skill = dir.path().join("signed");
        write_dir(&skill, files);
        let sig = dir.path().join("sig.json");
        let (ok, text) = model_signing(&[
            "sign",
            "certificate",
            "--private_key",
            self.path(&format!("{name}.key")).to_str().unwrap(),
            "--signing_certificate",
            self.path(&format!("{name}.pem")).to_str().unwrap(),
            "--certificate_chain",
            self.path(&format!("{ca}.pem")).to_str().unwrap(),
            "--signature",
            sig.to_str().unwrap(),
            skill.to_str().unwrap(),
        ]);
        assert!(ok, "model_signing sign certificate failed: {text}");
        std::fs::read_to_string(sig).unwrap()
    }

    /// The SHA-256 fingerprint of certificate `name` as `openssl x509` prints it, as the
    /// registry names a CA: lowercase hex without colons.
    fn fingerprint(&self, name: &str) -> String {
        let out = Command::new("openssl")
            .current_dir(&self.dir)
            .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
            .arg(format!("{name}.pem"))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        text.trim()
            .rsplit('=')
            .next()
            .unwrap()
            .replace(':', "")
            .to_lowercase()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_signed_versions_are_verified_against_the_namespaces_ca() {
    let server = admin_server().await;
    let api = Api::new(&server);
    let work = TempDir::new().unwrap();
    let pki = Pki::new(work.path());
    let ca = pki.ca("ca", "Acme Signing CA");
    pki.ca("other", "Other CA");
    pki.leaf("release", "ca", "release@acme.example", None);
    pki.leaf(
        "expired",
        "ca",
        "release@acme.example",
        Some(("20240101000000Z", "20240201000000Z")),
    );
    pki.leaf("stranger", "other", "release@acme.example", None);
    pki.leaf("intern", "ca", "intern@acme.example", None);

    // An admin registers the CA with the CLI, its leaves' email fixed by the policy.
    let out = run_cli_async(
        &[
            "namespace",
            "key",
            "acme",
            ca.to_str().unwrap(),
            "--identity",
            "release@acme.example",
            "--registry",
            &server.base(),
        ],
        &[("SKILLREG_TOKEN", ADMIN)],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let ca_id = pki.fingerprint("ca");
    assert!(out.stdout.contains(&format!("{ca_id}  ca ")), "{out:?}");
    let (status, keys) = api
        .send(Method::GET, "/v1/namespaces/acme/keys", Some(ADMIN), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{keys}");
    assert_eq!(keys["keys"][0]["keyId"], ca_id.as_str(), "{keys}");
    assert_eq!(keys["keys"][0]["kind"], "ca", "{keys}");
    assert_eq!(keys["keys"][0]["identity"], "release@acme.example");
    // A certificate sent as a public key (or neither) is refused.
    let pem = std::fs::read_to_string(&ca).unwrap();
    for body in [
        json!({"identity": "*", "publicKey": pem}),
        json!({"identity": "*"}),
    ] {
        let (status, answer) = api
            .send(
                Method::POST,
                "/v1/namespaces/acme/keys",
                Some(ADMIN),
                Some(body),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    }

    // The release leaf's bundle is accepted and served as verified, naming the certificate.
    let good = pki.sign("release", "ca", &FILES);
    let (status, body) = publish_signed(&server, "acme", "1.0.0", &FILES, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, detail) = api.get("/v1/skills/acme/signed/1.0.0").await;
    let author = &detail["signatures"][0];
    assert_eq!(author["by"], "author", "{detail}");
    assert_eq!(author["verified"], true, "{detail}");
    assert_eq!(author["identity"], "release@acme.example", "{detail}");
    assert_eq!(
        author["certificate"],
        json!({"subject": "CN=release, O=Acme", "ca": ca_id}),
        "{detail}"
    );
    assert_eq!(author["keyId"].as_str().unwrap().len(), 64, "{detail}");
    assert_eq!(detail["signatures"][1]["by"], "registry", "{detail}");

    // Model Signing's own verifier agrees, on the bundle as served and the files as installed.
    let resp = reqwest::get(format!(
        "{}/v1/skills/acme/signed/1.0.0/signature?by=author",
        server.base()
    ))
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let served = resp.text().await.unwrap();
    assert_eq!(served, good);
    let project = TempDir::new().unwrap();
    let out = add(
        project.path(),
        &[
            "acme/signed@1.0.0",
            "--from",
            &server.url,
            "--identity",
            "release@acme.example",
            "--key",
            ca.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let installed = project.path().join(".claude/skills/signed");
    let sig = work.path().join("served.json");
    std::fs::write(&sig, &served).unwrap();
    let verify = |dir: &Path| {
        model_signing(&[
            "verify",
            "certificate",
            "--signature",
            sig.to_str().unwrap(),
            "--certificate_chain",
            ca.to_str().unwrap(),
            dir.to_str().unwrap(),
        ])
    };
    let (ok, text) = verify(&installed);
    assert!(
        ok,
        "model_signing refused what the registry accepted: {text}"
    );
    let lock = std::fs::read_to_string(project.path().join("skills.lock")).unwrap();
    assert!(
        lock.contains("by = \"author\"") && lock.contains("identity = \"release@acme.example\""),
        "{lock}"
    );
    assert!(
        lock.contains(&format!("key = \"{}\"", author["keyId"].as_str().unwrap())),
        "{lock}"
    );
    let out = check(project.path()).await;
    assert_eq!(out.code, 0, "{out:?}");

    // Each hostile bundle is refused with its own code, and nothing is stored.
    let mut changed = FILES;
    changed[3].1 = "# Guide\n\nStep one!\n";
    let one_byte = pki.sign("release", "ca", &changed);
    let mut forged: Value = serde_json::from_str(&good).unwrap();
    let sig_b64 = forged["dsseEnvelope"]["signatures"][0]["sig"]
        .as_str()
        .unwrap()
        .to_owned();
    let other_sig: Value = serde_json::from_str(&pki.sign("intern", "ca", &FILES)).unwrap();
    assert_ne!(sig_b64, other_sig["dsseEnvelope"]["signatures"][0]["sig"]);
    forged["dsseEnvelope"]["signatures"][0]["sig"] =
        other_sig["dsseEnvelope"]["signatures"][0]["sig"].clone();
    let mut keyless: Value = serde_json::from_str(&good).unwrap();
    keyless["verificationMaterial"]["tlogEntries"] = json!([{"logIndex": "1"}]);
    for (version, bundle, expected) in [
        (
            "2.0.0",
            pki.sign("expired", "ca", &FILES),
            "signature_certificate_expired",
        ),
        (
            "2.0.1",
            pki.sign("stranger", "other", &FILES),
            "signature_certificate_untrusted",
        ),
        (
            "2.0.2",
            pki.sign("intern", "ca", &FILES),
            "signature_identity_mismatch",
        ),
        ("2.0.3", one_byte, "signature_mismatch"),
        ("2.0.4", forged.to_string(), "signature_invalid"),
        ("2.0.5", keyless.to_string(), "signature_malformed"),
    ] {
        let (status, body) = publish_signed(&server, "acme", version, &FILES, &bundle).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{version}: {body}"
        );
        assert_eq!(code(&body), expected, "{version}: {body}");
        let (status, _) = api.get(&format!("/v1/skills/acme/signed/{version}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{version} was stored");
        if expected == "signature_malformed" {
            assert!(body.to_string().contains("keyless"), "{body}");
        }
    }

    // The install client checks the chain itself: another CA, or another identity, installs
    // nothing.
    for (identity, key) in [
        ("release@acme.example", pki.path("other.pem")),
        ("intern@acme.example", ca.clone()),
    ] {
        let elsewhere = TempDir::new().unwrap();
        let out = add(
            elsewhere.path(),
            &[
                "acme/signed@1.0.0",
                "--from",
                &server.url,
                "--identity",
                identity,
                "--key",
                key.to_str().unwrap(),
            ],
        )
        .await;
        assert_eq!(out.code, 1, "{identity}: {out:?}");
        assert!(out.stderr.contains("unsigned"), "{out:?}");
        assert!(!elsewhere.path().join(".claude").exists());
    }

    // A changed byte in the installed files: Model Signing and `check` both say so.
    std::fs::write(installed.join("a/x.md"), "under A\n").unwrap();
    let (ok, text) = verify(&installed);
    assert!(!ok, "model_signing accepted a changed byte: {text}");
    let out = check(project.path()).await;
    assert_eq!(out.code, 1, "{out:?}");

    // Every registration is audited.
    let (_, audit) = api
        .send(Method::GET, "/v1/audit?limit=1000", Some(ADMIN), None)
        .await;
    assert!(
        audit["entries"].as_array().unwrap().iter().any(|e| {
            e["action"] == "namespace_key_added" && e["details"]["key_id"] == ca_id.as_str()
        }),
        "{audit}"
    );
}
