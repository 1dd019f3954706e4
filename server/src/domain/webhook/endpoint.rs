//! Webhook endpoints, messages and attempts as the store keeps them and the API writes them
//! (docs/contract/webhooks.md "Endpoints", "Event types and payloads").

use serde::Serialize;

use super::event_type::{EventType, UnknownEventType};
use super::signature::Secret;
use crate::domain::time::WireTime;

/// Whether an endpoint receives messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Messages are addressed to it and delivered.
    Enabled,
    /// Nothing is addressed to it; its pending deliveries failed when it was disabled (by
    /// `PATCH`, a 410 Gone, or 5 days of failures). `recover` sends them again once enabled.
    Disabled,
}

impl Status {
    /// `enabled` or `disabled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Enabled => "enabled",
            Status::Disabled => "disabled",
        }
    }

    /// Reads `enabled` or `disabled`.
    ///
    /// # Errors
    ///
    /// The text, when it is neither.
    pub fn parse(text: &str) -> Result<Status, String> {
        match text {
            "enabled" => Ok(Status::Enabled),
            "disabled" => Ok(Status::Disabled),
            other => Err(format!(
                "status must be \"enabled\" or \"disabled\", got {other:?}"
            )),
        }
    }
}

/// An endpoint of one site and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `we_` and 24 hex digits.
    pub id: String,
    /// The URL as the WHATWG parser serializes it (checked at registration and each attempt).
    pub url: String,
    /// The subscribed event types, in docs/contract/webhooks.md's order, without repeats.
    pub event_types: Vec<EventType>,
    /// The merchant's note, at most [`MAX_DESCRIPTION_CHARS`].
    pub description: Option<String>,
    /// Enabled or disabled.
    pub status: Status,
    /// The signing secret's text (`whsec_...`).
    pub secret: String,
    /// The secret before the last rotation, which signs too until `previous_secret_until_ms`.
    pub previous_secret: Option<String>,
    /// Unix ms.
    pub previous_secret_until_ms: Option<i64>,
    /// The first failed attempt since the last success, Unix ms (the 5-day rule).
    pub failing_since_ms: Option<i64>,
    /// Unix ms.
    pub created_at_ms: i64,
    /// Unix ms.
    pub updated_at_ms: i64,
}

/// The longest `description`, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;

/// Most endpoints per site and mode.
pub const MAX_ENDPOINTS: usize = 20;

/// How long the previous secret signs after a rotation (docs/contract/webhooks.md: 24 hours), in ms.
pub const ROTATION_OVERLAP_MS: i64 = 24 * 3600 * 1000;

impl Endpoint {
    /// Its place in the newest-first list: `(created_at_ms, id)`, the keyset position.
    pub fn position(&self) -> (i64, String) {
        (self.created_at_ms, self.id.clone())
    }

    /// Whether it receives messages of `event_type` (`webhook.test` is sent to the endpoint it
    /// names whatever its subscription).
    pub fn subscribes(&self, event_type: EventType) -> bool {
        self.event_types.contains(&event_type)
    }

    /// The secrets that sign an attempt at `now_ms`: the current one, then the previous one
    /// during a rotation's overlap. A stored text that does not parse is left out.
    pub fn signing_secrets(&self, now_ms: i64) -> Vec<Secret> {
        let previous = match (&self.previous_secret, self.previous_secret_until_ms) {
            (Some(text), Some(until)) if now_ms < until => Some(text.as_str()),
            _ => None,
        };
        std::iter::once(self.secret.as_str())
            .chain(previous)
            .filter_map(|text| Secret::parse(text).ok())
            .collect()
    }
}

