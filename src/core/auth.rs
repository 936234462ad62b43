//! Who is calling and what they may do: the access policy, pure. Authenticating a bearer token
//! (hashing, the token table) is the registry's job; deciding what a principal may do is here.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::code::Code;
use super::name::Namespace;

/// The namespace of the registry's own seed skills, which its MCP instructions tell agents to
/// trust: only the admin (and the seed import at startup) publishes, yanks or deprecates there.
pub const RESERVED_NAMESPACE: &str = "skillreg";

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Publish,
    Yank,
    Deprecate,
    /// Read when the registry requires a token for reads.
    Read,
    /// Revoke versions for security reasons (reversing a revocation is the admin's alone).
    Revoke,
    /// Approve versions waiting for review in a namespace that requires it.
    Approve,
    /// Publish packs (`core::pack`): sets of exact versions installed as one.
    Pack,
    /// Register, list and remove a namespace's webhooks (which receive its events, pending
    /// versions' included: the action lets its token see the namespace).
    Webhook,
}

impl Action {
    pub const ALL: [Action; 8] = [
        Self::Publish,
        Self::Yank,
        Self::Deprecate,
        Self::Read,
        Self::Revoke,
        Self::Approve,
        Self::Pack,
        Self::Webhook,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Publish => "publish",
            Self::Yank => "yank",
            Self::Deprecate => "deprecate",
            Self::Read => "read",
            Self::Revoke => "revoke",
            Self::Approve => "approve",
            Self::Pack => "pack",
            Self::Webhook => "webhook",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The namespaces a token may act on: `*` (every one) or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Any,
    Namespaces(Vec<Namespace>),
}

impl Scope {
    /// The stored form: `["*"]` or namespace names.
    pub fn names(&self) -> Vec<String> {
        match self {
            Self::Any => vec!["*".to_owned()],
            Self::Namespaces(v) => v.iter().map(ToString::to_string).collect(),
        }
    }

    /// Parse the stored form (`"*"` anywhere means every namespace).
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, AccessError> {
        if names.iter().any(|n| n.as_ref() == "*") {
            return Ok(Self::Any);
        }
        names
            .iter()
            .map(|n| {
                Namespace::new(n.as_ref()).map_err(|e| {
                    AccessError::InvalidScope(format!("invalid namespace {:?}: it {e}", n.as_ref()))
                })
            })
            .collect::<Result<_, _>>()
            .map(Self::Namespaces)
    }

    pub fn contains(&self, namespace: &Namespace) -> bool {
        match self {
            Self::Any => true,
            Self::Namespaces(v) => v.contains(namespace),
        }
    }
}

/// Who is calling: anonymous unless a credential says otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Principal {
    #[default]
    Anonymous,
    Admin,
    Token {
        id: String,
        scope: Scope,
        actions: Vec<Action>,
        /// Exchanged by trusted publishing for a CI's OIDC token (short-lived), not created by
        /// the admin: the CI job's claims (JSON text), which each version it publishes records.
        /// Such a token may publish where only trusted publishers may.
        trusted: Option<String>,
    },
}

/// Why a request is not authenticated (401), each saying what to send instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unauthenticated {
    /// No credential, where one is needed.
    #[error(
        "a bearer token is required: send `Authorization: Bearer <token>` (the CLI sends \
         $SKILLREG_TOKEN); the registry's admin creates tokens with `skillreg token create`"
    )]
    Missing,
    /// An `Authorization` header that is not `Bearer <token>`.
    #[error("the Authorization header must be `Bearer <token>`")]
    Malformed,
    /// A token this registry does not hold.
    #[error(
        "this bearer token is not one this registry accepts (unknown, revoked, or another \
         registry's); its admin creates tokens with `skillreg token create`"
    )]
    Unknown,
}

/// Why a principal may not do something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    #[error("{0}")]
    Unauthorized(Unauthenticated),
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("this token may not act on namespace {0:?}")]
    NamespaceNotAllowed(String),
    #[error("{0}")]
    InvalidScope(String),
}

