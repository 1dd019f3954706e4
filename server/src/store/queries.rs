//! The store's queries, written once: the [`queries!`] macro defines every function for one
//! sqlx database type, and is instantiated for SQLite and for PostgreSQL. Parameters are `$N`,
//! which both read; row values `(a, b) < ($1, $2)` make each list a keyset walk over its index.
//!
//! Each walk names one lower and one upper bound of its index's order: a window's edge and a
//! cursor on the same side are folded into one row value in Rust first ([`keyset_after`],
//! [`keyset_before`]). PostgreSQL takes a row value as an index condition where `a > $1 OR
//! (a = $1 AND b > $2)` is only a filter (a deep page read every row before it), and SQLite
//! starts its range from the first bound it is given: with two lower bounds a deep page read
//! every row from the window's start.

use crate::model::derive::{NudgeSummary, SessionSummary, derive, exposures};
use crate::model::event::{EventKind, NewEvent, Scope, StoredEvent};

use super::{InsertOutcome, StoreError};

/// The time window of a list request, all Unix milliseconds: records with time in
/// `[from_ms, to_ms)`, of sessions that started at or after `visible_from_ms` (retention).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListWindow {
    /// Inclusive start.
    pub from_ms: i64,
    /// Exclusive end.
    pub to_ms: i64,
    /// The retention window's start: older sessions (and their nudges) do not exist.
    pub visible_from_ms: i64,
}

impl ListWindow {
    /// The first instant whose sessions the window shows: its start or the retention window's,
    /// whichever is later (Unix milliseconds).
    pub fn visible_start_ms(&self) -> i64 {
        self.from_ms.max(self.visible_from_ms)
    }
}

/// The filters of `GET /v1/nudges` beyond time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NudgeFilter {
    /// Only this session's nudges.
    pub session_id: Option<String>,
    /// Only this nudge type.
    pub nudge_type: Option<String>,
}

/// An event of a session's log: a page event (API document 2.2 "Session event"), or in a
/// backtest page a NUDGE_HELD_OUT event too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionEvent {
    /// `PAGE_VIEW`, `ADD_TO_CART` or `PURCHASE` (or `NUDGE_HELD_OUT` in a backtest page).
    pub event_type: String,
    /// The URL as sent.
    pub url: String,
    /// Unix milliseconds.
    pub occurred_at_ms: i64,
    /// The SDK's intent score at that moment, when it sent one (SPEC 8 replay reads it).
    pub intent_score: Option<i64>,
    /// The rule of a `NUDGE_HELD_OUT` event, which a backtest page carries for the replay's
    /// caps (SPEC 15); `None` on page events (the only events of a session's detail).
    pub rule_id: Option<String>,
}

/// One session with its log (API document 2.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDetail {
    /// The derived fields.
    pub summary: SessionSummary,
    /// Page events by `occurred_at` (ties: arrival order).
    pub events: Vec<SessionEvent>,
    /// Shown nudges by `shown_at` (ties: id).
    pub nudges: Vec<NudgeSummary>,
}

/// One published config version (SPEC 13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigVersion {
    /// 1, 2, 3, ... per site and mode.
    pub version: i64,
    /// When it was published, Unix milliseconds.
    pub published_at_ms: i64,
    /// The first 8 hex digits of the publishing key's SHA-256.
    pub published_by: String,
    /// The publisher's message, at most 500 characters.
    pub message: Option<String>,
    /// SHA-256 of the config text, hex.
    pub sha256: String,
    /// The earlier version this one publishes again (a rollback).
    pub restores: Option<i64>,
    /// The config text; `None` when a list was read without the bodies.
    pub config: Option<String>,
}

