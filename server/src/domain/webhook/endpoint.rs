//! Webhook endpoints as the store keeps them and the API writes them (docs/contract/webhooks.md "Endpoints"):
//! their status, subscriptions and signing secrets.

use serde::Serialize;

use super::event_type::{EventType, UnknownEventType};
use super::signature::{Secret, StoredSecret, UnreadableSecret};
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
    /// The signing secret, as read from the store (`whsec_...` as text there).
    pub secret: StoredSecret,
    /// The secret before the last rotation, which signs too until `previous_secret_until_ms`.
    pub previous_secret: Option<StoredSecret>,
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
    /// during a rotation's overlap.
    ///
    /// # Errors
    ///
    /// [`UnreadableSecret`] when one of them does not read: the attempt fails rather than go
    /// out signed by fewer secrets than the receiver may expect.
    pub fn signing_secrets(&self, now_ms: i64) -> Result<Vec<Secret>, UnreadableSecret> {
        super::signature::signing_secrets(
            &self.secret,
            self.previous_secret.as_ref(),
            self.previous_secret_until_ms,
            now_ms,
        )
    }

    /// A new secret: the current one signs too for [`ROTATION_OVERLAP_MS`] after `now_ms`,
    /// unless it does not read (then it is dropped: a rotation is how an unreadable secret is
    /// replaced).
    pub fn rotate(&mut self, secret: Secret, now_ms: i64) {
        let old = std::mem::replace(&mut self.secret, StoredSecret::from(secret));
        let readable = matches!(old, StoredSecret::Read(_));
        self.previous_secret = readable.then_some(old);
        self.previous_secret_until_ms =
            readable.then(|| now_ms.saturating_add(ROTATION_OVERLAP_MS));
        self.updated_at_ms = now_ms;
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
    secret: Option<String>,
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
            secret: Some(e.secret.stored()),
            ..EndpointItem::of(e)
        }
    }
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
    fn the_previous_secret_signs_only_during_the_overlap() {
        let a = Secret::generate().unwrap();
        let b = Secret::generate().unwrap();
        let mut e = Endpoint {
            id: "we_1".into(),
            url: "https://example.com/".into(),
            event_types: vec![EventType::NudgeShown],
            description: None,
            status: Status::Enabled,
            secret: StoredSecret::from(a.clone()),
            previous_secret: None,
            previous_secret_until_ms: None,
            failing_since_ms: None,
            created_at_ms: 0,
            updated_at_ms: 0,
        };
        e.rotate(b.clone(), 1000 - ROTATION_OVERLAP_MS);
        assert_eq!(e.signing_secrets(999), Ok(vec![b.clone(), a]));
        assert_eq!(e.signing_secrets(1000), Ok(vec![b]));
    }

    #[test]
    fn an_unreadable_secret_fails_the_signing_and_a_rotation_drops_it() {
        let good = Secret::generate().unwrap();
        let mut e = Endpoint {
            id: "we_1".into(),
            url: "https://example.com/".into(),
            event_types: vec![EventType::NudgeShown],
            description: None,
            status: Status::Enabled,
            secret: StoredSecret::read("whsec_tooShort"),
            previous_secret: Some(StoredSecret::from(good.clone())),
            previous_secret_until_ms: Some(i64::MAX),
            failing_since_ms: None,
            created_at_ms: 0,
            updated_at_ms: 0,
        };
        assert_eq!(e.signing_secrets(0).unwrap_err().which, "secret");
        e.secret = StoredSecret::from(good.clone());
        e.previous_secret = Some(StoredSecret::read("not a secret"));
        assert_eq!(e.signing_secrets(0).unwrap_err().which, "previous_secret");
        // Past the overlap the previous one no longer signs, read or not.
        e.previous_secret_until_ms = Some(0);
        assert_eq!(e.signing_secrets(0), Ok(vec![good.clone()]));
        // Rotating away from an unreadable secret keeps no previous one.
        e.secret = StoredSecret::read("whsec_tooShort");
        let fresh = Secret::generate().unwrap();
        e.rotate(fresh.clone(), 5);
        assert_eq!(e.previous_secret, None);
        assert_eq!(e.previous_secret_until_ms, None);
        assert_eq!(e.signing_secrets(5), Ok(vec![fresh]));
        assert_eq!(e.updated_at_ms, 5);
    }
}
