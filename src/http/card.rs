//! The MCP server card (SEP-2127): a static document naming this server and its `/mcp`
//! endpoint, so that a discovery tool that knows only the registry's domain can connect.
//!
//! - `/.well-known/mcp/server-card.json` and `/mcp/server-card` (the location the extension's
//!   current draft recommends): the card, `application/json`;
//! - `/.well-known/ai-catalog.json`: an AI Catalog with one entry pointing at the card (how the
//!   current draft says clients find cards).
//!
//! The card repeats what `initialize` says of the server (`mcp::identity`: name, title,
//! version, description, icon, website) and adds the endpoint at the address the client used
//! (`app::base_url`), the protocol versions it speaks and whether a token is required. Its
//! shape is checked against the extension's published schema in the tests. It holds nothing
//! of the catalog, so it is served to anyone.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::model::{Icon, ProtocolVersion};
use serde::Serialize;

use super::app::{AppState, base_url, request_host};

/// The schema the card says it follows.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/// The card's name, under the reversed host (`com.example.skills/skillreg`).
const SERVER: &str = "skillreg";

pub fn routes(state: AppState) -> Router {
    Router::new()
        .route("/.well-known/mcp/server-card.json", get(card))
        .route("/mcp/server-card", get(card))
        .route("/.well-known/ai-catalog.json", get(catalog))
        .with_state(state)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServerCard {
    #[serde(rename = "$schema")]
    schema: &'static str,
    name: String,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    description: String,
    website_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<Vec<Icon>>,
    remotes: [Remote; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Remote {
    r#type: &'static str,
    url: String,
    supported_protocol_versions: Vec<String>,
    headers: [RemoteHeader; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RemoteHeader {
    name: &'static str,
    description: &'static str,
    is_required: bool,
    is_secret: bool,
}

async fn card(State(s): State<AppState>, headers: HeaderMap) -> Response {
    let base = base_url(&headers);
    let config = &s.config;
    let identity = crate::mcp::identity(config.website_url.as_deref(), config.icon_url.as_deref());
    let card = ServerCard {
        schema: SCHEMA,
        name: format!("{}/{SERVER}", reversed_host(&headers)),
        version: identity.version,
        title: identity.title,
        description: identity.description.unwrap_or_default(),
        website_url: identity.website_url.unwrap_or_else(|| format!("{base}/")),
        icons: identity.icons,
        remotes: [Remote {
            r#type: "streamable-http",
            url: format!("{base}/mcp"),
            supported_protocol_versions: ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .map(|v| v.as_str().to_owned())
                .collect(),
            headers: [RemoteHeader {
                name: "Authorization",
                description: if config.require_read_token {
                    "Bearer token: this registry serves nothing without one"
                } else {
                    "Bearer token: optional, it shows the private namespaces it may read"
                },
                is_required: config.require_read_token,
                is_secret: true,
            }],
        }],
    };
    with_type(axum::Json(card), "application/json")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AiCatalog {
    spec_version: &'static str,
    entries: [CatalogEntry; 1],
}

#[derive(Serialize)]
struct CatalogEntry {
    identifier: String,
    r#type: &'static str,
    url: String,
}

async fn catalog(headers: HeaderMap) -> Response {
    let base = base_url(&headers);
    let catalog = AiCatalog {
        spec_version: "1.0",
        entries: [CatalogEntry {
            identifier: format!("urn:air:{}:mcp:{SERVER}", host_name(&headers)),
            r#type: "application/mcp-server-card+json",
            url: format!("{base}/mcp/server-card"),
        }],
    };
    with_type(axum::Json(catalog), "application/ai-catalog+json")
}

fn with_type(body: impl IntoResponse, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The host the client used, without its port or an IPv6 address's brackets.
fn host_name(headers: &HeaderMap) -> String {
    super::guard::host_name(request_host(headers).unwrap_or("localhost")).to_ascii_lowercase()
}

/// The host in reverse-DNS order (`skills.example.com` → `com.example.skills`), in the
/// characters a card's name allows.
fn reversed_host(headers: &HeaderMap) -> String {
    let name = host_name(headers);
    let labels: Vec<String> = name
        .split('.')
        .rev()
        .map(|label| {
            label
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '-'
                    }
                })
                .collect()
        })
        .collect();
    labels.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_reversed_into_the_names_a_card_allows() {
        let with_host = |h: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, HeaderValue::from_str(h).unwrap());
            (host_name(&headers), reversed_host(&headers))
        };
        assert_eq!(
            with_host("Skills.Example.com:8443"),
            ("skills.example.com".into(), "com.example.skills".into())
        );
        assert_eq!(
            with_host("127.0.0.1:8080"),
            ("127.0.0.1".into(), "1.0.0.127".into())
        );
        assert_eq!(with_host("[::1]:8080"), ("::1".into(), "--1".into()));
        assert_eq!(
            with_host("localhost"),
            ("localhost".into(), "localhost".into())
        );
    }
}
