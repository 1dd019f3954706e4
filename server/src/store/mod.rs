//! The store (docs/contract/store.md): sessions, their events and their nudges, per site and mode, in SQLite
//! (one machine: `sqlite:PATH`, WAL, one writer) or PostgreSQL (many instances:
//! `postgres://...`). One interface, the same schema through embedded migrations
//! (`server/migrations/`), applied at start under the migrator's lock.
//!
//! Every query text is written once, with `$N` parameters, which both backends read
//! (`queries/`). Times are Unix milliseconds.
//!
//! Writes are whole transactions: a batch of events is stored entirely or not at all, and
//! [`Store::insert_events`] returns only after the commit. Every failure of the database
//! (unreachable, timed out, refused) is a [`StoreError`], which the API answers with 503.

mod group;
mod lease;
mod queries;
mod stats;
mod writing;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::domain::cursor::{Position, Walk, WalkPage};
use crate::domain::derive::{NudgeSummary, SessionSummary};
use crate::domain::event::{NewEvent, Scope};
use crate::tasks::Tasks;

pub use queries::MAX_IN_FLIGHT as MAX_WEBHOOK_IN_FLIGHT;
pub use queries::{
    ArmCount, ConfigVersion, ListWindow, NewVersion, NudgeFilter, Published, SessionDetail,
    SessionEvent,
};

/// Reading connections of a SQLite store (each runs on a thread of its own in sqlx's SQLite
/// driver; 16 measured no faster than 4 on 2 cores).
const SQLITE_READERS: u32 = 4;

/// Sessions per mode deleted by one step of the purge ([`Store::purge`]): a few milliseconds
/// of the writer's time with about ten events each.
pub const PURGE_STEP_SESSIONS: u32 = 100;

/// Reading connections to PostgreSQL per instance.
const POSTGRES_READERS: u32 = 16;

/// How long a request waits for a database connection before the store counts as unreachable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// Why the store could not answer. Always a 503 for the API (docs/contract/read-api.md "Errors": never a 500).
#[derive(Clone, Debug)]
pub struct StoreError {
    message: String,
}

impl StoreError {
    pub(crate) fn new(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "store: {}", self.message)
    }
}

impl std::error::Error for StoreError {}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        StoreError::new(e.to_string())
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> StoreError {
        StoreError::new(format!("migration failed: {e}"))
    }
}

/// Which database, and its pools.
#[derive(Clone, Debug)]
enum Backend {
    /// One file; one connection writes (SQLite has one writer), several read (WAL).
    Sqlite {
        writer: SqlitePool,
        reader: Arc<lease::Leases<sqlx::Sqlite>>,
        /// The writing task: event batches go through it, several per transaction, and the
        /// webhook worker's visits between them, on the connection it holds (`group.rs`).
        group: group::GroupWriter,
    },
    /// Writes (and the migrations) on `pool`, reads on `reader` (their plans: [`Store::open_with`]).
    Postgres {
        pool: PgPool,
        reader: Arc<lease::Leases<sqlx::Postgres>>,
        /// List pages go through it, several per query (`batch.rs`).
        pages: batch::SessionPages,
        /// `GET /v1/nudges`' pages without filters, the same way (a filtered page is read
        /// alone on `reader`).
        nudge_pages: batch::NudgePages,
    },
}

/// Runs the read `$f(args)` of [`queries`] on a connection leased from `$reader`, which keeps
/// the connection for the next read when the read succeeds (`lease.rs`).
macro_rules! leased {
    ($reader:expr, $($f:ident)::+($($arg:expr),*)) => {{
        let mut lease = $reader.take().await?;
        let read = $($f)::+(lease.connection(), $($arg),*).await;
        if read.is_ok() {
            lease.finish();
        }
        read
    }};
}

mod batch;

/// Calls the query function `$f` of [`queries`] for whichever backend `$store` has, on a
/// leased read connection (`read`; kept for the next read when `$f` succeeds, `lease.rs`) or on
/// its write pool (`write`).
macro_rules! dispatch {
    ($store:expr, read, $f:ident($($arg:expr),*)) => {
        match &$store.backend {
            Backend::Sqlite { reader, .. } => leased!(reader, queries::sqlite::$f($($arg),*)),
            Backend::Postgres { reader, .. } => leased!(reader, queries::postgres::$f($($arg),*)),
        }
    };
    ($store:expr, write, $f:ident($($arg:expr),*)) => {
        match &$store.backend {
            Backend::Sqlite { writer, .. } => queries::sqlite::$f(writer, $($arg),*).await,
            Backend::Postgres { pool, .. } => queries::postgres::$f(pool, $($arg),*).await,
        }
    };
}

