//! Trusted publishing, pure: what an admin registers for a namespace (an OIDC issuer and the
//! claims its tokens must carry), whether a CI's verified token carries them, and what a
//! version records of who published it. Verifying the token itself (signature, audience, times)
//! and exchanging it for a short-lived publish token is `registry::trustpub`.
//!
//! Two claim shapes:
//! - GitHub Actions (issuer `https://token.actions.githubusercontent.com`): `repository` is the
//!   `repository` claim (`owner/repo`, compared case-insensitively as GitHub does); `workflow` is
//!   the file name under `.github/workflows/`, matched against the path of `job_workflow_ref`
//!   (the workflow file whose job asked for the token), or of `workflow_ref` where a token has
//!   no `job_workflow_ref`: that path must be `<repository>/.github/workflows/<workflow>`;
//!   `environment` and `ref` (`refs/heads/main`, `refs/tags/v1`), when set, equal their claims.
//! - GitLab CI (issuer `https://gitlab.com` or a self-managed instance's URL): `repository` is
//!   `project_path` (`group/project`); `workflow`, when set, is the pipeline file, matched
//!   against the path of `ci_config_ref_uri` (`host/group/project//.gitlab-ci.yml@refs/heads/main`);
//!   `environment` and `ref` (a branch or tag name) as for GitHub.
//!
//! An issuer is an `https://` URL; plain `http://` is accepted only on a loopback host
//! (`localhost`, `127.0.0.0/8`, `[::1]`), an identity provider on the registry's own machine (as
//! the tests run one). Any other URL is refused when the publisher is registered, so the
//! registry never fetches keys in the clear from the network.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::code::Code;
use super::name::Namespace;
use super::time::Timestamp;

/// GitHub Actions' issuer.
pub const GITHUB_ISSUER: &str = "https://token.actions.githubusercontent.com";
/// GitLab.com's issuer.
pub const GITLAB_ISSUER: &str = "https://gitlab.com";

/// Whose claim shape a trusted publisher uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Github,
    Gitlab,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Github => "github",
            Self::Gitlab => "gitlab",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Github, Self::Gitlab]
            .into_iter()
            .find(|p| p.as_str() == name)
    }

    /// The issuer of the hosted service, used when none is given.
    pub fn default_issuer(self) -> &'static str {
        match self {
            Self::Github => GITHUB_ISSUER,
            Self::Gitlab => GITLAB_ISSUER,
        }
    }
}

/// The claims a token must carry (stored as JSON with the publisher).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraints {
    /// GitHub: `owner/repo`; GitLab: the project path.
    pub repository: String,
    /// GitHub: the workflow file name (required); GitLab: the pipeline file's path (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
}

/// A trusted publisher of a namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedPublisher {
    /// `tp_` + 12 hex digits.
    pub id: String,
    pub namespace: Namespace,
    pub provider: Provider,
    pub issuer: String,
    pub constraints: Constraints,
    pub created_at: Timestamp,
}

/// A trusted publisher to register, as the registry checked it: the store gives it its
/// creation time.
#[derive(Debug, Clone, Copy)]
pub struct NewPublisher<'a> {
    pub id: &'a str,
    pub namespace: &'a Namespace,
    pub provider: Provider,
    pub issuer: &'a str,
    pub constraints: &'a Constraints,
}

/// Why trusted publishing refused something; each has its own code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustpubError {
    /// The token's issuer is no namespace's trusted publisher.
    #[error("no trusted publisher is registered for the OIDC issuer {0:?}")]
    IssuerUnknown(String),
    /// Not a valid token of its issuer: malformed, signed by no key the issuer publishes, for
    /// another audience, expired, not yet valid, or without the claims every token needs.
    #[error("the OIDC token is not valid: {0}")]
    TokenInvalid(String),
    /// A valid token whose claims match none of its issuer's trusted publishers.
    #[error("the OIDC token matches no trusted publisher: {0}")]
    ClaimsMismatch(String),
    /// A token already exchanged once (its `jti` is remembered until it expires).
    #[error("this OIDC token was already exchanged; a CI job asks for a new one")]
    Replayed,
    /// The issuer's keys could not be fetched.
    #[error("the OIDC issuer's keys could not be fetched: {0}")]
    IssuerUnavailable(String),
    /// An ordinary token publishing where only trusted publishers (and the admin) may.
    #[error(
        "namespace {0:?} accepts versions only from its trusted publishers: publish from its \
         CI with `skillreg publish --trusted`"
    )]
    TrustedOnly(String),
    /// A publisher that cannot be registered as given.
    #[error("{0}")]
    InvalidPublisher(String),
}

