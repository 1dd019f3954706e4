//! The one owner of every background task ([`Tasks`]): the config reloader and each reload's
//! reading and compiling of files (on the blocking pool), the purger, the webhook delivery
//! worker and its attempts, the store's batching tasks, a backtest's replay and page reads. The
//! runtime makes it, hands it down (the store and the request state hold clones) and, after the
//! drain, stops what still runs and awaits every task, so nothing outlives the server: a reload
//! that was reading a config file when SIGTERM came is finished first.
//!
//! A leaf module (tokio and tokio-util only), so that the store, below the runtime, can spawn on
//! it too.

use std::future::Future;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The server's background tasks: one tracker, and the two moments they are told to stop.
#[derive(Clone, Debug, Default)]
pub struct Tasks {
    tracker: TaskTracker,
    /// Cancelled when the drain begins: the pollers (reloader, purger) stop.
    draining: CancellationToken,
    /// Cancelled after the drain, when no request is left: the store's workers stop.
    stopped: CancellationToken,
}

impl Tasks {
    /// A tracker with no task yet.
    pub fn new() -> Tasks {
        Tasks::default()
    }

    /// Spawns a task that runs to its end (a backtest's page read, a store's batch).
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(task)
    }

    /// Runs `work` on the blocking pool (a backtest's replay, a config reload's file reads and
    /// compiles), tracked like the others: the drain waits for it.
    pub fn spawn_blocking<F, T>(&self, work: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.tracker.spawn_blocking(work)
    }

    /// Spawns a poller (the config reloader, the purger): dropped when the drain begins.
    pub fn spawn_poller<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let stop = self.draining.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = task => {}
            }
        });
    }

    /// Spawns a worker that serves requests (the store's group commit and page batcher):
    /// dropped after the drain, when no request is left to serve.
    pub fn spawn_worker<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let stop = self.stopped.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = task => {}
            }
        });
    }

    /// The drain begins: the pollers stop.
    pub fn begin_drain(&self) {
        self.draining.cancel();
    }

    /// After the drain: the pollers and workers stop, and every task is awaited.
    pub async fn stop_and_wait(&self) {
        self.draining.cancel();
        self.stopped.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }

    /// How many tasks are still running.
    pub fn len(&self) -> usize {
        self.tracker.len()
    }

    /// Whether no task is running.
    pub fn is_empty(&self) -> bool {
        self.tracker.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_task_is_awaited_after_the_drain() {
        let tasks = Tasks::new();
        tasks.spawn_poller(std::future::pending());
        tasks.spawn_worker(std::future::pending());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let done = tasks.spawn(async move {
            let _ = rx.await;
            7
        });
        tasks.begin_drain();
        let _ = tx.send(());
        assert_eq!(done.await.unwrap(), 7);
        tasks.stop_and_wait().await;
        assert!(tasks.is_empty());
    }

    #[tokio::test]
    async fn the_drain_waits_for_blocking_work_in_flight() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let tasks = Tasks::new();
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        // Not awaited by its spawner (a reload dropped with its poller at the drain).
        drop(tasks.spawn_blocking(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
        }));
        tasks.stop_and_wait().await;
        assert!(
            done.load(Ordering::SeqCst),
            "the drain returned before the reload ended"
        );
    }
}