// After `dispatch!`, which it calls.
mod webhooks;

/// The store: cheap to clone (the pools are shared).
#[derive(Clone, Debug)]
pub struct Store {
    backend: Backend,
    url_shown: String,
    batches: writing::Batches,
}

/// What [`Store::insert_events`] did with each event of a batch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InsertOutcome {
    /// Events stored.
    pub accepted: usize,
    /// Indexes (in the batch) of events whose `message_id` was stored before: nothing changed.
    pub duplicates: Vec<usize>,
    /// Indexes (in the batch, ascending) of events refused for coming more than the batch's
    /// `max_session_age_ms` after their session's start ([`Store::insert_events_within`]):
    /// not stored.
    pub too_late: Vec<usize>,
    /// Indexes (in the batch, ascending) of `chat_opened` outcomes of a nudge whose type is
    /// known (its NUDGE_SHOWN stored or in the batch) and is not a chat bubble (docs/contract/relay.md): not
    /// stored.
    pub wrong_outcome: Vec<usize>,
}

impl Store {
    /// Opens the store named by `url` and applies the migrations:
    /// `sqlite:PATH` (created if missing; `sqlite::memory:` is refused, as the data would not
    /// outlive the process) or `postgres://user@host:port/db` (`postgresql://` too).
    ///
    /// # Errors
    ///
    /// [`StoreError`]: an unknown scheme, a database that cannot be opened or reached, a
    /// migration that fails.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_with(url, &Tasks::new()).await
    }

    /// [`Store::open`], its batching tasks spawned on `tasks` (the server's one tracker, which
    /// stops them after the drain).
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    pub async fn open_with(url: &str, tasks: &Tasks) -> Result<Store, StoreError> {
        let backend = if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() || path.starts_with(":memory:") {
                return Err(StoreError::new(format!(
                    "--store {url:?}: name a file, e.g. sqlite:data/nudges.db (an in-memory database loses every acknowledged event on exit)"
                )));
            }
            let options = SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                // FULL: the WAL is synced at each commit, so an acknowledged write survives a
                // power loss too, not only a crash of the process.
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(5))
                .foreign_keys(false);
            // No ping before each use either (as for the readers below): each group commit
            // and each visit of the webhook worker paid a round trip to the connection's thread
            // for it, on the one writer every write waits for.
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .test_before_acquire(false)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options.clone())
                .await?;
            sqlx::migrate!("./migrations/sqlite").run(&writer).await?;
            // No ping before each use (sqlx's default): it cost every read a round trip to the
            // connection's thread, a quarter of a list request's CPU. A connection broken by an
            // outage fails its query (503) and the pool drops it.
            let reader = SqlitePoolOptions::new()
                .max_connections(SQLITE_READERS)
                .test_before_acquire(false)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options.read_only(true))
                .await?;
            let reader = Arc::new(lease::Leases::new(reader, ACQUIRE_TIMEOUT));
            let group = group::GroupWriter::start(writer.clone(), tasks);
            Backend::Sqlite {
                writer,
                reader,
                group,
            }
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // Writes: PostgreSQL's own choice between custom and generic plans (`auto`). A plan
            // made without statistics (a fresh database) could scan a site's whole prefix as the
            // table grows; statistics now come as soon as a table holds rows (stats.rs), and
            // `ANALYZE` makes every cached plan again. Custom plans for every execution spent
            // more on planning than on the writes (the relay: 22,000 against 29,000 events/s).
            let options = PgConnectOptions::from_str(url)
                .map_err(|e| StoreError::new(format!("--store: not a PostgreSQL URL: {e}")))?;
            // No ping before each use, as for SQLite's readers: a round trip to the database
            // per query saved; a connection broken by an outage fails its query (503) once.
            let pool = PgPoolOptions::new()
                .max_connections(16)
                .test_before_acquire(false)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options.clone().options([("plan_cache_mode", "auto")]))
                .await?;
            // The migrator holds PostgreSQL's advisory lock while it runs: instances starting
            // together apply each migration once.
            sqlx::migrate!("./migrations/postgres").run(&pool).await?;
            // Reads: the generic plan of each statement, made once per connection (planning was
            // a third of PostgreSQL's time per `GET /v1/sessions?limit=50`). Every read walks an
            // index by its leading columns, which a generic plan does whatever the values; it is
            // made again when `ANALYZE` changes a table's statistics.
            let reader = PgPoolOptions::new()
                .max_connections(POSTGRES_READERS)
                .test_before_acquire(false)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options.options([("plan_cache_mode", "force_generic_plan")]))
                .await?;
            let reader = Arc::new(lease::Leases::new(reader, ACQUIRE_TIMEOUT));
            let pages = batch::SessionPages::start(Arc::clone(&reader), tasks);
            let nudge_pages = batch::NudgePages::start(Arc::clone(&reader), tasks);
            // A fresh database's tables are analyzed as soon as they hold rows (stats.rs):
            // without statistics the planner may scan a site's whole prefix for each batch.
            tasks.spawn_poller(stats::analyze_new_tables(pool.clone()));
            Backend::Postgres {
                pool,
                reader,
                pages,
                nudge_pages,
            }
        } else {
            return Err(StoreError::new(format!(
                "--store {:?}: expected sqlite:PATH or postgres://...",
                url.chars().take(40).collect::<String>()
            )));
        };
        Ok(Store {
            backend,
            url_shown: shown_url(url),
            batches: writing::Batches::default(),
        })
    }

    /// The store's URL without its password, for logs.
    pub fn url_shown(&self) -> &str {
        &self.url_shown
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite { .. } => "sqlite",
            Backend::Postgres { .. } => "postgres",
        }
    }

    /// Whether the database answers a trivial query now.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when it does not.
    pub async fn ping(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite { reader, .. } => {
                let mut lease = reader.take().await?;
                sqlx::query("SELECT 1").execute(lease.connection()).await?;
                lease.finish();
            }
            Backend::Postgres { pool, .. } => {
                sqlx::query("SELECT 1").execute(pool).await?;
            }
        }
        Ok(())
    }

    /// Refreshes the planner's statistics (PostgreSQL `VACUUM (ANALYZE)`, SQLite `PRAGMA
    /// optimize`): run after a bulk load, so that queries keep their index plans on tables that
    /// grew, and PostgreSQL's index-only scans (the covering `sessions_by_start` and
    /// `nudges_by_shown`) find the new rows' pages marked all-visible instead of reading each row.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn analyze(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite { writer, .. } => {
                sqlx::query("PRAGMA optimize").execute(writer).await?;
            }
            Backend::Postgres { pool, .. } => {
                sqlx::query("VACUUM (ANALYZE) events, sessions, nudges, exposures")
                    .execute(pool)
                    .await?;
            }
        }
        Ok(())
    }

    /// Stores a batch of events of one site and mode, and recomputes the derived fields of every
    /// session it touches (docs/contract/read-api.md). An event whose `message_id` the site and mode already have
    /// is a duplicate and changes nothing (docs/contract/relay.md). Returns after the commit. On PostgreSQL the
    /// batch is one transaction; on SQLite it shares its transaction with the batches queued
    /// with it (a group commit, `group.rs`), stored whole or not at all.
    ///
    /// # Errors
    ///
    /// [`StoreError`]; then nothing of the batch is stored.
    pub async fn insert_events(
        &self,
        scope: &Scope,
        events: &[NewEvent],
        received_at_ms: i64,
    ) -> Result<InsertOutcome, StoreError> {
        self.insert_events_within(scope, events, received_at_ms, None)
            .await
    }

    /// [`Store::insert_events`], and with `max_session_age_ms` each event more than that after
    /// its session's start is refused ([`InsertOutcome::too_late`]), the start read in the
    /// write transaction (the relay's 24-hour rule, docs/contract/relay.md "Clocks").
    ///
    /// # Errors
    ///
    /// [`StoreError`]; then nothing of the batch is stored.
    pub async fn insert_events_within(
        &self,
        scope: &Scope,
        events: &[NewEvent],
        received_at_ms: i64,
        max_session_age_ms: Option<i64>,
    ) -> Result<InsertOutcome, StoreError> {
        let _writing = self.batches.begin();
        match &self.backend {
            Backend::Sqlite { group, .. } => {
                group
                    .insert(scope, events, received_at_ms, max_session_age_ms)
                    .await
            }
            Backend::Postgres { pool, .. } => {
                let batch = [(scope, events, received_at_ms, max_session_age_ms)];
                let mut outcomes = queries::postgres::insert_groups(pool, &batch).await?;
                outcomes
                    .pop()
                    .ok_or_else(|| StoreError::new("a batch without an outcome"))
            }
        }
    }

    /// A page of the walk `walk` over the sessions that started in `window`, newest first
    /// (ties: id descending), at most `limit`: each session with its position in the walk,
    /// exactly once however records move during the walk (queries/walks.rs).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn list_sessions(
        &self,
        scope: &Scope,
        window: &ListWindow,
        walk: &Walk,
        limit: u32,
    ) -> Result<WalkPage<SessionSummary>, StoreError> {
        let after = walk.after.as_ref().map(Position::as_key);
        let (rows, read_rev) = match &self.backend {
            Backend::Postgres { pages, .. } => {
                let page = queries::SessionPageQuery {
                    scope: scope.clone(),
                    window: *window,
                    after: after.map(|(at, id)| (at, id.to_owned())),
                    limit,
                };
                pages.read(page).await?
            }
            Backend::Sqlite { reader, .. } => leased!(
                reader,
                queries::sqlite::list_sessions(scope, window, after, limit)
            )?,
        };
        let rev = match read_rev {
            Some(rev) => rev,
            None => dispatch!(self, read, walk_rev(scope))?,
        };
        match walk.rev {
            Some(walk_rev) if rev > walk_rev => {
                let rows = dispatch!(
                    self,
                    read,
                    list_sessions_moved(scope, window, after, walk_rev, limit)
                )?;
                Ok(WalkPage::at_walk_times(
                    rows,
                    walk_rev,
                    SessionSummary::walk_key,
                ))
            }
            _ => Ok(WalkPage::at_own_positions(
                rows,
                walk.rev.unwrap_or(rev),
                SessionSummary::walk_key,
            )),
        }
    }

    /// One session with its page events and its nudges, if it exists for `scope` and started
    /// at or after `visible_from_ms`.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn session(
        &self,
        scope: &Scope,
        id: &str,
        visible_from_ms: i64,
    ) -> Result<Option<SessionDetail>, StoreError> {
        dispatch!(self, read, session(scope, id, visible_from_ms))
    }

    /// A page of the walk `walk` over the nudge events shown in `window` whose session is
    /// visible (started at or after `window.visible_from_ms`), newest first (ties: id
    /// descending), as [`Store::list_sessions`].
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn list_nudges(
        &self,
        scope: &Scope,
        window: &ListWindow,
        filter: &NudgeFilter,
        walk: &Walk,
        limit: u32,
    ) -> Result<WalkPage<NudgeSummary>, StoreError> {
        let after = walk.after.as_ref().map(Position::as_key);
        let unfiltered = filter.session_id.is_none() && filter.nudge_type.is_none();
        let (rows, read_rev) = match &self.backend {
            Backend::Postgres { nudge_pages, .. } if unfiltered => {
                let page = queries::NudgePageQuery {
                    scope: scope.clone(),
                    window: *window,
                    filter: filter.clone(),
                    after: after.map(|(at, id)| (at, id.to_owned())),
                    limit,
                };
                nudge_pages.read(page).await?
            }
            _ => dispatch!(self, read, list_nudges(scope, window, filter, after, limit))?,
        };
        let rev = match read_rev {
            Some(rev) => rev,
            None => dispatch!(self, read, walk_rev(scope))?,
        };
        match walk.rev {
            Some(walk_rev) if rev > walk_rev => {
                let rows = dispatch!(
                    self,
                    read,
                    list_nudges_moved(scope, window, filter, after, walk_rev, limit)
                )?;
                Ok(WalkPage::at_walk_times(
                    rows,
                    walk_rev,
                    NudgeSummary::walk_key,
                ))
            }
            _ => Ok(WalkPage::at_own_positions(
                rows,
                walk.rev.unwrap_or(rev),
                NudgeSummary::walk_key,
            )),
        }
    }

    /// Per rule and arm, the sessions of `scope` that started in `window` (retention applied)
    /// and were exposed to the rule, and how many of them converted after their exposure
    /// (docs/contract/caps.md "Measured uplift"); by rule id, control arm first.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn uplift_counts(
        &self,
        scope: &Scope,
        window: &ListWindow,
    ) -> Result<Vec<ArmCount>, StoreError> {
        dispatch!(self, read, uplift_counts(scope, window))
    }

    /// When each of these sessions started (Unix ms), for those the store has.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn session_starts(
        &self,
        scope: &Scope,
        ids: &[&str],
    ) -> Result<std::collections::HashMap<String, i64>, StoreError> {
        dispatch!(self, read, session_starts(scope, ids))
    }

    /// Where a backtest page of `count` sessions ends: the `(started_at, id)` of the `count`-th
    /// session of `scope` that started in `window` (retention applied) after `after`, oldest
    /// first (ties: id); `None` when fewer are left. It reads only the sessions index, so the
    /// next page's bound is known long before this page's events are read, and pages can be
    /// read side by side.
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn replay_bound(
        &self,
        scope: &Scope,
        window: &ListWindow,
        after: Option<(i64, &str)>,
        count: u32,
    ) -> Result<Option<(i64, String)>, StoreError> {
        dispatch!(self, read, replay_bound(scope, window, after, count))
    }

    /// One page of the sessions of `scope` that started in `window` (retention applied), oldest
    /// first (ties: id), after `after` (the last page's `(started_at, id)`) and up to and
    /// including `upto` (this page's [`Store::replay_bound`]; `None`: to the window's end), at
    /// most `limit`, each with its page events, its NUDGE_HELD_OUT events and its nudges: what a backtest replays
    /// (docs/contract/backtest.md, docs/contract/caps.md).
    /// The three reads share one transaction, so a page is one snapshot. The summaries carry
    /// `id`, `started_at_ms`, `ended_at_ms`, `intent_score` and `converted` (the counts are 0).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn replay_page(
        &self,
        scope: &Scope,
        window: &ListWindow,
        after: Option<(i64, &str)>,
        upto: Option<(i64, &str)>,
        limit: u32,
    ) -> Result<Vec<SessionDetail>, StoreError> {
        dispatch!(self, read, replay_page(scope, window, after, upto, limit))
    }

    /// The config version `version` of `scope`, or the latest when `None`; `None` when there is
    /// no such version (docs/contract/versions.md).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn config_version(
        &self,
        scope: &Scope,
        version: Option<i64>,
    ) -> Result<Option<ConfigVersion>, StoreError> {
        dispatch!(self, read, config_version(scope, version))
    }

    /// Config versions of `scope` older than `before` (all when `None`), newest first, at most
    /// `limit`, without their config texts (docs/contract/versions.md).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn list_versions(
        &self,
        scope: &Scope,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<ConfigVersion>, StoreError> {
        dispatch!(self, read, list_versions(scope, before, limit))
    }

    /// The latest version of every site and mode that has one: `(site, mode, version)`. Each
    /// instance polls it to serve a version published through another within 2 s (docs/contract/versions.md).
    ///
    /// # Errors
    ///
    /// [`StoreError`].
    pub async fn latest_versions(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        dispatch!(self, read, latest_versions())
    }

    /// Publishes `new` as the next version of `scope` if the latest version is `expected`
    /// (`None`: no version yet), in one transaction (docs/contract/versions.md): of two publishers from the same
    /// version, exactly one gets it. Returns after the commit.
    ///
    /// # Errors
    ///
    /// [`StoreError`]; then nothing is published.
    pub async fn publish(
        &self,
        scope: &Scope,
        expected: Option<i64>,
        new: &NewVersion<'_>,
    ) -> Result<Published, StoreError> {
        dispatch!(self, write, publish(scope, expected, new))
    }

    /// Deletes the sessions of `site` (both modes) that started before `before_ms`, with
    /// their events, nudges and exposures (and the sessions of held-out events alone, by their
    /// exposures); returns how many sessions (of the read API).
    ///
    /// In steps of at most [`PURGE_STEP_SESSIONS`] sessions per mode, each its own short
    /// transaction, with a pause as long as the step after each: writers waiting for the
    /// store (SQLite's one writer, PostgreSQL's row locks) go between two steps, and the purge
    /// takes at most about half of the writer's time (issue 35: one transaction over millions
    /// of events held SQLite's writer for seconds and the relay answered 503).
    ///
    /// # Errors
    ///
    /// [`StoreError`]; the steps committed before it stay done.
    pub async fn purge(&self, site: &str, before_ms: i64) -> Result<u64, StoreError> {
        let mut purged = 0;
        loop {
            let started = std::time::Instant::now();
            let (deleted, more) = dispatch!(
                self,
                write,
                purge_step(site, before_ms, PURGE_STEP_SESSIONS)
            )?;
            purged += deleted;
            if !more {
                return Ok(purged);
            }
            tokio::time::sleep(started.elapsed().max(std::time::Duration::from_millis(1))).await;
        }
    }
}

/// `url` with any password replaced by `***`.
fn shown_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = url.get(scheme_end + 3..at).unwrap_or("");
            match userinfo.split_once(':') {
                Some((user, _)) => format!(
                    "{}{user}:***{}",
                    url.get(..scheme_end + 3).unwrap_or(""),
                    url.get(at..).unwrap_or("")
                ),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_shown() {
        assert_eq!(
            super::shown_url("postgres://u:secret@h:5/db"),
            "postgres://u:***@h:5/db"
        );
        assert_eq!(super::shown_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(super::shown_url("sqlite:x.db"), "sqlite:x.db");
    }
}
