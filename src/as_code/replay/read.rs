//! The text reader of recorded sessions (API document 2.1 and 2.2; docs/contract/as-code.md replay): the `data`
//! object of `GET /v1/sessions/{id}`, one per line (JSONL), a JSON array of them, or one alone.
//! Every error is reported with its JSON path (`[3].events[2].occurred_at`: session 3 of the
//! input, counted from 0) and its line and column.

use std::collections::HashMap;

use serde_json::Value;

use super::record::{Event, NUDGE_HELD_OUT, RecordedNudge, Session, Stamp, split_held_out};
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
use crate::visit::NudgeOutcome;

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
    "visitor_id",
];
const EVENT_FIELDS: &[&str] = &["type", "url", "occurred_at", "intent_score", "rule_id"];

const NUDGE_FIELDS: &[&str] = &[
    "nudge_id",
    "type",
    "shown_at",
    "outcome",
    "influenced_conversion",
];

/// Sessions from text: JSONL, a JSON array, or one session (see `Sessions::from_text`).
pub(super) fn from_text(text: &str) -> Result<Vec<Session>, Error> {
    DOCUMENT.check_size(text.len())?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') || !first_line_is_json(trimmed) {
        return DOCUMENT.read_text(text, read_all);
    }
    from_lines(text)
}

/// Sessions already parsed as JSON (see `Sessions::from_value`).
pub(super) fn from_value(value: &Value) -> Result<Vec<Session>, Error> {
    DOCUMENT.read_value(value, read_all)
}

/// True when the first non-blank line of `text` is a JSON value by itself: then the text is
/// JSONL (or a one-line session); otherwise it is one JSON document over several lines.
fn first_line_is_json(text: &str) -> bool {
    let line = text.lines().next().unwrap_or("");
    json::parse(line).is_ok()
}

/// JSONL: each non-blank line a session; paths start with the session's index, lines are the
/// text's.
fn from_lines(text: &str) -> Result<Vec<Session>, Error> {
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
    Ok(sessions.into_iter().flatten().collect())
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
fn read_all(value: &Value, f: &mut Findings) -> Option<Vec<Session>> {
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
    sessions.into_iter().collect()
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
    // docs/contract/caps.md: the visitor, whose holdout buckets the replay computes; absent, no one is held out.
    let visitor_id = match r.get("visitor_id") {
        Some((v, p)) => json::string(v, &p, f)
            .and_then(|s| crate::request::visitor_id(s, &p, f))
            .map(Some),
        None => Some(None),
    };
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
        visitor_id: visitor_id?,
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
    // docs/contract/caps.md: a NUDGE_HELD_OUT event names its rule.
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