/// A version to publish ([`crate::store::Store::publish`]).
#[derive(Clone, Copy, Debug)]
pub struct NewVersion<'a> {
    /// Unix milliseconds.
    pub published_at_ms: i64,
    /// The first 8 hex digits of the publishing key's SHA-256.
    pub published_by: &'a str,
    /// The publisher's message.
    pub message: Option<&'a str>,
    /// SHA-256 of `config`, hex.
    pub sha256: &'a str,
    /// The earlier version this one publishes again.
    pub restores: Option<i64>,
    /// The config text.
    pub config: &'a str,
}

/// What a publish did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Published {
    /// Stored as this version.
    Version(ConfigVersion),
    /// The precondition names another version than the latest: another publish came first
    /// (by this key or another). Nothing was stored.
    Stale {
        /// The latest version now, without its config (`None`: no version yet).
        current: Option<ConfigVersion>,
    },
    /// `restores` names a version the history does not have. Nothing was stored.
    NoSuchVersion(i64),
}

const EVENT_COLUMNS: &str = "seq, message_id, session_id, visitor_id, type, occurred_at, url, path_key, intent_score, nudge_id, nudge_type, rule_id, outcome";
const SESSION_COLUMNS: &str =
    "id, started_at, ended_at, page_count, intent_score, converted, nudge_count";
const NUDGE_COLUMNS: &str = "id, session_id, type, shown_at, outcome, influenced_conversion";
const VERSION_COLUMNS: &str = "version, published_at, published_by, message, sha256, restores";

/// The events replay reads of a session: its page events (API document 2.2, what the detail
/// endpoint lists) and its NUDGE_HELD_OUT events, which count for caps (SPEC 15).
const REPLAY_EVENT_TYPES: &str = "('PAGE_VIEW', 'ADD_TO_CART', 'PURCHASE', 'NUDGE_HELD_OUT')";

/// The sessions of one replay page, oldest first: `$1` site, `$2` mode, after `($3, $4)` in
/// (started_at, id) order ([`keyset_after`]), started before `$5`, at most `$6`.
const REPLAY_PAGE: &str = "SELECT id, started_at, ended_at, intent_score, converted FROM sessions \
     WHERE site = $1 AND mode = $2 AND (started_at, id) > ($3, $4) AND (started_at, id) <= ($5, $6) \
     ORDER BY started_at, id LIMIT $7";

/// Events per INSERT statement: 15 parameters each, under SQLite's 32,766 and PostgreSQL's
/// 65,535 parameters per statement.
const EVENTS_PER_STATEMENT: usize = 1000;
/// Sessions recomputed per statement (an `IN` list of ids).
const SESSIONS_PER_STATEMENT: usize = 500;
/// Nudge rows per INSERT statement (9 parameters each).
const NUDGES_PER_STATEMENT: usize = 2000;
/// Exposure rows per INSERT statement (8 parameters each).
const EXPOSURES_PER_STATEMENT: usize = 2000;

/// One rule's arm in a window, as [`crate::store::Store::uplift_counts`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArmCount {
    /// The rule.
    pub rule_id: String,
    /// The treated arm (shown) or the control arm (held out).
    pub treated: bool,
    /// Sessions exposed in this arm.
    pub sessions: i64,
    /// Of them, those with a PURCHASE at or after the exposure.
    pub converted: i64,
}

/// The lower bound of an ascending keyset walk over `(time, id)`: after `cursor` (the last row
/// read) and at or after `from_ms`, as one exclusive row value. `(from_ms, "")` stands for "at
/// or after `from_ms`": every id is longer than "", which sorts first in any collation.
fn keyset_after(from_ms: i64, cursor: Option<(i64, &str)>) -> (i64, &str) {
    cursor.map_or((from_ms, ""), |c| c.max((from_ms, "")))
}

/// The upper bound of a descending keyset walk over `(time, id)`: before `cursor` (the last
/// row read) and before `to_ms`, as one exclusive row value (`(to_ms, "")`: before `to_ms`).
fn keyset_before(to_ms: i64, cursor: Option<(i64, &str)>) -> (i64, &str) {
    cursor.map_or((to_ms, ""), |c| c.min((to_ms, "")))
}

