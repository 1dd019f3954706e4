//! Group commit of the SQLite store (SPEC 10 "Durable"): SQLite has one writer, and each commit
//! syncs the WAL to disk, so batches of events arriving together (16 relay connections) are
//! written by one task, several per transaction: each request still gets its answer only after
//! the commit that holds its batch, and a batch is stored whole or not at all.
//!
//! The task takes the first batch waiting, then every batch already queued behind it, up to
//! [`MAX_GROUP_BATCHES`] batches or [`MAX_GROUP_EVENTS`] events, and commits them together. If
//! that transaction fails, each batch of the group is tried again alone, so one batch the
//! database refuses never takes the others down with it.

use sqlx::SqlitePool;
use tokio::sync::{mpsc, oneshot};

use super::{InsertOutcome, StoreError, queries};
use crate::domain::event::{NewEvent, Scope};
use crate::tasks::Tasks;

/// Most batches in one transaction.
pub const MAX_GROUP_BATCHES: usize = 32;
/// Most events in one transaction (a group stops growing once it has this many).
pub const MAX_GROUP_EVENTS: usize = 10_000;
/// Batches that may wait for the writer before senders wait too.
const QUEUE: usize = 1024;

/// One batch and where its answer goes.
struct Job {
    batch: (Scope, Vec<NewEvent>, i64, Option<i64>),
    reply: oneshot::Sender<Result<InsertOutcome, String>>,
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
        let job = Job {
            batch: (
                scope.clone(),
                events.to_vec(),
                received_at_ms,
                max_session_age_ms,
            ),
            reply,
        };
        let stopped = || StoreError::new("the store's writer stopped");
        self.jobs.send(job).await.map_err(|_| stopped())?;
        answer
            .await
            .map_err(|_| stopped())?
            .map_err(StoreError::new)
    }
}

async fn run(writer: SqlitePool, mut queue: mpsc::Receiver<Job>) {
    while let Some(first) = queue.recv().await {
        let mut events = first.batch.1.len();
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP_BATCHES && events < MAX_GROUP_EVENTS {
            match queue.try_recv() {
                Ok(job) => {
                    events += job.batch.1.len();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        let (batches, replies): (Vec<_>, Vec<_>) =
            jobs.into_iter().map(|j| (j.batch, j.reply)).unzip();
        let borrowed: Vec<(&Scope, &[NewEvent], i64, Option<i64>)> = batches
            .iter()
            .map(|(scope, events, at, age)| (scope, events.as_slice(), *at, *age))
            .collect();
        match queries::sqlite::insert_groups(&writer, &borrowed).await {
            Ok(outcomes) => {
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    let _ = reply.send(Ok(outcome));
                }
            }
            Err(e) if batches.len() == 1 => {
                for reply in replies {
                    let _ = reply.send(Err(e.to_string()));
                }
            }
            Err(_) => {
                // Each batch alone: the one the database refuses fails, the others are stored.
                for ((scope, events, at, age), reply) in batches.iter().zip(replies) {
                    let single = [(scope, events.as_slice(), *at, *age)];
                    let result = queries::sqlite::insert_groups(&writer, &single)
                        .await
                        .map_err(|e| e.to_string())
                        .and_then(|mut outcomes| {
                            outcomes.pop().ok_or_else(|| "no outcome".to_owned())
                        });
                    let _ = reply.send(result);
                }
            }
        }
    }
}
