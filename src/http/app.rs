//! What the HTTP handlers share: the application state and the error answer.

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::api::{ErrorBody, ErrorDetail};
use crate::config::Config;
use crate::core::Digest;
use crate::error::Error;
use crate::registry::Registry;
use crate::registry::cache::Cache;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub registry: Registry,
    pub config: Arc<Config>,
    /// Rendered SKILL.md pages, by the digest of the SKILL.md (its bytes never change).
    pub rendered: Arc<Cache<Digest, Arc<String>>>,
}

/// Memory for rendered pages; a page larger than a quarter of it is rendered every time.
const RENDERED_CACHE_BYTES: usize = 32 * 1024 * 1024;

impl AppState {
    pub fn new(registry: Registry, config: &Config) -> Self {
        Self {
            registry,
            config: Arc::new(config.clone()),
            rendered: Arc::new(Cache::weighed(
                RENDERED_CACHE_BYTES,
                RENDERED_CACHE_BYTES / 4,
                None,
                |html: &Arc<String>| html.len(),
            )),
        }
    }
}

/// An error answered as `{"error":{"code","message"}}` with its row's HTTP status.
pub struct ApiError(pub Error);

impl<E: Into<Error>> From<E> for ApiError {
    fn from(e: E) -> Self {
        Self(e.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = self.0.code();
        crate::metrics::error(code.as_str());
        let status =
            StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let findings = match &self.0 {
            Error::Blocked { findings, .. } => Some(
                findings
                    .iter()
                    .cloned()
                    .map(super::api::FindingView::from)
                    .collect(),
            ),
            _ => None,
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: code.as_str().to_owned(),
                message: self.0.public_message(),
                findings,
            },
        };
        let mut resp = (status, axum::Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

/// The `Host` the client used, when it is a plain host[:port] (the host allow-list has checked
/// it before any handler runs): the address to give back in links and configurations.
pub fn request_host(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
}

/// The registry's address as the client used it: `Host` (checked by the host allow-list before
/// any handler runs), and `https` when a proxy in front says so.
pub fn base_url(headers: &axum::http::HeaderMap) -> String {
    let host = request_host(headers).unwrap_or("127.0.0.1");
    let scheme = match headers
        .get("x-forwarded-proto")
        .and_then(|p| p.to_str().ok())
    {
        Some("https") => "https",
        _ => "http",
    };
    format!("{scheme}://{host}")
}
