//! The writing task of the SQLite store (docs/contract/relay.md "Durable", docs/contract/webhooks.md "Delivery"): SQLite has one
//! writer, and each commit syncs the WAL to disk, so the writes that come all the time go
//! through one task, which holds the one writing connection while they keep coming:
//!
//! - **Group commit.** Batches of events arriving together (16 relay connections) are written
//!   several per transaction: each request still gets its answer only after the commit that
//!   holds its batch, and a batch is stored whole or not at all. The task takes the first batch
//!   waiting, then every batch already queued behind it, up to [`MAX_GROUP_BATCHES`] batches or
//!   [`MAX_GROUP_EVENTS`] events, and commits them together. If that transaction fails, each
//!   batch of the group is tried again alone, so one batch the database refuses never takes
//!   the others down with it.
//! - **The webhook worker's visits** (`app/delivery.rs`): its attempts' results and its claims,
//!   in a transaction of their own whose commit need not reach the disk (at-least-once allows
//!   losing one), between two groups.
//!
//! The connection stays with the task from one job to the next while jobs are queued, at most
//! [`HOLD`] at a time, then goes back to the pool so that the other writes (the API's, the
//! purge's, imports) get their turn. Each handover costs a turn of the connection's thread
//! (sqlx tests a connection as it comes back to the pool); with back-to-back groups and a visit
//! between two of them, that was a tenth of the writer's time under the relay's load
//! (docs/PERFORMANCE.md, "Webhook figures").

use std::time::{Duration, Instant};

use sqlx::SqlitePool;
use sqlx::pool::PoolConnection;
use tokio::sync::{mpsc, oneshot};

use super::queries::Claim;
use super::{InsertOutcome, StoreError, queries};
use crate::domain::event::{NewEvent, Scope};
use crate::domain::webhook::attempt::{AttemptResult, Due};
use crate::tasks::Tasks;

/// Most batches in one transaction.
pub const MAX_GROUP_BATCHES: usize = 32;
/// Most events in one transaction (a group stops growing once it has this many).
pub const MAX_GROUP_EVENTS: usize = 10_000;
/// Jobs that may wait for the writer before senders wait too.
const QUEUE: usize = 1024;
/// The longest the task keeps the connection while jobs keep coming: another writer waits at
/// most this and one job.
pub const HOLD: Duration = Duration::from_millis(50);

/// One batch of events: its scope, events, reception time (Unix ms) and the session age limit.
type Batch = (Scope, Vec<NewEvent>, i64, Option<i64>);

/// A visit of the webhook worker: attempts' results to write, then a claim of due deliveries
/// (`None`: none).
#[derive(Debug)]
pub(crate) struct Visit {
    /// The attempts' results (docs/contract/webhooks.md "Delivery").
    pub(crate) results: Vec<AttemptResult>,
    /// Failures since the last success (ms) that disable an endpoint (the 5-day rule).
    pub(crate) disable_after_ms: i64,
    /// The claim to make after the results.
    pub(crate) claim: Option<Claim>,
}

/// What the endpoints the results disabled and the deliveries claimed are, for a visit.
pub(crate) type Visited = (Vec<String>, Vec<Due>);

/// One job and where its answer goes.
enum Job {
    Batch(Batch, oneshot::Sender<Result<InsertOutcome, StoreError>>),
    Visit(Visit, oneshot::Sender<Result<Visited, StoreError>>),
}

/// The handle of the writing task: cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct GroupWriter {
    jobs: mpsc::Sender<Job>,
}

impl GroupWriter {
    /// Starts the writing task on `writer` (the store's one writing connection). Must be called
    /// inside a Tokio runtime; the task ends when the last handle is dropped or `tasks` stops
    /// its workers.
    pub(crate) fn start(writer: SqlitePool, tasks: &Tasks) -> GroupWriter {
        let (jobs, queue) = mpsc::channel(QUEUE);
        tasks.spawn_worker(run(writer, queue));
        GroupWriter { jobs }
    }

