//! Trusted publishing: a CI job publishes with a short-lived token it gets for its OIDC token,
//! so it holds no long-lived secret (crates.io's, npm's and PyPI's model).
//!
//! The admin registers each namespace's trusted publishers (`core::trustpub`: an issuer and the
//! claims its tokens must carry), and may make a namespace accept versions only from them
//! ([`TrustedPublishing::set_trusted_only`], enforced by `Publisher::require_publish`; the
//! admin itself still publishes there, as the operator who registers the publishers). [`TrustedPublishing::exchange`] takes a CI's token
//! (a JWT) and checks, in this order: its issuer is some namespace's trusted publisher
//! (`oidc_issuer_unknown`); it is signed by a key the issuer publishes (its discovery document's
//! `jwks_uri`, [`keys`]), is for the configured audience (`trusted_publishing_audience`), has not
//! expired (no leeway), is valid already (`nbf`, 60 s leeway) and was not issued in the future
//! (`iat`, 60 s), and names a `jti` (`oidc_token_invalid`); its claims match a trusted
//! publisher (`oidc_claims_mismatch`); its `jti` was never exchanged before
//! (`oidc_token_replayed`, remembered in storage until the token expires, so every replica
//! agrees). The answer is a token with the `publish` action on the matched namespaces only,
//! expiring after `trusted_publishing_token_secs` (at most 30 minutes); the CI revokes it early
//! with [`TrustedPublishing::revoke`]. Each exchange is audited with the issuer and the claims it
//! was matched by.

mod keys;

use std::collections::BTreeSet;
use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::access::generate;
use crate::core::auth::RESERVED_NAMESPACE;
use crate::core::trustpub::{
    Constraints, NewPublisher, Provider, TrustedPublisher, TrustpubError, check_issuer,
    publisher_claims,
};
use crate::core::{Action, Namespace, Principal, Scope};
use crate::error::{Error, NotFound, Result};
use crate::store::{Exchange, NewToken, Store};

/// Leeway for `nbf` and `iat` (clocks differ a little); `exp` has none.
const LEEWAY_SECS: u64 = 60;

/// The settings of the exchange.
#[derive(Debug, Clone)]
pub struct TrustSettings {
    /// The `aud` a token must carry.
    pub audience: String,
    /// Seconds an exchanged token lives (1 to 1800).
    pub token_secs: u64,
}

impl Default for TrustSettings {
    /// The settings' declared defaults (`config::Config`).
    fn default() -> Self {
        let defaults = crate::config::Config::default();
        Self {
            audience: defaults.trusted_publishing_audience,
            token_secs: defaults.trusted_publishing_token_secs,
        }
    }
}

/// A trusted publisher as an admin asks for it.
#[derive(Debug, Clone)]
pub struct NewTrustedPublisher {
    pub provider: Provider,
    /// The issuer exactly as its tokens' `iss`; `None`: the provider's hosted service.
    pub issuer: Option<String>,
    pub constraints: Constraints,
}

/// What an exchange gives.
#[derive(Debug, Clone)]
pub struct Exchanged {
    /// The secret, shown once.
    pub token: String,
    /// Its public id (`tok_…`).
    pub id: String,
    /// When it stops being accepted (Unix seconds).
    pub expires_at: i64,
    /// The namespaces it may publish to.
    pub namespaces: Vec<Namespace>,
}

/// Trusted publishers and the exchange.
pub struct TrustedPublishing {
    store: Arc<dyn Store>,
    settings: TrustSettings,
    keys: keys::Keys,
}

impl TrustedPublishing {
    pub(super) fn new(store: Arc<dyn Store>, settings: TrustSettings) -> Self {
        Self {
            store,
            settings,
            keys: keys::Keys::new(),
        }
    }

