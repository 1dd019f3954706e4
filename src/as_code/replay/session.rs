//! Recorded sessions (API document 2.1 and 2.2; docs/contract/as-code.md replay), the public side: [`Sessions`]
//! read from text ([`super::read`]) or given field by field ([`Sessions::push`]), and each
//! session as read ([`SessionRecord`]) for a program that stores them.

use serde_json::Value;

use super::read;
use super::record::{Event, RecordedNudge, Session, Stamp, split_held_out};
use super::timestamp::sort_by_time;
use crate::code::DiagnosticCode;
use crate::config::NudgeType;
use crate::error::{Diagnostic, Error, ErrorKind};
use crate::json::{Findings, Path};
use crate::limits::MAX_INTENT_SCORE;

/// A recorded nudge's outcome (API document 2.2, 3): the engine's own (docs/contract/caps.md history uses it
/// too), here at its old path.
pub use crate::visit::NudgeOutcome;

/// Recorded sessions, read and checked (API document 2.2), ready to replay against any number
/// of configs ([`ConfigAsCode::replay`](crate::as_code::ConfigAsCode::replay)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sessions {
    pub(crate) sessions: Vec<Session>,
}

impl Sessions {
    /// Reads sessions from text: one session object per line (JSONL; blank lines skipped), a
    /// JSON array of them, or one object alone. Each is the `data` object of
    /// `GET /v1/sessions/{id}` (API document 2.2); the whole response `{"data": {...}}` is
    /// accepted too.
    ///
    /// Fields (API document 2.1, 2.2): `id` (string), `ended_at`, `intent_score` (0 to 100) and
    /// `events` are required; `started_at`, `page_count`, `converted`, `nudge_count` and
    /// `nudges` are optional. An event has `type` (any string: the API lists PAGE_VIEW,
    /// ADD_TO_CART and PURCHASE and says there are more), `url`, `occurred_at` and optionally
    /// `intent_score` (docs/contract/as-code.md). A recorded nudge has `type` (the four nudge types), `shown_at`,
    /// `outcome` (shown, clicked, dismissed, chat_opened), `influenced_conversion` and optionally
    /// `nudge_id`. Timestamps are RFC 3339 in UTC (`2026-03-01T12:00:05.250Z`).
    ///
    /// ```
    /// let sessions = nudge_rules::replay::Sessions::from_text(concat!(
    ///     r#"{"id": "sess_1", "ended_at": "2026-03-01T12:00:20Z", "intent_score": 82, "events": ["#,
    ///     r#"{"type": "PAGE_VIEW", "url": "/products/linen-shirt", "occurred_at": "2026-03-01T12:00:00Z"}]}"#, "\n",
    ///     r#"{"id": "sess_2", "ended_at": "2026-03-01T13:00:00Z", "intent_score": 10, "events": []}"#,
    /// )).unwrap();
    /// assert_eq!(sessions.len(), 2);
    ///
    /// let err = nudge_rules::replay::Sessions::from_text(concat!(
    ///     r#"{"id": "sess_1", "ended_at": "2026-03-01T12:00:20Z", "intent_score": 82, "events": []}"#, "\n",
    ///     r#"{"id": "sess_2", "ended_at": "yesterday", "intent_score": 82, "events": []}"#,
    /// )).unwrap_err();
    /// assert_eq!((err.path(), err.line(), err.column()), ("[1].ended_at", Some(2), Some(30)));
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidSessions` with every problem, each with its JSON path and 1-based line and column;
    /// the limits are those of [`limits`](crate::limits):
    ///
    /// - text over 64 MiB;
    /// - JSON syntax errors and duplicate keys;
    /// - unknown fields, missing or mistyped fields;
    /// - more than 100,000 sessions, 10,000 events or 1,000 recorded nudges in a session;
    /// - a session id used twice;
    /// - timestamps that are not RFC 3339 UTC;
    /// - an event after `ended_at`, or `started_at` after `ended_at`;
    /// - an unknown nudge type or outcome.
    pub fn from_text(text: &str) -> Result<Sessions, Error> {
        read::from_text(text).map(|sessions| Sessions { sessions })
    }

    /// Reads sessions already parsed as JSON (the WASM package given JS objects): an array of
    /// session objects, or one. Same rules as [`Sessions::from_text`]; diagnostics have no line
    /// and column.
    ///
    /// # Errors
    ///
    /// - As [`Sessions::from_text`], except JSON syntax errors.
    pub fn from_value(value: &Value) -> Result<Sessions, Error> {
        read::from_value(value).map(|sessions| Sessions { sessions })
    }

    /// How many sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Adds a session given field by field, as a program reading sessions from its own store
    /// has them (the server's backtest, docs/contract/backtest.md): the same session as [`Sessions::from_text`]
    /// reads from the `GET /v1/sessions/{id}` answer of the same data, so that a replay of
    /// either gives the same result. Events and nudges are sorted by time, stably.
    ///
    /// ```
    /// use nudge_rules::replay::{EventRecord, SessionParts, Sessions};
    /// let mut sessions = Sessions::default();
    /// sessions.push(SessionParts {
    ///     id: "sess_1",
    ///     ended_at_ms: 1_772_366_430_000,
    ///     intent_score: 82,
    ///     converted: Some(false),
    ///     events: vec![EventRecord { event_type: "PAGE_VIEW", url: "/products/linen-shirt",
    ///                                occurred_at_ms: 1_772_366_400_000, intent_score: None,
    ///                                rule_id: None }],
    ///     nudges: vec![],
    ///     visitor_id: Some("vis_abc"),
    /// }).unwrap();
    /// assert_eq!(sessions.records().next().unwrap().events().next().unwrap().url, "/products/linen-shirt");
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidSessions`, the session not added, when (paths count from this session):
    ///
    /// - `intent_score` or an event's `intent_score` is over 100 (`out_of_range`);
    /// - a nudge's type is not one of the four nudge types (`unknown_nudge_type`);
    /// - `visitor_id` is not `vis_` then 1 to 64 of `A-Za-z0-9_-` (`invalid_visitor_id`).
    pub fn push(&mut self, parts: SessionParts<'_>) -> Result<(), Error> {
        let mut problems = Vec::new();
        let max = MAX_INTENT_SCORE;
        if parts.intent_score > max {
            problems.push(Diagnostic::error(
                DiagnosticCode::OutOfRange,
                "intent_score".to_owned(),
                format!("intent_score {} is over {max}", parts.intent_score),
            ));
        }
        for (i, e) in parts.events.iter().enumerate() {
            if let Some(score) = e.intent_score.filter(|&s| s > max) {
                problems.push(Diagnostic::error(
                    DiagnosticCode::OutOfRange,
                    format!("events[{i}].intent_score"),
                    format!("intent_score {score} is over {max}"),
                ));
            }
        }
        let mut nudges = Vec::with_capacity(parts.nudges.len());
        for (i, n) in parts.nudges.iter().enumerate() {
            match NudgeType::from_wire(n.nudge_type) {
                Some(nudge_type) => nudges.push(RecordedNudge {
                    nudge_id: n.nudge_id.map(str::to_owned),
                    nudge_type,
                    shown_at: Stamp::of_unix_ms(n.shown_at_ms),
                    outcome: n.outcome,
                    influenced_conversion: n.influenced_conversion,
                }),
                None => problems.push(Diagnostic::error(
                    DiagnosticCode::UnknownNudgeType,
                    format!("nudges[{i}].type"),
                    format!("nudge type {:?} is not one of \"chat_bubble\", \"toast\", \"exit_modal\", \"sticky_bar\"", n.nudge_type),
                )),
            }
        }
        if let Some(id) = parts.visitor_id {
            let mut f = Findings::default();
            if crate::request::visitor_id(id, &Path::root().key("visitor_id"), &mut f).is_none() {
                problems.extend(f.into_diagnostics(None));
            }
        }
        if !problems.is_empty() {
            return Err(Error::new(ErrorKind::InvalidSessions, problems));
        }
        let events = parts
            .events
            .iter()
            .map(|e| Event {
                event_type: e.event_type.to_owned(),
                url: e.url.to_owned(),
                occurred_at: Stamp::of_unix_ms(e.occurred_at_ms),
                intent_score: e.intent_score,
                rule_id: e.rule_id.map(str::to_owned),
            })
            .collect();
        let (events, held_out) = split_held_out(sort_by_time(events, |e| e.occurred_at.at));
        self.sessions.push(Session {
            id: parts.id.to_owned(),
            ended_at: Stamp::of_unix_ms(parts.ended_at_ms),
            intent_score: parts.intent_score,
            converted: parts.converted,
            events,
            nudges: sort_by_time(nudges, |n| n.shown_at.at),
            held_out,
            visitor_id: parts.visitor_id.map(str::to_owned),
        });
        Ok(())
    }

    /// Removes every session, keeping the memory: a program replaying a stream of sessions
    /// page by page reuses one `Sessions`.
    pub fn clear(&mut self) {
        self.sessions.clear();
    }

    /// Each session as read, in input order: what a store imports (docs/contract/store.md "Import").
    pub fn records(&self) -> impl ExactSizeIterator<Item = SessionRecord<'_>> {
        self.sessions
            .iter()
            .map(|session| SessionRecord { session })
    }
}

/// `for record in &sessions`: each session as read, as [`Sessions::records`]; so `&Sessions` is
/// one of the iterators of sessions that replay takes.
impl<'a> IntoIterator for &'a Sessions {
    type Item = SessionRecord<'a>;
    type IntoIter = Records<'a>;

    fn into_iter(self) -> Records<'a> {
        Records {
            sessions: self.sessions.iter(),
        }
    }
}

/// The iterator of [`Sessions::records`]: each session as read, in input order.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    sessions: std::slice::Iter<'a, Session>,
}

impl<'a> Iterator for Records<'a> {
    type Item = SessionRecord<'a>;

    fn next(&mut self) -> Option<SessionRecord<'a>> {
        self.sessions
            .next()
            .map(|session| SessionRecord { session })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.sessions.size_hint()
    }
}

impl ExactSizeIterator for Records<'_> {}

/// A recorded session given field by field ([`Sessions::push`]): times in Unix milliseconds,
/// events and nudges in any order.
#[derive(Clone, Debug)]
pub struct SessionParts<'a> {
    /// `id` (`sess_...`).
    pub id: &'a str,
    /// `ended_at`, Unix milliseconds.
    pub ended_at_ms: i64,
    /// `intent_score`, 0 to 100.
    pub intent_score: u8,
    /// `converted`, when known.
    pub converted: Option<bool>,
    /// The page events (API document 2.2 "Session event").
    pub events: Vec<EventRecord<'a>>,
    /// The nudges shown (API document 2.2 "Session nudge").
    pub nudges: Vec<NudgeRecord<'a>>,
    /// The visitor's `visitor_id` (docs/contract/caps.md), when known: the replay holds the visitor out of
    /// the rules whose control group they are in; `None`: no one is held out.
    pub visitor_id: Option<&'a str>,
}

/// One recorded session as read (API document 2.2), for a program that stores it. Times are
/// Unix milliseconds (fractions past the millisecond cut); events and nudges are in time order
/// (stably: equal times keep their input order).
#[derive(Clone, Copy, Debug)]
pub struct SessionRecord<'a> {
    pub(crate) session: &'a Session,
}

/// One event of a [`SessionRecord`] (API document 2.2 "Session event", docs/contract/as-code.md).
#[derive(Clone, Copy, Debug)]
pub struct EventRecord<'a> {
    /// `type`: any text (the API document names PAGE_VIEW, ADD_TO_CART and PURCHASE).
    pub event_type: &'a str,
    /// `url`, as written.
    pub url: &'a str,
    /// `occurred_at`, Unix milliseconds.
    pub occurred_at_ms: i64,
    /// The optional `intent_score` (0 to 100) of docs/contract/as-code.md.
    pub intent_score: Option<u8>,
    /// The rule of a `NUDGE_HELD_OUT` event (docs/contract/caps.md), which counts for that rule's caps in a
    /// replay and is no page view; `None` on other events.
    pub rule_id: Option<&'a str>,
}

/// One nudge a [`SessionRecord`] really showed (API document 2.2 "Session nudge").
#[derive(Clone, Copy, Debug)]
pub struct NudgeRecord<'a> {
    /// `nudge_id`, when the input has one.
    pub nudge_id: Option<&'a str>,
    /// `type`: `chat_bubble`, `toast`, `exit_modal` or `sticky_bar`.
    pub nudge_type: &'static str,
    /// `shown_at`, Unix milliseconds.
    pub shown_at_ms: i64,
    /// `outcome`.
    pub outcome: NudgeOutcome,
    /// `influenced_conversion` as recorded.
    pub influenced_conversion: bool,
}

impl<'a> SessionRecord<'a> {
    /// `id`.
    pub fn id(&self) -> &'a str {
        &self.session.id
    }

    /// `ended_at`, Unix milliseconds.
    pub fn ended_at_ms(&self) -> i64 {
        self.session.ended_at.at.unix_ms()
    }

    /// `intent_score`, 0 to 100.
    pub fn intent_score(&self) -> u8 {
        self.session.intent_score
    }

    /// `converted`, when the input has it.
    pub fn converted(&self) -> Option<bool> {
        self.session.converted
    }

    /// `visitor_id` (docs/contract/caps.md), when the input has it.
    pub fn visitor_id(&self) -> Option<&'a str> {
        self.session.visitor_id.as_deref()
    }

    /// `events`, by `occurred_at`.
    pub fn events(&self) -> impl ExactSizeIterator<Item = EventRecord<'a>> + use<'a> {
        self.session.events.iter().map(|e| EventRecord {
            event_type: &e.event_type,
            url: &e.url,
            occurred_at_ms: e.occurred_at.at.unix_ms(),
            intent_score: e.intent_score,
            rule_id: e.rule_id.as_deref(),
        })
    }

    /// `nudges`, by `shown_at`.
    pub fn nudges(&self) -> impl ExactSizeIterator<Item = NudgeRecord<'a>> + use<'a> {
        self.session.nudges.iter().map(|n| NudgeRecord {
            nudge_id: n.nudge_id.as_deref(),
            nudge_type: n.nudge_type.as_str(),
            shown_at_ms: n.shown_at.at.unix_ms(),
            outcome: n.outcome,
            influenced_conversion: n.influenced_conversion,
        })
    }
}
