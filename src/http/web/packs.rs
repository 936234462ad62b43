//! The packs' pages: every pack (its newest version, with its members) at `/packs`, and one
//! pack at `/packs/{namespace}/{name}` (`?version=`: another of its versions) with how to install
//! it and its members linked to their skill pages at the pack's versions.

use askama::Template;

use super::skill::Command;
use super::views::skill_href;
use crate::core::pack::PackRecord;
use crate::core::{Timestamp, VersionRef};

pub struct MemberRow {
    pub skill: String,
    pub href: String,
    pub version: String,
    /// The member's skill page at the pack's version.
    pub version_href: String,
}

pub struct PackCard {
    pub pack: String,
    pub href: String,
    pub version: String,
    pub description: String,
    pub members: Vec<MemberRow>,
}

#[derive(Template)]
#[template(path = "web/packs.html")]
pub struct PacksView {
    pub title: String,
    pub packs: Vec<PackCard>,
}

pub struct PackVersionRow {
    pub version: String,
    pub href: String,
    pub published: Timestamp,
    pub shown: bool,
}

#[derive(Template)]
#[template(path = "web/pack.html")]
pub struct PackView {
    pub title: String,
    pub pack: String,
    pub version: String,
    pub description: String,
    pub install: Vec<Command>,
    pub members: Vec<MemberRow>,
    pub versions: Vec<PackVersionRow>,
}

fn pack_href(p: &PackRecord) -> String {
    format!("/packs/{}/{}", p.pack.namespace, p.pack.name)
}

fn members(members: &[VersionRef]) -> Vec<MemberRow> {
    members
        .iter()
        .map(|m| {
            let href = skill_href(&m.skill);
            MemberRow {
                skill: m.skill.to_string(),
                version_href: format!("{href}?version={}", m.version),
                href,
                version: m.version.to_string(),
            }
        })
        .collect()
}

pub fn packs_page(packs: &[PackRecord]) -> PacksView {
    PacksView {
        title: "Packs".to_owned(),
        packs: packs
            .iter()
            .map(|p| PackCard {
                pack: p.pack.to_string(),
                href: pack_href(p),
                version: p.version.to_string(),
                description: p.contents.description.clone(),
                members: members(&p.contents.members),
            })
            .collect(),
    }
}

/// `shown` among `versions` (newest first), installed from the registry at `base`.
pub fn pack_page(shown: &PackRecord, versions: &[PackRecord], base: &str) -> PackView {
    let newest = versions.first().is_none_or(|v| v.version == shown.version);
    let pinned = if newest {
        String::new()
    } else {
        format!("@{}", shown.version)
    };
    let mut install = vec![Command {
        id: "install-skillreg",
        label: "skillreg",
        text: format!("skillreg add {}{pinned} --from {base}/mcp", shown.pack),
    }];
    if newest {
        install.push(Command {
            id: "install-npx",
            label: "npx skills",
            text: format!(
                "npx skills add {base}/p/{}/{}",
                shown.pack.namespace, shown.pack.name
            ),
        });
    }
    PackView {
        title: shown.pack.to_string(),
        pack: shown.pack.to_string(),
        version: shown.version.to_string(),
        description: shown.contents.description.clone(),
        install,
        members: members(&shown.contents.members),
        versions: versions
            .iter()
            .map(|v| PackVersionRow {
                version: v.version.to_string(),
                href: format!("{}?version={}", pack_href(v), v.version),
                published: v.published_at,
                shown: v.version == shown.version,
            })
            .collect(),
    }
}
