//! Recorded sessions (API document 2.1 and 2.2; SPEC 8 replay): the `data` object of
//! `GET /v1/sessions/{id}`, one per line (JSONL), a JSON array of them, or one alone. Every
//! error is reported with its JSON path (`[3].events[2].occurred_at`: session 3 of the input,
//! counted from 0) and its line and column.

use std::collections::HashMap;

use serde_json::Value;

use super::timestamp::{Timestamp, TimestampError, sort_by_time};
use crate::code::DiagnosticCode;
use crate::config::NudgeType;
use crate::error::{Diagnostic, Error, ErrorKind};
use crate::json::{self, Document, Findings, ListLimit, Path, Reader};
use crate::limits::{
    MAX_EVENTS_PER_SESSION, MAX_INTENT_SCORE, MAX_RECORDED_NUDGES_PER_SESSION, MAX_SESSIONS,
    MAX_SESSIONS_BYTES,
};
use crate::text::group;

const DOCUMENT: Document = Document {
    kind: ErrorKind::InvalidSessions,
    what: "the sessions input",
    max_bytes: MAX_SESSIONS_BYTES,
};

/// API document 2.1 and 2.2: every field of a session is accepted; those replay needs are
/// required.
const SESSION_FIELDS: &[&str] = &[
    "id",
    "started_at",
    "ended_at",
    "page_count",
    "intent_score",
    "converted",
    "nudge_count",
    "events",
    "nudges",
];
const EVENT_FIELDS: &[&str] = &["type", "url", "occurred_at", "intent_score", "rule_id"];

/// The event type of a visitor held out from a rule (SPEC 15): not a page view; it counts for the
/// rule's caps in a replay, and needs `rule_id`.
pub(crate) const NUDGE_HELD_OUT: &str = "NUDGE_HELD_OUT";
const NUDGE_FIELDS: &[&str] = &[
    "nudge_id",
    "type",
    "shown_at",
    "outcome",
    "influenced_conversion",
];

/// A recorded nudge's outcome (API document 2.2, 3): the engine's own (SPEC 15 history uses it
/// too), here at its old path.
pub use crate::visit::NudgeOutcome;

/// An instant, with its text as written when it was read from text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The text as read (a file's `"2026-03-01T12:00:00+01:00"` stays as written); `None` for
    /// an instant given as Unix milliseconds (a stored session), written only when shown.
    written: Option<String>,
    pub(crate) at: Timestamp,
}

impl Stamp {
    /// The instant `ms` (Unix milliseconds), shown as the server writes it.
    fn of_unix_ms(ms: i64) -> Stamp {
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

/// One event of a session's log (API document 2.2 "Session event"), with SPEC 8's optional
/// `intent_score`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) event_type: String,
    pub(crate) url: String,
    pub(crate) occurred_at: Stamp,
    pub(crate) intent_score: Option<u8>,
    /// The rule of a `NUDGE_HELD_OUT` event (SPEC 15); `None` on other events.
    pub(crate) rule_id: Option<String>,
}

/// A recorded `NUDGE_HELD_OUT` event (SPEC 15): the visitor was held out from `rule_id` then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeldOut {
    pub(crate) rule_id: String,
    pub(crate) at: Stamp,
}

