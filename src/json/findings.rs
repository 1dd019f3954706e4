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
        // The slim WASM module for storefront pages (docs/contract/storefront.md) places nothing: the runtime hands it
        // the config as an object (no text to place in), which keeps the lookup out of its `.wasm`.
        #[cfg(all(feature = "slim", target_arch = "wasm32"))]
        let text: Option<&str> = text.and(None);
        // Few findings: scan for each; many: index every position in one pass (linear).
        let positions = text.filter(|_| self.0.len() > 8).map(Positions::of);
        let out: Vec<Diagnostic> = self
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
        in_text_order(out)
    }
}

/// `found` in text order: by line, then column, those without a place after all others; ties
/// keep the order found. Two stable counting passes (by column, then by line): linear in the
/// findings and in the text's lines and columns, and no `slice::sort`, whose code the WASM
/// module would otherwise carry for this one type (docs/PERFORMANCE.md, "WASM size").
fn in_text_order(found: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let place = |i: usize| found.get(i).and_then(|d| d.line.zip(d.column));
    let unplaced_line = found
        .iter()
        .filter_map(|d| d.line)
        .max()
        .map_or(0, |l| l as usize + 1);
    let order: Vec<usize> = (0..found.len()).collect();
    let order = counting_pass(order, |i| place(i).map_or(0, |(_, c)| c as usize));
    let order = counting_pass(order, |i| {
        place(i).map_or(unplaced_line, |(l, _)| l as usize)
    });
    let mut slots: Vec<Option<Diagnostic>> = found.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// A stable counting sort of the indices `order` by `key` (small whole numbers: a line or a
/// column of the text).
fn counting_pass(order: Vec<usize>, key: impl Fn(usize) -> usize) -> Vec<usize> {
    let top = order.iter().map(|&i| key(i)).max().unwrap_or(0);
    // `start[k]`: where the first index with key k goes.
    let mut start = vec![0usize; top + 2];
    for &i in &order {
        if let Some(n) = start.get_mut(key(i) + 1) {
            *n += 1;
        }
    }
    for k in 1..start.len() {
        let before = start.get(k - 1).copied().unwrap_or(0);
        if let Some(n) = start.get_mut(k) {
            *n += before;
        }
    }
    let mut out = vec![0usize; order.len()];
    for &i in &order {
        if let Some(next) = start.get_mut(key(i)) {
            if let Some(slot) = out.get_mut(*next) {
                *slot = i;
            }
            *next += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(name: &str, place: Option<(u32, u32)>) -> Diagnostic {
        let mut d = Diagnostic::error(DiagnosticCode::UnknownField, name.into(), String::new());
        d.line = place.map(|(l, _)| l);
        d.column = place.map(|(_, c)| c);
        d
    }

    #[test]
    fn diagnostics_come_in_text_order_unplaced_last_ties_as_found() {
        let found = vec![
            at("unplaced-1", None),
            at("3:1", Some((3, 1))),
            at("1:9", Some((1, 9))),
            at("1:2-first", Some((1, 2))),
            at("unplaced-2", None),
            at("1:2-second", Some((1, 2))),
            at("2:40", Some((2, 40))),
        ];
        let order: Vec<String> = in_text_order(found).into_iter().map(|d| d.path).collect();
        assert_eq!(
            order,
            [
                "1:2-first",
                "1:2-second",
                "1:9",
                "2:40",
                "3:1",
                "unplaced-1",
                "unplaced-2"
            ]
        );
        assert!(in_text_order(Vec::new()).is_empty());
    }
}
