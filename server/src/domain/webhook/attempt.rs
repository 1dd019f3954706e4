//! One delivery attempt (docs/contract/webhooks.md "Delivery"): what the worker claimed ([`Due`]),
//! what came back ([`Answer`]), how that answer is judged ([`judge`]), what the delivery becomes
//! next ([`Verdict::after`], [`Verdict::state`]), and the attempt as logged ([`Attempt`]). Pure:
//! the worker (`app/delivery.rs`) sends and reads, the store writes what these say.

use std::time::Duration;

use serde::Serialize;

use super::event_type::EventType;
use super::schedule::Schedule;
use super::signature::{Secret, UnreadableSecret};
use crate::domain::time::WireTime;

/// How long one attempt may take, whole: connect, request and response body (docs/contract/webhooks.md: a 2xx
/// within 15 s).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);

/// The longest response body kept in the attempts log, in bytes (docs/contract/webhooks.md: the first 4 KiB).
pub const LOGGED_BODY_BYTES: usize = 4096;

/// An HTTP status code as a number (100 to 999 as sent; the client checks its range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct HttpStatus(pub u16);

impl HttpStatus {
    /// 410 Gone: the receiver asks to be sent nothing more.
    pub const GONE: HttpStatus = HttpStatus(410);
    /// 429 Too Many Requests.
    pub const TOO_MANY_REQUESTS: HttpStatus = HttpStatus(429);
    /// 503 Service Unavailable.
    pub const SERVICE_UNAVAILABLE: HttpStatus = HttpStatus(503);

    /// 200 to 299.
    pub fn is_success(self) -> bool {
        (200..300).contains(&self.0)
    }

    /// Whether its `Retry-After` is honoured (429 and 503).
    pub fn asks_to_wait(self) -> bool {
        self == HttpStatus::TOO_MANY_REQUESTS || self == HttpStatus::SERVICE_UNAVAILABLE
    }
}

impl std::fmt::Display for HttpStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A delivery the worker claimed: everything one attempt needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The message.
    pub message_id: String,
    /// Its type.
    pub event_type: EventType,
    /// Its body, signed and sent as it is.
    pub body: String,
    /// The endpoint.
    pub endpoint_id: String,
    /// The endpoint's URL.
    pub url: String,
    /// The secrets that sign it, the current first, read from the store at the claim; the
    /// reason when a stored secret does not read (the attempt then fails, and is logged).
    pub secrets: Result<Vec<Secret>, UnreadableSecret>,
    /// This attempt's number, 1-based.
    pub attempt: i64,
    /// The claim's token: the result is written only while the claim is this one.
    pub claim: String,
}

/// What came back from an attempt, as the worker read it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// The response's status, when one came.
    pub status: Option<HttpStatus>,
    /// Why there is no (whole) answer: not sent (a refused address, an unreadable secret), no
    /// response (connection, time-out), or a body that failed to arrive.
    pub error: Option<String>,
    /// The response's `Retry-After`, in seconds, when it had one.
    pub retry_after: Option<Duration>,
    /// The first [`LOGGED_BODY_BYTES`] of the response body (lossy UTF-8).
    pub body: String,
    /// From the request's start to the body read (or the failure).
    pub took: Duration,
}

/// How an answer is judged ([`judge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// A 2xx, whole, within [`ATTEMPT_TIMEOUT`].
    Delivered,
    /// 410 Gone: the endpoint is disabled at once.
    Gone,
    /// Anything else (a 3xx too: redirects are never followed); `retry_after` is the wait a
    /// 429 or 503 asked for, which replaces the ladder's (up to twice it).
    Failed {
        /// `Retry-After` of a 429 or 503.
        retry_after: Option<Duration>,
    },
}

/// Judges an attempt's answer (docs/contract/webhooks.md "Delivery"): a 2xx whose body came whole within 15 s
/// is delivered; a 410 is gone; everything else failed: a 3xx (never followed), a 2xx that
/// came late or whose body broke off, no answer at all; a 429's or 503's `Retry-After` is kept.
pub fn judge(answer: &Answer) -> Judgement {
    match answer.status {
        Some(status)
            if status.is_success() && answer.error.is_none() && answer.took <= ATTEMPT_TIMEOUT =>
        {
            Judgement::Delivered
        }
        Some(HttpStatus::GONE) => Judgement::Gone,
        status => Judgement::Failed {
            retry_after: answer
                .retry_after
                .filter(|_| status.is_some_and(HttpStatus::asks_to_wait)),
        },
    }
}

/// What an attempt came to, with when the delivery is due again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A 2xx within the time-out.
    Delivered,
    /// 410 Gone: the endpoint is disabled at once.
    Gone,
    /// Anything else: retried at `next_attempt_at_ms`, or failed for good when `None`.
    Failed {
        /// When to try again, Unix ms.
        next_attempt_at_ms: Option<i64>,
    },
}

/// A delivery's state, as stored (`webhook_deliveries.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Due at its `next_attempt_at` (or claimed until its lease ends).
    Pending,
    /// Delivered.
    Succeeded,
    /// Failed for good (the ladder's end, a 410, a disabled endpoint); `recover` or `resend`
    /// makes it pending again.
    Failed,
}

