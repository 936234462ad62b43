//! What REST handlers take from a request: the validated path (`{namespace}/{name}`,
//! `…/{version}`), and bodies read within their limits (JSON, an upload, a multipart publish).
//! Shared by [`super::rest`] and [`super::signing`].

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use serde::Deserialize;

use super::app::{ApiError, AppState};
use crate::core::archive::Format;
use crate::core::{SkillRef, VersionRef};
use crate::error::Error;

type ApiResult<T> = Result<T, ApiError>;

/// `{namespace}/{name}` of the URL, validated.
pub struct SkillPath(pub SkillRef);

/// `{namespace}/{name}/{version}` of the URL, validated.
pub struct VersionPath(pub VersionRef);

async fn path_params(parts: &mut Parts, state: &AppState) -> ApiResult<HashMap<String, String>> {
    let Path(params) = Path::<HashMap<String, String>>::from_request_parts(parts, state)
        .await
        .map_err(|e| Error::InvalidRequest(e.body_text()))?;
    Ok(params)
}

pub(super) fn param<'a>(params: &'a HashMap<String, String>, key: &str) -> &'a str {
    params.get(key).map_or("", String::as_str)
}

impl FromRequestParts<AppState> for SkillPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let p = path_params(parts, state).await?;
        Ok(Self(SkillRef::parse(
            param(&p, "namespace"),
            param(&p, "name"),
        )?))
    }
}

impl FromRequestParts<AppState> for VersionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let p = path_params(parts, state).await?;
        Ok(Self(VersionRef::parse(
            param(&p, "namespace"),
            param(&p, "name"),
            param(&p, "version"),
        )?))
    }
}

/// Read a body of at most `limit` bytes. Past the limit the rest is read and discarded (up to
/// 4× the limit; the request time limit bounds slow senders) so the client, which is usually
/// still writing, receives the 413 instead of a reset connection.
pub(super) async fn read_capped(body: Body, limit: usize) -> ApiResult<Vec<u8>> {
    use http_body_util::BodyExt as _;
    let mut body = body;
    let mut bytes = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Error::InvalidRequest(format!("reading the body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if seen <= limit {
            bytes.extend_from_slice(&data);
        } else if seen > limit.saturating_mul(4) {
            break;
        }
    }
    if seen > limit {
        return Err(Error::BodyTooLarge(limit).into());
    }
    Ok(bytes)
}

/// The parts of a `multipart/form-data` publish: `archive` (the skill as `.tar.gz` or `.zip`,
/// its format by the part's content type) and `signature` (an author's Model Signing bundle,
/// JSON). Any other part is refused.
pub(super) async fn upload_parts(
    body: Vec<u8>,
    boundary: String,
) -> ApiResult<(Format, Vec<u8>, Option<String>)> {
    let invalid = |e: multer::Error| Error::InvalidRequest(format!("the multipart body: {e}"));
    let stream = futures_util::stream::once(async {
        Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(body))
    });
    let mut parts = multer::Multipart::new(stream, boundary);
    let (mut archive, mut signature) = (None, None);
    while let Some(part) = parts.next_field().await.map_err(invalid)? {
        match part.name() {
            Some("archive") if archive.is_none() => {
                let kind = part
                    .content_type()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let format = Format::from_content_type(&kind)
                    .ok_or_else(|| Error::UnsupportedMediaType(kind.chars().take(100).collect()))?;
                archive = Some((format, part.bytes().await.map_err(invalid)?.to_vec()));
            }
            Some("signature") if signature.is_none() => {
                let text = String::from_utf8(part.bytes().await.map_err(invalid)?.to_vec())
                    .map_err(|_| Error::InvalidRequest("the signature part is not UTF-8".into()))?;
                signature = Some(text);
            }
            other => {
                return Err(Error::InvalidRequest(format!(
                    "unexpected multipart part {other:?}: send one `archive` and at most one \
                     `signature`"
                ))
                .into());
            }
        }
    }
    let (format, archive) = archive
        .ok_or_else(|| Error::InvalidRequest("the multipart body has no `archive` part".into()))?;
    Ok((format, archive, signature))
}

/// Largest JSON request body (yank reasons, deprecation messages, token requests).
const MAX_JSON_BODY: usize = 64 * 1024;

pub(super) async fn json_body<T: for<'de> Deserialize<'de>>(body: Body) -> ApiResult<T> {
    let bytes = read_capped(body, MAX_JSON_BODY).await?;
    let bytes: &[u8] = if bytes.is_empty() { b"{}" } else { &bytes };
    serde_json::from_slice(bytes).map_err(|e| Error::InvalidRequest(e.to_string()).into())
}
