//! `nudge-rules test --config CONFIG SCENARIOS...` (docs/contract/as-code.md): exit 0 when every scenario passes,
//! 1 when any fails, 2 for an invalid config or scenario file; `--format junit`, `--json`,
//! `--coverage`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use nudge_rules::Engine;
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::coverage::Coverage;
use nudge_rules::scenarios::{Scenario, ScenarioFile};
use serde::Serialize;

use super::report::FileReport;
use super::{share, table};
use crate::io::{emit, invalid, read_input};

/// How `test` prints its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Failures with expected, got and the reason; a count (and the coverage report).
    Text,
    /// JUnit XML, one testsuite per scenario file (for CI systems).
    Junit,
    /// One JSON object: `{"files": [{file, passed, failed, results}], "passed", "failed",
    /// "coverage"?}`.
    Json,
}

/// The options of `test`.
pub(crate) struct Options {
    pub(crate) files: Vec<PathBuf>,
    pub(crate) format: Format,
    pub(crate) coverage: bool,
    pub(crate) verbose: bool,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    files: &'a [FileReport],
    passed: usize,
    failed: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<&'a Coverage>,
}

/// Runs `test`; `Err` is a message for exit 2 (an invalid config or scenario file).
pub(crate) fn run(engine: &Engine, options: &Options) -> Result<ExitCode, String> {
    let mut files: Vec<(String, ScenarioFile)> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for path in &options.files {
        let name = path.display().to_string();
        let text = read_input(path)?;
        match ScenarioFile::from_text(&text) {
            Ok(file) => files.push((name, file)),
            Err(e) => problems.push(invalid(&name, &e)),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let reports: Vec<FileReport> = files
        .iter()
        .map(|(name, file)| FileReport {
            file: name.clone(),
            report: ConfigAsCode::new(engine).test(file),
        })
        .collect();
    let coverage = options.coverage.then(|| {
        let all: Vec<Scenario> = files
            .iter()
            .flat_map(|(_, f)| f.scenarios().iter().cloned())
            .collect();
        ConfigAsCode::new(engine).coverage(&all)
    });
    let passed = reports.iter().map(|r| r.report.passed).sum();
    let failed = reports.iter().map(|r| r.report.failed).sum();
    let out = match options.format {
        Format::Junit => super::junit::render(engine, &reports),
        Format::Json => {
            let report = JsonReport {
                files: &reports,
                passed,
                failed,
                coverage: coverage.as_ref(),
            };
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n"
        }
        Format::Text => {
            let mut out = text(engine, &reports, options.verbose);
            if let Some(c) = &coverage {
                out.push('\n');
                out.push_str(&coverage_text(c));
            }
            out
        }
    };
    emit(&out)?;
    Ok(ExitCode::from(u8::from(failed > 0)))
}

fn text(engine: &Engine, reports: &[FileReport], verbose: bool) -> String {
    let mut out = String::new();
    let (mut passed, mut failed) = (0, 0);
    for FileReport { file, report } in reports {
        passed += report.passed;
        failed += report.failed;
        let _ = writeln!(
            out,
            "{file}: {} scenarios, {} passed, {} failed",
            report.results.len(),
            report.passed,
            report.failed
        );
        for r in &report.results {
            if r.passed {
                if verbose {
                    let _ = writeln!(out, "  ok    {}", r.name);
                }
                continue;
            }
            let _ = writeln!(out, "  FAIL  {}", r.name);
            for line in r.failure_text(engine).lines() {
                let _ = writeln!(out, "        {line}");
            }
        }
    }
    let verdict = if failed == 0 { "ok" } else { "FAILED" };
    let _ = writeln!(
        out,
        "{verdict}: {} scenarios, {passed} passed, {failed} failed",
        passed + failed
    );
    out
}

/// The coverage report as text: totals, a row per rule, and what was never exercised.
pub(crate) fn coverage_text(c: &Coverage) -> String {
    let t = &c.totals;
    let mut out = format!(
        "coverage over {} scenarios ({} rejected):\n  rules fired          {}\n  condition outcomes   {}\n  patterns matched     {}\n\n",
        c.scenarios,
        c.rejected,
        share(t.rules_fired, t.rules),
        share(t.condition_outcomes_seen, t.condition_outcomes),
        share(t.patterns_matched, t.patterns)
    );
    let rows: Vec<Vec<String>> = c
        .rules
        .iter()
        .map(|r| {
            let conditions = r
                .conditions
                .iter()
                .map(|x| format!("{} {}/{}", x.condition, x.seen_true, x.seen_false))
                .collect::<Vec<_>>()
                .join(", ");
            if !r.enabled {
                return vec![r.id.clone(), "disabled".to_owned(), String::new()];
            }
            vec![r.id.clone(), r.fired.to_string(), conditions]
        })
        .collect();
    out.push_str(&table(
        &["rule", "fired", "conditions seen true/false"],
        &rows,
        "lrl",
    ));
    if c.unexercised.is_empty() {
        out.push_str("\neverything exercised\n");
    } else {
        let _ = writeln!(out, "\nnever exercised ({}):", c.unexercised.len());
        for line in &c.unexercised {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}