impl AccessError {
    pub fn code(&self) -> Code {
        match self {
            Self::Unauthorized(_) => Code::Unauthorized,
            Self::Forbidden(_) => Code::Forbidden,
            Self::NamespaceNotAllowed(_) => Code::NamespaceNotAllowed,
            Self::InvalidScope(_) => Code::InvalidNamespace,
        }
    }
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

    /// Require `action` on `namespace`: unauthorized for anonymous callers, forbidden or
    /// namespace_not_allowed for a token without the action or the namespace. Only the admin
    /// changes the [`RESERVED_NAMESPACE`], whatever a token's scope says.
    pub fn require(&self, action: Action, namespace: &Namespace) -> Result<(), AccessError> {
        match self {
            Self::Admin => Ok(()),
            Self::Anonymous => Err(AccessError::Unauthorized(Unauthenticated::Missing)),
            Self::Token { actions, scope, .. } => {
                if !actions.contains(&action) {
                    return Err(AccessError::Forbidden(format!(
                        "this token may not {action}"
                    )));
                }
                let reserved = action != Action::Read && namespace.as_str() == RESERVED_NAMESPACE;
                if reserved || !scope.contains(namespace) {
                    return Err(AccessError::NamespaceNotAllowed(namespace.to_string()));
                }
                Ok(())
            }
        }
    }

    /// Require the admin.
    pub fn require_admin(&self) -> Result<(), AccessError> {
        match self {
            Self::Admin => Ok(()),
            Self::Anonymous => Err(AccessError::Unauthorized(Unauthenticated::Missing)),
            Self::Token { .. } => Err(AccessError::Forbidden(
                "only the admin token may do this".to_owned(),
            )),
        }
    }

    /// Whether this caller may read when reads require a token.
    pub fn may_read(&self) -> bool {
        !matches!(self, Self::Anonymous)
    }

    /// The namespaces this caller sees. Reading a namespace needs the `read` action on it, or
    /// publish, approve or webhook rights there; public namespaces are open to everyone unless
    /// `reads_need_token`, which makes every namespace private.
    pub fn visibility(&self, reads_need_token: bool) -> Visibility {
        let readable = match self {
            Self::Admin => return Visibility::All,
            Self::Anonymous => Scope::Namespaces(Vec::new()),
            Self::Token { scope, actions, .. } => {
                if [
                    Action::Read,
                    Action::Publish,
                    Action::Approve,
                    Action::Webhook,
                ]
                .iter()
                .any(|a| actions.contains(a))
                {
                    scope.clone()
                } else {
                    Scope::Namespaces(Vec::new())
                }
            }
        };
        match (readable, reads_need_token) {
            (Scope::Any, _) => Visibility::All,
            (Scope::Namespaces(also), false) => Visibility::Public { also },
            (Scope::Namespaces(only), true) => Visibility::Only(only),
        }
    }
}

/// Which namespaces a caller sees. A skill in a namespace the caller does not see is answered
/// exactly as an unknown one, on every surface.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Every namespace.
    All,
    /// Every public namespace, and these private ones.
    Public { also: Vec<Namespace> },
    /// These namespaces only (reads require a token).
    Only(Vec<Namespace>),
}

impl Visibility {
    /// What an anonymous caller sees on a registry open to anonymous reads.
    pub fn public() -> Self {
        Self::Public { also: Vec::new() }
    }

    /// Whether a namespace (private or not) is seen.
    pub fn sees(&self, namespace: &Namespace, private: bool) -> bool {
        match self {
            Self::All => true,
            Self::Public { also } => !private || also.contains(namespace),
            Self::Only(only) => only.contains(namespace),
        }
    }

    /// Whether what this caller is shown may differ from what an anonymous caller is shown, so
    /// that shared caches must not keep it (`cacheScope: "private"`, `Cache-Control: private`).
    pub fn is_caller_specific(&self) -> bool {
        !matches!(self, Self::Public { also } if also.is_empty())
    }

