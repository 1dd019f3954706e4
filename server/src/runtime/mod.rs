//! The two listeners and the server's lifecycle: bind (serving 503 until loaded), load every
//! site once (ready), poll configs for reloads, run the webhook delivery worker (unless
//! `--webhook-worker off`), and drain on shutdown (docs/contract/server.md "Operations"). Every background
//! task is spawned on the server's one [`Tasks`], awaited after the drain. [`Worker`] is the
//! delivery worker on an instance of its own.

pub mod conn;
mod listen;
mod sites_file;
mod worker;

pub use worker::{Worker, refuse_sqlite};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinHandle;

use crate::app::delivery::Delivery;
use crate::app::state::AppState;
use crate::clock::Clock;
use crate::config::ServeConfig;
use crate::domain::cursor::CursorKey;
use crate::domain::webhook::{Policy, Schedule};
use crate::http::{self, pipeline::ApiOptions};
use crate::limiter::Limiter;
use crate::limiter::LocalLimiter;
use crate::limiter::redis::RedisLimiter;
use crate::metrics::Metrics;
use crate::sites::def::{ConfigSource, SiteDef};
use crate::sites::registry::Sites;
use crate::store::Store;
use crate::tasks::Tasks;
use listen::{Listening, bind, local_addr, serve};

/// Why the server could not start.
#[derive(Debug)]
pub enum StartError {
    /// A listener could not bind.
    Bind(SocketAddr, std::io::Error),
    /// The Redis URL does not parse.
    Redis(String),
    /// `docs/openapi.yaml` does not convert (a build defect; its test catches it).
    OpenApi(String),
    /// The webhook options are unusable (a schedule, the HTTP client).
    Webhooks(String),
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
            StartError::Webhooks(e) => write!(f, "webhooks: {e}"),
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
    /// Every background task: the reloader and purger, the store's, the backtests'.
    tasks: Tasks,
    reload_interval: Duration,
    purge_interval: Duration,
    /// The sites file, reloaded at the reload interval ([`ServeConfig::sites_file`]).
    sites_file: Option<sites_file::SitesFile>,
    /// Whether this instance runs the delivery worker ([`ServeConfig::webhook_worker`]).
    webhook_worker: bool,
}

