//! What happens to a published version or skill after it is published, each over the running
//! registry's REST API ([`client`]): `yank`, `revoke`, `approve` and `deprecate`.

use std::process::ExitCode;

use clap::Args;

use super::client;

#[derive(Args, Debug)]
pub struct YankArgs {
    /// NAMESPACE/NAME@VERSION, as `revoke` and `approve` take it (NAMESPACE/NAME VERSION
    /// is read too).
    version: String,
    /// The version, when the first argument is NAMESPACE/NAME.
    #[arg(hide = true)]
    split_version: Option<String>,
    #[arg(long, default_value = "")]
    reason: String,
    #[arg(long)]
    undo: bool,
    #[command(flatten)]
    remote: client::Remote,
}

pub async fn yank(args: YankArgs) -> ExitCode {
    let version = client::joined(&args.version, args.split_version.as_deref());
    client::finish(match version {
        Ok(version) => client::yank(&args.remote, &version, &args.reason, args.undo).await,
        Err(usage) => Err(usage),
    })
}

#[derive(Args, Debug)]
pub struct RevokeArgs {
    /// NAMESPACE/NAME@VERSION
    version: String,
    /// Why: shown to every reader refused, and in the feed.
    #[arg(long, required_unless_present = "undo")]
    reason: Option<String>,
    #[arg(long)]
    undo: bool,
    #[command(flatten)]
    remote: client::Remote,
}

pub async fn revoke(args: RevokeArgs) -> ExitCode {
    client::finish(
        client::revoke(
            &args.remote,
            &args.version,
            args.reason.as_deref(),
            args.undo,
        )
        .await,
    )
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    /// NAMESPACE/NAME@VERSION
    version: String,
    #[command(flatten)]
    remote: client::Remote,
}

pub async fn approve(args: ApproveArgs) -> ExitCode {
    client::finish(client::approve(&args.remote, &args.version).await)
}

#[derive(Args, Debug)]
pub struct DeprecateArgs {
    /// NAMESPACE/NAME
    skill: String,
    #[arg(long, default_value = "")]
    message: String,
    #[arg(long)]
    undo: bool,
    #[command(flatten)]
    remote: client::Remote,
}

pub async fn deprecate(args: DeprecateArgs) -> ExitCode {
    client::finish(client::deprecate(&args.remote, &args.skill, &args.message, args.undo).await)
}
