//! Lifecycle changes of published skills: yank, revoke, deprecate, and approving versions held
//! for review. None rewrites a byte.

use super::Trust;
use crate::core::{Action, Namespace, Principal, SkillRef, VersionRef};
use crate::error::{Error, NotFound, Result};
use crate::registry::Dependent;
use crate::store::Withdrawal;

impl Trust {
    /// Yank (`reason: Some`) or unyank (`None`) a version: a yanked version is never current
    /// again but stays readable by its pinned URI. Allowed when other skills' current versions
    /// need it; those are returned (see `withdraw`).
    pub async fn set_yanked(
        &self,
        caller: &Principal,
        version: &VersionRef,
        reason: Option<&str>,
    ) -> Result<Vec<Dependent>> {
        caller.require(Action::Yank, version.namespace())?;
        self.withdraw(caller, version, Withdrawal::Yank, reason)
            .await
    }

    /// Revoke (`reason: Some`, not blank: every refused reader is shown it) a version for
    /// security reasons: it is served to nobody, pinned URIs included, leaves the listing and is
    /// announced in the revocation feed. Reversing it (`None`) is the admin's alone.
    pub async fn set_revoked(
        &self,
        caller: &Principal,
        version: &VersionRef,
        reason: Option<&str>,
    ) -> Result<Vec<Dependent>> {
        let reason = reason.map(str::trim);
        match reason {
            Some(_) => caller.require(Action::Revoke, version.namespace())?,
            None => caller.require_admin()?,
        }
        if reason == Some("") {
            return Err(Error::InvalidRequest(
                "a revocation needs a reason".to_owned(),
            ));
        }
        self.withdraw(caller, version, Withdrawal::Revoke, reason)
            .await
    }

    /// Approve a version pending review (the `approve` action): it may become current, and is
    /// served like any other from then on.
    pub async fn approve(&self, caller: &Principal, version: &VersionRef) -> Result<()> {
        caller.require(Action::Approve, version.namespace())?;
        if !self.store.approve(version, &caller.actor()).await? {
            let exists = match self.store.skill(&version.skill).await? {
                Some(skill) => self
                    .store
                    .version(skill.id, &version.version)
                    .await?
                    .is_some(),
                None => false,
            };
            return Err(if exists {
                Error::InvalidRequest(format!("{version} is not waiting for review"))
            } else {
                NotFound::Version(version.clone()).into()
            });
        }
        self.current.changed();
        Ok(())
    }

    /// Make new versions of `namespace` wait for review (`true`) or not. Admin only; audited.
    pub async fn set_review_required(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        required: bool,
    ) -> Result<()> {
        caller.require_admin()?;
        self.store
            .set_review_required(namespace, required, &caller.actor())
            .await?;
        Ok(())
    }

    /// Register a key `namespace`'s authors sign with (admin only): versions uploaded with a
    /// signature it verifies are served as signed by `identity`. The key's id (its hint).
    /// A PEM certificate instead registers a CA for certificate-signed bundles, `identity` its
    /// policy for the leaf's names (`*`, `prefix*` or a value; `core::signature::cert`); its
    /// id is the certificate's sha256.
    pub async fn add_namespace_key(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        identity: &str,
        public_key: &str,
    ) -> Result<String> {
        caller.require_admin()?;
        let identity = checked_identity(identity)?;
        let (key_id, pem) = if crate::core::signature::cert::is_certificate_pem(public_key) {
            let anchor = crate::core::signature::cert::Anchor::from_pem(public_key, identity)?;
            (anchor.id(), anchor.pem())
        } else {
            let key = crate::core::signature::PublicKey::from_pem(public_key)?;
            (key.key_id(), key.pem().to_owned())
        };
        self.store
            .add_namespace_key(namespace, &key_id, identity, &pem, None, &caller.actor())
            .await?;
        Ok(key_id)
    }

