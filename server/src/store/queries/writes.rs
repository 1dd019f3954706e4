//! The writes: batches of events with the derived fields of the sessions they touch (one
//! transaction, the group commit's unit), and the purge past retention.

macro_rules! writes {
    ($db:ty, $row:ty, $group:literal, $array:literal, $json_pages:literal) => {
        /// Batches of events in one transaction: each batch's events (a `message_id` already
        /// stored, or twice in a batch, is a duplicate) and the derived fields of every session
        /// it touches; all committed by one commit, or none. One batch on PostgreSQL; on SQLite
        /// the batches queued together (a group commit, `group.rs`).
        pub(crate) async fn insert_groups<'c>(
            conn: impl sqlx::Acquire<'c, Database = $db>,
            batches: &[(&Scope, &[NewEvent], i64, Option<i64>)],
        ) -> Result<Vec<InsertOutcome>, StoreError> {
            let mut tx = conn.begin().await?;
            let mut outcomes = Vec::with_capacity(batches.len());
            let mut outbox = Outbox::default();
            for &(scope, events, received_at_ms, max_session_age_ms) in batches {
                outcomes.push(insert_batch(&mut tx, scope, events, received_at_ms, max_session_age_ms, &mut outbox).await?);
            }
            for (scope, messages) in &outbox.messages {
                enqueue(&mut *tx, scope, messages).await?;
            }
            tx.commit().await?;
            Ok(outcomes)
        }

        /// One batch inside the caller's transaction: with `max_session_age_ms`, the events more
        /// than that after their session's start (the stored start, or the batch's earliest
        /// event of the session, whichever is first) are refused, read in this transaction so
        /// that no other batch changes the start in between (docs/contract/relay.md "Clocks"); then the
        /// events (a `message_id` already stored, or twice in the batch, is a duplicate), then
        /// the derived fields of every session it touches.
        async fn insert_batch<'s>(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &'s Scope,
            events: &[NewEvent],
            received_at_ms: i64,
            max_session_age_ms: Option<i64>,
            outbox: &mut Outbox<'s>,
        ) -> Result<InsertOutcome, StoreError> {
            let mode = scope.mode.as_str();
            let mut outcome = InsertOutcome::default();
            if let Some(max_age) = max_session_age_ms {
                let mut ids: Vec<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
                ids.sort_unstable();
                ids.dedup();
                let mut starts: HashMap<String, i64> = session_starts(&mut **tx, scope, &ids).await?;
                for e in events {
                    let start = starts.entry(e.session_id.clone()).or_insert(e.occurred_at_ms);
                    *start = (*start).min(e.occurred_at_ms);
                }
                for (index, e) in events.iter().enumerate() {
                    let start = starts.get(&e.session_id).copied().unwrap_or(e.occurred_at_ms);
                    if e.occurred_at_ms.saturating_sub(start) > max_age {
                        outcome.too_late.push(index);
                    }
                }
            }
            outcome.wrong_outcome = chat_opened_of_other_types(&mut **tx, scope, events, &outcome.too_late).await?;
            let refused: HashSet<usize> = outcome.too_late.iter().chain(&outcome.wrong_outcome).copied().collect();
            // A message id twice in one batch: the later ones are duplicates.
            let mut first_index: HashMap<&str, usize> = HashMap::new();
            for (index, e) in events.iter().enumerate() {
                if !refused.contains(&index) {
                    first_index.entry(e.message_id.as_str()).or_insert(index);
                }
            }
            let unique: Vec<&NewEvent> = events
                .iter()
                .enumerate()
                .filter(|(index, e)| first_index.get(e.message_id.as_str()) == Some(index))
                .map(|(_, e)| e)
                .collect();
            let mut stored: HashSet<String> = HashSet::new();
            for chunk in unique.chunks(EVENTS_PER_STATEMENT) {
                let mut insert = QueryBuilder::<$db>::new(
                    "INSERT INTO events (site, mode, message_id, session_id, visitor_id, type, occurred_at, url, path_key, intent_score, nudge_id, nudge_type, rule_id, outcome, received_at) ",
                );
                insert.push_values(chunk, |mut row, e| {
                    row.push_bind(scope.site.as_str())
                        .push_bind(mode)
                        .push_bind(e.message_id.as_str())
                        .push_bind(e.session_id.as_str())
                        .push_bind(e.visitor_id.as_deref())
                        .push_bind(e.kind.as_str())
                        .push_bind(e.occurred_at_ms)
                        .push_bind(e.url.as_deref())
                        .push_bind(e.path_key.as_deref())
                        .push_bind(e.intent_score.map(i64::from))
                        .push_bind(e.nudge_id.as_deref())
                        .push_bind(e.nudge_type.map(NudgeType::as_str))
                        .push_bind(e.rule_id.as_deref())
                        .push_bind(e.outcome.map(NudgeOutcome::as_str))
                        .push_bind(received_at_ms);
                });
                insert.push(" ON CONFLICT (site, mode, message_id) DO NOTHING RETURNING message_id");
                for row in insert.build().fetch_all(&mut **tx).await? {
                    stored.insert(row.try_get("message_id")?);
                }
            }
            let mut touched: Vec<&str> = Vec::new();
            let mut touched_set: HashSet<&str> = HashSet::new();
            for (index, e) in events.iter().enumerate() {
                if refused.contains(&index) {
                    continue;
                }
                let first = first_index.get(e.message_id.as_str()) == Some(&index);
                if first && stored.contains(&e.message_id) {
                    outcome.accepted += 1;
                    if touched_set.insert(e.session_id.as_str()) {
                        touched.push(e.session_id.as_str());
                    }
                } else {
                    outcome.duplicates.push(index);
                }
            }
            let mut recomputed = Recomputed::default();
            for sessions in touched.chunks(SESSIONS_PER_STATEMENT) {
                recompute(tx, scope, sessions, &mut recomputed).await?;
            }
            if outcome.accepted > 0 {
                let stored: Vec<&NewEvent> = unique.iter().copied().filter(|e| stored.contains(&e.message_id)).collect();
                outbox_of_batch(tx, scope, &stored, &recomputed, received_at_ms, outbox).await?;
            }
            Ok(outcome)
        }

        /// Indexes (ascending) of the `chat_opened` outcomes in `events` (those not in
        /// `refused`) whose nudge's type is known and is not a chat bubble (docs/contract/relay.md): known
        /// when its NUDGE_SHOWN is in the batch or stored.
        async fn chat_opened_of_other_types(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            events: &[NewEvent],
            refused: &[usize],
        ) -> Result<Vec<usize>, StoreError> {
            let is_chat_opened = |e: &NewEvent| e.kind == EventKind::NudgeOutcome && e.outcome == Some(NudgeOutcome::ChatOpened);
            if !events.iter().any(is_chat_opened) {
                return Ok(Vec::new());
            }
            let mut types: HashMap<String, NudgeType> = HashMap::new();
            for (index, e) in events.iter().enumerate() {
                if e.kind == EventKind::NudgeShown && !refused.contains(&index) {
                    if let (Some(id), Some(nudge_type)) = (&e.nudge_id, &e.nudge_type) {
                        types.entry(id.clone()).or_insert(*nudge_type);
                    }
                }
            }
            let unknown: Vec<&str> = events
                .iter()
                .filter(|e| is_chat_opened(e))
                .filter_map(|e| e.nudge_id.as_deref())
                .filter(|id| !types.contains_key(*id))
                .collect();
            for chunk in unknown.chunks(SESSIONS_PER_STATEMENT) {
                let mut select = QueryBuilder::<$db>::new("SELECT id, type FROM nudges WHERE site = ");
                select.push_bind(scope.site.as_str()).push(" AND mode = ").push_bind(scope.mode.as_str()).push(" AND id IN (");
                let mut list = select.separated(", ");
                for id in chunk {
                    list.push_bind(*id);
                }
                list.push_unseparated(")");
                for row in select.build().fetch_all(&mut *conn).await? {
                    types.insert(row.try_get("id")?, stored_type(row.try_get("type")?)?);
                }
            }
            Ok(events
                .iter()
                .enumerate()
                .filter(|(index, e)| is_chat_opened(e) && !refused.contains(index))
                .filter(|(_, e)| {
                    e.nudge_id
                        .as_ref()
                        .and_then(|id| types.get(id))
                        .is_some_and(|&t| t != NudgeType::ChatBubble)
                })
                .map(|(index, _)| index)
                .collect())
        }

        /// Recomputes the derived fields of `sessions` from all their stored events, and
        /// writes their session rows and nudge rows; what it found goes to `found`.
        async fn recompute(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &Scope,
            sessions: &[&str],
            found: &mut Recomputed,
        ) -> Result<(), StoreError> {
            let mode = scope.mode.as_str();
            let mut select = QueryBuilder::<$db>::new(format!("SELECT {EVENT_COLUMNS} FROM events WHERE site = "));
            select.push_bind(scope.site.as_str()).push(" AND mode = ").push_bind(mode).push(" AND session_id IN (");
            let mut ids = select.separated(", ");
            for id in sessions {
                ids.push_bind(*id);
            }
            ids.push_unseparated(") ORDER BY session_id, occurred_at, seq");
            let rows = select.build().fetch_all(&mut **tx).await?;
            let mut by_session: HashMap<String, Vec<StoredEvent>> = HashMap::new();
            for row in &rows {
                let event = read_event(row)?;
                by_session.entry(event.event.session_id.clone()).or_default().push(event);
            }
            // Where the sessions stood before (a list walk's positions, queries/walks.rs).
            let old_starts = session_starts(&mut **tx, scope, sessions).await?;
            let mut summaries = Vec::new();
            let mut nudges = Vec::new();
            let mut exposed = Vec::new();
            for id in sessions {
                if let Some(events) = by_session.get(*id) {
                    exposed.extend(exposures(events).into_iter().map(|x| (*id, x)));
                }
                if let Some((summary, mut shown)) = by_session.get(*id).and_then(|events| derive(id, events)) {
                    nudges.extend(shown.drain(..).map(|n| (n, summary.started_at_ms)));
                    summaries.push(summary);
                }
            }
            if !summaries.is_empty() {
                let mut upsert = QueryBuilder::<$db>::new(
                    "INSERT INTO sessions (site, mode, id, started_at, ended_at, page_count, intent_score, converted, nudge_count) ",
                );
                upsert.push_values(&summaries, |mut row, s| {
                    row.push_bind(scope.site.as_str())
                        .push_bind(mode)
                        .push_bind(s.id.as_str())
                        .push_bind(s.started_at_ms)
                        .push_bind(s.ended_at_ms)
                        .push_bind(s.page_count)
                        .push_bind(s.intent_score)
                        .push_bind(i64::from(s.converted))
                        .push_bind(s.nudge_count);
                });
                upsert.push(
                    " ON CONFLICT (site, mode, id) DO UPDATE SET started_at = excluded.started_at, ended_at = excluded.ended_at, \
                     page_count = excluded.page_count, intent_score = excluded.intent_score, converted = excluded.converted, \
                     nudge_count = excluded.nudge_count",
                );
                upsert.build().execute(&mut **tx).await?;
            }
            // The sessions' nudges and exposures are derived again whole: the old rows go first
            // (the nudges' old times kept, for the walks).
            let mut old_shown: HashMap<String, i64> = HashMap::new();
            for table in ["nudges", "exposures"] {
                let mut delete = QueryBuilder::<$db>::new(format!("DELETE FROM {table} WHERE site = "));
                delete.push_bind(scope.site.as_str()).push(" AND mode = ").push_bind(mode).push(" AND session_id IN (");
                let mut ids = delete.separated(", ");
                for id in sessions {
                    ids.push_bind(*id);
                }
                ids.push_unseparated(")");
                if table == "nudges" {
                    delete.push(" RETURNING id, shown_at");
                    for row in delete.build().fetch_all(&mut **tx).await? {
                        old_shown.insert(row.try_get("id")?, row.try_get("shown_at")?);
                    }
                } else {
                    delete.build().execute(&mut **tx).await?;
                }
            }
            let mut moves: Vec<(&str, &str, i64)> = Vec::new();
            for summary in &summaries {
                match old_starts.get(&summary.id) {
                    Some(&old) if old != summary.started_at_ms => moves.push(("session", summary.id.as_str(), old)),
                    _ => {}
                }
            }
            for (n, _) in &nudges {
                match old_shown.get(&n.id) {
                    Some(&old) if old != n.shown_at_ms => moves.push(("nudge", n.id.as_str(), old)),
                    _ => {}
                }
            }
            record_moves(tx, scope, &moves).await?;
            for chunk in nudges.chunks(NUDGES_PER_STATEMENT) {
                let mut insert = QueryBuilder::<$db>::new(
                    "INSERT INTO nudges (site, mode, id, session_id, type, shown_at, outcome, influenced_conversion, session_started_at) ",
                );
                insert.push_values(chunk, |mut row, (n, started_at_ms)| {
                    row.push_bind(scope.site.as_str())
                        .push_bind(mode)
                        .push_bind(n.id.as_str())
                        .push_bind(n.session_id.as_str())
                        .push_bind(n.nudge_type.as_str())
                        .push_bind(n.shown_at_ms)
                        .push_bind(n.outcome.as_str())
                        .push_bind(i64::from(n.influenced_conversion))
                        .push_bind(*started_at_ms);
                });
                insert.push(" ON CONFLICT (site, mode, id) DO NOTHING");
                insert.build().execute(&mut **tx).await?;
            }
            for chunk in exposed.chunks(EXPOSURES_PER_STATEMENT) {
                let mut insert = QueryBuilder::<$db>::new(
                    "INSERT INTO exposures (site, mode, session_id, rule_id, treated, exposed_at, converted, session_started_at) ",
                );
                insert.push_values(chunk, |mut row, (session_id, x)| {
                    row.push_bind(scope.site.as_str())
                        .push_bind(mode)
                        .push_bind(*session_id)
                        .push_bind(x.rule_id.as_str())
                        .push_bind(i64::from(x.treated))
                        .push_bind(x.exposed_at_ms)
                        .push_bind(i64::from(x.converted))
                        .push_bind(x.session_started_at_ms);
                });
                insert.push(" ON CONFLICT (site, mode, session_id, rule_id) DO NOTHING");
                insert.build().execute(&mut **tx).await?;
            }
            for (id, events) in &by_session {
                let purchases = events.iter().filter(|e| e.event.kind == EventKind::Purchase).count();
                if purchases > 0 {
                    found.purchases.insert(id.clone(), purchases);
                }
            }
            found.new_nudges.extend(nudges.iter().filter(|(n, _)| !old_shown.contains_key(&n.id)).map(|(n, _)| n.id.clone()));
            found.nudges.extend(nudges.into_iter().map(|(n, _)| n));
            found.sessions.extend(summaries);
            Ok(())
        }

        /// Writes `moves` (kind, id, the position's time the record left) under the next walk
        /// revision of `scope`, which this transaction holds until it commits (walks.rs).
        async fn record_moves(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &Scope,
            moves: &[(&str, &str, i64)],
        ) -> Result<(), StoreError> {
            if moves.is_empty() {
                return Ok(());
            }
            let mode = scope.mode.as_str();
            let rev: i64 = sqlx::query_scalar(
                "INSERT INTO walk_revs (site, mode, rev) VALUES ($1, $2, 1) \
                 ON CONFLICT (site, mode) DO UPDATE SET rev = walk_revs.rev + 1 RETURNING rev",
            )
            .bind(scope.site.as_str())
            .bind(mode)
            .fetch_one(&mut **tx)
            .await?;
            for chunk in moves.chunks(MOVES_PER_STATEMENT) {
                let mut insert = QueryBuilder::<$db>::new("INSERT INTO walk_moves (site, mode, kind, id, rev, old_at) ");
                insert.push_values(chunk, |mut row, (kind, id, old_at)| {
                    row.push_bind(scope.site.as_str())
                        .push_bind(mode)
                        .push_bind(*kind)
                        .push_bind(*id)
                        .push_bind(rev)
                        .push_bind(*old_at);
                });
                insert.push(" ON CONFLICT (site, mode, kind, id, rev) DO NOTHING");
                insert.build().execute(&mut **tx).await?;
            }
            Ok(())
        }

        /// One bounded step of the purge of `site` (both modes) before `before_ms`, in one
        /// short transaction, so that writers waiting for the store go between two steps
        /// ([`crate::store::Store::purge`]): up to `limit` sessions of each mode with their
        /// events, nudges and exposures; up to `limit` sessions of held-out events alone (no
        /// sessions row), by their exposures; up to `limit` walk moves that left a time past
        /// retention (a record's moves only go earlier, so its record is gone or going).
        /// Returns the sessions deleted and whether anything is left.
        pub(crate) async fn purge_step(
            pool: &Pool<$db>,
            site: &str,
            before_ms: i64,
            limit: u32,
        ) -> Result<(u64, bool), StoreError> {
            let mut tx = pool.begin().await?;
            let (mut deleted, mut more) = (0u64, false);
            let full = |n: usize| n >= usize::try_from(limit).unwrap_or(usize::MAX);
            for mode in [Mode::Live.as_str(), Mode::Test.as_str()] {
                let sessions: Vec<String> = sqlx::query_scalar(
                    "SELECT id FROM sessions WHERE site = $1 AND mode = $2 AND started_at < $3 ORDER BY started_at LIMIT $4",
                )
                .bind(site)
                .bind(mode)
                .bind(before_ms)
                .bind(limit_param(limit))
                .fetch_all(&mut *tx)
                .await?;
                more |= full(sessions.len());
                for table in ["events", "nudges", "exposures"] {
                    delete_of_sessions(&mut tx, table, "session_id", site, mode, &sessions).await?;
                }
                deleted += delete_of_sessions(&mut tx, "sessions", "id", site, mode, &sessions).await?;
                let held_out: Vec<String> = sqlx::query_scalar(
                    "SELECT DISTINCT session_id FROM exposures WHERE site = $1 AND mode = $2 AND session_started_at < $3 LIMIT $4",
                )
                .bind(site)
                .bind(mode)
                .bind(before_ms)
                .bind(limit_param(limit))
                .fetch_all(&mut *tx)
                .await?;
                more |= full(held_out.len());
                for table in ["events", "exposures"] {
                    delete_of_sessions(&mut tx, table, "session_id", site, mode, &held_out).await?;
                }
                let moves = sqlx::query(
                    "DELETE FROM walk_moves WHERE (site, mode, kind, id, rev) IN \
                     (SELECT site, mode, kind, id, rev FROM walk_moves WHERE site = $1 AND mode = $2 AND old_at < $3 LIMIT $4)",
                )
                .bind(site)
                .bind(mode)
                .bind(before_ms)
                .bind(limit_param(limit))
                .execute(&mut *tx)
                .await?
                .rows_affected();
                more |= full(usize::try_from(moves).unwrap_or(usize::MAX));
            }
            tx.commit().await?;
            Ok((deleted, more))
        }

        /// Deletes the rows of `table` whose `column` is one of `ids`, of `site` and `mode`;
        /// returns how many.
        async fn delete_of_sessions(
            tx: &mut sqlx::Transaction<'_, $db>,
            table: &str,
            column: &str,
            site: &str,
            mode: &str,
            ids: &[String],
        ) -> Result<u64, StoreError> {
            let mut deleted = 0;
            for chunk in ids.chunks(SESSIONS_PER_STATEMENT) {
                let mut delete = QueryBuilder::<$db>::new(format!("DELETE FROM {table} WHERE site = "));
                delete.push_bind(site).push(" AND mode = ").push_bind(mode).push(format!(" AND {column} IN ("));
                let mut list = delete.separated(", ");
                for id in chunk {
                    list.push_bind(id.as_str());
                }
                list.push_unseparated(")");
                deleted += delete.build().execute(&mut **tx).await?.rows_affected();
            }
            Ok(deleted)
        }
    };
}
