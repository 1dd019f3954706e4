//! The rate limiter (docs/contract/server.md "Rate limit"; API document section 8): an exact sliding log per
//! API key over a rolling 60 s window.
//!
//! Each key keeps the times of the requests it was admitted in the last 60 s. A request at time
//! `now` first drops the times `t <= now - 60 s`; it is admitted when fewer than `limit` remain,
//! and its time is appended. In any interval of 60 s at most `limit` requests of a key are
//! admitted, and a refused request is refused only because `limit` requests were admitted in the
//! 60 s before it: the limit is exact, not approximated (unlike a GCRA or token bucket, which
//! admit up to twice the limit in some 60 s window after an idle period).
//!
//! The values of the response headers come from the [`Decision`], which is taken under the same
//! lock as the admission itself (or, with Redis, in the same script), so the headers of a
//! response always describe the state that decided it. docs/SERVER.md defines every header.

//!
//! Two limiters take these decisions: [`local`], in this process, and [`redis`], shared by every
//! instance through Redis (one atomic script), with the local one as its fallback.

pub mod local;
pub mod redis;

pub use local::{Decision, LocalLimiter, SlidingLog, WINDOW_US};

use self::redis::RedisLimiter;
use crate::sites::keys::KeyHash;

/// The limiter in use: in-process, or shared through Redis (with an in-process fallback).
pub enum Limiter {
    /// One instance: the sliding logs live in this process.
    Local(LocalLimiter),
    /// Several instances: the sliding logs live in Redis.
    Redis(Box<RedisLimiter>),
}

impl Limiter {
    /// Decides one request of `key` against `limit` requests per rolling 60 s.
    pub async fn decide(&self, key: &KeyHash, limit: u32) -> Decision {
        self.decide_cost(key, limit, 1).await
    }

    /// Decides a request of `key` that costs `cost` admissions at once (a relay batch of
    /// `cost` events, docs/contract/relay.md): admitted whole or refused whole.
    pub async fn decide_cost(&self, key: &KeyHash, limit: u32, cost: u32) -> Decision {
        match self {
            Limiter::Local(local) => local.decide(key, limit, cost),
            Limiter::Redis(redis) => redis.decide(key, limit, cost).await,
        }
    }

    /// Limits exactly these keys from now on (a reloaded sites file, docs/contract/server.md): known keys keep
    /// their window (Redis keeps it for every instance anyway).
    pub fn set_keys(&self, keys: impl IntoIterator<Item = KeyHash>) {
        match self {
            Limiter::Local(local) => local.set_keys(keys),
            Limiter::Redis(redis) => redis.local().set_keys(keys),
        }
    }
}
