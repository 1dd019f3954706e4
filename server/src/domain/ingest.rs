//! The relay's body and events (docs/contract/relay.md "Body", "Each event is judged alone", "Clocks"): what a
//! batch must be to be read at all (else a 400 for the whole), and what each event must be to
//! be stored (else it is listed, with its index and a message naming the field and the value).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use nudge_rules::{NudgeOutcome, NudgeType};

use super::event::{EventKind, NewEvent};
use super::ids::path_key;
use super::time::parse_rfc3339_ms;

/// The largest relay body, in bytes (413 beyond).
pub const MAX_BODY_BYTES: usize = 512 * 1024;
/// The most events in one batch.
pub const MAX_EVENTS: usize = 500;
/// The largest event, in bytes of its JSON text.
pub const MAX_EVENT_BYTES: usize = 32 * 1024;
/// An event at most this far in the future (after the clock correction) is stored at its
/// time; further, at the time it was received.
pub const FUTURE_TOLERANCE_MS: i64 = 5 * 60 * 1000;
/// An event more than this before it was received, or after its session's start, is refused.
pub const MAX_AGE_MS: i64 = 24 * 60 * 60 * 1000;
/// The longest URL, in bytes (docs/contract/urls.md).
pub const MAX_URL_BYTES: usize = 8192;

/// A relay body, read: the optional key and send time, and each event's raw JSON.
#[derive(Debug)]
pub struct Batch<'a> {
    /// `site_key`, when the body carries the key (a beacon cannot set headers).
    pub site_key: Option<String>,
    /// `sent_at`, Unix milliseconds, when given.
    pub sent_at_ms: Option<i64>,
    /// The events, unread.
    pub events: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Body<'a> {
    site_key: Option<String>,
    sent_at: Option<String>,
    #[serde(borrow)]
    events: Option<Vec<&'a RawValue>>,
}

/// Reads a relay body.
///
/// # Errors
///
/// A message for the 400 of the whole body:
/// - not JSON (or not UTF-8, or nested too deep), not an object, an unknown top-level field;
/// - `site_key` or `sent_at` of the wrong type, `sent_at` not RFC 3339;
/// - no `events` array, or an empty one, or more than [`MAX_EVENTS`].
pub fn read_batch(body: &[u8]) -> Result<Batch<'_>, String> {
    let body: Body<'_> = serde_json::from_slice(body).map_err(|e| {
        format!("the body must be a JSON object {{\"events\": [...]}} with optional \"site_key\" and \"sent_at\": {e}")
    })?;
    let sent_at_ms = match &body.sent_at {
        None => None,
        Some(text) => Some(
            parse_rfc3339_ms(text, 9)
                .map_err(|e| format!("sent_at must be {e}, got {}", shown(text)))?,
        ),
    };
    let events = body
        .events
        .ok_or("the body has no \"events\" array; send {\"events\": [...]}")?;
    if events.is_empty() || events.len() > MAX_EVENTS {
        return Err(format!(
            "events must hold 1 to {MAX_EVENTS} events, got {}",
            events.len()
        ));
    }
    Ok(Batch {
        site_key: body.site_key,
        sent_at_ms,
        events,
    })
}

/// How a batch's times are read (docs/contract/relay.md "Clocks").
#[derive(Clone, Copy, Debug)]
pub struct Clocks {
    /// When the server received the batch, Unix ms.
    pub received_at_ms: i64,
    /// The batch's `sent_at`, Unix ms.
    pub sent_at_ms: Option<i64>,
}

impl Clocks {
    /// An event's time in the server's clock: `received - (sent - occurred)` with `sent_at`,
    /// `occurred` without; at most [`FUTURE_TOLERANCE_MS`] ahead, else `received`.
    pub fn corrected(&self, occurred_at_ms: i64) -> i64 {
        let at = match self.sent_at_ms {
            Some(sent) => self
                .received_at_ms
                .saturating_sub(sent.saturating_sub(occurred_at_ms)),
            None => occurred_at_ms,
        };
        if at > self.received_at_ms.saturating_add(FUTURE_TOLERANCE_MS) {
            self.received_at_ms
        } else {
            at
        }
    }
}

