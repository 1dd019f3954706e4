//! Reading a scenario file (docs/contract/as-code.md) with every error reported, as config errors are.

use std::collections::HashMap;

use serde_json::Value;

use super::{Expectation, Scenario, ScenarioFile};
use crate::code::DiagnosticCode;
use crate::error::{Diagnostic, Error, ErrorKind};
use crate::json::{self, Document, Findings, ListLimit, Path, Reader};
use crate::limits::{MAX_SCENARIO_FILE_BYTES, MAX_SCENARIO_NAME_CHARS, MAX_SCENARIOS};
use crate::request::read_state;

const DOCUMENT: Document = Document {
    kind: ErrorKind::InvalidScenarios,
    what: "the scenario file",
    max_bytes: MAX_SCENARIO_FILE_BYTES,
};

const SCENARIO_FIELDS: &[&str] = &["name", "session_state", "expect"];
const EXPECT_FIELDS: &[&str] = &["rule", "quiet_zone", "no_nudge", "error", "held_out"];

pub(super) fn from_text(text: &str) -> Result<ScenarioFile, Error> {
    DOCUMENT.read_text(text, read_file)
}

pub(super) fn from_value(value: &Value) -> Result<ScenarioFile, Error> {
    DOCUMENT.read_value(value, read_file)
}

/// Names must be unique: the later of two equal names is reported.
pub(super) fn check_names(scenarios: &[Scenario]) -> Result<(), Vec<Diagnostic>> {
    let mut f = Findings::default();
    duplicate_names(
        scenarios.iter().map(|s| s.name.as_str()).enumerate(),
        &mut f,
    );
    if f.is_empty() {
        Ok(())
    } else {
        Err(f.into_diagnostics(None))
    }
}

fn name_path(i: usize) -> Path {
    Path::root().key("scenarios").index(i).key("name")
}

/// Reports each `(index, name)` whose name an earlier one has.
fn duplicate_names<'a>(names: impl Iterator<Item = (usize, &'a str)>, f: &mut Findings) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, name) in names {
        if let Some(first) = seen.insert(name, i) {
            seen.insert(name, first);
            f.push(
                DiagnosticCode::DuplicateScenarioName,
                &name_path(i),
                format!(
                    "scenario name {} is already used by scenarios[{first}]; names must be unique",
                    json::show(&Value::from(name))
                ),
            );
        }
    }
}

fn read_file(value: &Value, f: &mut Findings) -> Option<ScenarioFile> {
    let root = Reader::object(value, &Path::root(), "the scenario file", &["scenarios"], f)?;
    let (items, path) = root.required("scenarios", f)?;
    let limit = ListLimit {
        max: MAX_SCENARIOS,
        code: DiagnosticCode::TooManyScenarios,
        noun: "scenarios",
    };
    let scenarios = json::items_at_most(items, &path, "scenarios", &limit, f, read_scenario)?;
    // Duplicates among the names that are strings (other names are reported already).
    let names = items
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, item)| Some((i, item.get("name")?.as_str()?)));
    duplicate_names(names, f);
    scenarios
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .map(|scenarios| ScenarioFile { scenarios })
}

fn read_scenario(value: &Value, path: &Path, f: &mut Findings) -> Option<Scenario> {
    let r = Reader::object(value, path, "a scenario", SCENARIO_FIELDS, f)?;
    let name = r
        .required("name", f)
        .and_then(|(v, p)| Some((json::string(v, &p, f)?, p)))
        .and_then(|(name, p)| {
            let chars = name.chars().count();
            if (1..=MAX_SCENARIO_NAME_CHARS).contains(&chars) {
                return Some(name);
            }
            f.push(
                DiagnosticCode::InvalidScenarioName,
                &p,
                format!(
                    "a scenario name must be 1 to {MAX_SCENARIO_NAME_CHARS} characters, got {chars}"
                ),
            );
            None
        });
    let expect = r
        .required("expect", f)
        .and_then(|(v, p)| read_expect(v, &p, f));
    let state = r.required("session_state", f);
    // A state that docs/contract/preview.md rejects is an authoring mistake, unless the scenario expects the
    // rejection: then it is the point of the scenario.
    if let (Some((v, p)), Some(e)) = (&state, &expect)
        && *e != Expectation::InvalidRequest
    {
        read_state(v, p, f);
    }
    Some(Scenario::new(name?, state?.0.clone(), expect?))
}

