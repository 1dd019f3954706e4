//! One recorded session as replay reads it (API document 2.2, docs/contract/as-code.md and docs/contract/caps.md): the session, its
//! events, the nudges it really showed and the visitor's held-out events, with their instants.
//! Built by the text reader (`read.rs`) and by `Sessions::push` (`session.rs`).

use super::timestamp::Timestamp;
use crate::config::NudgeType;
use crate::visit::NudgeOutcome;

/// The event type of a visitor held out from a rule (docs/contract/caps.md): not a page view; it counts for the
/// rule's caps in a replay, and needs `rule_id`.
pub(crate) const NUDGE_HELD_OUT: &str = "NUDGE_HELD_OUT";
/// An instant, with its text as written when it was read from text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The text as read (a file's `"2026-03-01T12:00:00+01:00"` stays as written); `None` for
    /// an instant given as Unix milliseconds (a stored session), written only when shown.
    pub(super) written: Option<String>,
    pub(crate) at: Timestamp,
}

impl Stamp {
    /// The instant `ms` (Unix milliseconds), shown as the server writes it.
    pub(super) fn of_unix_ms(ms: i64) -> Stamp {
        Stamp {
            written: None,
            at: Timestamp::from_unix_ms(ms),
        }
    }

    /// The text shown for it: as written, or as the server writes the instant
    /// ([`super::timestamp::format_unix_ms`]; a backtest formats only the few it shows).
    pub(crate) fn text(&self) -> String {
        match &self.written {
            Some(text) => text.clone(),
            None => super::timestamp::format_unix_ms(self.at.unix_ms()),
        }
    }
}

/// One event of a session's log (API document 2.2 "Session event"), with docs/contract/as-code.md's optional
/// `intent_score`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) event_type: String,
    pub(crate) url: String,
    pub(crate) occurred_at: Stamp,
    pub(crate) intent_score: Option<u8>,
    /// The rule of a `NUDGE_HELD_OUT` event (docs/contract/caps.md); `None` on other events.
    pub(crate) rule_id: Option<String>,
}

/// A recorded `NUDGE_HELD_OUT` event (docs/contract/caps.md): the visitor was held out from `rule_id` then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeldOut {
    pub(crate) rule_id: String,
    pub(crate) at: Stamp,
}

/// Splits the `NUDGE_HELD_OUT` events (with a rule) from the others, both kept in time order:
/// they are no page views, but count for caps (docs/contract/caps.md).
pub(super) fn split_held_out(events: Vec<Event>) -> (Vec<Event>, Vec<HeldOut>) {
    let mut held_out = Vec::new();
    let events = events
        .into_iter()
        .filter_map(|e| match (&e.rule_id, e.event_type == NUDGE_HELD_OUT) {
            (Some(rule_id), true) => {
                held_out.push(HeldOut {
                    rule_id: rule_id.clone(),
                    at: e.occurred_at,
                });
                None
            }
            _ => Some(e),
        })
        .collect();
    (events, held_out)
}

/// A nudge the session really showed (API document 2.2 "Session nudge").
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RecordedNudge {
    pub(crate) nudge_id: Option<String>,
    pub(crate) nudge_type: NudgeType,
    pub(crate) shown_at: Stamp,
    pub(crate) outcome: NudgeOutcome,
    pub(crate) influenced_conversion: bool,
}

/// One recorded session: what replay reads of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) ended_at: Stamp,
    pub(crate) intent_score: u8,
    pub(crate) converted: Option<bool>,
    /// Sorted by `occurred_at`, stably (the API document does not promise an order).
    pub(crate) events: Vec<Event>,
    /// Sorted by `shown_at`, stably.
    pub(crate) nudges: Vec<RecordedNudge>,
    /// The `NUDGE_HELD_OUT` events (docs/contract/caps.md), sorted by time; not in `events`.
    pub(crate) held_out: Vec<HeldOut>,
    /// The visitor's `visitor_id` (docs/contract/caps.md), when known: the replay evaluates with it, so a
    /// visitor in a rule's control group is held out from that rule.
    pub(crate) visitor_id: Option<String>,
}
