//! The store's webhook part (docs/contract/webhooks.md): endpoints, test messages, attempts, resend and recover
//! for the API; claims and results for the delivery worker (`queries/webhooks.rs` has the
//! statements and the claim's rules). The outbox itself is written inside the event batches'
//! and the publishes' transactions.

use crate::domain::event::Scope;
use crate::domain::webhook::attempt::{Attempt, AttemptResult, Due};
use crate::domain::webhook::endpoint::Endpoint;
use crate::domain::webhook::outbox::Message;

use super::group::{Visit, Visited};
use super::queries::Claim;
use super::{Backend, Store, StoreError, queries};

impl Store {
    /// Whether event batches are being written now (the relay's): the delivery worker gives
    /// way to them (`app/delivery.rs`).
    pub fn writing_batches(&self) -> bool {
        self.batches.now() > 0
    }

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

    /// Makes message `id`'s deliveries due again now (docs/contract/webhooks.md resend).
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
        let (_, claimed) = self
            .visit(Visit {
                results: Vec::new(),
                disable_after_ms: 0,
                claim: Some(Claim {
                    now_ms,
                    lease_ms,
                    max,
                }),
            })
            .await?;
        Ok(claimed)
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
        let (disabled, _) = self
            .visit(Visit {
                results: results.to_vec(),
                disable_after_ms,
                claim: None,
            })
            .await?;
        Ok(disabled)
    }

    /// Writes attempts' results, then claims at most `max` due deliveries until `now_ms +
    /// lease_ms`, in one transaction on the writer: the endpoints the results disabled, and the
    /// claimed deliveries.
    ///
    /// # Errors
    ///
    /// [`StoreError`]; then nothing is written (write the results with
    /// [`Store::finish_webhook_attempts`]).
    pub async fn finish_webhook_attempts_and_claim(
        &self,
        results: &[AttemptResult],
        disable_after_ms: i64,
        now_ms: i64,
        lease_ms: i64,
        max: usize,
    ) -> Result<(Vec<String>, Vec<Due>), StoreError> {
        self.visit(Visit {
            results: results.to_vec(),
            disable_after_ms,
            claim: Some(Claim {
                now_ms,
                lease_ms,
                max,
            }),
        })
        .await
    }

    /// Makes a visit of the webhook worker (`queries::*::visit`) on a write connection whose
    /// commits need not reach the disk before they return (the worker's claims and results:
    /// one lost in a crash leaves its delivery due, which at-least-once allows): on SQLite by
    /// the writing task, between two groups of batches (`group.rs`); on PostgreSQL on a
    /// connection of the pool, its transaction with `synchronous_commit = off`.
    async fn visit(&self, visit: Visit) -> Result<Visited, StoreError> {
        match &self.backend {
            Backend::Sqlite { group, .. } => group.visit(visit).await,
            Backend::Postgres { pool, .. } => {
                let mut conn = pool.acquire().await?;
                queries::postgres::visit(
                    &mut conn,
                    &visit.results,
                    visit.disable_after_ms,
                    visit.claim,
                )
                .await
            }
        }
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