    /// Register a trusted publisher for `namespace` (admin only).
    pub async fn add(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        new: NewTrustedPublisher,
    ) -> Result<TrustedPublisher> {
        caller.require_admin()?;
        if namespace.as_str() == RESERVED_NAMESPACE {
            return Err(TrustpubError::InvalidPublisher(format!(
                "only the admin publishes to the reserved namespace {RESERVED_NAMESPACE:?}"
            ))
            .into());
        }
        let issuer = new
            .issuer
            .unwrap_or_else(|| new.provider.default_issuer().to_owned());
        check_issuer(&issuer)?;
        new.constraints.check(new.provider)?;
        let (token_id, _, _) = generate()?;
        let id = format!("tp_{}", &token_id["tok_".len()..]);
        let publisher = NewPublisher {
            id: &id,
            namespace,
            provider: new.provider,
            issuer: &issuer,
            constraints: &new.constraints,
        };
        Ok(self
            .store
            .add_trusted_publisher(publisher, &caller.actor())
            .await?)
    }

    /// The trusted publishers of `namespace`, and whether it accepts versions only from them
    /// (admin only).
    pub async fn list(
        &self,
        caller: &Principal,
        namespace: &Namespace,
    ) -> Result<(Vec<TrustedPublisher>, bool)> {
        caller.require_admin()?;
        Ok((
            self.store.trusted_publishers(namespace).await?,
            self.store.trusted_only(namespace).await?,
        ))
    }

    /// Remove a trusted publisher of `namespace` (admin only); tokens already exchanged live
    /// until they expire or are revoked.
    pub async fn remove(&self, caller: &Principal, namespace: &Namespace, id: &str) -> Result<()> {
        caller.require_admin()?;
        if self
            .store
            .remove_trusted_publisher(namespace, id, &caller.actor())
            .await?
        {
            Ok(())
        } else {
            Err(NotFound::TrustedPublisher(id.chars().take(80).collect()).into())
        }
    }

    /// Make `namespace` accept versions only from its trusted publishers and the admin, or
    /// from any token allowed to publish there again (admin only).
    pub async fn set_trusted_only(
        &self,
        caller: &Principal,
        namespace: &Namespace,
        only: bool,
    ) -> Result<()> {
        caller.require_admin()?;
        Ok(self
            .store
            .set_trusted_only(namespace, only, &caller.actor())
            .await?)
    }

    /// Revoke the caller's own exchanged token (the CI's last step).
    pub async fn revoke(&self, caller: &Principal) -> Result<()> {
        match caller {
            Principal::Token {
                id,
                trusted: Some(_),
                ..
            } => {
                self.store.revoke_token(id, id).await?;
                Ok(())
            }
            Principal::Anonymous => Err(crate::core::AccessError::Unauthorized(
                crate::core::Unauthenticated::Missing,
            )
            .into()),
            _ => Err(crate::core::AccessError::Forbidden(
                "only a token exchanged by trusted publishing is revoked here; revoke others \
                 with DELETE /v1/tokens/{id}"
                    .to_owned(),
            )
            .into()),
        }
    }

