//! `skillreg search`: search a running registry over its REST API ([`client::search`]).

use std::process::ExitCode;

use clap::Args;

use super::client;

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// What the skill should do, in plain words.
    query: String,
    #[arg(long, short)]
    namespace: Option<String>,
    #[arg(long, default_value_t = 10)]
    limit: usize,
    #[command(flatten)]
    remote: client::Remote,
}

pub async fn run(args: SearchArgs) -> ExitCode {
    client::finish(
        client::search(
            &args.remote,
            &args.query,
            args.namespace.as_deref(),
            args.limit,
        )
        .await,
    )
}