    /// Whether the caller holds a token for `namespace` (or is the admin): what a version
    /// pending review needs to be seen.
    pub fn holds(&self, namespace: &Namespace) -> bool {
        match self {
            Self::All => true,
            Self::Public { also: named } | Self::Only(named) => named.contains(namespace),
        }
    }

    /// The namespaces named explicitly (`also` or `only`).
    pub fn named(&self) -> &[Namespace] {
        match self {
            Self::All => &[],
            Self::Public { also } => also,
            Self::Only(only) => only,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Namespace {
        Namespace::new(s).unwrap()
    }

    #[test]
    fn scopes() {
        let t = Principal::Token {
            id: "tok_1".into(),
            scope: Scope::Namespaces(vec![ns("acme")]),
            actions: vec![Action::Publish],
            trusted: None,
        };
        assert!(t.require(Action::Publish, &ns("acme")).is_ok());
        assert_eq!(
            t.require(Action::Yank, &ns("acme")).unwrap_err().code(),
            Code::Forbidden
        );
        assert_eq!(
            t.require(Action::Publish, &ns("other")).unwrap_err().code(),
            Code::NamespaceNotAllowed
        );
        assert_eq!(
            Principal::Anonymous
                .require(Action::Publish, &ns("acme"))
                .unwrap_err()
                .code(),
            Code::Unauthorized
        );
        assert!(
            Principal::Admin
                .require(Action::Deprecate, &ns("x"))
                .is_ok()
        );
        assert_eq!(t.require_admin().unwrap_err().code(), Code::Forbidden);
        let all = Principal::Token {
            id: "t".into(),
            scope: Scope::from_names(&["*"]).unwrap(),
            actions: vec![Action::Yank],
            trusted: None,
        };
        assert!(all.require(Action::Yank, &ns("anything")).is_ok());
        assert_eq!(
            all.require(Action::Yank, &ns(RESERVED_NAMESPACE))
                .unwrap_err()
                .code(),
            Code::NamespaceNotAllowed,
            "only the admin changes the reserved namespace"
        );
        assert!(
            Principal::Admin
                .require(Action::Publish, &ns(RESERVED_NAMESPACE))
                .is_ok()
        );
        assert!(Scope::from_names(&["Bad Name"]).is_err());
        assert_eq!(Scope::from_names(&["a", "b"]).unwrap().names(), ["a", "b"]);
    }

    #[test]
    fn reading_needs_read_or_publish_rights_on_the_namespace() {
        let token = |names: &[&str], actions: Vec<Action>| Principal::Token {
            id: "t".into(),
            scope: Scope::from_names(names).unwrap(),
            actions,
            trusted: None,
        };
        let (acme, other) = (ns("acme"), ns("other"));
        let reader = token(&["acme"], vec![Action::Read]);
        let publisher = token(&["acme"], vec![Action::Publish]);
        let yanker = token(&["acme"], vec![Action::Yank]);
        for open in [false, true] {
            let v = reader.visibility(open);
            assert!(v.sees(&acme, true));
            assert!(!v.sees(&other, true), "another namespace's private skills");
            assert_eq!(
                v.sees(&other, false),
                !open,
                "public ones unless reads need a token"
            );
            assert_eq!(
                publisher.visibility(open),
                v,
                "publish rights include reading"
            );
            assert!(!yanker.visibility(open).sees(&acme, true));
            assert_eq!(Principal::Admin.visibility(open), Visibility::All);
            assert_eq!(
                token(&["*"], vec![Action::Read]).visibility(open),
                Visibility::All
            );
        }
        assert_eq!(Principal::Anonymous.visibility(false), Visibility::public());
        assert!(!Principal::Anonymous.visibility(false).is_caller_specific());
        assert!(reader.visibility(false).is_caller_specific());
        assert!(!Principal::Anonymous.visibility(true).sees(&acme, false));
    }

    #[test]
    fn action_names_round_trip() {
        for a in Action::ALL {
            assert_eq!(Action::from_name(a.as_str()), Some(a));
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
    }
}
