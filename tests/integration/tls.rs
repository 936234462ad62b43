//! Native TLS: `skillreg serve --tls-cert --tls-key` over real HTTPS on loopback, with
//! certificates made at test time by a test CA; the pair reloaded on SIGHUP; unusable files
//! refused at start.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::{Value, json};

use crate::common::{parse_body, run_cli};

/// A certificate authority the test's clients trust.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let pem = params.self_signed(&key).unwrap().pem();
        Self {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A server certificate for localhost and 127.0.0.1 and its key, written as PEM to
    /// `cert` and `key`; the certificate's DER.
    fn issue(&self, cert: &Path, key: &Path) -> Vec<u8> {
        let server_key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        let issued = params.signed_by(&server_key, &self.issuer).unwrap();
        std::fs::write(cert, issued.pem()).unwrap();
        std::fs::write(key, server_key.serialize_pem()).unwrap();
        issued.der().to_vec()
    }

    /// A client that trusts this CA only and records the server's certificate.
    fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(self.pem.as_bytes()).unwrap()])
            .tls_info(true)
            .build()
            .unwrap()
    }
}

/// `skillreg serve` over HTTPS on a free loopback port, its stderr collected.
struct Served {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
    _data: tempfile::TempDir,
}

impl Served {
    fn start(cert: &Path, key: &Path, extra: &[&str]) -> Self {
        let data = tempfile::TempDir::new().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_skillreg"))
            .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
            .arg(cert)
            .arg("--tls-key")
            .arg(key)
            .args(extra)
            .arg("--data-dir")
            .arg(data.path())
            .env_remove("SKILLREG_ADMIN_TOKEN")
            .env("SKILLREG_LOG", "info")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let mut served = Self {
            child,
            port: 0,
            log,
            _data: data,
        };
        let line = served.wait_for("serving MCP at");
        let at = line
            .split("serving MCP at https://127.0.0.1:")
            .nth(1)
            .unwrap_or_else(|| panic!("not served over https: {line}"));
        served.port = at[..at.find('/').unwrap()].parse().unwrap();
        assert!(
            line.contains(&format!(
                "the web catalog at https://127.0.0.1:{}/",
                served.port
            )),
            "{line}"
        );
        served
    }

