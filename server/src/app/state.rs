//! What every request handler shares: the sites, the limiter, the clock, the metrics and the
//! server's lifecycle (loading, ready, shutting down).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwap;

use crate::clock::Clock;
use crate::domain::cursor::CursorKey;
use crate::limiter::Limiter;
use crate::metrics::Metrics;
use crate::sites::registry::Sites;
use crate::store::Store;
use crate::tasks::Tasks;

/// The state shared by the public and the admin listener.
pub struct AppState {
    /// The sites and their configs: replaced whole when the sites file is reloaded.
    sites: ArcSwap<Sites>,
    /// The rate limiter (it reads [`AppState::clock`] too).
    pub limiter: Limiter,
    /// The server's one clock (`clock.rs`): every "now" of a request and of the server's
    /// background work is read from it and passed down.
    pub clock: Arc<dyn Clock>,
    /// The Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// The served API document, `docs/openapi.yaml` as JSON.
    pub openapi_json: String,
    /// The store of sessions and nudge events (docs/contract/store.md); without one, the read endpoints
    /// answer 503.
    pub store: Option<Store>,
    /// The key that signs page cursors (docs/contract/read-api.md "Pagination").
    pub cursor_key: CursorKey,
    /// The server's background tasks: a request's own tasks (a backtest's) are spawned here,
    /// so the drain awaits them.
    pub tasks: Tasks,
    /// The runtime config answers made so far (docs/contract/storefront.md), one per site, mode and version.
    pub runtime_cache: crate::app::runtime_config::RuntimeCache,
    /// Webhook delivery (docs/contract/webhooks.md): the URL policy, the schedule, the client; its worker runs
    /// when the server has a store.
    pub delivery: Arc<crate::app::delivery::Delivery>,
    /// Set once every site was loaded; a site never goes back to loading.
    loaded: AtomicBool,
    shutting_down: AtomicBool,
}

/// Why the public listener answers 503.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// Some site's config has not been read yet.
    Loading,
    /// SIGTERM arrived: the server drains.
    ShuttingDown,
}

impl AppState {
    /// The state of a server that has loaded nothing yet.
    #[allow(clippy::too_many_arguments)] // one per shared part
    pub fn new(
        sites: Sites,
        limiter: Limiter,
        clock: Arc<dyn Clock>,
        metrics: Arc<Metrics>,
        openapi_json: String,
        store: Option<Store>,
        cursor_key: CursorKey,
        tasks: Tasks,
        delivery: Arc<crate::app::delivery::Delivery>,
    ) -> AppState {
        AppState {
            sites: ArcSwap::from_pointee(sites),
            limiter,
            clock,
            metrics,
            openapi_json,
            store,
            cursor_key,
            tasks,
            runtime_cache: Default::default(),
            delivery,
            loaded: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
        }
    }

    /// `None` when requests are served; otherwise why not (docs/contract/server.md: 503 until every site's
    /// config loaded once, and while shutting down).
    pub fn unavailable(&self) -> Option<Unavailable> {
        if self.shutting_down.load(Ordering::SeqCst) {
            Some(Unavailable::ShuttingDown)
        } else if self.loaded.load(Ordering::Relaxed) {
            None
        } else if self.sites().all_loaded() {
            self.loaded.store(true, Ordering::Relaxed);
            None
        } else {
            Some(Unavailable::Loading)
        }
    }

    /// The sites being served now. A request keeps the registry it started with, so it is
    /// answered wholly under one sites file.
    pub fn sites(&self) -> Arc<Sites> {
        self.sites.load_full()
    }

    /// Serves `sites` from now on (a reloaded sites file, docs/contract/server.md).
    pub fn replace_sites(&self, sites: Sites) {
        self.sites.store(Arc::new(sites));
    }

    /// Marks the server as draining: `/readyz` and new public requests answer 503.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }
}
