//! The in-process limiter: each key's sliding log in this process, with the clock it reads and
//! the [`Decision`] it takes (the Redis limiter takes the same decisions in Redis).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use axum::http::{HeaderMap, HeaderName, HeaderValue};

use crate::clock::Clock;
use crate::sites::keys::KeyHash;

/// The rolling window: 60 s, in microseconds.
pub const WINDOW_US: u64 = 60_000_000;

const US_PER_S: u64 = 1_000_000;

/// One admission decision and the state of the key's window right after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is admitted (and counted).
    pub admitted: bool,
    /// The key's limit: requests per rolling 60 s.
    pub limit: u32,
    /// Requests counted in the window after the decision (this one included when admitted);
    /// `limit` when refused.
    pub count: u32,
    /// When the oldest counted request was admitted (Unix µs); it leaves the window at
    /// `oldest_us + 60 s`. Equals `now_us` when this request is the only one counted.
    pub oldest_us: u64,
    /// When the decision was taken (Unix µs; Redis's `TIME` with a Redis limiter).
    pub now_us: u64,
}

impl Decision {
    /// `X-RateLimit-Remaining`: requests that would be admitted now, `limit - count`.
    pub fn remaining(&self) -> u32 {
        self.limit.saturating_sub(self.count)
    }

    /// `X-RateLimit-Reset`: the Unix second at which the oldest counted request leaves the
    /// window, rounded up, `ceil((oldest + 60 s) / 1 s)`. Once the window is full, that is when
    /// a request will be admitted again (docs/contract/server.md).
    pub fn reset_unix_s(&self) -> u64 {
        self.oldest_us.saturating_add(WINDOW_US).div_ceil(US_PER_S)
    }

    /// Whole seconds from the current Unix second to [`reset_unix_s`](Self::reset_unix_s):
    /// `reset - floor(now)`, at least 1. `Retry-After` on a 429, and `t` of the `RateLimit`
    /// field on every response.
    pub fn reset_after_s(&self) -> u64 {
        self.reset_unix_s()
            .saturating_sub(self.now_us / US_PER_S)
            .max(1)
    }

    /// The headers of docs/contract/server.md and of the IETF draft (docs/SERVER.md): `X-RateLimit-Limit`,
    /// `X-RateLimit-Remaining`, `X-RateLimit-Reset`, `RateLimit-Policy`, `RateLimit`, and
    /// `Retry-After` when refused.
    pub fn write_headers(&self, headers: &mut HeaderMap) {
        let mut put = |name: &'static str, value: String| {
            if let Ok(value) = HeaderValue::try_from(value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        };
        put("x-ratelimit-limit", self.limit.to_string());
        put("x-ratelimit-remaining", self.remaining().to_string());
        put("x-ratelimit-reset", self.reset_unix_s().to_string());
        put(
            "ratelimit-policy",
            format!("\"per-key\";q={};w={}", self.limit, WINDOW_US / US_PER_S),
        );
        put(
            "ratelimit",
            format!(
                "\"per-key\";r={};t={}",
                self.remaining(),
                self.reset_after_s()
            ),
        );
        if !self.admitted {
            put("retry-after", self.reset_after_s().to_string());
        }
    }
}

/// The admitted requests of one key in the last 60 s, oldest first.
#[derive(Debug, Default)]
pub struct SlidingLog {
    admitted_us: VecDeque<u64>,
}

impl SlidingLog {
    /// Decides one request at `now_us` against `limit` (docs/contract/server.md): drops what left the window,
    /// admits when fewer than `limit` remain, and records the admission.
    pub fn decide(&mut self, now_us: u64, limit: u32) -> Decision {
        self.decide_cost(now_us, limit, 1)
    }

