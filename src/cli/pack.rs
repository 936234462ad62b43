//! `skillreg pack publish|list|show`: packs on a running registry (sets of exact skill versions
//! installed as one; publishing needs a token with the `pack` action). Installing one is
//! `skillreg add NAMESPACE/PACK`.

use std::process::ExitCode;

use clap::Subcommand;

use super::client::{self, Failure, Remote};
use crate::core::pack::PackRef;
use crate::core::{SkillRef, SkillVersion};
use crate::http::api::{PackList, PackRequest, PackView};

#[derive(Subcommand, Debug)]
pub enum PackCommand {
    /// Publish a version of a pack: the exact versions of the skills it installs.
    #[command(
        after_help = "Example:\n  skillreg pack publish acme/onboarding@1.2.0 acme/setup@1.0.0 acme/style-guide@2.1.0 --description \"Day one at Acme\""
    )]
    Publish {
        /// NAMESPACE/PACK@VERSION.
        pack: String,
        /// Its members: NAMESPACE/NAME@VERSION, exact versions, each skill once.
        #[arg(required = true)]
        members: Vec<String>,
        #[arg(long, default_value = "")]
        description: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// List the packs (of one namespace).
    #[command(after_help = "Examples:\n  skillreg pack list\n  skillreg pack list acme --json")]
    List {
        namespace: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Show a pack's versions and their members.
    #[command(after_help = "Example:\n  skillreg pack show acme/onboarding")]
    Show {
        /// NAMESPACE/PACK.
        pack: String,
        #[command(flatten)]
        remote: Remote,
    },
}

pub async fn run(command: PackCommand) -> ExitCode {
    client::finish(match command {
        PackCommand::Publish {
            pack,
            members,
            description,
            remote,
        } => publish(&remote, &pack, members, description).await,
        PackCommand::List { namespace, remote } => list(&remote, namespace.as_deref()).await,
        PackCommand::Show { pack, remote } => show(&remote, &pack).await,
    })
}

fn pack_ref(text: &str) -> Result<PackRef, Failure> {
    let skill = SkillRef::parse_joined(text)
        .map_err(|e| Failure::usage(format!("{text:?} is not NAMESPACE/PACK: {e}")))?;
    Ok(PackRef::new(skill.namespace, skill.name))
}

/// One line per pack version: `acme/onboarding 1.2.0  3 members: …`.
fn describe(p: &PackView) -> String {
    format!(
        "{}/{} {}  {} member{}: {}",
        p.namespace,
        p.name,
        p.version,
        p.members.len(),
        if p.members.len() == 1 { "" } else { "s" },
        p.members.join(", ")
    )
}

async fn publish(
    remote: &Remote,
    pack: &str,
    members: Vec<String>,
    description: String,
) -> Result<(), Failure> {
    let (name, version) = pack
        .rsplit_once('@')
        .ok_or_else(|| Failure::usage(format!("{pack:?} is not NAMESPACE/PACK@VERSION")))?;
    let version = SkillVersion::parse(version).map_err(|e| Failure::usage(e.to_string()))?;
    let pack = pack_ref(name)?;
    let url = remote.url(&format!(
        "/v1/packs/{}/{}/{version}",
        pack.namespace, pack.name
    ));
    let request = PackRequest {
        description,
        members,
    };
    let stored: PackView = remote
        .send(reqwest::Client::new().put(url).json(&request))
        .await?;
    remote.say(|| format!("published {}", describe(&stored)));
    Ok(())
}

async fn list(remote: &Remote, namespace: Option<&str>) -> Result<(), Failure> {
    let mut path = "/v1/packs".to_owned();
    if let Some(ns) = namespace {
        let ns =
            crate::core::refs::parse_namespace(ns).map_err(|e| Failure::usage(e.to_string()))?;
        path.push_str(&format!("?namespace={ns}"));
    }
    let list: PackList = remote
        .send(reqwest::Client::new().get(remote.url(&path)))
        .await?;
    remote.say(|| {
        if list.packs.is_empty() {
            return "no packs".to_owned();
        }
        list.packs
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(())
}

async fn show(remote: &Remote, pack: &str) -> Result<(), Failure> {
    let pack = pack_ref(pack)?;
    let url = remote.url(&format!("/v1/packs/{}/{}", pack.namespace, pack.name));
    let list: PackList = remote.send(reqwest::Client::new().get(url)).await?;
    remote.say(|| {
        list.packs
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(())
}