/// Splits the `NUDGE_HELD_OUT` events (with a rule) from the others, both kept in time order:
/// they are no page views, but count for caps (SPEC 15).
fn split_held_out(events: Vec<Event>) -> (Vec<Event>, Vec<HeldOut>) {
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
    /// The `NUDGE_HELD_OUT` events (SPEC 15), sorted by time; not in `events`.
    pub(crate) held_out: Vec<HeldOut>,
}

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
    /// `intent_score` (SPEC 8). A recorded nudge has `type` (the four nudge types), `shown_at`,
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
        DOCUMENT.check_size(text.len())?;
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') || !first_line_is_json(trimmed) {
            return DOCUMENT.read_text(text, read_all);
        }
        from_lines(text)
    }

    /// Reads sessions already parsed as JSON (the WASM package given JS objects): an array of
    /// session objects, or one. Same rules as [`Sessions::from_text`]; diagnostics have no line
    /// and column.
    ///
    /// # Errors
    ///
    /// - As [`Sessions::from_text`], except JSON syntax errors.
    pub fn from_value(value: &Value) -> Result<Sessions, Error> {
        DOCUMENT.read_value(value, read_all)
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
    /// has them (the server's backtest, SPEC 12): the same session as [`Sessions::from_text`]
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
    /// }).unwrap();
    /// assert_eq!(sessions.records().next().unwrap().events().next().unwrap().url, "/products/linen-shirt");
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidSessions`, the session not added, when (paths count from this session):
    ///
    /// - `intent_score` or an event's `intent_score` is over 100 (`out_of_range`);
    /// - a nudge's type is not one of the four nudge types (`unknown_nudge_type`).
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
        });
        Ok(())
    }

    /// Removes every session, keeping the memory: a program replaying a stream of sessions
    /// page by page reuses one `Sessions`.
    pub fn clear(&mut self) {
        self.sessions.clear();
    }

    /// Each session as read, in input order: what a store imports (SPEC 11 "Import").
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
}

/// One recorded session as read (API document 2.2), for a program that stores it. Times are
/// Unix milliseconds (fractions past the millisecond cut); events and nudges are in time order
/// (stably: equal times keep their input order).
#[derive(Clone, Copy, Debug)]
pub struct SessionRecord<'a> {
    pub(crate) session: &'a Session,
}

/// One event of a [`SessionRecord`] (API document 2.2 "Session event", SPEC 8).
#[derive(Clone, Copy, Debug)]
pub struct EventRecord<'a> {
    /// `type`: any text (the API document names PAGE_VIEW, ADD_TO_CART and PURCHASE).
    pub event_type: &'a str,
    /// `url`, as written.
    pub url: &'a str,
    /// `occurred_at`, Unix milliseconds.
    pub occurred_at_ms: i64,
    /// The optional `intent_score` (0 to 100) of SPEC 8.
    pub intent_score: Option<u8>,
    /// The rule of a `NUDGE_HELD_OUT` event (SPEC 15), which counts for that rule's caps in a
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

/// True when the first non-blank line of `text` is a JSON value by itself: then the text is
/// JSONL (or a one-line session); otherwise it is one JSON document over several lines.
fn first_line_is_json(text: &str) -> bool {
    let line = text.lines().next().unwrap_or("");
    json::parse(line).is_ok()
}

/// JSONL: each non-blank line a session; paths start with the session's index, lines are the
/// text's.
fn from_lines(text: &str) -> Result<Sessions, Error> {
    // Over the limit, the count alone is the error: nothing is read.
    let count = text.lines().filter(|l| !l.trim().is_empty()).count();
    if count > MAX_SESSIONS {
        return Err(Error::new(
            ErrorKind::InvalidSessions,
            vec![too_many_sessions(count)],
        ));
    }
    let mut sessions = Vec::new();
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut ids = Ids::default();
    for (line_index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let index = sessions.len();
        let line_number = u32::try_from(line_index + 1).unwrap_or(u32::MAX);
        let mut f = Findings::default();
        let session = match json::parse(line) {
            Ok(value) => {
                ids.check(&value, index, &Path::root(), &mut f);
                read_session_or_envelope(&value, &Path::root(), &mut f)
            }
            Err(d) => {
                errors.push(at_line(d, index, line_number));
                sessions.push(None);
                continue;
            }
        };
        errors.extend(
            f.into_diagnostics(Some(line))
                .into_iter()
                .map(|d| at_line(d, index, line_number)),
        );
        sessions.push(session);
    }
    if !errors.is_empty() {
        return Err(Error::new(ErrorKind::InvalidSessions, errors));
    }
    Ok(Sessions {
        sessions: sessions.into_iter().flatten().collect(),
    })
}

/// A diagnostic of one JSONL line moved into the whole input: path prefixed with `[index]`,
/// line made the text's.
fn at_line(mut d: Diagnostic, index: usize, line: u32) -> Diagnostic {
    let sep = if d.path.is_empty() || d.path.starts_with('[') {
        ""
    } else {
        "."
    };
    d.path = format!("[{index}]{sep}{}", d.path);
    d.line = Some(d.line.map_or(line, |l| line + l - 1));
    d
}

fn too_many_sessions(count: usize) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::TooManySessions,
        String::new(),
        format!(
            "{} sessions; the limit is {}",
            group(count as u64),
            group(MAX_SESSIONS as u64)
        ),
    )
}

/// An array of sessions, or one session (or response envelope) alone.
fn read_all(value: &Value, f: &mut Findings) -> Option<Sessions> {
    let root = Path::root();
    let items: Vec<(Path, &Value)> = match value {
        Value::Array(items) => {
            let limit = ListLimit {
                max: MAX_SESSIONS,
                code: DiagnosticCode::TooManySessions,
                noun: "sessions",
            };
            json::array_at_most(value, &root, "sessions", &limit, f);
            if items.len() > MAX_SESSIONS {
                // The count alone is the error: the sessions are not read.
                return None;
            }
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (root.index(i), v))
                .collect()
        }
        _ => vec![(root, value)],
    };
    let mut ids = Ids::default();
    let mut sessions = Vec::with_capacity(items.len());
    for (i, (path, v)) in items.iter().enumerate() {
        ids.check(v, i, path, f);
        sessions.push(read_session_or_envelope(v, path, f));
    }
    let sessions: Option<Vec<Session>> = sessions.into_iter().collect();
    Some(Sessions {
        sessions: sessions?,
    })
}

/// Session ids seen so far, to report the second use of one.
#[derive(Default)]
struct Ids(HashMap<String, usize>);

impl Ids {
    /// Reports the id of the session (or response envelope) `value` at `path` if an earlier
    /// session has it; a missing or mistyped id is reported by the session's reading.
    fn check(&mut self, value: &Value, index: usize, path: &Path, f: &mut Findings) {
        let (value, path) = match value.get("data") {
            Some(data) if value.as_object().is_some_and(|m| m.len() == 1) => {
                (data, path.key("data"))
            }
            _ => (value, path.clone()),
        };
        let Some(id) = value.get("id").and_then(Value::as_str) else {
            return;
        };
        match self.0.get(id) {
            Some(first) => f.push(
                DiagnosticCode::DuplicateSessionId,
                &path.key("id"),
                format!(
                    "session id {} is already used by session [{first}]",
                    json::show(&Value::from(id))
                ),
            ),
            None => {
                self.0.insert(id.to_owned(), index);
            }
        }
    }
}

/// A session, or the whole response `{"data": session}` of `GET /v1/sessions/{id}`.
fn read_session_or_envelope(value: &Value, path: &Path, f: &mut Findings) -> Option<Session> {
    match value.as_object() {
        Some(map) if map.len() == 1 && map.contains_key("data") => {
            let (data, data_path) =
                Reader::object(value, path, "a session", &["data"], f)?.get("data")?;
            read_session(data, &data_path, f)
        }
        _ => read_session(value, path, f),
    }
}

fn read_session(value: &Value, path: &Path, f: &mut Findings) -> Option<Session> {
    let r = Reader::object(value, path, "a session", SESSION_FIELDS, f)?;
    let id = r
        .required("id", f)
        .and_then(|(v, p)| json::string(v, &p, f));
    let intent_score = r
        .required("intent_score", f)
        .and_then(|(v, p)| intent(v, &p, f));
    let ended_at = r.required("ended_at", f).and_then(|(v, p)| stamp(v, &p, f));
    let started_at = r.get("started_at").map(|(v, p)| (stamp(v, &p, f), p));
    let converted = match r.get("converted") {
        Some((v, p)) => json::boolean(v, &p, f).map(Some),
        None => Some(None),
    };
    for key in ["page_count", "nudge_count"] {
        if let Some((v, p)) = r.get(key) {
            json::integer_in(v, &p, 0, u64::from(u32::MAX), f);
        }
    }
    let events = r.required("events", f).and_then(|(v, p)| {
        let limit = ListLimit {
            max: MAX_EVENTS_PER_SESSION,
            code: DiagnosticCode::TooManyEvents,
            noun: "events",
        };
        let events = json::items_at_most(v, &p, "events", &limit, f, read_event)?;
        if let Some(end) = &ended_at {
            for (i, e) in events.iter().enumerate() {
                if let Some(e) = e.as_ref().filter(|e| e.occurred_at.at > end.at) {
                    f.push(
                        DiagnosticCode::TimestampOrder,
                        &p.index(i).key("occurred_at"),
                        format!(
                            "occurred_at {} is after the session's ended_at {}",
                            e.occurred_at.text(),
                            end.text()
                        ),
                    );
                }
            }
        }
        events.into_iter().collect::<Option<Vec<_>>>()
    });
    if let (Some((Some(start), p)), Some(end)) = (&started_at, &ended_at)
        && start.at > end.at
    {
        f.push(
            DiagnosticCode::TimestampOrder,
            p,
            format!(
                "started_at {} is after ended_at {}",
                start.text(),
                end.text()
            ),
        );
    }
    let nudges = match r.get("nudges") {
        Some((v, p)) => {
            let limit = ListLimit {
                max: MAX_RECORDED_NUDGES_PER_SESSION,
                code: DiagnosticCode::TooManyRecordedNudges,
                noun: "recorded nudges",
            };
            json::items_at_most(v, &p, "session nudges", &limit, f, read_nudge)
                .and_then(|nudges| nudges.into_iter().collect())
        }
        None => Some(Vec::new()),
    };
    // Stable sorts: equal times keep the input's order.
    let (events, held_out) = split_held_out(sort_by_time(events?, |e| e.occurred_at.at));
    let nudges = sort_by_time(nudges?, |n| n.shown_at.at);
    Some(Session {
        id: id?.to_owned(),
        ended_at: ended_at?,
        intent_score: intent_score?,
        converted: converted?,
        events,
        nudges,
        held_out,
    })
}

fn intent(value: &Value, path: &Path, f: &mut Findings) -> Option<u8> {
    json::integer_in(value, path, 0, u64::from(MAX_INTENT_SCORE), f)
        .and_then(|n| u8::try_from(n).ok())
}

fn stamp(value: &Value, path: &Path, f: &mut Findings) -> Option<Stamp> {
    let text = json::string(value, path, f)?;
    match Timestamp::parse(text) {
        Ok(at) => Some(Stamp {
            written: Some(text.to_owned()),
            at,
        }),
        Err(e) => {
            let shown = json::show(value);
            let message = match e {
                TimestampError::Field(_) => format!("{shown} {e}"),
                _ => format!("{e}, got {shown}"),
            };
            f.push(DiagnosticCode::InvalidTimestamp, path, message);
            None
        }
    }
}

fn read_event(value: &Value, path: &Path, f: &mut Findings) -> Option<Event> {
    let r = Reader::object(value, path, "an event", EVENT_FIELDS, f)?;
    let event_type = r
        .required("type", f)
        .and_then(|(v, p)| json::string(v, &p, f));
    let url = r
        .required("url", f)
        .and_then(|(v, p)| json::string(v, &p, f));
    let occurred_at = r
        .required("occurred_at", f)
        .and_then(|(v, p)| stamp(v, &p, f));
    let intent_score = match r.get("intent_score") {
        Some((v, p)) => intent(v, &p, f).map(Some),
        None => Some(None),
    };
    // SPEC 15: a NUDGE_HELD_OUT event names its rule.
    let rule_id = match r.get("rule_id") {
        Some((v, p)) => json::string(v, &p, f).map(|s| Some(s.to_owned())),
        None if event_type == Some(NUDGE_HELD_OUT) => {
            r.required("rule_id", f);
            None
        }
        None => Some(None),
    };
    Some(Event {
        event_type: event_type?.to_owned(),
        url: url?.to_owned(),
        occurred_at: occurred_at?,
        intent_score: intent_score?,
        rule_id: rule_id?,
    })
}

fn read_nudge(value: &Value, path: &Path, f: &mut Findings) -> Option<RecordedNudge> {
    let r = Reader::object(value, path, "a session nudge", NUDGE_FIELDS, f)?;
    let nudge_id = match r.get("nudge_id") {
        Some((v, p)) => json::string(v, &p, f).map(|s| Some(s.to_owned())),
        None => Some(None),
    };
    let nudge_type = r.required("type", f).and_then(|(v, p)| {
        let name = json::string(v, &p, f)?;
        NudgeType::from_wire(name).or_else(|| {
            f.push(
                DiagnosticCode::UnknownNudgeType,
                &p,
                format!(
                    "nudge type {} is not one of \"chat_bubble\", \"toast\", \"exit_modal\", \"sticky_bar\"",
                    json::show(v)
                ),
            );
            None
        })
    });
    let shown_at = r.required("shown_at", f).and_then(|(v, p)| stamp(v, &p, f));
    let outcome = r.required("outcome", f).and_then(|(v, p)| {
        let name = json::string(v, &p, f)?;
        NudgeOutcome::from_wire(name).or_else(|| {
                f.push(
                    DiagnosticCode::UnknownOutcome,
                    &p,
                    format!(
                        "outcome {} is not one of \"shown\", \"clicked\", \"dismissed\", \"chat_opened\"",
                        json::show(v)
                    ),
                );
                None
            })
    });
    let influenced = r
        .required("influenced_conversion", f)
        .and_then(|(v, p)| json::boolean(v, &p, f));
    Some(RecordedNudge {
        nudge_id: nudge_id?,
        nudge_type: nudge_type?,
        shown_at: shown_at?,
        outcome: outcome?,
        influenced_conversion: influenced?,
    })
}