fn read_expect(value: &Value, path: &Path, f: &mut Findings) -> Option<Expectation> {
    let r = Reader::object(value, path, "expect", EXPECT_FIELDS, f)?;
    let given: Vec<&str> = EXPECT_FIELDS
        .iter()
        .copied()
        .filter(|k| r.get(k).is_some())
        .collect();
    let key = match given.as_slice() {
        [one] => *one,
        [] => {
            // Unknown keys are reported already; say what is expected only if nothing else was.
            if value.as_object().is_some_and(|m| m.is_empty()) {
                f.push(
                    DiagnosticCode::InvalidExpectation,
                    path,
                    "expect must be one of {\"rule\": ID}, {\"quiet_zone\": true}, {\"no_nudge\": true}, {\"error\": \"InvalidRequest\"}, {\"held_out\": ID}".to_owned(),
                );
            }
            return None;
        }
        many => {
            f.push(
                DiagnosticCode::InvalidExpectation,
                path,
                format!(
                    "expect has {}; give exactly one outcome",
                    many.iter()
                        .map(|k| format!("\"{k}\""))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            );
            return None;
        }
    };
    let (v, p) = r.get(key)?;
    let wrong = |f: &mut Findings, message: String| {
        f.push(DiagnosticCode::InvalidExpectation, &p, message);
        None
    };
    match key {
        "rule" => json::string(v, &p, f).map(|id| Expectation::Rule(id.to_owned())),
        "held_out" => json::string(v, &p, f).map(|id| Expectation::HeldOut(id.to_owned())),
        "error" => match v.as_str() {
            Some("InvalidRequest") => Some(Expectation::InvalidRequest),
            _ => wrong(
                f,
                format!(
                    "the only error a scenario can expect is \"InvalidRequest\", got {}; a config's errors are checked by loading it (nudge-rules check)",
                    json::describe(v)
                ),
            ),
        },
        _ if *v == Value::Bool(true) => Some(if key == "quiet_zone" {
            Expectation::QuietZone
        } else {
            Expectation::NoNudge
        }),
        _ => wrong(
            f,
            format!(
                "must be true, got {}; to expect something else, use another outcome",
                json::describe(v)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<(String, String, Option<u32>)> {
        from_text(text)
            .unwrap_err()
            .diagnostics()
            .iter()
            .map(|d| (d.code.to_string(), d.path.clone(), d.line))
            .collect()
    }

    const STATE: &str = r#"{"intent_score": 10, "page_url": "/"}"#;

    #[test]
    fn reads_the_four_expectations() {
        let text = format!(
            r#"{{"scenarios": [
              {{"name": "a", "session_state": {STATE}, "expect": {{"rule": "x"}}}},
              {{"name": "b", "session_state": {STATE}, "expect": {{"quiet_zone": true}}}},
              {{"name": "c", "session_state": {STATE}, "expect": {{"no_nudge": true}}}},
              {{"name": "d", "session_state": {{"intent_score": 500}}, "expect": {{"error": "InvalidRequest"}}}}
            ]}}"#
        );
        let file = from_text(&text).unwrap();
        let expects: Vec<_> = file
            .scenarios()
            .iter()
            .map(|s| s.expect().clone())
            .collect();
        assert_eq!(
            expects,
            [
                Expectation::Rule("x".into()),
                Expectation::QuietZone,
                Expectation::NoNudge,
                Expectation::InvalidRequest
            ]
        );
        assert!(file.scenarios()[3].state().is_none());
        let round_trip = serde_json::to_value(&file.scenarios()[1]).unwrap();
        assert_eq!(
            round_trip,
            serde_json::json!({"name": "b", "session_state": {"intent_score": 10, "page_url": "/"}, "expect": {"quiet_zone": true}})
        );
    }

    #[test]
    fn every_error_with_its_path_and_line() {
        let text = r#"{"scenarios": [
  {"name": "a", "session_state": {"intent_score": 10, "page_url": "/"}, "expect": {"rule": "x"}},
  {"name": "a", "session_state": {"intent_score": 10, "page_url": "/"}, "expect": {"rule": "x", "no_nudge": true}},
  {"name": "", "session_state": {"intent_score": "10", "page_url": "/", "idle": 1}, "expect": {"no_nudge": true}},
  {"nmae": "d", "session_state": {}, "expect": {"error": "InvalidConfig"}},
  {"name": "e", "session_state": {"intent_score": 1, "page_url": "/"}, "expect": {}},
  {"name": "f", "session_state": {"intent_score": 1}, "expect": {"quiet_zone": false}}
]}"#;
        let got = errors(text);
        let want = [
            ("duplicate_scenario_name", "scenarios[1].name", 3),
            ("invalid_expectation", "scenarios[1].expect", 3),
            ("invalid_scenario_name", "scenarios[2].name", 4),
            ("wrong_type", "scenarios[2].session_state.intent_score", 4),
            ("unknown_field", "scenarios[2].session_state.idle", 4),
            ("unknown_field", "scenarios[3].nmae", 5),
            ("missing_field", "scenarios[3].name", 5),
            ("invalid_expectation", "scenarios[3].expect.error", 5),
            ("invalid_expectation", "scenarios[4].expect", 6),
            ("invalid_expectation", "scenarios[5].expect.quiet_zone", 7),
        ];
        for (code, path, line) in want {
            assert!(
                got.contains(&(code.to_owned(), path.to_owned(), Some(line))),
                "{code} at {path} line {line} not in {got:?}"
            );
        }
        assert_eq!(got.len(), want.len(), "{got:?}");
    }

    #[test]
    fn whole_document_errors() {
        assert_eq!(errors("[]")[0].0, "wrong_type");
        assert_eq!(
            errors("{}")[0],
            ("missing_field".into(), "scenarios".into(), Some(1))
        );
        assert_eq!(errors("{\"scenarios\": [}")[0].0, "json_syntax");
        assert_eq!(
            errors(r#"{"scenarios": [], "scenario": []}"#)[0].1,
            "scenario"
        );
    }

    #[test]
    fn names_must_be_unique_in_code_too() {
        let s = |name: &str| Scenario::new(name, Value::Null, Expectation::NoNudge);
        assert!(ScenarioFile::new(vec![s("a"), s("b")]).is_ok());
        let e = ScenarioFile::new(vec![s("a"), s("b"), s("a")]).unwrap_err();
        assert_eq!(e.path(), "scenarios[2].name");
    }
}
