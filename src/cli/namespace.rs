//! `skillreg namespace private|public|review|key`: a namespace's visibility, review and
//! signers' keys (or CAs, or keyless identities), set on a running registry over its REST API ([`client`]; needs the
//! admin token).

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
    /// Register a key the namespace's authors sign with (`model_signing sign key`), a CA
    /// certificate their signing certificates chain to (`model_signing sign certificate`), or,
    /// with --issuer and no file, a keyless identity (`model_signing sign sigstore`, Sigstore
    /// in CI). --identity: the key's owner, served with what it signs; for a CA or keyless, what
    /// the certificate's email or URI name must be: a value, `prefix*`, or `*` (any).
    #[command(after_help = "Examples:\n  \
        SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg namespace key acme author.pub.pem --identity release@acme.example\n  \
        SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg namespace key acme ca.pem --identity 'https://github.com/acme/*'\n  \
        SKILLREG_TOKEN=$SKILLREG_ADMIN_TOKEN skillreg namespace key acme --issuer https://token.actions.githubusercontent.com \\\n      \
        --identity 'https://github.com/acme/skills/.github/workflows/release.yml@refs/tags/*'")]
    Key {
        namespace: String,
        /// A PEM public key (ECDSA P-256 or P-384) or CA certificate; none with --issuer.
        #[arg(required_unless_present = "issuer", conflicts_with = "issuer")]
        file: Option<std::path::PathBuf>,
        #[arg(long)]
        identity: String,
        /// A keyless identity's OIDC issuer, exactly as its Fulcio certificates name it.
        #[arg(long, value_name = "URL")]
        issuer: Option<String>,
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
        NamespaceCommand::Key {
            namespace,
            file,
            identity,
            issuer,
            remote,
        } => {
            // clap asks for exactly one of the file and --issuer.
            let what = match (file, issuer) {
                (None, Some(issuer)) => client::AuthorTrust::Keyless { issuer },
                (file, _) => client::AuthorTrust::File(file.unwrap_or_default()),
            };
            client::add_namespace_key(&remote, &namespace, what, &identity).await
        }
    })
}
