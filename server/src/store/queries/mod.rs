//! The store's queries, written once: one macro per room and file (`rows!`, `reads!`, `walks!`,
//! `writes!`, `versions!`, `webhooks!`, `deliveries!`) defines every function for one sqlx
//! database type, instantiated for SQLite ([`sqlite`]) and for PostgreSQL ([`postgres`]).
//! Parameters are `$N`, which both read; row values `(a, b) < ($1, $2)` make each list a keyset walk over its index.
//!
//! Each walk names one lower and one upper bound of its index's order: a window's edge and a
//! cursor on the same side are folded into one row value in Rust first ([`keyset_after`],
//! [`keyset_before`]). PostgreSQL takes a row value as an index condition where `a > $1 OR
//! (a = $1 AND b > $2)` is only a filter (a deep page read every row before it), and SQLite
//! starts its range from the first bound it is given: with two lower bounds a deep page read
//! every row from the window's start.

use nudge_rules::{NudgeOutcome, NudgeType};

use crate::domain::derive::{NudgeSummary, SessionSummary, derive, exposures};
use crate::domain::event::{EventKind, Mode, NewEvent, Scope, StoredEvent};
use crate::domain::webhook::outbox::Recomputed;
pub use crate::domain::wire::ConfigVersion;

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
    pub nudge_type: Option<NudgeType>,
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
    /// The SDK's intent score at that moment, when it sent one (docs/contract/as-code.md replay reads it).
    pub intent_score: Option<i64>,
    /// The rule of a `NUDGE_HELD_OUT` event, which a backtest page carries for the replay's
    /// caps (docs/contract/caps.md); `None` on page events (the only events of a session's detail).
    pub rule_id: Option<String>,
    /// The event's `visitor_id` (docs/contract/caps.md), when the storefront sent one: a backtest replays
    /// the session with its visitor, so holdouts apply.
    pub visitor_id: Option<String>,
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
/// endpoint lists) and its NUDGE_HELD_OUT events, which count for caps (docs/contract/caps.md).
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
/// Walk moves per INSERT statement (6 parameters each).
const MOVES_PER_STATEMENT: usize = 2000;
/// Webhook messages (or deliveries) per INSERT statement (6 parameters each).
const MESSAGES_PER_STATEMENT: usize = 1000;
/// Webhook attempts per INSERT (10 parameters each) or deliveries per UPDATE (6 each).
const ATTEMPTS_PER_STATEMENT: usize = 500;

/// Most deliveries to one endpoint in flight at a time, across every instance (docs/contract/webhooks.md).
pub const MAX_IN_FLIGHT: i64 = 8;

/// A claim of due deliveries (docs/contract/webhooks.md "Many instances"): those due at `now_ms`, each for a
/// lease until `now_ms + lease_ms`, at most `max` in all (and at most 8 in flight per endpoint
/// across every instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// Now, Unix ms.
    pub now_ms: i64,
    /// How long the claim lasts, ms.
    pub lease_ms: i64,
    /// The most deliveries claimed.
    pub max: usize,
}

const ENDPOINT_COLUMNS: &str = "id, url, event_types, description, status, secret, previous_secret, previous_secret_until, failing_since, created_at, updated_at";

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

/// The first move of each record of `kind` (`'session'` or `'nudge'`) after the walk revision
/// bound as `$rev_param`, with `$1` the site and `$2` the mode: the record's id (`moved_id`) and
/// the position it left (`walk_at`), where it stood when the walk began (walks.rs).
fn first_moves_at(kind: &str, rev_param: usize) -> String {
    format!(
        "SELECT m.id AS moved_id, m.old_at AS walk_at FROM walk_moves m \
         WHERE m.site = $1 AND m.mode = $2 AND m.kind = '{kind}' AND m.rev > ${rev_param} \
         AND NOT EXISTS (SELECT 1 FROM walk_moves e WHERE e.site = $1 AND e.mode = $2 AND e.kind = '{kind}' \
         AND e.id = m.id AND e.rev > ${rev_param} AND e.rev < m.rev)"
    )
}

/// [`first_moves_at`] with the revision bound as `$6`.
fn first_moves(kind: &str) -> String {
    first_moves_at(kind, 6)
}

/// The SQL of the nudge list's filters beyond time, their parameters numbered from `first`;
/// and the next parameter's number.
fn nudge_filters(filter: &NudgeFilter, first: usize) -> (String, usize) {
    let mut sql = String::new();
    let mut next = first;
    if filter.session_id.is_some() {
        sql.push_str(&format!(" AND session_id = ${next}"));
        next += 1;
    }
    if filter.nudge_type.is_some() {
        sql.push_str(&format!(" AND type = ${next}"));
        next += 1;
    }
    (sql, next)
}