impl Server {
    /// Binds both listeners and starts serving: the public listener answers 503 and `/readyz`
    /// 503 until [`Server::load`] has read every site's config once.
    ///
    /// # Errors
    ///
    /// [`StartError`]: a listener cannot bind, the Redis URL is invalid, the store cannot be
    /// opened, `webhook_worker` is off on a store that is not PostgreSQL ([`refuse_sqlite`]).
    pub async fn bind(
        sites: Vec<SiteDef>,
        options: &ServeConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Server, StartError> {
        let openapi_json = crate::http::openapi::openapi_json().map_err(StartError::OpenApi)?;
        let metrics = Arc::new(Metrics::new());
        let tasks = Tasks::new();
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
        if !options.webhook_worker && options.store.is_some() {
            refuse_sqlite(options.store.as_deref(), "--webhook-worker off")?;
        }
        let sites = Sites::new(sites);
        let local = LocalLimiter::new(sites.keys(), Arc::clone(&clock));
        let limiter = match &options.redis_url {
            None => Limiter::Local(local),
            Some(url) => Limiter::Redis(Box::new(
                RedisLimiter::new(url, options.redis_timeout, local, metrics.clone())
                    .map_err(|e| StartError::Redis(e.to_string()))?,
            )),
        };
        let store = match &options.store {
            None => None,
            Some(url) => {
                let store = Store::open_with(url, &tasks)
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
        let delivery = Arc::new(delivery_of(options, Arc::clone(&clock))?);
        let state = Arc::new(AppState::new(
            sites,
            limiter,
            clock,
            metrics,
            openapi_json,
            store,
            cursor_key,
            tasks.clone(),
            delivery,
        ));

        let api_listener = bind(options.listen).await?;
        let admin_listener = bind(options.admin_listen).await?;
        let api_addr = local_addr(&api_listener, options.listen)?;
        let admin_addr = local_addr(&admin_listener, options.admin_listen)?;

        let api_router = http::router(
            state.clone(),
            ApiOptions {
                body_read_timeout: options.body_read_timeout,
                body_total_timeout: options.body_total_timeout,
                constant_route: options.constant_route,
            },
        );
        let admin_router = crate::http::admin::router(state.clone());
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
            tasks,
            reload_interval: options.reload_interval,
            purge_interval: options.purge_interval,
            sites_file: options.sites_file.clone().map(sites_file::SitesFile::new),
            webhook_worker: options.webhook_worker,
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
        let _ = self
            .tasks
            .spawn_blocking(move || state.sites().refresh_all(&state.metrics))
            .await;
        refresh_from_store(&self.state).await;
        let state = self.state.clone();
        let interval = self.reload_interval;
        let mut watched = self.sites_file.take();
        self.tasks.spawn_poller(async move {
            loop {
                tokio::time::sleep(interval).await;
                if let Some(mut file) = watched.take() {
                    let has_store = state.store.is_some();
                    let metrics = state.metrics.clone();
                    if let Ok((file, defs)) = state
                        .tasks
                        .spawn_blocking(move || {
                            let defs = file.changed(has_store, &metrics);
                            (file, defs)
                        })
                        .await
                    {
                        watched = Some(file);
                        if let Some(defs) = defs {
                            sites_file::apply(&state, defs).await;
                        }
                    }
                }
                let files = state.clone();
                let _ = state
                    .tasks
                    .spawn_blocking(move || files.sites().refresh_all(&files.metrics))
                    .await;
                refresh_from_store(&state).await;
            }
        });
        if let Some(store) = &self.state.store {
            if self.webhook_worker {
                let worker = Arc::clone(&self.state.delivery).run(
                    store.clone(),
                    self.tasks.clone(),
                    Arc::clone(&self.state.metrics),
                );
                self.tasks.spawn_poller(worker);
            }
            let state = self.state.clone();
            let interval = self.purge_interval;
            self.tasks.spawn_poller(async move {
                loop {
                    purge(&state).await;
                    tokio::time::sleep(interval).await;
                }
            });
        }
    }

    /// Drains (docs/contract/server.md): the public listener stops accepting connections, then `/readyz` turns
    /// 503 (so a 503 there means no new connection is taken), requests in flight finish (at
    /// most the drain timeout), idle connections close; then the admin listener closes.
    pub async fn shutdown(self) {
        tracing::info!("shutting down: draining in-flight requests");
        self.tasks.begin_drain();
        // The listener closes first, so that once `/readyz` answers 503 no new connection is
        // accepted.
        let _ = self.api_stop.send(true);
        let _ = self.api_closed.await;
        self.state.begin_shutdown();
        let _ = self.api_task.await;
        let _ = self.admin_stop.send(true);
        let _ = self.admin_task.await;
        // No request is left: the store's workers stop, and every task is awaited.
        self.tasks.stop_and_wait().await;
        tracing::info!("drained; bye");
    }
}

/// The delivery side of webhooks from `options` (the retry ladder, the URL policy), reading
/// `clock`.
///
/// # Errors
///
/// [`StartError::Webhooks`]: a schedule of too many delays, no TLS roots for the client.
fn delivery_of(options: &ServeConfig, clock: Arc<dyn Clock>) -> Result<Delivery, StartError> {
    let schedule = match &options.webhook_delays {
        Some(delays) => {
            Schedule::new(delays.clone()).map_err(|e| StartError::Webhooks(e.to_string()))?
        }
        None => Schedule::default(),
    };
    let policy = Policy {
        allow_http: options.webhook_allow_http,
        allow_private: options.webhook_allow_private.clone(),
    };
    Delivery::new(policy, schedule, clock).map_err(StartError::Webhooks)
}

/// Installs the latest published version of every API-managed site (docs/contract/versions.md "Propagation"); a
/// store that does not answer is logged and tried again at the next poll.
async fn refresh_from_store(state: &AppState) {
    if let Some(store) = &state.store
        && let Err(e) = state
            .sites()
            .refresh_from_store(store, &state.metrics)
            .await
    {
        state.metrics.store_up.set(0);
        tracing::warn!(error = %e, "cannot read published config versions; serving the ones installed");
    }
}

/// Deletes every site's sessions older than its retention window plus the grace (docs/contract/read-api.md), with
/// their events and nudges.
pub async fn purge(state: &AppState) {
    let Some(store) = &state.store else {
        return;
    };
    let now = state.clock.now_ms();
    let webhooks_before = now.saturating_sub(crate::app::webhooks::RECOVER_WINDOW_MS);
    if let Err(e) = store.purge_webhooks(webhooks_before).await {
        tracing::warn!(error = %e, "purge of webhook messages failed; retried at the next interval");
    }
    for site in state.sites().iter() {
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

/// SIGTERM or SIGINT (Ctrl-C), listened for from the start: a signal during loading drains
/// too, instead of killing the process.
pub struct Termination {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Termination {
    /// Listens for both signals from now on.
    pub fn listen() -> Termination {
        Termination {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    /// Waits for the next of them.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some(term) = &mut self.term {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