    /// Register a keyless identity of `namespace` (admin only): keyless Sigstore bundles whose
    /// Fulcio certificate names `issuer` (exact) and an email or URI name `identity` accepts
    /// (`*`, `prefix*` or a value) verify, and are served as signed by that name. Its id
    /// ([`KeylessPolicy::id`](crate::core::signature::keyless::KeylessPolicy::id)).
    pub async fn add_keyless_identity(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        issuer: &str,
        identity: &str,
    ) -> Result<String> {
        caller.require_admin()?;
        let identity = checked_identity(identity)?;
        let policy = crate::core::signature::keyless::KeylessPolicy::new(issuer.trim(), identity)
            .map_err(|e| Error::InvalidRequest(format!("issuer: {e}")))?;
        let key_id = policy.id();
        self.store
            .add_namespace_key(
                namespace,
                &key_id,
                identity,
                "",
                Some(&policy.issuer),
                &caller.actor(),
            )
            .await?;
        Ok(key_id)
    }

    /// Forget an author key of `namespace` (admin only); versions it signed keep their
    /// signatures. `false` when it was not registered.
    pub async fn remove_namespace_key(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        key_id: &str,
    ) -> Result<bool> {
        caller.require_admin()?;
        Ok(self
            .store
            .remove_namespace_key(namespace, key_id, &caller.actor())
            .await?)
    }

    /// The author keys of `namespace` and whether it requires their signature (admin only).
    pub async fn namespace_signing(
        &self,
        caller: &Principal,
        namespace: &Namespace,
    ) -> Result<crate::core::records::NamespaceSigning> {
        caller.require_admin()?;
        Ok(self.store.namespace_signing(namespace).await?)
    }

    /// Require (or stop requiring) that new versions of `namespace` carry a signature by one of
    /// its registered keys (admin only).
    pub async fn set_signature_required(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        required: bool,
    ) -> Result<()> {
        caller.require_admin()?;
        self.store
            .set_signature_required(namespace, required, &caller.actor())
            .await?;
        Ok(())
    }

    async fn withdraw(
        &self,
        caller: &Principal,
        version: &VersionRef,
        kind: Withdrawal,
        reason: Option<&str>,
    ) -> Result<Vec<Dependent>> {
        // The current versions whose requirement resolved to this version: the change is
        // allowed, and reported with what each resolves to after it (logged for the operator,
        // returned to the caller, and shown on the dependents as what they resolve to now).
        let needing = self.current.requirements().await?.needing(version);
        if !self
            .store
            .withdraw(version, kind, reason, &caller.actor())
            .await?
        {
            return Err(NotFound::Version(version.clone()).into());
        }
        self.current.changed();
        if needing.is_empty() {
            return Ok(needing);
        }
        let after = self.current.requirements().await?;
        let private = self.current.private_namespaces().await?;
        let viewer = caller.visibility(false);
        let now: Vec<Dependent> = after
            .dependents(&version.skill, &viewer, &private)
            .into_iter()
            .filter(|d| needing.iter().any(|n| n.skill == d.skill))
            .collect();
        for d in &now {
            let resolved = d
                .resolved
                .as_ref()
                .map_or_else(|| "nothing".to_owned(), ToString::to_string);
            tracing::warn!(
                version = %version,
                dependent = %d.skill.clone().at(d.version.clone()),
                range = %d.range,
                "a version other skills need was withdrawn; their requirement now resolves to {resolved}"
            );
        }
        Ok(now)
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
            .store
            .set_deprecated(skill, message, &caller.actor())
            .await?
        {
            return Err(NotFound::Skill(skill.clone()).into());
        }
        self.current.changed();
        Ok(())
    }
}

impl Trust {
    /// Make `namespace` private (its skills visible only to tokens that may read it) or public
    /// again. Admin only; audited.
    pub async fn set_private(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        private: bool,
    ) -> Result<()> {
        caller.require_admin()?;
        self.store
            .set_private(namespace, private, &caller.actor())
            .await?;
        self.current.changed();
        Ok(())
    }
}

/// A namespace key's identity (or identity policy), trimmed: 1 to 200 characters, no control
/// characters.
fn checked_identity(identity: &str) -> Result<&str> {
    let identity = identity.trim();
    if identity.is_empty() || identity.len() > 200 || identity.chars().any(char::is_control) {
        return Err(Error::InvalidRequest(
            "identity: 1 to 200 characters, no control characters".into(),
        ));
    }
    Ok(identity)
}
