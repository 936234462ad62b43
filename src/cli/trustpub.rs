//! Trusted publishing from the command line: `skillreg trusted-publisher add|list|remove|only`
//! (a namespace's trusted publishers on a running registry; needs the admin token), and
//! `skillreg publish --trusted` ([`publish_trusted`]): in a CI job, get the CI's OIDC token,
//! exchange it for a short-lived publish token, publish with it, and revoke it (also when the
//! publish failed).
//!
//! Where the OIDC token comes from:
//! - GitHub Actions (`permissions: id-token: write`): `ACTIONS_ID_TOKEN_REQUEST_URL` with
//!   `&audience=<audience>`, authorized by `ACTIONS_ID_TOKEN_REQUEST_TOKEN`;
//! - GitLab CI: the variable `SKILLREG_ID_TOKEN`, named in the job's `id_tokens:` with
//!   `aud:` the registry's audience;
//! - anywhere else: `SKILLREG_ID_TOKEN` if set, else a refusal.
//!
//! The audience is `--audience` (`SKILLREG_TRUSTED_PUBLISHING_AUDIENCE`), the registry's
//! `trusted_publishing_audience` (default `skillreg`).

use std::process::ExitCode;

use clap::Subcommand;

use super::client::{self, Failure, Remote};
use crate::http::api::{
    ExchangeRequest, ExchangeView, StatusView, TrustedPublisherList, TrustedPublisherRequest,
    TrustedPublisherView,
};

/// The GitHub Actions variables a job with `id-token: write` has.
const GITHUB_URL: &str = "ACTIONS_ID_TOKEN_REQUEST_URL";
const GITHUB_TOKEN: &str = "ACTIONS_ID_TOKEN_REQUEST_TOKEN";
/// The variable GitLab CI's `id_tokens:` (or any CI) puts the OIDC token in.
pub const ID_TOKEN_VAR: &str = "SKILLREG_ID_TOKEN";
const EXCHANGE_PATH: &str = "/api/v1/trusted_publishing/tokens";

#[derive(Subcommand, Debug)]
pub enum TrustedPublisherCommand {
    /// Let a CI job publish to a namespace without a secret: its OIDC token, from `--issuer`
    /// (default: the provider's hosted service), must carry the repository and workflow given
    /// here (and the environment and ref, when given).
    #[command(
        after_help = "Examples:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg trusted-publisher add acme --repository acme/skills --workflow release.yml --environment release\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg trusted-publisher add acme --provider gitlab --repository group/skills --workflow .gitlab-ci.yml --ref main"
    )]
    Add {
        namespace: String,
        /// github or gitlab: whose claims the token carries.
        #[arg(long, default_value = "github")]
        provider: String,
        /// GitHub: owner/repo; GitLab: the project path.
        #[arg(long)]
        repository: String,
        /// GitHub: the workflow file in .github/workflows (required); GitLab: the pipeline file.
        #[arg(long)]
        workflow: Option<String>,
        /// The deployment environment the job must run in.
        #[arg(long)]
        environment: Option<String>,
        /// The ref the job must run for (GitHub: refs/heads/main, refs/tags/v1; GitLab: main).
        #[arg(long = "ref")]
        git_ref: Option<String>,
        /// The OIDC issuer, exactly as its tokens' `iss` (GitHub Enterprise, self-managed
        /// GitLab); https, or http on loopback only.
        #[arg(long)]
        issuer: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List a namespace's trusted publishers.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg trusted-publisher list acme"
    )]
    List {
        namespace: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Remove a trusted publisher by its id (tp_...).
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg trusted-publisher remove acme tp_1a2b3c4d5e6f"
    )]
    Remove {
        namespace: String,
        id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Accept versions in a namespace only from its trusted publishers (and the admin):
    /// ordinary tokens are refused with `trusted_publishing_only`. --undo accepts them again.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg trusted-publisher only acme"
    )]
    Only {
        namespace: String,
        #[arg(long)]
        undo: bool,
        #[command(flatten)]
        remote: Remote,
    },
}

pub async fn run(command: TrustedPublisherCommand) -> ExitCode {
    client::finish(match command {
        TrustedPublisherCommand::Add {
            namespace,
            provider,
            repository,
            workflow,
            environment,
            git_ref,
            issuer,
            remote,
        } => {
            let request = TrustedPublisherRequest {
                provider,
                issuer,
                repository,
                workflow,
                environment,
                git_ref,
            };
            add(&remote, &namespace, &request).await
        }
        TrustedPublisherCommand::List { namespace, remote } => list(&remote, &namespace).await,
        TrustedPublisherCommand::Remove {
            namespace,
            id,
            remote,
        } => remove(&remote, &namespace, &id).await,
        TrustedPublisherCommand::Only {
            namespace,
            undo,
            remote,
        } => only(&remote, &namespace, !undo).await,
    })
}

fn namespace_path(namespace: &str, rest: &str) -> Result<String, Failure> {
    let namespace =
        crate::core::refs::parse_namespace(namespace).map_err(|e| Failure::usage(e.to_string()))?;
    Ok(format!("/v1/namespaces/{namespace}/{rest}"))
}

/// One line of `list` and `add`.
fn describe(p: &TrustedPublisherView) -> String {
    let mut line = format!("{}  {}  {} {}", p.id, p.namespace, p.provider, p.repository);
    for (name, value) in [
        ("workflow", &p.workflow),
        ("environment", &p.environment),
        ("ref", &p.git_ref),
    ] {
        if let Some(v) = value {
            line.push_str(&format!("  {name}={v}"));
        }
    }
    line.push_str(&format!("  issuer={}", p.issuer));
    line
}

