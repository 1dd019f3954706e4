//! The built binary's `import` subcommand (docs/contract/store.md "Import"): a JSONL file streamed with its
//! progress on stderr, bad lines reported and skipped, a warning naming the sessions that fall
//! outside the site's retention window, and `--shift-to-now` for sample data.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use nudge_rules::replay::format_unix_ms;
use nudge_rules_server::domain::event::{Mode, Scope};
use nudge_rules_server::store::Store;

use crate::common::*;

const BIN: &str = env!("CARGO_BIN_EXE_nudge-rules-server");
const DAY_MS: i64 = 86_400_000;

/// One session line: two page views `at_ms` and 10 s later.
fn session_line(id: &str, at_ms: i64) -> String {
    format!(
        r#"{{"id":"{id}","ended_at":"{}","intent_score":40,"events":[{{"type":"PAGE_VIEW","url":"/products/a","occurred_at":"{}"}},{{"type":"PAGE_VIEW","url":"/cart","occurred_at":"{}"}}]}}"#,
        format_unix_ms(at_ms + 10_000),
        format_unix_ms(at_ms),
        format_unix_ms(at_ms + 10_000),
    )
}

fn import(dir: &std::path::Path, extra: &[&str], file: &str, stdin: Option<&str>) -> Output {
    let sites = dir.join("sites.toml");
    let store = format!("sqlite:{}", dir.join("store.db").display());
    let mut args = vec![
        "import",
        "--sites",
        sites.to_str().unwrap(),
        "--store",
        &store,
        "--site",
        "shop",
        "--mode",
        "test",
    ];
    args.extend_from_slice(extra);
    args.push(file);
    let mut child = Command::new(BIN)
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn shop_sites(dir: &std::path::Path) {
    write_sites(dir, &[TestSite::new("shop", STOREFRONT, 1000, &[key(1)])]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_streams_with_progress_bad_lines_and_a_retention_warning() {
    let dir = tempfile::tempdir().unwrap();
    shop_sites(dir.path());
    let now = now_ms();
    // 3 recent sessions, 2 of 45 days ago (the starter plan shows 30 days), one bad line.
    let lines = [
        session_line("sess_recent1", now - 3_600_000),
        session_line("sess_old1", now - 45 * DAY_MS),
        session_line("sess_recent2", now - 7_200_000),
        r#"{"id":"sess_bad","ended_at":"yesterday","intent_score":40,"events":[]}"#.to_owned(),
        session_line("sess_old2", now - 45 * DAY_MS - 60_000),
        String::new(),
        session_line("sess_recent3", now - DAY_MS),
    ];
    let text = lines.join("\n");
    let file = dir.path().join("sessions.jsonl");
    std::fs::write(&file, &text).unwrap();
    let out = import(dir.path(), &[], file.to_str().unwrap(), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a bad line: exit 1\n{stderr}");
    // The progress: sessions and bytes of the file's size.
    let mb = format!("{:.1}", text.len() as f64 / 1e6);
    assert!(
        stderr.contains(&format!("imported 5 sessions, {mb} of {mb} MB (100%)")),
        "{stderr}"
    );
    assert!(
        stderr.contains("line 4, column 29: [0].ended_at:"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "warning: 2 of 5 sessions start before site \"shop\"'s retention window (30 days)"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("5 sessions into site \"shop\" (test mode): 10 events stored"));

    // Stdin streams too; everything is a duplicate now. No warning for recent sessions only.
    let recent = [
        session_line("sess_recent1", now - 3_600_000),
        session_line("sess_recent2", now - 7_200_000),
    ]
    .join("\n");
    let out = import(dir.path(), &[], "-", Some(&recent));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("imported 2 sessions, 0.0 MB read"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 events stored, 4 already present"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_to_now_moves_the_latest_event_to_now() {
    let dir = tempfile::tempdir().unwrap();
    shop_sites(dir.path());
    // Sample data of 2020: all of it outside the window without the shift.
    let t2020 = 1_577_880_000_000; // 2020-01-01T12:00:00Z
    let text = [
        session_line("sess_a", t2020),
        session_line("sess_b", t2020 - 2 * DAY_MS),
    ]
    .join("\n");
    let file = dir.path().join("sample.jsonl");
    std::fs::write(&file, &text).unwrap();

    // Not with stdin: the file is read twice.
    let out = import(dir.path(), &["--shift-to-now"], "-", Some(&text));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--shift-to-now reads the file twice"));

    let before = now_ms();
    let out = import(
        dir.path(),
        &["--shift-to-now"],
        file.to_str().unwrap(),
        None,
    );
    let after = now_ms();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(stderr.contains("days (--shift-to-now)"), "{stderr}");

    let store = Store::open(&format!("sqlite:{}", dir.path().join("store.db").display()))
        .await
        .unwrap();
    let scope = Scope {
        site: "shop".to_owned(),
        mode: Mode::Test,
    };
    let a = store.session(&scope, "sess_a", 0).await.unwrap().unwrap();
    assert!(
        (before..=after).contains(&a.summary.ended_at_ms),
        "the latest event is now: {} not in {before}..={after}",
        a.summary.ended_at_ms
    );
    assert_eq!(a.summary.started_at_ms, a.summary.ended_at_ms - 10_000);
    let b = store.session(&scope, "sess_b", 0).await.unwrap().unwrap();
    assert_eq!(
        b.summary.ended_at_ms,
        a.summary.ended_at_ms - 2 * DAY_MS,
        "every time moves by the same amount"
    );
}
