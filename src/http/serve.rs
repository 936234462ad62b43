//! Serving connections: HTTP/1.1 with a header-read timeout (which also closes idle keep-alive
//! connections), a cap on concurrent connections, and a graceful shutdown. Each request carries
//! the client's address (`ConnectInfo`), which rate limits and session caps key on.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Time to receive a request's headers, and the longest a keep-alive connection may sit
    /// idle between requests.
    pub header_read_timeout: Duration,
}

/// Serve `app` on `listener` until `shutdown` is cancelled, then let requests in flight finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
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
        // Without TCP_NODELAY every SSE-framed 2025-era answer waits ~40 ms for a delayed ACK.
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let shutdown = shutdown.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            let service = app.map_request(move |mut request: axum::http::Request<Incoming>| {
                request.extensions_mut().insert(ConnectInfo(remote));
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
            drop(permit);
            drop(done);
        });
    }
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}

/// The client address of a request served by [`serve`] (unspecified for one that was not).
pub fn client_ip<B>(request: &axum::http::Request<B>) -> std::net::IpAddr {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |ConnectInfo(a)| {
            a.ip()
        })
}
