//! Commands that talk to a running registry over its REST API: publish, yank, deprecate, search
//! and token. Requests and answers are the REST API's own wire types ([`crate::http::api`]).

use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::core::text::printable;
use crate::core::{self, Action, SkillRef, SkillVersion};
use crate::http::api::{
    CLIENT_WARNINGS_HEADER, DeprecateRequest, ErrorBody, PublishedView, RevokeRequest,
    SearchResults, StatusView, TokenList, TokenRequest, TokenView, WithdrawnView, YankRequest,
    encode_client_warnings,
};
use crate::source::{ExportFile, archive, dir};

/// The registry the client commands talk to unless told otherwise.
pub const DEFAULT_REGISTRY: &str = "http://127.0.0.1:8080";

/// Where and as whom to connect.
#[derive(clap::Args, Debug, Clone)]
pub struct Remote {
    /// Base URL of the registry (its MCP endpoint, `<base>/mcp`, is accepted too).
    #[arg(
        long,
        env = "SKILLREG_REGISTRY",
        default_value = DEFAULT_REGISTRY
    )]
    pub registry: String,
    /// Bearer token (a scoped token or the admin token).
    #[arg(long, env = "SKILLREG_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Print the registry's JSON answer instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// A refused or failed call, with the exit code it maps to.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// Refused by a rule (exit status 1).
    pub(super) fn refused(message: String) -> Self {
        Self { code: 1, message }
    }

    /// A usage or connection error (exit status 2).
    pub(super) fn usage(message: String) -> Self {
        Self { code: 2, message }
    }
}

impl Remote {
    /// The registry's base URL: `--registry` without a trailing `/`, or `/mcp` (people copy the
    /// MCP endpoint, which every agent is given).
    fn base(&self) -> &str {
        let registry = self.registry.trim_end_matches('/');
        registry
            .strip_suffix("/mcp")
            .unwrap_or(registry)
            .trim_end_matches('/')
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    /// Send `req`; a success is decoded as `T` (also printed as JSON with `--json`), a refusal
    /// becomes a [`Failure`] naming the registry's error code.
    pub(super) async fn send<T: DeserializeOwned + Serialize>(
        &self,
        req: reqwest::RequestBuilder,
    ) -> Result<T, Failure> {
        let req = match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let resp = req.send().await.map_err(|e| {
            Failure::usage(format!(
                "cannot reach the registry at {}: {e}",
                self.registry
            ))
        })?;
        let status = resp.status();
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| Failure::usage(format!("reading the registry's answer failed: {e}")))?;
        if !status.is_success() {
            let (code, message) = match serde_json::from_slice::<ErrorBody>(&bytes) {
                Ok(body) => (body.error.code, body.error.message),
                // Not a registry's answer: a proxy, another server, or a wrong path.
                Err(_) => (
                    "http_error".to_owned(),
                    format!(
                        "{} answered without a registry error body: is --registry the \
                         registry's base URL?",
                        self.base()
                    ),
                ),
            };
            return Err(Failure::refused(format!(
                "{} [{}] (HTTP {})",
                printable(&message),
                printable(&code),
                status.as_u16()
            )));
        }
        let value: T = serde_json::from_slice(&bytes).map_err(|e| {
            Failure::usage(format!(
                "the registry sent an answer this client cannot read: {e}"
            ))
        })?;
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
        Ok(value)
    }

    /// Print a summary line unless `--json` printed the answer already.
    pub(super) fn say(&self, line: impl FnOnce() -> String) {
        if !self.json {
            println!("{}", printable(&line()));
        }
    }
}

/// Turn an outcome into an exit code, printing failures to stderr.
pub fn finish(outcome: Result<(), Failure>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// What `publish` repairs before packing: `--fix`, and with it `--quote-yaml-1-1`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fixing {
    pub fix: bool,
    pub quote_yaml_1_1: bool,
}

