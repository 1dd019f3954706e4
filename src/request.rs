//! The preview request (docs/contract/preview.md; API document section 4.4): `{"session_state": {...}}`.

use crate::code::DiagnosticCode;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorKind};
use crate::json::{self, Findings, Path, Reader};
use crate::limits::{
    MAX_HISTORY_ENTRIES, MAX_IDLE_MS, MAX_INTENT_SCORE, MAX_MS_AGO, MAX_REQUEST_BYTES,
    MAX_RULE_ID_CHARS, MAX_VISITOR_ID_CHARS,
};
use crate::text::{binary_size, group};
use crate::visit::{HistoryEntry, NudgeOutcome, Visit};

/// A hypothetical visitor's state (API document section 4.4 `session_state`).
///
/// Built by [`SessionState::from_request_body`] or [`SessionState::from_json_value`], which
/// enforce docs/contract/preview.md's and 15's rules, or directly (`..Default::default()` for the fields left
/// out); [`Engine::preview`](crate::Engine::preview) checks the ranges again either way. The
/// last three fields are docs/contract/caps.md's; at their defaults the state is the API document's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SessionState {
    /// Simulated intent score, 0 to 100 (required).
    pub intent_score: u8,
    /// The page, as a path or absolute http(s) URL (required); normalized by docs/contract/urls.md.
    pub page_url: String,
    /// Milliseconds the visitor has been idle on the page, 0 to 86,400,000 (default 0).
    pub idle_ms: u32,
    /// The visitor is about to leave the page (default false; docs/contract/caps.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exit_intent: bool,
    /// The visitor, `vis_` then 1 to 64 of `A-Za-z0-9_-` (default none: no one is held out;
    /// docs/contract/caps.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visitor_id: Option<String>,
    /// The nudges this visitor was shown or held out from, newest first, at most 200 entries
    /// (default empty; docs/contract/caps.md): what caps and cooldowns count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
}

impl SessionState {
    /// `idle_ms` when the request leaves it out (docs/contract/preview.md).
    pub(crate) const DEFAULT_IDLE_MS: u32 = 0;

    /// The fields of a `session_state` object (docs/contract/preview.md and docs/contract/caps.md), the only ones it may have: the
    /// intent score, the page URL and the idle time, then exit intent, the visitor id and the
    /// history, in this order. The one list of them: the request reader checks against it, and
    /// the WASM package's object API reads the first three by these names.
    pub const FIELDS: [&'static str; 6] = [
        "intent_score",
        "page_url",
        "idle_ms",
        "exit_intent",
        "visitor_id",
        "history",
    ];

