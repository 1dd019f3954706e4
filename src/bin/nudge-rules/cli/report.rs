//! What `nudge-rules test` reports, whatever the format: one scenario file's results
//! ([`FileReport`]) and the text of a failed scenario ([`failure_text`]), which the text output
//! (`test.rs`) and JUnit's `<failure>` (`junit.rs`) both print, so that neither format depends
//! on the other.

use std::fmt::Write as _;

use nudge_rules::Engine;
use nudge_rules::scenarios::{Expectation, ScenarioResult, TestReport};
use serde::Serialize;

/// One scenario file's results.
#[derive(Serialize)]
pub(crate) struct FileReport {
    pub(crate) file: String,
    #[serde(flatten)]
    pub(crate) report: TestReport,
}

/// What a failed scenario gave, one labelled line each (`expected:`, `got:`, `reason:`, and
/// `note:` when it expects a rule id the config does not have: a typo, or a rule renamed since
/// the scenario was saved); the text output indents it, JUnit's `<failure>` holds it.
pub(crate) fn failure_text(engine: &Engine, result: &ScenarioResult) -> String {
    let mut text = format!(
        "expected: {}\ngot:      {}\nreason:   {}",
        result.expected, result.got, result.reason
    );
    if let Expectation::Rule(id) = &result.expected
        && !engine.config().rules.iter().any(|rule| &rule.id == id)
    {
        let _ = write!(text, "\nnote:     the config has no rule with id {id:?}");
    }
    text
}
