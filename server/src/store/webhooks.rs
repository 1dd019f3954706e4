//! The store's webhook part (SPEC 16): endpoints, test messages, attempts, resend and recover
//! for the API; claims and results for the delivery worker (`queries/webhooks.rs` has the
//! statements and the claim's rules). The outbox itself is written inside the event batches'
//! and the publishes' transactions.

use crate::domain::event::Scope;
use crate::domain::webhook::endpoint::{Attempt, AttemptResult, Due, Endpoint, Message};

use super::{Backend, Store, StoreError, queries};

/// Calls `queries::{sqlite,postgres}::$f` on a write connection whose commits need not reach the
/// disk before they return (the worker's claims and results: one lost in a crash leaves its
/// delivery due, which at-least-once allows). On SQLite the connection's `synchronous` is
/// NORMAL for the call and FULL again after it (a connection that cannot be set back is
/// closed, so no acknowledged write ever commits on it relaxed); on PostgreSQL each transaction
/// sets `synchronous_commit = off` (`queries/webhooks.rs`).
macro_rules! on_relaxed_writer {
    ($store:expr, $f:ident($($arg:expr),*)) => {
        match &$store.backend {
            Backend::Sqlite { writer, .. } => {
                let mut conn = writer.acquire().await?;
                sqlx::query("PRAGMA synchronous = NORMAL").execute(&mut *conn).await?;
                let done = queries::sqlite::$f(&mut conn, $($arg),*).await;
                if let Err(e) = sqlx::query("PRAGMA synchronous = FULL").execute(&mut *conn).await {
                    conn.close_on_drop();
                    return Err(e.into());
                }
                done
            }
            Backend::Postgres { pool, .. } => {
                let mut conn = pool.acquire().await?;
                queries::postgres::$f(&mut conn, $($arg),*).await
            }
        }
    };
}

impl Store {
    /// Stores a new endpoint of `scope` unless it has `max` already (then `false`).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn create_webhook_endpoint(
        &self,
        scope: &Scope,
        endpoint: &Endpoint,
        max: usize,
    ) -> Result<bool, StoreError> {
        dispatch!(self, write, create_endpoint(scope, endpoint, max))
    }

    /// The endpoints of `scope`, newest first, after `after` (`(created_at_ms, id)`), at most
    /// `limit`.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn webhook_endpoints(
        &self,
        scope: &Scope,
        after: Option<(i64, &str)>,
        limit: u32,
    ) -> Result<Vec<Endpoint>, StoreError> {
        dispatch!(self, read, list_endpoints(scope, after, limit))
    }

    /// The endpoint `id` of `scope`, read on the write pool (an update reads what it changes
    /// there).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn webhook_endpoint(
        &self,
        scope: &Scope,
        id: &str,
    ) -> Result<Option<Endpoint>, StoreError> {
        match &self.backend {
            Backend::Sqlite { writer, .. } => {
                let mut conn = writer.acquire().await?;
                queries::sqlite::endpoint(&mut conn, scope, id).await
            }
            Backend::Postgres { pool, .. } => {
                let mut conn = pool.acquire().await?;
                queries::postgres::endpoint(&mut conn, scope, id).await
            }
        }
    }

    /// Writes an endpoint read by [`Store::webhook_endpoint`] and changed (an update, a
    /// rotation); disabling fails its pending deliveries. `false` when it is gone.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn save_webhook_endpoint(
        &self,
        scope: &Scope,
        endpoint: &Endpoint,
    ) -> Result<bool, StoreError> {
        dispatch!(self, write, save_endpoint(scope, endpoint))
    }

    /// Deletes the endpoint `id` of `scope` with its deliveries and attempts.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn delete_webhook_endpoint(
        &self,
        scope: &Scope,
        id: &str,
    ) -> Result<bool, StoreError> {
        dispatch!(self, write, delete_endpoint(scope, id))
    }

    /// Writes `message` with one delivery, due now, to endpoint `id` of `scope`.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn enqueue_webhook_to(
        &self,
        scope: &Scope,
        id: &str,
        message: &Message,
    ) -> Result<bool, StoreError> {
        dispatch!(self, write, enqueue_to(scope, id, message))
    }

    /// The attempts to endpoint `id` of `scope`, newest first, before `before_seq`.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn webhook_attempts(
        &self,
        scope: &Scope,
        id: &str,
        before_seq: Option<i64>,
        limit: u32,
    ) -> Result<Option<Vec<Attempt>>, StoreError> {
        dispatch!(self, read, list_attempts(scope, id, before_seq, limit))
    }

    /// Makes message `id`'s deliveries due again now (SPEC 16 resend).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn resend_webhook_message(
        &self,
        scope: &Scope,
        id: &str,
        now_ms: i64,
    ) -> Result<Option<u64>, StoreError> {
        dispatch!(self, write, resend(scope, id, now_ms))
    }

    /// Makes the failed deliveries to endpoint `id` of messages since `since_ms` due again.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn recover_webhook_endpoint(
        &self,
        scope: &Scope,
        id: &str,
        since_ms: i64,
        now_ms: i64,
    ) -> Result<Option<u64>, StoreError> {
        dispatch!(self, write, recover(scope, id, since_ms, now_ms))
    }

    /// Claims at most `max` due deliveries until `now_ms + lease_ms` (queries/webhooks.rs).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn claim_webhook_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        max: usize,
    ) -> Result<Vec<Due>, StoreError> {
        on_relaxed_writer!(self, claim_due(now_ms, lease_ms, max))
    }

    /// Writes attempts' results in one transaction; the endpoints they disabled.
    ///
    /// # Errors
    ///
    /// [`StoreError`]; then none is written.
    pub async fn finish_webhook_attempts(
        &self,
        results: &[AttemptResult],
        disable_after_ms: i64,
    ) -> Result<Vec<String>, StoreError> {
        on_relaxed_writer!(self, finish_attempts(results, disable_after_ms))
    }

    /// Writes attempts' results in one transaction, then claims at most `max` due deliveries
    /// until `now_ms + lease_ms` on the same connection: the endpoints the results disabled,
    /// and the claimed deliveries or the claim's own failure (the results stay written).
    ///
    /// # Errors
    ///
    /// [`StoreError`] of the results; then none is written.
    pub async fn finish_webhook_attempts_and_claim(
        &self,
        results: &[AttemptResult],
        disable_after_ms: i64,
        now_ms: i64,
        lease_ms: i64,
        max: usize,
    ) -> Result<(Vec<String>, Result<Vec<Due>, StoreError>), StoreError> {
        on_relaxed_writer!(
            self,
            finish_and_claim(results, disable_after_ms, (now_ms, lease_ms, max))
        )
    }

    /// Deletes webhook messages created, and attempts made, before `before_ms`, in steps of
    /// [`super::PURGE_STEP_SESSIONS`] with a pause as long as each step (as [`Store::purge`]).
    ///
    /// # Errors
    ///
    /// [`StoreError`]; the steps committed before it stay done.
    pub async fn purge_webhooks(&self, before_ms: i64) -> Result<(), StoreError> {
        loop {
            let started = std::time::Instant::now();
            let more = dispatch!(
                self,
                write,
                purge_webhooks_step(before_ms, super::PURGE_STEP_SESSIONS)
            )?;
            if !more {
                return Ok(());
            }
            tokio::time::sleep(started.elapsed().max(std::time::Duration::from_millis(1))).await;
        }
    }
}
