//! Serving connections: HTTP/1.1 with a header-read timeout (which also closes idle keep-alive
//! connections), a cap on concurrent connections in all and per client address, and a graceful
//! shutdown. Each request carries its client ([`ClientAddr`]: the peer, or behind a trusted
//! proxy the address the proxy names), which rate limits, session caps and the access log key
//! on.
//!
//! With [`Tls`], each accepted connection does its TLS handshake in its own task (the accept
//! loop never waits on a client), within the header-read timeout and counted against the same
//! caps as any connection; a client that never finishes it is dropped. Its requests then carry
//! `X-Forwarded-Proto: https`, as behind a TLS proxy, so that the links the app writes say
//! `https`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, HeaderValue};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use ipnet::IpNet;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio_rustls::server::TlsStream;
use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::tls::Tls;

/// How connections are bounded.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// Connections served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Connections one client address (an IPv6 client: its /64) holds at once; further ones
    /// are closed when accepted. Trusted proxies are not capped.
    pub max_connections_per_client: usize,
    /// The proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed.
    pub trusted_proxies: TrustedProxies,
    /// Time to receive a request's headers, and the longest a keep-alive connection may sit
    /// idle between requests; with TLS, also the time to finish the handshake.
    pub header_read_timeout: Duration,
}

/// Serve `app` on `listener` (HTTPS with `tls`) until `shutdown` is cancelled, then let
/// requests in flight finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    tls: Option<Tls>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let held = Arc::new(Held::default());
    // Every connection task holds a receiver; shutdown waits until all are dropped.
    let (done_tx, done_rx) = watch::channel(());
    loop {
        let permit = tokio::select! {
            () = shutdown.cancelled() => break,
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let (stream, remote) = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or a transient error: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let peer = remote.ip().to_canonical();
        let trusted = limits.trusted_proxies.trusts(peer);
        let slot = if trusted {
            None
        } else {
            match held.take(client_key(peer), limits.max_connections_per_client) {
                Some(slot) => Some(slot),
                None => {
                    // This address holds its share of the connections: close this one at once
                    // (its slot of the global cap goes back to everyone else).
                    tracing::debug!(%remote, "connection refused: too many from this client");
                    drop(stream);
                    continue;
                }
            }
        };
        // Without TCP_NODELAY every SSE-framed 2025-era answer waits ~40 ms for a delayed ACK.
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let shutdown = shutdown.clone();
        let done = done_rx.clone();
        let proxies = limits.trusted_proxies.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let secure = tls.is_some();
            let stream = match tls {
                None => Either::Left(stream),
                Some(tls) => {
                    let deadline = limits.header_read_timeout;
                    match handshake(&tls, stream, remote, deadline, &shutdown).await {
                        // Boxed: a plain connection's task stays as small as it was.
                        Some(stream) => Either::Right(Box::new(stream)),
                        None => return,
                    }
                }
            };
            let service = app.map_request(move |mut request: axum::http::Request<Incoming>| {
                let client = if trusted {
                    proxies.client(peer, request.headers())
                } else {
                    // What a client says about proxies in front of it is not believed.
                    request.headers_mut().remove(FORWARDED_PROTO);
                    peer
                };
                if secure && !request.headers().contains_key(FORWARDED_PROTO) {
                    request
                        .headers_mut()
                        .insert(FORWARDED_PROTO, HeaderValue::from_static("https"));
                }
                request.extensions_mut().insert(ConnectInfo(remote));
                request.extensions_mut().insert(ClientAddr(client));
                request.map(Body::new)
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .keep_alive(true);
            let connection = builder
                .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service))
                .with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, %remote, "connection ended");
                    }
                }
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(slot);
            drop(permit);
            drop(done);
        });
    }
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}

/// The TLS side of a connection, unless its handshake fails, takes longer than `deadline`
/// (a client that connects and never says hello), or is cut short by the shutdown.
async fn handshake(
    tls: &Tls,
    stream: TcpStream,
    remote: SocketAddr,
    deadline: Duration,
    shutdown: &CancellationToken,
) -> Option<TlsStream<TcpStream>> {
    tokio::select! {
        () = shutdown.cancelled() => None,
        done = tokio::time::timeout(deadline, tls.acceptor().accept(stream)) => match done {
            Ok(Ok(stream)) => Some(stream),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, %remote, "TLS handshake failed");
                None
            }
            Err(_) => {
                tracing::debug!(%remote, "TLS handshake timed out");
                None
            }
        },
    }
}

/// The header a proxy names the client's scheme in.
const FORWARDED_PROTO: &str = "x-forwarded-proto";
/// The header proxies name the client's address in, each appending the peer it heard from.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client a request comes from: its peer, or for a request from a trusted proxy the
/// right-most address of `X-Forwarded-For` that is not a trusted proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// The networks of the reverse proxies in front of the server.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<[IpNet]>);

impl TrustedProxies {
    pub fn new(networks: Vec<IpNet>) -> Self {
        Self(networks.into())
    }

