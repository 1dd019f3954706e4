//! The SDK relay over real HTTP (docs/contract/relay.md) on both store backends: per-event judgement, exactly
//! once, clocks, the event limit, CORS and keys, malformed events, a store outage.

use std::sync::Arc;
use std::time::Duration;

use nudge_rules_server::clock::{Clock, ManualClock, SystemClock};
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::runtime::Server;
use nudge_rules_server::sites::keys::KeyHash;
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;
use crate::store::Rng;

const PK: &str = "pk_test_relayKey0000000001";
const PK_LIVE: &str = "pk_live_relayKey0000000001";

struct Relay {
    _dir: tempfile::TempDir,
    server: Server,
    base: String,
}

async fn relay(store_url: Option<&str>, clock: Arc<dyn Clock>) -> Relay {
    let dir = tempfile::tempdir().unwrap();
    let site_keys = format!(
        "site_keys = [\"{}\", \"{}\"]",
        KeyHash::of_key(PK),
        KeyHash::of_key(PK_LIVE)
    );
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 100_000, &[key(1), live_key(1)]).with(&site_keys)],
    );
    let options = ServeConfig {
        store: store_url.map(str::to_owned),
        cursor_secret: Some(vec![1; 32]),
        ..options()
    };
    let server = start(&sites, options, clock).await;
    let base = format!("http://{}", server.api_addr());
    Relay {
        _dir: dir,
        server,
        base,
    }
}

async fn send(
    base: &str,
    key: Option<&str>,
    content_type: &str,
    body: &Value,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut request = client()
        .post(format!("{base}/v1/events"))
        .header("content-type", content_type)
        .body(body.to_string());
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        headers,
    )
}

