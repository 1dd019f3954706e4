//! Published configs over real HTTP (docs/contract/versions.md): publish, preconditions, scenarios as a gate,
//! history and restore, file-managed sites, modes, propagation between two instances on one
//! PostgreSQL with no preview answered by a mix of versions, and CORS (docs/contract/backtest.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nudge_rules_server::clock::SystemClock;
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::runtime::Server;
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;

/// Sites: `shop` (API-managed; test keys 1 and 4, live key 1, an allowed origin), `file` (a
/// config file; test key 2).
fn sites(dir: &std::path::Path) -> std::path::PathBuf {
    write_sites(
        dir,
        &[
            TestSite::api_managed("shop", 100_000, &[key(1), live_key(1), key(4)])
                .with("allowed_origins = [\"https://editor.example.com\"]"),
            TestSite::new("file", STOREFRONT, 100_000, &[key(2)]),
        ],
    )
}

struct Call {
    status: u16,
    body: Value,
    headers: reqwest::header::HeaderMap,
}

async fn call(
    method: &str,
    url: &str,
    key: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Call {
    let mut request = client()
        .request(method.parse().unwrap(), url)
        .bearer_auth(key);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status} {text:?}: {e}"))
    };
    Call {
        status,
        body,
        headers,
    }
}

fn storefront() -> Value {
    serde_json::from_str(STOREFRONT).unwrap()
}