    /// Whether `ip` is a trusted proxy.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that trusted proxy `peer` forwarded: walking `X-Forwarded-For`
    /// (every such header, in order) from the right, the first address that is not a trusted
    /// proxy. Each proxy appends the address it heard from, so only the entries right of that
    /// one were written by proxies; whatever the client wrote left of it is not read. An entry
    /// that is not an address ends the walk at the last proxy seen, as does the list's end.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = peer;
        let values: Vec<&[u8]> = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .map(|v| v.as_bytes())
            .collect();
        for value in values.iter().rev() {
            let Ok(value) = std::str::from_utf8(value) else {
                return client;
            };
            for entry in value.rsplit(',') {
                let Some(ip) = forwarded_address(entry) else {
                    return client;
                };
                if !self.trusts(ip) {
                    return ip;
                }
                client = ip;
            }
        }
        client
    }
}

/// One `X-Forwarded-For` entry: `192.0.2.1`, `2001:db8::1`, or either with a port
/// (`192.0.2.1:4711`, `[2001:db8::1]:4711`).
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    let ip = entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|a| a.ip()))
        .ok()?;
    Some(ip.to_canonical())
}

/// What per-client limits count a client as: its address, or for IPv6 its /64 (one host
/// usually holds a whole /64, so a full address would let it be many clients).
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

/// Connections held per client key.
#[derive(Default)]
struct Held(Mutex<HashMap<IpAddr, usize>>);

/// One connection counted against its client until dropped.
struct Slot {
    held: Arc<Held>,
    key: IpAddr,
}

impl Held {
    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for one more connection of `key`, unless it holds `max` already.
    fn take(self: &Arc<Self>, key: IpAddr, max: usize) -> Option<Slot> {
        let mut counts = self.counts();
        let n = counts.entry(key).or_default();
        if *n >= max.max(1) {
            return None;
        }
        *n += 1;
        Some(Slot {
            held: self.clone(),
            key,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.held.counts();
        if let Some(n) = counts.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// The client of a request served by [`serve`] as per-client limits key on it
/// ([`client_key`]; unspecified for a request that was not served by [`serve`]).
pub fn client_ip<B>(request: &axum::http::Request<B>) -> IpAddr {
    client_key(client_addr(request))
}

/// The client address of a request served by [`serve`] (unspecified for one that was not).
pub fn client_addr<B>(request: &axum::http::Request<B>) -> IpAddr {
    let extensions = request.extensions();
    if let Some(ClientAddr(ip)) = extensions.get::<ClientAddr>() {
        return *ip;
    }
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |ConnectInfo(a)| {
            a.ip().to_canonical()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(nets: &[&str]) -> TrustedProxies {
        TrustedProxies::new(nets.iter().map(|n| n.parse().unwrap()).collect())
    }

    fn xff(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(FORWARDED_FOR, v.parse().unwrap());
        }
        headers
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_client_is_the_right_most_untrusted_forwarded_address() {
        let trusted = proxies(&["10.0.0.0/8", "fd00::/64"]);
        let peer = ip("10.0.0.2");
        // What the client wrote itself (left of what the proxies appended) is never read.
        let h = xff(&["6.6.6.6, 203.0.113.7, 10.0.0.9"]);
        assert_eq!(trusted.client(peer, &h), ip("203.0.113.7"));
        // Several headers are one list, in order.
        let h = xff(&["6.6.6.6", "203.0.113.7:5123", "10.0.0.9"]);
        assert_eq!(trusted.client(peer, &h), ip("203.0.113.7"));
        let h = xff(&["[2001:db8::5]:443"]);
        assert_eq!(trusted.client(peer, &h), ip("2001:db8::5"));
        let h = xff(&["::ffff:198.51.100.1"]);
        assert_eq!(trusted.client(peer, &h), ip("198.51.100.1"));
        // No header, only proxies, or garbage where a proxy would have written: the last proxy.
        assert_eq!(trusted.client(peer, &HeaderMap::new()), peer);
        assert_eq!(trusted.client(peer, &xff(&["10.0.0.9"])), ip("10.0.0.9"));
        assert_eq!(trusted.client(peer, &xff(&["1.2.3.4, nonsense"])), peer);
        assert!(trusted.trusts(ip("::ffff:10.1.1.1")));
        assert!(!trusted.trusts(ip("192.0.2.1")));
        assert!(!TrustedProxies::default().trusts(ip("127.0.0.1")));
    }

    #[test]
    fn ipv6_clients_are_keyed_on_their_64() {
        assert_eq!(
            client_key(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")),
            ip("2001:db8:1:2::")
        );
        assert_eq!(
            client_key(ip("2001:db8:1:2::1")),
            client_key(ip("2001:db8:1:2::ffff"))
        );
        assert_ne!(
            client_key(ip("2001:db8:1:2::1")),
            client_key(ip("2001:db8:1:3::1"))
        );
        assert_eq!(client_key(ip("192.0.2.1")), ip("192.0.2.1"));
        assert_eq!(client_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }

    #[test]
    fn a_client_holds_at_most_its_share_of_connections() {
        let held = Arc::new(Held::default());
        let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
        let slots: Vec<Slot> = (0..3).map(|_| held.take(a, 3).unwrap()).collect();
        assert!(held.take(a, 3).is_none());
        assert!(held.take(b, 3).is_some(), "another client is not affected");
        drop(slots);
        assert!(held.take(a, 3).is_some());
        assert!(
            held.counts().get(&b).is_none(),
            "dropped slots are forgotten"
        );
    }
}
