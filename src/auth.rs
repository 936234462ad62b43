//! API tokens: generation, hashing, authentication and scopes.
//!
//! A token is `skr_` + 43 base64url characters (256 random bits), shown once at creation and
//! stored only as its SHA-256. The admin token comes from configuration; it is compared in
//! constant time (both sides hashed first, so lengths leak nothing either). Tokens never reach
//! logs: only their public id (`tok_…`) does.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::core::Digest;
use crate::error::{Error, Result};
use crate::store::{Store, TokenRow};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Publish,
    Yank,
    Deprecate,
    /// Read when the registry requires a token for reads.
    Read,
}

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Anonymous,
    Admin,
    Token {
        id: String,
        namespaces: Vec<String>,
        actions: Vec<Action>,
    },
}

impl Principal {
    /// The name recorded in the audit log.
    pub fn actor(&self) -> String {
        match self {
            Self::Anonymous => "anonymous".to_owned(),
            Self::Admin => "admin".to_owned(),
            Self::Token { id, .. } => id.clone(),
        }
    }

    /// Require `action` on `namespace`: 401 for anonymous callers, 403 for a wrong scope.
    pub fn require(&self, action: Action, namespace: &str) -> Result<()> {
        match self {
            Self::Admin => Ok(()),
            Self::Anonymous => Err(Error::Unauthorized),
            Self::Token {
                actions,
                namespaces,
                ..
            } => {
                if !actions.contains(&action) {
                    return Err(Error::Forbidden(
                        format!("this token may not {action:?}").to_lowercase(),
                    ));
                }
                if !namespaces.iter().any(|n| n == "*" || n == namespace) {
                    return Err(Error::NamespaceNotAllowed(namespace.to_owned()));
                }
                Ok(())
            }
        }
    }

    /// Require the admin.
    pub fn require_admin(&self) -> Result<()> {
        match self {
            Self::Admin => Ok(()),
            Self::Anonymous => Err(Error::Unauthorized),
            Self::Token { .. } => Err(Error::Forbidden(
                "only the admin token may do this".to_owned(),
            )),
        }
    }

    /// Whether this caller may read when reads require a token.
    pub fn may_read(&self) -> bool {
        !matches!(self, Self::Anonymous)
    }
}

/// Authenticates bearer tokens against the admin token and the token table.
#[derive(Clone)]
pub struct Authenticator {
    admin_hash: Option<[u8; 32]>,
    store: Store,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("admin_token", &self.admin_hash.map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    pub fn new(store: Store, admin_token: Option<&str>) -> Self {
        Self {
            admin_hash: admin_token
                .filter(|t| !t.is_empty())
                .map(|t| *Digest::of(t.as_bytes()).as_bytes()),
            store,
        }
    }

    /// The caller behind an `Authorization` header value (`None`: anonymous).
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Principal> {
        let Some(header) = authorization else {
            return Ok(Principal::Anonymous);
        };
        let secret = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or(Error::Unauthorized)?;
        let hash = Digest::of(secret.as_bytes());
        if let Some(admin) = &self.admin_hash
            && constant_time_eq(admin, hash.as_bytes())
        {
            return Ok(Principal::Admin);
        }
        let row = self
            .store
            .token_by_hash(&hash.to_string())
            .await?
            .ok_or(Error::Unauthorized)?;
        token_principal(&row)
    }
}

fn token_principal(row: &TokenRow) -> Result<Principal> {
    let corrupt =
        |e: serde_json::Error| Error::Storage(crate::store::StoreError::Corrupt(e.to_string()));
    Ok(Principal::Token {
        id: row.id.clone(),
        namespaces: serde_json::from_str(&row.namespaces).map_err(corrupt)?,
        actions: serde_json::from_str(&row.actions).map_err(corrupt)?,
    })
}

/// Compare two digests without an early exit.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// A fresh token: (public id, secret shown once, stored hash).
pub fn generate() -> Result<(String, String, String)> {
    let mut secret = [0u8; 32];
    let mut id = [0u8; 6];
    getrandom::fill(&mut secret)
        .and_then(|()| getrandom::fill(&mut id))
        .map_err(|e| {
            Error::Storage(crate::store::StoreError::Corrupt(format!(
                "no randomness: {e}"
            )))
        })?;
    let secret = format!("skr_{}", URL_SAFE_NO_PAD.encode(secret));
    let id = format!(
        "tok_{}",
        id.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let hash = Digest::of(secret.as_bytes()).to_string();
    Ok((id, secret, hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        let t = Principal::Token {
            id: "tok_1".into(),
            namespaces: vec!["acme".into()],
            actions: vec![Action::Publish],
        };
        assert!(t.require(Action::Publish, "acme").is_ok());
        assert_eq!(
            t.require(Action::Yank, "acme").unwrap_err().code(),
            "forbidden"
        );
        assert_eq!(
            t.require(Action::Publish, "other").unwrap_err().code(),
            "namespace_not_allowed"
        );
        assert_eq!(
            Principal::Anonymous
                .require(Action::Publish, "acme")
                .unwrap_err()
                .code(),
            "unauthorized"
        );
        assert!(Principal::Admin.require(Action::Deprecate, "x").is_ok());
        assert_eq!(t.require_admin().unwrap_err().code(), "forbidden");
        let all = Principal::Token {
            id: "t".into(),
            namespaces: vec!["*".into()],
            actions: vec![Action::Yank],
        };
        assert!(all.require(Action::Yank, "anything").is_ok());
    }

    #[test]
    fn tokens_are_random_and_hashed() {
        let (id1, s1, h1) = generate().unwrap();
        let (id2, s2, h2) = generate().unwrap();
        assert_ne!((id1, &s1, &h1), (id2, &s2, &h2));
        assert!(s1.starts_with("skr_") && s1.len() == 47);
        assert_eq!(h1, Digest::of(s1.as_bytes()).to_string());
        assert!(!h1.contains(&s1));
        assert!(constant_time_eq(&[7; 32], &[7; 32]) && !constant_time_eq(&[7; 32], &[8; 32]));
    }
}