impl TrustpubError {
    pub fn code(&self) -> Code {
        match self {
            Self::IssuerUnknown(_) => Code::OidcIssuerUnknown,
            Self::TokenInvalid(_) => Code::OidcTokenInvalid,
            Self::ClaimsMismatch(_) => Code::OidcClaimsMismatch,
            Self::Replayed => Code::OidcTokenReplayed,
            Self::IssuerUnavailable(_) => Code::OidcIssuerUnavailable,
            Self::TrustedOnly(_) => Code::TrustedPublishingOnly,
            Self::InvalidPublisher(_) => Code::InvalidRequest,
        }
    }
}

/// Check an issuer or key URL: `https://`, or `http://` on a loopback host (see the module
/// documentation); no credentials, query or fragment.
pub fn check_issuer(issuer: &str) -> Result<(), TrustpubError> {
    let bad = |why: &str| TrustpubError::InvalidPublisher(format!("issuer {issuer:?} {why}"));
    let url = url::Url::parse(issuer).map_err(|e| bad(&format!("is not a URL: {e}")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not carry credentials"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("must not have a query or fragment"));
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err(bad("has no host")),
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(bad(
            "must be https (plain http only for a provider on this machine's loopback)",
        )),
        _ => Err(bad("must be an https URL")),
    }
}

impl Constraints {
    /// Check what an admin registers for `provider`.
    pub fn check(&self, provider: Provider) -> Result<(), TrustpubError> {
        let bad = |s: &str| Err(TrustpubError::InvalidPublisher(s.to_owned()));
        let repo = self.repository.trim();
        if repo.is_empty() || repo != self.repository || !repo.contains('/') {
            return bad("the repository is `owner/name` (GitHub) or the project path (GitLab)");
        }
        match (provider, &self.workflow) {
            (Provider::Github, None) => {
                return bad("a GitHub trusted publisher names its workflow file (--workflow)");
            }
            (Provider::Github, Some(w)) if w.is_empty() || w.contains('/') || w.contains('@') => {
                return bad("the workflow is a file name in .github/workflows, e.g. release.yml");
            }
            (Provider::Gitlab, Some(w)) if w.is_empty() || w.contains('@') => {
                return bad("the workflow is the pipeline file's path, e.g. .gitlab-ci.yml");
            }
            _ => {}
        }
        for v in [&self.environment, &self.git_ref].into_iter().flatten() {
            if v.is_empty() {
                return bad("an environment or ref, when given, is not empty");
            }
        }
        Ok(())
    }

    /// Whether a verified token's `claims` satisfy these constraints; the error says which
    /// claim does not.
    pub fn matches(&self, provider: Provider, claims: &Map<String, Value>) -> Result<(), String> {
        let claim = |name: &str| claims.get(name).and_then(Value::as_str);
        let differs = |name: &str, want: &str| {
            Err(format!(
                "claim {name:?} is {:?}, not {want:?}",
                claim(name).unwrap_or("(absent)")
            ))
        };
        let repo_claim = match provider {
            Provider::Github => "repository",
            Provider::Gitlab => "project_path",
        };
        if !claim(repo_claim).is_some_and(|r| r.eq_ignore_ascii_case(&self.repository)) {
            return differs(repo_claim, &self.repository);
        }
        if let Some(workflow) = &self.workflow {
            match provider {
                Provider::Github => {
                    let name = if claim("job_workflow_ref").is_some() {
                        "job_workflow_ref"
                    } else {
                        "workflow_ref"
                    };
                    let ok = claim(name)
                        .and_then(|r| r.rsplit_once('@'))
                        .and_then(|(path, _)| path.split_once("/.github/workflows/"))
                        .is_some_and(|(repo, file)| {
                            repo.eq_ignore_ascii_case(&self.repository) && file == workflow
                        });
                    if !ok {
                        let want = format!("{}/.github/workflows/{workflow}@…", self.repository);
                        return differs(name, &want);
                    }
                }
                Provider::Gitlab => {
                    let suffix = format!("/{}", self.repository.to_ascii_lowercase());
                    let ok = claim("ci_config_ref_uri")
                        .and_then(|u| u.split_once("//"))
                        .and_then(|(project, rest)| Some((project, rest.rsplit_once('@')?.0)))
                        .is_some_and(|(project, file)| {
                            project.to_ascii_lowercase().ends_with(&suffix) && file == workflow
                        });
                    if !ok {
                        let want = format!("…/{}//{workflow}@…", self.repository);
                        return differs("ci_config_ref_uri", &want);
                    }
                }
            }
        }
        if let Some(env) = &self.environment
            && claim("environment") != Some(env)
        {
            return differs("environment", env);
        }
        if let Some(r) = &self.git_ref
            && claim("ref") != Some(r)
        {
            return differs("ref", r);
        }
        Ok(())
    }
}

/// What a version and the audit log record of the CI job a token came from: provider,
/// repository, workflow, ref, commit and run, each from its claim where the token has it.
pub fn publisher_claims(
    provider: Provider,
    issuer: &str,
    claims: &Map<String, Value>,
) -> Map<String, Value> {
    let names: [(&str, &str); 5] = match provider {
        Provider::Github => [
            ("repository", "repository"),
            ("workflow", "workflow_ref"),
            ("ref", "ref"),
            ("commit", "sha"),
            ("run", "run_id"),
        ],
        Provider::Gitlab => [
            ("repository", "project_path"),
            ("workflow", "ci_config_ref_uri"),
            ("ref", "ref"),
            ("commit", "sha"),
            ("run", "pipeline_id"),
        ],
    };
    let mut out = Map::new();
    out.insert("provider".into(), provider.as_str().into());
    out.insert("issuer".into(), issuer.into());
    for (key, claim) in names {
        if let Some(v) = claims.get(claim).filter(|v| v.is_string() || v.is_number()) {
            out.insert(key.into(), v.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn github(workflow: &str) -> Constraints {
        Constraints {
            repository: "Acme/skills".into(),
            workflow: Some(workflow.into()),
            environment: None,
            git_ref: None,
        }
    }

    #[test]
    fn github_claims_match_repository_workflow_environment_and_ref() {
        let token = claims(json!({
            "repository": "acme/skills",
            "workflow_ref": "acme/skills/.github/workflows/release.yml@refs/heads/main",
            "ref": "refs/heads/main", "environment": "prod", "sha": "abc", "run_id": "42",
        }));
        let c = github("release.yml");
        assert_eq!(c.matches(Provider::Github, &token), Ok(()));
        let err = github("other.yml")
            .matches(Provider::Github, &token)
            .unwrap_err();
        assert!(err.contains("workflow_ref"), "{err}");
        let mut other_repo = token.clone();
        other_repo.insert("repository".into(), "evil/skills".into());
        assert!(c.matches(Provider::Github, &other_repo).is_err());
        // The job's own workflow file decides when the token names one (a reusable workflow).
        let mut reusable = token.clone();
        reusable.insert(
            "job_workflow_ref".into(),
            "evil/shared/.github/workflows/release.yml@refs/heads/main".into(),
        );
        assert!(c.matches(Provider::Github, &reusable).is_err());
        let env = Constraints {
            environment: Some("prod".into()),
            git_ref: Some("refs/heads/main".into()),
            ..c.clone()
        };
        assert_eq!(env.matches(Provider::Github, &token), Ok(()));
        let staging = Constraints {
            environment: Some("staging".into()),
            ..c.clone()
        };
        assert!(
            staging
                .matches(Provider::Github, &token)
                .unwrap_err()
                .contains("environment")
        );
        let tag = Constraints {
            git_ref: Some("refs/tags/v1".into()),
            ..c
        };
        assert!(tag.matches(Provider::Github, &token).is_err());
        let recorded = publisher_claims(Provider::Github, GITHUB_ISSUER, &token);
        assert_eq!(recorded["commit"], "abc");
        assert_eq!(recorded["run"], "42");
        assert_eq!(recorded["provider"], "github");
    }

    #[test]
    fn gitlab_claims_match_project_and_pipeline_file() {
        let token = claims(json!({
            "project_path": "group/skills", "ref": "main",
            "ci_config_ref_uri": "gitlab.com/group/skills//.gitlab-ci.yml@refs/heads/main",
        }));
        let c = Constraints {
            repository: "group/skills".into(),
            workflow: Some(".gitlab-ci.yml".into()),
            environment: None,
            git_ref: Some("main".into()),
        };
        assert_eq!(c.matches(Provider::Gitlab, &token), Ok(()));
        let other = Constraints {
            workflow: Some("ci/release.yml".into()),
            ..c.clone()
        };
        assert!(other.matches(Provider::Gitlab, &token).is_err());
        let elsewhere = Constraints {
            repository: "other/skills".into(),
            ..c
        };
        assert!(elsewhere.matches(Provider::Gitlab, &token).is_err());
    }

    #[test]
    fn issuers_are_https_or_loopback_http() {
        for ok in [
            GITHUB_ISSUER,
            "https://gitlab.example.com/",
            "http://127.0.0.1:4000",
            "http://localhost:9",
            "http://[::1]:80/oidc",
        ] {
            assert_eq!(check_issuer(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://example.com",
            "http://10.0.0.1",
            "ftp://x.org",
            "https://u:p@x.org",
            "https://x.org/?a=1",
            "not a url",
        ] {
            assert!(check_issuer(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn registered_constraints_are_checked() {
        assert!(github("release.yml").check(Provider::Github).is_ok());
        assert!(
            github(".github/workflows/x.yml")
                .check(Provider::Github)
                .is_err()
        );
        let none = Constraints {
            workflow: None,
            ..github("x")
        };
        assert!(none.check(Provider::Github).is_err());
        assert!(none.check(Provider::Gitlab).is_ok());
        let bad_repo = Constraints {
            repository: "norepo".into(),
            ..github("x.yml")
        };
        assert!(bad_repo.check(Provider::Github).is_err());
    }
}
