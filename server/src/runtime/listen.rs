//! The listeners: accept HTTP/1.1 connections (bounded, with hyper's errors as JSON), serve
//! them until told to stop, then let each finish its request in flight (the drain).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot, watch};

use super::StartError;
use super::conn::{JsonErrors, MAX_HEAD_BYTES, OVER_CONNECTION_LIMIT};
use crate::metrics::Metrics;

pub(super) async fn bind(addr: SocketAddr) -> Result<TcpListener, StartError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::Bind(addr, e))
}

pub(super) fn local_addr(
    listener: &TcpListener,
    asked: SocketAddr,
) -> Result<SocketAddr, StartError> {
    listener
        .local_addr()
        .map_err(|e| StartError::Bind(asked, e))
}

/// How a listener treats its connections.
pub(super) struct Listening {
    pub(super) header_read_timeout: Duration,
    pub(super) drain_timeout: Duration,
    /// The public listener's bound on open connections, and where refusals are counted.
    pub(super) connections: Option<(Arc<Semaphore>, Arc<Metrics>)>,
    /// Told when the listener is closed, before the connections drain.
    pub(super) closed: Option<oneshot::Sender<()>>,
}

/// Accepts HTTP/1.1 connections until `stop`, then lets each finish its request in flight. A
/// connection over the bound is answered 503 at once and closed; a request head may take at
/// most [`MAX_HEAD_BYTES`]; hyper's own error answers get a JSON body ([`JsonErrors`]).
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    mut listening: Listening,
    mut stop: watch::Receiver<bool>,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(listening.header_read_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(100);
    let graceful = GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let permit = match &listening.connections {
                        None => None,
                        Some((limit, metrics)) => match limit.clone().try_acquire_owned() {
                            Ok(permit) => {
                                metrics.connections_open.inc();
                                Some((permit, metrics.clone()))
                            }
                            Err(_) => {
                                metrics.connections_refused.inc();
                                let _ = stream.try_write(OVER_CONNECTION_LIMIT);
                                drop(stream);
                                continue;
                            }
                        },
                    };
                    let _ = stream.set_nodelay(true);
                    let service = TowerToHyperService::new(router.clone());
                    let connection =
                        http.serve_connection(TokioIo::new(JsonErrors::new(stream)), service);
                    let connection = graceful.watch(connection);
                    tokio::spawn(async move {
                        let _ = connection.await;
                        if let Some((permit, metrics)) = permit {
                            metrics.connections_open.dec();
                            drop(permit);
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    if let Some(closed) = listening.closed.take() {
        let _ = closed.send(());
    }
    let open = graceful.count();
    if tokio::time::timeout(listening.drain_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            connections = open,
            "drain timeout: connections still open are closed"
        );
    }
}