fn page_view(message_id: &str, session: &str, at_ms: i64, url: &str) -> Value {
    json!({"message_id": message_id, "session_id": session, "type": "PAGE_VIEW", "occurred_at": format_ms(at_ms), "url": url})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_judged_alone_stored_once_and_read_back_with_derived_fields() {
    for test_store in TestStore::both() {
        let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
        let now = now_ms();
        let batch = json!({"events": [
            page_view("m1", "sess_r", now - 60_000, "/products/linen-shirt"),
            {"message_id": "m2", "session_id": "sess_r", "type": "NUDGE_OUTCOME", "occurred_at": format_ms(now - 30_000), "nudge_id": "nudg_r", "outcome": "clicked"},
            {"message_id": "m3", "session_id": "sess_r", "type": "PAGE_VIEW", "occurred_at": format_ms(now - 20_000), "url": "/x", "intent_score": 50.5},
            {"message_id": "m4", "session_id": "sess_r", "type": "PAGE_VIEW", "occurred_at": "2026-02-30T25:61:00Z", "url": "/x"},
            page_view("m5", "sess_r", now - 10_000, "/Products/Linen-Shirt/"),
        ]});
        let (status, body, headers) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(status, 202, "{body}");
        assert_eq!(headers["access-control-allow-origin"], "*");
        assert_eq!(headers["x-ratelimit-limit"], "10000");
        assert_eq!(body["data"]["accepted"], 3, "{}", test_store.backend);
        assert_eq!(body["data"]["duplicates"], 0);
        let rejected = body["data"]["rejected"].as_array().unwrap();
        assert_eq!(rejected.len(), 2);
        assert_eq!(
            (rejected[0]["index"].as_u64(), rejected[1]["index"].as_u64()),
            (Some(2), Some(3))
        );
        assert!(
            rejected[0]["message"]
                .as_str()
                .unwrap()
                .contains("intent_score")
        );
        assert!(
            rejected[1]["message"]
                .as_str()
                .unwrap()
                .contains("occurred_at")
        );
        // The NUDGE_SHOWN arrives after its outcome, in another batch, as a beacon would send it.
        let shown = json!({"site_key": PK, "events": [
            {"message_id": "m6", "session_id": "sess_r", "type": "NUDGE_SHOWN", "occurred_at": format_ms(now - 40_000), "nudge_id": "nudg_r", "nudge_type": "toast", "rule_id": "sale-toast"},
            {"message_id": "m7", "session_id": "sess_r", "type": "PURCHASE", "occurred_at": format_ms(now - 5_000), "url": "/checkout/thank-you"},
        ]});
        let (status, body, _) = send(&r.base, None, "text/plain;charset=UTF-8", &shown).await;
        assert_eq!(
            (status, &body["data"]["accepted"]),
            (202, &json!(2)),
            "{body}"
        );
        // Resent: duplicates, nothing changes.
        let (status, body, _) = send(&r.base, None, "text/plain", &shown).await;
        assert_eq!(
            (
                status,
                &body["data"]["duplicates"],
                &body["data"]["accepted"]
            ),
            (202, &json!(2), &json!(0))
        );

        let response = client()
            .get(format!("{}/v1/sessions/sess_r", r.base))
            .bearer_auth(key(1))
            .send()
            .await
            .unwrap();
        let session: Value = response.json().await.unwrap();
        let data = &session["data"];
        assert_eq!(
            data["page_count"], 1,
            "the two URLs are one canonical page: {data}"
        );
        assert_eq!(data["converted"], true);
        assert_eq!(data["nudge_count"], 1);
        assert_eq!(data["started_at"], format_ms(now - 60_000));
        assert_eq!(data["nudges"][0]["outcome"], "clicked");
        assert_eq!(data["nudges"][0]["influenced_conversion"], true);
        // A live key's events are live records: the test key does not see them.
        let (status, _, _) = send(
            &r.base,
            Some(PK_LIVE),
            "application/json",
            &json!({"events": [page_view("m1", "sess_live", now, "/")]}),
        )
        .await;
        assert_eq!(status, 202);
        let response = client()
            .get(format!("{}/v1/sessions/sess_live", r.base))
            .bearer_auth(key(1))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404);
        let response = client()
            .get(format!("{}/v1/sessions/sess_live", r.base))
            .bearer_auth(live_key(1))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        r.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_are_corrected_and_old_events_refused() {
    let test_store = TestStore::sqlite();
    let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
    let now = now_ms();
    // The browser's clock runs an hour fast: with sent_at, its events land at the server's time.
    let fast = 3_600_000;
    let batch = json!({"sent_at": format_ms(now + fast), "events": [
        page_view("c1", "sess_c", now + fast - 2_000, "/a"),
        page_view("c2", "sess_c", now + 2 * 3_600_000, "/b"),
    ]});
    let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
    assert_eq!(
        (status, &body["data"]["accepted"]),
        (202, &json!(2)),
        "{body}"
    );
    let response = client()
        .get(format!("{}/v1/sessions/sess_c", r.base))
        .bearer_auth(key(1))
        .send()
        .await
        .unwrap();
    let session: Value = response.json().await.unwrap();
    let started = nudge_rules_server::domain::time::parse_rfc3339_ms(
        session["data"]["started_at"].as_str().unwrap(),
        3,
    )
    .unwrap();
    assert!((started - (now - 2_000)).abs() < 5_000, "{session}");
    // Without sent_at: more than 5 minutes ahead is stored at the time received; more than 24 h
    // old is refused; more than 24 h after the session's start is refused.
    let batch = json!({"events": [
        page_view("c3", "sess_d", now + 3_600_000, "/a"),
        page_view("c4", "sess_e", now - 25 * 3_600_000, "/a"),
    ]});
    let (_, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
    assert_eq!(body["data"]["accepted"], 1, "{body}");
    assert!(
        body["data"]["rejected"][0]["message"]
            .as_str()
            .unwrap()
            .contains("24 hours")
    );
    let response = client()
        .get(format!("{}/v1/sessions/sess_d", r.base))
        .bearer_auth(key(1))
        .send()
        .await
        .unwrap();
    let session: Value = response.json().await.unwrap();
    let at = nudge_rules_server::domain::time::parse_rfc3339_ms(
        session["data"]["started_at"].as_str().unwrap(),
        3,
    )
    .unwrap();
    assert!(at <= now_ms() && at >= now - 5_000, "{session}");
    // The session starts 2 minutes short of 24 hours ago; an event 4 minutes ahead (within the
    // 5-minute tolerance) is then more than 24 hours after that start.
    let batch = json!({"events": [page_view("c5", "sess_f", now - 86_280_000, "/a"), page_view("c6", "sess_f", now + 240_000, "/b")]});
    let (_, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
    assert_eq!(body["data"]["accepted"], 1, "{body}");
    assert!(
        body["data"]["rejected"][0]["message"]
            .as_str()
            .unwrap()
            .contains("after its session"),
        "{body}"
    );
    r.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_events_per_key_and_minute_a_batch_admitted_whole_or_refused_whole() {
    let test_store = TestStore::sqlite();
    let clock = Arc::new(ManualClock::new(1_900_000_000_000_000));
    let r = relay(Some(&test_store.url), clock.clone()).await;
    let now = now_ms();
    let mut n = 0;
    for b in 0..20 {
        let events: Vec<Value> = (0..500)
            .map(|i| {
                n += 1;
                page_view(
                    &format!("e{n}"),
                    &format!("sess_b{b}x{}", i % 10),
                    now - 1000,
                    "/",
                )
            })
            .collect();
        let (status, body, headers) = send(
            &r.base,
            Some(PK),
            "application/json",
            &json!({"events": events}),
        )
        .await;
        assert_eq!(status, 202, "batch {b}: {body}");
        assert_eq!(
            headers["x-ratelimit-remaining"].to_str().unwrap(),
            (10_000 - 500 * (b + 1)).to_string()
        );
        clock.advance_us(1_000_000);
    }
    let one = json!({"events": [page_view("e-last", "sess_last", now, "/")]});
    let (status, body, headers) = send(&r.base, Some(PK), "application/json", &one).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"], "RateLimitExceeded");
    // The first batch (at T0) leaves at T0 + 60 s; the clock is at T0 + 20 s.
    assert_eq!(headers["retry-after"], "40");
    assert_eq!(headers["access-control-allow-origin"], "*");
    clock.advance_us(40_000_000);
    let (status, body, _) = send(&r.base, Some(PK), "application/json", &one).await;
    assert_eq!(status, 202, "{body}");
    // 500 more need the second batch (T0 + 1 s) to leave too: one second more.
    let events: Vec<Value> = (0..500)
        .map(|i| page_view(&format!("f{i}"), "sess_f1", now, "/"))
        .collect();
    let (status, _, headers) = send(
        &r.base,
        Some(PK),
        "application/json",
        &json!({"events": events}),
    )
    .await;
    assert_eq!(
        (status, headers["retry-after"].to_str().unwrap()),
        (429, "1")
    );
    r.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_media_types_sizes_and_cors() {
    let test_store = TestStore::sqlite();
    let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
    let batch = json!({"events": [page_view("k1", "sess_k", now_ms(), "/")]});
    // Preflight from any origin.
    let response = client()
        .request(reqwest::Method::OPTIONS, format!("{}/v1/events", r.base))
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert_eq!(header(&response, "access-control-allow-origin"), "*");
    assert!(header(&response, "access-control-allow-headers").contains("Authorization"));
    for (key, body_key, status, named) in [
        (None, None, 401, "missing"),
        (Some(key(1).as_str()), None, 401, "never be put in a page"),
        (Some("pk_test_unknownKey00000000"), None, 401, "not valid"),
        (Some(PK), Some(PK_LIVE), 400, "different keys"),
    ] {
        let mut body = batch.clone();
        if let Some(k) = body_key {
            body["site_key"] = json!(k);
        }
        let (got, json, headers) = send(&r.base, key, "application/json", &body).await;
        assert_eq!(got, status, "{json}");
        assert!(json["message"].as_str().unwrap().contains(named), "{json}");
        assert_eq!(headers["access-control-allow-origin"], "*");
    }
    let (status, _, _) = send(
        &r.base,
        Some(PK),
        "application/x-www-form-urlencoded",
        &batch,
    )
    .await;
    assert_eq!(status, 415);
    for bad in [
        json!([]),
        json!({"events": []}),
        json!({"events": 1}),
        json!({"events": [], "x": 1}),
        json!({"event": []}),
    ] {
        let (status, body, _) = send(&r.base, Some(PK), "application/json", &bad).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("InvalidRequest")),
            "{bad}"
        );
    }
    let huge = json!({"events": [{"message_id": "h", "pad": "x".repeat(600 * 1024)}]});
    let (status, _, _) = send(&r.base, Some(PK), "application/json", &huge).await;
    assert_eq!(status, 413);
    // A publishable key reads nothing.
    let response = client()
        .get(format!("{}/v1/sessions", r.base))
        .bearer_auth(PK)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    r.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_events_never_answer_500_and_are_never_stored() {
    let test_store = TestStore::sqlite();
    let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
    let now = now_ms();
    let mut rng = Rng(11);
    let bad_values = [
        json!(null),
        json!(true),
        json!(-1),
        json!(1e308),
        json!("x".repeat(40_000)),
        json!([]),
        json!({}),
        json!("2026-02-30T25:61:00Z"),
        json!("sess_"),
        json!("nudg_\u{0}"),
        json!("\u{FFFF}"),
        json!(101),
        json!("PAGE_VIEW"),
    ];
    let fields = [
        "message_id",
        "session_id",
        "type",
        "occurred_at",
        "url",
        "intent_score",
        "nudge_id",
        "nudge_type",
        "outcome",
        "rule_id",
        "surprise",
    ];
    let mut sent = 0;
    for round in 0..40 {
        let mut events = Vec::new();
        for i in 0..25 {
            let mut event = page_view(
                &format!("g{round}x{i}"),
                &format!("sess_g{round}"),
                now - 1000,
                "/ok",
            );
            let field = fields[rng.below(fields.len() as u64) as usize];
            event[field] = bad_values[rng.below(bad_values.len() as u64) as usize].clone();
            events.push(event);
        }
        sent += events.len();
        let (status, body, _) = send(
            &r.base,
            Some(PK),
            "application/json",
            &json!({"events": events}),
        )
        .await;
        assert!([202, 413].contains(&status), "{status} {body}");
        if status == 202 {
            for rejection in body["data"]["rejected"].as_array().unwrap() {
                let message = rejection["message"].as_str().unwrap();
                assert!(
                    fields.iter().any(|f| message.contains(f)) || message.contains("32 KiB"),
                    "{message}"
                );
            }
        }
    }
    assert!(sent > 0);
    // Whatever was stored reads back as valid sessions.
    let response = client()
        .get(format!("{}/v1/sessions?limit=200", r.base))
        .bearer_auth(key(1))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let list: Value = response.json().await.unwrap();
    for s in list["data"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        assert!(id.starts_with("sess_g"), "{id}");
        let detail: Value = client()
            .get(format!("{}/v1/sessions/{id}", r.base))
            .bearer_auth(key(1))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for e in detail["data"]["events"].as_array().unwrap() {
            assert!(e["url"].as_str().unwrap().starts_with('/'), "{e}");
        }
    }
    r.server.shutdown().await;
}

/// The relay's events on the admin listener's `/metrics`, by outcome: (accepted, duplicate,
/// rejected).
async fn relay_counters(server: &Server) -> (f64, f64, f64) {
    let (status, text) = admin_get(server.admin_addr(), "/metrics").await;
    assert_eq!(status, 200);
    let sample = |outcome: &str| {
        let name = format!("nudge_relay_events_total{{outcome=\"{outcome}\"}}");
        assert!(
            text.contains(&name),
            "{name} missing from /metrics:\n{text}"
        );
        metric(&text, &name)
    };
    (sample("accepted"), sample("duplicate"), sample("rejected"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_the_relays_accepted_duplicate_and_rejected_events() {
    let test_store = TestStore::sqlite();
    let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
    // Every outcome is there from the start, at 0.
    assert_eq!(relay_counters(&r.server).await, (0.0, 0.0, 0.0));
    let now = now_ms();
    // Two valid events, one repeated message_id, one invalid event.
    let batch = json!({"events": [
        page_view("k1", "sess_k", now - 3000, "/a"),
        page_view("k2", "sess_k", now - 2000, "/b"),
        page_view("k1", "sess_k", now - 1000, "/c"),
        {"message_id": "k3", "session_id": "sess_k", "type": "PAGE_VIEW", "occurred_at": "yesterday", "url": "/d"},
    ]});
    let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(
        (
            &body["data"]["accepted"],
            &body["data"]["duplicates"],
            body["data"]["rejected"].as_array().unwrap().len()
        ),
        (&json!(2), &json!(1), 1)
    );
    assert_eq!(relay_counters(&r.server).await, (2.0, 1.0, 1.0));
    // The batch again: every valid event a duplicate now.
    let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(relay_counters(&r.server).await, (2.0, 4.0, 2.0));
    // A batch refused whole (not JSON, a bad key) counts no event.
    let (status, _, _) = send(&r.base, Some(PK), "application/json", &json!("nope")).await;
    assert_eq!(status, 400);
    let (status, _, _) = send(
        &r.base,
        Some("pk_test_unknownKey00000001"),
        "application/json",
        &batch,
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(relay_counters(&r.server).await, (2.0, 4.0, 2.0));
    r.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_answers_503_and_stores_nothing_half() {
    let test_store = TestStore::postgres_alone();
    let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
    let pg = test_store.pg.as_ref().unwrap();
    let now = now_ms();
    let batch = json!({"events": [page_view("o1", "sess_o", now, "/"), page_view("o2", "sess_o", now, "/b")]});
    pg.stop();
    let (status, body, headers) = send(&r.base, Some(PK), "application/json", &batch).await;
    assert_eq!(status, 503, "{body}");
    assert!(headers.contains_key("retry-after"));
    // Counted only once committed: nothing for a batch the store did not take.
    assert_eq!(relay_counters(&r.server).await, (0.0, 0.0, 0.0));
    pg.start_again();
    let mut status = 0;
    let mut body = Value::Null;
    for _ in 0..50 {
        (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        if status == 202 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        (status, &body["data"]["accepted"]),
        (202, &json!(2)),
        "{body}"
    );
    assert_eq!(relay_counters(&r.server).await, (2.0, 0.0, 0.0));
    r.server.shutdown().await;
}

/// docs/contract/relay.md + 15 over HTTP on both stores: `visitor_id` on any event, NUDGE_HELD_OUT stored
/// once, never a nudge, never a session alone; a bad one rejected with its index and the
/// field and value named, the rest of the batch stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_out_events_and_visitor_ids_are_stored_and_never_shown_as_nudges() {
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
        let now = now_ms();
        let at = |ms: i64| format_ms(now - ms);
        let held = |m: &str, session: &str| json!({"message_id": m, "session_id": session, "type": "NUDGE_HELD_OUT", "occurred_at": at(30_000), "rule_id": "sale-toast", "nudge_type": "toast", "url": "/products/a", "intent_score": 40, "visitor_id": "vis_abc"});
        let batch = json!({"events": [
            {"message_id": "h1", "session_id": "sess_h", "type": "PAGE_VIEW", "occurred_at": at(60_000), "url": "/", "visitor_id": "vis_abc"},
            held("h2", "sess_h"),
            held("h3", "sess_alone"),
            {"message_id": "h4", "session_id": "sess_h", "type": "NUDGE_HELD_OUT", "occurred_at": at(30_000), "nudge_type": "toast", "url": "/"},
            {"message_id": "h5", "session_id": "sess_h", "type": "NUDGE_HELD_OUT", "occurred_at": at(30_000), "rule_id": "r", "nudge_type": "banner", "url": "/"},
            {"message_id": "h6", "session_id": "sess_h", "type": "PAGE_VIEW", "occurred_at": at(20_000), "url": "/", "visitor_id": "visitor-1"},
            {"message_id": "h7", "session_id": "sess_h", "type": "PURCHASE", "occurred_at": at(10_000), "url": "/thanks", "visitor_id": "vis_abc"},
        ]});
        let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(status, 202, "{backend}: {body}");
        assert_eq!(body["data"]["accepted"], 4, "{backend}: {body}");
        let rejected: Vec<(u64, String)> = body["data"]["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["index"].as_u64().unwrap(),
                    r["message"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            rejected.iter().map(|r| r.0).collect::<Vec<_>>(),
            [3, 4, 5],
            "{body}"
        );
        assert!(
            rejected[0].1.contains("missing field \"rule_id\""),
            "{body}"
        );
        assert!(
            rejected[1].1.contains("nudge_type") && rejected[1].1.contains("\"banner\""),
            "{body}"
        );
        assert!(
            rejected[2].1.contains("visitor_id") && rejected[2].1.contains("\"visitor-1\""),
            "{body}"
        );
        // Resent: duplicates by message_id, whatever the type.
        let (_, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(
            (&body["data"]["accepted"], &body["data"]["duplicates"]),
            (&json!(0), &json!(4)),
            "{backend}: {body}"
        );
        let get = |path: String| {
            let base = r.base.clone();
            async move {
                let response = client()
                    .get(format!("{base}{path}"))
                    .bearer_auth(key(1))
                    .send()
                    .await
                    .unwrap();
                (
                    response.status().as_u16(),
                    response.json::<Value>().await.unwrap(),
                )
            }
        };
        let (status, sessions) = get("/v1/sessions".to_owned()).await;
        assert_eq!(status, 200);
        let ids: Vec<&str> = sessions["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            ["sess_h"],
            "{backend}: a held-out event alone is no session"
        );
        let (status, _) = get("/v1/sessions/sess_alone".to_owned()).await;
        assert_eq!(status, 404, "{backend}");
        let (_, detail) = get("/v1/sessions/sess_h".to_owned()).await;
        assert_eq!(detail["data"]["nudges"], json!([]), "{backend}");
        assert_eq!(detail["data"]["nudge_count"], 0, "{backend}");
        assert_eq!(detail["data"]["converted"], true, "{backend}");
        assert_eq!(
            detail["data"]["events"].as_array().unwrap().len(),
            2,
            "{backend}"
        );
        let (_, nudges) = get("/v1/nudges".to_owned()).await;
        assert_eq!(nudges["data"], json!([]), "{backend}");
        r.server.shutdown().await;
    }
}

/// docs/contract/read-api.md "Derived fields" and docs/contract/relay.md (issue 35): an outcome whose NUDGE_SHOWN has not come
/// makes no session (404, not listed) until the NUDGE_SHOWN comes; `chat_opened` on a nudge
/// whose type is known and is not a chat bubble is rejected at the door with its index (known
/// from the same batch or from the store), and allowed when the type is not known yet or is a
/// chat bubble.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outcome_alone_makes_no_session_and_chat_opened_needs_a_chat_bubble() {
    for test_store in TestStore::both() {
        let r = relay(Some(&test_store.url), Arc::new(SystemClock::new())).await;
        let now = now_ms();
        let outcome = |m: &str, nudge: &str, outcome: &str, at: i64| json!({"message_id": m, "session_id": "sess_o", "type": "NUDGE_OUTCOME", "occurred_at": format_ms(at), "nudge_id": nudge, "outcome": outcome});
        let shown = |m: &str, nudge: &str, nudge_type: &str, at: i64| json!({"message_id": m, "session_id": "sess_o", "type": "NUDGE_SHOWN", "occurred_at": format_ms(at), "nudge_id": nudge, "nudge_type": nudge_type, "rule_id": "r"});
        let get = |path: String| {
            let base = r.base.clone();
            async move {
                let response = client()
                    .get(format!("{base}{path}"))
                    .bearer_auth(key(1))
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                (status, response.json::<Value>().await.unwrap())
            }
        };
        // An outcome alone, of a nudge not shown yet (chat_opened allowed: its type is unknown).
        let batch = json!({"events": [outcome("o1", "nudg_a", "chat_opened", now - 50_000)]});
        let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(
            (status, &body["data"]["accepted"]),
            (202, &json!(1)),
            "{body}"
        );
        assert_eq!(
            get("/v1/sessions/sess_o".into()).await.0,
            404,
            "{}",
            test_store.backend
        );
        let (_, list) = get("/v1/sessions".into()).await;
        assert_eq!(list["data"], json!([]), "{}", test_store.backend);
        // Its NUDGE_SHOWN (a chat bubble) comes: the session exists, with the outcome.
        let batch = json!({"events": [shown("s1", "nudg_a", "chat_bubble", now - 60_000)]});
        let (status, _, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(status, 202);
        let (status, session) = get("/v1/sessions/sess_o".into()).await;
        assert_eq!(status, 200, "{}", test_store.backend);
        assert_eq!(session["data"]["nudges"][0]["outcome"], "chat_opened");
        // A toast shown in this batch, and a chat_opened of it and of the stored chat bubble.
        let batch = json!({"events": [
            shown("s2", "nudg_t", "toast", now - 40_000),
            outcome("o2", "nudg_t", "chat_opened", now - 30_000),
            outcome("o3", "nudg_a", "chat_opened", now - 30_000),
        ]});
        let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(
            (status, &body["data"]["accepted"]),
            (202, &json!(2)),
            "{body}"
        );
        let rejected = body["data"]["rejected"].as_array().unwrap();
        assert_eq!(rejected.len(), 1, "{body}");
        assert_eq!(rejected[0]["index"], 1);
        let message = rejected[0]["message"].as_str().unwrap();
        assert!(
            message.contains("chat_opened") && message.contains("nudg_t"),
            "{message}"
        );
        // The toast now stored: a later chat_opened of it is rejected too.
        let batch = json!({"events": [outcome("o4", "nudg_t", "chat_opened", now - 20_000)]});
        let (status, body, _) = send(&r.base, Some(PK), "application/json", &batch).await;
        assert_eq!(
            (status, &body["data"]["accepted"]),
            (202, &json!(0)),
            "{body}"
        );
        assert_eq!(body["data"]["rejected"][0]["index"], 0, "{body}");
        r.server.shutdown().await;
    }
}