    /// The docs/contract/caps.md part of the state, as evaluation reads it.
    pub(crate) fn visit(&self) -> Visit<'_> {
        Visit {
            exit_intent: self.exit_intent,
            visitor_id: self.visitor_id.as_deref(),
            history: &self.history,
        }
    }

    /// Reads a request body `{"session_state": {"intent_score", "page_url", "idle_ms"}}`.
    ///
    /// # Errors
    ///
    /// `InvalidRequest`, naming the field path and the value; every problem found is reported:
    ///
    /// - the body is over 64 KiB, is not UTF-8 JSON, is not an object, has duplicate keys or
    ///   fields other than `session_state`;
    /// - `session_state` is missing or not an object;
    /// - its fields break [`SessionState::from_json_value`]'s rules.
    pub fn from_request_body(body: &[u8]) -> Result<Self, Error> {
        if body.len() > MAX_REQUEST_BYTES {
            return Err(Error::request(
                DiagnosticCode::RequestTooLarge,
                "",
                msg!(
                    "request body is {} bytes; the limit is {} ({} bytes)",
                    group(body.len() as u64),
                    binary_size(MAX_REQUEST_BYTES),
                    group(MAX_REQUEST_BYTES as u64)
                ),
            ));
        }
        let text = std::str::from_utf8(body).map_err(|e| {
            Error::request(
                DiagnosticCode::JsonSyntax,
                "",
                msg!(
                    "request body is not valid UTF-8 (at byte {})",
                    e.valid_up_to()
                ),
            )
        })?;
        let value =
            json::parse(text).map_err(|d| Error::new(ErrorKind::InvalidRequest, vec![d]))?;
        let mut findings = Findings::default();
        let state = Reader::object(
            &value,
            &Path::root(),
            "the request body",
            &["session_state"],
            &mut findings,
        )
        .and_then(|body| body.required("session_state", &mut findings))
        .and_then(|(v, path)| read_state(v, &path, &mut findings));
        finish(state, findings)
    }

    /// Reads the `session_state` object itself (for callers that already hold parsed JSON, such
    /// as the WASM package). Error paths still start with `session_state.`, so messages are the
    /// same as for a whole request body.
    ///
    /// Rules (docs/contract/preview.md): `intent_score` required, an integer 0 to 100 (not `50.5`, not `"50"`);
    /// `page_url` required, a string (checked by docs/contract/urls.md when previewed); `idle_ms` optional
    /// (default 0), an integer 0 to 86,400,000; no other fields.
    ///
    /// # Errors
    ///
    /// - `InvalidRequest` listing every rule broken, each with its path and the value.
    pub fn from_json_value(session_state: &Value) -> Result<Self, Error> {
        let mut findings = Findings::default();
        let path = Path::root().key("session_state");
        let state = read_state(session_state, &path, &mut findings);
        finish(state, findings)
    }

    /// Checks the ranges of a state built directly in Rust.
    pub(crate) fn check_ranges(intent_score: u8, idle_ms: u32) -> Result<(), Error> {
        if intent_score > MAX_INTENT_SCORE {
            return Err(Error::request(
                DiagnosticCode::OutOfRange,
                "session_state.intent_score",
                msg!("must be an integer from 0 to {MAX_INTENT_SCORE}, got {intent_score}"),
            ));
        }
        if idle_ms > MAX_IDLE_MS {
            return Err(Error::request(
                DiagnosticCode::OutOfRange,
                "session_state.idle_ms",
                msg!(
                    "must be an integer from 0 to {}, got {idle_ms}",
                    group(u64::from(MAX_IDLE_MS))
                ),
            ));
        }
        Ok(())
    }
}

fn finish(state: Option<SessionState>, findings: Findings) -> Result<SessionState, Error> {
    match state {
        Some(state) if findings.is_empty() => Ok(state),
        _ => Err(Error::new(
            ErrorKind::InvalidRequest,
            findings.into_diagnostics(None),
        )),
    }
}

/// Reads a `session_state` object at `path` (docs/contract/preview.md, docs/contract/caps.md), reporting every problem to `f`.
pub(crate) fn read_state(value: &Value, path: &Path, f: &mut Findings) -> Option<SessionState> {
    let r = Reader::object(value, path, "session_state", &SessionState::FIELDS, f)?;
    let [
        intent_field,
        url_field,
        idle_field,
        exit_field,
        visitor_field,
        history_field,
    ] = SessionState::FIELDS;
    let intent_score = r
        .required(intent_field, f)
        .and_then(|(v, p)| json::integer_in(v, &p, 0, u64::from(MAX_INTENT_SCORE), f))
        .and_then(|n| u8::try_from(n).ok());
    let page_url = r
        .required(url_field, f)
        .and_then(|(v, p)| json::string(v, &p, f));
    let idle_ms = match r.get(idle_field) {
        Some((v, p)) => json::integer_in(v, &p, 0, u64::from(MAX_IDLE_MS), f)
            .and_then(|n| u32::try_from(n).ok()),
        None => Some(SessionState::DEFAULT_IDLE_MS),
    };
    let exit_intent = match r.get(exit_field) {
        Some((v, p)) => json::boolean(v, &p, f),
        None => Some(false),
    };
    let visitor_id = match r.get(visitor_field) {
        Some((v, p)) => json::string(v, &p, f)
            .and_then(|s| visitor_id(s, &p, f))
            .map(Some),
        None => Some(None),
    };
    let history = match r.get(history_field) {
        Some((v, p)) => read_history(v, &p, f),
        None => Some(Vec::new()),
    };
    Some(SessionState {
        intent_score: intent_score?,
        page_url: page_url?.to_owned(),
        idle_ms: idle_ms?,
        exit_intent: exit_intent?,
        visitor_id: visitor_id?,
        history: history?,
    })
}

