//! The planner's first statistics on PostgreSQL: tables that were never analyzed are analyzed
//! as soon as they hold rows, instead of at autovacuum's first look (a minute or more later).
//!
//! Without statistics PostgreSQL takes every `site = $1 AND mode = $2` to match 0.5 % of 0.5 %
//! of a table: a scan of a site's whole `(site, mode, ...)` prefix then costs as little as a
//! lookup by session, and the planner picks either. The relay's write, whose `DELETE FROM
//! nudges` and `DELETE FROM exposures` of a batch's sessions took the prefix scan, read every
//! nudge and exposure of the site for each batch on a fresh store: 10,500 events/s in the first
//! 10 s, 4,800 in the fourth (docs/PERFORMANCE.md "Relay figures"). Once a table has
//! statistics, a site's prefix is known to hold its rows and the lookup by session wins; from
//! then on autovacuum keeps them fresh.

use std::time::Duration;

use sqlx::postgres::PgPool;

/// How often the tables are looked at while some were never analyzed.
const LOOK_EVERY: Duration = Duration::from_secs(2);

/// Rows written to a never-analyzed table before it is analyzed (autovacuum's own first
/// threshold is 50 rows, but it looks once a minute).
const FIRST_ROWS: i64 = 500;

/// The tables of this schema never analyzed (by `ANALYZE` or autovacuum) that have at least
/// [`FIRST_ROWS`] rows written.
const NEVER_ANALYZED: &str = "SELECT relname::TEXT FROM pg_stat_user_tables \
     WHERE schemaname = current_schema() AND last_analyze IS NULL AND last_autoanalyze IS NULL \
     AND n_mod_since_analyze >= $1";

/// Analyzes each table of `pool`'s schema when it first holds [`FIRST_ROWS`] rows, looking
/// every [`LOOK_EVERY`]; runs until the server stops (a look is one catalog query). A failed
/// look or `ANALYZE` is logged and tried again at the next look: statistics are an
/// optimization, never a reason to refuse a request.
pub(crate) async fn analyze_new_tables(pool: PgPool) {
    loop {
        tokio::time::sleep(LOOK_EVERY).await;
        let tables: Vec<String> = match sqlx::query_scalar(NEVER_ANALYZED)
            .bind(FIRST_ROWS)
            .fetch_all(&pool)
            .await
        {
            Ok(tables) => tables,
            Err(e) => {
                tracing::debug!(error = %e, "store: cannot list the tables never analyzed");
                continue;
            }
        };
        for table in tables {
            // A name from the catalog, quoted as an identifier.
            let analyze = format!("ANALYZE \"{}\"", table.replace('"', "\"\""));
            match sqlx::query(&analyze).execute(&pool).await {
                Ok(_) => tracing::debug!(%table, "store: first statistics of a table"),
                Err(e) => tracing::debug!(%table, error = %e, "store: ANALYZE failed"),
            }
        }
    }
}
