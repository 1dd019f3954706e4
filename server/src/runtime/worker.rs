//! The webhook delivery worker on an instance of its own (`nudge-rules-server worker`,
//! docs/WEBHOOKS.md "Running the worker on its own"): the store, the delivery worker and an admin
//! listener with `/healthz`, `/readyz` and `/metrics`; no public listener, no sites. The API
//! instances then run with `--webhook-worker off`; several workers may run, since claims are
//! taken once across instances (docs/contract/webhooks.md "Many instances"). PostgreSQL only: a SQLite file
//! has one writer, the API instance's ([`refuse_sqlite`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::listen::{Listening, bind, local_addr, serve};
use super::{StartError, delivery_of};
use crate::clock::Clock;
use crate::config::ServeConfig;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::tasks::Tasks;

/// A running worker: its admin listener answers from [`Worker::start`] on.
pub struct Worker {
    admin_addr: SocketAddr,
    admin_stop: watch::Sender<bool>,
    admin_task: JoinHandle<()>,
    draining: Arc<AtomicBool>,
    tasks: Tasks,
}

/// Why `store` cannot be shared between an API instance and a worker, if it cannot: a SQLite
/// file has one writer, which the API instance's writing task holds from job to job (its
/// group commits and the worker's visits take turns on it, `store/group.rs`); a second
/// process writing the file would wait for it, or fail, on every write.
///
/// # Errors
///
/// The refusal, naming `flag` (the option that asked for the split) and what to do instead.
pub fn refuse_sqlite(store: Option<&str>, flag: &str) -> Result<(), StartError> {
    match store {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => Ok(()),
        Some(url) if url.starts_with("sqlite:") => Err(StartError::Webhooks(format!(
            "{flag} needs a PostgreSQL store: a SQLite store ({}) is one process's file, whose one writer is the API instance's, so that instance delivers its webhooks itself (--webhook-worker on, the default); to run the worker on an instance of its own, give it and the API instances a store at postgres://...",
            url.chars().take(80).collect::<String>()
        ))),
        Some(url) => Err(StartError::Store(format!(
            "--store {:?}: expected postgres://...",
            url.chars().take(40).collect::<String>()
        ))),
        None => Err(StartError::Store(format!(
            "{flag} needs --store postgres://..., the store the API instances write"
        ))),
    }
}

impl Worker {
    /// Opens `options.store` (PostgreSQL), starts the delivery worker with the webhook options
    /// (`webhook_delays`, `webhook_allow_http`, `webhook_allow_private`) and the admin listener
    /// on `options.admin_listen`; `clock` is the worker's time.
    ///
    /// # Errors
    ///
    /// [`StartError`]: no store or a SQLite one ([`refuse_sqlite`]), a store that cannot be
    /// opened, webhook options that do not build, an admin address that cannot bind.
    pub async fn start(options: &ServeConfig, clock: Arc<dyn Clock>) -> Result<Worker, StartError> {
        refuse_sqlite(options.store.as_deref(), "the worker")?;
        let url = options.store.as_deref().unwrap_or_default();
        let tasks = Tasks::new();
        let metrics = Arc::new(Metrics::new());
        let store = Store::open_with(url, &tasks)
            .await
            .map_err(|e| StartError::Store(e.to_string()))?;
        metrics.store_up.set(1);
        tracing::info!(store = %store.url_shown(), "webhook worker: store open, migrations applied");
        let delivery = Arc::new(delivery_of(options, clock)?);
        let admin_listener = bind(options.admin_listen).await?;
        let admin_addr = local_addr(&admin_listener, options.admin_listen)?;
        let draining = Arc::new(AtomicBool::new(false));
        let router =
            crate::http::admin::worker_router(store.clone(), metrics.clone(), draining.clone());
        let (admin_stop, admin_stopped) = watch::channel(false);
        let admin_task = tokio::spawn(serve(
            admin_listener,
            router,
            Listening {
                header_read_timeout: options.header_read_timeout,
                drain_timeout: options.drain_timeout,
                connections: None,
                closed: None,
            },
            admin_stopped,
        ));
        tasks.spawn_poller(delivery.run(store, tasks.clone(), metrics));
        Ok(Worker {
            admin_addr,
            admin_stop,
            admin_task,
            draining,
            tasks,
        })
    }

    /// The admin listener's address (with the port the system chose for port 0).
    pub fn admin_addr(&self) -> SocketAddr {
        self.admin_addr
    }

    /// Stops: `/readyz` turns 503, the worker claims nothing more (attempts in flight are
    /// dropped; their claims end with the lease and they are due again, on another worker or
    /// after a restart), every task is awaited, then the admin listener closes.
    pub async fn shutdown(self) {
        tracing::info!("webhook worker: shutting down");
        self.draining.store(true, Ordering::SeqCst);
        self.tasks.stop_and_wait().await;
        let _ = self.admin_stop.send(true);
        let _ = self.admin_task.await;
        tracing::info!("webhook worker: stopped; bye");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_postgresql_is_shared_with_a_worker() {
        assert!(refuse_sqlite(Some("postgres://u@h/db"), "worker").is_ok());
        assert!(refuse_sqlite(Some("postgresql://u@h/db"), "worker").is_ok());
        let e = refuse_sqlite(Some("sqlite:data/nudges.db"), "--webhook-worker off").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("--webhook-worker off needs a PostgreSQL store"),
            "{text}"
        );
        assert!(text.contains("sqlite:data/nudges.db"), "{text}");
        let e = refuse_sqlite(None, "nudge-rules-server worker").unwrap_err();
        assert!(e.to_string().contains("needs --store postgres://"), "{e}");
        assert!(refuse_sqlite(Some("mysql://x"), "worker").is_err());
    }
}
