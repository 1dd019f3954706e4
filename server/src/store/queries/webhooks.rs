//! Webhooks (docs/contract/webhooks.md): endpoints, the outbox (messages written in the transaction of the change
//! that causes them), resends, recovery and the purge; the worker's claims and each attempt's
//! result are in `deliveries.rs`, on the names this room imports. The rules are the domain's
//! (`domain/webhook/`: which changes make which messages, how a delivery moves on, when an
//! endpoint is disabled); here are only the statements and the rows' mapping.
//!
//! A delivery (one message to one endpoint) is `pending` with a due time, `succeeded` or
//! `failed`. The worker claims due deliveries for a lease: `claimed_until` ahead of now and a
//! token in `claim`; the result is written only while the claim is still that token, so an
//! instance that outlived its lease (killed, or stalled past it) writes nothing over another's
//! claim. On PostgreSQL the claim locks the rows of the endpoints with due deliveries (`SKIP
//! LOCKED`: an endpoint another instance is claiming for is skipped this round), then for each
//! counts its claims in flight and claims at most the rest of [`MAX_IN_FLIGHT`] due rows, in one
//! statement run after the lock and themselves locked with `SKIP LOCKED`: one instance per due
//! attempt, at most 8 at a time per endpoint across every instance. On SQLite the one writer
//! makes the same statements exact.

