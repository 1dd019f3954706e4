//! The two listeners and the server's lifecycle: bind (serving 503 until loaded), load every
//! site once (ready), poll configs for reloads, and drain on shutdown (SPEC 7 "Operations").

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinHandle;

use crate::conn::{JsonErrors, MAX_HEAD_BYTES, OVER_CONNECTION_LIMIT};
use crate::limiter::Limiter;
use crate::limiter::redis::RedisLimiter;
use crate::limiter::{Clock, LocalLimiter};
use crate::metrics::Metrics;
use crate::model::cursor::CursorKey;
use crate::registry::Sites;
use crate::routes::{self, ApiOptions};
use crate::sites::{ConfigSource, SiteDef};
use crate::state::AppState;
use crate::store::Store;

/// How the server runs; [`Options::default`] gives the documented defaults.
#[derive(Clone, Debug)]
pub struct Options {
    /// The public listener (`POST /v1/nudges/preview`). Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// The admin listener. Default `127.0.0.1:9090`.
    pub admin_listen: SocketAddr,
    /// A Redis URL (`redis://host:port`) to share rate limits between instances.
    pub redis_url: Option<String>,
    /// How long a client may take to send a request's head (and how long an idle keep-alive
    /// connection stays open). Default 10 s.
    pub header_read_timeout: Duration,
    /// How long the body may pause between two chunks before 408. Default 10 s.
    pub body_read_timeout: Duration,
    /// How long a whole body may take to arrive before 408, however it trickles. Default 30 s.
    pub body_total_timeout: Duration,
    /// The most connections the public listener keeps open; more are answered 503 and closed
    /// at once. Default 4,096.
    pub max_connections: usize,
    /// How long in-flight requests may take to finish after SIGTERM. Default 30 s.
    pub drain_timeout: Duration,
    /// How often config files are checked for changes. Default 1 s.
    pub reload_interval: Duration,
    /// Serve the benchmark's constant-body route ([`routes::preview::CONSTANT_PATH`]).
    pub constant_route: bool,
    /// The store (SPEC 11): `sqlite:PATH` or `postgres://...`; `None`: no store, the read
    /// endpoints answer 503.
    pub store: Option<String>,
    /// The secret that signs page cursors (at least 32 bytes), the same on every instance;
    /// `None`: a random one (cursors then die with the process).
    pub cursor_secret: Option<Vec<u8>>,
    /// How often sessions past retention plus grace are deleted. Default 1 hour (SPEC 9: at
    /// least once a day).
    pub purge_interval: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            admin_listen: SocketAddr::from(([127, 0, 0, 1], 9090)),
            redis_url: None,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            body_total_timeout: Duration::from_secs(30),
            max_connections: 4096,
            drain_timeout: Duration::from_secs(30),
            reload_interval: Duration::from_secs(1),
            constant_route: false,
            store: None,
            cursor_secret: None,
            purge_interval: Duration::from_secs(3600),
        }
    }
}

