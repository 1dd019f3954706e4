//! Errors and diagnostics: what went wrong, where, and what the HTTP layer should answer.
//!
//! The crate has one error type, [`Error`], with a [`kind`](Error::kind) that maps onto the API
//! document's error names (section 7) and docs/contract/preview.md's table: `InvalidRequest` (HTTP 400) and
//! `InvalidConfig` (HTTP 500 on a server). An error carries one or more [`Diagnostic`]s, each with
//! a JSON path, a message and, where the input was JSON text, a 1-based line and column.

use std::fmt;

use serde::Serialize;

use crate::code::DiagnosticCode;
use crate::normalize::UrlError;

/// Which of docs/contract/preview.md's error names an [`Error`] is, or which input of docs/contract/as-code.md (a scenario file,
/// recorded sessions) is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request body is not JSON, or a field breaks docs/contract/preview.md or docs/contract/urls.md (HTTP 400).
    InvalidRequest,
    /// The site config breaks docs/contract/config.md or docs/contract/patterns.md (HTTP 500 on a server: it is the site's config,
    /// not the caller's fault).
    InvalidConfig,
    /// A scenario file breaks docs/contract/as-code.md's format (reading a `ScenarioFile`).
    InvalidScenarios,
    /// Recorded sessions break the API document's 2.2 shape (reading `Sessions` for replay).
    InvalidSessions,
}

impl ErrorKind {
    /// The error name as it appears in the error body's `error` field: `"InvalidRequest"`,
    /// `"InvalidConfig"`, `"InvalidScenarios"` or `"InvalidSessions"`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest => "InvalidRequest",
            ErrorKind::InvalidConfig => "InvalidConfig",
            ErrorKind::InvalidScenarios => "InvalidScenarios",
            ErrorKind::InvalidSessions => "InvalidSessions",
        }
    }

    /// The HTTP status a server answers with (docs/contract/preview.md): 500 for `InvalidConfig`, 400 for the
    /// others (the caller's input).
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::InvalidConfig => 500,
            _ => 400,
        }
    }

    /// What a person reads before the diagnostics of a whole-document error: `invalid config`,
    /// `invalid scenario file`, `invalid sessions`; `None` for `InvalidRequest`, whose message
    /// is the diagnostics alone (the API error body's).
    fn prefix(self) -> Option<&'static str> {
        match self {
            ErrorKind::InvalidRequest => None,
            ErrorKind::InvalidConfig => Some("invalid config"),
            ErrorKind::InvalidScenarios => Some("invalid scenario file"),
            ErrorKind::InvalidSessions => Some("invalid sessions"),
        }
    }
}

impl Severity {
    /// `"error"` or `"warning"`, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How serious a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// The input is rejected.
    Error,
    /// The input is accepted, but probably not what its author meant (lint).
    Warning,
}

/// One finding about a config or a request: an error, or a lint warning.
///
/// Serialized (for the WASM package and `nudge-rules check --json`) as
/// `{ "severity", "code", "path", "message", "line", "column" }`, with `line` and `column`
/// `null` when unknown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A stable, machine-readable code such as `unknown_field` or `pattern_trailing_slash`
    /// (docs/CODES.md lists them all).
    pub code: DiagnosticCode,
    /// The JSON path of the offending value, as in `rules[2].when.pages[0]`; empty for the
    /// whole document (a JSON syntax error, a text over the size limit).
    pub path: String,
    /// What is wrong and, where possible, how to fix it. Names the offending value.
    pub message: String,
    /// 1-based line in the JSON text, when the input was text and the place is known.
    pub line: Option<u32>,
    /// 1-based column (in characters) in the JSON text, when known.
    pub column: Option<u32>,
}

impl Diagnostic {
    pub(crate) fn error(code: DiagnosticCode, path: String, message: String) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            path,
            message,
            line: None,
            column: None,
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `rules[0].id: message (line 3, column 14)`; the path is left out when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)?;
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, " (line {line}, column {column})"),
            (Some(line), None) => write!(f, " (line {line})"),
            _ => Ok(()),
        }
    }
}

