//! Every docs/contract/config.md and docs/contract/preview.md limit at its edge (accepted) and one past it (a clear error naming the
//! field), plus hostile inputs: deep nesting and huge texts fail fast with a clear error.
//! Compile time and peak memory at the limits are measured by `tools/src/bin/limits.rs`
//! (docs/RELIABILITY.md), not here: tests do not time.

use nudge_rules::{Engine, ErrorKind};
use serde_json::{Value, json};

fn rule(id: &str) -> Value {
    json!({"id": id, "nudge": {"type": "toast", "message": "m", "cta": "c"}})
}

fn config(rules: Vec<Value>, quiet: Vec<String>) -> String {
    json!({"version": 1, "quiet_zones": quiet, "rules": rules}).to_string()
}

/// Compiles; on error returns the paths.
fn paths(text: &str) -> Result<(), Vec<String>> {
    Engine::compile(text).map(|_| ()).map_err(|e| {
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        e.diagnostics().iter().map(|d| d.path.clone()).collect()
    })
}

#[test]
fn rule_and_quiet_zone_counts() {
    let rules = |n: usize| (0..n).map(|i| rule(&format!("r{i}"))).collect::<Vec<_>>();
    let zones = |n: usize| (0..n).map(|i| format!("/z{i}/**")).collect::<Vec<_>>();
    assert_eq!(paths(&config(rules(1000), zones(1000))), Ok(()));
    assert_eq!(
        paths(&config(rules(1001), vec![])),
        Err(vec!["rules".to_owned()])
    );
    assert_eq!(
        paths(&config(vec![], zones(1001))),
        Err(vec!["quiet_zones".to_owned()])
    );
}

#[test]
fn patterns_per_list_and_pattern_length() {
    let with_pages = |pages: Vec<String>| {
        let mut r = rule("r");
        r["when"] = json!({"pages": pages, "exclude_pages": ["/x"]});
        config(vec![r], vec![])
    };
    let list = |n: usize| (0..n).map(|i| format!("/p{i}")).collect::<Vec<_>>();
    assert_eq!(paths(&with_pages(list(100))), Ok(()));
    assert_eq!(
        paths(&with_pages(list(101))),
        Err(vec!["rules[0].when.pages".to_owned()])
    );
    let long = |n: usize| format!("/{}", "a".repeat(n - 1));
    assert_eq!(paths(&with_pages(vec![long(512)])), Ok(()));
    assert_eq!(
        paths(&with_pages(vec![long(513)])),
        Err(vec!["rules[0].when.pages[0]".to_owned()])
    );
    // Bytes, not characters: 'é' is two bytes.
    assert!(paths(&with_pages(vec![format!("/{}", "é".repeat(256))])).is_err());
}

#[test]
fn field_lengths_and_ranges() {
    let mut r = rule(&"a".repeat(64));
    r["nudge"]["message"] = json!("m".repeat(500));
    r["nudge"]["cta"] = json!("c".repeat(80));
    r["when"] =
        json!({"min_intent_score": 100, "max_intent_score": 100, "min_idle_ms": 86_400_000});
    assert_eq!(paths(&config(vec![r.clone()], vec![])), Ok(()));
    let mut past = r.clone();
    past["id"] = json!("a".repeat(65));
    past["nudge"]["message"] = json!("m".repeat(501));
    past["nudge"]["cta"] = json!("c".repeat(81));
    past["when"] =
        json!({"min_intent_score": 101, "max_intent_score": -1, "min_idle_ms": 86_400_001});
    let mut got = paths(&config(vec![past], vec![])).unwrap_err();
    got.sort();
    assert_eq!(
        got,
        [
            "rules[0].id",
            "rules[0].nudge.cta",
            "rules[0].nudge.message",
            "rules[0].when.max_intent_score",
            "rules[0].when.min_idle_ms",
            "rules[0].when.min_intent_score",
        ]
    );
}