fn shown(text: &str) -> String {
    let cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        format!("{cut:?}...")
    } else {
        format!("{cut:?}")
    }
}

fn shown_value(value: &Value) -> String {
    match value {
        Value::String(s) => shown(s),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        other => {
            let text = other.to_string();
            shown(&text).trim_matches('"').to_owned()
        }
    }
}

const COMMON: [&str; 5] = [
    "message_id",
    "session_id",
    "type",
    "occurred_at",
    "visitor_id",
];
const PAGE: [&str; 2] = ["url", "intent_score"];
const SHOWN: [&str; 5] = ["nudge_id", "nudge_type", "rule_id", "url", "intent_score"];
const OUTCOME: [&str; 2] = ["nudge_id", "outcome"];
const HELD_OUT: [&str; 4] = ["rule_id", "nudge_type", "url", "intent_score"];

/// Reads one event; its time is corrected by `clocks`, and page keys use `case_sensitive`.
///
/// # Errors
///
/// A message naming the field and the value:
/// - more than [`MAX_EVENT_BYTES`], not an object, an unknown field;
/// - `message_id` not 1 to 100 of `[A-Za-z0-9_.:-]`; `session_id` not `sess_` and 1 to 64 of
///   `[A-Za-z0-9_-]`; `visitor_id` (optional, any type) not `vis_` and 1 to 64 of
///   `[A-Za-z0-9_-]`; `type` not one of the six;
/// - `occurred_at` not RFC 3339, or more than 24 hours before the batch was received;
/// - `url` missing (page events, NUDGE_HELD_OUT), not a path or an absolute http(s) URL, over 8,192 bytes;
/// - `intent_score` not an integer from 0 to 100;
/// - `nudge_id` not `nudg_` and 1 to 64 of `[A-Za-z0-9_-]`; `nudge_type` not one of the four;
///   `rule_id` (optional on NUDGE_SHOWN, required on NUDGE_HELD_OUT) not 1 to 64 of
///   `[A-Za-z0-9_-]`; `outcome` not `clicked`, `dismissed` or `chat_opened`.
pub fn read_event(
    raw: &RawValue,
    clocks: &Clocks,
    case_sensitive: bool,
) -> Result<NewEvent, String> {
    let text = raw.get();
    if text.len() > MAX_EVENT_BYTES {
        return Err(format!(
            "the event has {} bytes; at most {MAX_EVENT_BYTES} (32 KiB) are allowed",
            text.len()
        ));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the event is not JSON: {e}"))?;
    let Value::Object(fields) = value else {
        return Err(format!(
            "an event must be an object, got {}",
            shown_value(&value)
        ));
    };
    let kind_text = string(&fields, "type")?;
    let kind = EventKind::parse(kind_text).ok_or_else(|| {
        format!(
            "type must be one of PAGE_VIEW, ADD_TO_CART, PURCHASE, NUDGE_SHOWN, NUDGE_OUTCOME, NUDGE_HELD_OUT, got {}",
            shown(kind_text)
        )
    })?;
    let own: &[&str] = match kind {
        EventKind::PageView | EventKind::AddToCart | EventKind::Purchase => &PAGE,
        EventKind::NudgeShown => &SHOWN,
        EventKind::NudgeOutcome => &OUTCOME,
        EventKind::NudgeHeldOut => &HELD_OUT,
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !COMMON.contains(&k.as_str()) && !own.contains(&k.as_str()))
    {
        let expected: Vec<&str> = COMMON.iter().chain(own).copied().collect();
        let hint = nudge_rules::suggest_name(unknown, &expected)
            .map(|s| format!("; did you mean {s:?}?"))
            .unwrap_or_else(|| format!("; a {kind_text} event has {}", expected.join(", ")));
        return Err(format!("unknown field {}{hint}", shown(unknown)));
    }
    let message_id = string(&fields, "message_id")?;
    let well_formed = (1..=100).contains(&message_id.len())
        && message_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b));
    if !well_formed {
        return Err(format!(
            "message_id must be 1 to 100 of A-Z a-z 0-9 _ . : -, got {}",
            shown(message_id)
        ));
    }
    let session_id = string(&fields, "session_id")?;
    if !super::ids::is_session_id(session_id) {
        return Err(format!(
            "session_id must be sess_ followed by 1 to 64 of A-Z a-z 0-9 _ -, got {}",
            shown(session_id)
        ));
    }
    let visitor_id = match optional_string(&fields, "visitor_id")? {
        None => None,
        Some(id) if is_visitor_id(id) => Some(id.to_owned()),
        Some(id) => {
            return Err(format!(
                "visitor_id must be vis_ followed by 1 to 64 of A-Z a-z 0-9 _ -, got {}",
                shown(id)
            ));
        }
    };
    let occurred_text = string(&fields, "occurred_at")?;
    let occurred = parse_rfc3339_ms(occurred_text, 9)
        .map_err(|e| format!("occurred_at must be {e}, got {}", shown(occurred_text)))?;
    let at = clocks.corrected(occurred);
    if at < clocks.received_at_ms.saturating_sub(MAX_AGE_MS) {
        return Err(format!(
            "occurred_at {} is more than 24 hours before the batch was received; events are accepted for 24 hours",
            shown(occurred_text)
        ));
    }
    let mut event = NewEvent {
        visitor_id,
        ..NewEvent::new(message_id, session_id, kind, at)
    };
    if let Some(value) = fields.get("intent_score") {
        let score = value
            .as_u64()
            .filter(|n| *n <= 100)
            .and_then(|n| u8::try_from(n).ok());
        event.intent_score = Some(score.ok_or_else(|| {
            format!(
                "intent_score must be an integer from 0 to 100, got {}",
                shown_value(value)
            )
        })?);
    }
    let url_required = kind.is_page_event() || kind == EventKind::NudgeHeldOut;
    if let Some(url) = optional_string(&fields, "url")?.or(if url_required {
        Some(string(&fields, "url")?)
    } else {
        None
    }) {
        check_url(url)?;
        event.path_key = Some(path_key(url, case_sensitive));
        event.url = Some(url.to_owned());
    }
    match kind {
        EventKind::NudgeShown => {
            event.nudge_id = Some(nudge_id(&fields)?);
            event.nudge_type = Some(nudge_type(&fields)?);
            if let Some(rule_id) = optional_string(&fields, "rule_id")? {
                event.rule_id = Some(checked_rule_id(rule_id)?);
            }
        }
        EventKind::NudgeHeldOut => {
            event.rule_id = Some(checked_rule_id(string(&fields, "rule_id")?)?);
            event.nudge_type = Some(nudge_type(&fields)?);
        }
        EventKind::NudgeOutcome => {
            event.nudge_id = Some(nudge_id(&fields)?);
            let outcome = string(&fields, "outcome")?;
            match NudgeOutcome::from_wire(outcome) {
                Some(o) if o != NudgeOutcome::Shown => event.outcome = Some(o),
                _ => {
                    return Err(format!(
                        "outcome must be clicked, dismissed or chat_opened (chat bubbles only), got {}",
                        shown(outcome)
                    ));
                }
            }
        }
        EventKind::PageView | EventKind::AddToCart | EventKind::Purchase => {}
    }
    Ok(event)
}

