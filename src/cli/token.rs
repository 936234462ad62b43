//! `skillreg token create|list|revoke`: API tokens, managed on a running registry over its REST
//! API ([`client`]; needs the admin token).

use std::process::ExitCode;

use clap::Subcommand;

use super::client;

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create a token scoped to namespaces and actions; its secret is printed once.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg token create --description ci --namespace acme --action publish --action yank"
    )]
    Create {
        #[arg(long)]
        description: String,
        /// Namespace the token may act on (repeatable; `*` for all).
        #[arg(long = "namespace", required = true)]
        namespaces: Vec<String>,
        /// publish, yank, deprecate, read, revoke or approve (repeatable).
        #[arg(long = "action", required = true)]
        actions: Vec<String>,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// List tokens (never their secrets).
    #[command(after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg token list")]
    List {
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Revoke a token by its id (tok_...).
    #[command(after_help = "Example:\n  skillreg token revoke tok_1a2b3c4d5e6f")]
    Revoke {
        id: String,
        #[command(flatten)]
        remote: client::Remote,
    },
}

pub async fn run(command: TokenCommand) -> ExitCode {
    client::finish(match command {
        TokenCommand::Create {
            description,
            namespaces,
            actions,
            remote,
        } => client::token_create(&remote, &description, &namespaces, &actions).await,
        TokenCommand::List { remote } => client::token_list(&remote).await,
        TokenCommand::Revoke { id, remote } => client::token_revoke(&remote, &id).await,
    })
}
