//! Findings collected while a JSON tree is read, turned into placed diagnostics.

use super::Path;
use super::locate::{Positions, locate};
use crate::code::DiagnosticCode;
use crate::error::{Diagnostic, Severity};

/// A diagnostic not yet placed in the text: the path plus whether it points at the key (unknown
/// field) or at the value.
pub(crate) struct Finding {
    pub(crate) code: DiagnosticCode,
    pub(crate) path: Path,
    pub(crate) at_key: bool,
    pub(crate) message: String,
}

/// Collects findings while a tree is read.
#[derive(Default)]
pub(crate) struct Findings(pub(crate) Vec<Finding>);

impl Findings {
    pub(crate) fn push(&mut self, code: DiagnosticCode, path: &Path, message: String) {
        self.0.push(Finding {
            code,
            path: path.clone(),
            at_key: false,
            message,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Turns the findings into error diagnostics, with line and column looked up in `text` when
    /// the tree came from text, in document order.
    pub(crate) fn into_diagnostics(self, text: Option<&str>) -> Vec<Diagnostic> {
        self.into_placed(text, Severity::Error)
    }

    /// As [`Findings::into_diagnostics`], as warnings.
    pub(crate) fn into_warnings(self, text: Option<&str>) -> Vec<Diagnostic> {
        self.into_placed(text, Severity::Warning)
    }

    fn into_placed(self, text: Option<&str>, severity: Severity) -> Vec<Diagnostic> {
        // Few findings: scan for each; many: index every position in one pass (linear).
        let positions = text.filter(|_| self.0.len() > 8).map(Positions::of);
        let mut out: Vec<Diagnostic> = self
            .0
            .into_iter()
            .map(|f| {
                let mut d = Diagnostic::error(f.code, f.path.to_string(), f.message);
                d.severity = severity;
                let place = match (&positions, text) {
                    (Some(index), Some(t)) => index.locate(t, &f.path, f.at_key),
                    (None, Some(t)) => locate(t, &f.path, f.at_key),
                    _ => None,
                };
                if let Some((line, column)) = place {
                    d.line = Some(line);
                    d.column = Some(column);
                }
                d
            })
            .collect();
        // Stable: findings without a place keep their order, after the placed ones.
        out.sort_by_key(|d| (d.line.is_none(), d.line, d.column));
        out
    }
}