fn string<'v>(fields: &'v Map<String, Value>, name: &str) -> Result<&'v str, String> {
    match fields.get(name) {
        None => Err(format!("missing field {name:?}")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "{name} must be a string, got {}",
            shown_value(other)
        )),
    }
}

fn optional_string<'v>(
    fields: &'v Map<String, Value>,
    name: &str,
) -> Result<Option<&'v str>, String> {
    match fields.get(name) {
        None => Ok(None),
        Some(_) => string(fields, name).map(Some),
    }
}

fn nudge_type(fields: &Map<String, Value>) -> Result<NudgeType, String> {
    let nudge_type = string(fields, "nudge_type")?;
    NudgeType::from_wire(nudge_type).ok_or_else(|| {
        format!(
            "nudge_type must be one of chat_bubble, toast, exit_modal, sticky_bar, got {}",
            shown(nudge_type)
        )
    })
}

/// 1 to 64 of `[A-Za-z0-9_-]` (docs/contract/README.md's rule ids).
fn checked_rule_id(rule_id: &str) -> Result<String, String> {
    let ok = (1..=64).contains(&rule_id.len())
        && rule_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(rule_id.to_owned())
    } else {
        Err(format!(
            "rule_id must be 1 to 64 of A-Z a-z 0-9 _ -, got {}",
            shown(rule_id)
        ))
    }
}

