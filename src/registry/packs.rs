//! Packs (`core::pack`): publishing a set of exact skill versions under a name and version, and
//! reading them back for REST, the web page, MCP (`skillreg://packs/…`) and the discovery index.
//!
//! A pack is checked against what is stored when it is published: its name is no skill's in
//! the namespace, and each member exists, is neither revoked nor pending review, and is seen
//! by whoever sees the pack (public, or in the pack's own namespace). A pack's namespace being
//! private hides the pack as it hides the namespace's skills.

use std::sync::Arc;

use crate::core::pack::{self, PackContents, PackRef};
use crate::core::{Action, Code, Namespace, Principal, SkillVersion, Visibility};
use crate::error::{Error, NotFound, Result};
use crate::store::{PackRecord, PublishOutcome, Store, StoreError};

/// Packs: publish and read.
pub struct Packs {
    store: Arc<dyn Store>,
}

impl Packs {
    pub(super) fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// Publish `version` of `pack` with `members` (`namespace/name@version`), for `caller`
    /// (the `pack` action on the pack's namespace). `Ok(false)` when the same members are
    /// published under that version already.
    pub async fn publish(
        &self,
        caller: &Principal,
        pack: &PackRef,
        version: &SkillVersion,
        description: &str,
        members: &[String],
    ) -> Result<bool> {
        caller.require(Action::Pack, &pack.namespace)?;
        let contents = pack::contents(description, members).map_err(|e| Error::Refused {
            code: e.code(),
            message: format!("{pack}@{version}: {e}"),
        })?;
        if self.store.skill(&pack.as_skill()).await?.is_some() {
            return Err(Error::Refused {
                code: Code::PackNameTaken,
                message: format!(
                    "{pack}: the namespace has a skill of that name; a pack needs a name of its own"
                ),
            });
        }
        self.check_members(pack, &contents).await?;
        match self
            .store
            .publish_pack(pack, version, &contents, &caller.actor())
            .await
        {
            Ok(outcome) => Ok(outcome == PublishOutcome::Created),
            Err(StoreError::VersionExists { .. }) => Err(Error::VersionExists(
                pack.as_skill().at(version.clone()),
                None,
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Refuse a member that is missing, revoked, pending, or hidden from some reader of the pack.
    async fn check_members(&self, pack: &PackRef, contents: &PackContents) -> Result<()> {
        let unavailable = |member: &crate::core::VersionRef, why: &str| Error::Refused {
            code: Code::PackMemberUnavailable,
            message: format!("{pack}: member {member} {why}; nothing was stored"),
        };
        for member in &contents.members {
            let Some(skill) = self.store.skill(&member.skill).await? else {
                return Err(unavailable(member, "does not exist"));
            };
            if skill.private && member.skill.namespace != pack.namespace {
                return Err(unavailable(
                    member,
                    "is in another namespace's private skills: whoever sees the pack must be able to install it",
                ));
            }
            let Some(row) = self.store.version(skill.id, &member.version).await? else {
                return Err(unavailable(member, "does not exist"));
            };
            if row.revoked_at.is_some() {
                return Err(unavailable(member, "is revoked"));
            }
            if row.pending {
                return Err(unavailable(member, "is pending review"));
            }
        }
        Ok(())
    }

    /// One version of a pack `viewer` sees (`None`: its newest).
    pub async fn get(
        &self,
        viewer: &Visibility,
        pack: &PackRef,
        version: Option<&SkillVersion>,
    ) -> Result<PackRecord> {
        let not_found = || {
            let shown = match version {
                Some(v) => format!("{pack}@{v}"),
                None => pack.to_string(),
            };
            Error::NotFound(NotFound::Pack(shown))
        };
        self.store
            .pack_versions(pack)
            .await?
            .into_iter()
            .filter(|p| viewer.sees(&p.pack.namespace, p.private))
            .find(|p| version.is_none_or(|v| &p.version == v))
            .ok_or_else(not_found)
    }

    /// Every version of a pack `viewer` sees, newest first.
    pub async fn versions(&self, viewer: &Visibility, pack: &PackRef) -> Result<Vec<PackRecord>> {
        let all: Vec<PackRecord> = self
            .store
            .pack_versions(pack)
            .await?
            .into_iter()
            .filter(|p| viewer.sees(&p.pack.namespace, p.private))
            .collect();
        if all.is_empty() {
            return Err(NotFound::Pack(pack.to_string()).into());
        }
        Ok(all)
    }

    /// The newest version of every pack `viewer` sees (of one namespace), by pack.
    pub async fn list(
        &self,
        viewer: &Visibility,
        namespace: Option<&Namespace>,
    ) -> Result<Vec<PackRecord>> {
        let mut out: Vec<PackRecord> = Vec::new();
        for p in self.store.packs(namespace).await? {
            if viewer.sees(&p.pack.namespace, p.private)
                && out.last().is_none_or(|last| last.pack != p.pack)
            {
                out.push(p);
            }
        }
        Ok(out)
    }
}
