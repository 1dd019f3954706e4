//! Replays the shared conformance vectors in `tests/vectors/` (format: tests/vectors/README.md).
//! The WASM package replays the same files in Node (`pkg/test/vectors.test.mjs`) and the demo
//! page in Chromium, so the platforms cannot drift apart.

use std::fs;
use std::path::{Path, PathBuf};

use nudge_rules::analysis::Analysis;
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::{Engine, normalize_page_url};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(file: &str) -> Vec<Value> {
    let path = root().join("tests/vectors").join(file);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// The config text of a case: `config_file`, `config` (inline object) or `config_text`.
fn config_text(case: &Value) -> String {
    if let Some(file) = case["config_file"].as_str() {
        fs::read_to_string(root().join(Path::new(file))).unwrap()
    } else if let Some(text) = case["config_text"].as_str() {
        text.to_owned()
    } else {
        serde_json::to_string(&case["config"]).unwrap()
    }
}

fn request_text(case: &Value) -> String {
    match case["request_text"].as_str() {
        Some(text) => text.to_owned(),
        None => serde_json::to_string(&case["request"]).unwrap(),
    }
}

/// Runs every case, collecting failures, and fails once with all of them listed.
fn run(file: &str, check: impl Fn(&Value) -> Result<(), String>) {
    let cases = load(file);
    assert!(!cases.is_empty(), "{file} has no cases");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check(case)
                .err()
                .map(|why| format!("{}: {why}", case["name"].as_str().unwrap_or("?")))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases in {file} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

fn contains_all(text: &str, wanted: &Value) -> Result<(), String> {
    for w in wanted.as_array().into_iter().flatten() {
        let w = w.as_str().unwrap_or_default();
        if !text.contains(w) {
            return Err(format!("{text:?} does not contain {w:?}"));
        }
    }
    Ok(())
}

fn error_paths(e: &nudge_rules::Error) -> Vec<String> {
    e.diagnostics().iter().map(|d| d.path.clone()).collect()
}

fn expect_paths(got: &[String], wanted: &Value) -> Result<(), String> {
    for w in wanted.as_array().into_iter().flatten() {
        let w = w.as_str().unwrap_or_default();
        if !got.iter().any(|g| g == w) {
            return Err(format!("error path {w:?} not reported; got {got:?}"));
        }
    }
    Ok(())
}

/// Checks a response body against `expect.response`, with the reason rules of the README.
fn check_response(body: &str, expect: &Value) -> Result<(), String> {
    let mut actual: Value = serde_json::from_str(body).map_err(|e| format!("{e}: {body}"))?;
    let data = actual.get_mut("data").ok_or(format!("no data in {body}"))?;
    let fired = data["would_fire"].as_bool() == Some(true);
    let reason = if fired {
        data["nudge"]
            .as_object_mut()
            .and_then(|n| n.remove("reason"))
            .ok_or(format!("fired without data.nudge.reason: {body}"))?
    } else {
        data.as_object_mut()
            .and_then(|d| d.remove("reason"))
            .ok_or(format!("no data.reason when nothing fires: {body}"))?
    };
    if fired && data.get("reason").is_some() {
        return Err(format!(
            "data.reason present although a nudge fires: {body}"
        ));
    }
    if actual != expect["response"] {
        return Err(format!("got {body}\n    want {}", expect["response"]));
    }
    contains_all(
        reason.as_str().unwrap_or_default(),
        &expect["reason_contains"],
    )
}

#[test]
fn preview_vectors() {
    run("preview.json", |case| {
        let expect = &case["expect"];
        let engine = Engine::compile(&config_text(case));
        let body = request_text(case);
        match (expect["error"].as_str(), engine) {
            (Some("InvalidConfig"), Err(e)) => expect_paths(&error_paths(&e), &expect["paths"]),
            (Some("InvalidConfig"), Ok(_)) => Err("config compiled, want InvalidConfig".into()),
            (_, Err(e)) => Err(format!("config rejected: {e}")),
            (Some("InvalidRequest"), Ok(engine)) => match engine.preview_body(body.as_bytes()) {
                Ok(ok) => Err(format!("got {ok}, want InvalidRequest")),
                Err(e) => {
                    let error_body: Value = serde_json::from_str(&e.to_body()).unwrap();
                    if error_body["error"] != "InvalidRequest" || e.http_status() != 400 {
                        return Err(format!("wrong error body {error_body}"));
                    }
                    contains_all(
                        error_body["message"].as_str().unwrap(),
                        &expect["message_contains"],
                    )
                }
            },
            (_, Ok(engine)) => match engine.preview_body(body.as_bytes()) {
                Ok(response) => check_response(&response, expect),
                Err(e) => Err(format!("unexpected error {}", e.to_body())),
            },
        }
    });
}

#[test]
fn normalize_vectors() {
    run("normalize.json", |case| {
        let input = case["input"].as_str().unwrap();
        let case_sensitive = case["case_sensitive"].as_bool().unwrap_or(false);
        let got = normalize_page_url(input, case_sensitive);
        match (&case["expect"], got) {
            (Value::String(want), Ok(path)) if path == want.as_str() => Ok(()),
            (Value::String(want), got) => Err(format!("got {got:?}, want {want:?}")),
            (_, Ok(path)) => Err(format!("accepted as {path:?}, want rejected")),
            (_, Err(e)) if e.to_string().is_empty() => Err("empty reason".into()),
            (_, Err(e)) => match case["expect_code"].as_str() {
                Some(code) if code != e.code().as_str() => {
                    Err(format!("rejected with {}, want {code}: {e}", e.code()))
                }
                _ => contains_all(&e.to_string(), &case["message_contains"]),
            },
        }
    });
}

#[test]
fn config_vectors() {
    run("config.json", |case| {
        let wanted = &case["expect_paths"];
        let text = config_text(case);
        match (Engine::compile(&text), wanted.as_array().map(Vec::len)) {
            (Ok(_), Some(0)) => Ok(()),
            (Ok(_), _) => Err(format!("compiled, want errors at {wanted}")),
            (Err(e), Some(0)) => Err(format!("want valid, got {e}")),
            (Err(e), _) => {
                expect_paths(&error_paths(&e), wanted)?;
                if let Some(line) = case["expect_line"].as_u64() {
                    let d = &e.diagnostics()[0];
                    let want = (
                        Some(line as u32),
                        case["expect_column"].as_u64().map(|c| c as u32),
                    );
                    if (d.line, d.column) != want {
                        return Err(format!("at {:?}, want {want:?}: {d}", (d.line, d.column)));
                    }
                }
                Ok(())
            }
        }
    });
}

#[test]
fn explain_vectors() {
    run("explain.json", |case| {
        let engine = Engine::compile(&config_text(case)).map_err(|e| e.to_string())?;
        let state = nudge_rules::SessionState::from_json_value(&case["state"])
            .map_err(|e| e.to_string())?;
        let got = serde_json::to_value(
            Analysis::new(&engine)
                .explain(&state)
                .map_err(|e| e.to_string())?,
        )
        .unwrap();
        check_explanation(&got, &case["expect"])
    });
}

/// Compares an explanation (as JSON, the shape the WASM package returns too) with `expect`.
fn check_explanation(got: &Value, expect: &Value) -> Result<(), String> {
    let field = |key: &str, actual: Value| -> Result<(), String> {
        match expect.get(key) {
            Some(want) if *want != actual => Err(format!("{key}: got {actual}, want {want}")),
            _ => Ok(()),
        }
    };
    field("path", got["path"].clone())?;
    field("url_error", got["url_error"]["code"].clone())?;
    field("quiet_zone", got["quiet_zone"]["pattern"].clone())?;
    field("fired_rule_id", got["fired_rule_id"].clone())?;
    field("earliest_idle_ms", got["earliest_idle_ms"].clone())?;
    field("earliest_rule_id", got["earliest_rule_id"].clone())?;
    let rules = got["rules"].as_array().cloned().unwrap_or_default();
    field("rules", Value::from(rules.len()))?;
    let rule = |id: &str| rules.iter().find(|r| r["id"] == id).cloned();
    for (id, want) in expect["verdicts"].as_object().into_iter().flatten() {
        let r = rule(id).ok_or(format!("no rule {id}"))?;
        if r["verdict"] != *want {
            return Err(format!("{id}: verdict {}, want {want}", r["verdict"]));
        }
    }
    for (id, want) in expect["failing"].as_object().into_iter().flatten() {
        let r = rule(id).ok_or(format!("no rule {id}"))?;
        let failing: Vec<Value> = r["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["holds"] == false)
            .map(|c| c["condition"].clone())
            .collect();
        if Value::from(failing.clone()) != *want {
            return Err(format!("{id}: failing {failing:?}, want {want}"));
        }
    }
    Ok(())
}

#[test]
fn lint_vectors() {
    run("lint.json", |case| {
        let engine = Engine::compile(&config_text(case)).map_err(|e| e.to_string())?;
        let got: Vec<(String, String)> = Analysis::new(&engine)
            .lint()
            .into_iter()
            .map(|d| (d.code.to_string(), d.path))
            .collect();
        let want: Vec<(String, String)> = case["expect"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                (
                    w["code"].as_str().unwrap_or_default().to_owned(),
                    w["path"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        for w in &want {
            if !got.contains(w) {
                return Err(format!("warning {w:?} not reported; got {got:?}"));
            }
        }
        if case["exact"] == true && got.len() != want.len() {
            return Err(format!("got {got:?}, want exactly {want:?}"));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Config as code (docs/contract/as-code.md): scenarios.json, coverage.json, replay.json, diff.json. Results are
// compared as JSON (the shape the WASM package returns too) with `subset`.

use nudge_rules::diff::DiffInput;
use nudge_rules::replay::Sessions;
use nudge_rules::scenarios::ScenarioFile;

/// `expected` matches `actual` when every key of an expected object matches the actual value
/// of that key, arrays match element by element with the same length, and other values are
/// equal. Returns where they differ.
fn subset(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => want.iter().try_for_each(|(k, w)| {
            let g = got.get(k).ok_or(format!("{at}.{k}: missing in {actual}"))?;
            subset(w, g, &format!("{at}.{k}"))
        }),
        (Value::Array(want), Value::Array(got)) if want.len() == got.len() => want
            .iter()
            .zip(got)
            .enumerate()
            .try_for_each(|(i, (w, g))| subset(w, g, &format!("{at}[{i}]"))),
        (w, g) if w == g => Ok(()),
        (w, g) => Err(format!("{at}: got {g}, want {w}")),
    }
}

/// A repository file as text.
fn repo_file(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A side's config: `{side}_file` or `{side}` (inline object).
fn side_config(case: &Value, side: &str) -> Engine {
    let text = match case[format!("{side}_file")].as_str() {
        Some(file) => repo_file(file),
        None => serde_json::to_string(&case[side]).unwrap(),
    };
    Engine::compile(&text).unwrap_or_else(|e| panic!("{side} config: {e}"))
}

/// Reads an input document of a case: `{key}_text` (text), `{key}_file` (repository file) or
/// `{key}` (a JSON value, read as a value: no line and column).
fn read_input<T>(
    case: &Value,
    key: &str,
    text: impl Fn(&str) -> Result<T, nudge_rules::Error>,
    value: impl Fn(&Value) -> Result<T, nudge_rules::Error>,
) -> Result<T, nudge_rules::Error> {
    if let Some(t) = case[format!("{key}_text")].as_str() {
        return text(t);
    }
    if let Some(file) = case[format!("{key}_file")].as_str() {
        return text(&repo_file(file));
    }
    value(&case[key])
}

/// Checks an `expect` / `expect_error` case: the result as JSON, or the error's diagnostics.
fn check_result<T: serde::Serialize>(
    case: &Value,
    result: Result<T, nudge_rules::Error>,
) -> Result<(), String> {
    match (result, case.get("expect_error")) {
        (Ok(got), None) => subset(
            &case["expect"],
            &serde_json::to_value(got).unwrap(),
            "result",
        ),
        (Ok(_), Some(want)) => Err(format!("accepted, want {}", want["kind"])),
        (Err(e), None) => Err(format!("unexpected error: {e}")),
        (Err(e), Some(want)) => check_error(&e, want),
    }
}

fn check_error(e: &nudge_rules::Error, want: &Value) -> Result<(), String> {
    if e.kind().name() != want["kind"] {
        return Err(format!("kind {}, want {}: {e}", e.kind(), want["kind"]));
    }
    let got = serde_json::to_value(e.diagnostics()).unwrap();
    for w in want["diagnostics"].as_array().into_iter().flatten() {
        let found = got
            .as_array()
            .into_iter()
            .flatten()
            .any(|g| subset(w, g, "").is_ok());
        if !found {
            return Err(format!("diagnostic {w} not reported; got {got}"));
        }
    }
    if let Some(n) = want["count"].as_u64()
        && e.diagnostics().len() as u64 != n
    {
        return Err(format!(
            "{} diagnostics, want {n}: {got}",
            e.diagnostics().len()
        ));
    }
    contains_all(&e.diagnostics()[0].message, &want["message_contains"])
}

fn scenario_file(case: &Value) -> Result<ScenarioFile, nudge_rules::Error> {
    read_input(
        case,
        "scenarios",
        ScenarioFile::from_text,
        ScenarioFile::from_value,
    )
}

#[test]
fn scenario_vectors() {
    run("scenarios.json", |case| {
        let engine = Engine::compile(&config_text(case)).map_err(|e| e.to_string())?;
        let report = scenario_file(case).map(|file| ConfigAsCode::new(&engine).test(&file));
        if let Ok(report) = &report {
            for (name, wanted) in case["reason_contains"].as_object().into_iter().flatten() {
                let r = report
                    .results
                    .iter()
                    .find(|r| r.name == *name)
                    .ok_or(format!("no result {name}"))?;
                contains_all(&r.reason, wanted)?;
            }
        }
        check_result(case, report)
    });
}

#[test]
fn coverage_vectors() {
    run("coverage.json", |case| {
        let engine = Engine::compile(&config_text(case)).map_err(|e| e.to_string())?;
        check_result(
            case,
            scenario_file(case).map(|file| ConfigAsCode::new(&engine).coverage(file.scenarios())),
        )
    });
}

#[test]
fn replay_vectors() {
    run("replay.json", |case| {
        let engine = Engine::compile(&config_text(case)).map_err(|e| e.to_string())?;
        let sessions = read_input(case, "sessions", Sessions::from_text, Sessions::from_value);
        // The summary alone is the replay's summary.
        if let Ok(s) = &sessions
            && ConfigAsCode::new(&engine).replay_summary(s)
                != ConfigAsCode::new(&engine).replay(s).summary
        {
            return Err("replay_summary differs from replay().summary".into());
        }
        check_result(
            case,
            sessions.map(|s| ConfigAsCode::new(&engine).replay(&s)),
        )
    });
}

#[test]
fn diff_vectors() {
    run("diff.json", |case| {
        let (old, new) = (side_config(case, "old"), side_config(case, "new"));
        let mut inputs: Vec<DiffInput> = Vec::new();
        for file in case["inputs_files"].as_array().into_iter().flatten() {
            let text = repo_file(file.as_str().unwrap_or_default());
            inputs.push(DiffInput::from_text(&text).map_err(|e| e.to_string())?);
        }
        for input in case["inputs"].as_array().into_iter().flatten() {
            inputs.push(DiffInput::from_value(input).map_err(|e| e.to_string())?);
        }
        let d = ConfigAsCode::new(&old).diff(&new, &inputs);
        for (id, want) in case["reach"].as_object().into_iter().flatten() {
            let r = d
                .reach
                .iter()
                .find(|r| r.rule_id == *id)
                .ok_or(format!("no reach for {id}"))?;
            let pair = |x: Option<nudge_rules::diff::Reach>| {
                x.map_or(Value::Null, |x| {
                    serde_json::json!([x.sessions, x.page_views])
                })
            };
            let got = serde_json::json!([pair(r.old), pair(r.new)]);
            if got != *want {
                return Err(format!("reach of {id}: got {got}, want {want}"));
            }
        }
        check_result(case, Ok::<_, nudge_rules::Error>(d))
    });
}
