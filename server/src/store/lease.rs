//! Read connections kept checked out of sqlx's pool between uses.
//!
//! sqlx 0.8 tests every connection as it goes back to its pool: the drop spawns a task that
//! pings the connection (PostgreSQL: a `Sync` and its `ReadyForQuery`; SQLite: a command to the
//! connection's thread and its answer) before the pool may hand it out again
//! (`sqlx-core/src/pool/connection.rs`, `return_to_pool`). On a read of one short query that
//! is a second round trip, a spawned task and the wake-ups of both: measured at a tenth of the
//! server's CPU per `GET /v1/sessions?limit=50` on PostgreSQL, and each query of a detail paid
//! it again.
//!
//! [`Leases`] keeps the connections of a read pool once taken: a read that finished cleanly
//! puts its connection on an idle stack, and the next read takes it from there with no test.
//! A read that failed or was cancelled (a client that left mid-query) drops its connection
//! instead, into sqlx's own return path, which pings it and closes it if it is broken. So an
//! outage costs each kept connection one failed read (a 503), as with
//! `test_before_acquire(false)`, and nothing is ever handed out in the middle of a query.
//!
//! A semaphore with one permit per connection of the pool bounds the reads in flight, first
//! come first served: a connection put back on the idle stack never reaches a reader waiting in
//! sqlx's pool, so nobody waits there.
//!
//! sqlx sees a kept connection as in use, so its `max_lifetime` and `idle_timeout` do not retire
//! it: a kept connection lives until a read on it fails.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use sqlx::Database;
use sqlx::pool::{Pool, PoolConnection};
use tokio::sync::{Semaphore, SemaphorePermit};

use super::StoreError;

/// A read pool whose connections stay checked out between reads.
#[derive(Debug)]
pub(crate) struct Leases<DB: Database> {
    pool: Pool<DB>,
    /// Connections that finished their last read cleanly, ready for the next.
    idle: Mutex<Vec<PoolConnection<DB>>>,
    /// One permit per connection `pool` may open.
    permits: Semaphore,
    /// How long a read waits for a connection before the store counts as unreachable.
    wait: Duration,
}

/// One read's connection; [`Lease::finish`] keeps it for the next read.
pub(crate) struct Lease<'a, DB: Database> {
    leases: &'a Leases<DB>,
    connection: PoolConnection<DB>,
    _permit: SemaphorePermit<'a>,
}

impl<DB: Database> Leases<DB> {
    /// Reads on `pool`, at most as many at once as it may open connections, each waiting at
    /// most `wait` for a connection.
    pub(crate) fn new(pool: Pool<DB>, wait: Duration) -> Leases<DB> {
        // No more permits than connections: a read holding a permit must find one.
        let connections = pool.options().get_max_connections();
        Leases {
            pool,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(usize::try_from(connections).unwrap_or(1)),
            wait,
        }
    }

    /// A connection for one read: a kept one, or a new one from the pool.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when no connection is free within the wait, or the pool cannot open one.
    pub(crate) async fn take(&self) -> Result<Lease<'_, DB>, StoreError> {
        let permit = tokio::time::timeout(self.wait, self.permits.acquire())
            .await
            .map_err(|_| {
                StoreError::new(format!(
                    "no database connection free within {} s",
                    self.wait.as_secs()
                ))
            })?
            .map_err(|_| StoreError::new("the store is closed"))?;
        let kept = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let connection = match kept {
            Some(connection) => connection,
            None => self.pool.acquire().await?,
        };
        Ok(Lease {
            leases: self,
            connection,
            _permit: permit,
        })
    }
}

impl<DB: Database> Lease<'_, DB> {
    /// The connection, for the read's queries.
    pub(crate) fn connection(&mut self) -> &mut DB::Connection {
        &mut self.connection
    }

    /// The read finished cleanly: the connection is kept for the next one, untested.
    pub(crate) fn finish(self) {
        self.leases
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.connection);
    }
}
