//! Runs the built `nudge-rules` binary: exit codes, stdout, stderr (the CLI contract of the
//! README).

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nudge-rules"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const FIRES: &str =
    r#"{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}"#;

#[test]
fn preview_fires_from_the_embedded_storefront() {
    let out = run(&["preview", FIRES], "");
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1);
    let body: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(body["data"]["would_fire"], true);
    assert_eq!(body["data"]["nudge"]["type"], "chat_bubble");
    assert_eq!(body["data"]["nudge"]["cta"], "Start chat");
}

#[test]
fn preview_reads_stdin_and_names_the_quiet_zone() {
    let request = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/requests/checkout-quiet.json"
    ))
    .unwrap();
    for args in [&["preview"][..], &["preview", "-"][..]] {
        let out = run(args, &request);
        assert_eq!(out.status.code(), Some(0));
        let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(body["data"]["would_fire"], false);
        assert_eq!(body["data"]["nudge"], serde_json::Value::Null);
        assert!(
            body["data"]["reason"]
                .as_str()
                .unwrap()
                .contains("/checkout/**")
        );
    }
}

#[test]
fn invalid_request_prints_the_error_body_and_exits_1() {
    let out = run(
        &[
            "preview",
            r#"{"session_state":{"intent_score":50.5,"page_url":"/"}}"#,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["error"], "InvalidRequest");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("session_state.intent_score")
    );
    let out = run(&["preview", "not json"], "");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn invalid_config_exits_2_with_every_error_on_stderr() {
    let dir = std::env::temp_dir().join(format!("nudge-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bad.json");
    std::fs::write(
        &config,
        "{\"version\": 2,\n \"quiet_zone\": [],\n \"rules\": [{\"id\": \"a b\", \"nudge\": {\"type\": \"popup\", \"message\": \"m\", \"cta\": \"c\"}}]}",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let out = run(&["preview", "--config", config, FIRES], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    for want in [
        "version",
        "quiet_zone",
        "did you mean \"quiet_zones\"",
        "rules[0].id",
        "rules[0].nudge.type",
        "line 2",
    ] {
        assert!(stderr.contains(want), "{want:?} not in {stderr}");
    }
    let out = run(&["check", "--config", config], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("4 errors"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["check", "--config", config, "--json"], "");
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"].as_array().unwrap().len(), 4);
    assert_eq!(report["errors"][0]["line"], 1);
    let out = run(&["preview", "--config", "/nonexistent.json", FIRES], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read config file"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn jsonl_answers_every_line_and_goes_on_after_a_bad_one() {
    let input = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/requests/batch.jsonl"
    ))
    .unwrap();
    let out = run(&["preview", "--jsonl"], &input);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), input.lines().count());
    assert_eq!(lines[0]["data"]["nudge"]["type"], "chat_bubble");
    assert_eq!(lines[2]["data"]["would_fire"], false);
    assert_eq!(lines[4]["error"], "InvalidRequest");
}

#[test]
fn check_embedded_config_is_valid() {
    let out = run(&["check"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("is valid"));
}

#[test]
fn check_lists_lint_warnings_with_codes() {
    let dir = std::env::temp_dir().join(format!("nudge-cli-w-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("w.json");
    std::fs::write(&config, r#"{"version":1,"rules":[{"id":"a","nudge":{"type":"toast","message":"m","cta":"c"}},{"id":"b","nudge":{"type":"toast","message":"m","cta":"c"},"when":{"pages":["/x"]}}]}"#).unwrap();
    let out = run(&["check", "--config", config.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("warning[shadowed_rule] rules[1]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning[catch_all_rule] rules[0]"),
        "{stdout}"
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn normalize_prints_the_path_or_the_reason() {
    let out = run(
        &["normalize", "https://Shop.Example/Checkout//Pay/?x=1"],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "/checkout/pay\n");
    let out = run(&["normalize", "--case-sensitive", "/Checkout"], "");
    assert_eq!(text(&out.stdout), "/Checkout\n");
    for rejected in [
        "//checkout",
        "/x%2F..%2Fcheckout",
        "/x/%252e%252e/checkout",
        "javascript:alert(1)",
    ] {
        let out = run(&["normalize", rejected], "");
        assert_eq!(out.status.code(), Some(1), "{rejected}");
        assert!(out.stdout.is_empty());
        assert!(text(&out.stderr).contains("rejected"), "{rejected}");
    }
}

#[test]
fn explain_and_map() {
    let out = run(&["explain", FIRES], "");
    assert_eq!(out.status.code(), Some(0));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["fired_rule_id"], "sizing-help");
    assert_eq!(e["path"], "/products/linen-shirt");
    assert_eq!(e["rules"][1]["verdict"], "fired");
    let out = run(&["map", "--page", "/products/linen-shirt"], "");
    assert_eq!(out.status.code(), Some(0));
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m["path"], "/products/linen-shirt");
    assert!(m["regions"].as_array().unwrap().len() > 2);
    let out = run(&["map", "--page", "//checkout"], "");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["preview", "--bogus"], "").status.code(), Some(2));
    assert_eq!(run(&[], "").status.code(), Some(2));
}

// --- Config as code (docs/contract/as-code.md): test, replay, diff ----------------------------------------------

/// Writes `text` to a fresh file under the target directory and returns its path.
fn temp_file(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const FAILING: &str = r#"{"scenarios": [
  {"name": "stylist", "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000}, "expect": {"rule": "sizing-help"}},
  {"name": "too early <&>", "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 7999}, "expect": {"rule": "sizing-help"}}
]}"#;

#[test]
fn test_passes_with_exit_0_on_the_example_scenarios() {
    let out = run(&["test", "examples/scenarios.json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("ok: 14 scenarios, 14 passed, 0 failed"),
        "{stdout}"
    );
    let out = run(
        &[
            "test",
            "--config",
            "examples/storefront.json",
            "-v",
            "examples/scenarios.json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("  ok    the cart is a quiet zone"));
}

#[test]
fn test_failure_shows_expected_got_and_reason_and_exits_1() {
    let file = temp_file("failing.json", FAILING);
    let out = run(&["test", &file], "");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("  FAIL  too early <&>"), "{stdout}");
    assert!(
        stdout.contains("expected: rule \"sizing-help\" fires"),
        "{stdout}"
    );
    assert!(stdout.contains("got:      no nudge"), "{stdout}");
    assert!(
        stdout.contains("would fire after 1 more ms of idling"),
        "{stdout}"
    );
    assert!(stdout.contains("FAILED: 2 scenarios, 1 passed, 1 failed"));
    assert!(!stdout.contains("FAIL  stylist"));
}

#[test]
fn test_failure_names_an_expected_rule_id_the_config_lacks() {
    let file = temp_file(
        "renamed.json",
        r#"{"scenarios": [{"name": "renamed", "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000}, "expect": {"rule": "sizing-hlep"}}]}"#,
    );
    let out = run(&["test", &file], "");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("got:      rule \"sizing-help\" fires"),
        "{stdout}"
    );
    assert!(
        stdout.contains("note:     the config has no rule with id \"sizing-hlep\""),
        "{stdout}"
    );
    let out = run(&["test", "--format", "junit", &file], "");
    assert!(
        text(&out.stdout)
            .contains("note:     the config has no rule with id &quot;sizing-hlep&quot;")
    );
    let out = run(&["test", &temp_file("failing-known.json", FAILING)], "");
    assert!(
        !text(&out.stdout).contains("note:"),
        "a known rule gets no note"
    );
}

#[test]
fn test_invalid_scenario_file_or_config_exits_2_with_path_line_column() {
    let bad = temp_file(
        "bad.json",
        "{\"scenarios\": [\n  {\"name\": \"a\", \"session_state\": {\"intent_score\": 1, \"page_url\": \"/\", \"idle\": 1}, \"expect\": {\"no_nudge\": true}}\n]}",
    );
    let good = temp_file("good.json", FAILING);
    let out = run(&["test", &good, &bad], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing runs when a file is invalid");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("bad.json is invalid: 1 error"), "{stderr}");
    assert!(
        stderr.contains("error[unknown_field] scenarios[0].session_state.idle: unknown field \"idle\"; did you mean \"idle_ms\"? (line 2, column 71)"),
        "{stderr}"
    );
    let out = run(&["test", "--config", "examples/broken.json", &good], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("examples/broken.json is invalid"));
    let out = run(&["test"], "");
    assert_eq!(out.status.code(), Some(2), "a scenario file is required");
}

#[test]
fn test_junit_is_well_formed_xml_with_one_testcase_per_scenario() {
    let file = temp_file("junit.json", FAILING);
    let out = run(
        &[
            "test",
            "--format",
            "junit",
            &file,
            "examples/scenarios.json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let xml = text(&out.stdout);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("16"));
    assert_eq!(root.attribute("failures"), Some("1"));
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(suites.len(), 2);
    assert_eq!(suites[0].attribute("name"), Some(file.as_str()));
    assert_eq!(suites[0].attribute("failures"), Some("1"));
    assert_eq!(suites[1].attribute("tests"), Some("14"));
    let cases: Vec<_> = suites[0].children().filter(|n| n.is_element()).collect();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[1].attribute("name"), Some("too early <&>"));
    let failure = cases[1].first_element_child().unwrap();
    assert_eq!(failure.tag_name().name(), "failure");
    assert_eq!(
        failure.attribute("message"),
        Some("expected rule \"sizing-help\" fires, got no nudge")
    );
    assert!(
        failure
            .text()
            .unwrap()
            .contains("reason:   no rule matched")
    );
    assert!(
        cases[0].first_element_child().is_none(),
        "a pass has no failure"
    );
}

#[test]
fn test_json_and_coverage() {
    let out = run(
        &["test", "--json", "--coverage", "examples/scenarios.json"],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["passed"], 14);
    assert_eq!(v["files"][0]["file"], "examples/scenarios.json");
    assert_eq!(v["files"][0]["results"].as_array().unwrap().len(), 14);
    assert_eq!(v["coverage"]["totals"]["rules_fired"], 8);
    assert_eq!(v["coverage"]["unexercised"].as_array().unwrap().len(), 3);

    let out = run(&["test", "--coverage", "examples/scenarios.json"], "");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("rules fired          8 of 8 (100%)"),
        "{stdout}"
    );
    assert!(stdout.contains("never exercised (3):"), "{stdout}");
    assert!(stdout.contains("quiet zone quiet_zones[2] \"/account/**\" never matched"));
    let out = run(
        &[
            "test",
            "--json",
            "--format",
            "junit",
            "examples/scenarios.json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "--json and --format conflict");
}

#[test]
fn replay_prints_pages_beside_recorded_nudges_and_a_summary() {
    let out = run(&["replay", "examples/sessions.jsonl"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("would fire"), "{stdout}");
    assert!(stdout.contains("sizing-help (chat_bubble) at 8.0 s"));
    assert!(stdout.contains("250 sessions ("), "{stdout}");
    assert!(stdout.contains("predicted against recorded, per nudge type:"));

    let out = run(
        &["replay", "--summary", "--json", "-"],
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/sessions.jsonl"
        ))
        .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sessions"], 250);
    assert_eq!(v["rules"].as_array().unwrap().len(), 9);

    let bad = temp_file(
        "bad.jsonl",
        "{\"id\": \"sess_1\", \"intent_score\": 10, \"ended_at\": \"2026-03-01T12:00:05Z\", \"events\": []}\n{\"id\": \"sess_2\", \"intent_score\": 10, \"ended_at\": \"soon\", \"events\": []}\n",
    );
    let out = run(&["replay", &bad], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("error[invalid_timestamp] [1].ended_at:"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("(line 2, column 50)"));
}

#[test]
fn replay_output_can_be_cut_short() {
    // `| head`: a closed pipe ends the program quietly.
    let mut child = Command::new(env!("CARGO_BIN_EXE_nudge-rules"))
        .args(["replay", "examples/sessions.jsonl"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn diff_lists_changes_side_by_side_with_counts() {
    let configs = [
        "diff",
        "--config",
        "examples/storefront.json",
        "--config",
        "examples/storefront-next.json",
    ];
    let out = run(
        &[
            &configs[..],
            &["examples/scenarios.json", "examples/sessions.jsonl"],
        ]
        .concat(),
        "",
    );
    assert_eq!(out.status.code(), Some(1), "changes: exit 1");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("nudge_removed  scenario \"a shopper lingering on a shirt gets the stylist\" (examples/scenarios.json)"), "{stdout}");
    assert!(stdout.contains("  old: sizing-help (chat_bubble): rule \"sizing-help\" fired"));
    assert!(stdout.contains("  new: no nudge: no rule matched"));
    assert!(stdout.contains("timing_changed"));
    assert!(stdout.contains("reach per rule over the recorded sessions"));

    let out = run(&configs, "");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "decision maps of 16 pages the two configs mention: 4 pages change, 8 changes"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("60-100  8000-11999 ms  sizing-help  ->  -    nudge_removed"),
        "{stdout}"
    );

    let out = run(
        &[&configs[..], &["--json", "--page", "/returns"]].concat(),
        "",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pages"], serde_json::json!(["/returns"]));
    assert_eq!(v["map_changes"][0]["regions"].as_array().unwrap().len(), 3);

    // A config against itself (the embedded one, twice): no change, exit 0.
    let out = run(&["diff", "examples/scenarios.json"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).starts_with("14 scenarios and 0 recorded page views compared: 0 changes")
    );
    // `--config NEW` alone compares the embedded storefront with NEW.
    let out = run(&["diff", "--config", "examples/storefront-next.json"], "");
    assert_eq!(out.status.code(), Some(1));
    let out = run(
        &[
            "diff",
            "--config",
            "examples/broken.json",
            "--config",
            "examples/storefront.json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("examples/broken.json is invalid"));
    let out = run(
        &["diff", "--config", "a", "--config", "b", "--config", "c"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
}