/// The crate's error: an [`ErrorKind`] and every [`Diagnostic`] found (at least one).
///
/// `Display` is what a person reads: for one diagnostic `path: message (line L, column C)`, for
/// several a count followed by one diagnostic per line. [`Error::to_body`] gives the API error
/// body `{"error": NAME, "message": TEXT}` (API document section 7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    diagnostics: Vec<Diagnostic>,
}

impl std::error::Error for Error {}

impl Error {
    /// An error of `kind` from its diagnostics. `diagnostics` must not be empty; an empty list
    /// gets one generic diagnostic so that [`Error::path`] and friends always have something.
    pub(crate) fn new(kind: ErrorKind, mut diagnostics: Vec<Diagnostic>) -> Self {
        if diagnostics.is_empty() {
            diagnostics.push(Diagnostic::error(
                DiagnosticCode::Unknown,
                String::new(),
                "unknown error".to_owned(),
            ));
        }
        Error { kind, diagnostics }
    }

    pub(crate) fn request(code: DiagnosticCode, path: impl Into<String>, message: String) -> Self {
        Error::new(
            ErrorKind::InvalidRequest,
            vec![Diagnostic::error(code, path.into(), message)],
        )
    }

    /// The InvalidRequest for a `page_url` that docs/contract/urls.md rejects, at JSON path `path`: the message
    /// quotes the URL (its first 80 characters) and gives the reason; the code is the
    /// [`UrlError`]'s.
    pub(crate) fn rejected_page_url(path: &str, page_url: &str, e: &UrlError) -> Error {
        let mut shown: String = page_url.chars().take(80).collect();
        if shown.len() < page_url.len() {
            shown.push_str("...");
        }
        Error::request(e.code(), path, msg!("{shown:?} is rejected: {e}"))
    }

    /// Which kind of error this is: [`ErrorKind::InvalidRequest`] (a request body or a page URL,
    /// HTTP 400), [`ErrorKind::InvalidConfig`] (the site config, HTTP 500 on a server),
    /// [`ErrorKind::InvalidScenarios`] (a scenario file) or [`ErrorKind::InvalidSessions`]
    /// (recorded sessions for replay).
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The HTTP status a server answers with: 400 or 500 (docs/contract/preview.md).
    pub fn http_status(&self) -> u16 {
        self.kind.http_status()
    }

    /// The JSON path of the first diagnostic (`session_state.intent_score`,
    /// `rules[2].when.pages[0]`); empty when the whole document is at fault.
    pub fn path(&self) -> &str {
        self.diagnostics.first().map_or("", |d| d.path.as_str())
    }

    /// 1-based line of the first diagnostic, when the input was JSON text and the place is known.
    pub fn line(&self) -> Option<u32> {
        self.diagnostics.first().and_then(|d| d.line)
    }

    /// 1-based column of the first diagnostic, when known.
    pub fn column(&self) -> Option<u32> {
        self.diagnostics.first().and_then(|d| d.column)
    }

    /// Every diagnostic found, in document order of discovery; never empty.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The API error body (API document section 7; docs/contract/preview.md):
    /// `{"error":"InvalidRequest","message":"session_state.intent_score: ..."}`.
    pub fn to_body(&self) -> String {
        #[derive(Serialize)]
        struct Body<'a> {
            error: &'static str,
            message: &'a str,
        }
        let message = self.to_string();
        serde_json::to_string(&Body {
            error: self.kind.name(),
            message: &message,
        })
        .unwrap_or_else(|_| format!("{{\"error\":\"{}\",\"message\":\"\"}}", self.kind.name()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind.prefix(), self.diagnostics.as_slice()) {
            (prefix, [only]) => {
                if let Some(prefix) = prefix {
                    write!(f, "{prefix}: ")?;
                }
                write!(f, "{only}")
            }
            (None, all) => {
                for (i, d) in all.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{d}")?;
                }
                Ok(())
            }
            (Some(prefix), all) => {
                write!(f, "{prefix}: {} errors", all.len())?;
                for d in all {
                    write!(f, "\n  {d}")?;
                }
                Ok(())
            }
        }
    }
}
