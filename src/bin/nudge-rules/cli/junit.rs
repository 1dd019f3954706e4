//! JUnit XML for `nudge-rules test --format junit` (docs/contract/as-code.md): one `<testsuite>` per scenario file,
//! one `<testcase>` per scenario, a `<failure>` with expected, got and the reason for each that
//! fails. The common form that CI systems read (Jenkins, GitLab, GitHub actions' reporters).

use std::fmt::Write as _;

use nudge_rules::Engine;

use super::report::FileReport;

pub(super) fn render(engine: &Engine, reports: &[FileReport]) -> String {
    let tests: usize = reports.iter().map(|r| r.report.results.len()).sum();
    let failures: usize = reports.iter().map(|r| r.report.failed).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"nudge-rules test\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">"
    );
    for FileReport { file, report } in reports {
        let file = escape(file);
        let _ = writeln!(
            out,
            "  <testsuite name=\"{file}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">",
            report.results.len(),
            report.failed
        );
        for r in &report.results {
            let name = escape(&r.name);
            if r.passed {
                let _ = writeln!(out, "    <testcase classname=\"{file}\" name=\"{name}\"/>");
                continue;
            }
            let message = escape(&format!("expected {}, got {}", r.expected, r.got));
            let body = escape(&r.failure_text(engine));
            let _ = writeln!(out, "    <testcase classname=\"{file}\" name=\"{name}\">");
            let _ = writeln!(
                out,
                "      <failure message=\"{message}\" type=\"ScenarioFailed\">{body}</failure>"
            );
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text for XML 1.0 attributes and content: `&`, `<`, `>`, `"`, `'` escaped; characters XML 1.0
/// forbids (controls other than tab, newline and carriage return; U+FFFE, U+FFFF) replaced by
/// U+FFFD; newlines in attributes kept as character references.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_forbidden_characters() {
        assert_eq!(
            escape("a<b>&\"c'\u{1}\u{7f}\n"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{fffd}\u{7f}&#10;"
        );
    }
}
