//! `skillreg publish`: validate a skill directory locally, then pack and upload it to a running
//! registry over its REST API ([`client::publish`]); with `--trusted`, from a CI job with the
//! token its OIDC token is exchanged for ([`trustpub::publish_trusted`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{client, trustpub};

#[derive(Args, Debug)]
pub struct PublishArgs {
    /// The skill directory (SKILL.md at its root).
    dir: PathBuf,
    /// The namespace to publish into (required: a registry has no default one, and the
    /// token's scope names it).
    #[arg(long, short, env = "SKILLREG_NAMESPACE")]
    namespace: String,
    #[arg(long)]
    version: Option<String>,
    /// Repair what breaks the rules in fixable ways in the SKILL.md frontmatter before
    /// packing; each fix is printed and stored with the version.
    #[arg(long)]
    fix: bool,
    /// With --fix, also quote the plain scalars that YAML 1.1 parsers (FastMCP's) read as
    /// another type (dates, yes/no, on/off, octal-looking numbers).
    #[arg(long, requires = "fix")]
    quote_yaml_1_1: bool,
    /// An author's signature to upload with the version: a Model Signing bundle made by
    /// `model_signing sign key --private_key KEY --signature FILE DIR` over the directory as
    /// it is uploaded. Checked here and by the registry against the namespace's keys.
    #[arg(long, value_name = "FILE")]
    signature: Option<PathBuf>,
    /// Publish from CI without a secret (trusted publishing): exchange the CI's OIDC token
    /// (GitHub Actions' `ACTIONS_ID_TOKEN_REQUEST_*`, or `SKILLREG_ID_TOKEN` from GitLab CI's
    /// `id_tokens:`) for a short-lived token, publish with it, then revoke it.
    #[arg(long)]
    trusted: bool,
    /// With --trusted: the audience to ask the CI's token for (the registry's
    /// `trusted_publishing_audience`).
    #[arg(
        long,
        env = "SKILLREG_TRUSTED_PUBLISHING_AUDIENCE",
        default_value = "skillreg",
        requires = "trusted"
    )]
    audience: String,
    #[command(flatten)]
    remote: client::Remote,
}

pub async fn run(args: PublishArgs) -> ExitCode {
    let fix = client::Fixing {
        fix: args.fix,
        quote_yaml_1_1: args.quote_yaml_1_1,
    };
    let publish = |remote: client::Remote| async move {
        client::publish(
            &remote,
            &args.dir,
            &args.namespace,
            args.version.as_deref(),
            fix,
            args.signature.as_deref(),
        )
        .await
    };
    client::finish(if args.trusted {
        trustpub::publish_trusted(&args.remote, &args.audience, publish).await
    } else {
        publish(args.remote.clone()).await
    })
}