    /// Decides a request that costs `cost` admissions at once (a relay batch of `cost` events,
    /// docs/contract/relay.md): admitted when `cost` more fit under `limit`, all recorded at `now_us`; refused
    /// whole otherwise, with `oldest_us` the admission whose leaving makes room for `cost`.
    pub fn decide_cost(&mut self, now_us: u64, limit: u32, cost: u32) -> Decision {
        while self
            .admitted_us
            .front()
            .is_some_and(|&t| t.saturating_add(WINDOW_US) <= now_us)
        {
            self.admitted_us.pop_front();
        }
        let count = self.admitted_us.len();
        let cost_n = cost as usize;
        let admitted = count + cost_n <= limit as usize;
        if admitted {
            // A clock that stepped back must not unsort the log.
            let t = self
                .admitted_us
                .back()
                .map_or(now_us, |&last| last.max(now_us));
            self.admitted_us.extend(std::iter::repeat_n(t, cost_n));
        }
        // Refused: room for `cost` comes when the (count + cost - limit)-th oldest leaves.
        let frees = if admitted {
            0
        } else {
            (count + cost_n)
                .saturating_sub(limit as usize)
                .saturating_sub(1)
        };
        Decision {
            admitted,
            limit,
            count: u32::try_from(self.admitted_us.len()).unwrap_or(u32::MAX),
            oldest_us: self
                .admitted_us
                .get(frees)
                .or(self.admitted_us.front())
                .copied()
                .unwrap_or(now_us),
            now_us,
        }
    }
}

/// The in-process limiter: one [`SlidingLog`] per key behind its own lock. The map is built
/// from the sites file (and again when it is reloaded: [`LocalLimiter::set_keys`]), so it
/// never grows with traffic and needs no global lock.
pub struct LocalLimiter {
    logs: ArcSwap<HashMap<KeyHash, Arc<Mutex<SlidingLog>>>>,
    clock: Arc<dyn Clock>,
}

impl LocalLimiter {
    /// A limiter for exactly these keys.
    pub fn new(keys: impl IntoIterator<Item = KeyHash>, clock: Arc<dyn Clock>) -> LocalLimiter {
        LocalLimiter {
            logs: ArcSwap::from_pointee(
                keys.into_iter()
                    .map(|k| (k, Arc::new(Mutex::new(SlidingLog::default()))))
                    .collect(),
            ),
            clock,
        }
    }