impl DeliveryState {
    /// `pending`, `succeeded` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Succeeded => "succeeded",
            DeliveryState::Failed => "failed",
        }
    }
}

impl Verdict {
    /// The verdict of attempt `attempt` (1-based) judged `judgement` at `attempted_at_ms`: a
    /// failure is retried after the ladder's delay for that attempt, moved by `jitter` (a
    /// uniform draw in `[-1, 1]`: +-20 %) or replaced by the receiver's `Retry-After` (up to
    /// twice the delay); after the ladder's last attempt (the 8th by default) it has failed.
    pub fn after(
        judgement: Judgement,
        attempt: i64,
        attempted_at_ms: i64,
        schedule: &Schedule,
        jitter: f64,
    ) -> Verdict {
        match judgement {
            Judgement::Delivered => Verdict::Delivered,
            Judgement::Gone => Verdict::Gone,
            Judgement::Failed { retry_after } => {
                let failed = u32::try_from(attempt).unwrap_or(u32::MAX);
                let next = schedule.next_delay(failed, jitter, retry_after).map(|d| {
                    let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
                    attempted_at_ms.saturating_add(ms)
                });
                Verdict::Failed {
                    next_attempt_at_ms: next,
                }
            }
        }
    }

    /// The delivery's state after this verdict.
    pub fn state(&self) -> DeliveryState {
        match self {
            Verdict::Delivered => DeliveryState::Succeeded,
            Verdict::Failed {
                next_attempt_at_ms: Some(_),
            } => DeliveryState::Pending,
            Verdict::Gone | Verdict::Failed { .. } => DeliveryState::Failed,
        }
    }

    /// When the delivery is due again (`None`: it does not retry).
    pub fn next_attempt_at_ms(&self) -> Option<i64> {
        match self {
            Verdict::Failed { next_attempt_at_ms } => *next_attempt_at_ms,
            Verdict::Delivered | Verdict::Gone => None,
        }
    }

    /// `delivered`, `gone` or `failed` (the attempts' metric label).
    pub fn outcome(&self) -> &'static str {
        match self {
            Verdict::Delivered => "delivered",
            Verdict::Gone => "gone",
            Verdict::Failed { .. } => "failed",
        }
    }
}

/// The result of an attempt, for the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptResult {
    /// The delivery attempted.
    pub due: Due,
    /// What it came to.
    pub verdict: Verdict,
    /// Unix ms.
    pub attempted_at_ms: i64,
    /// ms.
    pub duration_ms: i64,
    /// The response's status.
    pub status: Option<HttpStatus>,
    /// The failure without a status.
    pub error: Option<String>,
    /// The first 4 KiB of the response body.
    pub body: String,
}

/// One delivery attempt, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Its place in the log (ascending).
    pub seq: i64,
    /// The message.
    pub message_id: String,
    /// The message's type.
    pub event_type: EventType,
    /// 1 for the first attempt of a delivery (a resend starts at 1 again).
    pub attempt: i64,
    /// Unix ms.
    pub attempted_at_ms: i64,
    /// The response's status, when one came.
    pub status: Option<HttpStatus>,
    /// Why it failed without a status (time-out, refused address, connection), or a note.
    pub error: Option<String>,
    /// From the request's start to the response's body read (or the failure), ms.
    pub duration_ms: i64,
    /// The first [`LOGGED_BODY_BYTES`] of the response body (lossy UTF-8).
    pub body: String,
    /// When the next attempt is due, Unix ms; `None` when delivered, failed for good or gone.
    pub next_attempt_at_ms: Option<i64>,
}

/// An attempt as the API writes it (docs/contract/webhooks.md "`GET .../{id}/attempts`").
#[derive(Serialize)]
pub struct AttemptItem<'a> {
    id: String,
    message_id: &'a str,
    event_type: &'static str,
    attempt: i64,
    attempted_at: WireTime,
    response_status: Option<HttpStatus>,
    error: Option<&'a str>,
    duration_ms: i64,
    response_body: &'a str,
    next_attempt_at: Option<WireTime>,
}