#[test]
fn config_text_size() {
    // Exactly 1 MiB of text (padded with spaces) is accepted; one byte more is not.
    let base = config(vec![rule("r")], vec![]);
    let at_limit = format!("{base}{}", " ".repeat((1 << 20) - base.len()));
    assert_eq!(at_limit.len(), 1 << 20);
    assert_eq!(paths(&at_limit), Ok(()));
    let past = format!("{at_limit} ");
    assert_eq!(paths(&past), Err(vec![String::new()]));
    // 100 MB is refused before parsing.
    let huge = " ".repeat(100_000_000);
    let e = Engine::compile(&huge).unwrap_err();
    assert!(e.to_string().contains("the limit is 1 MiB"), "{e}");
}

#[test]
fn deep_nesting_is_a_clear_error() {
    for depth in [129, 10_000, 500_000] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let e = Engine::compile(&text).unwrap_err();
        assert!(e.to_string().contains("recursion limit"), "{e}");
        let body = format!(
            "{{\"session_state\":{}{}}}",
            "{\"a\":".repeat(depth.min(20_000)),
            "}".repeat(depth.min(20_000))
        );
        let engine = Engine::compile(&config(vec![rule("r")], vec![])).unwrap();
        let e = engine.preview_body(body.as_bytes()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    }
}

#[test]
fn request_limits() {
    let engine = Engine::compile(&config(vec![rule("r")], vec![])).unwrap();
    let body = |url: &str, idle: u64| {
        json!({"session_state": {"intent_score": 100, "page_url": url, "idle_ms": idle}})
            .to_string()
    };
    let url_at = format!("/{}", "a".repeat(8191));
    assert!(
        engine
            .preview_body(body(&url_at, 86_400_000).as_bytes())
            .is_ok()
    );
    let e = engine
        .preview_body(body(&format!("{url_at}a"), 0).as_bytes())
        .unwrap_err();
    assert!(e.to_string().contains("8,192"), "{e}");
    let e = engine
        .preview_body(body("/", 86_400_001).as_bytes())
        .unwrap_err();
    assert_eq!(e.path(), "session_state.idle_ms");
    let small = body("/", 0);
    let at = format!("{small}{}", " ".repeat(64 * 1024 - small.len()));
    assert!(engine.preview_body(at.as_bytes()).is_ok());
    let e = engine
        .preview_body(format!("{at} ").as_bytes())
        .unwrap_err();
    assert!(e.to_string().contains("64 KiB"), "{e}");
}

// --- docs/contract/as-code.md: scenario files and recorded sessions ---------------------------------------------

use nudge_rules::limits::{
    MAX_EVENTS_PER_SESSION, MAX_RECORDED_NUDGES_PER_SESSION, MAX_SCENARIO_FILE_BYTES,
    MAX_SCENARIO_NAME_CHARS, MAX_SCENARIOS, MAX_SESSIONS, MAX_SESSIONS_BYTES,
};
use nudge_rules::replay::Sessions;
use nudge_rules::scenarios::ScenarioFile;

/// The (code, path) of each diagnostic of an error.
fn codes(e: &nudge_rules::Error) -> Vec<(String, String)> {
    e.diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), d.path.clone()))
        .collect()
}

fn scenarios(n: usize, name: impl Fn(usize) -> String) -> String {
    let items: Vec<Value> = (0..n)
        .map(|i| json!({"name": name(i), "session_state": {"intent_score": 1, "page_url": "/"}, "expect": {"no_nudge": true}}))
        .collect();
    json!({ "scenarios": items }).to_string()
}

