//! Contract fuzzing: schemathesis (PyPI, pinned by scripts/setup.sh) generates requests from
//! docs/openapi.yaml, valid and invalid, sends them to a running server, and checks that no
//! answer is a 5xx and that every answer (status, headers, body) matches the document.
//!
//! One check is left out: `positive_data_acceptance` expects every schema-valid request to be
//! accepted, but a `page_url` is valid only under docs/contract/urls.md's URL policy, which no JSON Schema
//! can express (`/%zz` is a string like any other); such requests rightly get 400.
//!
//! Each operation gets the key its `security` names (tests/schemathesis.toml): the secret key,
//! or on the relay (`POST /v1/events`) the site's publishable key, so the relay is fuzzed too.

use crate::common::*;
use nudge_rules_server::sites::keys::KeyHash;
use std::process::Command;

const OPENAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.yaml");
const SETTINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis.toml");

/// The site's publishable key, for the relay: the demo's, which the document's examples carry
/// in `site_key` (a body naming another key than `Authorization` is a 400).
const PUBLISHABLE_KEY: &str = "pk_test_nudgeRulesDemoKey0001";

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
    // The relay takes the site's publishable key (docs/contract/relay.md), every other operation its secret
    // key: schemathesis.toml gives each operation the key its `security` names.
    let site_keys = format!("site_keys = [\"{}\"]", KeyHash::of_key(PUBLISHABLE_KEY));
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 100_000, &[key(1)]).with(&site_keys)],
    );
    // A store full of data: the sample sessions in test mode, moved into the last 30 days.
    let store_url = format!("sqlite:{}", dir.path().join("store.db").display());
    let store = nudge_rules_server::store::Store::open(&store_url)
        .await
        .unwrap();
    let sessions = include_str!("../../../examples/sessions.jsonl");
    let shift = crate::common::now_ms() - 3_600_000 - 1_773_037_891_526;
    let scope = nudge_rules_server::domain::event::Scope {
        site: "shop".to_owned(),
        mode: nudge_rules_server::domain::event::Mode::Test,
    };
    let options_import = nudge_rules_server::app::import::ImportOptions {
        case_sensitive: false,
        shift_ms: shift,
        visible_from_ms: None,
        received_at_ms: crate::common::now_ms(),
    };
    let report = nudge_rules_server::app::import::import(
        &store,
        &scope,
        sessions,
        &options_import,
        &mut |_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(report.sessions, 250);
    // Exposures (docs/contract/caps.md) for the uplift report: a rule with both arms, one shown only.
    {
        use nudge_rules_server::domain::event::{EventKind, NewEvent};
        let now = crate::common::now_ms() - 60_000;
        let blank = |m: String, session: String, kind, at| NewEvent {
            message_id: m,
            session_id: session,
            visitor_id: None,
            kind,
            occurred_at_ms: at,
            url: Some("/".into()),
            path_key: Some("/".into()),
            intent_score: None,
            nudge_id: None,
            nudge_type: Some(nudge_rules::NudgeType::Toast),
            rule_id: None,
            outcome: None,
        };
        let mut events = Vec::new();
        for i in 0..12 {
            let session = format!("sess_up{i}");
            let (kind, rule) = match i % 3 {
                0 => (EventKind::NudgeHeldOut, "both-arms"),
                1 => (EventKind::NudgeShown, "both-arms"),
                _ => (EventKind::NudgeShown, "shown-only"),
            };
            events.push(NewEvent {
                nudge_id: (kind == EventKind::NudgeShown).then(|| format!("nudg_up{i}")),
                rule_id: Some(rule.into()),
                ..blank(format!("up{i}"), session.clone(), kind, now)
            });
            if i % 2 == 0 {
                events.push(blank(
                    format!("up{i}b"),
                    session,
                    EventKind::Purchase,
                    now + 1,
                ));
            }
        }
        store.insert_events(&scope, &events, 0).await.unwrap();
    }
    // The site is managed through the API (docs/contract/versions.md), its test mode at version 1, so every
    // config endpoint has something to answer.
    let sha256 = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(STOREFRONT.as_bytes()))
    };
    let first = nudge_rules_server::store::NewVersion {
        published_at_ms: crate::common::now_ms(),
        published_by: "00000000",
        message: Some("schemathesis"),
        sha256: &sha256,
        restores: None,
        config: STOREFRONT,
    };
    store.publish(&scope, None, &first).await.unwrap();
    // Webhook endpoints and a message (docs/contract/webhooks.md) for the webhook routes to act on
    // (schemathesis.toml names them); the server may deliver to neither (example.com does not
    // resolve here, and its attempts fail).
    let hook = |id: &str| nudge_rules_server::domain::webhook::endpoint::Endpoint {
        id: id.to_owned(),
        url: "https://example.com/hook".to_owned(),
        event_types: vec![nudge_rules_server::domain::webhook::EventType::NudgeShown],
        description: None,
        status: nudge_rules_server::domain::webhook::endpoint::Status::Enabled,
        secret: nudge_rules_server::domain::webhook::Secret::generate()
            .unwrap()
            .into(),
        previous_secret: None,
        previous_secret_until_ms: None,
        failing_since_ms: None,
        created_at_ms: 1,
        updated_at_ms: 1,
    };
    let (endpoint_id, doomed_id) = ("we_000000000000000000000001", "we_000000000000000000000002");
    for id in [endpoint_id, doomed_id] {
        assert!(
            store
                .create_webhook_endpoint(&scope, &hook(id), 20)
                .await
                .unwrap()
        );
    }
    let message = nudge_rules_server::domain::webhook::Message::new(
        nudge_rules_server::domain::webhook::EventType::Test,
        crate::common::now_ms(),
        serde_json::json!({}),
    )
    .unwrap();
    assert!(
        store
            .enqueue_webhook_to(&scope, endpoint_id, &message)
            .await
            .unwrap()
    );
    let server = start_with_store(&sites, &store_url).await;
    let url = format!("http://{}", server.api_addr());
    let work = dir.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .args(["-m", "schemathesis.cli", "--config-file", SETTINGS])
            .args(["run", OPENAPI, "--url", &url])
            // One worker: schemathesis's workers are threads, and CPython 3.11's `ast` module
            // is not thread-safe (hypothesis parses lambdas' sources to describe strategies),
            // so two workers fail at random with "SystemError: AST constructor recursion depth
            // mismatch" (python/cpython#106905), as one CI run did.
            .args(["--max-examples", "200", "--workers", "1"])
            .current_dir(work) // hypothesis keeps its database in the working folder
            .env("NO_COLOR", "1")
            .env("NUDGE_SECRET_KEY", key(1))
            .env("NUDGE_PUBLISHABLE_KEY", PUBLISHABLE_KEY)
            .env("NUDGE_WEBHOOK_ENDPOINT", endpoint_id)
            .env("NUDGE_WEBHOOK_DOOMED", doomed_id)
            .env("NUDGE_WEBHOOK_MESSAGE", &message.id)
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
    // Three warnings are expected, each for a rule no schema expresses: random publishes (POST
    // /v1/config/versions) are mostly refused, since each needs `If-Match` naming the latest
    // version (428, 412); random webhook URLs (POST /v1/webhook_endpoints) are mostly refused,
    // since an endpoint's URL must resolve to a public address (docs/contract/webhooks.md); a random `since` of
    // a recover is mostly more than 14 days back (docs/contract/webhooks.md). Any other warning (an endpoint
    // that only answers 401 or 404) fails.
    let warned: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("  - "))
        .filter(|l| {
            ![
                "  - POST /v1/config/versions",
                "  - POST /v1/webhook_endpoints",
                "  - POST /v1/webhook_endpoints/{id}/recover",
            ]
            .contains(l)
        })
        .collect();
    assert!(
        report.contains("No issues found") || (warned.is_empty() && !report.contains("FAILURES")),
        "{report}"
    );
    let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
    let answered_2xx = metric(
        &metrics,
        "nudge_http_requests_total{route=\"/v1/nudges/preview\",status=\"200\"}",
    );
    assert!(
        answered_2xx >= 10.0,
        "schemathesis reached the engine only {answered_2xx} times"
    );
    for route in ["/v1/sessions", "/v1/nudges"] {
        let listed = metric(
            &metrics,
            &format!("nudge_http_requests_total{{route=\"{route}\",status=\"200\"}}"),
        );
        assert!(
            listed >= 10.0,
            "schemathesis listed {route} only {listed} times"
        );
    }
    // The relay was reached with its publishable key and stored events (docs/contract/relay.md).
    let relayed = metric(
        &metrics,
        "nudge_http_requests_total{route=\"/v1/events\",status=\"202\"}",
    );
    assert!(
        relayed >= 10.0,
        "schemathesis reached the relay only {relayed} times"
    );
    // The config for storefront pages was reached with the publishable key as `?key=` (docs/contract/storefront.md).
    let runtime = metric(
        &metrics,
        "nudge_http_requests_total{route=\"/v1/runtime/config\",status=\"200\"}",
    );
    assert!(
        runtime >= 1.0,
        "schemathesis reached the runtime config only {runtime} times"
    );
    // The webhook routes were reached on a real endpoint (docs/contract/webhooks.md).
    for route in [
        "/v1/webhook_endpoints/{id}",
        "/v1/webhook_endpoints/{id}/attempts",
    ] {
        let read = metric(
            &metrics,
            &format!("nudge_http_requests_total{{route=\"{route}\",status=\"200\"}}"),
        );
        assert!(
            read >= 1.0,
            "schemathesis reached {route} only {read} times"
        );
    }
    println!("{report}");
    server.shutdown().await;
}
