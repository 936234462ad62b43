//! `skillreg namespace private|public|review`: a namespace's visibility and review, set on a
//! running registry over its REST API ([`client`]; needs the admin token).

use std::process::ExitCode;

use clap::Subcommand;

use super::client;

#[derive(Subcommand, Debug)]
pub enum NamespaceCommand {
    /// Make a namespace private: its skills are visible only to tokens that may read it (the
    /// `read` action, or publish rights there), on every surface.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg namespace private acme"
    )]
    Private {
        namespace: String,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Make a private namespace public again.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg namespace public acme"
    )]
    Public {
        namespace: String,
        #[command(flatten)]
        remote: client::Remote,
    },
    /// Make new versions of a namespace wait for review: pending until a token with the
    /// `approve` action approves them (`skillreg approve`), never served over MCP before.
    /// --undo publishes without review again.
    #[command(
        after_help = "Example:\n  SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg namespace review acme"
    )]
    Review {
        namespace: String,
        #[arg(long)]
        undo: bool,
        #[command(flatten)]
        remote: client::Remote,
    },
}

pub async fn run(command: NamespaceCommand) -> ExitCode {
    client::finish(match command {
        NamespaceCommand::Private { namespace, remote } => {
            client::set_private(&remote, &namespace, true).await
        }
        NamespaceCommand::Public { namespace, remote } => {
            client::set_private(&remote, &namespace, false).await
        }
        NamespaceCommand::Review {
            namespace,
            undo,
            remote,
        } => client::set_review(&remote, &namespace, !undo).await,
    })
}
