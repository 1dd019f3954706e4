//! The part of every backend's queries that reads rows: the page SQL (a JSON array per page on
//! SQLite), and an event, a session and a nudge read from a row. Instantiated with the others
//! in `sqlite` and `postgres` (queries/mod.rs), which share one scope.

macro_rules! rows {
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
                format!(
                    "SELECT CAST({}({}({columns}) ORDER BY {order}) AS TEXT) AS page FROM {source}",
                    $group, $array
                )
            } else {
                format!("SELECT {columns} FROM {source} ORDER BY {order}")
            }
        }

        /// [`page_sql`] for a page of a walk (`$1` the site, `$2` the mode): each row (on
        /// SQLite the page's one row) also carries the site and mode's walk revision, read in
        /// the page's own snapshot ([`walk_rev_of`]).
        fn walk_page_sql(columns: &str, source: &str, order: &str) -> String {
            const REV: &str = "(SELECT rev FROM walk_revs WHERE site = $1 AND mode = $2) AS walk_rev";
            if $json_pages {
                format!(
                    "SELECT CAST({}({}({columns}) ORDER BY {order}) AS TEXT) AS page, {REV} FROM {source}",
                    $group, $array
                )
            } else {
                format!("SELECT {columns}, {REV} FROM {source} ORDER BY {order}")
            }
        }

        /// The walk revision a [`walk_page_sql`] query read (0 before any move); `None` when
        /// no row came back (PostgreSQL's empty page).
        fn walk_rev_of(rows: &[$row]) -> Result<Option<i64>, StoreError> {
            match rows.first() {
                None => Ok(None),
                Some(row) => Ok(Some(row.try_get::<Option<i64>, _>("walk_rev")?.unwrap_or(0))),
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
                        Some(text) => serde_json::from_str(&text).map_err(|e| {
                            StoreError::new(format!("a page of rows did not read back: {e}"))
                        }),
                    },
                }
            } else {
                Ok(rows
                    .iter()
                    .map(T::read)
                    .collect::<Result<Vec<T>, sqlx::Error>>()?)
            }
        }

        fn read_event(row: &$row) -> Result<StoredEvent, sqlx::Error> {
            let kind: String = row.try_get("type")?;
            let kind = EventKind::parse(&kind).ok_or_else(|| {
                sqlx::Error::Decode(format!("unknown stored event type {kind:?}").into())
            })?;
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
                    nudge_type: row.try_get::<Option<&str>, _>("nudge_type")?.map(stored_type).transpose()?,
                    rule_id: row.try_get("rule_id")?,
                    outcome: row.try_get::<Option<&str>, _>("outcome")?.map(stored_outcome).transpose()?,
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
                nudge_type: stored_type(row.try_get("type")?)?,
                shown_at_ms: row.try_get("shown_at")?,
                outcome: stored_outcome(row.try_get("outcome")?)?,
                influenced_conversion: row.try_get::<i64, _>("influenced_conversion")? != 0,
            })
        }
    };
}
