//! Authentication as extractors: a handler names who may call it in its signature.
//!
//! - [`Caller`]: whoever sent the request (anonymous when there is no `Authorization` header).
//!   A header that is present but not a valid bearer token is refused with 401, never read as
//!   anonymous. The principal is also stored in the request's extensions, where the MCP handler
//!   finds it.
//! - [`Reader`]: a caller allowed to read, with what it sees: anonymous callers are refused when
//!   reads require a token, and every read is limited to the namespaces the caller may read.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use super::app::{ApiError, AppState};
use crate::core::{AccessError, Principal, Unauthenticated, Visibility};

/// Whoever sent the request.
#[derive(Debug, Clone)]
pub struct Caller(pub Principal);

/// A caller allowed to read, and the namespaces it sees.
#[derive(Debug, Clone)]
pub struct Reader {
    pub visibility: Visibility,
    /// Whether the answer depends on who asked (shared caches must not keep it).
    pub caller_specific: bool,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Authenticated once per request: middleware may have done it already.
        if let Some(p) = parts.extensions.get::<Principal>() {
            return Ok(Self(p.clone()));
        }
        let header = match parts.headers.get(header::AUTHORIZATION) {
            None => None,
            Some(v) => Some(
                v.to_str()
                    .map_err(|_| AccessError::Unauthorized(Unauthenticated::Malformed))?,
            ),
        };
        let principal = state.registry.access().authenticate(header).await?;
        parts.extensions.insert(principal.clone());
        Ok(Self(principal))
    }
}

impl FromRequestParts<AppState> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Caller(principal) = Caller::from_request_parts(parts, state).await?;
        let reads_need_token = state.config.require_read_token;
        if reads_need_token && !principal.may_read() {
            return Err(AccessError::Unauthorized(Unauthenticated::Missing).into());
        }
        let visibility = principal.visibility(reads_need_token);
        Ok(Self {
            caller_specific: reads_need_token || visibility.is_caller_specific(),
            visibility,
        })
    }
}
