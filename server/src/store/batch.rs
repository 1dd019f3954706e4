//! List pages of concurrent requests read together (PostgreSQL).
//!
//! A page of `GET /v1/sessions` is one short index walk, and on PostgreSQL most of its cost
//! was the round trip around it, not the walk: the query sent over the socket and a database
//! process woken, the executor set up and torn down, the rows sent back and the server woken.
//! So the list pages asked for at the same moment are read by one query
//! ([`queries::postgres::list_session_pages`]): the requests' parameters go in as arrays,
//! each row comes back marked with its request.
//!
//! A task takes the first request waiting, then every request already queued behind it, up to
//! [`MAX_BATCH_PAGES`], and reads them on a leased connection while it goes on collecting
//! the next batch; at most [`BATCHES_IN_FLIGHT`] batches are read at once, and requests that
//! arrive while all of them are out wait for the next. A lone request is read by the plain
//! page query ([`queries::postgres::list_sessions`]), so an idle server answers as fast as
//! before; under load the batches grow by themselves.
//!
//! Each request gets its own page, exactly what it would have read alone: the same keyset walk,
//! in the same snapshot as the others of its batch. A failed batch fails each of its requests
//! with the same [`StoreError`] (a 503). A request whose client left before its batch formed
//! is not read.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use super::StoreError;
use super::lease::Leases;
use super::queries::{self, SessionPageQuery};
use crate::domain::derive::SessionSummary;
use crate::tasks::Tasks;

/// Most list pages read by one query.
pub const MAX_BATCH_PAGES: usize = 32;
/// Batches read at once, each on its own connection. With 1, PostgreSQL did the least work
/// per page but the pages waited for each other; 2 and 4 answered about as many pages per
/// second (2 cores shared by wrk, the server and PostgreSQL), and 2 makes the larger batches.
pub const BATCHES_IN_FLIGHT: usize = 2;
/// Requests that may wait for a batch before senders wait too.
const QUEUE: usize = 1024;

/// A page as read: its sessions, and the walk revision read with them (`None` for an empty
/// page; queries/walks.rs).
pub(crate) type PageRead = (Vec<SessionSummary>, Option<i64>);

/// One request and where its page goes.
struct Job {
    page: SessionPageQuery,
    reply: oneshot::Sender<Result<PageRead, StoreError>>,
}

/// The handle of the batching task: cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct SessionPages {
    jobs: mpsc::Sender<Job>,
}

impl SessionPages {
    /// Starts the batching task, reading on `reader`. Must be called inside a Tokio runtime;
    /// the task ends when the last handle is dropped or `tasks` stops its workers.
    pub(crate) fn start(reader: Arc<Leases<sqlx::Postgres>>, tasks: &Tasks) -> SessionPages {
        let (jobs, queue) = mpsc::channel(QUEUE);
        tasks.spawn_worker(run(reader, queue, tasks.clone()));
        SessionPages { jobs }
    }

    /// The page `page` asks for, read as part of the next batch.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the batch's read failed or the task stopped.
    pub(crate) async fn read(&self, page: SessionPageQuery) -> Result<PageRead, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job { page, reply };
        let stopped = || StoreError::new("the store's list reader stopped");
        self.jobs.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

async fn run(reader: Arc<Leases<sqlx::Postgres>>, mut queue: mpsc::Receiver<Job>, tasks: Tasks) {
    let in_flight = Arc::new(Semaphore::new(BATCHES_IN_FLIGHT));
    while let Some(first) = queue.recv().await {
        // Requests that arrive while every batch is out queue up for this one.
        let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
            return;
        };
        let mut jobs = vec![first];
        while jobs.len() < MAX_BATCH_PAGES {
            match queue.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        jobs.retain(|job| !job.reply.is_closed());
        if jobs.is_empty() {
            continue;
        }
        let reader = Arc::clone(&reader);
        tasks.spawn(async move {
            let _permit = permit;
            let (pages, replies): (Vec<_>, Vec<_>) =
                jobs.into_iter().map(|job| (job.page, job.reply)).unzip();
            let read = async {
                match pages.as_slice() {
                    // Alone: the plain page query, without the arrays.
                    [page] => {
                        let (scope, window, limit) = (&page.scope, &page.window, page.limit);
                        let after = page.after();
                        leased!(
                            reader,
                            queries::postgres::list_sessions(scope, window, after, limit)
                        )
                        .map(|page| vec![page])
                    }
                    _ => leased!(reader, queries::postgres::list_session_pages(&pages)),
                }
            };
            match read.await {
                Ok(read) => {
                    for (reply, page) in replies.into_iter().zip(read) {
                        let _ = reply.send(Ok(page));
                    }
                }
                Err(e) => {
                    for reply in replies {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
        });
    }
}