/// `visitor_id` (docs/contract/caps.md): `vis_` then 1 to 64 of `A-Za-z0-9_-`.
pub(crate) fn visitor_id(id: &str, path: &Path, f: &mut Findings) -> Option<String> {
    let rest = id.strip_prefix("vis_");
    let len = rest.map_or(0, |r| r.chars().count());
    let bad = rest.and_then(|r| {
        r.chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    });
    let problem = match (rest, bad) {
        (None, _) => Some("does not start with \"vis_\"".to_owned()),
        (Some(_), Some(c)) => Some(msg!(
            "contains {c:?}; after \"vis_\" only A-Z, a-z, 0-9, '_' and '-' are allowed"
        )),
        (Some(_), None) if len == 0 || len > MAX_VISITOR_ID_CHARS => Some(msg!(
            "has {len} characters after \"vis_\"; it must have 1 to {MAX_VISITOR_ID_CHARS}"
        )),
        _ => None,
    };
    match problem {
        Some(problem) => {
            let shown: String = id.chars().take(80).collect();
            f.push(
                DiagnosticCode::InvalidVisitorId,
                path,
                msg!(
                    "{shown:?} {problem}; a visitor id is \"vis_\" then 1 to {MAX_VISITOR_ID_CHARS} of A-Za-z0-9_-"
                ),
            );
            None
        }
        None => Some(id.to_owned()),
    }
}

const HISTORY_FIELDS: &[&str] = &["rule_id", "ms_ago", "this_session", "outcome", "held_out"];

/// `history` (docs/contract/caps.md): at most 200 entries `{rule_id, ms_ago, this_session, outcome?,
/// held_out?}`, newest first (`ms_ago` never decreasing, this session's entries before those of
/// earlier sessions); every problem of every entry is reported.
fn read_history(value: &Value, path: &Path, f: &mut Findings) -> Option<Vec<HistoryEntry>> {
    let limit = json::ListLimit {
        max: MAX_HISTORY_ENTRIES,
        code: DiagnosticCode::TooManyHistoryEntries,
        noun: "history entries",
    };
    let items = json::array_at_most(value, path, "history entries", &limit, f)?;
    let mut out: Vec<HistoryEntry> = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let Some(entry) = read_history_entry(item, &path.index(i), f) else {
            ok = false;
            continue;
        };
        // Newest first (docs/contract/caps.md): evaluation stops reading at the first entry too old to count.
        if let Some(before) = out.last() {
            let order = if entry.ms_ago < before.ms_ago {
                Some(msg!(
                    "is {} ms ago, newer than the entry before it ({} ms ago); the history is newest first",
                    entry.ms_ago,
                    before.ms_ago
                ))
            } else if entry.this_session && !before.this_session {
                Some("is of this session, after an entry of an earlier session; the history is newest first".to_owned())
            } else {
                None
            };
            if let Some(problem) = order {
                f.push(
                    DiagnosticCode::OutOfRange,
                    &path.index(i).key("ms_ago"),
                    msg!("history[{i}] {problem}"),
                );
                ok = false;
            }
        }
        out.push(entry);
    }
    ok.then_some(out)
}