impl<'a> AttemptItem<'a> {
    /// The wire form of an attempt; its id is `att_` and its place in the log.
    pub fn of(a: &'a Attempt) -> AttemptItem<'a> {
        AttemptItem {
            id: format!("att_{}", a.seq),
            message_id: &a.message_id,
            event_type: a.event_type.as_str(),
            attempt: a.attempt,
            attempted_at: WireTime(a.attempted_at_ms),
            response_status: a.status,
            error: a.error.as_deref(),
            duration_ms: a.duration_ms,
            response_body: &a.body,
            next_attempt_at: a.next_attempt_at_ms.map(WireTime),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: Option<u16>, error: Option<&str>, retry_after_s: Option<u64>) -> Answer {
        Answer {
            status: status.map(HttpStatus),
            error: error.map(str::to_owned),
            retry_after: retry_after_s.map(Duration::from_secs),
            body: String::new(),
            took: Duration::from_millis(30),
        }
    }

    #[test]
    fn answers_are_judged_as_the_contract_says() {
        let failed = |s: Option<u64>| Judgement::Failed {
            retry_after: s.map(Duration::from_secs),
        };
        let cases = [
            // (status, error, Retry-After, judged)
            (Some(200), None, None, Judgement::Delivered),
            (Some(204), None, Some(9), Judgement::Delivered),
            (Some(299), None, None, Judgement::Delivered),
            // A 2xx whose body broke off, or any 1xx/3xx/4xx/5xx: failed.
            (
                Some(200),
                Some("reading the response body: reset"),
                None,
                failed(None),
            ),
            (Some(199), None, None, failed(None)),
            (Some(300), None, None, failed(None)),
            (Some(302), None, None, failed(None)),
            (Some(308), None, Some(5), failed(None)),
            (Some(400), None, None, failed(None)),
            (Some(404), None, None, failed(None)),
            (Some(500), None, Some(60), failed(None)),
            // 410 disables, even with a broken body.
            (Some(410), None, None, Judgement::Gone),
            (
                Some(410),
                Some("reading the response body: reset"),
                None,
                Judgement::Gone,
            ),
            // 429 and 503 keep their Retry-After.
            (Some(429), None, Some(60), failed(Some(60))),
            (Some(503), None, Some(0), failed(Some(0))),
            (Some(503), None, None, failed(None)),
            // No answer at all.
            (None, Some("timed out after 15 s"), None, failed(None)),
            (
                None,
                Some("refused: 10.0.0.1 is private"),
                None,
                failed(None),
            ),
        ];
        for (status, error, retry_after, judged) in cases {
            let a = answer(status, error, retry_after);
            assert_eq!(judge(&a), judged, "{a:?}");
        }
    }

    #[test]
    fn a_2xx_after_15_seconds_failed() {
        let mut a = answer(Some(200), None, None);
        a.took = ATTEMPT_TIMEOUT;
        assert_eq!(judge(&a), Judgement::Delivered);
        a.took = ATTEMPT_TIMEOUT + Duration::from_millis(1);
        assert_eq!(judge(&a), Judgement::Failed { retry_after: None });
    }

    #[test]
    fn the_next_state_follows_the_ladder_and_ends_after_eight() {
        let ladder = Schedule::default();
        let t = 1_800_000_000_000;
        let failed = Judgement::Failed { retry_after: None };
        let asked = |s| Judgement::Failed {
            retry_after: Some(Duration::from_secs(s)),
        };
        let at = |ms: i64| Verdict::Failed {
            next_attempt_at_ms: Some(t + ms),
        };
        let cases = [
            // (judgement, attempt, jitter, verdict, state)
            (
                Judgement::Delivered,
                1,
                0.0,
                Verdict::Delivered,
                DeliveryState::Succeeded,
            ),
            (
                Judgement::Gone,
                3,
                0.0,
                Verdict::Gone,
                DeliveryState::Failed,
            ),
            (failed, 1, 0.0, at(5_000), DeliveryState::Pending),
            (failed, 1, 1.0, at(6_000), DeliveryState::Pending),
            (failed, 1, -1.0, at(4_000), DeliveryState::Pending),
            (failed, 2, 0.0, at(300_000), DeliveryState::Pending),
            (failed, 3, 0.5, at(1_980_000), DeliveryState::Pending),
            (failed, 7, 0.0, at(36_000_000), DeliveryState::Pending),
            // Retry-After replaces the jittered delay, up to twice the scheduled one.
            (asked(60), 2, 1.0, at(60_000), DeliveryState::Pending),
            (asked(3600), 2, 0.0, at(600_000), DeliveryState::Pending),
            // The 8th attempt was the last.
            (
                failed,
                8,
                0.0,
                Verdict::Failed {
                    next_attempt_at_ms: None,
                },
                DeliveryState::Failed,
            ),
            (
                asked(1),
                8,
                0.0,
                Verdict::Failed {
                    next_attempt_at_ms: None,
                },
                DeliveryState::Failed,
            ),
        ];
        for (judgement, attempt, jitter, verdict, state) in cases {
            let got = Verdict::after(judgement, attempt, t, &ladder, jitter);
            assert_eq!(got, verdict, "{judgement:?} at attempt {attempt}");
            assert_eq!(got.state(), state, "{judgement:?} at attempt {attempt}");
            assert_eq!(got.next_attempt_at_ms(), verdict.next_attempt_at_ms());
        }
        assert_eq!(DeliveryState::Pending.as_str(), "pending");
        assert_eq!(Verdict::Gone.outcome(), "gone");
    }

    #[test]
    fn statuses_are_numbers_on_the_wire() {
        assert_eq!(serde_json::to_string(&HttpStatus(503)).unwrap(), "503");
        assert!(HttpStatus(200).is_success() && !HttpStatus(302).is_success());
        assert!(HttpStatus(429).asks_to_wait() && !HttpStatus(500).asks_to_wait());
    }
}