    /// Limits exactly these keys from now on (a reloaded sites file): a key it limited already
    /// keeps its window, a new key starts with an empty one, a key not given is refused.
    pub fn set_keys(&self, keys: impl IntoIterator<Item = KeyHash>) {
        let old = self.logs.load();
        let logs = keys
            .into_iter()
            .map(|k| {
                let log = old
                    .get(&k)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(Mutex::new(SlidingLog::default())));
                (k, log)
            })
            .collect();
        self.logs.store(Arc::new(logs));
    }

    /// Decides one request of `key` costing `cost` admissions. A key the limiter does not know
    /// (never the case for a key that passed authentication) is refused.
    pub fn decide(&self, key: &KeyHash, limit: u32, cost: u32) -> Decision {
        let now_us = self.clock.now_us();
        match self.logs.load().get(key) {
            Some(log) => log
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .decide_cost(now_us, limit, cost),
            None => Decision {
                admitted: false,
                limit,
                count: limit,
                oldest_us: now_us,
                now_us,
            },
        }
    }

    /// The clock the limiter reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    const T0: u64 = 1_700_000_000_250_000; // a Unix time with a fractional second

    #[test]
    fn a_batch_is_admitted_whole_or_refused_whole_with_the_wait_until_it_fits() {
        let mut log = SlidingLog::default();
        // 6 at T0, 3 at T0 + 10 s: 9 of 10 used.
        assert!(log.decide_cost(T0, 10, 6).admitted);
        assert!(log.decide_cost(T0 + 10_000_000, 10, 3).admitted);
        // 5 more do not fit; they fit once the 4th oldest (T0) leaves: at T0 + 60 s.
        let d = log.decide_cost(T0 + 20_000_000, 10, 5);
        assert!(!d.admitted);
        assert_eq!(d.count, 9, "nothing recorded");
        assert_eq!(d.oldest_us, T0);
        // 8 more fit only once the 7th oldest (T0 + 10 s) leaves.
        let d = log.decide_cost(T0 + 20_000_000, 10, 8);
        assert_eq!(d.oldest_us, T0 + 10_000_000);
        // One fits now.
        assert!(log.decide_cost(T0 + 20_000_000, 10, 1).admitted);
        // After T0 + 60 s, the 6 of T0 left: 6 fit.
        assert!(log.decide_cost(T0 + 60_000_000, 10, 6).admitted);
    }

    #[test]
    fn admits_exactly_limit_in_any_window() {
        // Requests at pseudo-random gaps; an admitted request must leave at most `limit`
        // admissions in (t - 60 s, t], and a refused one must see exactly `limit` there.
        let limit = 50;
        let mut log = SlidingLog::default();
        let mut admitted: Vec<u64> = Vec::new();
        let mut now = T0;
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..6_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            now += seed % 3_000_000; // 0 to 3 s
            let d = log.decide(now, limit);
            let in_window = admitted.iter().filter(|&&t| t + WINDOW_US > now).count();
            if d.admitted {
                assert!(in_window < limit as usize);
                admitted.push(now);
                assert_eq!(d.count as usize, in_window + 1);
            } else {
                assert_eq!(in_window, limit as usize);
                assert_eq!(d.count, limit);
            }
            let oldest = admitted.iter().copied().find(|&t| t + WINDOW_US > now);
            assert_eq!(d.oldest_us, oldest.unwrap_or(now));
        }
    }

    #[test]
    fn reset_and_retry_after_agree() {
        let mut log = SlidingLog::default();
        for _ in 0..3 {
            assert!(log.decide(T0, 3).admitted);
        }
        let refused = log.decide(T0 + 10 * US_PER_S, 3);
        assert!(!refused.admitted);
        assert_eq!(refused.remaining(), 0);
        // Oldest at ...000.25 s leaves at ...060.25 s: reset is the next whole second.
        assert_eq!(refused.reset_unix_s(), 1_700_000_061);
        assert_eq!(refused.reset_after_s(), 1_700_000_061 - 1_700_000_010);
        // Still refused a microsecond before the oldest leaves, admitted when it leaves.
        assert!(!log.decide(T0 + WINDOW_US - 1, 3).admitted);
        let again = log.decide(T0 + WINDOW_US, 3);
        assert!(again.admitted);
        assert_eq!(again.count, 1); // the three of T0 left together
        assert_eq!(again.oldest_us, T0 + WINDOW_US);
    }

    #[test]
    fn headers_in_both_states() {
        let mut log = SlidingLog::default();
        let first = log.decide(T0, 2);
        let mut h = HeaderMap::new();
        first.write_headers(&mut h);
        assert_eq!(h["x-ratelimit-limit"], "2");
        assert_eq!(h["x-ratelimit-remaining"], "1");
        assert_eq!(h["x-ratelimit-reset"], "1700000061");
        assert_eq!(h["ratelimit-policy"], "\"per-key\";q=2;w=60");
        assert_eq!(h["ratelimit"], "\"per-key\";r=1;t=61");
        assert!(h.get("retry-after").is_none());
        log.decide(T0 + US_PER_S, 2);
        let refused = log.decide(T0 + 59 * US_PER_S, 2);
        let mut h = HeaderMap::new();
        refused.write_headers(&mut h);
        assert_eq!(h["x-ratelimit-remaining"], "0");
        assert_eq!(h["retry-after"], "2");
        assert_eq!(h["ratelimit"], "\"per-key\";r=0;t=2");
    }

    #[test]
    fn retry_after_is_at_least_one() {
        let mut log = SlidingLog::default();
        log.decide(T0, 1);
        let refused = log.decide(T0 + WINDOW_US - 1, 1);
        assert!(!refused.admitted);
        assert_eq!(refused.reset_after_s(), 1);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let limiter = LocalLimiter::new([], Arc::new(ManualClock::new(T0)));
        assert!(
            !limiter
                .decide(&KeyHash::of_key("sk_test_aaaaaaaaaaaaaaaa"), 5, 1)
                .admitted
        );
    }

    #[test]
    fn set_keys_keeps_the_windows_of_keys_that_stay() {
        let (a, b, c) = (
            KeyHash::of_key("sk_test_aaaaaaaaaaaaaaaa"),
            KeyHash::of_key("sk_test_bbbbbbbbbbbbbbbb"),
            KeyHash::of_key("sk_test_cccccccccccccccc"),
        );
        let limiter = LocalLimiter::new([a, b], Arc::new(ManualClock::new(T0)));
        assert!(limiter.decide(&a, 2, 2).admitted);
        limiter.set_keys([a, c]);
        // a keeps its full window; b is gone; c starts empty.
        assert!(!limiter.decide(&a, 2, 1).admitted);
        assert!(!limiter.decide(&b, 2, 1).admitted);
        assert!(limiter.decide(&c, 2, 2).admitted);
    }
}