/// A nudge event's list columns as read ([`NUDGE_COLUMNS`]' order; the type and outcome as
/// their `TEXT`).
type NudgeColumns = (String, String, String, i64, String, i64);

/// A nudge event's list columns as read ([`NUDGE_COLUMNS`]' order).
///
/// # Errors
///
/// A decode error for a type or outcome no version of the server writes.
fn nudge_summary(
    (id, session_id, nudge_type, shown_at_ms, outcome, influenced): NudgeColumns,
) -> Result<NudgeSummary, sqlx::Error> {
    Ok(NudgeSummary {
        id,
        session_id,
        nudge_type: stored_type(&nudge_type)?,
        shown_at_ms,
        outcome: stored_outcome(&outcome)?,
        influenced_conversion: influenced != 0,
    })
}

/// The nudge type of a `type` or `nudge_type` column: the core's enum, written as
/// [`NudgeType::as_str`] (the one place the store reads it back).
///
/// # Errors
///
/// A decode error naming the text, for a value no version of the server writes.
fn stored_type(text: &str) -> Result<NudgeType, sqlx::Error> {
    NudgeType::from_wire(text)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown stored nudge type {text:?}").into()))
}

/// The outcome of an `outcome` column, as [`stored_type`].
///
/// # Errors
///
/// A decode error naming the text, for a value no version of the server writes.
fn stored_outcome(text: &str) -> Result<NudgeOutcome, sqlx::Error> {
    NudgeOutcome::from_wire(text)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown stored outcome {text:?}").into()))
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

/// One request's page of `GET /v1/nudges` without filters, as the page batcher (`batch.rs`)
/// reads it.
#[derive(Clone, Debug)]
pub(crate) struct NudgePageQuery {
    pub scope: Scope,
    pub window: ListWindow,
    /// No `session_id` and no `type`: filtered pages are read alone.
    pub filter: NudgeFilter,
    /// The cursor position: the last row of the previous page, `(shown_at, id)`.
    pub after: Option<(i64, String)>,
    pub limit: u32,
}

impl NudgePageQuery {
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

// The queries, one macro per room, each instantiated for both backends below in one scope (the
// helpers of `rows!` serve the others): `$db` the sqlx database, `$row` its row type, `$group`
// and `$array` its JSON aggregate and array functions, `$json_pages` whether a page is read as
// one JSON row.
mod outbox;
use outbox::Outbox;

#[macro_use]
mod rows;
#[macro_use]
mod reads;
#[macro_use]
mod walks;
#[macro_use]
mod versions;
#[macro_use]
mod writes;
#[macro_use]
mod webhooks;
#[macro_use]
mod deliveries;

/// The queries on SQLite.
pub(crate) mod sqlite {
    rows!(
        sqlx::Sqlite,
        sqlx::sqlite::SqliteRow,
        "json_group_array",
        "json_array",
        true
    );
    writes!(
        sqlx::Sqlite,
        sqlx::sqlite::SqliteRow,
        "json_group_array",
        "json_array",
        true
    );
    reads!(
        sqlx::Sqlite,
        sqlx::sqlite::SqliteRow,
        "json_group_array",
        "json_array",
        true
    );
    walks!(
        sqlx::Sqlite,
        sqlx::sqlite::SqliteRow,
        "json_group_array",
        "json_array",
        true
    );
    versions!(
        sqlx::Sqlite,
        sqlx::sqlite::SqliteRow,
        "json_group_array",
        "json_array",
        true
    );
    /// No row locks: SQLite's one writer orders every claim and every change.
    const ROW_LOCKS: &str = "";
    const FOR_UPDATE: &str = "";
    /// SQLite's commits are relaxed per connection: set with the `BEGIN`, set back to FULL
    /// after the visit by the writing task (`store/group.rs`).
    const RELAXED_BEGIN: &str = "PRAGMA synchronous = NORMAL; BEGIN";
    use super::outbox::sqlite::enqueue;
    webhooks!(sqlx::Sqlite, sqlx::sqlite::SqliteRow);
    deliveries!(sqlx::Sqlite);
}

/// The queries on PostgreSQL.
pub(crate) mod postgres {
    rows!(
        sqlx::Postgres,
        sqlx::postgres::PgRow,
        "json_agg",
        "json_build_array",
        false
    );
    writes!(
        sqlx::Postgres,
        sqlx::postgres::PgRow,
        "json_agg",
        "json_build_array",
        false
    );
    reads!(
        sqlx::Postgres,
        sqlx::postgres::PgRow,
        "json_agg",
        "json_build_array",
        false
    );
    walks!(
        sqlx::Postgres,
        sqlx::postgres::PgRow,
        "json_agg",
        "json_build_array",
        false
    );
    versions!(
        sqlx::Postgres,
        sqlx::postgres::PgRow,
        "json_agg",
        "json_build_array",
        false
    );
    /// Each due row (and the endpoint's row) is taken by one instance (docs/contract/webhooks.md).
    const ROW_LOCKS: &str = " FOR UPDATE SKIP LOCKED";
    /// A row read to be changed in the same transaction waits for other writers of it.
    const FOR_UPDATE: &str = " FOR UPDATE";
    /// The worker's claims and results need not wait for the WAL's flush (sent as one simple
    /// query, so one round trip).
    const RELAXED_BEGIN: &str = "BEGIN; SET LOCAL synchronous_commit = off";
    use super::outbox::postgres::enqueue;
    webhooks!(sqlx::Postgres, sqlx::postgres::PgRow);
    deliveries!(sqlx::Postgres);

    /// The list pages of several `GET /v1/sessions` requests (`batch.rs`), in one query: the
    /// requests' parameters go in as arrays, and each row says whose page it belongs to
    /// (`n`, 1-based). For each request the lateral subquery is the same keyset walk as
    /// [`list_sessions`]' over `sessions_by_start`, and the only plan PostgreSQL has for a
    /// lateral subquery that reads the outer row is a nested loop over the requests in their
    /// order: each page's rows come out together, in its `ORDER BY`.
    /// Each row also carries its site and mode's walk revision (walks.rs), as
    /// [`list_sessions`]' rows do.
    const SESSION_PAGES: &str = "SELECT q.n, s.id, s.started_at, s.ended_at, s.page_count, s.intent_score, s.converted, s.nudge_count, w.rev AS walk_rev \
         FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::BIGINT[]) \
         WITH ORDINALITY AS q(site, mode, from_ms, before_at, before_id, page_limit, n) \
         LEFT JOIN walk_revs w ON w.site = q.site AND w.mode = q.mode \
         CROSS JOIN LATERAL (SELECT id, started_at, ended_at, page_count, intent_score, converted, nudge_count FROM sessions \
         WHERE site = q.site AND mode = q.mode AND started_at >= q.from_ms AND (started_at, id) < (q.before_at, q.before_id) \
         ORDER BY started_at DESC, id DESC LIMIT q.page_limit) s";

    /// The list pages of several unfiltered `GET /v1/nudges` requests in one query, as
    /// [`SESSION_PAGES`] for sessions: for each request the lateral subquery is
    /// [`list_nudges`]' keyset walk over `nudges_by_shown` (retention a filter, as there).
    const NUDGE_PAGES: &str = "SELECT q.n, s.id, s.session_id, s.type, s.shown_at, s.outcome, s.influenced_conversion, w.rev AS walk_rev \
         FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::BIGINT[], $7::BIGINT[]) \
         WITH ORDINALITY AS q(site, mode, from_ms, before_at, before_id, visible_ms, page_limit, n) \
         LEFT JOIN walk_revs w ON w.site = q.site AND w.mode = q.mode \
         CROSS JOIN LATERAL (SELECT id, session_id, type, shown_at, outcome, influenced_conversion FROM nudges \
         WHERE site = q.site AND mode = q.mode AND shown_at >= q.from_ms AND (shown_at, id) < (q.before_at, q.before_id) \
         AND session_started_at >= q.visible_ms ORDER BY shown_at DESC, id DESC LIMIT q.page_limit) s";

    /// Reads the pages of `pages` (no filters) in one query; one page per query, in order.
    pub(crate) async fn list_nudge_pages(
        conn: &mut sqlx::PgConnection,
        pages: &[NudgePageQuery],
    ) -> Result<Vec<(Vec<NudgeSummary>, Option<i64>)>, StoreError> {
        let walks = KeysetArrays::of(pages.iter().map(|page| {
            let (before_at, before_id) = keyset_before(page.window.to_ms, page.after());
            (
                &page.scope,
                page.window.from_ms,
                (before_at, before_id),
                page.limit,
            )
        }));
        let visibles: Vec<i64> = pages.iter().map(|p| p.window.visible_from_ms).collect();
        let rows = walks
            .bind_walks(sqlx::query(NUDGE_PAGES))
            .bind(&visibles)
            .bind(&walks.limits)
            .fetch_all(&mut *conn)
            .await?;
        let mut read: Vec<(Vec<NudgeSummary>, Option<i64>)> =
            pages.iter().map(|_| (Vec::new(), None)).collect();
        for row in &rows {
            let (n, id, session_id, nudge_type, shown_at_ms, outcome, influenced): (
                i64,
                String,
                String,
                String,
                i64,
                String,
                i64,
            ) = PageRow::read(row)?;
            let page = batched_page(&mut read, n, row)?;
            page.0.push(nudge_summary((
                id,
                session_id,
                nudge_type,
                shown_at_ms,
                outcome,
                influenced,
            ))?);
        }
        Ok(read)
    }

    /// The batched pages' keyset walks as the `unnest` of [`SESSION_PAGES`] and [`NUDGE_PAGES`]
    /// takes them: one array per column, one element per request, in order.
    struct KeysetArrays<'a> {
        sites: Vec<&'a str>,
        modes: Vec<&'a str>,
        from_ms: Vec<i64>,
        before_ats: Vec<i64>,
        before_ids: Vec<&'a str>,
        limits: Vec<i64>,
    }

    impl<'a> KeysetArrays<'a> {
        /// From each request's scope, lower bound (ms), exclusive upper `(at, id)` and limit.
        fn of(walks: impl ExactSizeIterator<Item = (&'a Scope, i64, (i64, &'a str), u32)>) -> Self {
            let n = walks.len();
            let mut arrays = KeysetArrays {
                sites: Vec::with_capacity(n),
                modes: Vec::with_capacity(n),
                from_ms: Vec::with_capacity(n),
                before_ats: Vec::with_capacity(n),
                before_ids: Vec::with_capacity(n),
                limits: Vec::with_capacity(n),
            };
            for (scope, from_ms, (before_at, before_id), limit) in walks {
                arrays.sites.push(scope.site.as_str());
                arrays.modes.push(scope.mode.as_str());
                arrays.from_ms.push(from_ms);
                arrays.before_ats.push(before_at);
                arrays.before_ids.push(before_id);
                arrays.limits.push(limit_param(limit));
            }
            arrays
        }

        /// Binds `$1` to `$5`: sites, modes, lower bounds, and the upper bounds' times and ids.
        fn bind_walks<'q>(
            &'q self,
            query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
        ) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
            query
                .bind(&self.sites)
                .bind(&self.modes)
                .bind(&self.from_ms)
                .bind(&self.before_ats)
                .bind(&self.before_ids)
        }
    }

    /// The page of batched request `n` (1-based) that `row` belongs to, its walk revision taken
    /// from the first row that comes for it.
    ///
    /// # Errors
    ///
    /// A row of a request that was not asked, or a revision that does not decode.
    fn batched_page<'p, T>(
        read: &'p mut [(Vec<T>, Option<i64>)],
        n: i64,
        row: &sqlx::postgres::PgRow,
    ) -> Result<&'p mut (Vec<T>, Option<i64>), StoreError> {
        let asked = read.len();
        let page = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| read.get_mut(i))
            .ok_or_else(|| {
                StoreError::new(format!("a list row of request {n}, of {asked} asked"))
            })?;
        if page.1.is_none() {
            page.1 = Some(row.try_get::<Option<i64>, _>("walk_rev")?.unwrap_or(0));
        }
        Ok(page)
    }

    /// Reads the pages of `pages` in one query; the result has one page per query, in order.
    pub(crate) async fn list_session_pages(
        conn: &mut sqlx::PgConnection,
        pages: &[SessionPageQuery],
    ) -> Result<Vec<(Vec<SessionSummary>, Option<i64>)>, StoreError> {
        let walks = KeysetArrays::of(pages.iter().map(|page| {
            let before = keyset_before(page.window.to_ms, page.after());
            (
                &page.scope,
                page.window.visible_start_ms(),
                before,
                page.limit,
            )
        }));
        let rows = walks
            .bind_walks(sqlx::query(SESSION_PAGES))
            .bind(&walks.limits)
            .fetch_all(&mut *conn)
            .await?;
        let mut read: Vec<(Vec<SessionSummary>, Option<i64>)> = pages
            .iter()
            .map(|page| {
                (
                    Vec::with_capacity(usize::try_from(page.limit).unwrap_or(0)),
                    None,
                )
            })
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
            let page = batched_page(&mut read, n, row)?;
            page.0.push(session_summary((
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
