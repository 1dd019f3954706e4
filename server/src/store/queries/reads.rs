//! The reads: the uplift report's counts, a session's detail, the backtest's replay pages,
//! sessions' start times. The lists' walks are in walks.rs.

macro_rules! reads {
    ($db:ty, $row:ty, $group:literal, $array:literal, $json_pages:literal) => {
        pub(crate) async fn uplift_counts(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
        ) -> Result<Vec<ArmCount>, StoreError> {
            let rows = sqlx::query(
                "SELECT rule_id, treated, COUNT(*) AS sessions, CAST(SUM(converted) AS BIGINT) AS converted FROM exposures \
                 WHERE site = $1 AND mode = $2 AND session_started_at >= $3 AND session_started_at < $4 \
                 GROUP BY rule_id, treated ORDER BY rule_id, treated",
            )
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(window.visible_start_ms())
            .bind(window.to_ms)
            .fetch_all(&mut *conn)
            .await?;
            Ok(rows
                .iter()
                .map(|r| {
                    Ok(ArmCount {
                        rule_id: r.try_get("rule_id")?,
                        treated: r.try_get::<i64, _>("treated")? != 0,
                        sessions: r.try_get("sessions")?,
                        converted: r.try_get::<Option<i64>, _>("converted")?.unwrap_or(0),
                    })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?)
        }

        pub(crate) async fn session(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            id: &str,
            visible_from_ms: i64,
        ) -> Result<Option<SessionDetail>, StoreError> {
            let mode = scope.mode.as_str();
            let row = sqlx::query(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions WHERE site = $1 AND mode = $2 AND id = $3 AND started_at >= $4"
            ))
            .bind(&scope.site)
            .bind(mode)
            .bind(id)
            .bind(visible_from_ms)
            .fetch_optional(&mut *conn)
            .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let summary = read_session(&row)?;
            let rows = sqlx::query(
                "SELECT type, url, occurred_at, intent_score, visitor_id FROM events \
                 WHERE site = $1 AND mode = $2 AND session_id = $3 AND type IN ('PAGE_VIEW', 'ADD_TO_CART', 'PURCHASE') \
                 ORDER BY occurred_at, seq",
            )
            .bind(&scope.site)
            .bind(mode)
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
            let events = rows
                .iter()
                .map(|row| {
                    Ok(SessionEvent {
                        event_type: row.try_get("type")?,
                        url: row.try_get::<Option<String>, _>("url")?.unwrap_or_default(),
                        occurred_at_ms: row.try_get("occurred_at")?,
                        intent_score: row.try_get("intent_score")?,
                        rule_id: None,
                        visitor_id: row.try_get("visitor_id")?,
                    })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?;
            let rows = sqlx::query(&format!(
                "SELECT {NUDGE_COLUMNS} FROM nudges WHERE site = $1 AND mode = $2 AND session_id = $3 ORDER BY shown_at, id"
            ))
            .bind(&scope.site)
            .bind(mode)
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
            let nudges = rows.iter().map(read_nudge).collect::<Result<Vec<_>, _>>()?;
            Ok(Some(SessionDetail { summary, events, nudges }))
        }

        pub(crate) async fn replay_bound(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            after: Option<(i64, &str)>,
            count: u32,
        ) -> Result<Option<(i64, String)>, StoreError> {
            let from = window.visible_start_ms();
            let (after_at, after_id) = keyset_after(from, after);
            let (upto_at, upto_id) = keyset_upto(window.to_ms, None);
            let row = sqlx::query(
                "SELECT started_at, id FROM sessions \
                 WHERE site = $1 AND mode = $2 AND (started_at, id) > ($3, $4) AND (started_at, id) <= ($5, $6) \
                 ORDER BY started_at, id LIMIT 1 OFFSET $7",
            )
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(after_at)
            .bind(after_id)
            .bind(upto_at)
            .bind(upto_id)
            .bind(limit_param(count.saturating_sub(1)))
            .fetch_optional(&mut *conn)
            .await?;
            Ok(row.map(|r| Ok::<_, sqlx::Error>((r.try_get("started_at")?, r.try_get("id")?))).transpose()?)
        }

        pub(crate) async fn replay_page(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            after: Option<(i64, &str)>,
            upto: Option<(i64, &str)>,
            limit: u32,
        ) -> Result<Vec<SessionDetail>, StoreError> {
            let from = window.visible_start_ms();
            let (after_at, after_id) = keyset_after(from, after);
            let (upto_at, upto_id) = keyset_upto(window.to_ms, upto);
            let mut tx = conn.begin().await?;
            // Three reads of one snapshot. The page's sessions first; then their page events,
            // looked up by session; then their nudges, a range of `nudges_by_session_start`
            // (a nudge row carries its session's start), which both backends walk in one pass
            // where a lookup per session cost PostgreSQL 15 ms per page.
            let sessions_sql = page_sql(
                "id, started_at, ended_at, intent_score, converted",
                &format!("({REPLAY_PAGE}) p"),
                "started_at, id",
            );
            let events_sql = page_sql(
                "e.session_id, e.type, e.url, e.occurred_at, e.intent_score, e.rule_id, e.visitor_id",
                &format!(
                    "({REPLAY_PAGE}) p JOIN events e ON e.site = $1 AND e.mode = $2 AND e.session_id = p.id \
                     WHERE e.type IN {REPLAY_EVENT_TYPES}"
                ),
                "p.started_at, p.id, e.occurred_at, e.seq",
            );
            let nudges_sql = page_sql(
                NUDGE_COLUMNS,
                "nudges WHERE site = $1 AND mode = $2 \
                 AND (session_started_at, session_id) > ($3, $4) AND (session_started_at, session_id) <= ($5, $6)",
                "session_started_at, session_id, shown_at, id",
            );
            let mut pages = Vec::with_capacity(2);
            for sql in [&sessions_sql, &events_sql] {
                let rows = sqlx::query(sql)
                    .bind(&scope.site)
                    .bind(scope.mode.as_str())
                    .bind(after_at)
                    .bind(after_id)
                    .bind(upto_at)
                    .bind(upto_id)
                    .bind(limit_param(limit))
                    .fetch_all(&mut *tx)
                    .await?;
                pages.push(rows);
            }
            let [sessions, events] = <[_; 2]>::try_from(pages)
                .map_err(|_| StoreError::new("a replay page did not read back"))?;
            let sessions: Vec<(String, i64, i64, i64, i64)> = read_page(&sessions)?;
            let Some((last_id, last_started_at_ms, ..)) = sessions.last() else {
                tx.commit().await?;
                return Ok(Vec::new());
            };
            let nudges = sqlx::query(&nudges_sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(after_at)
                .bind(after_id)
                .bind(*last_started_at_ms)
                .bind(last_id.as_str())
                .fetch_all(&mut *tx)
                .await?;
            tx.commit().await?;
            type EventColumns = (String, String, Option<String>, i64, Option<i64>, Option<String>, Option<String>);
            let events: Vec<EventColumns> = read_page(&events)?;
            let nudges: Vec<NudgeColumns> = read_page(&nudges)?;
            let mut details: Vec<SessionDetail> = Vec::with_capacity(sessions.len());
            let mut index: HashMap<String, usize> = HashMap::with_capacity(sessions.len());
            for (id, started_at_ms, ended_at_ms, intent_score, converted) in sessions {
                index.insert(id.clone(), details.len());
                details.push(SessionDetail {
                    summary: SessionSummary {
                        id,
                        started_at_ms,
                        ended_at_ms,
                        page_count: 0,
                        intent_score,
                        converted: converted != 0,
                        nudge_count: 0,
                    },
                    events: Vec::new(),
                    nudges: Vec::new(),
                });
            }
            for (session_id, event_type, url, occurred_at_ms, intent_score, rule_id, visitor_id) in events {
                if let Some(d) = index.get(&session_id).and_then(|&i| details.get_mut(i)) {
                    d.events.push(SessionEvent { event_type, url: url.unwrap_or_default(), occurred_at_ms, intent_score, rule_id, visitor_id });
                }
            }
            for columns in nudges {
                let nudge = nudge_summary(columns)?;
                if let Some(d) = index.get(&nudge.session_id).and_then(|&i| details.get_mut(i)) {
                    d.nudges.push(nudge);
                }
            }
            Ok(details)
        }

        pub(crate) async fn session_starts(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            ids: &[&str],
        ) -> Result<HashMap<String, i64>, StoreError> {
            let mut starts = HashMap::new();
            for chunk in ids.chunks(SESSIONS_PER_STATEMENT) {
                let mut select = QueryBuilder::<$db>::new("SELECT id, started_at FROM sessions WHERE site = ");
                select.push_bind(scope.site.as_str()).push(" AND mode = ").push_bind(scope.mode.as_str()).push(" AND id IN (");
                let mut list = select.separated(", ");
                for id in chunk {
                    list.push_bind(*id);
                }
                list.push_unseparated(")");
                for row in select.build().fetch_all(&mut *conn).await? {
                    starts.insert(row.try_get("id")?, row.try_get("started_at")?);
                }
            }
            Ok(starts)
        }
    };
}
