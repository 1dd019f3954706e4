//! Webhooks over real HTTP (docs/contract/webhooks.md) on both stores: a real receiver on the loopback scripted
//! per attempt, deliveries checked by the independent verifier (PyPI `standardwebhooks`),
//! registration refusals before any connection, rotation, the 5-day rule, kill -9 between the
//! commit and the delivery, and two instances on one PostgreSQL.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use nudge_rules_server::clock::{OffsetClock, SystemClock};
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::domain::event::{Mode, Scope};
use nudge_rules_server::domain::retention::DAY_MS;
use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::domain::webhook::endpoint::{Endpoint, Status};
use nudge_rules_server::domain::webhook::{
    AttemptResult, Due, EventType, HttpStatus, Message, Schedule, Secret, StoredSecret, Verdict,
};
use nudge_rules_server::runtime::Server;
use nudge_rules_server::sites::keys::KeyHash;
use nudge_rules_server::store::Store;
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;
use crate::webhook_signature::python_verifies;

pub(crate) const PK: &str = "pk_test_hookKey00000000001";

/// What the receiver answers on a path, attempt after attempt (the last one repeats).
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Status(u16),
    Redirect,
    Slow(Duration),
    Big,
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub(crate) struct Got {
    pub(crate) path: String,
    pub(crate) id: String,
    pub(crate) timestamp: String,
    pub(crate) signature: String,
    pub(crate) body: String,
}

#[derive(Default)]
struct Script {
    answers: HashMap<String, VecDeque<Answer>>,
    got: Vec<Got>,
}

/// A scripted receiver on 127.0.0.1.
#[derive(Clone)]
pub(crate) struct Receiver {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        let script = Arc::new(Mutex::new(Script::default()));
        let app = axum::Router::new()
            .route("/{path}", axum::routing::any(receive))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { addr, script }
    }

    pub(crate) fn on(&self, path: &str, answers: &[Answer]) -> String {
        self.script
            .lock()
            .unwrap()
            .answers
            .insert(path.to_owned(), answers.iter().cloned().collect());
        format!("http://{}/{path}", self.addr)
    }

    pub(crate) fn got(&self, path: &str) -> Vec<Got> {
        let script = self.script.lock().unwrap();
        script
            .got
            .iter()
            .filter(|g| g.path == path)
            .cloned()
            .collect()
    }

    /// Waits until `path` got `n` requests (at most 30 s).
    pub(crate) async fn wait_for(&self, path: &str, n: usize) -> Vec<Got> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.got(path);
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

async fn receive(
    State(script): State<Arc<Mutex<Script>>>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let answer = {
        let mut script = script.lock().unwrap();
        script.got.push(Got {
            path: path.clone(),
            id: header("webhook-id"),
            timestamp: header("webhook-timestamp"),
            signature: header("webhook-signature"),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let answers = script.answers.entry(path).or_default();
        if answers.len() > 1 {
            answers.pop_front()
        } else {
            answers.front().cloned()
        }
        .unwrap_or(Answer::Status(200))
    };
    match answer {
        Answer::Status(s) => {
            (StatusCode::from_u16(s).unwrap(), format!("status {s}")).into_response()
        }
        Answer::Redirect => {
            (StatusCode::FOUND, [("location", "/never-fetched")], "").into_response()
        }
        Answer::Slow(wait) => {
            tokio::time::sleep(wait).await;
            "late".into_response()
        }
        Answer::Big => "x".repeat(10 * 1024 * 1024).into_response(),
    }
}

pub(crate) struct Hooked {
    _dir: tempfile::TempDir,
    pub(crate) server: Server,
    pub(crate) base: String,
    /// The server's clock: the tests move it past retry delays.
    pub(crate) clock: Arc<OffsetClock>,
}

/// A server on `store` with an API-managed site, its publishable key for the relay, the
/// contract's first two retry delays (5 s and 5 min: 3 attempts), which the tests cross by
/// moving the server's clock, `http:` and the loopback allowed.
async fn hooked(store: &str, open: bool) -> Hooked {
    let first_two = Schedule::default().delays()[..2].to_vec();
    hooked_with(store, open, Some(first_two)).await
}

/// [`hooked`] with the retry delays `delays` (`None`: the contract's ladder, 8 attempts).
pub(crate) async fn hooked_with(store: &str, open: bool, delays: Option<Vec<Duration>>) -> Hooked {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 100_000, &[key(1)])
            .with(&format!("site_keys = [\"{}\"]", KeyHash::of_key(PK)))],
    );
    let options = ServeConfig {
        store: Some(store.to_owned()),
        cursor_secret: Some(vec![7; 32]),
        webhook_delays: delays,
        webhook_allow_http: open,
        webhook_allow_private: if open {
            vec!["127.0.0.0/8".parse().unwrap()]
        } else {
            Vec::new()
        },
        ..options()
    };
    let clock = Arc::new(OffsetClock::new());
    let server = start(&sites, options, clock.clone()).await;
    let base = format!("http://{}", server.api_addr());
    Hooked {
        _dir: dir,
        server,
        base,
        clock,
    }
}

