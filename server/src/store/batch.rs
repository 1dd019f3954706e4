//! List pages of concurrent requests read together (PostgreSQL): `GET /v1/sessions`' pages
//! ([`SessionPages`]) and `GET /v1/nudges`' pages without filters ([`NudgePages`]).
//!
//! A page of a list is one short index walk, and on PostgreSQL most of its cost
//! was the round trip around it, not the walk: the query sent over the socket and a database
//! process woken, the executor set up and torn down, the rows sent back and the server woken.
//! So the list pages asked for at the same moment are read by one query
//! ([`queries::postgres::list_session_pages`], [`queries::postgres::list_nudge_pages`]): the
//! requests' parameters go in as arrays, each row comes back marked with its request.
//!
//! A task takes the first request waiting, then every request already queued behind it, up to
//! [`MAX_BATCH_PAGES`], and reads them on a leased connection while it goes on collecting
//! the next batch; at most [`BATCHES_IN_FLIGHT`] batches are read at once, and requests that
//! arrive while all of them are out wait for the next. A lone request is read by the plain
//! page query ([`queries::postgres::list_sessions`], [`queries::postgres::list_nudges`]), so
//! an idle server answers as fast as before; under load the batches grow by themselves.
//!
//! Each request gets its own page, exactly what it would have read alone: the same keyset walk,
//! in the same snapshot as the others of its batch. A failed batch fails each of its requests
//! with the same [`StoreError`] (a 503). A request whose client left before its batch formed
//! is not read.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sqlx::PgConnection;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::StoreError;
use super::lease::Leases;
use super::queries::{self, NudgePageQuery, SessionPageQuery};
use crate::domain::derive::{NudgeSummary, SessionSummary};
use crate::tasks::Tasks;

/// Most list pages read by one query.
pub const MAX_BATCH_PAGES: usize = 32;
/// Batches read at once, each on its own connection. With 1, PostgreSQL did the least work
/// per page but the pages waited for each other; 2 and 4 answered about as many pages per
/// second (2 cores shared by wrk, the server and PostgreSQL), and 2 makes the larger batches.
pub const BATCHES_IN_FLIGHT: usize = 2;
/// Requests that may wait for a batch before senders wait too.
const QUEUE: usize = 1024;

/// A page as read: its rows, and the walk revision read with them (`None` for an empty page;
/// queries/walks.rs).
pub(crate) type PageRead<R> = (Vec<R>, Option<i64>);

/// A read of pages on a connection.
type Reading<'c, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'c>>;

/// A list whose pages are read in batches: its request, its rows, and its two queries.
pub(crate) trait PageKind: 'static {
    /// One request's page, as asked.
    type Query: Send + Sync + 'static;
    /// A row of a page.
    type Row: Send + 'static;
    /// A lone request's page: the plain page query.
    fn read_one<'c>(
        conn: &'c mut PgConnection,
        page: &'c Self::Query,
    ) -> Reading<'c, PageRead<Self::Row>>;
    /// Several requests' pages in one query, one per request, in their order.
    fn read_many<'c>(
        conn: &'c mut PgConnection,
        pages: &'c [Self::Query],
    ) -> Reading<'c, Vec<PageRead<Self::Row>>>;
}

/// `GET /v1/sessions`' pages.
pub(crate) enum Sessions {}

impl PageKind for Sessions {
    type Query = SessionPageQuery;
    type Row = SessionSummary;
    fn read_one<'c>(
        conn: &'c mut PgConnection,
        page: &'c SessionPageQuery,
    ) -> Reading<'c, PageRead<SessionSummary>> {
        let (scope, window, after) = (&page.scope, &page.window, page.after());
        Box::pin(queries::postgres::list_sessions(
            conn, scope, window, after, page.limit,
        ))
    }
    fn read_many<'c>(
        conn: &'c mut PgConnection,
        pages: &'c [SessionPageQuery],
    ) -> Reading<'c, Vec<PageRead<SessionSummary>>> {
        Box::pin(queries::postgres::list_session_pages(conn, pages))
    }
}

/// `GET /v1/nudges`' pages without a `session_id` or `type` filter.
pub(crate) enum Nudges {}

impl PageKind for Nudges {
    type Query = NudgePageQuery;
    type Row = NudgeSummary;
    fn read_one<'c>(
        conn: &'c mut PgConnection,
        page: &'c NudgePageQuery,
    ) -> Reading<'c, PageRead<NudgeSummary>> {
        let (scope, window, after) = (&page.scope, &page.window, page.after());
        let filter = &page.filter;
        Box::pin(queries::postgres::list_nudges(
            conn, scope, window, filter, after, page.limit,
        ))
    }
    fn read_many<'c>(
        conn: &'c mut PgConnection,
        pages: &'c [NudgePageQuery],
    ) -> Reading<'c, Vec<PageRead<NudgeSummary>>> {
        Box::pin(queries::postgres::list_nudge_pages(conn, pages))
    }
}

/// The batching task of `GET /v1/sessions`' pages.
pub(crate) type SessionPages = Pages<Sessions>;
/// The batching task of `GET /v1/nudges`' unfiltered pages.
pub(crate) type NudgePages = Pages<Nudges>;

/// One request and where its page goes.
struct Job<K: PageKind> {
    page: K::Query,
    reply: oneshot::Sender<Result<PageRead<K::Row>, StoreError>>,
}

/// The handle of a batching task: cheap to clone.
pub(crate) struct Pages<K: PageKind> {
    jobs: mpsc::Sender<Job<K>>,
}

impl<K: PageKind> Clone for Pages<K> {
    fn clone(&self) -> Self {
        Pages {
            jobs: self.jobs.clone(),
        }
    }
}

impl<K: PageKind> std::fmt::Debug for Pages<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages").finish_non_exhaustive()
    }
}

impl<K: PageKind> Pages<K> {
    /// Starts the batching task, reading on `reader`. Must be called inside a Tokio runtime;
    /// the task ends when the last handle is dropped or `tasks` stops its workers.
    pub(crate) fn start(reader: Arc<Leases<sqlx::Postgres>>, tasks: &Tasks) -> Pages<K> {
        let (jobs, queue) = mpsc::channel(QUEUE);
        tasks.spawn_worker(run::<K>(reader, queue, tasks.clone()));
        Pages { jobs }
    }

    /// The page `page` asks for, read as part of the next batch.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the batch's read failed or the task stopped.
    pub(crate) async fn read(&self, page: K::Query) -> Result<PageRead<K::Row>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job { page, reply };
        let stopped = || StoreError::new("the store's list reader stopped");
        self.jobs.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// The pages of `pages` on a leased connection of `reader` (kept for the next read when the
/// read succeeds, `lease.rs`): a lone one by the plain page query.
async fn read_pages<K: PageKind>(
    reader: &Leases<sqlx::Postgres>,
    pages: &[K::Query],
) -> Result<Vec<PageRead<K::Row>>, StoreError> {
    let mut lease = reader.take().await?;
    let read = match pages {
        [page] => K::read_one(lease.connection(), page)
            .await
            .map(|page| vec![page]),
        _ => K::read_many(lease.connection(), pages).await,
    };
    if read.is_ok() {
        lease.finish();
    }
    read
}

async fn run<K: PageKind>(
    reader: Arc<Leases<sqlx::Postgres>>,
    mut queue: mpsc::Receiver<Job<K>>,
    tasks: Tasks,
) {
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
            match read_pages::<K>(&reader, &pages).await {
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
