//! When a failed webhook delivery is tried again (docs/contract/webhooks.md "Delivery").
//!
//! After the first attempt fails, the message is tried again after 5 s, 5 min, 30 min, 2 h, 5 h,
//! 10 h and 10 h (8 attempts in all), each delay with +-20 % jitter; after a 429 or 503 the
//! `Retry-After` is honoured, up to twice the scheduled delay. After the last attempt the message
//! has failed for that endpoint (an endpoint whose every attempt failed for 5 days is disabled:
//! `health.rs`). `--webhook-schedule` gives other delays.

use std::fmt;
use std::time::Duration;

/// The delays of docs/contract/webhooks.md, after attempts 1 to 7.
pub const DEFAULT_DELAYS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];

/// The jitter of each delay: +-20 %.
pub const JITTER: f64 = 0.2;

/// Most delays a schedule may hold (`--webhook-schedule`).
pub const MAX_DELAYS: usize = 20;

/// The retry ladder: one delay per retry; attempts in all = delays + 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    delays: Vec<Duration>,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            delays: DEFAULT_DELAYS.to_vec(),
        }
    }
}

/// A `--webhook-schedule` value that could not be read, with the value and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleError {
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--webhook-schedule {:?}: {}; write delays separated by commas, each a whole number and a unit (ms, s, m, h or d), e.g. \"5s,5m,30m,2h,5h,10h,10h\"",
            self.value, self.reason
        )
    }
}

impl std::error::Error for ScheduleError {}

impl std::str::FromStr for Schedule {
    type Err = ScheduleError;

    /// Reads `--webhook-schedule`: 1 to 20 delays separated by commas, each a whole number and
    /// a unit: `ms`, `s`, `m`, `h` or `d` (`"100ms,200ms,1s"`).
    fn from_str(text: &str) -> Result<Schedule, ScheduleError> {
        let refuse = |reason: String| ScheduleError {
            value: text.to_owned(),
            reason,
        };
        let delays = text
            .split(',')
            .map(|part| {
                parse_delay(part.trim()).ok_or_else(|| refuse(format!("{part:?} is not a delay")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if delays.len() > MAX_DELAYS {
            return Err(refuse(format!(
                "{} delays; at most {MAX_DELAYS}",
                delays.len()
            )));
        }
        Ok(Schedule { delays })
    }
}

fn parse_delay(part: &str) -> Option<Duration> {
    let digits = part.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = part.split_at(digits);
    let n: u64 = number.parse().ok()?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        _ => None,
    }?;
    Some(Duration::from_millis(ms))
}

impl Schedule {
    /// A schedule of `delays` (the default: [`DEFAULT_DELAYS`]).
    ///
    /// # Errors
    ///
    /// [`ScheduleError`] for more than [`MAX_DELAYS`].
    pub fn new(delays: Vec<Duration>) -> Result<Schedule, ScheduleError> {
        if delays.len() > MAX_DELAYS {
            return Err(ScheduleError {
                value: format!("{} delays", delays.len()),
                reason: format!("at most {MAX_DELAYS}"),
            });
        }
        Ok(Schedule { delays })
    }

    /// Attempts in all: the first and one per delay (8 by default).
    pub fn attempts(&self) -> u32 {
        u32::try_from(self.delays.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    }

    /// The delays, in order.
    pub fn delays(&self) -> &[Duration] {
        &self.delays
    }

    /// The wait before the next attempt, after attempt `failed` (1-based) failed; `None` when
    /// it was the last (the message has failed for the endpoint).
    ///
    /// `jitter` in `[-1, 1]` (a uniform random draw) moves the scheduled delay by up to
    /// +-20 %; `retry_after`, the receiver's `Retry-After` after a 429 or 503, replaces the
    /// jittered delay, up to twice the scheduled one.
    pub fn next_delay(
        &self,
        failed: u32,
        jitter: f64,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let index = usize::try_from(failed.checked_sub(1)?).ok()?;
        let scheduled = *self.delays.get(index)?;
        let factor = 1.0 + JITTER * jitter.clamp(-1.0, 1.0);
        let jittered = scheduled.mul_f64(factor);
        Some(match retry_after {
            Some(asked) => asked.min(scheduled.saturating_mul(2)),
            None => jittered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_ladder_is_specs() {
        let s = Schedule::default();
        assert_eq!(s.attempts(), 8);
        let secs: Vec<u64> = (1..=7)
            .map(|n| s.next_delay(n, 0.0, None).unwrap().as_secs())
            .collect();
        assert_eq!(secs, [5, 300, 1800, 7200, 18000, 36000, 36000]);
        assert_eq!(s.next_delay(8, 0.0, None), None);
        assert_eq!(s.next_delay(0, 0.0, None), None);
    }

    #[test]
    fn jitter_moves_a_delay_by_at_most_a_fifth() {
        let s = Schedule::default();
        assert_eq!(s.next_delay(2, 1.0, None), Some(Duration::from_secs(360)));
        assert_eq!(s.next_delay(2, -1.0, None), Some(Duration::from_secs(240)));
        assert_eq!(s.next_delay(2, 7.0, None), Some(Duration::from_secs(360)));
    }

    #[test]
    fn retry_after_is_honoured_up_to_twice_the_delay() {
        let s = Schedule::default();
        let asked = |secs| Some(Duration::from_secs(secs));
        assert_eq!(s.next_delay(2, 0.5, asked(60)), asked(60));
        assert_eq!(s.next_delay(2, 0.5, asked(3600)), asked(600));
        assert_eq!(s.next_delay(1, 0.0, asked(0)), asked(0));
    }

    #[test]
    fn a_schedule_is_read_from_the_flag() {
        let s: Schedule = "100ms, 1s,2m,1h,1d".parse().unwrap();
        assert_eq!(
            s.delays(),
            [
                Duration::from_millis(100),
                Duration::from_secs(1),
                Duration::from_secs(120),
                Duration::from_secs(3600),
                Duration::from_secs(86400)
            ]
        );
        assert_eq!(s.attempts(), 6);
        for bad in ["", "5", "5x", "-1s", "1.5s", "s", "5s,,5s"] {
            let err = bad.parse::<Schedule>().unwrap_err();
            assert!(
                err.to_string().contains("--webhook-schedule"),
                "{bad}: {err}"
            );
        }
        let many = vec!["1s"; 21].join(",");
        assert!(
            many.parse::<Schedule>()
                .unwrap_err()
                .reason
                .contains("at most 20")
        );
    }
}
