//! The preview request (SPEC 5; API document section 4.4): `{"session_state": {...}}`.

use crate::code::DiagnosticCode;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorKind};
use crate::json::{self, Findings, Path, Reader};
use crate::limits::{MAX_IDLE_MS, MAX_INTENT_SCORE, MAX_REQUEST_BYTES};
use crate::text::{binary_size, group};

/// A hypothetical visitor's state (API document section 4.4 `session_state`).
///
/// Built by [`SessionState::from_request_body`] or [`SessionState::from_json_value`], which
/// enforce SPEC 5's rules, or directly; [`Engine::preview`](crate::Engine::preview) checks the
/// ranges again either way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionState {
    /// Simulated intent score, 0 to 100 (required).
    pub intent_score: u8,
    /// The page, as a path or absolute http(s) URL (required); normalized by SPEC 4.
    pub page_url: String,
    /// Milliseconds the visitor has been idle on the page, 0 to 86,400,000 (default 0).
    pub idle_ms: u32,
}

impl SessionState {
    /// `idle_ms` when the request leaves it out (SPEC 5).
    pub(crate) const DEFAULT_IDLE_MS: u32 = 0;

    /// The fields of a `session_state` object (SPEC 5), the only ones it may have: the intent
    /// score, the page URL and the idle time, in this order. The one list of them: the request
    /// reader checks against it, and the WASM package's object API reads a state's values by
    /// these names.
    pub const FIELDS: [&'static str; 3] = ["intent_score", "page_url", "idle_ms"];

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
                format!(
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
                format!(
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
    /// Rules (SPEC 5): `intent_score` required, an integer 0 to 100 (not `50.5`, not `"50"`);
    /// `page_url` required, a string (checked by SPEC 4 when previewed); `idle_ms` optional
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
                format!("must be an integer from 0 to {MAX_INTENT_SCORE}, got {intent_score}"),
            ));
        }
        if idle_ms > MAX_IDLE_MS {
            return Err(Error::request(
                DiagnosticCode::OutOfRange,
                "session_state.idle_ms",
                format!(
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

/// Reads a `session_state` object at `path` (SPEC 5), reporting every problem to `f`.
pub(crate) fn read_state(value: &Value, path: &Path, f: &mut Findings) -> Option<SessionState> {
    let r = Reader::object(value, path, "session_state", &SessionState::FIELDS, f)?;
    let [intent_field, url_field, idle_field] = SessionState::FIELDS;
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
    Some(SessionState {
        intent_score: intent_score?,
        page_url: page_url?.to_owned(),
        idle_ms: idle_ms?,
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
