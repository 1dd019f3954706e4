//! The shared limiter (docs/contract/server.md "Several instances"): the sliding log of [`crate::limiter`] kept in
//! Redis, one sorted set per key, decided by one Lua script with Redis's `TIME` as the clock, so
//! any number of instances enforce one limit per key.
//!
//! When Redis cannot be reached (connection refused, no answer within `--redis-timeout-ms`,
//! [`crate::config::DEFAULT_REDIS_TIMEOUT_MS`] by default), the request is decided by this
//! instance's [`LocalLimiter`] instead, a warning is logged on the change,
//! `nudge_rate_limit_fallback_total` counts the decisions, and `nudge_redis_up` drops to 0. Redis is tried again [`RETRY_AFTER_FAILURE`] later. A Redis
//! failure never turns into a 500.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Script};

use super::{Decision, LocalLimiter, WINDOW_US};
use crate::metrics::Metrics;
use crate::sites::keys::KeyHash;

/// How long the instance decides locally after a Redis failure before it tries Redis again.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(1);

/// The sliding log in one atomic script. KEYS[1]: the key's sorted set of admission times
/// (score: Unix µs); KEYS[2]: a counter that makes members unique. ARGV[1]: the limit;
/// ARGV[2]: the window in µs; ARGV[3]: the request's cost (events of a relay batch, else 1).
/// Returns {admitted, count, oldest_us, now_us}, `oldest_us` being, when refused, the admission
/// whose leaving makes room for the cost; Lua numbers are doubles, exact for Unix microseconds
/// (< 2^53), and become integer replies.
const SLIDING_LOG_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
local frees = 0
if count + cost <= limit then
  local last = redis.call('INCRBY', KEYS[2], cost)
  local members = {}
  for i = last - cost + 1, last do
    members[#members + 1] = now
    members[#members + 1] = i
  end
  redis.call('ZADD', KEYS[1], unpack(members))
  count = count + cost
  admitted = 1
else
  frees = count + cost - limit - 1
  if frees < 0 then frees = 0 end
end
local oldest = now
local first = redis.call('ZRANGE', KEYS[1], frees, frees, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
local ttl_ms = math.ceil(window / 1000)
redis.call('PEXPIRE', KEYS[1], ttl_ms)
redis.call('PEXPIRE', KEYS[2], ttl_ms)
return {admitted, count, oldest, now}
";

/// The Redis-backed limiter with its local fallback.
pub struct RedisLimiter {
    client: Client,
    script: Script,
    connection: ArcSwapOption<MultiplexedConnection>,
    connecting: tokio::sync::Mutex<()>,
    /// Until when (the local clock's µs) decisions stay local after a failure.
    down_until_us: AtomicU64,
    up: AtomicBool,
    /// How long one Redis call (or connection attempt) may take before this request falls
    /// back (`--redis-timeout-ms`; default
    /// [`crate::config::DEFAULT_REDIS_TIMEOUT_MS`]).
    timeout: Duration,
    local: LocalLimiter,
    metrics: Arc<Metrics>,
}

impl RedisLimiter {
    /// The local limiter it falls back to.
    pub fn local(&self) -> &LocalLimiter {
        &self.local
    }

    /// A limiter on the Redis at `url` (`redis://host:port/db`), deciding with `local` while
    /// Redis is unreachable or gives no answer within `timeout` (a call or a connection
    /// attempt). Connects lazily: an instance starts even when Redis is down.
    ///
    /// # Errors
    ///
    /// The URL does not parse as a Redis URL.
    pub fn new(
        url: &str,
        timeout: Duration,
        local: LocalLimiter,
        metrics: Arc<Metrics>,
    ) -> Result<RedisLimiter, redis::RedisError> {
        metrics.redis_up.set(0);
        Ok(RedisLimiter {
            client: Client::open(url)?,
            script: Script::new(SLIDING_LOG_LUA),
            connection: ArcSwapOption::empty(),
            connecting: tokio::sync::Mutex::new(()),
            down_until_us: AtomicU64::new(0),
            up: AtomicBool::new(false),
            timeout,
            local,
            metrics,
        })
    }

    /// Decides one request of `key` costing `cost` admissions against `limit`: in Redis, or
    /// locally while Redis is down.
    pub async fn decide(&self, key: &KeyHash, limit: u32, cost: u32) -> Decision {
        let now_us = self.local.clock().now_us();
        if now_us >= self.down_until_us.load(Ordering::Relaxed) {
            match self.decide_in_redis(key, limit, cost).await {
                Ok(decision) => {
                    if !self.up.swap(true, Ordering::Relaxed) {
                        tracing::info!("redis reachable: rate limits are shared");
                        self.metrics.redis_up.set(1);
                    }
                    return decision;
                }
                Err(Failure::StillDown) => {}
                Err(Failure::Key(reason)) => {
                    self.metrics.redis_key_errors.inc();
                    tracing::warn!(
                        key = %key.log_id(),
                        error = %reason,
                        "redis refused this key's rate-limit call (not an outage): this request is decided by the local limiter"
                    );
                }
                Err(Failure::Down(reason)) => {
                    self.connection.store(None);
                    self.down_until_us.store(
                        now_us.saturating_add(RETRY_AFTER_FAILURE.as_micros() as u64),
                        Ordering::Relaxed,
                    );
                    self.metrics.redis_errors.inc();
                    if self.up.swap(false, Ordering::Relaxed)
                        || self.metrics.redis_errors.get() == 1
                    {
                        tracing::warn!(
                            error = %reason,
                            "redis unreachable: rate limits fall back to this instance's local limiter"
                        );
                    }
                    self.metrics.redis_up.set(0);
                }
            }
        }
        self.metrics.rate_limit_fallback.inc();
        self.local.decide(key, limit, cost)
    }

    async fn decide_in_redis(
        &self,
        key: &KeyHash,
        limit: u32,
        cost: u32,
    ) -> Result<Decision, Failure> {
        let mut connection = match self.connection.load_full() {
            Some(connection) => MultiplexedConnection::clone(&connection),
            None => self.connect().await?,
        };
        let log_key = format!("nudge-rules:rl:{{{key}}}");
        let seq_key = format!("{log_key}:seq");
        let mut invocation = self.script.key(&log_key);
        invocation.key(&seq_key).arg(limit).arg(WINDOW_US).arg(cost);
        let reply: (i64, i64, i64, i64) =
            tokio::time::timeout(self.timeout, invocation.invoke_async(&mut connection))
                .await
                .map_err(|_| {
                    Failure::Down(format!("no answer within {} ms", self.timeout.as_millis()))
                })?
                .map_err(|e| {
                    if is_outage(&e) {
                        Failure::Down(e.to_string())
                    } else {
                        Failure::Key(e.to_string())
                    }
                })?;
        let (admitted, count, oldest_us, now_us) = reply;
        let to_u64 =
            |v: i64| u64::try_from(v).map_err(|_| Failure::Down(format!("bad reply value {v}")));
        Ok(Decision {
            admitted: admitted == 1,
            limit,
            count: u32::try_from(count)
                .map_err(|_| Failure::Down(format!("bad reply count {count}")))?,
            oldest_us: to_u64(oldest_us)?,
            now_us: to_u64(now_us)?,
        })
    }

    /// One connection attempt at a time; the others wait for it (at most the timeout)
    /// and use its connection.
    async fn connect(&self) -> Result<MultiplexedConnection, Failure> {
        let _guard = self.connecting.lock().await;
        if let Some(connection) = self.connection.load_full() {
            return Ok(MultiplexedConnection::clone(&connection));
        }
        if self.local.clock().now_us() < self.down_until_us.load(Ordering::Relaxed) {
            // The attempt this request waited for has just failed.
            return Err(Failure::StillDown);
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(self.timeout)
            .set_response_timeout(self.timeout);
        let connection = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| Failure::Down(e.to_string()))?;
        self.connection.store(Some(Arc::new(connection.clone())));
        Ok(connection)
    }
}

/// Why a request was not decided in Redis.
enum Failure {
    /// Redis failed this request: fall back and wait [`RETRY_AFTER_FAILURE`].
    Down(String),
    /// Another request's attempt failed while this one waited for it: fall back.
    StillDown,
    /// Redis answered, refusing this key's script (a key of the wrong type, say): this request
    /// is decided locally; Redis stays in use for every other key.
    Key(String),
}

/// Whether a Redis error means Redis (the connection, the server) is down, rather than a refusal
/// of one call.
fn is_outage(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
}
