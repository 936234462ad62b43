//! What the HTTP handlers share: the application state and the error answer.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::api::{ErrorBody, ErrorDetail};
use crate::config::Config;
use crate::core::{Digest, Visibility};
use crate::error::Error;
use crate::registry::cache::{self, Cache, CacheId};
use crate::registry::{Kept, Registry};

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub registry: Registry,
    pub config: Arc<Config>,
    /// Rendered Markdown files, by the digest of the file and its file viewer address (its
    /// relative links point into its version; neither its bytes nor its version's files change).
    pub rendered: Arc<Cache<(Digest, String), Arc<String>>>,
    /// The web catalog's browse pages as served, by viewer and query (`web::catalog`).
    pub catalog_pages: Arc<Cache<(Visibility, String), KeptPage>>,
}

/// A web page as served, kept while what is current has not changed.
pub type KeptPage = Arc<Kept<Bytes>>;

impl AppState {
    pub fn new(registry: Registry, config: &Config) -> Self {
        Self {
            registry: registry.clone(),
            config: Arc::new(config.clone()),
            catalog_pages: Arc::new(registry.caches().cache(
                CacheId::CatalogPages,
                |(_, query): &(Visibility, String), page: &KeptPage| {
                    cache::string_bytes(query)
                        + cache::arc_bytes(size_of::<Kept<Bytes>>())
                        + cache::allocated(page.value.len())
                },
            )),
            rendered: Arc::new(registry.caches().cache(
                CacheId::Rendered,
                |(_, at): &(Digest, String), html: &Arc<String>| {
                    cache::string_bytes(at)
                        + cache::arc_bytes(size_of::<String>())
                        + cache::string_bytes(html)
                },
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

/// The headers of every response that carries stored bytes (a skill's file, or a version's
/// archive), on every route that serves them: skill files are untrusted, so an `.html` or `.svg`
/// must not run script on the registry's origin (a sandbox CSP, `nosniff`), and a document or
/// script opened inline would show a skill's content as the registry's own page (content
/// spoofing even when sandboxed), so browsers get it, or anything with `download`, as a
/// download named after the file's last path segment.
pub fn stored_bytes_headers(h: &mut HeaderMap, path: &str, mime: &str, download: bool) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if (download || is_active_content(path, mime))
        && let Ok(v) =
            HeaderValue::from_str(&format!("attachment; filename=\"{}\"", download_name(path)))
    {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
}

/// Whether a browser would render the file as a document or run it: HTML, SVG, XML (XSLT runs
/// too) or script, by extension or by MIME type.
fn is_active_content(path: &str, mime: &str) -> bool {
    let ext = path
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase());
    let active_ext = matches!(
        ext.as_deref(),
        Some(
            "html"
                | "htm"
                | "shtml"
                | "xhtml"
                | "xht"
                | "svg"
                | "svgz"
                | "xml"
                | "xsl"
                | "xslt"
                | "js"
                | "mjs"
                | "cjs"
        )
    );
    let active_mime = matches!(
        mime,
        "text/html"
            | "text/xml"
            | "application/xml"
            | "text/javascript"
            | "application/javascript"
            | "application/x-javascript"
            | "text/ecmascript"
            | "application/ecmascript"
    ) || mime.ends_with("+xml");
    active_ext || active_mime
}

/// The file's name for `Content-Disposition`: its last segment with every character but ASCII
/// letters, digits, `.`, `-` and `_` replaced by `_` (no quote, `;` or non-ASCII to escape).
fn download_name(path: &str) -> String {
    path.rsplit('/')
        .next()
        .unwrap_or(path)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
