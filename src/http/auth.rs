//! Authentication as extractors: a handler names who may call it in its signature.
//!
//! - [`Caller`]: whoever sent the request (anonymous when no `Authorization` header). A header
//!   that is present but not a valid bearer token is refused with 401, never read as anonymous.
//! - [`Reader`]: a caller allowed to read; anonymous callers are refused when reads require a
//!   token.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use super::app::{ApiError, AppState};
use crate::core::{AccessError, Principal};

/// Whoever sent the request.
pub struct Caller(pub Principal);

/// A caller allowed to read.
pub struct Reader;

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Authenticated once per request: middleware may have done it already.
        if let Some(Caller(p)) = parts.extensions.get::<Caller>() {
            return Ok(Self(p.clone()));
        }
        let header = match parts.headers.get(header::AUTHORIZATION) {
            None => None,
            Some(v) => Some(v.to_str().map_err(|_| AccessError::Unauthorized)?),
        };
        let principal = state.registry.authenticate(header).await?;
        parts.extensions.insert(Caller(principal.clone()));
        Ok(Self(principal))
    }
}

impl Clone for Caller {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl FromRequestParts<AppState> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Caller(principal) = Caller::from_request_parts(parts, state).await?;
        if state.config.require_read_token && !principal.may_read() {
            return Err(AccessError::Unauthorized.into());
        }
        Ok(Self)
    }
}
