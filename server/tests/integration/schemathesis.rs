//! Contract fuzzing: schemathesis (PyPI, pinned by scripts/setup.sh) generates requests from
//! docs/openapi.yaml, valid and invalid, sends them to a running server, and checks that no
//! answer is a 5xx and that every answer (status, headers, body) matches the document.
//!
//! One check is left out: `positive_data_acceptance` expects every schema-valid request to be
//! accepted, but a `page_url` is valid only under SPEC 4's URL policy, which no JSON Schema
//! can express (`/%zz` is a string like any other); such requests rightly get 400.

use std::process::Command;
use std::sync::Arc;

use nudge_rules_server::limiter::SystemClock;

use crate::common::*;

const OPENAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.yaml");
const SETTINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_5xx_and_no_departure_from_the_document() {
    let version = Command::new("python3")
        .args(["-m", "schemathesis.cli", "--version"])
        .output();
    match &version {
        Ok(out) if out.status.success() => {}
        _ => panic!(
            "schemathesis is not installed for python3 ({version:?}); scripts/setup.sh installs it (pip install schemathesis)"
        ),
    }
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 100_000, &[key(1)])],
    );
    let server = start(&sites, options(), Arc::new(SystemClock::new())).await;
    let url = format!("http://{}", server.api_addr());
    let auth = format!("Authorization: Bearer {}", key(1));
    let work = dir.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .args(["-m", "schemathesis.cli", "--config-file", SETTINGS])
            .args(["run", OPENAPI, "--url", &url, "-H", &auth])
            .args([
                "--checks",
                "all",
                "--exclude-checks",
                "positive_data_acceptance",
            ])
            .args(["--max-examples", "200", "--workers", "2"])
            .current_dir(work) // hypothesis keeps its database in the working folder
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "schemathesis found problems:\n{report}"
    );
    assert!(report.contains("No issues found"), "{report}");
    let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
    let answered_2xx = metric(
        &metrics,
        "nudge_http_requests_total{route=\"/v1/nudges/preview\",status=\"200\"}",
    );
    assert!(
        answered_2xx >= 10.0,
        "schemathesis reached the engine only {answered_2xx} times"
    );
    println!("{report}");
    server.shutdown().await;
}
