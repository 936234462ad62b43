//! `skillreg webhook add|list|remove|resume`: a namespace's webhooks on a running registry (a token
//! with the `webhook` action there, or the admin token). `add` prints the signing secret, which
//! the registry shows this once; `--json` prints the registry's answer (`http::api`'s
//! `WebhookView`, `WebhookList`, `StatusView`).

use std::process::ExitCode;

use clap::Subcommand;

use super::client::{self, Failure, Remote};
use crate::core::text::printable;
use crate::http::api::{StatusView, WebhookList, WebhookRequest, WebhookView};

#[derive(Subcommand, Debug)]
pub enum WebhookCommand {
    /// POST a namespace's events to a URL, signed as Standard Webhooks says (webhook-id,
    /// webhook-timestamp, webhook-signature headers); prints the signing secret once.
    #[command(
        after_help = "Examples:\n  skillreg webhook add acme https://hooks.example.com/skillreg\n  skillreg webhook add acme https://hooks.example.com/skillreg --type published --type revoked"
    )]
    Add {
        namespace: String,
        url: String,
        /// Deliver only events of this type (repeatable; none: every type): published,
        /// yanked, unyanked, deprecated, undeprecated, revoked, unrevoked, approved,
        /// scan_changed, source_synced.
        #[arg(long = "type")]
        types: Vec<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// List a namespace's webhooks: state (active or paused), failures, last status.
    #[command(after_help = "Example:\n  skillreg webhook list acme")]
    List {
        namespace: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Remove a webhook by its id (wh_...); its pending deliveries are dropped.
    #[command(after_help = "Example:\n  skillreg webhook remove acme wh_0123456789abcdef")]
    Remove {
        namespace: String,
        id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Make a webhook paused by repeated failure active again: its queued deliveries are tried
    /// again (the events of its pause are not delivered).
    #[command(after_help = "Example:\n  skillreg webhook resume acme wh_0123456789abcdef")]
    Resume {
        namespace: String,
        id: String,
        #[command(flatten)]
        remote: Remote,
    },
}

pub async fn run(command: WebhookCommand) -> ExitCode {
    client::finish(match command {
        WebhookCommand::Add {
            namespace,
            url,
            types,
            remote,
        } => add(&remote, &namespace, WebhookRequest { url, types }).await,
        WebhookCommand::List { namespace, remote } => list(&remote, &namespace).await,
        WebhookCommand::Remove {
            namespace,
            id,
            remote,
        } => remove(&remote, &namespace, &id).await,
        WebhookCommand::Resume {
            namespace,
            id,
            remote,
        } => resume(&remote, &namespace, &id).await,
    })
}

fn webhooks_path(namespace: &str) -> Result<String, Failure> {
    let namespace =
        crate::core::refs::parse_namespace(namespace).map_err(|e| Failure::usage(e.to_string()))?;
    Ok(format!("/v1/namespaces/{namespace}/webhooks"))
}

/// One line of `list` and `add`.
fn describe(hook: &WebhookView) -> String {
    let types = if hook.types.is_empty() {
        "every type".to_owned()
    } else {
        hook.types.join(",")
    };
    let mut line = format!(
        "{}  {}  {}  {}  {}",
        hook.id,
        hook.state,
        printable(&hook.url),
        types,
        match hook.last_status {
            Some(status) => format!("last status {status}"),
            None if hook.last_attempt_at.is_some() => "last attempt unanswered".to_owned(),
            None => "no delivery yet".to_owned(),
        }
    );
    if hook.failures > 0 {
        line.push_str(&format!("  {} consecutive failures", hook.failures));
    }
    line
}

async fn add(remote: &Remote, namespace: &str, request: WebhookRequest) -> Result<(), Failure> {
    let url = remote.url(&webhooks_path(namespace)?);
    let added: WebhookView = remote
        .send(reqwest::Client::new().post(url).json(&request))
        .await?;
    remote.say(|| {
        format!(
            "added {}\nsecret (shown once; verify deliveries with it): {}",
            describe(&added),
            added.secret.as_deref().unwrap_or_default()
        )
    });
    Ok(())
}

async fn list(remote: &Remote, namespace: &str) -> Result<(), Failure> {
    let url = remote.url(&webhooks_path(namespace)?);
    let list: WebhookList = remote.send(reqwest::Client::new().get(url)).await?;
    remote.say(|| {
        if list.webhooks.is_empty() {
            format!("{namespace} has no webhook")
        } else {
            list.webhooks
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join("\n")
        }
    });
    Ok(())
}

async fn remove(remote: &Remote, namespace: &str, id: &str) -> Result<(), Failure> {
    let url = remote.url(&format!(
        "{}/{}",
        webhooks_path(namespace)?,
        percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC)
    ));
    let _: StatusView = remote.send(reqwest::Client::new().delete(url)).await?;
    remote.say(|| format!("removed {id}"));
    Ok(())
}

async fn resume(remote: &Remote, namespace: &str, id: &str) -> Result<(), Failure> {
    let url = remote.url(&format!(
        "{}/{}/resume",
        webhooks_path(namespace)?,
        percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC)
    ));
    let _: StatusView = remote.send(reqwest::Client::new().post(url)).await?;
    remote.say(|| format!("resumed {id}"));
    Ok(())
}
