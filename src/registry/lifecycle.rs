//! Lifecycle changes of published skills: yank and deprecate. Neither rewrites a byte.

use super::Registry;
use crate::core::{Action, Principal, SkillRef, VersionRef};
use crate::error::{NotFound, Result};

impl Registry {
    /// Yank (`reason: Some`) or unyank (`None`) a version: a yanked version is never current
    /// again but stays readable by its pinned URI.
    pub async fn set_yanked(
        &self,
        caller: &Principal,
        version: &VersionRef,
        reason: Option<&str>,
    ) -> Result<()> {
        caller.require(Action::Yank, version.namespace())?;
        if !self
            .store()
            .set_yanked(version, reason, &caller.actor())
            .await?
        {
            return Err(NotFound::Version(version.clone()).into());
        }
        self.notify_changed();
        Ok(())
    }

    /// Deprecate (`message: Some`) or undeprecate (`None`) a skill: it stays listed and says so.
    pub async fn set_deprecated(
        &self,
        caller: &Principal,
        skill: &SkillRef,
        message: Option<&str>,
    ) -> Result<()> {
        caller.require(Action::Deprecate, &skill.namespace)?;
        if !self
            .store()
            .set_deprecated(skill, message, &caller.actor())
            .await?
        {
            return Err(NotFound::Skill(skill.clone()).into());
        }
        self.notify_changed();
        Ok(())
    }
}
