//! Commands that talk to a running registry over its REST API: publish, yank, deprecate, token.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::archive::{self, ExportFile};
use crate::core::{self, SkillVersion};
use crate::import;

/// Where and as whom to connect.
#[derive(clap::Args, Debug, Clone)]
pub struct Remote {
    /// Base URL of the registry.
    #[arg(
        long,
        env = "SKILLREG_REGISTRY",
        default_value = "http://127.0.0.1:8080"
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

type Outcome = Result<Value, Failure>;

impl Remote {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.registry.trim_end_matches('/'))
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Outcome {
        let req = match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let resp = req.send().await.map_err(|e| Failure {
            code: 2,
            message: format!("cannot reach the registry at {}: {e}", self.registry),
        })?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            Ok(body)
        } else {
            let code = body["error"]["code"].as_str().unwrap_or("http_error");
            let message = body["error"]["message"].as_str().unwrap_or("");
            Err(Failure {
                code: 1,
                message: format!("{message} [{code}] (HTTP {})", status.as_u16()),
            })
        }
    }

    fn print(&self, value: &Value, summary: impl FnOnce(&Value) -> String) {
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(value).unwrap_or_default()
            );
        } else {
            println!("{}", summary(value));
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

/// Validate `dir` locally with the server's rules, pack it, upload it.
pub async fn publish(
    remote: &Remote,
    dir: &Path,
    namespace: &str,
    version: Option<&str>,
) -> Result<(), Failure> {
    let refuse = |message: String| Failure { code: 1, message };
    crate::core::Namespace::new(namespace)
        .map_err(|e| refuse(format!("invalid namespace {namespace:?}: it {e}")))?;
    let files = import::read_dir_files(dir)
        .map_err(|(code, reason)| refuse(format!("{reason} [{code}]")))?;
    let bundle = core::bundle::validate(files)
        .map_err(|e| refuse(format!("{}: {e} [{}]", dir.display(), e.code())))?;
    let version = match version {
        Some(v) => SkillVersion::parse(v).map_err(|e| refuse(format!("{e} [invalid_version]")))?,
        None => bundle
            .declared_version
            .clone()
            .unwrap_or_else(SkillVersion::initial),
    };
    for w in &bundle.warnings {
        eprintln!("warning: {w}");
    }
    let packed = archive::pack_tar_gz(bundle.files.iter().map(|f| ExportFile {
        path: f.path.as_str(),
        mode: f.mode,
        bytes: &f.bytes,
    }))
    .map_err(|e| refuse(format!("packing failed: {e}")))?;
    let url = remote.url(&format!("/v1/skills/{namespace}/{}/{version}", bundle.name));
    let client = reqwest::Client::new();
    let body = remote
        .send(
            client
                .put(url)
                .header("Content-Type", "application/gzip")
                .body(packed),
        )
        .await?;
    remote.print(&body, |b| {
        let verb = if b["created"] == json!(true) {
            "published"
        } else {
            "unchanged"
        };
        format!(
            "{verb} {} {} ({} files)\n  current: {}\n  pinned:  {}",
            b["name"].as_str().unwrap_or(""),
            b["version"].as_str().unwrap_or(""),
            b["files"].as_array().map_or(0, Vec::len),
            b["uri"].as_str().unwrap_or(""),
            b["pinned_uri"].as_str().unwrap_or("")
        )
    });
    Ok(())
}

fn split_skill(skill: &str) -> Result<(&str, &str), Failure> {
    skill.split_once('/').ok_or_else(|| Failure {
        code: 2,
        message: format!("expected NAMESPACE/NAME, got {skill:?}"),
    })
}

/// Search a registry and print the ranked hits.
pub async fn search(
    remote: &Remote,
    query: &str,
    namespace: Option<&str>,
    limit: usize,
) -> Result<(), Failure> {
    let client = reqwest::Client::new();
    let mut params = vec![("q", query.to_owned()), ("limit", limit.to_string())];
    if let Some(ns) = namespace {
        params.push(("namespace", ns.to_owned()));
    }
    let body = remote
        .send(client.get(remote.url("/v1/search")).query(&params))
        .await?;
    remote.print(&body, |b| {
        let hits = b["hits"].as_array().cloned().unwrap_or_default();
        if hits.is_empty() {
            return "no skills found".to_owned();
        }
        hits.iter()
            .map(|h| {
                let status = h["status"].as_str().unwrap_or("");
                let flag = if status == "active" {
                    String::new()
                } else {
                    format!(" [{status}]")
                };
                format!(
                    "{:>6.2}  {}{flag}\n        {}",
                    h["score"].as_f64().unwrap_or(0.0),
                    h["uri"].as_str().unwrap_or(""),
                    h["description"]
                        .as_str()
                        .unwrap_or("")
                        .chars()
                        .take(160)
                        .collect::<String>()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(())
}

/// Yank (or with `undo`, unyank) a version.
pub async fn yank(
    remote: &Remote,
    skill: &str,
    version: &str,
    reason: &str,
    undo: bool,
) -> Result<(), Failure> {
    let (ns, name) = split_skill(skill)?;
    let url = remote.url(&format!("/v1/skills/{ns}/{name}/{version}/yank"));
    let client = reqwest::Client::new();
    let req = if undo {
        client.delete(url)
    } else {
        client.post(url).json(&json!({ "reason": reason }))
    };
    let body = remote.send(req).await?;
    remote.print(&body, |_| {
        format!(
            "{} {ns}/{name} {version}",
            if undo { "unyanked" } else { "yanked" }
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
    let (ns, name) = split_skill(skill)?;
    let url = remote.url(&format!("/v1/skills/{ns}/{name}/deprecate"));
    let client = reqwest::Client::new();
    let req = if undo {
        client.delete(url)
    } else {
        client.post(url).json(&json!({ "message": message }))
    };
    let body = remote.send(req).await?;
    remote.print(&body, |_| {
        format!(
            "{} {ns}/{name}",
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
    let client = reqwest::Client::new();
    let body = remote
        .send(client.post(remote.url("/v1/tokens")).json(&json!({
            "description": description, "namespaces": namespaces, "actions": actions,
        })))
        .await?;
    remote.print(&body, |b| {
        format!(
            "created {} (shown once, store it now):\n{}",
            b["id"].as_str().unwrap_or(""),
            b["token"].as_str().unwrap_or("")
        )
    });
    Ok(())
}

/// Revoke a token by id.
pub async fn token_revoke(remote: &Remote, id: &str) -> Result<(), Failure> {
    let client = reqwest::Client::new();
    let body = remote
        .send(client.delete(remote.url(&format!("/v1/tokens/{id}"))))
        .await?;
    remote.print(&body, |_| format!("revoked {id}"));
    Ok(())
}

/// List tokens.
pub async fn token_list(remote: &Remote) -> Result<(), Failure> {
    let client = reqwest::Client::new();
    let body = remote.send(client.get(remote.url("/v1/tokens"))).await?;
    remote.print(&body, |b| {
        b["tokens"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                format!(
                    "{}  {}  namespaces={}  actions={}{}",
                    t["id"].as_str().unwrap_or(""),
                    t["description"].as_str().unwrap_or(""),
                    t["namespaces"],
                    t["actions"],
                    if t["revoked_at"].is_string() {
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