/// Why the server could not start.
#[derive(Debug)]
pub enum StartError {
    /// A listener could not bind.
    Bind(SocketAddr, std::io::Error),
    /// The Redis URL does not parse.
    Redis(String),
    /// `docs/openapi.yaml` does not convert (a build defect; its test catches it).
    OpenApi(String),
    /// The store cannot be opened or migrated.
    Store(String),
    /// The cursor secret is unusable.
    Secret(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            StartError::Redis(e) => write!(f, "--redis: {e}"),
            StartError::OpenApi(e) => write!(f, "{e}"),
            StartError::Store(e) => write!(f, "{e}"),
            StartError::Secret(e) => write!(f, "--secret-file: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

/// A running server: both listeners accept connections from [`Server::bind`] on.
pub struct Server {
    state: Arc<AppState>,
    api_addr: SocketAddr,
    admin_addr: SocketAddr,
    api_stop: watch::Sender<bool>,
    admin_stop: watch::Sender<bool>,
    api_task: JoinHandle<()>,
    /// Told when the public listener is closed (the first step of a drain).
    api_closed: oneshot::Receiver<()>,
    admin_task: JoinHandle<()>,
    reloader: Option<JoinHandle<()>>,
    purger: Option<JoinHandle<()>>,
    reload_interval: Duration,
    purge_interval: Duration,
}

impl Server {
    /// Binds both listeners and starts serving: the public listener answers 503 and `/readyz`
    /// 503 until [`Server::load`] has read every site's config once.
    ///
    /// # Errors
    ///
    /// [`StartError`]: a listener cannot bind, the Redis URL is invalid.
    pub async fn bind(
        sites: Vec<SiteDef>,
        options: &Options,
        clock: Arc<dyn Clock>,
    ) -> Result<Server, StartError> {
        let openapi_json = crate::openapi::openapi_json().map_err(StartError::OpenApi)?;
        let metrics = Arc::new(Metrics::new());
        if options.store.is_none()
            && let Some(site) = sites
                .iter()
                .find(|s| matches!(s.source, ConfigSource::Store))
        {
            return Err(StartError::Store(format!(
                "site {:?} has no config file, so its config is managed through the API and kept in the store; start with --store, or give the site a config file",
                site.id
            )));
        }
        let sites = Sites::new(sites);
        let local = LocalLimiter::new(sites.keys(), clock);
        let limiter = match &options.redis_url {
            None => Limiter::Local(local),
            Some(url) => Limiter::Redis(Box::new(
                RedisLimiter::new(url, local, metrics.clone())
                    .map_err(|e| StartError::Redis(e.to_string()))?,
            )),
        };
        let store = match &options.store {
            None => None,
            Some(url) => {
                let store = Store::open(url)
                    .await
                    .map_err(|e| StartError::Store(e.to_string()))?;
                metrics.store_up.set(1);
                tracing::info!(store = %store.url_shown(), "store open, migrations applied");
                Some(store)
            }
        };
        let cursor_key = match &options.cursor_secret {
            Some(secret) => CursorKey::new(secret).map_err(StartError::Secret)?,
            None => {
                if store.is_some() {
                    tracing::warn!(
                        "no --secret-file: page cursors are signed with a random secret; they will not survive a restart or work across instances"
                    );
                }
                CursorKey::random().map_err(StartError::Secret)?
            }
        };
        let state = Arc::new(AppState::new(
            sites,
            limiter,
            metrics,
            openapi_json,
            store,
            cursor_key,
        ));

        let api_listener = bind(options.listen).await?;
        let admin_listener = bind(options.admin_listen).await?;
        let api_addr = local_addr(&api_listener, options.listen)?;
        let admin_addr = local_addr(&admin_listener, options.admin_listen)?;

        let api_router = routes::router(
            state.clone(),
            ApiOptions {
                body_read_timeout: options.body_read_timeout,
                body_total_timeout: options.body_total_timeout,
                constant_route: options.constant_route,
            },
        );
        let admin_router = crate::admin::router(state.clone());
        let (api_stop, api_stopped) = watch::channel(false);
        let (admin_stop, admin_stopped) = watch::channel(false);
        let connections = Arc::new(Semaphore::new(options.max_connections));
        let (api_closing, api_closed) = oneshot::channel();
        let api_task = tokio::spawn(serve(
            api_listener,
            api_router,
            Listening {
                header_read_timeout: options.header_read_timeout,
                drain_timeout: options.drain_timeout,
                connections: Some((connections, state.metrics.clone())),
                closed: Some(api_closing),
            },
            api_stopped,
        ));
        let admin_task = tokio::spawn(serve(
            admin_listener,
            admin_router,
            Listening {
                header_read_timeout: options.header_read_timeout,
                drain_timeout: options.drain_timeout,
                connections: None,
                closed: None,
            },
            admin_stopped,
        ));
        Ok(Server {
            state,
            api_addr,
            admin_addr,
            api_stop,
            admin_stop,
            api_task,
            api_closed,
            admin_task,
            reloader: None,
            purger: None,
            reload_interval: options.reload_interval,
            purge_interval: options.purge_interval,
        })
    }

    /// The public listener's address (with the port the system chose for port 0).
    pub fn api_addr(&self) -> SocketAddr {
        self.api_addr
    }

    /// The admin listener's address.
    pub fn admin_addr(&self) -> SocketAddr {
        self.admin_addr
    }

    /// The shared state (sites, limiter, metrics).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Reads and compiles every site's config once (the server is ready afterwards, whether
    /// each config was valid or not) and starts polling config files for changes.
    pub async fn load(&mut self) {
        let state = self.state.clone();
        let _ = tokio::task::spawn_blocking(move || state.sites.refresh_all(&state.metrics)).await;
        refresh_from_store(&self.state).await;
        let state = self.state.clone();
        let interval = self.reload_interval;
        self.reloader = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                let files = state.clone();
                let _ =
                    tokio::task::spawn_blocking(move || files.sites.refresh_all(&files.metrics))
                        .await;
                refresh_from_store(&state).await;
            }
        }));
        if self.state.store.is_some() {
            let state = self.state.clone();
            let interval = self.purge_interval;
            self.purger = Some(tokio::spawn(async move {
                loop {
                    purge(&state).await;
                    tokio::time::sleep(interval).await;
                }
            }));
        }
    }

    /// Drains (SPEC 7): the public listener stops accepting connections, then `/readyz` turns
    /// 503 (so a 503 there means no new connection is taken), requests in flight finish (at
    /// most the drain timeout), idle connections close; then the admin listener closes.
    pub async fn shutdown(self) {
        tracing::info!("shutting down: draining in-flight requests");
        if let Some(reloader) = &self.reloader {
            reloader.abort();
        }
        if let Some(purger) = &self.purger {
            purger.abort();
        }
        // The listener closes first, so that once `/readyz` answers 503 no new connection is
        // accepted.
        let _ = self.api_stop.send(true);
        let _ = self.api_closed.await;
        self.state.begin_shutdown();
        let _ = self.api_task.await;
        let _ = self.admin_stop.send(true);
        let _ = self.admin_task.await;
        tracing::info!("drained; bye");
    }
}

