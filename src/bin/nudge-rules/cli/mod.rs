//! The config-as-code commands of the CLI (docs/contract/as-code.md): `test` (scenarios, coverage, JUnit),
//! `replay` (recorded sessions) and `diff` (two configs). Rendering only: every figure comes from
//! the library's `scenarios`, `coverage`, `replay` and `diff` modules.

pub(crate) mod diff;
mod junit;
pub(crate) mod replay;
mod report;
pub(crate) mod test;

/// A text table: a header row and rows of cells, each column aligned as `align` says (`l` left,
/// for names; `r` right, for figures); two spaces between columns.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>], align: &str) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i > 0 {
                line.push_str("  ");
            }
            if align.as_bytes().get(i) != Some(&b'r') {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str("  ");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `part of whole (pp%)`.
pub(crate) fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        return format!("{part} of {whole}");
    }
    format!("{part} of {whole} ({}%)", part * 100 / whole)
}

/// Milliseconds as a person reads a dwell or idle time: `850 ms`, `8.0 s`, `12.5 min`.
pub(crate) fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1000..=119_999 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{:.1} min", ms as f64 / 60_000.0),
    }
}
