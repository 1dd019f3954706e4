//! The lists' keyset walks (docs/contract/read-api.md "Pagination"): `GET /v1/sessions` and `GET /v1/nudges`,
//! newest first over `(time, id)`.
//!
//! ## Walks when records move
//!
//! A record's time can move while a client walks the list: a late event with an earlier time
//! moves a session's `started_at`, a second NUDGE_SHOWN a nudge's `shown_at`. Walked by the
//! records' current times, a record already returned would come again further on. So a walk is
//! over the positions records had when it began:
//!
//! - each transaction that moves records takes the next walk revision of its site and mode
//!   (`walk_revs`, held until it commits) and writes each move, with the position the record
//!   left, to `walk_moves` (writes.rs);
//! - a page reads the revision in its own snapshot ([`walk_page_sql`]); the first page's
//!   revision is the walk's, and its cursor carries it;
//! - while no record has moved since, a page is the plain keyset page (the common case, the
//!   same query and plan as before);
//! - once records have moved, the page is read by the moved query: records not moved since
//!   the walk began at their own position, and each moved record at the position its first
//!   move after the walk's revision left, which is where it stood when the walk began. A
//!   position is then fixed for the walk's whole life, so each record comes exactly once, also
//!   when it moves twice or out of the window.

macro_rules! walks {
    ($db:ty, $row:ty, $group:literal, $array:literal, $json_pages:literal) => {
        /// A plain page of sessions that started in `window`, newest first, after `after`, at
        /// most `limit`; with the walk revision read in the same snapshot (`None`: an empty
        /// page on PostgreSQL, [`walk_rev`] reads it).
        pub(crate) async fn list_sessions(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            after: Option<(i64, &str)>,
            limit: u32,
        ) -> Result<(Vec<SessionSummary>, Option<i64>), StoreError> {
            let from = window.visible_start_ms();
            let (before_at, before_id) = keyset_before(window.to_ms, after);
            let rows = sqlx::query(&walk_page_sql(
                SESSION_COLUMNS,
                &format!(
                    "(SELECT {SESSION_COLUMNS} FROM sessions \
                     WHERE site = $1 AND mode = $2 AND started_at >= $3 AND (started_at, id) < ($4, $5) \
                     ORDER BY started_at DESC, id DESC LIMIT $6) page"
                ),
                "started_at DESC, id DESC",
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(from)
            .bind(before_at)
            .bind(before_id)
            .bind(limit_param(limit))
            .fetch_all(&mut *conn)
            .await?;
            let page: Vec<SessionColumns> = read_page(&rows)?;
            Ok((page.into_iter().map(session_summary).collect(), walk_rev_of(&rows)?))
        }

        /// A page of sessions in a walk that began at walk revision `rev`, after records
        /// moved (the module's notes): each with its position in the walk.
        pub(crate) async fn list_sessions_moved(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            after: Option<(i64, &str)>,
            rev: i64,
            limit: u32,
        ) -> Result<Vec<(SessionSummary, i64)>, StoreError> {
            let (before_at, before_id) = keyset_before(window.to_ms, after);
            let sql = format!(
                "SELECT {SESSION_COLUMNS}, walk_at FROM (SELECT {SESSION_COLUMNS}, started_at AS walk_at FROM sessions s \
                 WHERE site = $1 AND mode = $2 AND started_at >= $3 AND (started_at, id) < ($4, $5) \
                 AND NOT EXISTS (SELECT 1 FROM walk_moves m WHERE m.site = $1 AND m.mode = $2 AND m.kind = 'session' AND m.id = s.id AND m.rev > $6) \
                 ORDER BY started_at DESC, id DESC LIMIT $7) still \
                 UNION ALL \
                 SELECT {SESSION_COLUMNS}, walk_at FROM (SELECT {SESSION_COLUMNS}, mv.walk_at FROM ({FIRST_MOVES}) mv \
                 JOIN sessions ON sessions.site = $1 AND sessions.mode = $2 AND sessions.id = mv.moved_id \
                 WHERE mv.walk_at >= $3 AND (mv.walk_at, mv.moved_id) < ($4, $5)) moved \
                 ORDER BY walk_at DESC, id DESC LIMIT $7",
                FIRST_MOVES = first_moves("session"),
            );
            let rows = sqlx::query(&sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(window.visible_start_ms())
                .bind(before_at)
                .bind(before_id)
                .bind(rev)
                .bind(limit_param(limit))
                .fetch_all(&mut *conn)
                .await?;
            Ok(rows
                .iter()
                .map(|row| Ok((read_session(row)?, row.try_get("walk_at")?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()?)
        }

        /// A plain page of nudge events shown in `window` whose session is visible, newest
        /// first, after `after`; with the walk revision as [`list_sessions`].
        pub(crate) async fn list_nudges(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            filter: &NudgeFilter,
            after: Option<(i64, &str)>,
            limit: u32,
        ) -> Result<(Vec<NudgeSummary>, Option<i64>), StoreError> {
            let (before_at, before_id) = keyset_before(window.to_ms, after);
            // `+session_started_at`: retention is a filter here, not a range to walk (without
            // statistics SQLite would walk nudges_by_session_start from the window's start).
            let (filters, next) = nudge_filters(filter, 7);
            let sql = walk_page_sql(
                NUDGE_COLUMNS,
                &format!(
                    "(SELECT {NUDGE_COLUMNS} FROM nudges \
                     WHERE site = $1 AND mode = $2 AND shown_at >= $3 AND (shown_at, id) < ($4, $5) \
                     AND +session_started_at >= $6{filters} ORDER BY shown_at DESC, id DESC LIMIT ${next}) page"
                ),
                "shown_at DESC, id DESC",
            );
            let query = sqlx::query(&sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(window.from_ms)
                .bind(before_at)
                .bind(before_id)
                .bind(window.visible_from_ms);
            let rows = bind_nudge_filters(query, filter)
                .bind(limit_param(limit))
                .fetch_all(&mut *conn)
                .await?;
            let page: Vec<NudgeColumns> = read_page(&rows)?;
            let nudges = page.into_iter().map(nudge_summary).collect::<Result<_, _>>()?;
            Ok((nudges, walk_rev_of(&rows)?))
        }

        /// A page of nudge events in a walk that began at walk revision `rev`, after records
        /// moved, as [`list_sessions_moved`].
        pub(crate) async fn list_nudges_moved(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            filter: &NudgeFilter,
            after: Option<(i64, &str)>,
            rev: i64,
            limit: u32,
        ) -> Result<Vec<(NudgeSummary, i64)>, StoreError> {
            let (before_at, before_id) = keyset_before(window.to_ms, after);
            let (filters, next) = nudge_filters(filter, 7);
            let (rev_param, limit_param_n) = (next, next + 1);
            let sql = format!(
                "SELECT {NUDGE_COLUMNS}, walk_at FROM (SELECT {NUDGE_COLUMNS}, shown_at AS walk_at FROM nudges n \
                 WHERE site = $1 AND mode = $2 AND shown_at >= $3 AND (shown_at, id) < ($4, $5) \
                 AND +session_started_at >= $6{filters} \
                 AND NOT EXISTS (SELECT 1 FROM walk_moves m WHERE m.site = $1 AND m.mode = $2 AND m.kind = 'nudge' AND m.id = n.id AND m.rev > ${rev_param}) \
                 ORDER BY shown_at DESC, id DESC LIMIT ${limit_param_n}) still \
                 UNION ALL \
                 SELECT {NUDGE_COLUMNS}, walk_at FROM (SELECT {NUDGE_COLUMNS}, mv.walk_at FROM ({FIRST_MOVES}) mv \
                 JOIN nudges ON nudges.site = $1 AND nudges.mode = $2 AND nudges.id = mv.moved_id \
                 WHERE mv.walk_at >= $3 AND (mv.walk_at, mv.moved_id) < ($4, $5) AND session_started_at >= $6{filters}) moved \
                 ORDER BY walk_at DESC, id DESC LIMIT ${limit_param_n}",
                FIRST_MOVES = first_moves_at("nudge", rev_param),
            );
            let query = sqlx::query(&sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(window.from_ms)
                .bind(before_at)
                .bind(before_id)
                .bind(window.visible_from_ms);
            let rows = bind_nudge_filters(query, filter)
                .bind(rev)
                .bind(limit_param(limit))
                .fetch_all(&mut *conn)
                .await?;
            Ok(rows
                .iter()
                .map(|row| Ok((read_nudge(row)?, row.try_get("walk_at")?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()?)
        }

        /// The walk revision of `scope` now (0 before any move).
        pub(crate) async fn walk_rev(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
        ) -> Result<i64, StoreError> {
            let rev: Option<i64> = sqlx::query_scalar("SELECT rev FROM walk_revs WHERE site = $1 AND mode = $2")
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            Ok(rev.unwrap_or(0))
        }

        /// `query` with the nudge filters' values bound, in [`nudge_filters`]' order.
        fn bind_nudge_filters<'q>(
            mut query: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>,
            filter: &'q NudgeFilter,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>> {
            if let Some(session_id) = &filter.session_id {
                query = query.bind(session_id);
            }
            if let Some(nudge_type) = filter.nudge_type {
                query = query.bind(nudge_type.as_str());
            }
            query
        }
    };
}