macro_rules! webhooks {
    ($db:ty, $row:ty) => {
        use crate::domain::webhook::EventType;
        use crate::domain::webhook::attempt::{Attempt, AttemptResult, Due, HttpStatus};
        use crate::domain::webhook::endpoint::{Endpoint, Status, parse_types_text, types_text};
        use crate::domain::webhook::health::Health;
        use super::Claim;
        use crate::domain::webhook::outbox::{self, Change, Message};
        use crate::domain::webhook::signature::{StoredSecret, signing_secrets};

        fn read_endpoint(row: &$row) -> Result<Endpoint, StoreError> {
            let types: String = row.try_get("event_types")?;
            let status: String = row.try_get("status")?;
            let secret: String = row.try_get("secret")?;
            let previous: Option<String> = row.try_get("previous_secret")?;
            Ok(Endpoint {
                id: row.try_get("id")?,
                url: row.try_get("url")?,
                event_types: parse_types_text(&types).map_err(|e| StoreError::new(format!("a stored endpoint: {e}")))?,
                description: row.try_get("description")?,
                status: Status::parse(&status).map_err(StoreError::new)?,
                secret: StoredSecret::read(&secret),
                previous_secret: previous.as_deref().map(StoredSecret::read),
                previous_secret_until_ms: row.try_get("previous_secret_until")?,
                failing_since_ms: row.try_get("failing_since")?,
                created_at_ms: row.try_get("created_at")?,
                updated_at_ms: row.try_get("updated_at")?,
            })
        }

        /// Stores `endpoint` in `scope` unless the scope has `max` endpoints already; returns
        /// whether it was stored.
        pub(crate) async fn create_endpoint(
            pool: &Pool<$db>,
            scope: &Scope,
            endpoint: &Endpoint,
            max: usize,
        ) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            let count: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_endpoints WHERE site = $1 AND mode = $2")
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .fetch_one(&mut *tx)
                .await?;
            if usize::try_from(count).unwrap_or(usize::MAX) >= max {
                return Ok(false);
            }
            sqlx::query(&format!(
                "INSERT INTO webhook_endpoints (site, mode, {ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(&endpoint.id)
            .bind(&endpoint.url)
            .bind(types_text(&endpoint.event_types))
            .bind(endpoint.description.as_deref())
            .bind(endpoint.status.as_str())
            .bind(endpoint.secret.stored())
            .bind(endpoint.previous_secret.as_ref().map(StoredSecret::stored))
            .bind(endpoint.previous_secret_until_ms)
            .bind(endpoint.failing_since_ms)
            .bind(endpoint.created_at_ms)
            .bind(endpoint.updated_at_ms)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(true)
        }

        /// The endpoints of `scope`, newest first (ties: id descending), after `after`'s
        /// `(created_at, id)`, at most `limit`.
        pub(crate) async fn list_endpoints(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            after: Option<(i64, &str)>,
            limit: u32,
        ) -> Result<Vec<Endpoint>, StoreError> {
            let (at, id) = after.unwrap_or((i64::MAX, ""));
            let rows = sqlx::query(&format!(
                "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE site = $1 AND mode = $2 AND (created_at, id) < ($3, $4) \
                 ORDER BY created_at DESC, id DESC LIMIT $5"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(at)
            .bind(if after.is_some() { id } else { "\u{10ffff}" })
            .bind(limit_param(limit))
            .fetch_all(&mut *conn)
            .await?;
            rows.iter().map(read_endpoint).collect()
        }

        /// The endpoint `id` of `scope`.
        pub(crate) async fn endpoint(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            id: &str,
        ) -> Result<Option<Endpoint>, StoreError> {
            let row = sqlx::query(&format!("SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE site = $1 AND mode = $2 AND id = $3"))
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
            row.as_ref().map(read_endpoint).transpose()
        }

        /// Writes `endpoint`'s url, types, description, status and secrets (an update or a
        /// rotation, read and changed by the caller); a status that goes to disabled fails
        /// its pending deliveries, and the endpoint's health follows the change of status as
        /// stored ([`Health::after_status`]: enabling starts the 5-day rule afresh), read in
        /// this transaction (and locked, on PostgreSQL). `false` when it is no longer there.
        pub(crate) async fn save_endpoint(
            pool: &Pool<$db>,
            scope: &Scope,
            endpoint: &Endpoint,
        ) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            let stored = sqlx::query(&format!(
                "SELECT status, failing_since FROM webhook_endpoints WHERE site = $1 AND mode = $2 AND id = $3{FOR_UPDATE}"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(&endpoint.id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(stored) = stored else { return Ok(false) };
            let status: String = stored.try_get("status")?;
            let health = Health { failing_since_ms: stored.try_get("failing_since")? }
                .after_status(Status::parse(&status).map_err(StoreError::new)?, endpoint.status);
            sqlx::query(
                "UPDATE webhook_endpoints SET url = $4, event_types = $5, description = $6, status = $7, secret = $8, \
                 previous_secret = $9, previous_secret_until = $10, updated_at = $11, failing_since = $12 \
                 WHERE site = $1 AND mode = $2 AND id = $3",
            )
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(&endpoint.id)
            .bind(&endpoint.url)
            .bind(types_text(&endpoint.event_types))
            .bind(endpoint.description.as_deref())
            .bind(endpoint.status.as_str())
            .bind(endpoint.secret.stored())
            .bind(endpoint.previous_secret.as_ref().map(StoredSecret::stored))
            .bind(endpoint.previous_secret_until_ms)
            .bind(endpoint.updated_at_ms)
            .bind(health.failing_since_ms)
            .execute(&mut *tx)
            .await?;
            if endpoint.status == Status::Disabled {
                fail_pending(&mut tx, &endpoint.id).await?;
            }
            tx.commit().await?;
            Ok(true)
        }

        /// Deletes the endpoint `id` of `scope` with its deliveries and attempts; `false` when
        /// there is none.
        pub(crate) async fn delete_endpoint(pool: &Pool<$db>, scope: &Scope, id: &str) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            let deleted = sqlx::query("DELETE FROM webhook_endpoints WHERE site = $1 AND mode = $2 AND id = $3")
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if deleted == 0 {
                return Ok(false);
            }
            for table in ["webhook_deliveries", "webhook_attempts"] {
                sqlx::query(&format!("DELETE FROM {table} WHERE endpoint_id = $1"))
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(true)
        }

        /// Fails every pending delivery of endpoint `id` (it was disabled).
        async fn fail_pending(tx: &mut sqlx::Transaction<'_, $db>, id: &str) -> Result<(), StoreError> {
            sqlx::query(
                "UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, claimed_until = 0, claim = NULL \
                 WHERE endpoint_id = $1 AND state = 'pending'",
            )
            .bind(id)
            .execute(&mut **tx)
            .await?;
            Ok(())
        }

        /// A transaction whose commit may return before it reaches the disk
        /// ([`RELAXED_BEGIN`]: SQLite's connection `synchronous` = NORMAL, which the writing
        /// task sets back to FULL after the visit, `store/group.rs`; PostgreSQL's
        /// `synchronous_commit = off` for the transaction, sent with its `BEGIN`). For the
        /// worker's claims and results only: one lost in a crash leaves its delivery due
        /// (again), which at-least-once allows; the durable writes that follow sync it anyway.
        async fn begin_relaxed(
            conn: &mut <$db as sqlx::Database>::Connection,
        ) -> Result<sqlx::Transaction<'_, $db>, StoreError> {
            Ok(sqlx::Connection::begin_with(conn, RELAXED_BEGIN).await?)
        }

        /// The enabled endpoints of `scope` (read in the caller's transaction).
        async fn subscribers(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
        ) -> Result<Vec<Endpoint>, StoreError> {
            let rows = sqlx::query(&format!(
                "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE site = $1 AND mode = $2 AND status = 'enabled'"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .fetch_all(&mut *conn)
            .await?;
            rows.iter().map(read_endpoint).collect()
        }

        /// The messages of one stored batch (docs/contract/webhooks.md; the rules: [`outbox::changes_of_batch`]),
        /// added to the group's `outbox`, which its transaction writes; each scope's enabled
        /// endpoints are read once per group. Nothing is made when none is enabled.
        async fn outbox_of_batch<'s>(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &'s Scope,
            stored: &[&NewEvent],
            recomputed: &Recomputed,
            now_ms: i64,
            outbox: &mut Outbox<'s>,
        ) -> Result<(), StoreError> {
            if outbox.subscribers_of(scope).is_none() {
                let read = subscribers(&mut **tx, scope).await?;
                outbox.subscribers.push((scope, read));
            }
            let endpoints = outbox.subscribers_of(scope).unwrap_or_default();
            if endpoints.is_empty() {
                return Ok(());
            }
            let changes = outbox::changes_of_batch(stored, recomputed);
            let messages = outbox::address(&changes, endpoints, now_ms).map_err(StoreError::new)?;
            outbox.add(scope, messages);
            Ok(())
        }

        /// The `config.published` message of `version`, in the publish's transaction.
        async fn outbox_of_version(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &Scope,
            version: &ConfigVersion,
        ) -> Result<(), StoreError> {
            let endpoints = subscribers(&mut **tx, scope).await?;
            let change = Change::ConfigPublished(version);
            let messages = outbox::address(&[change], &endpoints, version.published_at_ms).map_err(StoreError::new)?;
            enqueue(&mut **tx, scope, &messages).await
        }

        /// Writes `message` with one delivery to endpoint `id` of `scope` (a test message);
        /// `false` when there is no such endpoint.
        pub(crate) async fn enqueue_to(
            pool: &Pool<$db>,
            scope: &Scope,
            id: &str,
            message: &Message,
        ) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            if endpoint(&mut *tx, scope, id).await?.is_none() {
                return Ok(false);
            }
            let addressed = Message { to: vec![id.to_owned()], ..message.clone() };
            enqueue(&mut *tx, scope, &[addressed]).await?;
            tx.commit().await?;
            Ok(true)
        }

        /// The attempts to endpoint `id` of `scope`, newest first, before `before_seq`, at
        /// most `limit`; `None` when there is no such endpoint.
        pub(crate) async fn list_attempts(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            id: &str,
            before_seq: Option<i64>,
            limit: u32,
        ) -> Result<Option<Vec<Attempt>>, StoreError> {
            if endpoint(&mut *conn, scope, id).await?.is_none() {
                return Ok(None);
            }
            let rows = sqlx::query(
                "SELECT seq, message_id, event_type, attempt, attempted_at, status, error, duration_ms, body, next_attempt_at \
                 FROM webhook_attempts WHERE endpoint_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3",
            )
            .bind(id)
            .bind(before_seq.unwrap_or(i64::MAX))
            .bind(limit_param(limit))
            .fetch_all(&mut *conn)
            .await?;
            let attempts = rows
                .iter()
                .map(|r| {
                    let event_type: String = r.try_get("event_type")?;
                    let status: Option<i64> = r.try_get("status")?;
                    Ok(Attempt {
                        seq: r.try_get("seq")?,
                        message_id: r.try_get("message_id")?,
                        event_type: stored_event_type(&event_type)?,
                        attempt: r.try_get("attempt")?,
                        attempted_at_ms: r.try_get("attempted_at")?,
                        status: status.map(stored_status).transpose()?,
                        error: r.try_get("error")?,
                        duration_ms: r.try_get("duration_ms")?,
                        body: r.try_get("body")?,
                        next_attempt_at_ms: r.try_get("next_attempt_at")?,
                    })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?;
            Ok(Some(attempts))
        }

        /// The event type of a `type` or `event_type` column, written as [`EventType::as_str`].
        ///
        /// # Errors
        ///
        /// A decode error naming the text, for a name no version of the server writes.
        fn stored_event_type(text: &str) -> Result<EventType, sqlx::Error> {
            text.parse().map_err(|e: crate::domain::webhook::UnknownEventType| sqlx::Error::Decode(format!("a stored webhook message: {e}").into()))
        }

        /// The HTTP status of an attempt's `status` column.
        ///
        /// # Errors
        ///
        /// A decode error for a number no response has.
        fn stored_status(n: i64) -> Result<HttpStatus, sqlx::Error> {
            u16::try_from(n).map(HttpStatus).map_err(|_| sqlx::Error::Decode(format!("a stored HTTP status {n}").into()))
        }

        /// Makes the deliveries of message `id` of `scope` due again at `now_ms`, from attempt 1
        /// (those to enabled endpoints, and not in flight); `None` when there is no such
        /// message, else how many.
        pub(crate) async fn resend(pool: &Pool<$db>, scope: &Scope, id: &str, now_ms: i64) -> Result<Option<u64>, StoreError> {
            let mut tx = pool.begin().await?;
            let found: Option<String> = sqlx::query_scalar("SELECT id FROM webhook_messages WHERE id = $1 AND site = $2 AND mode = $3")
                .bind(id)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .fetch_optional(&mut *tx)
                .await?;
            if found.is_none() {
                return Ok(None);
            }
            let n = sqlx::query(
                "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $2, claimed_until = 0, claim = NULL \
                 WHERE message_id = $1 AND NOT (state = 'pending' AND claimed_until > $2) \
                 AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE status = 'enabled')",
            )
            .bind(id)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            Ok(Some(n))
        }

        /// Makes every failed delivery to endpoint `id` of `scope` of a message created at or
        /// after `since_ms` due again at `now_ms`, from attempt 1; `None` when there is no such
        /// endpoint, else how many.
        pub(crate) async fn recover(pool: &Pool<$db>, scope: &Scope, id: &str, since_ms: i64, now_ms: i64) -> Result<Option<u64>, StoreError> {
            let mut tx = pool.begin().await?;
            if endpoint(&mut *tx, scope, id).await?.is_none() {
                return Ok(None);
            }
            let n = sqlx::query(
                "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $3, claimed_until = 0, claim = NULL \
                 WHERE endpoint_id = $1 AND state = 'failed' AND message_id IN (SELECT id FROM webhook_messages WHERE created_at >= $2)",
            )
            .bind(id)
            .bind(since_ms)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            Ok(Some(n))
        }

        /// Deletes up to `limit` webhook messages created before `before_ms` with their
        /// deliveries, and the attempts logged before it; returns whether more are left.
        pub(crate) async fn purge_webhooks_step(pool: &Pool<$db>, before_ms: i64, limit: u32) -> Result<bool, StoreError> {
            let mut tx = pool.begin().await?;
            let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM webhook_messages WHERE created_at < $1 LIMIT $2")
                .bind(before_ms)
                .bind(limit_param(limit))
                .fetch_all(&mut *tx)
                .await?;
            for chunk in ids.chunks(SESSIONS_PER_STATEMENT) {
                for (table, column) in [("webhook_deliveries", "message_id"), ("webhook_messages", "id")] {
                    let mut delete = QueryBuilder::<$db>::new(format!("DELETE FROM {table} WHERE {column} IN ("));
                    let mut list = delete.separated(", ");
                    for id in chunk {
                        list.push_bind(id.as_str());
                    }
                    list.push_unseparated(")");
                    delete.build().execute(&mut *tx).await?;
                }
            }
            let attempts = sqlx::query(
                "DELETE FROM webhook_attempts WHERE seq IN (SELECT seq FROM webhook_attempts WHERE attempted_at < $1 LIMIT $2)",
            )
            .bind(before_ms)
            .bind(limit_param(limit))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            let full = |n: usize| n >= usize::try_from(limit).unwrap_or(usize::MAX);
            Ok(full(ids.len()) || full(usize::try_from(attempts).unwrap_or(usize::MAX)))
        }
    };
}