    /// Stores one batch as part of the next group; returns after the commit.
    pub(crate) async fn insert(
        &self,
        scope: &Scope,
        events: &[NewEvent],
        received_at_ms: i64,
        max_session_age_ms: Option<i64>,
    ) -> Result<InsertOutcome, StoreError> {
        let (reply, answer) = oneshot::channel();
        let batch = (
            scope.clone(),
            events.to_vec(),
            received_at_ms,
            max_session_age_ms,
        );
        self.jobs
            .send(Job::Batch(batch, reply))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Makes `visit` between two groups; returns after its commit.
    pub(crate) async fn visit(&self, visit: Visit) -> Result<Visited, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::Visit(visit, reply))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::new("the store's writer stopped")
}

async fn run(writer: SqlitePool, mut queue: mpsc::Receiver<Job>) {
    // A job taken from the queue while gathering a group, done after it.
    let mut next: Option<Job> = None;
    loop {
        let first = match next.take() {
            Some(job) => job,
            None => match queue.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        let mut conn = match writer.acquire().await {
            Ok(conn) => conn,
            Err(e) => {
                fail(first, &StoreError::from(e));
                continue;
            }
        };
        let held = Instant::now();
        let mut job = Some(first);
        while let Some(current) = job.take() {
            let usable = match current {
                Job::Visit(visit, reply) => {
                    let (answer, usable) = make_visit(&mut conn, &visit).await;
                    let _ = reply.send(answer);
                    usable
                }
                Job::Batch(batch, reply) => {
                    let mut events = batch.1.len();
                    let mut batches = vec![(batch, reply)];
                    while batches.len() < MAX_GROUP_BATCHES && events < MAX_GROUP_EVENTS {
                        match queue.try_recv() {
                            Ok(Job::Batch(batch, reply)) => {
                                events += batch.1.len();
                                batches.push((batch, reply));
                            }
                            Ok(visit) => {
                                next = Some(visit);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    write_group(&mut conn, batches).await;
                    true
                }
            };
            if !usable || held.elapsed() >= HOLD {
                break;
            }
            job = next.take().or_else(|| queue.try_recv().ok());
        }
    }
}

/// Answers `job` with `error`.
fn fail(job: Job, error: &StoreError) {
    match job {
        Job::Batch(_, reply) => {
            let _ = reply.send(Err(error.clone()));
        }
        Job::Visit(_, reply) => {
            let _ = reply.send(Err(error.clone()));
        }
    }
}

/// Writes a group of batches in one transaction, or each alone if that fails.
async fn write_group(
    conn: &mut PoolConnection<sqlx::Sqlite>,
    batches: Vec<(Batch, oneshot::Sender<Result<InsertOutcome, StoreError>>)>,
) {
    let (batches, replies): (Vec<_>, Vec<_>) = batches.into_iter().unzip();
    let borrowed: Vec<(&Scope, &[NewEvent], i64, Option<i64>)> = batches
        .iter()
        .map(|(scope, events, at, age)| (scope, events.as_slice(), *at, *age))
        .collect();
    let written = queries::sqlite::insert_groups(&mut **conn, &borrowed).await;
    match written {
        Ok(outcomes) => {
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                let _ = reply.send(Ok(outcome));
            }
        }
        Err(e) if batches.len() == 1 => {
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
        Err(_) => {
            // Each batch alone: the one the database refuses fails, the others are stored.
            for (single, reply) in borrowed.iter().zip(replies) {
                let result = queries::sqlite::insert_groups(&mut **conn, &[*single])
                    .await
                    .and_then(|mut outcomes| {
                        outcomes.pop().ok_or_else(|| StoreError::new("no outcome"))
                    });
                let _ = reply.send(result);
            }
        }
    }
}

/// Makes `visit` on `conn` with `synchronous` NORMAL (set by its `BEGIN`), then sets it back to
/// FULL. The answer, and whether the connection may go on: one that cannot be set back is
/// closed, so no acknowledged write ever commits on it relaxed.
async fn make_visit(
    conn: &mut PoolConnection<sqlx::Sqlite>,
    visit: &Visit,
) -> (Result<Visited, StoreError>, bool) {
    let made =
        queries::sqlite::visit(conn, &visit.results, visit.disable_after_ms, visit.claim).await;
    let back = sqlx::query("PRAGMA synchronous = FULL")
        .execute(&mut **conn)
        .await;
    match back {
        Ok(_) => (made, true),
        Err(e) => {
            // The visit's own answer stands (its commit, if made, is made).
            tracing::warn!(error = %e, "the store's writer: cannot set synchronous back to FULL; closing the connection");
            conn.close_on_drop();
            (made, false)
        }
    }
}