/// `vis_` then 1 to 64 of `[A-Za-z0-9_-]` (docs/contract/caps.md).
pub fn is_visitor_id(text: &str) -> bool {
    text.strip_prefix("vis_").is_some_and(|rest| {
        (1..=64).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

fn nudge_id(fields: &Map<String, Value>) -> Result<String, String> {
    let id = string(fields, "nudge_id")?;
    if super::ids::is_nudge_id(id) {
        Ok(id.to_owned())
    } else {
        Err(format!(
            "nudge_id must be nudg_ followed by 1 to 64 of A-Z a-z 0-9 _ -, got {}",
            shown(id)
        ))
    }
}

/// A path (starting with `/`) or an absolute http(s) URL, at most [`MAX_URL_BYTES`]; whether
/// docs/contract/urls.md accepts it decides only its page key.
fn check_url(url: &str) -> Result<(), String> {
    if url.len() > MAX_URL_BYTES {
        return Err(format!(
            "url has {} bytes; at most {MAX_URL_BYTES} are allowed",
            url.len()
        ));
    }
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if url.starts_with('/') || lower.starts_with("http://") || lower.starts_with("https://") {
        Ok(())
    } else {
        Err(format!(
            "url must be a path starting with / or an absolute http(s) URL, got {}",
            shown(url)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_795_000_000_000;

    fn clocks() -> Clocks {
        Clocks {
            received_at_ms: NOW,
            sent_at_ms: None,
        }
    }

    fn event(json: &str) -> Result<NewEvent, String> {
        let raw: Box<RawValue> = serde_json::from_str(json).unwrap();
        read_event(&raw, &clocks(), false)
    }

    #[test]
    fn batches_that_cannot_be_read_are_refused_whole() {
        for bad in [
            "",
            "[]",
            "{\"events\": 3}",
            "{}",
            "{\"events\": []}",
            "{\"events\": [{}], \"extra\": 1}",
            "{\"events\": [{}], \"sent_at\": \"yesterday\"}",
        ] {
            assert!(read_batch(bad.as_bytes()).is_err(), "{bad}");
        }
        let many = format!("{{\"events\": [{}]}}", vec!["{}"; 501].join(","));
        assert!(
            read_batch(many.as_bytes())
                .unwrap_err()
                .contains("1 to 500")
        );
        // 10,000-deep nesting: the batch reads (its events are skipped unread), the event is
        // refused alone.
        let deep = format!(
            "{{\"events\": [{}1{}]}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let batch = read_batch(deep.as_bytes()).unwrap();
        let err = read_event(batch.events[0], &clocks(), false).unwrap_err();
        assert!(err.contains("32 KiB") || err.contains("not JSON"), "{err}");
        let deep = format!(
            "{{\"events\": [{}1{}]}}",
            "[".repeat(1_000),
            "]".repeat(1_000)
        );
        let batch = read_batch(deep.as_bytes()).unwrap();
        let err = read_event(batch.events[0], &clocks(), false).unwrap_err();
        assert!(err.contains("recursion limit"), "{err}");
        let ok = read_batch(b"{\"site_key\": \"pk_test_x\", \"sent_at\": \"2026-11-24T10:00:00.123456Z\", \"events\": [{}, 1]}").unwrap();
        assert_eq!(ok.events.len(), 2);
    }

    #[test]
    fn each_field_is_checked_and_named() {
        let t = crate::domain::time::format_ms(NOW - 1000);
        let base = |extra: &str| {
            format!(
                "{{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"PAGE_VIEW\", \"occurred_at\": \"{t}\", \"url\": \"/p\"{extra}}}"
            )
        };
        let e = event(&base("")).unwrap();
        assert_eq!(
            (e.occurred_at_ms, e.path_key.as_deref()),
            (NOW - 1000, Some("/p"))
        );
        for (extra, named) in [
            (", \"intent_score\": 50.5", "intent_score"),
            (", \"intent_score\": \"50\"", "intent_score"),
            (", \"intent_score\": 101", "intent_score"),
            (", \"urll\": \"/x\"", "did you mean \"url\""),
            (", \"nudge_id\": \"nudg_1\"", "unknown field \"nudge_id\""),
        ] {
            let err = event(&base(extra)).unwrap_err();
            assert!(err.contains(named), "{extra}: {err}");
        }
        for (json, named) in [
            (
                "{\"message_id\": \"m 1\", \"session_id\": \"sess_a\", \"type\": \"PURCHASE\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"url\": \"/\"}",
                "message_id",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"s_a\", \"type\": \"PURCHASE\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"url\": \"/\"}",
                "session_id",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"CLICK\", \"occurred_at\": \"2026-11-24T10:00:00Z\"}",
                "type must be",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"PURCHASE\", \"occurred_at\": \"2026-02-30T25:61:00Z\", \"url\": \"/\"}",
                "occurred_at",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"PURCHASE\", \"occurred_at\": \"2026-11-24T10:00:00Z\"}",
                "missing field \"url\"",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"PURCHASE\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"url\": \"javascript:alert(1)\"}",
                "url must be",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"NUDGE_SHOWN\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"nudge_id\": \"nudg_1\", \"nudge_type\": \"popup\"}",
                "nudge_type",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"NUDGE_OUTCOME\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"nudge_id\": \"x\", \"outcome\": \"clicked\"}",
                "nudge_id",
            ),
            (
                "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"NUDGE_OUTCOME\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"nudge_id\": \"nudg_1\", \"outcome\": \"shown\"}",
                "outcome",
            ),
            ("[1]", "must be an object"),
        ] {
            let err = event(json).unwrap_err();
            assert!(err.contains(named), "{json}: {err}");
        }
        let big = base(&format!(
            ", \"intent_score\": 5{}",
            " ".repeat(MAX_EVENT_BYTES)
        ));
        assert!(event(&big).unwrap_err().contains("32 KiB"));
    }

    #[test]
    fn held_out_events_and_visitor_ids_are_checked_and_named() {
        let held = |extra: &str| {
            format!(
                "{{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"NUDGE_HELD_OUT\", \"occurred_at\": \"2026-11-24T10:00:00Z\"{extra}}}"
            )
        };
        let at = |json: String| {
            let raw: Box<RawValue> = serde_json::from_str(&json).unwrap();
            let c = Clocks {
                received_at_ms: 1_795_000_000_000,
                sent_at_ms: None,
            };
            read_event(&raw, &c, false)
        };
        let ok = at(held(
            ", \"rule_id\": \"r-1\", \"nudge_type\": \"toast\", \"url\": \"/p\", \"intent_score\": 7, \"visitor_id\": \"vis_Ab-9\"",
        ))
        .unwrap();
        assert_eq!(ok.kind, EventKind::NudgeHeldOut);
        assert_eq!(
            (
                ok.rule_id.as_deref(),
                ok.nudge_type.map(NudgeType::as_str),
                ok.url.as_deref(),
                ok.intent_score,
                ok.visitor_id.as_deref()
            ),
            (
                Some("r-1"),
                Some("toast"),
                Some("/p"),
                Some(7),
                Some("vis_Ab-9")
            )
        );
        for (extra, named) in [
            (
                ", \"nudge_type\": \"toast\", \"url\": \"/p\"",
                "missing field \"rule_id\"",
            ),
            (
                ", \"rule_id\": \"r 1\", \"nudge_type\": \"toast\", \"url\": \"/p\"",
                "rule_id must be 1 to 64 of A-Z a-z 0-9 _ -, got \"r 1\"",
            ),
            (
                ", \"rule_id\": \"r1\", \"nudge_type\": \"popup\", \"url\": \"/p\"",
                "nudge_type must be one of chat_bubble, toast, exit_modal, sticky_bar, got \"popup\"",
            ),
            (
                ", \"rule_id\": \"r1\", \"url\": \"/p\"",
                "missing field \"nudge_type\"",
            ),
            (
                ", \"rule_id\": \"r1\", \"nudge_type\": \"toast\"",
                "missing field \"url\"",
            ),
            (
                ", \"rule_id\": \"r1\", \"nudge_type\": \"toast\", \"url\": \"/p\", \"nudge_id\": \"nudg_1\"",
                "unknown field \"nudge_id\"",
            ),
            (
                ", \"rule_id\": \"r1\", \"nudge_type\": \"toast\", \"url\": \"/p\", \"visitor_id\": \"visitor_1\"",
                "visitor_id must be vis_ followed by 1 to 64 of A-Z a-z 0-9 _ -, got \"visitor_1\"",
            ),
        ] {
            let err = at(held(extra)).unwrap_err();
            assert!(err.contains(named), "{extra}: {err}");
        }
        // visitor_id on every other type.
        let page = "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"PAGE_VIEW\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"url\": \"/\", \"visitor_id\": \"vis_1\"}";
        assert_eq!(
            at(page.to_owned()).unwrap().visitor_id.as_deref(),
            Some("vis_1")
        );
        let outcome = "{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"NUDGE_OUTCOME\", \"occurred_at\": \"2026-11-24T10:00:00Z\", \"nudge_id\": \"nudg_1\", \"outcome\": \"clicked\", \"visitor_id\": \"vis_\"}";
        assert!(at(outcome.to_owned()).unwrap_err().contains("visitor_id"));
        assert!(is_visitor_id(&format!("vis_{}", "a".repeat(64))));
        assert!(!is_visitor_id(&format!("vis_{}", "a".repeat(65))));
    }

    #[test]
    fn clocks_are_corrected_and_bounded() {
        let c = Clocks {
            received_at_ms: NOW,
            sent_at_ms: Some(NOW + 60_000),
        };
        // The browser's clock is a minute fast: its times move back a minute.
        assert_eq!(c.corrected(NOW + 50_000), NOW - 10_000);
        let c = Clocks {
            received_at_ms: NOW,
            sent_at_ms: None,
        };
        assert_eq!(
            c.corrected(NOW + FUTURE_TOLERANCE_MS),
            NOW + FUTURE_TOLERANCE_MS
        );
        assert_eq!(c.corrected(NOW + FUTURE_TOLERANCE_MS + 1), NOW);
        let old = crate::domain::time::format_ms(NOW - MAX_AGE_MS - 1);
        let json = format!(
            "{{\"message_id\": \"m1\", \"session_id\": \"sess_a\", \"type\": \"PURCHASE\", \"occurred_at\": \"{old}\", \"url\": \"/\"}}"
        );
        assert!(event(&json).unwrap_err().contains("24 hours"));
    }
}
