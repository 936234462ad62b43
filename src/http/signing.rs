//! Signed versions over HTTP: a version's bundles (`/v1/…/{version}/signatures`, and one bundle
//! alone at `…/signature`, the file `model_signing verify` reads), the registry's public keys at
//! `/.well-known/skillreg/signing-keys.json` (every key ever used) and `signing-key.pem` (the
//! current one), and the admin routes for a namespace's author keys (the CAs of its authors'
//! certificates, and its keyless identities) and its signature requirement. Part of the REST API (errors, OpenAPI) like [`super::rest`].

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde::Deserialize;

use super::api::*;
use super::app::{ApiError, AppState};
use super::auth::{Caller, Reader};
use super::extract::{VersionPath, json_body};
use crate::core::refs::parse_namespace;
use crate::core::signature::cert::is_certificate_pem;
use crate::error::{Error, NotFound};

type ApiResult<T> = Result<T, ApiError>;

/// The media type of a Sigstore bundle as Model Signing writes it.
const BUNDLE_TYPE: &str = crate::core::signature::BUNDLE_MEDIA_TYPE;

/// A version's signatures with their bundles, exactly as stored (the author's first).
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}/signatures", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = SignaturesView), (status = 404, body = ErrorBody), (status = 410, body = ErrorBody)))]
pub(super) async fn signatures(
    State(s): State<AppState>,
    reader: Reader,
    VersionPath(version): VersionPath,
) -> ApiResult<axum::Json<SignaturesView>> {
    let records = s
        .registry
        .reads()
        .signatures(&reader.visibility, &version)
        .await?;
    let signatures = records
        .into_iter()
        .map(|r| {
            Ok(SignatureView {
                by: r.signer,
                key_id: r.key_id,
                bundle: serde_json::value::RawValue::from_string(r.bundle)
                    .map_err(|e| Error::Internal(format!("a stored bundle: {e}")))?,
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(axum::Json(SignaturesView { signatures }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub(super) struct SignatureQuery {
    /// `registry` (the default) or `author`.
    by: Option<String>,
}

/// One bundle of a version, byte for byte: save it and run `model_signing verify key
/// --signature FILE --public_key KEY DIR` over the installed skill.
#[utoipa::path(get, path = "/v1/skills/{namespace}/{name}/{version}/signature", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path), SignatureQuery),
    responses((status = 200, content_type = "application/vnd.dev.sigstore.bundle.v0.3+json", body = Object),
        (status = 404, body = ErrorBody), (status = 410, body = ErrorBody)))]
pub(super) async fn signature(
    State(s): State<AppState>,
    reader: Reader,
    VersionPath(version): VersionPath,
    Query(q): Query<SignatureQuery>,
) -> ApiResult<Response> {
    let by = q.by.as_deref().unwrap_or("registry");
    let record = s
        .registry
        .reads()
        .signatures(&reader.visibility, &version)
        .await?
        .into_iter()
        .find(|r| r.signer == by)
        .ok_or_else(|| {
            Error::NotFound(NotFound::Resource(format!(
                "{version} has no signature by {}",
                by.chars().take(20).collect::<String>()
            )))
        })?;
    let file = format!("{}-{}.sigstore.json", version.name(), version.version);
    Ok((
        [
            (header::CONTENT_TYPE, BUNDLE_TYPE.to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file}\""),
            ),
        ],
        record.bundle,
    )
        .into_response())
}

/// The public keys the registry signs with: the current one and every one it has used.
async fn signing_keys(State(s): State<AppState>) -> ApiResult<axum::Json<SigningKeysView>> {
    let current = s.registry.publisher().signing_key().await?;
    let keys = s.registry.reads().signing_keys().await?;
    Ok(axum::Json(SigningKeysView {
        current: current.map(|k| k.key_id()),
        keys: keys
            .into_iter()
            .map(|k| SigningKeyView {
                key_id: k.key_id,
                public_key: k.public_key,
                created_at: k.created_at,
            })
            .collect(),
    }))
}

/// The current public key as PEM (`model_signing verify key --public_key`).
async fn signing_key_pem(State(s): State<AppState>) -> ApiResult<Response> {
    let key = s.registry.publisher().signing_key().await?.ok_or_else(|| {
        Error::NotFound(NotFound::Resource(
            "this registry does not sign versions (signing is off)".into(),
        ))
    })?;
    Ok((
        [(header::CONTENT_TYPE, "application/x-pem-file")],
        key.pem().to_owned(),
    )
        .into_response())
}

/// A namespace's author keys and whether it requires their signature (admin only).
#[utoipa::path(get, path = "/v1/namespaces/{namespace}/keys", tag = "trust",
    params(("namespace" = String, Path)),
    responses((status = 200, body = NamespaceKeysView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn namespace_keys(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<NamespaceKeysView>> {
    let namespace = parse_namespace(&namespace)?;
    let signing = s
        .registry
        .trust()
        .namespace_signing(&caller, &namespace)
        .await?;
    Ok(axum::Json(NamespaceKeysView {
        signature_required: signing.required,
        keys: signing
            .keys
            .into_iter()
            .map(|k| NamespaceKeyView {
                kind: k.kind().to_owned(),
                key_id: k.key_id,
                identity: k.identity,
                public_key: k.public_key,
                issuer: k.issuer,
                created_at: k.created_at,
            })
            .collect(),
    }))
}

/// Register a key the namespace's authors sign with, a CA their certificates chain to, or a
/// keyless identity (issuer and identity policy) (admin only); answers the namespace's keys.
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/keys", tag = "trust",
    params(("namespace" = String, Path)), request_body = NamespaceKeyRequest,
    responses((status = 200, body = NamespaceKeysView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn add_namespace_key(
    State(s): State<AppState>,
    caller: Caller,
    Path(namespace): Path<String>,
    body: Body,
) -> ApiResult<axum::Json<NamespaceKeysView>> {
    let request: NamespaceKeyRequest = json_body(body).await?;
    let ns = parse_namespace(&namespace)?;
    if let Some(issuer) = &request.issuer {
        if request.public_key.is_some() || request.certificate.is_some() {
            return Err(Error::InvalidRequest(
                "one of `publicKey`, `certificate` and `issuer`: a keyless identity has no key"
                    .into(),
            )
            .into());
        }
        s.registry
            .trust()
            .add_keyless_identity(&caller.0, &ns, issuer, &request.identity)
            .await?;
        return namespace_keys(State(s), caller, Path(namespace)).await;
    }
    // A key or a CA certificate, by its PEM label; the field says which one is meant.
    let pem = match (&request.public_key, &request.certificate) {
        (Some(key), None) if !is_certificate_pem(key) => key,
        (None, Some(cert)) if is_certificate_pem(cert) => cert,
        (Some(_), None) => {
            return Err(Error::InvalidRequest(
                "publicKey: a PEM public key (a certificate goes in `certificate`)".into(),
            )
            .into());
        }
        (None, Some(_)) => {
            return Err(Error::InvalidRequest("certificate: a PEM CA certificate".into()).into());
        }
        _ => {
            return Err(Error::InvalidRequest(
                "one of `publicKey`, `certificate` and `issuer`".into(),
            )
            .into());
        }
    };
    s.registry
        .trust()
        .add_namespace_key(&caller.0, &ns, &request.identity, pem)
        .await?;
    namespace_keys(State(s), caller, Path(namespace)).await
}

/// Forget an author key of the namespace (admin only); versions it signed keep their
/// signatures.
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/keys/{key_id}", tag = "trust",
    params(("namespace" = String, Path), ("key_id" = String, Path)),
    responses((status = 200, body = StatusView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn remove_namespace_key(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path((namespace, key_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    let removed = s
        .registry
        .trust()
        .remove_namespace_key(&caller, &namespace, &key_id)
        .await?;
    if !removed {
        return Err(Error::NotFound(NotFound::Resource(format!(
            "namespace {namespace} has no key {}",
            key_id.chars().take(64).collect::<String>()
        )))
        .into());
    }
    Ok(axum::Json(StatusView { ok: true }))
}

/// Require each new version of the namespace to carry a signature by one of its keys (admin
/// only).
#[utoipa::path(post, path = "/v1/namespaces/{namespace}/signatures", tag = "trust",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn require_signature(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    set_required(s, caller, namespace, true).await
}

/// Publish into the namespace without an author's signature again (admin only).
#[utoipa::path(delete, path = "/v1/namespaces/{namespace}/signatures", tag = "trust",
    params(("namespace" = String, Path)),
    responses((status = 200, body = StatusView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn signature_optional(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(namespace): Path<String>,
) -> ApiResult<axum::Json<StatusView>> {
    set_required(s, caller, namespace, false).await
}

async fn set_required(
    s: AppState,
    caller: crate::core::Principal,
    namespace: String,
    required: bool,
) -> ApiResult<axum::Json<StatusView>> {
    let namespace = parse_namespace(&namespace)?;
    s.registry
        .trust()
        .set_signature_required(&caller, &namespace, required)
        .await?;
    Ok(axum::Json(StatusView { ok: true }))
}

/// The routes of this module (the `/v1` ones are in the OpenAPI document with the others).
pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/.well-known/skillreg/signing-keys.json", get(signing_keys))
        .route(
            "/.well-known/skillreg/signing-key.pem",
            get(signing_key_pem),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}/signatures",
            get(signatures),
        )
        .route(
            "/v1/skills/{namespace}/{name}/{version}/signature",
            get(signature),
        )
        .route(
            "/v1/namespaces/{namespace}/keys",
            get(namespace_keys).post(add_namespace_key),
        )
        .route(
            "/v1/namespaces/{namespace}/keys/{key_id}",
            delete(remove_namespace_key),
        )
        .route(
            "/v1/namespaces/{namespace}/signatures",
            post(require_signature).delete(signature_optional),
        )
        .with_state(state)
}