    /// The first log line containing `needle`, waiting for it up to a minute.
    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            if let Some(line) = self.log.lock().unwrap().iter().find(|l| l.contains(needle)) {
                return line.clone();
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no log line with {needle:?}: {:#?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The certificate a new connection is served with, as a client trusting `ca` sees it (an
    /// error when that client refuses it).
    async fn certificate(&self, ca: &Ca) -> Result<Vec<u8>, reqwest::Error> {
        let response = ca.client().get(self.url("/healthz")).send().await?;
        assert_eq!(response.status(), 200);
        let info = response
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .unwrap();
        Ok(info.peer_certificate().unwrap().to_vec())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// Where a test's certificate and key files are.
fn files(dir: &tempfile::TempDir) -> (PathBuf, PathBuf) {
    (dir.path().join("server.crt"), dir.path().join("server.key"))
}

/// One MCP request over HTTPS; the parsed answer and the session it named.
async fn mcp(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (Value, Option<String>) {
    let mut request = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    let response = request.json(&body).send().await.unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|s| s.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    // A notification is answered with no body.
    let answer = if body.get("id").is_some() {
        parse_body(&text)
    } else {
        Value::Null
    };
    (answer, session)
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_https_with_the_configured_certificate_and_not_over_plain_http() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key) = files(&dir);
    let ca = Ca::new("skillreg test CA");
    let der = ca.issue(&cert, &key);
    let server = Served::start(&cert, &key, &[]);
    let http = ca.client();
    let url = server.url("/mcp");
    let (init, session) = mcp(
        &http,
        &url,
        None,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"skillreg-tests","version":"0"}}}),
    )
    .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let session = session.expect("a session");
    mcp(
        &http,
        &url,
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .await;
    let (list, _) = mcp(
        &http,
        &url,
        Some(&session),
        json!({"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}),
    )
    .await;
    let uris: Vec<&str> = list["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&"skill://skillreg/finding-skills/SKILL.md"),
        "{uris:?}"
    );
    assert_eq!(server.certificate(&ca).await.unwrap(), der);
    // The links the server writes say https, as behind a TLS proxy.
    let site: Value = http
        .get(server.url("/.well-known/clawhub.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        site["apiBase"],
        format!("https://127.0.0.1:{}", server.port)
    );
    // Plain HTTP to the same port gets no HTTP answer.
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/healthz", server.port))
        .send()
        .await;
    assert!(plain.is_err(), "{plain:?}");
    // Nor does a client whose CA did not sign the certificate.
    assert!(server.certificate(&Ca::new("another CA")).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_says_hello_holds_nothing_up_and_is_dropped() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key) = files(&dir);
    let ca = Ca::new("CA");
    let der = ca.issue(&cert, &key);
    let server = Served::start(&cert, &key, &["--header-read-timeout-secs", "3"]);
    let port = server.port;
    let start = Instant::now();
    let silent = tokio::task::spawn_blocking(move || {
        let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let read = tcp.read(&mut [0; 64]).map_err(|e| e.kind());
        (read, start.elapsed())
    });
    // The accept loop does not wait on its handshake: another client is served meanwhile.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.certificate(&ca).await.unwrap(), der);
    assert!(!silent.is_finished(), "closed before its deadline");
    let (read, after) = silent.await.unwrap();
    assert_eq!(read, Ok(0), "closed at its deadline");
    assert!(
        after >= Duration::from_secs(2) && after < Duration::from_secs(20),
        "{after:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_serves_the_replaced_certificate_to_new_connections() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key) = files(&dir);
    let (ca_a, ca_b) = (Ca::new("CA A"), Ca::new("CA B"));
    let a = ca_a.issue(&cert, &key);
    let server = Served::start(&cert, &key, &[]);
    assert_eq!(server.certificate(&ca_a).await.unwrap(), a);
    let b = ca_b.issue(&cert, &key);
    assert_ne!(a, b);
    server.signal("HUP");
    server.wait_for("TLS certificate and key reloaded");
    assert_eq!(server.certificate(&ca_b).await.unwrap(), b);
    assert!(
        server.certificate(&ca_a).await.is_err(),
        "the old certificate is no longer served"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_with_a_broken_key_keeps_the_old_pair_and_names_the_file() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key) = files(&dir);
    let ca = Ca::new("CA A");
    let a = ca.issue(&cert, &key);
    let server = Served::start(&cert, &key, &[]);
    assert_eq!(server.certificate(&ca).await.unwrap(), a);
    // A new certificate whose key file is broken: neither is taken.
    Ca::new("CA B").issue(&cert, &dir.path().join("unused.key"));
    std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\nnot base64!\n").unwrap();
    server.signal("HUP");
    let warning = server.wait_for("not reloaded");
    assert!(
        warning.contains("WARN") && warning.contains(&key.display().to_string()),
        "{warning}"
    );
    assert_eq!(server.certificate(&ca).await.unwrap(), a);
}

#[test]
fn unusable_certificate_files_refuse_the_start() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key) = files(&dir);
    Ca::new("CA").issue(&cert, &key);
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let serve = |cert: &str, key: &str| {
        run_cli(
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
                data,
                "--tls-cert",
                cert,
                "--tls-key",
                key,
            ],
            &[],
        )
    };
    let out = serve(cert, cert);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("tls_key {cert}: holds no PEM private key")),
        "{}",
        out.stderr
    );
    let missing = dir.path().join("missing.crt");
    let out = serve(missing.to_str().unwrap(), key);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("tls_cert") && out.stderr.contains("missing.crt"),
        "{}",
        out.stderr
    );
    let out = run_cli(&["serve", "--data-dir", data, "--tls-cert", cert], &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("tls_cert is set but tls_key is not"),
        "{}",
        out.stderr
    );
}