/// The upper bound of an ascending keyset walk over `(time, id)`: up to and including `upto`
/// (a page's last row) and before `to_ms`, as one inclusive row value (`(to_ms, "")`: before
/// `to_ms`, as no id sorts at or before "").
fn keyset_upto(to_ms: i64, upto: Option<(i64, &str)>) -> (i64, &str) {
    upto.map_or((to_ms, ""), |u| u.min((to_ms, "")))
}

/// A session's list columns as read ([`SESSION_COLUMNS`]' order; `converted` is 0 or 1).
type SessionColumns = (String, i64, i64, i64, i64, i64, i64);

/// The derived fields of a session read as [`SessionColumns`].
fn session_summary(
    (id, started_at_ms, ended_at_ms, page_count, intent_score, converted, nudge_count): SessionColumns,
) -> SessionSummary {
    SessionSummary {
        id,
        started_at_ms,
        ended_at_ms,
        page_count,
        intent_score,
        converted: converted != 0,
        nudge_count,
    }
}

/// One request's page of `GET /v1/sessions`, owned, for [`postgres::list_session_pages`].
#[derive(Clone, Debug)]
pub(crate) struct SessionPageQuery {
    pub scope: Scope,
    pub window: ListWindow,
    /// The cursor position: the last row of the previous page, `(started_at, id)`.
    pub after: Option<(i64, String)>,
    pub limit: u32,
}

impl SessionPageQuery {
    /// The cursor position, borrowed.
    pub fn after(&self) -> Option<(i64, &str)> {
        self.after.as_ref().map(|(at, id)| (*at, id.as_str()))
    }
}

/// Clamps a page size to what SQL's LIMIT takes.
fn limit_param(limit: u32) -> i64 {
    i64::from(limit)
}

/// A tuple read from a row by column position (a page's rows in [`page_sql`]'s column order).
/// sqlx's `try_get` checks each value's type against the Rust type first, which cost a tenth
/// of the server's CPU on a list page; the columns here are the migrations' own (`BIGINT`,
/// `TEXT`), and a value of another width fails to decode rather than read wrong.
trait PageRow<R: sqlx::Row>: Sized {
    fn read(row: &R) -> Result<Self, sqlx::Error>;
}

macro_rules! page_row {
    ($($t:ident $i:tt),+) => {
        impl<R: sqlx::Row, $($t),+> PageRow<R> for ($($t,)+)
        where
            usize: sqlx::ColumnIndex<R>,
            $(for<'r> $t: sqlx::Decode<'r, R::Database>,)+
        {
            fn read(row: &R) -> Result<Self, sqlx::Error> {
                Ok(($(row.try_get_unchecked::<$t, usize>($i)?,)+))
            }
        }
    };
}

page_row!(A 0, B 1, C 2, D 3, E 4);
page_row!(A 0, B 1, C 2, D 3, E 4, F 5);
page_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
page_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

