//! Config reload under load (docs/contract/server.md "Config reload"): the config file is replaced 100 times,
//! valid and invalid alternately, while clients send requests. No request fails, every
//! response is exactly what one whole config answers (the old or the new, never a mix), and
//! every invalid file is refused and reported on the admin listener.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nudge_rules::Engine;
use nudge_rules_server::clock::SystemClock;
use serde_json::Value;

use crate::common::*;

const REPLACEMENTS: usize = 100;
const CLIENTS: usize = 4;

/// A valid config whose two rules both carry the version: a response from a mix of two
/// configs would show two versions.
fn valid_config(version: usize) -> String {
    format!(
        r#"{{"version": 1, "quiet_zones": ["/checkout/**"], "rules": [
  {{"id": "v{version}-products", "nudge": {{"type": "toast", "message": "config {version} products", "cta": "cta {version}"}},
    "when": {{"pages": ["/products/**"], "min_intent_score": 50}}}},
  {{"id": "v{version}-rest", "nudge": {{"type": "sticky_bar", "message": "config {version} rest", "cta": "cta {version}"}}}}
]}}"#
    )
}

/// Invalid configs of several kinds, each refused with diagnostics.
fn invalid_config(i: usize) -> String {
    match (i / 2) % 4 {
        0 => "{\"version\": 1, \"rules\": [".to_owned(),
        1 => r#"{"version": 1, "quiet_zone": ["/checkout/**"]}"#.to_owned(),
        2 => r#"{"version": 2, "rules": [{"id": "bad id", "nudge": {"type": "popup", "message": "m", "cta": "c"}}]}"#.to_owned(),
        _ => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_replaced_100_times_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", &valid_config(0), 100_000, &[key(1)])],
    );
    let config_path = dir.path().join("shop.json");
    let server = start(&sites, options(), Arc::new(SystemClock::new())).await;
    let api = server.api_addr();
    let admin = server.admin_addr();

    // What each valid version answers, computed by the library itself.
    let requests = [
        r#"{"session_state":{"intent_score":80,"page_url":"/products/a"}}"#,
        r#"{"session_state":{"intent_score":10,"page_url":"/about"}}"#,
        r#"{"session_state":{"intent_score":90,"page_url":"/checkout/pay"}}"#,
    ];
    let mut expected: HashMap<String, usize> = HashMap::new();
    for version in (0..=REPLACEMENTS).step_by(2) {
        let engine = Engine::compile(&valid_config(version)).unwrap();
        for request in requests {
            let body = engine.preview_body(request.as_bytes()).unwrap();
            expected.entry(body).or_insert(version);
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let stop = stop.clone();
        let expected = expected.clone();
        clients.push(tokio::spawn(async move {
            let client = client();
            let mut answered = 0usize;
            let mut versions_seen = Vec::new();
            let mut i = c;
            while !stop.load(Ordering::Relaxed) {
                let request = requests[i % requests.len()];
                i += 1;
                let r = preview(&client, api, &key(1), request).await;
                assert_eq!(r.status(), 200, "a request failed during reload");
                let body = r.text().await.unwrap();
                let version = *expected
                    .get(&body)
                    .unwrap_or_else(|| panic!("a body no single config answers: {body}"));
                // Quiet-zone answers are the same in every version; the others must never go
                // back to an older config once a newer one answered this client.
                if !body.contains("quiet zone") {
                    if let Some(&last) = versions_seen.last() {
                        assert!(version >= last, "version {version} after {last}");
                    }
                    versions_seen.push(version);
                }
                answered += 1;
            }
            (answered, versions_seen)
        }));
    }

    let mut reloads_expected = 1; // the first load
    for i in 1..=REPLACEMENTS {
        let text = if i % 2 == 0 {
            valid_config(i)
        } else {
            invalid_config(i)
        };
        let tmp = dir.path().join("shop.json.tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &config_path).unwrap();
        reloads_expected += 1;
        wait_for_reloads(admin, reloads_expected).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    let mut distinct_versions = std::collections::BTreeSet::new();
    for client in clients {
        let (answered, versions) = client.await.unwrap();
        total += answered;
        distinct_versions.extend(versions);
    }
    assert!(
        total >= 200,
        "too little load to mean anything: {total} requests"
    );
    assert!(
        distinct_versions.len() >= 10,
        "the load did not overlap the reloads: versions {distinct_versions:?}"
    );

    // Every refusal counted and reported with its diagnostics; the last valid config serves.
    let (_, sites_json) = admin_get(admin, "/sites").await;
    let report: Value = serde_json::from_str(&sites_json).unwrap();
    let shop = &report["sites"][0];
    assert_eq!(shop["reloads_ok"], 51);
    assert_eq!(shop["reloads_refused"], 50);
    assert_eq!(shop["state"], "valid");
    let errors = shop["last_refusal"]["errors"].as_array().unwrap();
    assert!(!errors.is_empty());
    let (_, metrics) = admin_get(admin, "/metrics").await;
    assert_eq!(
        metric(
            &metrics,
            "nudge_config_reloads_total{site=\"shop\",result=\"refused\"}"
        ),
        50.0
    );
    assert_eq!(
        metric(
            &metrics,
            "nudge_config_reloads_total{site=\"shop\",result=\"ok\"}"
        ),
        51.0
    );
    let r = preview(&client(), api, &key(1), requests[1]).await;
    assert!(
        r.text()
            .await
            .unwrap()
            .contains(&format!("config {REPLACEMENTS} rest"))
    );
    println!(
        "reload under load: {total} requests, {} versions seen",
        distinct_versions.len()
    );
    server.shutdown().await;
}

/// Waits until the admin listener has seen `count` loads (ok + refused) of the only site.
async fn wait_for_reloads(admin: std::net::SocketAddr, count: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = admin_get(admin, "/sites").await;
        let report: Value = serde_json::from_str(&body).unwrap();
        let site = &report["sites"][0];
        let seen = site["reloads_ok"].as_u64().unwrap() + site["reloads_refused"].as_u64().unwrap();
        if seen >= count {
            assert_eq!(seen, count, "a replacement was counted twice");
            return;
        }
        assert!(Instant::now() < deadline, "reload {count} not seen: {body}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
