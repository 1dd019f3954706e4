//! What `nudge-rules test` reports, whatever the format: one scenario file's results
//! ([`FileReport`]). The text of a failed scenario, which the text output (`test.rs`), JUnit's
//! `<failure>` (`junit.rs`) and the server's 422 ScenariosFailed all print, is the library's
//! `ScenarioResult::failure_text`.

use nudge_rules::scenarios::TestReport;
use serde::Serialize;

/// One scenario file's results.
#[derive(Serialize)]
pub(crate) struct FileReport {
    pub(crate) file: String,
    #[serde(flatten)]
    pub(crate) report: TestReport,
}