pub(crate) async fn call(
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client()
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .bearer_auth(key(1));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub(crate) async fn register(base: &str, url: &str, types: &[&str]) -> (String, String) {
    let (status, body) = call(
        base,
        "POST",
        "/v1/webhook_endpoints",
        Some(json!({"url": url, "event_types": types, "description": "test"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let data = &body["data"];
    assert_eq!(data["status"], "enabled");
    (
        data["id"].as_str().unwrap().to_owned(),
        data["secret"].as_str().unwrap().to_owned(),
    )
}

pub(crate) async fn relay(base: &str, events: Value) {
    let response = client()
        .post(format!("{base}/v1/events"))
        .bearer_auth(PK)
        .json(&json!({ "events": events }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
}

pub(crate) fn verify(secret: &str, got: &Got) -> Result<(), String> {
    let secret = Secret::parse(secret).unwrap();
    let t: i64 = got.timestamp.parse().unwrap();
    python_verifies(&secret, &got.id, t, &got.signature, &got.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_are_signed_retried_disabled_and_never_redirected() {
    for store in TestStore::both() {
        let receiver = Receiver::start().await;
        let h = hooked(&store.url, true).await;
        let all = [
            "nudge.shown",
            "nudge.outcome",
            "session.converted",
            "config.published",
        ];
        let (_, ok_secret) = register(&h.base, &receiver.on("ok", &[]), &all).await;
        let (flaky, flaky_secret) = register(
            &h.base,
            &receiver.on("flaky", &[Answer::Status(500), Answer::Status(200)]),
            &["nudge.shown"],
        )
        .await;
        let (gone, _) = register(
            &h.base,
            &receiver.on("gone", &[Answer::Status(410)]),
            &["nudge.shown"],
        )
        .await;
        let (redirect, _) = register(
            &h.base,
            &receiver.on("redirect", &[Answer::Redirect]),
            &["nudge.shown"],
        )
        .await;
        let (big, _) = register(
            &h.base,
            &receiver.on("big", &[Answer::Big]),
            &["nudge.shown"],
        )
        .await;
        let (_, watcher_secret) = register(
            &h.base,
            &receiver.on("watcher", &[]),
            &["webhook_endpoint.disabled"],
        )
        .await;
        let (slow, _) = register(
            &h.base,
            &receiver.on("slow", &[Answer::Slow(Duration::from_secs(17))]),
            &["session.converted"],
        )
        .await;

        let now = now_ms();
        relay(
            &h.base,
            json!([
                {"message_id": "e1", "session_id": "sess_w", "type": "PAGE_VIEW", "occurred_at": format_ms(now - 5000), "url": "/products/a"},
                {"message_id": "e2", "session_id": "sess_w", "type": "NUDGE_SHOWN", "occurred_at": format_ms(now - 4000), "nudge_id": "nudg_w", "nudge_type": "toast", "rule_id": "r"},
                {"message_id": "e3", "session_id": "sess_w", "type": "NUDGE_OUTCOME", "occurred_at": format_ms(now - 3000), "nudge_id": "nudg_w", "outcome": "clicked"},
                {"message_id": "e4", "session_id": "sess_w", "type": "PURCHASE", "occurred_at": format_ms(now - 2000), "url": "/checkout/done"},
            ]),
        )
        .await;
        // A second purchase and a repeated NUDGE_SHOWN send nothing more.
        relay(
            &h.base,
            json!([
                {"message_id": "e5", "session_id": "sess_w", "type": "PURCHASE", "occurred_at": format_ms(now - 1000), "url": "/checkout/done"},
                {"message_id": "e6", "session_id": "sess_w", "type": "NUDGE_SHOWN", "occurred_at": format_ms(now - 4500), "nudge_id": "nudg_w", "nudge_type": "toast", "rule_id": "r"},
            ]),
        )
        .await;
        let (status, body) = call(
            &h.base,
            "POST",
            "/v1/config/versions",
            Some(json!({"config": serde_json::from_str::<Value>(STOREFRONT).unwrap(), "message": "first"})),
        )
        .await;
        assert!(status == 201 || status == 428, "{body}");

        // The subscribed endpoint: one message per change, in the read API's shapes.
        let ok = receiver.wait_for("ok", 3).await;
        let types: Vec<String> = ok
            .iter()
            .map(|g| {
                serde_json::from_str::<Value>(&g.body).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let mut sorted = types.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            ["nudge.outcome", "nudge.shown", "session.converted"],
            "{}",
            store.backend
        );
        for g in &ok {
            let body: Value = serde_json::from_str(&g.body).unwrap();
            assert_eq!(body["id"], g.id.as_str());
            match body["type"].as_str().unwrap() {
                "nudge.shown" => {
                    assert_eq!(body["data"]["id"], "nudg_w");
                    assert_eq!(body["data"]["type"], "toast");
                    // The nudge as the store has it after the batch (its outcome came in
                    // the same batch).
                    assert_eq!(body["data"]["outcome"], "clicked");
                }
                "nudge.outcome" => assert_eq!(body["data"]["outcome"], "clicked"),
                "session.converted" => {
                    assert_eq!(body["data"]["id"], "sess_w");
                    assert_eq!(body["data"]["converted"], true);
                }
                other => panic!("{other}"),
            }
            // The independent verifier accepts it, and refuses one altered byte.
            verify(&ok_secret, g).unwrap();
            let mut altered = g.clone();
            altered.body = altered
                .body
                .replacen("sess_w", "sess_x", 1)
                .replacen("nudg_w", "nudg_x", 1);
            assert!(verify(&ok_secret, &altered).is_err());
        }

        // Slow past 15 s: a failure, timed out. (Waited for first: the clock moves below,
        // and a jump past its claim's 20 s lease would make it due again while in flight.)
        let attempts = wait_attempts(&h.base, &slow, 1).await;
        assert!(attempts[0]["response_status"].is_null(), "{attempts:?}");
        assert!(
            attempts[0]["error"].as_str().unwrap().contains("timed out"),
            "{attempts:?}"
        );

        // 500 then 200: retried with the same webhook-id, 5 s later (+-20 %) on the server's
        // clock.
        wait_attempts(&h.base, &flaky, 1).await;
        h.clock.advance(Duration::from_secs(7));
        let flaky_got = receiver.wait_for("flaky", 2).await;
        assert_eq!(flaky_got.len(), 2);
        assert_eq!(flaky_got[0].id, flaky_got[1].id);
        for g in &flaky_got {
            verify(&flaky_secret, g).unwrap();
        }
        let attempts = wait_attempts(&h.base, &flaky, 2).await;
        assert_eq!(attempts[0]["response_status"], 200);
        assert_eq!(attempts[0]["attempt"], 2);
        assert_eq!(attempts[1]["response_status"], 500);
        assert_eq!(attempts[1]["response_body"], "status 500");
        assert!(attempts[1]["next_attempt_at"].is_string());

        // 410: disabled at once, nothing more sent; the watcher hears of it.
        let disabled = receiver.wait_for("watcher", 1).await;
        assert_eq!(disabled.len(), 1, "{}", store.backend);
        let body: Value = serde_json::from_str(&disabled[0].body).unwrap();
        assert_eq!(body["type"], "webhook_endpoint.disabled");
        assert_eq!(body["data"]["id"], gone.as_str());
        assert!(body["data"].get("secret").is_none());
        verify(&watcher_secret, &disabled[0]).unwrap();
        let (_, endpoint) = call(
            &h.base,
            "GET",
            &format!("/v1/webhook_endpoints/{gone}"),
            None,
        )
        .await;
        assert_eq!(endpoint["data"]["status"], "disabled");
        assert_eq!(receiver.got("gone").len(), 1);

        // 302: a failure each time (3 attempts: the second 5 s after the first, the third 5
        // min after it), the Location never fetched.
        receiver.wait_for("redirect", 2).await;
        wait_attempts(&h.base, &redirect, 2).await;
        h.clock.advance(Duration::from_secs(7 * 60));
        let redirects = receiver.wait_for("redirect", 3).await;
        assert_eq!(redirects.len(), 3);
        assert!(receiver.got("never-fetched").is_empty());
        let attempts = wait_attempts(&h.base, &redirect, 3).await;
        assert!(attempts.iter().all(|a| a["response_status"] == 302));
        assert!(attempts[0]["next_attempt_at"].is_null());
        // Recover: the failed message is sent again (attempt 1 again, the same webhook-id),
        // once the receiver answers 200; a `since` past 14 days is refused.
        receiver.on("redirect", &[Answer::Status(200)]);
        let since = format_ms(now - 60_000);
        let (status, body) = call(
            &h.base,
            "POST",
            &format!("/v1/webhook_endpoints/{redirect}/recover"),
            Some(json!({"since": since})),
        )
        .await;
        assert_eq!(status, 202, "{body}");
        assert_eq!(body["data"]["messages"], 1);
        let recovered = receiver.wait_for("redirect", 4).await;
        assert_eq!(recovered[3].id, redirects[0].id);
        let old = format_ms(now - 15 * 86_400_000);
        let (status, body) = call(
            &h.base,
            "POST",
            &format!("/v1/webhook_endpoints/{redirect}/recover"),
            Some(json!({"since": old})),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        assert!(body["message"].as_str().unwrap().contains("14 days"));

        // 10 MB: delivered; 4 KiB of it logged.
        let attempts = wait_attempts(&h.base, &big, 1).await;
        assert_eq!(attempts[0]["response_status"], 200);
        assert_eq!(attempts[0]["response_body"].as_str().unwrap().len(), 4096);

        h.server.shutdown().await;
    }
}

/// The attempts of `endpoint`, once it has at least `n` (at most 40 s).
pub(crate) async fn wait_attempts(base: &str, endpoint: &str, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let (status, body) = call(
            base,
            "GET",
            &format!("/v1/webhook_endpoints/{endpoint}/attempts"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let data = body["data"].as_array().unwrap().clone();
        if data.len() >= n || Instant::now() > deadline {
            assert!(data.len() >= n, "{n} attempts expected: {data:?}");
            return data;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_refuses_internal_addresses_before_any_connection() {
    let store = TestStore::sqlite();
    let h = hooked(&store.url, false).await;
    // A listener on the loopback: nothing may connect to it.
    let trap = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let port = trap.local_addr().unwrap().port();
    for (url, says) in [
        (format!("https://127.0.0.1:{port}/hook"), "loopback"),
        ("https://10.1.2.3/hook".to_owned(), "private"),
        ("https://192.168.0.10/hook".to_owned(), "private"),
        ("https://169.254.169.254/latest".to_owned(), "link-local"),
        ("https://100.64.0.1/hook".to_owned(), "CGNAT"),
        ("https://[fc00::1]/hook".to_owned(), "unique-local"),
        (
            format!("https://[::ffff:127.0.0.1]:{port}/hook"),
            "loopback",
        ),
        (format!("https://localhost:{port}/hook"), "loopback"),
        (format!("http://example.com:{port}/hook"), "http"),
        ("https://user:pw@example.com/hook".to_owned(), "password"),
    ] {
        let (status, body) = call(
            &h.base,
            "POST",
            "/v1/webhook_endpoints",
            Some(json!({"url": url, "event_types": ["nudge.shown"]})),
        )
        .await;
        assert_eq!(status, 400, "{url}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.to_lowercase().contains(&says.to_lowercase()),
            "{url}: {message}"
        );
    }
    assert!(
        trap.accept().is_err(),
        "something connected to the loopback"
    );
    // Unknown types and empty lists are named.
    let (status, body) = call(
        &h.base,
        "POST",
        "/v1/webhook_endpoints",
        Some(json!({"url": "https://example.com/hook", "event_types": ["nudge.clicked"]})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body["message"].as_str().unwrap().contains("nudge.clicked"));
    // A publishable key cannot manage endpoints.
    let response = client()
        .get(format!("{}/v1/webhook_endpoints", h.base))
        .bearer_auth(PK)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    h.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_signs_with_both_secrets_and_endpoints_are_managed() {
    for store in TestStore::both() {
        rotation_on(&store).await;
    }
}

async fn rotation_on(store: &TestStore) {
    let receiver = Receiver::start().await;
    let h = hooked(&store.url, true).await;
    let (id, old) = register(&h.base, &receiver.on("rot", &[]), &["nudge.shown"]).await;
    let (status, body) = call(
        &h.base,
        "POST",
        &format!("/v1/webhook_endpoints/{id}/rotate_secret"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let new = body["data"]["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    let (status, body) = call(
        &h.base,
        "POST",
        &format!("/v1/webhook_endpoints/{id}/test"),
        None,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["data"]["type"], "webhook.test");
    let got = receiver.wait_for("rot", 1).await;
    assert_eq!(got[0].signature.split(' ').count(), 2);
    verify(&new, &got[0]).unwrap();
    verify(&old, &got[0]).unwrap();
    // Resend: the same webhook-id again.
    let (status, _) = call(
        &h.base,
        "POST",
        &format!("/v1/webhook_messages/{}/resend", got[0].id),
        None,
    )
    .await;
    assert_eq!(status, 202);
    let again = receiver.wait_for("rot", 2).await;
    assert_eq!(again[1].id, got[0].id);
    // The list hides secrets; PATCH changes; DELETE removes.
    let (_, list) = call(&h.base, "GET", "/v1/webhook_endpoints?limit=1", None).await;
    assert_eq!(list["data"][0]["id"], id.as_str());
    assert!(list["data"][0].get("secret").is_none());
    let (status, body) = call(
        &h.base,
        "PATCH",
        &format!("/v1/webhook_endpoints/{id}"),
        Some(json!({"status": "disabled", "event_types": ["nudge.shown", "nudge.outcome"]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "disabled");
    assert_eq!(
        body["data"]["event_types"],
        json!(["nudge.shown", "nudge.outcome"])
    );
    let (status, _) = call(
        &h.base,
        "POST",
        &format!("/v1/webhook_endpoints/{id}/test"),
        None,
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = call(
        &h.base,
        "DELETE",
        &format!("/v1/webhook_endpoints/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call(&h.base, "GET", &format!("/v1/webhook_endpoints/{id}"), None).await;
    assert_eq!(status, 404);
    h.server.shutdown().await;
}

/// The editor's Webhooks view calls these routes cross-origin: a preflight for `PATCH` and
/// `DELETE` from a listed origin is allowed, and the answers carry the origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editors_origin_may_patch_and_delete_endpoints() {
    let store = TestStore::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let origin = "http://127.0.0.1:8000";
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 100_000, &[key(1)])
            .with(&format!("allowed_origins = [\"{origin}\"]"))],
    );
    let options = ServeConfig {
        store: Some(store.url.clone()),
        cursor_secret: Some(vec![7; 32]),
        webhook_allow_http: true,
        webhook_allow_private: vec!["127.0.0.0/8".parse().unwrap()],
        ..options()
    };
    let server = start(&sites, options, Arc::new(SystemClock::new())).await;
    let base = format!("http://{}", server.api_addr());
    let (id, _) = register(&base, "http://127.0.0.1:9/hook", &["nudge.shown"]).await;
    for method in ["PATCH", "DELETE"] {
        let r = client()
            .request(
                reqwest::Method::OPTIONS,
                format!("{base}/v1/webhook_endpoints/{id}"),
            )
            .header("Origin", origin)
            .header("Access-Control-Request-Method", method)
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 204, "{method}");
        assert_eq!(r.headers()["access-control-allow-origin"], origin);
        let allowed = r.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap();
        assert!(allowed.split(", ").any(|m| m == method), "{allowed}");
    }
    let r = client()
        .patch(format!("{base}/v1/webhook_endpoints/{id}"))
        .header("Origin", origin)
        .bearer_auth(key(1))
        .json(&json!({"status": "disabled"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["access-control-allow-origin"], origin);
    let r = client()
        .delete(format!("{base}/v1/webhook_endpoints/{id}"))
        .header("Origin", origin)
        .bearer_auth(key(1))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["access-control-allow-origin"], origin);
    server.shutdown().await;
}

/// The store of `test_store`, opened, and the test scope of site `site`.
async fn opened(test_store: &TestStore, site: &str) -> (Store, Scope) {
    let store = Store::open(&test_store.url).await.unwrap();
    let scope = Scope {
        site: site.to_owned(),
        mode: Mode::Test,
    };
    (store, scope)
}

/// An endpoint of `scope` for the store-level tests.
fn endpoint(id: &str, types: &[EventType]) -> Endpoint {
    Endpoint {
        id: id.to_owned(),
        url: "https://example.com/hook".to_owned(),
        event_types: types.to_vec(),
        description: None,
        status: Status::Enabled,
        secret: StoredSecret::from(Secret::generate().unwrap()),
        previous_secret: None,
        previous_secret_until_ms: None,
        failing_since_ms: None,
        created_at_ms: 0,
        updated_at_ms: 0,
    }
}

/// Writes `n` test messages made at `t0`, each with one delivery to endpoint `id` of `scope`.
async fn enqueue_tests(store: &Store, scope: &Scope, id: &str, n: usize, t0: i64) {
    for i in 0..n {
        let m = Message::new(EventType::Test, t0, json!({ "i": i })).unwrap();
        assert!(store.enqueue_webhook_to(scope, id, &m).await.unwrap());
    }
}

/// A 200 for `due` at `at_ms`.
fn delivered(due: Due, at_ms: i64) -> AttemptResult {
    AttemptResult {
        verdict: Verdict::Delivered,
        status: Some(HttpStatus(200)),
        ..failed(due, at_ms, None)
    }
}

fn failed(due: Due, at_ms: i64, next: Option<i64>) -> AttemptResult {
    AttemptResult {
        due,
        verdict: Verdict::Failed {
            next_attempt_at_ms: next,
        },
        attempted_at_ms: at_ms,
        duration_ms: 1,
        status: Some(HttpStatus(500)),
        error: None,
        body: String::new(),
    }
}

/// docs/contract/webhooks.md "Many instances" and "Delivery": at most 8 claims in flight per endpoint, a claim
/// taken once until its lease ends or its result is written, and the 5-day rule, which
/// disables the endpoint and tells the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_are_bounded_and_five_days_of_failures_disable() {
    for test_store in TestStore::both() {
        let (store, scope) = opened(&test_store, "s5").await;
        let watcher = endpoint("we_watch", &[EventType::EndpointDisabled]);
        let failing = endpoint("we_fail", &[EventType::NudgeShown]);
        for e in [&watcher, &failing] {
            assert!(store.create_webhook_endpoint(&scope, e, 20).await.unwrap());
        }
        let t0 = now_ms();
        enqueue_tests(&store, &scope, "we_fail", 20, t0).await;
        let lease = 20_000;
        let first = store.claim_webhook_deliveries(t0, lease, 64).await.unwrap();
        assert_eq!(first.len(), 8, "{}", test_store.backend);
        assert!(
            store
                .claim_webhook_deliveries(t0, lease, 64)
                .await
                .unwrap()
                .is_empty()
        );
        let mut first = first.into_iter();
        let one = first.next().unwrap();
        assert_eq!(one.attempt, 1);
        // A result frees a place; a lease that ended frees them all.
        store
            .finish_webhook_attempts(&[failed(one, t0, Some(t0 + 1))], DAY_MS * 5)
            .await
            .unwrap();
        assert_eq!(
            store
                .claim_webhook_deliveries(t0 + 1, lease, 64)
                .await
                .unwrap()
                .len(),
            1
        );
        let after_lease = store
            .claim_webhook_deliveries(t0 + lease + 1, lease, 64)
            .await
            .unwrap();
        assert_eq!(after_lease.len(), 8);
        // Failures for 5 days: disabled at the attempt that passes it, and the watcher is told.
        let mut after_lease = after_lease.into_iter();
        let a = after_lease.next().unwrap();
        assert!(
            store
                .finish_webhook_attempts(&[failed(a, t0 + DAY_MS, Some(t0 + DAY_MS))], DAY_MS * 5)
                .await
                .unwrap()
                .is_empty()
        );
        let b = after_lease.next().unwrap();
        assert_eq!(
            store
                .finish_webhook_attempts(
                    &[failed(b, t0 + DAY_MS * 5, Some(t0 + DAY_MS * 5))],
                    DAY_MS * 5
                )
                .await
                .unwrap(),
            ["we_fail"]
        );
        let e = store
            .webhook_endpoint(&scope, "we_fail")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(e.status, Status::Disabled);
        let told = store
            .claim_webhook_deliveries(t0 + DAY_MS * 6, lease, 64)
            .await
            .unwrap();
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].endpoint_id, "we_watch");
        assert_eq!(told[0].event_type, "webhook_endpoint.disabled");
        let body: Value = serde_json::from_str(&told[0].body).unwrap();
        assert_eq!(body["data"]["id"], "we_fail");
        assert_eq!(body["data"]["status"], "disabled");
    }
}

/// docs/contract/webhooks.md "Delivery": a batch of results (the worker's finisher writes them together) ends
/// only the claims still held, even when one delivery's stale and current claims are in the
/// same batch; every attempt is logged; the endpoint's failures count in the results' order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_results_ends_only_the_claims_still_held() {
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let (store, scope) = opened(&test_store, "s6").await;
        let e = endpoint("we_mix", &[EventType::NudgeShown]);
        assert!(store.create_webhook_endpoint(&scope, &e, 20).await.unwrap());
        let t0 = now_ms();
        enqueue_tests(&store, &scope, "we_mix", 3, t0).await;
        let lease = 1000;
        let by_message = |mut dues: Vec<Due>| {
            dues.sort_by(|a, b| a.message_id.cmp(&b.message_id));
            dues
        };
        let stale = by_message(store.claim_webhook_deliveries(t0, lease, 64).await.unwrap());
        let current = by_message(
            store
                .claim_webhook_deliveries(t0 + 2000, lease, 64)
                .await
                .unwrap(),
        );
        assert_eq!((stale.len(), current.len()), (3, 3), "{backend}");
        let batch = [
            delivered(stale[0].clone(), t0 + 2100),
            failed(current[0].clone(), t0 + 2100, Some(t0 + 5000)),
            delivered(current[1].clone(), t0 + 2100),
            delivered(stale[2].clone(), t0 + 2100),
        ];
        assert!(
            store
                .finish_webhook_attempts(&batch, DAY_MS * 5)
                .await
                .unwrap()
                .is_empty()
        );
        // Message 0 is due again at t0 + 5000 (its second attempt), message 1 succeeded, and
        // message 2 is still claimed by `current[2]` until its lease ends (the stale result
        // did not end it).
        assert!(
            store
                .claim_webhook_deliveries(t0 + 2500, lease, 64)
                .await
                .unwrap()
                .is_empty(),
            "{backend}"
        );
        let after_lease = store
            .claim_webhook_deliveries(t0 + 3500, lease, 64)
            .await
            .unwrap();
        let ids: Vec<(&str, i64)> = after_lease
            .iter()
            .map(|d| (d.message_id.as_str(), d.attempt))
            .collect();
        assert_eq!(ids, [(current[2].message_id.as_str(), 1)], "{backend}");
        // At t0 + 5000 message 0 is due (a second attempt), and message 2's new claim has
        // ended too.
        let retried = by_message(
            store
                .claim_webhook_deliveries(t0 + 5000, lease, 64)
                .await
                .unwrap(),
        );
        let ids: Vec<(&str, i64)> = retried
            .iter()
            .map(|d| (d.message_id.as_str(), d.attempt))
            .collect();
        let expected = [
            (current[0].message_id.as_str(), 2),
            (current[2].message_id.as_str(), 1),
        ];
        assert_eq!(ids, expected, "{backend}");
        let log = store
            .webhook_attempts(&scope, "we_mix", None, 10)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(log.len(), 4, "{backend}: every result is logged");
        let e = store
            .webhook_endpoint(&scope, "we_mix")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            e.failing_since_ms, None,
            "{backend}: the success after the failure cleared it"
        );
    }
}

/// Adds the messages of `dues` to `claimed`, each new (no message claimed twice).
fn claim_once(claimed: &mut std::collections::HashSet<String>, dues: &[Due], backend: &str) {
    for due in dues {
        assert!(
            claimed.insert(due.message_id.clone()),
            "{backend}: {} claimed twice",
            due.message_id
        );
    }
}

/// The worker's visits (results written, next deliveries claimed) while the relay writes
/// NUDGE_SHOWN: each of 24 rounds sends 16 batches and one visit at once. Every batch stored,
/// every result logged once, no visit given more than eight or a delivery in flight, and at the
/// end every message made claimed exactly once; on both stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workers_visits_beside_the_relay_claim_every_message_once() {
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let (store, scope) = opened(&test_store, "s8").await;
        assert!(
            store
                .create_webhook_endpoint(&scope, &endpoint("we_ride", &[EventType::NudgeShown]), 20)
                .await
                .unwrap()
        );
        let t0 = now_ms();
        let lease = 60_000;
        let mut in_flight = store.claim_webhook_deliveries(t0, lease, 64).await.unwrap();
        assert!(in_flight.is_empty(), "{backend}");
        let (mut made, mut claimed) = (0usize, std::collections::HashSet::new());
        for round in 0..24 {
            let batches: Vec<_> = (0..16)
                .map(|b| {
                    let store = store.clone();
                    let scope = scope.clone();
                    tokio::spawn(async move {
                        let events: Vec<_> = (0..3)
                            .map(|i| {
                                let id = format!("r{round}b{b}e{i}");
                                crate::store::shown_by(
                                    &id,
                                    &format!("sess_{id}"),
                                    t0,
                                    &format!("nudg_{id}"),
                                    "r1",
                                )
                            })
                            .collect();
                        store.insert_events(&scope, &events, t0).await.unwrap()
                    })
                })
                .collect();
            let results: Vec<AttemptResult> = in_flight
                .drain(..)
                .map(|due| delivered(due, t0 + 10))
                .collect();
            let visit = store
                .finish_webhook_attempts_and_claim(&results, DAY_MS * 5, t0 + 20, lease, 8)
                .await;
            for batch in batches {
                assert_eq!(batch.await.unwrap().accepted, 3, "{backend}");
                made += 3;
            }
            let (disabled, claim) = visit.unwrap();
            assert!(disabled.is_empty(), "{backend}");
            in_flight = claim;
            assert!(in_flight.len() <= 8, "{backend}: {}", in_flight.len());
            claim_once(&mut claimed, &in_flight, backend);
        }
        // The rest of the backlog, in claims of at most eight, each a new message.
        loop {
            let results: Vec<AttemptResult> = in_flight
                .drain(..)
                .map(|due| delivered(due, t0 + 30))
                .collect();
            let (_, claim) = store
                .finish_webhook_attempts_and_claim(&results, DAY_MS * 5, t0 + 40, lease, 8)
                .await
                .unwrap();
            in_flight = claim;
            if in_flight.is_empty() {
                break;
            }
            claim_once(&mut claimed, &in_flight, backend);
        }
        assert_eq!(claimed.len(), made, "{backend}");
        let attempts = store
            .webhook_attempts(&scope, "we_ride", None, 10_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(attempts.len(), made, "{backend}");
    }
}

/// docs/contract/webhooks.md "Many instances": two instances on one PostgreSQL deliver each message to the
/// endpoint once (every attempt answered 200: one attempt each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgres_deliver_each_message_once() {
    let store = TestStore::postgres();
    let receiver = Receiver::start().await;
    let a = hooked(&store.url, true).await;
    let b = hooked(&store.url, true).await;
    register(&a.base, &receiver.on("both", &[]), &["nudge.shown"]).await;
    let now = now_ms();
    let n = 200;
    for batch in 0..4 {
        let events: Vec<Value> = (0..n / 4)
            .map(|i| {
                let k = batch * 1000 + i;
                json!({"message_id": format!("m{k}"), "session_id": format!("sess_two{k}"), "type": "NUDGE_SHOWN", "occurred_at": format_ms(now - 1000), "nudge_id": format!("nudg_two{k}"), "nudge_type": "toast", "rule_id": "r"})
            })
            .collect();
        relay(
            if batch % 2 == 0 { &a.base } else { &b.base },
            json!(events),
        )
        .await;
    }
    let got = receiver.wait_for("both", n).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let got_after = receiver.got("both");
    let mut ids: Vec<&str> = got_after.iter().map(|g| g.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(got.len(), n);
    assert_eq!(ids.len(), n, "distinct messages");
    assert_eq!(got_after.len(), n, "an attempt was taken twice");
    a.server.shutdown().await;
    b.server.shutdown().await;
}

/// docs/contract/webhooks.md "Delivery": a message committed is delivered though the server is killed (kill -9)
/// with its attempt in flight: after a restart, once the claim's lease ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_before_delivery_delivers_after_a_restart() {
    for store in TestStore::both() {
        let url = if store.backend == "sqlite" {
            None
        } else {
            Some(store.url.clone())
        };
        kill_9_on(url).await;
    }
}

async fn kill_9_on(store: Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start().await;
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 100_000, &[key(1)])
            .with(&format!("site_keys = [\"{}\"]", KeyHash::of_key(PK)))],
    );
    let store_url =
        store.unwrap_or_else(|| format!("sqlite:{}", dir.path().join("store.db").display()));
    let args = |port: u16| -> Vec<String> {
        [
            "--sites",
            &sites.display().to_string(),
            "--store",
            &store_url,
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--admin-listen",
            "127.0.0.1:0",
            "--webhook-allow-http",
            "--webhook-allow-private",
            "127.0.0.0/8",
            "--webhook-schedule",
            "100ms",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let argv = args(free_port());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut first = Binary::start(&argv, &[], &dir.path().join("stderr1.txt"));
    first.wait_ready().await;
    let base = format!("http://{}", first.api);
    // The first attempt hangs (in flight when the server dies); the next is answered 200.
    let url = receiver.on(
        "k9",
        &[Answer::Slow(Duration::from_secs(60)), Answer::Status(200)],
    );
    register(&base, &url, &["nudge.shown"]).await;
    let now = now_ms();
    relay(
        &base,
        json!([{"message_id": "k1", "session_id": "sess_k9", "type": "NUDGE_SHOWN", "occurred_at": format_ms(now - 1000), "nudge_id": "nudg_k9", "nudge_type": "toast", "rule_id": "r"}]),
    )
    .await;
    let in_flight = receiver.wait_for("k9", 1).await;
    assert_eq!(in_flight.len(), 1);
    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();
    let argv = args(free_port());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let second = Binary::start(&argv, &[], &dir.path().join("stderr2.txt"));
    second.wait_ready().await;
    let got = receiver.wait_for("k9", 2).await;
    assert_eq!(got.len(), 2, "the message did not arrive after the restart");
    assert_eq!(got[1].id, in_flight[0].id);
    let body: Value = serde_json::from_str(&got[1].body).unwrap();
    assert_eq!(body["data"]["id"], "nudg_k9");
}

/// docs/contract/webhooks.md "Many instances": a claim takes at most 8 of an endpoint's due deliveries however
/// large its backlog, also when the planner's statistics predate it (PostgreSQL once planned
/// the claim's `IN (SELECT ... LIMIT 8 FOR UPDATE SKIP LOCKED)` as a join that ran the subquery
/// again and again, and claimed a new endpoint's backlog whole).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_takes_at_most_eight_of_a_large_backlog() {
    for test_store in TestStore::both() {
        let (store, scope) = opened(&test_store, "s9").await;
        let t0 = now_ms();
        let lease = 20_000;
        for (n, id) in [(1000, "we_old"), (1000, "we_new")] {
            let target = endpoint(id, &[EventType::NudgeShown]);
            assert!(
                store
                    .create_webhook_endpoint(&scope, &target, 20)
                    .await
                    .unwrap()
            );
            enqueue_tests(&store, &scope, id, n, t0).await;
            if id == "we_old" {
                // Statistics of the old endpoint's deliveries only, all delivered.
                let sql = [
                    "UPDATE webhook_deliveries SET state = 'succeeded', next_attempt_at = NULL",
                    "ANALYZE webhook_deliveries",
                ];
                crate::store::raw_sql(&test_store, None, &sql.map(str::to_owned)).await;
            }
        }
        let claimed = store.claim_webhook_deliveries(t0, lease, 64).await.unwrap();
        assert_eq!(claimed.len(), 8, "{}", test_store.backend);
        let again = store.claim_webhook_deliveries(t0, lease, 64).await.unwrap();
        assert!(again.is_empty(), "{}: {}", test_store.backend, again.len());
    }
}

/// The writer is shared while batches keep coming (SQLite's writing task holds its connection
/// from job to job, `group.rs`): with eight tasks sending batches back to back, each endpoint
/// created (a write of the API, on the writer's pool) and each claim of the worker answers,
/// and the batches go on being stored; on both stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_writes_get_the_writer_while_batches_keep_coming() {
    use std::sync::atomic::{AtomicBool, Ordering};
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let (store, scope) = opened(&test_store, "s9").await;
        let t0 = now_ms();
        let stop = Arc::new(AtomicBool::new(false));
        let senders: Vec<_> = (0..8)
            .map(|w| {
                let (store, scope, stop) = (store.clone(), scope.clone(), Arc::clone(&stop));
                tokio::spawn(async move {
                    let mut stored = 0usize;
                    while !stop.load(Ordering::Relaxed) {
                        let id = format!("w{w}n{stored}");
                        let events = [crate::store::page_view(
                            &id,
                            &format!("sess_{id}"),
                            t0,
                            "/p",
                        )];
                        assert_eq!(
                            store
                                .insert_events(&scope, &events, t0)
                                .await
                                .unwrap()
                                .accepted,
                            1
                        );
                        stored += 1;
                    }
                    stored
                })
            })
            .collect();
        for i in 0..5 {
            let id = format!("we_beside{i}");
            let created = tokio::time::timeout(
                Duration::from_secs(10),
                store.create_webhook_endpoint(&scope, &endpoint(&id, &[EventType::NudgeShown]), 20),
            )
            .await
            .unwrap_or_else(|_| panic!("{backend}: creating {id} waited 10 s for the writer"));
            assert!(created.unwrap(), "{backend}");
            let claimed = tokio::time::timeout(
                Duration::from_secs(10),
                store.claim_webhook_deliveries(now_ms(), 60_000, 8),
            )
            .await
            .unwrap_or_else(|_| panic!("{backend}: a claim waited 10 s for the writer"));
            assert!(claimed.unwrap().is_empty(), "{backend}: nothing is due");
            let listed = store.webhook_endpoints(&scope, None, 100).await.unwrap();
            assert_eq!(listed.len(), i + 1, "{backend}");
        }
        stop.store(true, Ordering::Relaxed);
        let mut stored = 0;
        for sender in senders {
            stored += sender.await.unwrap();
        }
        assert!(
            stored >= 8,
            "{backend}: {stored} batches stored beside the other writes"
        );
    }
}
