//! Webhook deliveries (docs/contract/webhooks.md "Delivery", "Many instances"): the worker's claims and each
//! attempt's result, written while the claim is still the attempt's (the lease rules are at the
//! top of `webhooks.rs`). Instantiated beside `webhooks!` and on its imports.

macro_rules! deliveries {
    ($db:ty) => {
        /// Claims due deliveries until `now_ms + lease_ms` (in the caller's transaction): for
        /// up to 64 endpoints with due deliveries, at most [`MAX_IN_FLIGHT`] in flight each
        /// (module docs), `max` in all. Each endpoint's claim has its own token.
        async fn claim_in(
            tx: &mut sqlx::Transaction<'_, $db>,
            Claim { now_ms, lease_ms, max }: Claim,
        ) -> Result<Vec<Due>, StoreError> {
            // The enabled endpoints with a claimable delivery, read (and on PostgreSQL locked)
            // at once: each a short walk of its own index range (one due row), whatever its
            // backlog. A scalar subquery in the index's order with `LIMIT 1`, not `EXISTS`:
            // PostgreSQL turns an `EXISTS` into a join it may run the other way round, or a
            // scan, reading every delivery ever made (each claim then took 30 ms once the
            // table held a few minutes of history).
            let rows = sqlx::query(&format!(
                "SELECT id, url, secret, previous_secret, previous_secret_until FROM webhook_endpoints e \
                 WHERE status = 'enabled' AND (SELECT 1 FROM webhook_deliveries d \
                 WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= $1 AND d.claimed_until <= $1 \
                 ORDER BY d.next_attempt_at LIMIT 1) = 1 \
                 LIMIT 64{ROW_LOCKS}"
            ))
            .bind(now_ms)
            .fetch_all(&mut **tx)
            .await?;
            let mut claimed = Vec::new();
            for row in &rows {
                let room = max.saturating_sub(claimed.len());
                if room == 0 {
                    break;
                }
                // The endpoint's columns an attempt needs, its secrets read (once) as they sign.
                let endpoint_id: String = row.try_get("id")?;
                let url: String = row.try_get("url")?;
                let current: String = row.try_get("secret")?;
                let previous: Option<String> = row.try_get("previous_secret")?;
                let secrets = signing_secrets(
                    &StoredSecret::read(&current),
                    previous.as_deref().map(StoredSecret::read).as_ref(),
                    row.try_get("previous_secret_until")?,
                    now_ms,
                );
                let claim = crate::domain::webhook::endpoint::random_id("clm_", 12).map_err(StoreError::new)?;
                // The rows to claim are picked once, in a materialized CTE: as a subquery of
                // `IN`, PostgreSQL may run the pick again for each row it joins, and with
                // `SKIP LOCKED` each run finds other rows (a whole backlog was claimed so).
                // The pick's `LIMIT` is the literal MAX_IN_FLIGHT: a `LIMIT` the planner cannot
                // read (a parameter in a generic plan, or a subquery) counts as a tenth of the
                // backlog, and with statistics from a smaller table PostgreSQL joined the pick
                // to the table by a hash over a scan of every delivery (13 to 36 ms a claim,
                // against 0.3 ms by the primary key; seen with `auto_explain`). How many of
                // the picked are claimed: the places the endpoint's claims in flight leave of
                // MAX_IN_FLIGHT ($6), at most `room` ($5), counted in the same statement (after
                // the endpoint's row lock, so no other instance claims in between); the rest
                // are only locked until the commit.
                let rows = sqlx::query(&format!(
                    "WITH picked AS MATERIALIZED (SELECT message_id, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = $1 \
                     AND state = 'pending' AND next_attempt_at <= $2 AND claimed_until <= $2 ORDER BY next_attempt_at \
                     LIMIT {MAX_IN_FLIGHT}{ROW_LOCKS}) \
                     UPDATE webhook_deliveries SET claimed_until = $3, claim = $4 WHERE endpoint_id = $1 AND message_id IN \
                     (SELECT message_id FROM picked ORDER BY next_attempt_at \
                     LIMIT (SELECT CASE WHEN count(*) >= $6 THEN 0 WHEN $6 - count(*) < $5 THEN $6 - count(*) ELSE $5 END \
                     FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending' AND claimed_until > 0 AND claimed_until > $2)) \
                     RETURNING message_id, attempts"
                ))
                .bind(&endpoint_id)
                .bind(now_ms)
                .bind(now_ms.saturating_add(lease_ms))
                .bind(&claim)
                .bind(i64::try_from(room).unwrap_or(i64::MAX))
                .bind(MAX_IN_FLIGHT)
                .fetch_all(&mut **tx)
                .await?;
                let mut attempts: HashMap<String, i64> = HashMap::with_capacity(rows.len());
                for r in &rows {
                    attempts.insert(r.try_get("message_id")?, r.try_get("attempts")?);
                }
                if attempts.is_empty() {
                    continue;
                }
                // The messages' rows, mapped straight into the claimed deliveries (oldest
                // message first: ids sort by time).
                let mut select = QueryBuilder::<$db>::new("SELECT id, type, body FROM webhook_messages WHERE id IN (");
                let mut list = select.separated(", ");
                for id in attempts.keys() {
                    list.push_bind(id.as_str());
                }
                list.push_unseparated(") ORDER BY id");
                for r in select.build().fetch_all(&mut **tx).await? {
                    let message_id: String = r.try_get("id")?;
                    let Some(&made) = attempts.get(&message_id) else { continue };
                    claimed.push(Due {
                        message_id,
                        event_type: stored_event_type(r.try_get("type")?)?,
                        body: r.try_get("body")?,
                        endpoint_id: endpoint_id.clone(),
                        url: url.clone(),
                        secrets: secrets.clone(),
                        attempt: made.saturating_add(1),
                        claim: claim.clone(),
                    });
                }
            }
            Ok(claimed)
        }

        /// A visit of the worker's finisher (`app/delivery.rs`), in one transaction whose
        /// commit need not reach the disk ([`begin_relaxed`]): `results` written
        /// ([`finish_in`]), then the `claim` made ([`claim_in`]; `None`, or a `max` of 0:
        /// none), so the places the results freed are filled in the
        /// same turn of the writer (each statement and each commit of a visit is time the
        /// relay waits for on SQLite's one writer; docs/PERFORMANCE.md "Webhook figures").
        /// Returns the endpoints the results disabled and the claimed deliveries; on an error
        /// nothing is written.
        pub(crate) async fn visit(
            conn: &mut <$db as sqlx::Database>::Connection,
            results: &[AttemptResult],
            disable_after_ms: i64,
            claim: Option<Claim>,
        ) -> Result<(Vec<String>, Vec<Due>), StoreError> {
            let mut tx = begin_relaxed(conn).await?;
            let disabled = finish_in(&mut tx, results, disable_after_ms).await?;
            let claimed = match claim {
                Some(claim) if claim.max > 0 => claim_in(&mut tx, claim).await?,
                _ => Vec::new(),
            };
            tx.commit().await?;
            Ok((disabled, claimed))
        }

        /// Writes attempts' results in the caller's transaction (the worker's finisher gathers
        /// them): the attempts log; each delivery (succeeded, due again, or failed:
        /// [`Verdict::state`]) while the claim is still this attempt's; for the deliveries so
        /// held, in the results' order, the endpoint's health ([`Health::after`]: the 5-day rule
        /// over `disable_after_ms`, and a 410), whose changed `failing_since` is written and
        /// whose disables fail the endpoint's pending deliveries and send
        /// `webhook_endpoint.disabled` to the scope's other endpoints. Returns the endpoints
        /// disabled.
        ///
        /// A few statements for the whole batch, not three per result: one read of the results'
        /// endpoints, one `INSERT` of the attempts and one `UPDATE ... FROM (VALUES ...)` of the
        /// deliveries per chunk of [`ATTEMPTS_PER_STATEMENT`], then a write per endpoint whose
        /// health changed (none while every attempt succeeds). On SQLite's one writer the
        /// per-statement cost was the worker's share of the relay's time (docs/PERFORMANCE.md,
        /// "Webhook figures").
        async fn finish_in(
            tx: &mut sqlx::Transaction<'_, $db>,
            results: &[AttemptResult],
            disable_after_ms: i64,
        ) -> Result<Vec<String>, StoreError> {
            if results.is_empty() {
                return Ok(Vec::new());
            }
            // The results' endpoints' health, read first, in id order. With row locks
            // (PostgreSQL) the read locks them, as every other writer of deliveries does (an
            // endpoint's update, disable or delete locks its row, then its deliveries). Locking
            // the deliveries first deadlocked with a `PATCH` to disabled, whose `fail_pending`
            // locks them in another order, and PostgreSQL aborted one of the two after 1 s: a
            // `PATCH` answered 503 (seen in the webhook benchmark). Now the visit waits for the
            // `PATCH`, whose failed deliveries no longer hold this visit's claims.
            let mut ids: Vec<&str> = results.iter().map(|r| r.due.endpoint_id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            let mut read = QueryBuilder::<$db>::new("SELECT id, failing_since FROM webhook_endpoints WHERE id IN (");
            let mut list = read.separated(", ");
            for id in &ids {
                list.push_bind(*id);
            }
            list.push_unseparated(format!(") ORDER BY id{FOR_UPDATE}"));
            // Each endpoint's health as stored, and as the results move it.
            let mut health: HashMap<String, (Health, Health)> = HashMap::new();
            for row in read.build().fetch_all(&mut **tx).await? {
                let stored = Health { failing_since_ms: row.try_get("failing_since")? };
                health.insert(row.try_get("id")?, (stored, stored));
            }
            for chunk in results.chunks(ATTEMPTS_PER_STATEMENT) {
                let mut insert = QueryBuilder::<$db>::new(
                    "INSERT INTO webhook_attempts (endpoint_id, message_id, event_type, attempt, attempted_at, status, error, duration_ms, body, next_attempt_at) ",
                );
                insert.push_values(chunk, |mut row, result| {
                    let due = &result.due;
                    row.push_bind(due.endpoint_id.as_str())
                        .push_bind(due.message_id.as_str())
                        .push_bind(due.event_type.as_str())
                        .push_bind(due.attempt)
                        .push_bind(result.attempted_at_ms)
                        .push_bind(result.status.map(|s| i64::from(s.0)))
                        .push_bind(result.error.as_deref())
                        .push_bind(result.duration_ms)
                        .push_bind(result.body.as_str())
                        .push_bind(result.verdict.next_attempt_at_ms());
                });
                insert.build().execute(&mut **tx).await?;
            }
            let held = release_claims(tx, results).await?;
            let mut disables: Vec<(&str, i64)> = Vec::new();
            for (result, held) in results.iter().zip(held) {
                let id = result.due.endpoint_id.as_str();
                let Some((_, now)) = health.get_mut(id).filter(|_| held) else {
                    continue;
                };
                let (after, disabled) = now.after(&result.verdict, result.attempted_at_ms, disable_after_ms);
                *now = after;
                if disabled.is_some() {
                    disables.push((id, result.attempted_at_ms));
                }
            }
            for id in &ids {
                if let Some((_, now)) = health.get(*id).filter(|(stored, now)| stored != now) {
                    sqlx::query("UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1")
                        .bind(*id)
                        .bind(now.failing_since_ms)
                        .execute(&mut **tx)
                        .await?;
                }
            }
            let mut disabled = Vec::new();
            for (id, at_ms) in disables {
                if disable_endpoint(tx, id, at_ms).await? {
                    disabled.push(id.to_owned());
                }
            }
            Ok(disabled)
        }

        /// Ends the claims of `results` (in the caller's transaction): each delivery whose
        /// claim is still its attempt's becomes succeeded, pending (due again) or failed.
        /// Returns, for each result in order, whether its claim held. Results of one delivery
        /// made by two claims (a lease outlived, then claimed again) are written one by one,
        /// so that the claim that holds is told apart.
        async fn release_claims(
            tx: &mut sqlx::Transaction<'_, $db>,
            results: &[AttemptResult],
        ) -> Result<Vec<bool>, StoreError> {
            fn key(r: &AttemptResult) -> (&str, &str) {
                (r.due.message_id.as_str(), r.due.endpoint_id.as_str())
            }
            let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
            for r in results {
                *seen.entry(key(r)).or_default() += 1;
            }
            let state = |r: &AttemptResult| r.verdict.state().as_str();
            let (alone, twice): (Vec<&AttemptResult>, Vec<&AttemptResult>) =
                results.iter().partition(|r| seen.get(&key(r)) == Some(&1));
            let mut held: HashSet<(String, String)> = HashSet::new();
            for chunk in alone.chunks(ATTEMPTS_PER_STATEMENT) {
                let mut update = QueryBuilder::<$db>::new(
                    "UPDATE webhook_deliveries AS d SET state = v.column4, attempts = v.column5, next_attempt_at = v.column6, \
                     claimed_until = 0, claim = NULL FROM (",
                );
                update.push_values(chunk, |mut row, r| {
                    row.push_bind(r.due.message_id.as_str())
                        .push_bind(r.due.endpoint_id.as_str())
                        .push_bind(r.due.claim.as_str())
                        .push_bind(state(r))
                        .push_bind(r.due.attempt)
                        .push_bind(r.verdict.next_attempt_at_ms());
                });
                update.push(
                    ") AS v WHERE d.message_id = v.column1 AND d.endpoint_id = v.column2 AND d.claim = v.column3 \
                     RETURNING message_id, endpoint_id",
                );
                for row in update.build().fetch_all(&mut **tx).await? {
                    held.insert((row.try_get("message_id")?, row.try_get("endpoint_id")?));
                }
            }
            let mut held_twice: HashSet<(&str, &str)> = HashSet::new();
            for r in twice {
                let done = sqlx::query(
                    "UPDATE webhook_deliveries SET state = $4, attempts = $5, next_attempt_at = $6, claimed_until = 0, claim = NULL \
                     WHERE message_id = $1 AND endpoint_id = $2 AND claim = $3",
                )
                .bind(&r.due.message_id)
                .bind(&r.due.endpoint_id)
                .bind(&r.due.claim)
                .bind(state(r))
                .bind(r.due.attempt)
                .bind(r.verdict.next_attempt_at_ms())
                .execute(&mut **tx)
                .await?
                .rows_affected();
                if done > 0 {
                    held_twice.insert((r.due.message_id.as_str(), r.due.claim.as_str()));
                }
            }
            Ok(results
                .iter()
                .map(|r| {
                    if seen.get(&key(r)) == Some(&1) {
                        held.contains(&(r.due.message_id.clone(), r.due.endpoint_id.clone()))
                    } else {
                        held_twice.contains(&(r.due.message_id.as_str(), r.due.claim.as_str()))
                    }
                })
                .collect())
        }

        /// Disables endpoint `id` if enabled: its pending deliveries fail, and the other
        /// enabled endpoints of its scope subscribed to `webhook_endpoint.disabled` get the
        /// message. Returns whether it was enabled.
        async fn disable_endpoint(tx: &mut sqlx::Transaction<'_, $db>, id: &str, now_ms: i64) -> Result<bool, StoreError> {
            let row = sqlx::query(&format!(
                "UPDATE webhook_endpoints SET status = 'disabled', updated_at = $2 WHERE id = $1 AND status = 'enabled' RETURNING site, mode, {ENDPOINT_COLUMNS}"
            ))
            .bind(id)
            .bind(now_ms)
            .fetch_optional(&mut **tx)
            .await?;
            let Some(row) = row else { return Ok(false) };
            let endpoint = read_endpoint(&row)?;
            let mode: String = row.try_get("mode")?;
            let scope = Scope {
                site: row.try_get("site")?,
                mode: Mode::parse(&mode).map_err(StoreError::new)?,
            };
            fail_pending(tx, id).await?;
            let endpoints = subscribers(&mut **tx, &scope).await?;
            let change = Change::EndpointDisabled(&endpoint);
            let messages = outbox::address(&[change], &endpoints, now_ms).map_err(StoreError::new)?;
            enqueue(&mut **tx, &scope, &messages).await?;
            Ok(true)
        }
    };
}
