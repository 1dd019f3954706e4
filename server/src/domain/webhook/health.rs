//! When an endpoint is disabled (docs/contract/webhooks.md "Delivery"): at once by a 410, or when every attempt to it
//! failed for 5 days ([`DISABLE_AFTER`]). An endpoint's [`Health`] is the time of its first
//! failure since its last success; each attempt's verdict moves it ([`Health::after`]), and
//! enabling a disabled endpoint starts it afresh ([`Health::after_status`]). Pure: the store
//! reads the endpoints' `failing_since`, folds a visit's results through these, and writes
//! what changed.

use std::time::Duration;

use super::attempt::Verdict;
use super::endpoint::Status;

/// How long every attempt to an endpoint may fail before it is disabled: 5 days.
pub const DISABLE_AFTER: Duration = Duration::from_secs(5 * 24 * 3600);

/// [`DISABLE_AFTER`] in milliseconds.
pub const DISABLE_AFTER_MS: i64 = 5 * 24 * 3600 * 1000;

/// An endpoint's failures since its last success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Health {
    /// Its first failed attempt since the last success, Unix ms; `None` while it succeeds.
    pub failing_since_ms: Option<i64>,
}

/// Why an attempt disabled its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disabled {
    /// The receiver answered 410 Gone.
    Gone,
    /// Every attempt failed since this time (Unix ms), for `disable_after_ms` or longer.
    FailingSince(i64),
}

impl Health {
    /// The endpoint after an attempt made at `attempted_at_ms` came to `verdict`, and whether
    /// that attempt disables it: a success clears the failures, a failure starts them (or
    /// goes on), and disables once they have lasted `disable_after_ms` (5 days:
    /// [`DISABLE_AFTER_MS`]); a 410 disables at once and leaves the failures as they were.
    pub fn after(
        self,
        verdict: &Verdict,
        attempted_at_ms: i64,
        disable_after_ms: i64,
    ) -> (Health, Option<Disabled>) {
        match verdict {
            Verdict::Delivered => (Health::default(), None),
            Verdict::Gone => (self, Some(Disabled::Gone)),
            Verdict::Failed { .. } => {
                let since = self.failing_since_ms.unwrap_or(attempted_at_ms);
                let health = Health {
                    failing_since_ms: Some(since),
                };
                let disabled = (attempted_at_ms.saturating_sub(since) >= disable_after_ms)
                    .then_some(Disabled::FailingSince(since));
                (health, disabled)
            }
        }
    }

    /// The endpoint after its status changed from `from` to `to` (a `PATCH`): enabling a
    /// disabled endpoint starts the 5-day rule afresh; anything else keeps it.
    pub fn after_status(self, from: Status, to: Status) -> Health {
        if from == Status::Disabled && to == Status::Enabled {
            Health::default()
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 24 * 3600 * 1000;

    fn failed() -> Verdict {
        Verdict::Failed {
            next_attempt_at_ms: Some(0),
        }
    }

    #[test]
    fn five_days_of_failures_or_a_410_disable() {
        let t0 = 1_800_000_000_000;
        let failing = |since| Health {
            failing_since_ms: Some(since),
        };
        let cases = [
            // (before, verdict, at, after, disabled)
            (
                Health::default(),
                Verdict::Delivered,
                t0,
                Health::default(),
                None,
            ),
            (
                failing(t0),
                Verdict::Delivered,
                t0 + DAY,
                Health::default(),
                None,
            ),
            (Health::default(), failed(), t0, failing(t0), None),
            (failing(t0), failed(), t0 + DAY, failing(t0), None),
            (failing(t0), failed(), t0 + 5 * DAY - 1, failing(t0), None),
            (
                failing(t0),
                failed(),
                t0 + 5 * DAY,
                failing(t0),
                Some(Disabled::FailingSince(t0)),
            ),
            // The last attempt of a ladder fails for good: it counts as any failure.
            (
                failing(t0),
                Verdict::Failed {
                    next_attempt_at_ms: None,
                },
                t0 + 6 * DAY,
                failing(t0),
                Some(Disabled::FailingSince(t0)),
            ),
            (
                Health::default(),
                Verdict::Gone,
                t0,
                Health::default(),
                Some(Disabled::Gone),
            ),
            (
                failing(t0),
                Verdict::Gone,
                t0 + DAY,
                failing(t0),
                Some(Disabled::Gone),
            ),
        ];
        for (before, verdict, at, after, disabled) in cases {
            assert_eq!(
                before.after(&verdict, at, DISABLE_AFTER_MS),
                (after, disabled),
                "{before:?} then {verdict:?} at {at}"
            );
        }
        assert_eq!(
            DISABLE_AFTER_MS,
            i64::try_from(DISABLE_AFTER.as_millis()).unwrap()
        );
    }

    #[test]
    fn results_fold_in_their_order() {
        // A failure, a success, a failure in one visit: failing since the last failure.
        let t0 = 1_800_000_000_000;
        let mut health = Health::default();
        for (verdict, at) in [
            (failed(), t0),
            (Verdict::Delivered, t0 + 1),
            (failed(), t0 + 2),
        ] {
            health = health.after(&verdict, at, DISABLE_AFTER_MS).0;
        }
        assert_eq!(health.failing_since_ms, Some(t0 + 2));
    }

    #[test]
    fn enabling_a_disabled_endpoint_starts_afresh() {
        let failing = Health {
            failing_since_ms: Some(7),
        };
        use Status::{Disabled as Off, Enabled as On};
        assert_eq!(failing.after_status(Off, On), Health::default());
        for (from, to) in [(On, On), (On, Off), (Off, Off)] {
            assert_eq!(
                failing.after_status(from, to),
                failing,
                "{from:?} to {to:?}"
            );
        }
    }
}
