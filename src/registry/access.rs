//! Who may do what: authenticating bearer tokens, managing tokens, reading the audit log.
//!
//! A token is `skr_` + 43 base64url characters (256 random bits), shown once at creation and
//! stored only as its SHA-256. The admin token comes from configuration and is compared in
//! constant time (both sides hashed first, so lengths leak nothing either). Tokens never reach
//! logs: only their public id (`tok_…`) does.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use std::sync::Arc;

use crate::core::records::{AuditRecord, TokenRecord};
use crate::core::{AccessError, Action, Digest, Principal, Scope, Unauthenticated};
use crate::error::{Error, NotFound, Result};
use crate::store::{NewToken, Store};

/// What a new token may do.
#[derive(Debug, Clone)]
pub struct NewTokenRequest {
    pub description: String,
    /// Namespace names, or `*` for every one.
    pub namespaces: Vec<String>,
    pub actions: Vec<Action>,
}

/// Who may do what: the admin token's hash and the stored tokens.
pub struct Access {
    store: Arc<dyn Store>,
    /// The admin token's hash, when one is configured.
    admin_hash: Option<Digest>,
}

impl Access {
    pub(super) fn new(store: Arc<dyn Store>, admin_token: Option<&str>) -> Self {
        Self {
            store,
            admin_hash: admin_token.map(|t| Digest::of(t.as_bytes())),
        }
    }

    /// The caller behind an `Authorization` header value (`None`: anonymous). A header that is
    /// present but not a valid bearer token is refused, never treated as anonymous.
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Principal> {
        let Some(header) = authorization else {
            return Ok(Principal::Anonymous);
        };
        let secret = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or(AccessError::Unauthorized(Unauthenticated::Malformed))?;
        let hash = Digest::of(secret.as_bytes());
        if let Some(admin) = &self.admin_hash
            && constant_time_eq(admin.as_bytes(), hash.as_bytes())
        {
            return Ok(Principal::Admin);
        }
        let token = self
            .store
            .token_by_hash(&hash)
            .await?
            .ok_or(AccessError::Unauthorized(Unauthenticated::Unknown))?;
        Ok(Principal::Token {
            trusted: token
                .publisher
                .is_some()
                .then(|| token.claims.unwrap_or_else(|| "{}".to_owned())),
            id: token.id,
            scope: token.scope,
            actions: token.actions,
        })
    }

    /// Create a token scoped to namespaces and actions (admin only). Returns its info and the
    /// secret, which is never stored.
    pub async fn create_token(
        &self,
        caller: &Principal,
        request: &NewTokenRequest,
    ) -> Result<(TokenRecord, String)> {
        caller.require_admin()?;
        if request.namespaces.is_empty() || request.actions.is_empty() {
            return Err(Error::InvalidRequest(
                "a token needs at least one namespace and one action".into(),
            ));
        }
        let scope = Scope::from_names(&request.namespaces)?;
        let (id, secret, hash) = generate()?;
        let mut actions = request.actions.clone();
        actions.sort_unstable();
        actions.dedup();
        let record = self
            .store
            .create_token(NewToken {
                id: &id,
                hash: &hash,
                description: &request.description,
                scope: &scope,
                actions: &actions,
                actor: &caller.actor(),
            })
            .await?;
        Ok((record, secret))
    }

    /// Revoke a token by id (admin only).
    pub async fn revoke_token(&self, caller: &Principal, id: &str) -> Result<()> {
        caller.require_admin()?;
        if self.store.revoke_token(id, &caller.actor()).await? {
            Ok(())
        } else {
            Err(NotFound::Token(id.chars().take(80).collect()).into())
        }
    }

    /// Every token (admin only).
    pub async fn tokens(&self, caller: &Principal) -> Result<Vec<TokenRecord>> {
        caller.require_admin()?;
        Ok(self.store.tokens().await?)
    }

    /// Audit entries after `after`, oldest first (admin only).
    pub async fn audit(
        &self,
        caller: &Principal,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AuditRecord>> {
        caller.require_admin()?;
        Ok(self.store.audit_page(after, limit.clamp(1, 1000)).await?)
    }
}

/// Compare two digests without an early exit.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// A fresh token: (public id, secret shown once, stored hash).
pub(super) fn generate() -> Result<(String, String, Digest)> {
    let mut secret = [0u8; 32];
    let mut id = [0u8; 6];
    getrandom::fill(&mut secret)
        .and_then(|()| getrandom::fill(&mut id))
        .map_err(|e| Error::Internal(format!("no randomness: {e}")))?;
    let secret = format!("skr_{}", URL_SAFE_NO_PAD.encode(secret));
    let id = format!(
        "tok_{}",
        id.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let hash = Digest::of(secret.as_bytes());
    Ok((id, secret, hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hashed() {
        let (id1, s1, h1) = generate().unwrap();
        let (id2, s2, h2) = generate().unwrap();
        assert_ne!((id1, &s1, &h1), (id2, &s2, &h2));
        assert!(s1.starts_with("skr_") && s1.len() == 47);
        assert_eq!(h1, Digest::of(s1.as_bytes()));
        assert!(constant_time_eq(&[7; 32], &[7; 32]) && !constant_time_eq(&[7; 32], &[8; 32]));
    }
}