    /// Exchange a CI's OIDC token for a short-lived publish token (see the module docs).
    pub async fn exchange(&self, jwt: &str) -> Result<Exchanged> {
        let jwt = jwt.trim();
        let invalid = |why: String| Error::from(TrustpubError::TokenInvalid(why));
        let header =
            jsonwebtoken::decode_header(jwt).map_err(|e| invalid(format!("not a JWT: {e}")))?;
        if !asymmetric(header.alg) {
            return Err(invalid(format!(
                "algorithm {:?} is not a public-key signature",
                header.alg
            )));
        }
        let unverified: Map<String, Value> =
            jsonwebtoken::dangerous::insecure_decode_claims(jwt)
                .map_err(|e| invalid(format!("its claims do not decode: {e}")))?;
        let issuer = unverified
            .get("iss")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("it has no iss".to_owned()))?
            .to_owned();
        let publishers = self.store.trusted_publishers_of(&issuer).await?;
        if publishers.is_empty() {
            return Err(TrustpubError::IssuerUnknown(issuer.chars().take(200).collect()).into());
        }
        let kid = header
            .kid
            .as_deref()
            .ok_or_else(|| invalid("its header names no key (kid)".to_owned()))?;
        let jwk = self.keys.find(&issuer, kid).await?.ok_or_else(|| {
            invalid(format!(
                "it is signed by a key {issuer} does not publish (kid {kid:?})"
            ))
        })?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| invalid(format!("the issuer's key {kid:?} is unusable: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_exp = false;
        validation.validate_nbf = true;
        validation.set_audience(&[&self.settings.audience]);
        validation.set_issuer(&[&issuer]);
        // `iat` and `jti` are checked below (the library checks only these for presence).
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let claims: Map<String, Value> = jsonwebtoken::decode(jwt, &key, &validation)
            .map_err(|e| invalid(describe(e.kind(), &self.settings.audience)))?
            .claims;
        let now = now_secs();
        let exp = claims.get("exp").and_then(Value::as_i64).unwrap_or(0);
        if exp <= now {
            return Err(invalid(format!("it expired at {exp} (now {now})")));
        }
        let iat = claims
            .get("iat")
            .and_then(Value::as_i64)
            .ok_or_else(|| invalid("it has no iat".to_owned()))?;
        if iat > now + LEEWAY_SECS as i64 {
            return Err(invalid("it was issued in the future (iat)".to_owned()));
        }
        let jti = claims
            .get("jti")
            .and_then(Value::as_str)
            .filter(|j| !j.is_empty() && j.len() <= 256)
            .ok_or_else(|| invalid("it has no jti".to_owned()))?;

        let mut matched: Vec<&TrustedPublisher> = Vec::new();
        let mut why = Vec::new();
        for p in &publishers {
            match p.constraints.matches(p.provider, &claims) {
                Ok(()) => matched.push(p),
                Err(e) => why.push(format!("{} ({}): {e}", p.id, p.namespace)),
            }
        }
        let Some(first) = matched.first() else {
            return Err(TrustpubError::ClaimsMismatch(why.join("; ")).into());
        };
        let namespaces: Vec<Namespace> = matched
            .iter()
            .map(|p| p.namespace.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let scope = Scope::Namespaces(namespaces.clone());
        let (id, secret, hash) = generate()?;
        let description = format!("trusted publishing: {}", first.constraints.repository);
        let recorded = publisher_claims(first.provider, &issuer, &claims);
        let recorded_text = serde_json::to_string(&recorded)
            .map_err(|e| Error::Internal(format!("publisher claims: {e}")))?;
        let details = serde_json::json!({
            "issuer": issuer,
            "publishers": matched.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
            "claims": recorded,
            "jti": jti,
        });
        let record = self
            .store
            .exchange_token(Exchange {
                token: NewToken {
                    id: &id,
                    hash: &hash,
                    description: &description,
                    scope: &scope,
                    actions: &[Action::Publish],
                    actor: &first.id,
                },
                publisher: &first.id,
                ttl_secs: i64::try_from(self.settings.token_secs)
                    .unwrap_or(1800)
                    .min(1800),
                issuer: &issuer,
                jti,
                jti_expires_at: exp,
                details: &details,
                claims: &recorded_text,
            })
            .await?
            .ok_or(TrustpubError::Replayed)?;
        Ok(Exchanged {
            token: secret,
            id: record.id,
            expires_at: record.expires_at.unwrap_or(now),
            namespaces,
        })
    }
}

/// Whether `alg` is a public-key signature (never a shared secret, whatever a token says).
fn asymmetric(alg: Algorithm) -> bool {
    !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// What a failed validation means, for the refusal's message.
fn describe(kind: &ErrorKind, audience: &str) -> String {
    match kind {
        ErrorKind::InvalidAudience => format!("it is not issued for the audience {audience:?}"),
        ErrorKind::InvalidSignature => "its signature does not verify".to_owned(),
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".to_owned(),
        ErrorKind::InvalidIssuer => "its issuer does not match".to_owned(),
        ErrorKind::MissingRequiredClaim(c) => format!("it has no {c}"),
        ErrorKind::InvalidAlgorithm => "its algorithm does not fit the key".to_owned(),
        other => format!("{other:?}"),
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