/// Installs the latest published version of every API-managed site (SPEC 13 "Propagation"); a
/// store that does not answer is logged and tried again at the next poll.
async fn refresh_from_store(state: &AppState) {
    if let Some(store) = &state.store
        && let Err(e) = state.sites.refresh_from_store(store, &state.metrics).await
    {
        state.metrics.store_up.set(0);
        tracing::warn!(error = %e, "cannot read published config versions; serving the ones installed");
    }
}

/// Deletes every site's sessions older than its retention window plus the grace (SPEC 9), with
/// their events and nudges.
pub async fn purge(state: &AppState) {
    let Some(store) = &state.store else {
        return;
    };
    let now = crate::model::time::now_ms();
    for site in state.sites.iter() {
        match store
            .purge(&site.id, site.retention.purge_before_ms(now))
            .await
        {
            Ok(0) => {}
            Ok(n) => {
                state.metrics.purged_sessions.inc_by(n);
                tracing::info!(site = %site.id, sessions = n, "purged sessions past retention");
            }
            Err(e) => {
                tracing::warn!(site = %site.id, error = %e, "purge failed; retried at the next interval")
            }
        }
    }
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, StartError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::Bind(addr, e))
}

fn local_addr(listener: &TcpListener, asked: SocketAddr) -> Result<SocketAddr, StartError> {
    listener
        .local_addr()
        .map_err(|e| StartError::Bind(asked, e))
}

/// How a listener treats its connections.
struct Listening {
    header_read_timeout: Duration,
    drain_timeout: Duration,
    /// The public listener's bound on open connections, and where refusals are counted.
    connections: Option<(Arc<Semaphore>, Arc<Metrics>)>,
    /// Told when the listener is closed, before the connections drain.
    closed: Option<oneshot::Sender<()>>,
}

/// Accepts HTTP/1.1 connections until `stop`, then lets each finish its request in flight. A
/// connection over the bound is answered 503 at once and closed; a request head may take at
/// most [`MAX_HEAD_BYTES`]; hyper's own error answers get a JSON body ([`JsonErrors`]).
async fn serve(
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
