//! The issuers' signing keys: each issuer's OIDC discovery document
//! (`<issuer>/.well-known/openid-configuration`) names its `jwks_uri`, whose key set is fetched
//! and kept for an hour. A key id the kept set lacks fetches the set again (the issuer may have
//! rotated its keys), unless it was fetched in the last [`REFETCH_AFTER`]: an unknown key id
//! never makes the registry fetch more than that often. The discovery document must name the
//! issuer itself, and its `jwks_uri` must pass the same rule as the issuer (`https://`, or
//! `http://` on loopback: `core::trustpub::check_issuer`). No redirects are followed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};

use crate::core::trustpub::{TrustpubError, check_issuer};

/// How long a fetched key set is used.
const KEEP: Duration = Duration::from_secs(3600);
/// The least time between two fetches of one issuer's keys for an unknown key id.
const REFETCH_AFTER: Duration = Duration::from_secs(10);
/// Time limit of each fetch.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) struct Keys {
    client: reqwest::Client,
    sets: Mutex<HashMap<String, (Arc<JwkSet>, Instant)>>,
}

impl Keys {
    pub(super) fn new() -> Self {
        Self {
            client: reqwest::Client::builder()
                .timeout(FETCH_TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
            sets: Mutex::new(HashMap::new()),
        }
    }

    /// The key `kid` of `issuer`, fetching its key set when it is not kept, too old, or lacks
    /// the key (see the module docs). `None`: the issuer does not publish that key.
    pub(super) async fn find(&self, issuer: &str, kid: &str) -> Result<Option<Jwk>, TrustpubError> {
        let kept = self.lock().get(issuer).cloned();
        if let Some((set, at)) = &kept
            && at.elapsed() < KEEP
        {
            if let Some(key) = set.find(kid) {
                return Ok(Some(key.clone()));
            }
            if at.elapsed() < REFETCH_AFTER {
                return Ok(None);
            }
        }
        let set = Arc::new(self.fetch(issuer).await?);
        self.lock()
            .insert(issuer.to_owned(), (set.clone(), Instant::now()));
        Ok(set.find(kid).cloned())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<JwkSet>, Instant)>> {
        self.sets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn fetch(&self, issuer: &str) -> Result<JwkSet, TrustpubError> {
        let unavailable = |what: &str, e: &dyn std::fmt::Display| {
            TrustpubError::IssuerUnavailable(format!("{what}: {e}"))
        };
        let discovery = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let doc: serde_json::Value = self
            .get(&discovery)
            .await
            .map_err(|e| unavailable(&discovery, &e))?;
        if doc.get("issuer").and_then(|v| v.as_str()) != Some(issuer) {
            return Err(TrustpubError::IssuerUnavailable(format!(
                "{discovery} names another issuer"
            )));
        }
        let jwks_uri = doc
            .get("jwks_uri")
            .and_then(|v| v.as_str())
            .ok_or_else(|| {
                TrustpubError::IssuerUnavailable(format!("{discovery} has no jwks_uri"))
            })?;
        check_issuer(jwks_uri)
            .map_err(|e| TrustpubError::IssuerUnavailable(format!("jwks_uri: {e}")))?;
        self.get(jwks_uri)
            .await
            .map_err(|e| unavailable(jwks_uri, &e))
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, url: &str) -> reqwest::Result<T> {
        self.client
            .get(url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await
    }
}
