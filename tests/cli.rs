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
        assert!(body["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("/checkout/**"));
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
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("session_state.intent_score"));
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
