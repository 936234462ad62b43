//! What every request passes before a handler: the Host and Origin allow-lists (DNS-rebinding
//! protection, on every route), and rate limits on writes and on failed authentication.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use super::app::ApiError;
use crate::config::Config;
use crate::core::Digest;
use crate::error::Error;

/// The loopback names every Host allow-list accepts.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Host` and `Origin` values are served.
#[derive(Debug, Clone)]
pub struct Origins {
    /// `None`: any host (`allowed_hosts = ["*"]`).
    hosts: Option<Vec<String>>,
    /// `None`: any origin (`allowed_origins = ["*"]`).
    origins: Option<Vec<String>>,
}

impl Origins {
    pub fn new(config: &Config) -> Self {
        let any = |list: &[String]| list.iter().any(|h| h == "*");
        let hosts = (!any(&config.allowed_hosts)).then(|| {
            LOOPBACK_HOSTS
                .iter()
                .map(|h| (*h).to_owned())
                .chain(config.allowed_hosts.iter().map(|h| h.to_ascii_lowercase()))
                .collect()
        });
        let origins = (!any(&config.allowed_origins)).then(|| {
            config
                .allowed_origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect()
        });
        Self { hosts, origins }
    }

    /// Whether a `Host` header value names an allowed host (any port).
    fn host_allowed(&self, host: &str) -> bool {
        let Some(hosts) = &self.hosts else {
            return true;
        };
        let name = host_name(host);
        hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// Whether an `Origin` header value is allowed: one listed in `allowed_origins`, or an
    /// `http(s)` origin whose host is an allowed host (the loopback names by default).
    fn origin_allowed(&self, origin: &str) -> bool {
        let Some(origins) = &self.origins else {
            return true;
        };
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if origins.contains(&origin) {
            return true;
        }
        let Some(authority) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        !authority.contains(['/', '@']) && self.host_allowed(authority)
    }
}

/// The host of a `Host` (or origin authority) value, without its port: `[::1]:80` is `::1`.
pub(super) fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(h, _)| h);
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(h, _)| h)
}

impl Origins {
    /// The 403 for a request whose `Host` is not allowed, or that carries an `Origin` that is
    /// not: a page on another site, or a DNS-rebinding name, reads nothing here.
    pub fn refuse(&self, request: &Request) -> Option<Response> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .or_else(|| request.uri().authority().map(|a| a.as_str()));
        if let Some(host) = host
            && !self.host_allowed(host)
        {
            // Named for the operator trying a new address, in what a header value may hold.
            let named: String = host_name(host)
                .chars()
                .filter(|c| c.is_ascii_graphic())
                .take(100)
                .collect();
            return Some(forbidden(format!(
                "the Host header names {named:?}, a host this registry does not serve; its \
                 operator serves it with `--allowed-host {named}` (allowed_hosts)"
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let allowed = origin.to_str().is_ok_and(|o| self.origin_allowed(o));
            if !allowed {
                return Some(forbidden(
                    "requests from this Origin are not allowed; its operator allows one with \
                     `--allowed-origin <origin>` (allowed_origins)"
                        .to_owned(),
                ));
            }
        }
        None
    }
}

fn forbidden(message: String) -> Response {
    crate::metrics::error(crate::core::Code::Forbidden.as_str());
    ApiError(Error::Access(crate::core::AccessError::Forbidden(message))).into_response()
}

/// Per-client and per-token rate limits.
pub struct RateLimits {
    /// REST writes, keyed by client address and, separately, by bearer credential.
    writes: Option<DefaultKeyedRateLimiter<String>>,
    /// Answers 401, keyed by client address.
    auth_failures: Option<DefaultKeyedRateLimiter<IpAddr>>,
    /// Clients that spent their failed-authentication quota, refused (429) until then whatever
    /// they send: guessing tokens costs time.
    blocked: std::sync::Mutex<std::collections::HashMap<IpAddr, Instant>>,
}

impl RateLimits {
    pub fn new(config: &Config) -> Self {
        let quota = |per_minute: u32| NonZeroU32::new(per_minute).map(Quota::per_minute);
        Self {
            writes: quota(config.rate_limit_writes_per_minute).map(DefaultKeyedRateLimiter::keyed),
            auth_failures: quota(config.rate_limit_auth_failures_per_minute)
                .map(DefaultKeyedRateLimiter::keyed),
            blocked: std::sync::Mutex::default(),
        }
    }

    fn blocked(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<IpAddr, Instant>> {
        self.blocked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Seconds `client` must still wait after spending its failed-authentication quota.
    fn blocked_for(&self, client: IpAddr) -> Option<u64> {
        let until = *self.blocked().get(&client)?;
        let left = until.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| left.as_secs().max(1))
    }

    /// Drop the state of keys that are full again (bounded memory), every minute until `stop`.
    pub fn prune(self: &Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        let limits = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if let Some(l) = &limits.writes {
                    l.retain_recent();
                    l.shrink_to_fit();
                }
                if let Some(l) = &limits.auth_failures {
                    l.retain_recent();
                    l.shrink_to_fit();
                }
                let now = Instant::now();
                limits.blocked().retain(|_, until| *until > now);
            }
        });
    }
}

/// Seconds until `limiter` admits `key` again, or `None` when it admits it now (counting it).
fn wait<K: std::hash::Hash + Eq + Clone>(
    limiter: &DefaultKeyedRateLimiter<K>,
    key: &K,
) -> Option<u64> {
    limiter.check_key(key).err().map(|not_until| {
        not_until
            .wait_time_from(DefaultClock::default().now())
            .as_secs()
            .max(1)
    })
}

fn too_many(retry_after: u64) -> Response {
    let mut response = ApiError(Error::RateLimited(retry_after)).into_response();
    if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

impl RateLimits {
    /// The 429 for a request over a limit: a client that spent its failed-authentication
    /// quota (whatever it sends), or a REST write over the per-client or per-credential quota.
    pub fn refuse(&self, client: IpAddr, request: &Request) -> Option<Response> {
        if let Some(retry) = self.blocked_for(client) {
            return Some(too_many(retry));
        }
        let is_write = request.uri().path().starts_with("/v1/")
            && matches!(
                *request.method(),
                Method::PUT | Method::POST | Method::DELETE | Method::PATCH
            );
        if is_write && let Some(writes) = &self.writes {
            if let Some(retry) = wait(writes, &format!("client {client}")) {
                return Some(too_many(retry));
            }
            let credential = request
                .headers()
                .get(header::AUTHORIZATION)
                .map(|v| Digest::of(v.as_bytes()).hex());
            if let Some(credential) = credential
                && let Some(retry) = wait(writes, &format!("credential {credential}"))
            {
                return Some(too_many(retry));
            }
        }
        None
    }

    /// Count a 401 against `client`'s failed-authentication quota; the answer that spends it
    /// becomes a 429, and the client is refused until the quota refills.
    pub fn after(&self, client: IpAddr, response: Response) -> Response {
        if response.status() == StatusCode::UNAUTHORIZED
            && let Some(failures) = &self.auth_failures
            && let Some(retry) = wait(failures, &client)
        {
            self.blocked()
                .insert(client, Instant::now() + Duration::from_secs(retry));
            return too_many(retry);
        }
        response
    }
}