fn read_history_entry(value: &Value, path: &Path, f: &mut Findings) -> Option<HistoryEntry> {
    let r = Reader::object(value, path, "a history entry", HISTORY_FIELDS, f)?;
    let rule_id = r.required("rule_id", f).and_then(|(v, p)| {
        let id = json::string(v, &p, f)?;
        let len = id.chars().count();
        let well_formed = (1..=MAX_RULE_ID_CHARS).contains(&len)
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !well_formed {
            f.push(
                DiagnosticCode::InvalidRuleId,
                &p,
                msg!(
                    "rule id {id:?} is not 1 to {MAX_RULE_ID_CHARS} characters of A-Z, a-z, 0-9, '_' and '-'"
                ),
            );
            return None;
        }
        Some(id.to_owned())
    });
    let ms_ago = r
        .required("ms_ago", f)
        .and_then(|(v, p)| json::integer_in(v, &p, 0, MAX_MS_AGO, f));
    let this_session = r
        .required("this_session", f)
        .and_then(|(v, p)| json::boolean(v, &p, f));
    let outcome = match r.get("outcome") {
        Some((v, p)) => json::string(v, &p, f).and_then(|s| {
            let outcome = NudgeOutcome::from_wire(s);
            if outcome.is_none() {
                f.push(
                    DiagnosticCode::UnknownOutcome,
                    &p,
                    msg!(
                        "outcome {s:?} is not one of \"shown\", \"clicked\", \"dismissed\", \"chat_opened\""
                    ),
                );
            }
            outcome.map(Some)
        }),
        None => Some(None),
    };
    let held_out = match r.get("held_out") {
        Some((v, p)) => json::boolean(v, &p, f),
        None => Some(false),
    };
    if let (Some(true), Some(Some(outcome))) = (held_out, outcome) {
        f.push(
            DiagnosticCode::UnknownOutcome,
            &r.path().key("outcome"),
            msg!(
                "a held-out entry has no outcome (nothing was shown), got {:?}",
                outcome.as_str()
            ),
        );
        return None;
    }
    Some(HistoryEntry {
        rule_id: rule_id?,
        ms_ago: ms_ago?,
        this_session: this_session?,
        outcome: outcome?,
        held_out: held_out?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        SessionState::from_request_body(body.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn reads_a_valid_body_with_default_idle() {
        let s = SessionState::from_request_body(
            br#"{"session_state":{"intent_score":82,"page_url":"/p"}}"#,
        )
        .unwrap();
        assert_eq!(
            (s.intent_score, s.page_url.as_str(), s.idle_ms),
            (82, "/p", 0)
        );
    }

    #[test]
    fn errors_name_the_path_and_the_value() {
        let e = err(r#"{"session_state":{"intent_score":50.5,"page_url":"/p"}}"#);
        assert!(
            e.contains("session_state.intent_score") && e.contains("50.5"),
            "{e}"
        );
        let e = err(r#"{"session_state":{"intent_score":"50","page_url":"/p"}}"#);
        assert!(e.contains("the string \"50\""), "{e}");
        let e = err(r#"{"session_state":{"intent_score":101,"page_url":7,"idle":1}}"#);
        assert!(e.contains("session_state.intent_score"), "{e}");
        assert!(e.contains("session_state.page_url"), "{e}");
        assert!(
            e.contains("session_state.idle") && e.contains("idle_ms"),
            "{e}"
        );
        assert!(err("[1]").contains("must be an object"));
        assert!(err("{").contains("invalid JSON"));
        assert!(err(r#"{"session_state":{}}"#).contains("session_state.intent_score"));
        assert!(err(r#"{}"#).contains("session_state"));
    }

    #[test]
    fn body_limit() {
        let pad = " ".repeat(MAX_REQUEST_BYTES);
        let body = format!(r#"{{"session_state":{{"intent_score":1,"page_url":"/"}}}}{pad}"#);
        assert!(err(&body).contains("64 KiB"));
    }
}