async fn add(
    remote: &Remote,
    namespace: &str,
    request: &TrustedPublisherRequest,
) -> Result<(), Failure> {
    let url = remote.url(&namespace_path(namespace, "trusted-publishers")?);
    let added: TrustedPublisherView = remote
        .send(reqwest::Client::new().post(url).json(request))
        .await?;
    remote.say(|| format!("added {}", describe(&added)));
    Ok(())
}

async fn list(remote: &Remote, namespace: &str) -> Result<(), Failure> {
    let url = remote.url(&namespace_path(namespace, "trusted-publishers")?);
    let list: TrustedPublisherList = remote.send(reqwest::Client::new().get(url)).await?;
    remote.say(|| {
        let mut lines: Vec<String> = list.trusted_publishers.iter().map(describe).collect();
        if lines.is_empty() {
            lines.push(format!("{namespace} has no trusted publisher"));
        }
        if list.trusted_only {
            lines.push(format!(
                "{namespace} accepts versions only from its trusted publishers"
            ));
        }
        lines.join("\n")
    });
    Ok(())
}

async fn remove(remote: &Remote, namespace: &str, id: &str) -> Result<(), Failure> {
    let path = namespace_path(namespace, "trusted-publishers/")?;
    let url = remote.url(&format!(
        "{path}{}",
        percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC)
    ));
    let _: StatusView = remote.send(reqwest::Client::new().delete(url)).await?;
    remote.say(|| format!("removed {id}"));
    Ok(())
}

async fn only(remote: &Remote, namespace: &str, only: bool) -> Result<(), Failure> {
    let url = remote.url(&namespace_path(namespace, "trusted-only")?);
    let client = reqwest::Client::new();
    let req = if only {
        client.post(url)
    } else {
        client.delete(url)
    };
    let _: StatusView = remote.send(req).await?;
    remote.say(|| {
        if only {
            format!("{namespace} accepts versions only from its trusted publishers")
        } else {
            format!("{namespace} accepts versions from any token allowed to publish there")
        }
    });
    Ok(())
}

/// The CI's OIDC token for `audience` (see the module docs).
async fn ci_token(audience: &str) -> Result<String, Failure> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let (Some(url), Some(bearer)) = (var(GITHUB_URL), var(GITHUB_TOKEN)) {
        #[derive(serde::Deserialize)]
        struct Answer {
            value: String,
        }
        let sep = if url.contains('?') { '&' } else { '?' };
        let url = format!(
            "{url}{sep}audience={}",
            percent_encoding::utf8_percent_encode(audience, percent_encoding::NON_ALPHANUMERIC)
        );
        let resp = reqwest::Client::new()
            .get(&url)
            .bearer_auth(bearer)
            .send()
            .await
            .map_err(|e| Failure::usage(format!("asking GitHub Actions for an OIDC token: {e}")))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(Failure::refused(format!(
                "GitHub Actions refused an OIDC token (HTTP {}): does the job have \
                 `permissions: id-token: write`?",
                status.as_u16()
            )));
        }
        let answer: Answer = resp
            .json()
            .await
            .map_err(|e| Failure::usage(format!("GitHub Actions' OIDC answer: {e}")))?;
        return Ok(answer.value);
    }
    if let Some(token) = var(ID_TOKEN_VAR) {
        return Ok(token);
    }
    Err(Failure::usage(format!(
        "--trusted needs a CI's OIDC token: GitHub Actions with `permissions: id-token: write` \
         ({GITHUB_URL} and {GITHUB_TOKEN}), or {ID_TOKEN_VAR} (GitLab CI: name it in the job's \
         `id_tokens:` with `aud: {audience}`)"
    )))
}

/// `publish --trusted`: exchange the CI's OIDC token, run `publish` with the short-lived token,
/// then revoke it whatever `publish` answered.
pub async fn publish_trusted<F, Fut>(
    remote: &Remote,
    audience: &str,
    publish: F,
) -> Result<(), Failure>
where
    F: FnOnce(Remote) -> Fut,
    Fut: std::future::Future<Output = Result<(), Failure>>,
{
    let jwt = ci_token(audience).await?;
    // The exchange's answer holds a secret: never printed, whatever --json says.
    let quiet = Remote {
        token: None,
        json: false,
        ..remote.clone()
    };
    let exchanged: ExchangeView = quiet
        .send(
            reqwest::Client::new()
                .post(quiet.url(EXCHANGE_PATH))
                .json(&ExchangeRequest { jwt }),
        )
        .await?;
    if !remote.json {
        eprintln!(
            "trusted publishing: exchanged the CI's OIDC token for a token valid until {}",
            exchanged.expires_at
        );
    }
    let with_token = Remote {
        token: Some(exchanged.token.clone()),
        ..remote.clone()
    };
    let published = publish(with_token).await;
    let revoked = reqwest::Client::new()
        .delete(quiet.url(EXCHANGE_PATH))
        .bearer_auth(&exchanged.token)
        .send()
        .await;
    match revoked {
        Ok(r) if r.status().is_success() => {}
        Ok(r) => eprintln!(
            "warning: revoking the exchanged token failed (HTTP {}); it expires at {}",
            r.status().as_u16(),
            exchanged.expires_at
        ),
        Err(e) => eprintln!(
            "warning: revoking the exchanged token failed ({e}); it expires at {}",
            exchanged.expires_at
        ),
    }
    published
}
