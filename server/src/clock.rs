//! The server's one clock ([`Clock`]): made by whoever starts the server (the binary's
//! [`SystemClock`], a test's [`ManualClock`] or [`OffsetClock`]), owned by the request state
//! and handed down, so that every "now" of the server comes from it: the rate limit's window,
//! the relay's received time, a publish's time, the read API's retention edge, webhook
//! messages, claims, attempts and retries. Code below the app floor (the store, the domain)
//! reads no clock: its callers pass `now_ms` in.
//!
//! A leaf module (std and jiff only), like `tasks`, so that every floor may name it.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The server's clock: two readings of one time.
pub trait Clock: Send + Sync + 'static {
    /// Now for the rate limit's rolling window, microseconds since the Unix epoch. It never
    /// steps: a wall-clock step (NTP, a manual change) neither frees nor blocks a window
    /// (docs/contract/server.md "Rate limit").
    fn now_us(&self) -> u64;

    /// Now as stored and sent, Unix milliseconds (an event's `received_at`, a version's
    /// `published_at`, a webhook message's `created_at`, an attempt's time and its retry's).
    fn now_ms(&self) -> i64;
}

/// The real clock. [`Clock::now_us`] is the Unix time read once at start and advanced by the
/// monotonic clock; [`Clock::now_ms`] is the system's wall clock at each reading (stored times
/// follow the machine's time, as every other instance and the database see it).
#[derive(Debug)]
pub struct SystemClock {
    start_unix_us: u64,
    start: Instant,
}

impl SystemClock {
    /// Anchors the window's reading at the current system time.
    pub fn new() -> SystemClock {
        let start_unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        SystemClock {
            start_unix_us,
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_us(&self) -> u64 {
        let elapsed = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.start_unix_us.saturating_add(elapsed)
    }

    fn now_ms(&self) -> i64 {
        jiff::Timestamp::now().as_millisecond()
    }
}

/// A clock that moves only when told: the tests' way to cross a rate-limit window without
/// sleeping. Both readings are its one value.
#[derive(Debug)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock standing at `now_us` (Unix microseconds).
    pub fn new(now_us: u64) -> ManualClock {
        ManualClock(AtomicU64::new(now_us))
    }

    /// Moves the clock forward by `us` microseconds.
    pub fn advance_us(&self, us: u64) {
        self.0.fetch_add(us, Ordering::SeqCst);
    }

    /// Sets the clock to `now_us`.
    pub fn set_us(&self, now_us: u64) {
        self.0.store(now_us, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_us(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    fn now_ms(&self) -> i64 {
        i64::try_from(self.now_us() / 1000).unwrap_or(i64::MAX)
    }
}

/// The real clock ahead by an offset that only grows: time runs as usual and jumps forward
/// when told. The webhook tests cross a retry delay of 5 minutes or the 5 days of failures
/// that disable an endpoint at once, with the real retry ladder, while everything else (the
/// relay's 24-hour rule, time-outs, leases between jumps) sees time pass as it does.
#[derive(Debug, Default)]
pub struct OffsetClock {
    system: SystemClock,
    offset_ms: AtomicI64,
}

impl OffsetClock {
    /// The real clock, no offset yet.
    pub fn new() -> OffsetClock {
        OffsetClock::default()
    }

    /// Moves the clock forward by `by` (whole milliseconds).
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.offset_ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// How far ahead of the real clock it stands, in milliseconds.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::SeqCst)
    }
}

impl Clock for OffsetClock {
    fn now_us(&self) -> u64 {
        let offset_us = u64::try_from(self.offset_ms())
            .unwrap_or(0)
            .saturating_mul(1000);
        self.system.now_us().saturating_add(offset_us)
    }

    fn now_ms(&self) -> i64 {
        self.system.now_ms().saturating_add(self.offset_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_reads_one_value_both_ways() {
        let clock = ManualClock::new(1_700_000_000_500_000);
        assert_eq!(clock.now_ms(), 1_700_000_000_500);
        clock.advance_us(1_500);
        assert_eq!(clock.now_us(), 1_700_000_000_501_500);
        assert_eq!(clock.now_ms(), 1_700_000_000_501);
        clock.set_us(0);
        assert_eq!((clock.now_us(), clock.now_ms()), (0, 0));
    }

    #[test]
    fn an_offset_clock_runs_and_jumps() {
        let clock = OffsetClock::new();
        let real = SystemClock::new();
        let before = clock.now_ms();
        assert!((before - real.now_ms()).abs() < 1000);
        clock.advance(Duration::from_secs(300));
        clock.advance(Duration::from_millis(5));
        assert_eq!(clock.offset_ms(), 300_005);
        assert!(clock.now_ms() >= before + 300_005);
        // Two real clocks anchor their window readings a moment apart.
        let ahead_us = clock.now_us().abs_diff(real.now_us());
        assert!(ahead_us.abs_diff(300_005_000) < 1_000_000, "{ahead_us}");
    }
}