fn without(rule_id: &str) -> Value {
    let mut config = storefront();
    config["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["id"] != rule_id);
    config
}

/// The preview of a visitor whom `sizing-help` nudges: its version header and nudge type.
async fn preview_version(base: &str, key: &str) -> (String, Option<String>) {
    let c = call(
        "POST",
        &format!("{base}/v1/nudges/preview"),
        key,
        Some(json!({"session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000}})),
        &[],
    )
    .await;
    assert_eq!(c.status, 200, "{}", c.body);
    let version = c.headers["nudge-config-version"]
        .to_str()
        .unwrap()
        .to_owned();
    // `rule "sizing-help" fired: ...`
    let rule = c.body["data"]["nudge"]["reason"]
        .as_str()
        .and_then(|r| r.split('"').nth(1))
        .map(str::to_owned);
    (version, rule)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_history_restore_and_every_refusal() {
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let dir = tempfile::tempdir().unwrap();
        let server = start_with_store(&sites(dir.path()), &test_store.url).await;
        let base = format!("http://{}", server.api_addr());
        let config_url = format!("{base}/v1/config");
        let versions = format!("{base}/v1/config/versions");

        // Before the first version: 404, and previews answer from no rules, version 0.
        let c = call("GET", &config_url, &key(1), None, &[]).await;
        assert_eq!(c.status, 404, "{backend}: {}", c.body);
        assert_eq!(
            preview_version(&base, &key(1)).await,
            ("0".to_owned(), None)
        );

        // Preconditions.
        let first = json!({"config": storefront(), "message": "first"});
        let c = call("POST", &versions, &key(1), Some(first.clone()), &[]).await;
        assert_eq!(
            (c.status, c.body["error"].as_str()),
            (428, Some("PreconditionRequired"))
        );
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(first.clone()),
            &[("If-Match", "\"v1\"")],
        )
        .await;
        assert_eq!(c.status, 412, "{backend}: {}", c.body);
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(first.clone()),
            &[("If-Match", "v1")],
        )
        .await;
        assert_eq!(c.status, 400, "{backend}: {}", c.body);
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(first.clone()),
            &[("If-None-Match", "*")],
        )
        .await;
        assert_eq!(c.status, 201, "{backend}: {}", c.body);
        assert_eq!(c.headers["etag"], "\"v1\"");
        assert_eq!(c.headers["location"], "/v1/config/versions/1");
        assert_eq!(c.body["data"]["version"], 1);
        let published_by = c.body["data"]["published_by"].as_str().unwrap().to_owned();
        assert_eq!(published_by.len(), 8);
        assert!(published_by.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!c.body.to_string().contains(&key(1)));
        // The publishing instance serves it at once.
        assert_eq!(
            preview_version(&base, &key(1)).await,
            ("1".to_owned(), Some("sizing-help".to_owned()))
        );
        let published_at = c.body["data"]["published_at"].as_str().unwrap().to_owned();
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(first.clone()),
            &[("If-None-Match", "*")],
        )
        .await;
        assert_eq!(c.status, 412, "{backend}: {}", c.body);
        // The 412 names the current version, who published it (here this very key) and when.
        let message = c.body["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                "the current version is v1 (published by {published_by}, this key, at {published_at})"
            )) && message.contains("If-Match: \"v1\"")
                && !message.contains("someone else"),
            "{backend}: {message}"
        );

        // GET /v1/config.
        let c = call("GET", &config_url, &key(1), None, &[]).await;
        assert_eq!(c.status, 200);
        assert_eq!(c.headers["etag"], "\"v1\"");
        assert_eq!(c.body["data"]["managed_by"], "api");
        assert_eq!(c.body["data"]["config"], storefront());
        assert_eq!(c.body["data"]["message"], "first");

        // Invalid config: 400 with every diagnostic; nothing published.
        let mut bad = storefront();
        bad["rules"][0]["when"]["min_intent_score"] = json!(500);
        bad["quiet_zone"] = json!([]);
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": bad})),
            &[("If-Match", "\"v1\"")],
        )
        .await;
        assert_eq!(c.status, 400, "{backend}: {}", c.body);
        assert_eq!(c.body["error"], "InvalidConfig");
        assert_eq!(
            c.body["diagnostics"].as_array().unwrap().len(),
            2,
            "{}",
            c.body
        );

        // Scenarios as a gate: a failing scenario publishes nothing.
        let scenarios = json!({"scenarios": [
            {"name": "stylist", "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000}, "expect": {"rule": "sizing-help"}},
            {"name": "checkout quiet", "session_state": {"intent_score": 95, "page_url": "/checkout/pay", "idle_ms": 60000}, "expect": {"quiet_zone": true}}
        ]});
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": without("sizing-help"), "scenarios": scenarios})),
            &[("If-Match", "\"v1\"")],
        )
        .await;
        assert_eq!(c.status, 422, "{backend}: {}", c.body);
        assert_eq!(c.body["error"], "ScenariosFailed");
        let message = c.body["message"].as_str().unwrap();
        assert!(
            message.contains("FAIL stylist")
                && message.contains("expected: rule \"sizing-help\" fires"),
            "{message}"
        );
        assert_eq!(c.body["failures"].as_array().unwrap().len(), 1);
        let c = call("GET", &config_url, &key(1), None, &[]).await;
        assert_eq!(
            c.body["data"]["version"], 1,
            "{backend}: a failed gate changed the config"
        );
        assert_eq!(preview_version(&base, &key(1)).await.0, "1");

        // Passing scenarios publish.
        let mut edited = storefront();
        edited["rules"][1]["nudge"]["message"] = json!("Ask a stylist about the fit.");
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": edited, "scenarios": scenarios, "message": "new wording"})),
            &[("If-Match", "\"v1\"")],
        )
        .await;
        assert_eq!(c.status, 201, "{backend}: {}", c.body);
        assert_eq!(c.body["data"]["version"], 2);
        let v2_at = c.body["data"]["published_at"].as_str().unwrap().to_owned();
        // A stale If-Match: the current version, by whom and when, and what to send.
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": storefront()})),
            &[("If-Match", "\"v1\"")],
        )
        .await;
        assert_eq!(c.status, 412, "{backend}: {}", c.body);
        let message = c.body["message"].as_str().unwrap();
        assert!(
            message.starts_with("v1 is not the latest version of ")
                && message.contains(&format!(
                    "the current version is v2 (published by {published_by}, this key, at {v2_at})"
                ))
                && message.contains("send If-Match: \"v2\"")
                && !message.contains("someone else"),
            "{backend}: {message}"
        );
        // Published by another key: named by its hash prefix, without "this key".
        let other_key = key(4);
        let c = call(
            "POST",
            &versions,
            &other_key,
            Some(json!({"config": storefront()})),
            &[("If-Match", "\"v1\"")],
        )
        .await;
        assert_eq!(c.status, 412, "{backend}: {}", c.body);
        let message = c.body["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                "the current version is v2 (published by {published_by} at {v2_at})"
            )),
            "{backend}: {message}"
        );

        // Other refusals.
        let long = "x".repeat(501);
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": storefront(), "message": long})),
            &[("If-Match", "\"v2\"")],
        )
        .await;
        assert_eq!(c.status, 400);
        assert!(c.body["message"].as_str().unwrap().contains("501"));
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": storefront(), "restores": 9})),
            &[("If-Match", "\"v2\"")],
        )
        .await;
        assert_eq!(c.status, 400, "{}", c.body);
        let c = call(
            "POST",
            &versions,
            &key(2),
            Some(json!({"config": storefront()})),
            &[("If-None-Match", "*")],
        )
        .await;
        assert_eq!(
            (c.status, c.body["error"].as_str()),
            (409, Some("ConfigManagedByFile"))
        );

        // Restore v1 as v3.
        let v1 = call("GET", &format!("{versions}/1"), &key(1), None, &[]).await;
        assert_eq!(v1.status, 200);
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": v1.body["data"]["config"], "restores": 1, "message": "back to v1"})),
            &[("If-Match", "\"v2\"")],
        )
        .await;
        assert_eq!(c.status, 201, "{}", c.body);
        assert_eq!(c.body["data"]["restores"], 1);
        assert_eq!(
            c.body["data"]["sha256"], v1.body["data"]["sha256"],
            "{backend}: the same text"
        );

        // History: newest first, paged, without bodies.
        let page = call("GET", &format!("{versions}?limit=2"), &key(1), None, &[]).await;
        assert_eq!(page.status, 200);
        let listed: Vec<i64> = page.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["version"].as_i64().unwrap())
            .collect();
        assert_eq!(listed, [3, 2]);
        assert!(page.body["data"][0].get("config").is_none());
        let cursor = page.body["next_cursor"].as_str().unwrap();
        let rest = call(
            "GET",
            &format!("{versions}?limit=2&cursor={cursor}"),
            &key(1),
            None,
            &[],
        )
        .await;
        assert_eq!(rest.body["data"][0]["version"], 1);
        assert_eq!(rest.body["has_more"], false);
        for bad in ["0", "01", "-1", "x", "4"] {
            let c = call("GET", &format!("{versions}/{bad}"), &key(1), None, &[]).await;
            assert_eq!(c.status, 404, "{bad}");
        }

        // Modes: the live key has its own history, still empty, and serves version 0.
        let c = call("GET", &config_url, &live_key(1), None, &[]).await;
        assert_eq!(c.status, 404);
        assert_eq!(
            preview_version(&base, &live_key(1)).await,
            ("0".to_owned(), None)
        );
        let c = call("GET", &versions, &live_key(1), None, &[]).await;
        assert_eq!(c.body["data"], json!([]));

        // A file-managed site: its file, no version, the SHA-256 prefix on previews.
        let c = call("GET", &config_url, &key(2), None, &[]).await;
        assert_eq!(c.status, 200);
        assert_eq!(c.body["data"]["managed_by"], "file");
        assert!(c.body["data"]["version"].is_null());
        let sha = c.body["data"]["sha256"].as_str().unwrap();
        assert_eq!(preview_version(&base, &key(2)).await.0, sha[..12]);
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_editors_publish_from_the_same_version_one_wins() {
    for test_store in TestStore::both() {
        let dir = tempfile::tempdir().unwrap();
        let server = start_with_store(&sites(dir.path()), &test_store.url).await;
        let versions = format!("http://{}/v1/config/versions", server.api_addr());
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": storefront()})),
            &[("If-None-Match", "*")],
        )
        .await;
        assert_eq!(c.status, 201);
        let mut tasks = Vec::new();
        for i in 0..8 {
            let versions = versions.clone();
            tasks.push(tokio::spawn(async move {
                let mut config = storefront();
                config["rules"][0]["nudge"]["message"] = json!(format!("editor {i}"));
                let c = call(
                    "POST",
                    &versions,
                    &key(1),
                    Some(json!({"config": config, "message": format!("editor {i}")})),
                    &[("If-Match", "\"v1\"")],
                )
                .await;
                (c.status, c.body)
            }));
        }
        let mut statuses = Vec::new();
        let mut winner = None;
        for task in tasks {
            let (status, body) = task.await.unwrap();
            if status == 201 {
                winner = Some(body["data"]["message"].clone());
            } else {
                let message = body["message"].as_str().unwrap();
                assert!(
                    message.contains("the current version is v2 (published by ")
                        && message.contains("this key")
                        && message.contains("If-Match: \"v2\""),
                    "{body}"
                );
            }
            statuses.push(status);
        }
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [201, 412, 412, 412, 412, 412, 412, 412],
            "{}",
            test_store.backend
        );
        let latest = call(
            "GET",
            &format!("http://{}/v1/config", server.api_addr()),
            &key(1),
            None,
            &[],
        )
        .await;
        assert_eq!(latest.body["data"]["version"], 2);
        assert_eq!(Some(latest.body["data"]["message"].clone()), winner);
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_published_through_one_instance_is_served_by_another_within_2_s_never_mixed() {
    let test_store = TestStore::postgres();
    let dir = tempfile::tempdir().unwrap();
    let sites = sites(dir.path());
    // The default poll interval, not the tests' fast one.
    let options = ServeConfig {
        store: Some(test_store.url.clone()),
        cursor_secret: Some(vec![42; 32]),
        reload_interval: Duration::from_millis(1000),
        ..options()
    };
    let a = start(&sites, options.clone(), Arc::new(SystemClock::new())).await;
    let b: Server = start(&sites, options, Arc::new(SystemClock::new())).await;
    let (base_a, base_b) = (
        format!("http://{}", a.api_addr()),
        format!("http://{}", b.api_addr()),
    );
    let versions = format!("{base_a}/v1/config/versions");
    let c = call(
        "POST",
        &versions,
        &key(1),
        Some(json!({"config": storefront()})),
        &[("If-None-Match", "*")],
    )
    .await;
    assert_eq!(c.status, 201);
    let start_wait = Instant::now();
    while preview_version(&base_b, &key(1)).await.0 != "1" {
        assert!(
            start_wait.elapsed() < Duration::from_secs(2),
            "v1 did not reach instance b"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Previews hammer instance b while versions alternate: each answer is wholly one version.
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let mut readers = Vec::new();
    for _ in 0..4 {
        let (stop, answered, base_b) = (stop.clone(), answered.clone(), base_b.clone());
        readers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let (version, rule) = preview_version(&base_b, &key(1)).await;
                let n: i64 = version.parse().unwrap();
                // Odd versions have sizing-help, even ones do not.
                if n % 2 == 1 {
                    assert_eq!(rule.as_deref(), Some("sizing-help"), "version {version}");
                } else {
                    assert_ne!(rule.as_deref(), Some("sizing-help"), "version {version}");
                }
                answered.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for version in 2..=5 {
        let config = if version % 2 == 0 {
            without("sizing-help")
        } else {
            storefront()
        };
        let previous = format!("\"v{}\"", version - 1);
        let c = call(
            "POST",
            &versions,
            &key(1),
            Some(json!({"config": config})),
            &[("If-Match", &previous)],
        )
        .await;
        assert_eq!(c.status, 201, "{}", c.body);
        let published = Instant::now();
        while preview_version(&base_b, &key(1)).await.0 != version.to_string() {
            assert!(
                published.elapsed() < Duration::from_secs(2),
                "v{version} did not reach instance b within 2 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.unwrap();
    }
    assert!(answered.load(Ordering::Relaxed) > 20);
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_answers_the_sites_origins_and_no_other() {
    let test_store = TestStore::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let server = start_with_store(&sites(dir.path()), &test_store.url).await;
    let base = format!("http://{}", server.api_addr());
    let preflight = |origin: &'static str| {
        client()
            .request(
                reqwest::Method::OPTIONS,
                format!("{base}/v1/config/versions"),
            )
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type, if-match",
            )
            .send()
    };
    let ok = preflight("https://editor.example.com").await.unwrap();
    assert_eq!(ok.status(), 204);
    assert_eq!(
        ok.headers()["access-control-allow-origin"],
        "https://editor.example.com"
    );
    assert!(
        ok.headers()["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .contains("If-Match")
    );
    let refused = preflight("https://evil.example.com").await.unwrap();
    assert!(
        refused
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );

    let get = |origin: &'static str, key: String| {
        client()
            .get(format!("{base}/v1/config/versions"))
            .header("Origin", origin)
            .bearer_auth(key)
            .send()
    };
    let r = get("https://editor.example.com", key(1)).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://editor.example.com"
    );
    assert!(
        r.headers()["access-control-expose-headers"]
            .to_str()
            .unwrap()
            .contains("ETag")
    );
    // Another origin, or the origin of another site's key: no CORS headers.
    let r = get("https://evil.example.com", key(1)).await.unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());
    let r = get("https://editor.example.com", key(2)).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("access-control-allow-origin").is_none());
    // A refused key from a listed origin: readable, so the editor can say "key refused".
    let r = get("https://editor.example.com", key(9)).await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://editor.example.com"
    );
    server.shutdown().await;
}