/// Event types as stored: their names, space-separated.
pub fn types_text(types: &[EventType]) -> String {
    types
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads [`types_text`]'s form.
///
/// # Errors
///
/// The first name that is no event type.
pub fn parse_types_text(text: &str) -> Result<Vec<EventType>, UnknownEventType> {
    text.split_whitespace().map(str::parse).collect()
}

/// Event types as sent (`"event_types": [...]`): each known, at least one; repeats dropped, in
/// docs/contract/webhooks.md's order.
///
/// # Errors
///
/// A message naming the unknown type, or saying the list is empty.
pub fn parse_types<S: AsRef<str>>(names: &[S]) -> Result<Vec<EventType>, String> {
    if names.is_empty() {
        return Err(format!(
            "event_types is empty; name at least one of {}",
            super::event_type::ALL
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut types = names
        .iter()
        .map(|n| n.as_ref().parse::<EventType>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("event_types: {e}"))?;
    types.sort();
    types.dedup();
    Ok(types)
}

/// An endpoint as the API writes it; the secret only when created or rotated.
#[derive(Serialize)]
pub struct EndpointItem<'a> {
    id: &'a str,
    url: &'a str,
    event_types: Vec<&'static str>,
    description: Option<&'a str>,
    status: &'static str,
    created_at: WireTime,
    updated_at: WireTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<&'a str>,
}

impl<'a> EndpointItem<'a> {
    /// The wire form without the secret (lists, reads, updates, `webhook_endpoint.disabled`).
    pub fn of(e: &'a Endpoint) -> EndpointItem<'a> {
        EndpointItem {
            id: &e.id,
            url: &e.url,
            event_types: e.event_types.iter().map(|t| t.as_str()).collect(),
            description: e.description.as_deref(),
            status: e.status.as_str(),
            created_at: WireTime(e.created_at_ms),
            updated_at: WireTime(e.updated_at_ms),
            secret: None,
        }
    }

    /// The wire form with the secret (creation and rotation: the only times it is shown).
    pub fn with_secret(e: &'a Endpoint) -> EndpointItem<'a> {
        EndpointItem {
            secret: Some(&e.secret),
            ..EndpointItem::of(e)
        }
    }
}

/// A message of the outbox: its id, type, time and the whole body every attempt sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// `msg_` and 32 hex digits: the `webhook-id` of every attempt and resend.
    pub id: String,
    /// What it tells.
    pub event_type: EventType,
    /// When the change that caused it was stored, Unix ms.
    pub created_at_ms: i64,
    /// `{"id", "type", "created_at", "data"}`, signed as is.
    pub body: String,
}

/// The body of a message.
#[derive(Serialize)]
struct Body<'a, T: Serialize> {
    id: &'a str,
    #[serde(rename = "type")]
    event_type: &'static str,
    created_at: WireTime,
    data: T,
}

impl Message {
    /// A new message of `event_type` with `data` (the read API's shape of the record).
    ///
    /// # Errors
    ///
    /// A message when the system has no random source, or `data` does not serialize.
    pub fn new<T: Serialize>(
        event_type: EventType,
        created_at_ms: i64,
        data: T,
    ) -> Result<Message, String> {
        let id = time_ordered_id("msg_", created_at_ms)?;
        let body = serde_json::to_string(&Body {
            id: &id,
            event_type: event_type.as_str(),
            created_at: WireTime(created_at_ms),
            data,
        })
        .map_err(|e| e.to_string())?;
        Ok(Message {
            id,
            event_type,
            created_at_ms,
            body,
        })
    }
}

/// A message id: `prefix`, then 32 hex digits: `created_at_ms` as 6 bytes (big-endian, so ids
/// sort by time, as Svix's KSUID message ids do) and 10 random bytes (80 bits: unguessable and
/// unique). New messages land at the right edge of the outbox's primary keys instead of on
/// random pages: each group commit rewrites a few pages of the B-trees, not one per message
/// (docs/PERFORMANCE.md "Webhook figures").
///
/// # Errors
///
/// A message when the system has no random source.
pub fn time_ordered_id(prefix: &str, created_at_ms: i64) -> Result<String, String> {
    let mut raw = [0u8; 16];
    let (time, random) = raw.split_at_mut(6);
    let ms = created_at_ms.clamp(0, (1 << 48) - 1).to_be_bytes();
    time.copy_from_slice(ms.get(2..).unwrap_or_default());
    getrandom::fill(random).map_err(|e| format!("no random source: {e}"))?;
    Ok(format!("{prefix}{}", hex::encode(raw)))
}

/// `prefix` and `bytes` random bytes in hex.
///
/// # Errors
///
/// A message when the system has no random source.
pub fn random_id(prefix: &str, bytes: usize) -> Result<String, String> {
    let mut raw = vec![0u8; bytes];
    getrandom::fill(&mut raw).map_err(|e| format!("no random source: {e}"))?;
    Ok(format!("{prefix}{}", hex::encode(raw)))
}

/// The longest response body kept in the attempts log, in bytes (docs/contract/webhooks.md: the first 4 KiB).
pub const LOGGED_BODY_BYTES: usize = 4096;

/// One delivery attempt, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Its place in the log (ascending).
    pub seq: i64,
    /// The message.
    pub message_id: String,
    /// The message's type.
    pub event_type: String,
    /// 1 for the first attempt of a delivery (a resend starts at 1 again).
    pub attempt: i64,
    /// Unix ms.
    pub attempted_at_ms: i64,
    /// The response's status, when one came.
    pub status: Option<i64>,
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
    event_type: &'a str,
    attempt: i64,
    attempted_at: WireTime,
    response_status: Option<i64>,
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
            event_type: &a.event_type,
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

/// A delivery the worker claimed: everything one attempt needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The message.
    pub message_id: String,
    /// Its type.
    pub event_type: String,
    /// Its body.
    pub body: String,
    /// The endpoint.
    pub endpoint_id: String,
    /// The endpoint's URL.
    pub url: String,
    /// The signing secrets' texts, the current first.
    pub secrets: Vec<String>,
    /// This attempt's number, 1-based.
    pub attempt: i64,
    /// The claim's token: the result is written only while the claim is this one.
    pub claim: String,
}

/// What an attempt came to.
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
    pub status: Option<i64>,
    /// The failure without a status.
    pub error: Option<String>,
    /// The first 4 KiB of the response body.
    pub body: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_read_in_order_without_repeats_and_unknown_ones_named() {
        let types = parse_types(&["nudge.shown", "session.converted", "nudge.shown"]).unwrap();
        assert_eq!(types, [EventType::SessionConverted, EventType::NudgeShown]);
        assert_eq!(parse_types_text(&types_text(&types)).unwrap(), types);
        let e = parse_types(&["nudge.clicked"]).unwrap_err();
        assert!(e.contains("\"nudge.clicked\""), "{e}");
        assert!(parse_types::<&str>(&[]).unwrap_err().contains("empty"));
    }

    #[test]
    fn message_ids_sort_by_time_and_differ_within_a_millisecond() {
        let t = 1_795_000_000_123;
        let (a, b) = (
            time_ordered_id("msg_", t).unwrap(),
            time_ordered_id("msg_", t).unwrap(),
        );
        let later = time_ordered_id("msg_", t + 1).unwrap();
        assert_ne!(a, b);
        assert!(a < later && b < later, "{a} {b} {later}");
        assert_eq!(&a[4..16], format!("{t:012x}"));
        for id in [
            &a,
            &time_ordered_id("msg_", -5).unwrap(),
            &time_ordered_id("msg_", i64::MAX).unwrap(),
        ] {
            assert!(
                id.len() == 36 && id[4..].bytes().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
    }

    #[test]
    fn a_message_body_has_id_type_time_and_data() {
        let m = Message::new(EventType::Test, 0, serde_json::json!({"a": 1})).unwrap();
        assert!(m.id.starts_with("msg_") && m.id.len() == 36);
        let v: serde_json::Value = serde_json::from_str(&m.body).unwrap();
        assert_eq!(v["id"], m.id.as_str());
        assert_eq!(v["type"], "webhook.test");
        assert_eq!(v["created_at"], "1970-01-01T00:00:00.000Z");
        assert_eq!(v["data"]["a"], 1);
    }

    #[test]
    fn the_previous_secret_signs_only_during_the_overlap() {
        let a = Secret::generate().unwrap().to_string();
        let b = Secret::generate().unwrap().to_string();
        let e = Endpoint {
            id: "we_1".into(),
            url: "https://example.com/".into(),
            event_types: vec![EventType::NudgeShown],
            description: None,
            status: Status::Enabled,
            secret: b,
            previous_secret: Some(a),
            previous_secret_until_ms: Some(1000),
            failing_since_ms: None,
            created_at_ms: 0,
            updated_at_ms: 0,
        };
        assert_eq!(e.signing_secrets(999).len(), 2);
        assert_eq!(e.signing_secrets(1000).len(), 1);
    }
}