macro_rules! queries {
    ($db:ty, $row:ty, $group:literal, $array:literal, $json_pages:literal) => {
        use std::collections::{HashMap, HashSet};

        use sqlx::{Connection as _, Pool, QueryBuilder, Row};

        use super::*;

        /// The SQL of a page of rows: `SELECT columns FROM source ORDER BY order`. With
        /// `$json_pages` (SQLite) one row holds the page as a JSON array, because sqlx's SQLite
        /// driver hands every row between threads and one row per page pays that once;
        /// PostgreSQL's driver reads plain rows faster than the server builds JSON.
        fn page_sql(columns: &str, source: &str, order: &str) -> String {
            if $json_pages {
                format!("SELECT CAST({}({}({columns}) ORDER BY {order}) AS TEXT) AS page FROM {source}", $group, $array)
            } else {
                format!("SELECT {columns} FROM {source} ORDER BY {order}")
            }
        }

        /// The rows of a page read by [`page_sql`]'s query, as tuples in its column order.
        fn read_page<T>(rows: &[$row]) -> Result<Vec<T>, StoreError>
        where
            T: serde::de::DeserializeOwned + PageRow<$row>,
        {
            if $json_pages {
                match rows.first() {
                    None => Ok(Vec::new()),
                    Some(row) => match row.try_get::<Option<String>, _>("page")? {
                        None => Ok(Vec::new()),
                        Some(text) => serde_json::from_str(&text)
                            .map_err(|e| StoreError::new(format!("a page of rows did not read back: {e}"))),
                    },
                }
            } else {
                Ok(rows.iter().map(T::read).collect::<Result<Vec<T>, sqlx::Error>>()?)
            }
        }

        fn read_event(row: &$row) -> Result<StoredEvent, sqlx::Error> {
            let kind: String = row.try_get("type")?;
            let kind = EventKind::parse(&kind).ok_or_else(|| sqlx::Error::Decode(format!("unknown stored event type {kind:?}").into()))?;
            let intent: Option<i64> = row.try_get("intent_score")?;
            Ok(StoredEvent {
                seq: row.try_get("seq")?,
                event: NewEvent {
                    message_id: row.try_get("message_id")?,
                    session_id: row.try_get("session_id")?,
                    visitor_id: row.try_get("visitor_id")?,
                    kind,
                    occurred_at_ms: row.try_get("occurred_at")?,
                    url: row.try_get("url")?,
                    path_key: row.try_get("path_key")?,
                    intent_score: intent.and_then(|n| u8::try_from(n).ok()),
                    nudge_id: row.try_get("nudge_id")?,
                    nudge_type: row.try_get("nudge_type")?,
                    rule_id: row.try_get("rule_id")?,
                    outcome: row.try_get("outcome")?,
                },
            })
        }

        fn read_session(row: &$row) -> Result<SessionSummary, sqlx::Error> {
            Ok(SessionSummary {
                id: row.try_get("id")?,
                started_at_ms: row.try_get("started_at")?,
                ended_at_ms: row.try_get("ended_at")?,
                page_count: row.try_get("page_count")?,
                intent_score: row.try_get("intent_score")?,
                converted: row.try_get::<i64, _>("converted")? != 0,
                nudge_count: row.try_get("nudge_count")?,
            })
        }

        fn read_nudge(row: &$row) -> Result<NudgeSummary, sqlx::Error> {
            Ok(NudgeSummary {
                id: row.try_get("id")?,
                session_id: row.try_get("session_id")?,
                nudge_type: row.try_get("type")?,
                shown_at_ms: row.try_get("shown_at")?,
                outcome: row.try_get("outcome")?,
                influenced_conversion: row.try_get::<i64, _>("influenced_conversion")? != 0,
            })
        }

        /// Batches of events in one transaction: each batch's events (a `message_id` already
        /// stored, or twice in a batch, is a duplicate) and the derived fields of every session
        /// it touches; all committed by one commit, or none. One batch on PostgreSQL; on SQLite
        /// the batches queued together (a group commit, `group.rs`).
        pub(crate) async fn insert_groups(
            pool: &Pool<$db>,
            batches: &[(&Scope, &[NewEvent], i64)],
        ) -> Result<Vec<InsertOutcome>, StoreError> {
            let mut tx = pool.begin().await?;
            let mut outcomes = Vec::with_capacity(batches.len());
            for (scope, events, received_at_ms) in batches {
                outcomes.push(insert_batch(&mut tx, scope, events, *received_at_ms).await?);
            }
            tx.commit().await?;
            Ok(outcomes)
        }

        /// One batch inside the caller's transaction: the events (a `message_id` already
        /// stored, or twice in the batch, is a duplicate), then the derived fields of every
        /// session it touches.
        async fn insert_batch(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &Scope,
            events: &[NewEvent],
            received_at_ms: i64,
        ) -> Result<InsertOutcome, StoreError> {
            let mode = scope.mode.as_str();
            // A message id twice in one batch: the later ones are duplicates.
            let mut first_index: HashMap<&str, usize> = HashMap::new();
            for (index, e) in events.iter().enumerate() {
                first_index.entry(e.message_id.as_str()).or_insert(index);
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
                        .push_bind(e.nudge_type.as_deref())
                        .push_bind(e.rule_id.as_deref())
                        .push_bind(e.outcome.as_deref())
                        .push_bind(received_at_ms);
                });
                insert.push(" ON CONFLICT (site, mode, message_id) DO NOTHING RETURNING message_id");
                for row in insert.build().fetch_all(&mut **tx).await? {
                    stored.insert(row.try_get("message_id")?);
                }
            }
            let mut outcome = InsertOutcome::default();
            let mut touched: Vec<&str> = Vec::new();
            let mut touched_set: HashSet<&str> = HashSet::new();
            for (index, e) in events.iter().enumerate() {
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
            for sessions in touched.chunks(SESSIONS_PER_STATEMENT) {
                recompute(tx, scope, sessions).await?;
            }
            Ok(outcome)
        }

        /// Recomputes the derived fields of `sessions` from all their stored events, and
        /// writes their session rows and nudge rows.
        async fn recompute(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &Scope,
            sessions: &[&str],
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
            // The sessions' nudges and exposures are derived again whole: the old rows go first.
            for table in ["nudges", "exposures"] {
                let mut delete = QueryBuilder::<$db>::new(format!("DELETE FROM {table} WHERE site = "));
                delete.push_bind(scope.site.as_str()).push(" AND mode = ").push_bind(mode).push(" AND session_id IN (");
                let mut ids = delete.separated(", ");
                for id in sessions {
                    ids.push_bind(*id);
                }
                ids.push_unseparated(")");
                delete.build().execute(&mut **tx).await?;
            }
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
            Ok(())
        }

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

        pub(crate) async fn list_sessions(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            after: Option<(i64, &str)>,
            limit: u32,
        ) -> Result<Vec<SessionSummary>, StoreError> {
            let from = window.visible_start_ms();
            let (before_at, before_id) = keyset_before(window.to_ms, after);
            let rows = sqlx::query(&page_sql(
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
            Ok(page.into_iter().map(session_summary).collect())
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
                "SELECT type, url, occurred_at, intent_score FROM events \
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
                "e.session_id, e.type, e.url, e.occurred_at, e.intent_score, e.rule_id",
                &format!(
                    "({REPLAY_PAGE}) p JOIN events e ON e.site = $1 AND e.mode = $2 AND e.session_id = p.id \
                     WHERE e.type IN {REPLAY_EVENT_TYPES}"
                ),
                "p.started_at, p.id, e.occurred_at, e.seq",
            );
            let nudges_sql = page_sql(
                "session_id, id, type, shown_at, outcome, influenced_conversion",
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
            let events: Vec<(String, String, Option<String>, i64, Option<i64>, Option<String>)> = read_page(&events)?;
            let nudges: Vec<(String, String, String, i64, String, i64)> = read_page(&nudges)?;
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
            for (session_id, event_type, url, occurred_at_ms, intent_score, rule_id) in events {
                if let Some(d) = index.get(&session_id).and_then(|&i| details.get_mut(i)) {
                    d.events.push(SessionEvent { event_type, url: url.unwrap_or_default(), occurred_at_ms, intent_score, rule_id });
                }
            }
            for (session_id, id, nudge_type, shown_at_ms, outcome, influenced) in nudges {
                if let Some(d) = index.get(&session_id).and_then(|&i| details.get_mut(i)) {
                    d.nudges.push(NudgeSummary {
                        id,
                        session_id,
                        nudge_type,
                        shown_at_ms,
                        outcome,
                        influenced_conversion: influenced != 0,
                    });
                }
            }
            Ok(details)
        }

        fn read_version(row: &$row, with_config: bool) -> Result<ConfigVersion, sqlx::Error> {
            Ok(ConfigVersion {
                version: row.try_get("version")?,
                published_at_ms: row.try_get("published_at")?,
                published_by: row.try_get("published_by")?,
                message: row.try_get("message")?,
                sha256: row.try_get("sha256")?,
                restores: row.try_get("restores")?,
                config: if with_config { Some(row.try_get("config")?) } else { None },
            })
        }

        pub(crate) async fn config_version(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            version: Option<i64>,
        ) -> Result<Option<ConfigVersion>, StoreError> {
            let sql = match version {
                Some(_) => format!("SELECT {VERSION_COLUMNS}, config FROM config_versions WHERE site = $1 AND mode = $2 AND version = $3"),
                None => format!("SELECT {VERSION_COLUMNS}, config FROM config_versions WHERE site = $1 AND mode = $2 AND version >= $3 ORDER BY version DESC LIMIT 1"),
            };
            let row = sqlx::query(&sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(version.unwrap_or(0))
                .fetch_optional(&mut *conn)
                .await?;
            Ok(row.as_ref().map(|r| read_version(r, true)).transpose()?)
        }

        pub(crate) async fn list_versions(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            before: Option<i64>,
            limit: u32,
        ) -> Result<Vec<ConfigVersion>, StoreError> {
            let rows = sqlx::query(&format!(
                "SELECT {VERSION_COLUMNS} FROM config_versions WHERE site = $1 AND mode = $2 AND version < $3 \
                 ORDER BY version DESC LIMIT $4"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(before.unwrap_or(i64::MAX))
            .bind(limit_param(limit))
            .fetch_all(&mut *conn)
            .await?;
            Ok(rows.iter().map(|r| read_version(r, false)).collect::<Result<Vec<_>, _>>()?)
        }

        pub(crate) async fn latest_versions(conn: &mut <$db as sqlx::Database>::Connection) -> Result<Vec<(String, String, i64)>, StoreError> {
            let rows = sqlx::query("SELECT site, mode, MAX(version) AS version FROM config_versions GROUP BY site, mode")
                .fetch_all(&mut *conn)
                .await?;
            Ok(rows
                .iter()
                .map(|r| Ok((r.try_get("site")?, r.try_get("mode")?, r.try_get("version")?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()?)
        }

        pub(crate) async fn publish(
            pool: &Pool<$db>,
            scope: &Scope,
            expected: Option<i64>,
            new: &NewVersion<'_>,
        ) -> Result<Published, StoreError> {
            let mut tx = pool.begin().await?;
            let latest = format!(
                "SELECT {VERSION_COLUMNS} FROM config_versions WHERE site = $1 AND mode = $2 ORDER BY version DESC LIMIT 1"
            );
            let latest_row = sqlx::query(&latest)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .fetch_optional(&mut *tx)
                .await?;
            let latest_version = latest_row.as_ref().map(|r| read_version(r, false)).transpose()?;
            let current = latest_version.as_ref().map(|v| v.version);
            if current != expected {
                return Ok(Published::Stale { current: latest_version });
            }
            if let Some(restores) = new.restores {
                let found = sqlx::query("SELECT version FROM config_versions WHERE site = $1 AND mode = $2 AND version = $3")
                    .bind(&scope.site)
                    .bind(scope.mode.as_str())
                    .bind(restores)
                    .fetch_optional(&mut *tx)
                    .await?;
                if found.is_none() {
                    return Ok(Published::NoSuchVersion(restores));
                }
            }
            let version = current.unwrap_or(0) + 1;
            // Two publishers who both read `current` race here: the primary key lets one in;
            // the other inserts nothing and is told its version is stale.
            let row = sqlx::query(&format!(
                "INSERT INTO config_versions (site, mode, {VERSION_COLUMNS}, config) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (site, mode, version) DO NOTHING RETURNING version"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(version)
            .bind(new.published_at_ms)
            .bind(new.published_by)
            .bind(new.message)
            .bind(new.sha256)
            .bind(new.restores)
            .bind(new.config)
            .fetch_optional(&mut *tx)
            .await?;
            if row.is_none() {
                // The version the other publisher stored (committed: the insert waited for it).
                let winner = sqlx::query(&latest)
                    .bind(&scope.site)
                    .bind(scope.mode.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
                let winner = winner.as_ref().map(|r| read_version(r, false)).transpose()?;
                return Ok(Published::Stale { current: winner });
            }
            tx.commit().await?;
            Ok(Published::Version(ConfigVersion {
                version,
                published_at_ms: new.published_at_ms,
                published_by: new.published_by.to_owned(),
                message: new.message.map(str::to_owned),
                sha256: new.sha256.to_owned(),
                restores: new.restores,
                config: Some(new.config.to_owned()),
            }))
        }

        pub(crate) async fn list_nudges(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            window: &ListWindow,
            filter: &NudgeFilter,
            after: Option<(i64, &str)>,
            limit: u32,
        ) -> Result<Vec<NudgeSummary>, StoreError> {
            let (before_at, before_id) = keyset_before(window.to_ms, after);
            // `+session_started_at`: retention is a filter here, not a range to walk (without
            // statistics SQLite would walk nudges_by_session_start from the window's start).
            let mut sql = format!(
                "(SELECT {NUDGE_COLUMNS} FROM nudges \
                 WHERE site = $1 AND mode = $2 AND shown_at >= $3 AND (shown_at, id) < ($4, $5) \
                 AND +session_started_at >= $6"
            );
            let mut next = 7;
            if filter.session_id.is_some() {
                sql.push_str(&format!(" AND session_id = ${next}"));
                next += 1;
            }
            if filter.nudge_type.is_some() {
                sql.push_str(&format!(" AND type = ${next}"));
                next += 1;
            }
            sql.push_str(&format!(" ORDER BY shown_at DESC, id DESC LIMIT ${next}) page"));
            let sql = page_sql(NUDGE_COLUMNS, &sql, "shown_at DESC, id DESC");
            let mut query = sqlx::query(&sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(window.from_ms)
                .bind(before_at)
                .bind(before_id)
                .bind(window.visible_from_ms);
            if let Some(session_id) = &filter.session_id {
                query = query.bind(session_id);
            }
            if let Some(nudge_type) = &filter.nudge_type {
                query = query.bind(nudge_type);
            }
            let rows = query.bind(limit_param(limit)).fetch_all(&mut *conn).await?;
            let page: Vec<(String, String, String, i64, String, i64)> = read_page(&rows)?;
            Ok(page
                .into_iter()
                .map(|(id, session_id, nudge_type, shown_at_ms, outcome, influenced)| NudgeSummary {
                    id,
                    session_id,
                    nudge_type,
                    shown_at_ms,
                    outcome,
                    influenced_conversion: influenced != 0,
                })
                .collect())
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

        pub(crate) async fn purge(pool: &Pool<$db>, site: &str, before_ms: i64) -> Result<u64, StoreError> {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "DELETE FROM events WHERE site = $1 AND session_id IN \
                 (SELECT s.id FROM sessions s WHERE s.site = $1 AND s.mode = events.mode AND s.started_at < $2)",
            )
            .bind(site)
            .bind(before_ms)
            .execute(&mut *tx)
            .await?;
            // Sessions of held-out events alone have no sessions row: their events go by their
            // exposures.
            sqlx::query(
                "DELETE FROM events WHERE site = $1 AND session_id IN \
                 (SELECT x.session_id FROM exposures x WHERE x.site = $1 AND x.mode = events.mode AND x.session_started_at < $2)",
            )
            .bind(site)
            .bind(before_ms)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM exposures WHERE site = $1 AND session_started_at < $2")
                .bind(site)
                .bind(before_ms)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM nudges WHERE site = $1 AND session_started_at < $2")
                .bind(site)
                .bind(before_ms)
                .execute(&mut *tx)
                .await?;
            let deleted = sqlx::query("DELETE FROM sessions WHERE site = $1 AND started_at < $2")
                .bind(site)
                .bind(before_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok(deleted)
        }
    };
}

/// The queries on SQLite.
pub(crate) mod sqlite {
    queries!(
        sqlx::Sqlite,
        sqlx::sqlite::SqliteRow,
        "json_group_array",
        "json_array",
        true
    );
}

/// The queries on PostgreSQL.
pub(crate) mod postgres {
    queries!(
        sqlx::Postgres,
        sqlx::postgres::PgRow,
        "json_agg",
        "json_build_array",
        false
    );

    /// The list pages of several `GET /v1/sessions` requests (`batch.rs`), in one query: the
    /// requests' parameters go in as arrays, and each row says whose page it belongs to
    /// (`n`, 1-based). For each request the lateral subquery is the same keyset walk as
    /// [`list_sessions`]' over `sessions_by_start`, and the only plan PostgreSQL has for a
    /// lateral subquery that reads the outer row is a nested loop over the requests in their
    /// order: each page's rows come out together, in its `ORDER BY`.
    const SESSION_PAGES: &str = "SELECT q.n, s.id, s.started_at, s.ended_at, s.page_count, s.intent_score, s.converted, s.nudge_count \
         FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::BIGINT[]) \
         WITH ORDINALITY AS q(site, mode, from_ms, before_at, before_id, page_limit, n) \
         CROSS JOIN LATERAL (SELECT id, started_at, ended_at, page_count, intent_score, converted, nudge_count FROM sessions \
         WHERE site = q.site AND mode = q.mode AND started_at >= q.from_ms AND (started_at, id) < (q.before_at, q.before_id) \
         ORDER BY started_at DESC, id DESC LIMIT q.page_limit) s";

    /// Reads the pages of `pages` in one query; the result has one page per query, in order.
    pub(crate) async fn list_session_pages(
        conn: &mut sqlx::PgConnection,
        pages: &[SessionPageQuery],
    ) -> Result<Vec<Vec<SessionSummary>>, StoreError> {
        let mut sites = Vec::with_capacity(pages.len());
        let mut modes = Vec::with_capacity(pages.len());
        let mut froms = Vec::with_capacity(pages.len());
        let mut before_ats = Vec::with_capacity(pages.len());
        let mut before_ids = Vec::with_capacity(pages.len());
        let mut limits = Vec::with_capacity(pages.len());
        for page in pages {
            let (before_at, before_id) = keyset_before(page.window.to_ms, page.after());
            sites.push(page.scope.site.as_str());
            modes.push(page.scope.mode.as_str());
            froms.push(page.window.visible_start_ms());
            before_ats.push(before_at);
            before_ids.push(before_id);
            limits.push(limit_param(page.limit));
        }
        let rows = sqlx::query(SESSION_PAGES)
            .bind(&sites)
            .bind(&modes)
            .bind(&froms)
            .bind(&before_ats)
            .bind(&before_ids)
            .bind(&limits)
            .fetch_all(&mut *conn)
            .await?;
        let mut read: Vec<Vec<SessionSummary>> = pages
            .iter()
            .map(|page| Vec::with_capacity(usize::try_from(page.limit).unwrap_or(0)))
            .collect();
        for row in &rows {
            let (n, id, started_at, ended_at, page_count, intent_score, converted, nudge_count): (
                i64,
                String,
                i64,
                i64,
                i64,
                i64,
                i64,
                i64,
            ) = PageRow::read(row)?;
            let page = usize::try_from(n)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| read.get_mut(i))
                .ok_or_else(|| {
                    StoreError::new(format!(
                        "a list row of request {n}, of {} asked",
                        pages.len()
                    ))
                })?;
            page.push(session_summary((
                id,
                started_at,
                ended_at,
                page_count,
                intent_score,
                converted,
                nudge_count,
            )));
        }
        Ok(read)
    }
}