#[test]
fn scenario_file_limits() {
    let numbered = |i: usize| format!("s{i}");
    assert!(ScenarioFile::from_text(&scenarios(MAX_SCENARIOS, numbered)).is_ok());
    let e = ScenarioFile::from_text(&scenarios(MAX_SCENARIOS + 1, numbered)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidScenarios);
    assert_eq!(
        codes(&e),
        [("too_many_scenarios".to_owned(), "scenarios".to_owned())]
    );
    assert!(
        e.to_string()
            .contains("10,001 scenarios; the limit is 10,000")
    );

    let named = |n: usize| move |_: usize| "é".repeat(n);
    assert!(ScenarioFile::from_text(&scenarios(1, named(MAX_SCENARIO_NAME_CHARS))).is_ok());
    let e = ScenarioFile::from_text(&scenarios(1, named(MAX_SCENARIO_NAME_CHARS + 1))).unwrap_err();
    assert_eq!(codes(&e)[0].0, "invalid_scenario_name");

    let padded = |len: usize| {
        let base = scenarios(0, numbered);
        format!("{base}{}", " ".repeat(len - base.len()))
    };
    assert!(ScenarioFile::from_text(&padded(MAX_SCENARIO_FILE_BYTES)).is_ok());
    let e = ScenarioFile::from_text(&padded(MAX_SCENARIO_FILE_BYTES + 1)).unwrap_err();
    assert_eq!(codes(&e), [("input_too_large".to_owned(), String::new())]);
    assert!(e.to_string().contains("the limit is 16 MiB"), "{e}");
}

fn session(id: usize, events: usize, nudges: usize) -> Value {
    let event = json!({"type": "PAGE_VIEW", "url": "/", "occurred_at": "2026-03-01T12:00:00Z"});
    let nudge = json!({"type": "toast", "shown_at": "2026-03-01T12:00:00Z", "outcome": "shown", "influenced_conversion": false});
    json!({"id": format!("sess_{id}"), "intent_score": 1, "ended_at": "2026-03-01T12:00:01Z",
           "events": vec![event; events], "nudges": vec![nudge; nudges]})
}

#[test]
fn session_limits() {
    let one = |events, nudges| Value::Array(vec![session(0, events, nudges)]).to_string();
    assert!(
        Sessions::from_text(&one(
            MAX_EVENTS_PER_SESSION,
            MAX_RECORDED_NUDGES_PER_SESSION
        ))
        .is_ok()
    );
    let e = Sessions::from_text(&one(MAX_EVENTS_PER_SESSION + 1, 0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidSessions);
    assert_eq!(
        codes(&e),
        [("too_many_events".to_owned(), "[0].events".to_owned())]
    );
    let e = Sessions::from_text(&one(0, MAX_RECORDED_NUDGES_PER_SESSION + 1)).unwrap_err();
    assert_eq!(
        codes(&e),
        [(
            "too_many_recorded_nudges".to_owned(),
            "[0].nudges".to_owned()
        )]
    );
}

#[test]
fn session_count_and_size() {
    // Minimal sessions, written directly: this test reads 100,000 of them.
    let line = |i: usize| {
        format!(r#"{{"id":"s{i}","intent_score":1,"ended_at":"2026-03-01T12:00:01Z","events":[]}}"#)
    };
    let lines = |n: usize| (0..n).map(line).collect::<Vec<_>>().join("\n");
    assert_eq!(
        Sessions::from_text(&lines(MAX_SESSIONS)).unwrap().len(),
        MAX_SESSIONS
    );
    let e = Sessions::from_text(&lines(MAX_SESSIONS + 1)).unwrap_err();
    assert_eq!(codes(&e), [("too_many_sessions".to_owned(), String::new())]);
    assert!(
        e.to_string()
            .contains("100,001 sessions; the limit is 100,000"),
        "{e}"
    );
    let array = format!("[{}]", lines(MAX_SESSIONS + 1).replace('\n', ","));
    let e = Sessions::from_text(&array).unwrap_err();
    assert_eq!(codes(&e), [("too_many_sessions".to_owned(), String::new())]);

    // Spaces after the array make up the size.
    let padded = |len: usize| {
        let base = format!("[{}]", line(0));
        format!("{base}{}", " ".repeat(len - base.len()))
    };
    assert!(Sessions::from_text(&padded(MAX_SESSIONS_BYTES)).is_ok());
    let e = Sessions::from_text(&padded(MAX_SESSIONS_BYTES + 1)).unwrap_err();
    assert_eq!(codes(&e), [("input_too_large".to_owned(), String::new())]);
    assert!(e.to_string().contains("the limit is 64 MiB"), "{e}");
}