/// Validate `dir` locally with the server's rules (after `--fix`, when asked), pack it,
/// upload it with what reading and fixing changed, for the server to store as warnings.
/// The author's bundle at `path`, checked here as the registry will check it: it must cover
/// exactly the files about to be uploaded (after `--fix`, if any) as `target`.
fn author_signature(
    path: &Path,
    target: &core::VersionRef,
    bundle: &core::Bundle,
) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::refused(format!("--signature {}: {e}", path.display())))?;
    let files: Vec<(&str, core::Digest)> = bundle
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.digest))
        .collect();
    let subject = core::signature::Subject {
        namespace: target.namespace(),
        name: target.name(),
        version: &target.version,
        content_digest: bundle.content_digest,
        files: &files,
    };
    core::signature::Bundle::read(&text, &subject).map_err(|e| {
        Failure::refused(format!(
            "--signature {}: {e} [{}]; sign the directory as it is uploaded (after --fix), \
             with `model_signing sign key --private_key KEY --signature FILE DIR` (or `sign \
             certificate`, or `sign sigstore`)",
            path.display(),
            e.code()
        ))
    })?;
    Ok(text)
}

pub async fn publish(
    remote: &Remote,
    skill_dir: &Path,
    namespace: &str,
    version: Option<&str>,
    fixing: Fixing,
    signature: Option<&Path>,
) -> Result<(), Failure> {
    let fix = fixing.fix;
    let namespace = core::refs::parse_namespace(namespace)
        .map_err(|e| Failure::refused(format!("{e} [{}]", e.code())))?;
    let read =
        dir::read_files(skill_dir).map_err(|e| Failure::refused(format!("{e} [{}]", e.code())))?;
    let dir_name = skill_dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let (mut files, mut recorded) = (read.files, read.warnings);
    let mut unfixed: Vec<core::InputFile> = files
        .iter()
        .filter(|f| f.path.ends_with(core::uri::SKILL_MD))
        .cloned()
        .collect();
    if fix {
        let fixes = core::fix::apply(&mut files, &dir_name, fixing.quote_yaml_1_1);
        for f in &fixes {
            eprintln!("fixed: {}", printable(&f.to_string()));
        }
        recorded.extend(fixes.iter().map(core::fix::Fix::warning));
    }
    let bundle = core::bundle::validate(files).map_err(|e| {
        let hint = (!fix && core::fix::FIXABLE.contains(&e.code()))
            .then(|| core::fix::hint(&core::fix::fix_files(&mut unfixed, &dir_name)))
            .flatten()
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        Failure::refused(format!("{}: {e}{hint} [{}]", skill_dir.display(), e.code()))
    })?;
    let version = match version {
        Some(v) => SkillVersion::parse(v)
            .map_err(|e| Failure::refused(format!("{e} [invalid_version]")))?,
        None => bundle
            .declared_version
            .clone()
            .unwrap_or_else(SkillVersion::initial),
    };
    for w in bundle.warnings.iter().chain(&recorded) {
        eprintln!("warning: {}", printable(&w.to_string()));
    }
    let packed = archive::pack_tar_gz(bundle.files.iter().map(|f| ExportFile {
        path: f.path.as_str(),
        mode: f.mode,
        bytes: &f.bytes,
    }))
    .map_err(|e| Failure::refused(format!("packing failed: {e}")))?;
    let target = SkillRef::new(namespace, bundle.name.clone()).at(version);
    let signature = signature
        .map(|path| author_signature(path, &target, &bundle))
        .transpose()?;
    let url = remote.url(&format!(
        "/v1/skills/{}/{}/{}",
        target.namespace(),
        target.name(),
        target.version
    ));
    let mut request = reqwest::Client::new().put(url);
    if !recorded.is_empty() {
        request = request.header(CLIENT_WARNINGS_HEADER, encode_client_warnings(&recorded));
    }
    let request = match signature {
        None => request
            .header("Content-Type", "application/gzip")
            .body(packed),
        Some(text) => {
            let part = |part: reqwest::multipart::Part, mime: &str| {
                part.mime_str(mime)
                    .map_err(|e| Failure::refused(format!("packing failed: {e}")))
            };
            request.multipart(
                reqwest::multipart::Form::new()
                    .part(
                        "archive",
                        part(reqwest::multipart::Part::bytes(packed), "application/gzip")?,
                    )
                    .part(
                        "signature",
                        part(reqwest::multipart::Part::text(text), "application/json")?,
                    ),
            )
        }
    };
    let published: PublishedView = remote.send(request).await?;
    for f in &published.findings {
        let at = if f.line > 0 {
            format!("{}:{}", f.file, f.line)
        } else {
            f.file.clone()
        };
        eprintln!(
            "finding: {} {} {at}  {}",
            f.severity,
            f.rule,
            printable(&f.excerpt)
        );
    }
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for f in &published.findings {
        *counts.entry(f.severity.as_str()).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    remote.say(|| {
        format!(
            "{} {}/{} {} ({} file{})\n  current: {}\n  pinned:  {}\n  scan:    {}{}",
            if published.created {
                "published"
            } else {
                "unchanged"
            },
            published.namespace,
            published.name,
            published.version,
            published.files.len(),
            if published.files.len() == 1 { "" } else { "s" },
            published.uri,
            published.pinned_uri,
            published.verdict,
            if counts.is_empty() {
                String::new()
            } else {
                format!(" ({})", counts.join(", "))
            }
        ) + &if published.pending {
            format!(
                "\n  pending review: served once approved (skillreg approve {}/{}@{})",
                published.namespace, published.name, published.version
            )
        } else {
            String::new()
        }
    });
    Ok(())
}

fn skill_ref(skill: &str) -> Result<SkillRef, Failure> {
    SkillRef::parse_joined(skill).map_err(|e| Failure::usage(e.to_string()))
}

/// Search a registry and print the ranked hits.
pub async fn search(
    remote: &Remote,
    query: &str,
    namespace: Option<&str>,
    limit: usize,
) -> Result<(), Failure> {
    let mut params = vec![("q", query.to_owned()), ("limit", limit.to_string())];
    if let Some(ns) = namespace {
        params.push(("namespace", ns.to_owned()));
    }
    let results: SearchResults = remote
        .send(
            reqwest::Client::new()
                .get(remote.url("/v1/search"))
                .query(&params),
        )
        .await?;
    remote.say(|| {
        if results.hits.is_empty() {
            return "no skills found".to_owned();
        }
        results
            .hits
            .iter()
            .map(|h| {
                let flag = if h.status == "active" {
                    String::new()
                } else {
                    format!(" [{}]", h.status)
                };
                format!(
                    "{:>6.2}  {}{flag}\n        {}",
                    h.score,
                    h.uri,
                    h.description.chars().take(160).collect::<String>()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(())
}

/// Yank (or with `undo`, unyank) a version.
pub async fn yank(remote: &Remote, version: &str, reason: &str, undo: bool) -> Result<(), Failure> {
    let (skill, version) = version_ref(version)?;
    let url = remote.url(&format!(
        "/v1/skills/{}/{}/{version}/yank",
        skill.namespace, skill.name
    ));
    let client = reqwest::Client::new();
    let req = if undo {
        client.delete(url)
    } else {
        client.post(url).json(&YankRequest {
            reason: Some(reason.to_owned()),
        })
    };
    let done: WithdrawnView = remote.send(req).await?;
    remote.say(|| {
        format!(
            "{} {skill}@{version}{}",
            if undo { "unyanked" } else { "yanked" },
            dependents_said(&done)
        )
    });
    Ok(())
}

/// The lines that name the current versions of other skills whose requirement resolved to a
/// version just withdrawn, and what each resolves to now.
fn dependents_said(done: &WithdrawnView) -> String {
    done.dependents
        .iter()
        .map(|d| {
            let now = d
                .resolved
                .as_deref()
                .map_or_else(|| "nothing: it is unsatisfied".to_owned(), str::to_owned);
            format!(
                "\nwarning: {} {} requires {} of it, which now resolves to {now}",
                d.skill, d.version, d.range
            )
        })
        .collect()
}

/// `NAMESPACE/NAME@VERSION` from the one spelling, or from the older two arguments
/// (`NAMESPACE/NAME` `VERSION`).
pub fn joined(version: &str, split: Option<&str>) -> Result<String, Failure> {
    match split {
        None => Ok(version.to_owned()),
        Some(_) if version.contains('@') => Err(Failure::usage(format!(
            "{version:?} names its version already; give NAMESPACE/NAME@VERSION alone"
        ))),
        Some(number) => Ok(format!("{version}@{number}")),
    }
}

/// `NAMESPACE/NAME@VERSION`.
fn version_ref(version: &str) -> Result<(SkillRef, SkillVersion), Failure> {
    let (skill, number) = version
        .rsplit_once('@')
        .ok_or_else(|| Failure::usage(format!("{version:?} is not NAMESPACE/NAME@VERSION")))?;
    let number = SkillVersion::parse(number).map_err(|e| Failure::usage(format!("{e}")))?;
    Ok((skill_ref(skill)?, number))
}

/// Approve `NAMESPACE/NAME@VERSION`, pending review.
pub async fn approve(remote: &Remote, version: &str) -> Result<(), Failure> {
    let (skill, number) = version_ref(version)?;
    let url = remote.url(&format!(
        "/v1/skills/{}/{}/{number}/approve",
        skill.namespace, skill.name
    ));
    let _: StatusView = remote.send(reqwest::Client::new().post(url)).await?;
    remote.say(|| format!("approved {skill}@{number}"));
    Ok(())
}

/// Make a namespace's new versions wait for review (or not).
pub async fn set_review(remote: &Remote, namespace: &str, required: bool) -> Result<(), Failure> {
    let namespace =
        core::refs::parse_namespace(namespace).map_err(|e| Failure::usage(e.to_string()))?;
    let url = remote.url(&format!("/v1/namespaces/{namespace}/review"));
    let client = reqwest::Client::new();
    let req = if required {
        client.post(url)
    } else {
        client.delete(url)
    };
    let _: StatusView = remote.send(req).await?;
    remote.say(|| {
        if required {
            format!("new versions of {namespace} wait for review")
        } else {
            format!("{namespace} publishes without review")
        }
    });
    Ok(())
}

/// What `skillreg namespace key` registers for a namespace's authors.
pub enum AuthorTrust {
    /// A PEM public key or CA certificate in this file.
    File(std::path::PathBuf),
    /// A keyless identity from this OIDC issuer.
    Keyless { issuer: String },
}

/// Register `what` for `namespace`'s authors: the public key or CA certificate of a PEM file, or
/// a keyless identity (`identity`: the key's owner, or the policy for a certificate's names).
pub async fn add_namespace_key(
    remote: &Remote,
    namespace: &str,
    what: AuthorTrust,
    identity: &str,
) -> Result<(), Failure> {
    let namespace =
        core::refs::parse_namespace(namespace).map_err(|e| Failure::usage(e.to_string()))?;
    let request = match what {
        AuthorTrust::File(path) => {
            let pem = std::fs::read_to_string(&path)
                .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
            let is_ca = core::signature::cert::is_certificate_pem(&pem);
            crate::http::api::NamespaceKeyRequest {
                identity: identity.to_owned(),
                public_key: (!is_ca).then(|| pem.clone()),
                certificate: is_ca.then_some(pem),
                issuer: None,
            }
        }
        AuthorTrust::Keyless { issuer } => crate::http::api::NamespaceKeyRequest {
            identity: identity.to_owned(),
            public_key: None,
            certificate: None,
            issuer: Some(issuer),
        },
    };
    let url = remote.url(&format!("/v1/namespaces/{namespace}/keys"));
    let keys: crate::http::api::NamespaceKeysView = remote
        .send(reqwest::Client::new().post(url).json(&request))
        .await?;
    for k in &keys.keys {
        remote.say(|| match &k.issuer {
            Some(issuer) => format!("{}  {:<7}  {}  from {issuer}", k.key_id, k.kind, k.identity),
            None => format!("{}  {:<7}  {}", k.key_id, k.kind, k.identity),
        });
    }
    Ok(())
}

/// Revoke (or with `undo`, unrevoke) `NAMESPACE/NAME@VERSION`.
pub async fn revoke(
    remote: &Remote,
    version: &str,
    reason: Option<&str>,
    undo: bool,
) -> Result<(), Failure> {
    let (skill, number) = version_ref(version)?;
    let url = remote.url(&format!(
        "/v1/skills/{}/{}/{number}/revoke",
        skill.namespace, skill.name
    ));
    let client = reqwest::Client::new();
    let req = if undo {
        client.delete(url)
    } else {
        client.post(url).json(&RevokeRequest {
            reason: reason.unwrap_or_default().to_owned(),
        })
    };
    let done: WithdrawnView = remote.send(req).await?;
    remote.say(|| {
        format!(
            "{} {skill}@{number}{}",
            if undo { "unrevoked" } else { "revoked" },
            dependents_said(&done)
        )
    });
    Ok(())
}

/// Deprecate (or with `undo`, undeprecate) a skill.
pub async fn deprecate(
    remote: &Remote,
    skill: &str,
    message: &str,
    undo: bool,
) -> Result<(), Failure> {
    let skill = skill_ref(skill)?;
    let url = remote.url(&format!(
        "/v1/skills/{}/{}/deprecate",
        skill.namespace, skill.name
    ));
    let client = reqwest::Client::new();
    let req = if undo {
        client.delete(url)
    } else {
        client.post(url).json(&DeprecateRequest {
            message: Some(message.to_owned()),
        })
    };
    let _: StatusView = remote.send(req).await?;
    remote.say(|| {
        format!(
            "{} {skill}",
            if undo { "undeprecated" } else { "deprecated" }
        )
    });
    Ok(())
}

/// Create a token; prints its secret once.
pub async fn token_create(
    remote: &Remote,
    description: &str,
    namespaces: &[String],
    actions: &[String],
) -> Result<(), Failure> {
    let actions = actions
        .iter()
        .map(|a| {
            Action::from_name(a).ok_or_else(|| {
                Failure::usage(format!(
                    "unknown action {a:?}: publish, yank, deprecate, read, revoke or approve"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let token: TokenView = remote
        .send(
            reqwest::Client::new()
                .post(remote.url("/v1/tokens"))
                .json(&TokenRequest {
                    description: description.to_owned(),
                    namespaces: namespaces.to_vec(),
                    actions,
                }),
        )
        .await?;
    // The secret alone on stdout, so that `SKILLREG_TOKEN=$(skillreg token create ...)` keeps it;
    // what it is goes to the terminal.
    if !remote.json {
        eprintln!(
            "created {} (shown once, store it now)",
            printable(&token.id)
        );
    }
    remote.say(|| token.token.clone().unwrap_or_default());
    Ok(())
}

/// Revoke a token by id.
pub async fn token_revoke(remote: &Remote, id: &str) -> Result<(), Failure> {
    let url = remote.url(&format!("/v1/tokens/{}", crate::core::uri::encode_path(id)));
    let _: StatusView = remote.send(reqwest::Client::new().delete(url)).await?;
    remote.say(|| format!("revoked {id}"));
    Ok(())
}

/// List tokens.
pub async fn token_list(remote: &Remote) -> Result<(), Failure> {
    let list: TokenList = remote
        .send(reqwest::Client::new().get(remote.url("/v1/tokens")))
        .await?;
    remote.say(|| {
        list.tokens
            .iter()
            .map(|t| {
                format!(
                    "{}  {}  namespaces={}  actions={}{}",
                    t.id,
                    t.description,
                    t.namespaces.join(","),
                    t.actions
                        .iter()
                        .map(|a| a.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                    if t.revoked_at.is_some() {
                        "  (revoked)"
                    } else {
                        ""
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(())
}

/// Make a namespace private (or public again).
pub async fn set_private(remote: &Remote, namespace: &str, private: bool) -> Result<(), Failure> {
    let namespace =
        core::refs::parse_namespace(namespace).map_err(|e| Failure::usage(e.to_string()))?;
    let url = remote.url(&format!("/v1/namespaces/{namespace}/private"));
    let client = reqwest::Client::new();
    let req = if private {
        client.post(url)
    } else {
        client.delete(url)
    };
    let _: StatusView = remote.send(req).await?;
    remote.say(|| {
        format!(
            "{namespace} is {}",
            if private { "private" } else { "public" }
        )
    });
    Ok(())
}
