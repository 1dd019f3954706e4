//! Every status of docs/contract/server.md over real HTTP, with its headers and body; the rate limit's exactness
//! and its headers with an injectable clock.

use std::sync::Arc;
use std::time::Duration;

use nudge_rules::Engine;
use nudge_rules_server::clock::{ManualClock, SystemClock};
use serde_json::Value;

use crate::common::*;

const RATE_HEADERS: [&str; 5] = [
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "ratelimit-policy",
    "ratelimit",
];

async fn json_body(response: reqwest::Response) -> Value {
    assert_eq!(header(&response, "content-type"), "application/json");
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

fn assert_rate_headers(response: &reqwest::Response, limit: u64, remaining: u64) {
    for name in RATE_HEADERS {
        assert!(
            response.headers().contains_key(name),
            "{name} missing on {}",
            response.status()
        );
    }
    assert_eq!(header_u64(response, "x-ratelimit-limit"), limit);
    assert_eq!(header_u64(response, "x-ratelimit-remaining"), remaining);
    assert_eq!(
        header(response, "ratelimit-policy"),
        format!("\"per-key\";q={limit};w=60")
    );
    let reset = header_u64(response, "x-ratelimit-reset");
    let t = header(response, "ratelimit")
        .strip_prefix(&format!("\"per-key\";r={remaining};t="))
        .unwrap_or_else(|| panic!("RateLimit {:?}", header(response, "ratelimit")))
        .parse::<u64>()
        .unwrap();
    // t is Reset minus the current Unix second of the decision (taken a moment ago).
    let now = unix_s();
    assert!(
        reset - t <= now && reset - t + 5 >= now,
        "reset {reset} t {t} now {now}"
    );
}

fn assert_no_rate_headers(response: &reqwest::Response) {
    for name in RATE_HEADERS {
        assert!(
            !response.headers().contains_key(name),
            "{name} on {}",
            response.status()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_with_headers_and_body() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[
            TestSite::new("storefront", STOREFRONT, 1000, &[key(1)]),
            TestSite::new("tiny", STOREFRONT, 2, &[key(2)]),
            TestSite::new(
                "broken",
                r#"{"version": 2, "quiet_zone": []}"#,
                1000,
                &[key(3)],
            ),
        ],
    );
    let options = options();
    let mut server = bind(&sites, options, Arc::new(SystemClock::new())).await;
    let api = server.api_addr();
    let admin = server.admin_addr();
    let client = client();

    // 503 until every site's config was read once; /readyz says the same.
    let r = preview(&client, api, &key(1), REQUEST).await;
    assert_eq!(r.status(), 503);
    assert_eq!(header(&r, "retry-after"), "1");
    assert_no_rate_headers(&r);
    let body = json_body(r).await;
    assert_eq!(body["error"], "ServiceUnavailable");
    let (status, ready) = admin_get(admin, "/readyz").await;
    assert_eq!(status, 503, "{ready}");
    assert!(ready.contains("loading"));
    server.load().await;
    assert_eq!(admin_get(admin, "/readyz").await.0, 200);

    // 200: exactly the engine's body, with the rate-limit headers.
    let expected = Engine::compile(STOREFRONT)
        .unwrap()
        .preview_body(REQUEST.as_bytes())
        .unwrap();
    let r = preview(&client, api, &key(1), REQUEST).await;
    assert_eq!(r.status(), 200);
    assert_rate_headers(&r, 1000, 999);
    assert!(r.headers().get("retry-after").is_none());
    assert_eq!(header(&r, "content-type"), "application/json");
    assert_eq!(r.text().await.unwrap(), expected);

    // Content-Type parameters are allowed.
    let r = client
        .post(preview_url(api))
        .bearer_auth(key(1))
        .header("content-type", "application/json; charset=utf-8")
        .body(REQUEST)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_rate_headers(&r, 1000, 998);

    // 400 InvalidRequest, counted against the key.
    let r = preview(
        &client,
        api,
        &key(1),
        r#"{"session_state":{"intent_score":50.5,"page_url":"/"}}"#,
    )
    .await;
    assert_eq!(r.status(), 400);
    assert_rate_headers(&r, 1000, 997);
    let body = json_body(r).await;
    assert_eq!(body["error"], "InvalidRequest");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("session_state.intent_score")
    );
    let r = preview(&client, api, &key(1), "not json").await;
    assert_eq!(r.status(), 400);
    assert_rate_headers(&r, 1000, 996);

    // 401: missing, malformed and unknown keys; no rate-limit headers, counted against no key.
    let missing = client
        .post(preview_url(api))
        .header("content-type", "application/json")
        .body(REQUEST)
        .send()
        .await
        .unwrap();
    let malformed = preview(&client, api, "sk_test_short", REQUEST).await;
    let unknown = preview(&client, api, &key(99), REQUEST).await;
    let mut messages = Vec::new();
    for (r, challenge) in [
        (missing, "Bearer realm=\"nudge-rules\""),
        (
            malformed,
            "Bearer realm=\"nudge-rules\", error=\"invalid_token\"",
        ),
        (
            unknown,
            "Bearer realm=\"nudge-rules\", error=\"invalid_token\"",
        ),
    ] {
        assert_eq!(r.status(), 401);
        assert_eq!(header(&r, "www-authenticate"), challenge);
        assert_no_rate_headers(&r);
        let body = json_body(r).await;
        assert_eq!(body["error"], "Unauthorized");
        messages.push(body["message"].as_str().unwrap().to_owned());
    }
    // An unknown key's message is the same whatever the key, and names no site.
    let other_unknown = json_body(preview(&client, api, &key(98), REQUEST).await).await;
    assert_eq!(other_unknown["message"], messages[2]);
    for site in ["storefront", "tiny", "broken"] {
        assert!(!messages.iter().any(|m| m.contains(site)));
    }
    let r = preview(&client, api, &key(1), REQUEST).await;
    assert_rate_headers(&r, 1000, 995);

    // 415 for another media type or none, counted.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = client
            .post(preview_url(api))
            .bearer_auth(key(1))
            .body(REQUEST);
        if let Some(ct) = content_type {
            request = request.header("content-type", ct);
        }
        let r = request.send().await.unwrap();
        assert_eq!(r.status(), 415, "{content_type:?}");
        assert!(r.headers().contains_key("x-ratelimit-remaining"));
        assert_eq!(json_body(r).await["error"], "UnsupportedMediaType");
    }

    // 413: a body of exactly 64 KiB is read; one byte more is refused.
    let padded = |len: usize| format!("{REQUEST}{}", " ".repeat(len - REQUEST.len()));
    let r = preview(&client, api, &key(1), &padded(65_536)).await;
    assert_eq!(r.status(), 200);
    let r = preview(&client, api, &key(1), &padded(65_537)).await;
    assert_eq!(r.status(), 413);
    assert!(r.headers().contains_key("x-ratelimit-remaining"));
    assert_eq!(json_body(r).await["error"], "PayloadTooLarge");

    // 404 and 405 (before authentication: no key needed, no rate-limit headers).
    let r = client
        .get(format!("http://{api}/v1/visitors"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_no_rate_headers(&r);
    assert_eq!(json_body(r).await["error"], "NotFound");
    for method in [
        reqwest::Method::GET,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
    ] {
        let r = client
            .request(method.clone(), preview_url(api))
            .bearer_auth(key(1))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405, "{method}");
        assert_eq!(header(&r, "allow"), "POST");
        assert_no_rate_headers(&r);
        assert_eq!(json_body(r).await["error"], "MethodNotAllowed");
    }

    // 500 InvalidConfig for a site that never had a valid config, with rate-limit headers.
    let r = preview(&client, api, &key(3), REQUEST).await;
    assert_eq!(r.status(), 500);
    assert_rate_headers(&r, 1000, 999);
    let body = json_body(r).await;
    assert_eq!(body["error"], "InvalidConfig");
    assert!(
        body["message"].as_str().unwrap().contains("quiet_zone"),
        "{body}"
    );

    // 429 with Retry-After equal to what X-RateLimit-Reset implies; not counted.
    for remaining in [1, 0] {
        let r = preview(&client, api, &key(2), REQUEST).await;
        assert_eq!(r.status(), 200);
        assert_rate_headers(&r, 2, remaining);
    }
    let before = unix_s();
    let r = preview(&client, api, &key(2), REQUEST).await;
    let after = unix_s();
    assert_eq!(r.status(), 429);
    assert_rate_headers(&r, 2, 0);
    let retry_after = header_u64(&r, "retry-after");
    let reset = header_u64(&r, "x-ratelimit-reset");
    assert!((1..=61).contains(&retry_after));
    assert!(
        (before..=after).contains(&(reset - retry_after)),
        "reset {reset} retry {retry_after}"
    );
    assert_eq!(
        header(&r, "ratelimit"),
        format!("\"per-key\";r=0;t={retry_after}")
    );
    let body = json_body(r).await;
    assert_eq!(body["error"], "RateLimitExceeded");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .ends_with(&format!("retry in {retry_after} seconds")),
        "{body}"
    );

    // The metrics saw all of it.
    let (_, metrics) = admin_get(admin, "/metrics").await;
    let requests = |status: u16| {
        metric(
            &metrics,
            &format!(
                "nudge_http_requests_total{{route=\"/v1/nudges/preview\",status=\"{status}\"}}"
            ),
        )
    };
    assert_eq!(requests(503), 1.0);
    assert_eq!(requests(401), 4.0);
    assert_eq!(requests(429), 1.0);
    assert_eq!(
        metric(&metrics, "nudge_rate_limited_total{site=\"tiny\"}"),
        1.0
    );
    assert_eq!(
        metric(&metrics, "nudge_site_config_valid{site=\"broken\"}"),
        0.0
    );
    assert_eq!(
        metric(&metrics, "nudge_site_config_valid{site=\"storefront\"}"),
        1.0
    );
    assert!(metric(&metrics, "nudge_engine_duration_seconds_count") >= 5.0);
    let (status, openapi) = admin_get(admin, "/openapi.json").await;
    assert_eq!(status, 200);
    let openapi: Value = serde_json::from_str(&openapi).unwrap();
    assert!(openapi["paths"]["/v1/nudges/preview"]["post"]["responses"]["413"].is_object());
    // The relay is in the served contract too (issue 35), with both of its content types.
    let relay = &openapi["paths"]["/v1/events"]["post"];
    assert!(relay["requestBody"]["content"]["text/plain"].is_object());
    assert!(relay["responses"]["202"].is_object());
    assert_eq!(admin_get(admin, "/healthz").await.0, 200);

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_1001st_request_in_a_window_is_refused_and_a_retry_after_retry_after_admitted() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("s", STOREFRONT, 1000, &[key(1)])],
    );
    const T0: u64 = 1_700_000_000_500_000; // Unix µs, half a second past a whole second
    let clock = Arc::new(ManualClock::new(T0));
    let server = start(&sites, options(), clock.clone()).await;
    let api = server.api_addr();
    let client = client();

    let send_many = |n: usize| {
        let client = client.clone();
        async move {
            let mut last = None;
            for _ in 0..n {
                let r = preview(&client, api, &key(1), REQUEST).await;
                assert_eq!(r.status(), 200);
                last = Some(r);
            }
            last.unwrap()
        }
    };
    // 500 requests at T0 and 500 at T0 + 20 s: the window is full.
    let r = send_many(500).await;
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 500);
    clock.set_us(T0 + 20_000_000);
    let r = send_many(500).await;
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
    // Full: Reset is when the oldest (T0) leaves the window, rounded up to a whole second.
    assert_eq!(header_u64(&r, "x-ratelimit-reset"), 1_700_000_061);

    // The 1,001st, at T0 + 30 s: refused; Retry-After = Reset - the current Unix second.
    clock.set_us(T0 + 30_000_000);
    for _ in 0..2 {
        let r = preview(&client, api, &key(1), REQUEST).await;
        assert_eq!(r.status(), 429);
        assert_eq!(header_u64(&r, "x-ratelimit-reset"), 1_700_000_061);
        assert_eq!(header_u64(&r, "retry-after"), 31);
        assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
        assert_eq!(header(&r, "ratelimit"), "\"per-key\";r=0;t=31");
    }
    // Exact: a microsecond before the oldest leaves, still refused.
    clock.set_us(T0 + 60_000_000 - 1);
    assert_eq!(preview(&client, api, &key(1), REQUEST).await.status(), 429);

    // After Retry-After (from the first refusal): admitted; the 500 of T0 have left.
    clock.set_us(T0 + 30_000_000 + 31_000_000);
    let r = preview(&client, api, &key(1), REQUEST).await;
    assert_eq!(r.status(), 200);
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 499);
    // The next oldest is at T0 + 20 s: the window fills again after 499 more.
    let r = send_many(499).await;
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
    let r = preview(&client, api, &key(1), REQUEST).await;
    assert_eq!(r.status(), 429);
    assert_eq!(header_u64(&r, "x-ratelimit-reset"), 1_700_000_081);
    assert_eq!(header_u64(&r, "retry-after"), 1_700_000_081 - 1_700_000_061);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_are_limited_before_they_are_read_and_slow_clients_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let server = storefront(dir.path(), 1000).await;
    let api = server.api_addr();
    let auth = format!("Authorization: Bearer {}\r\n", key(1));

    // A Content-Length over 64 KiB is refused before a byte of the body is sent.
    let head = format!(
        "POST /v1/nudges/preview HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n"
    );
    let answer = raw_exchange(api, head.as_bytes(), Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"error\":\"PayloadTooLarge\""));
    assert!(answer.contains("x-ratelimit-remaining"));

    // A chunked body is cut as soon as it passes the limit.
    let mut chunked = format!(
        "POST /v1/nudges/preview HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..20 {
        chunked.extend_from_slice(format!("{:x}\r\n{}\r\n", 4096, " ".repeat(4096)).as_bytes());
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let answer = raw_exchange(api, &chunked, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // A body that stops arriving: 408 after the body read timeout (500 ms here).
    let head = format!(
        "POST /v1/nudges/preview HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"session"
    );
    let answer = raw_exchange(api, head.as_bytes(), Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"RequestTimeout\""));

    // A head that stops arriving: the server closes the connection (header read timeout,
    // 500 ms here; raw_exchange fails if it is still open after 10 s).
    let answer = raw_exchange(
        api,
        b"POST /v1/nudges/preview HTTP/1.1\r\nHost:",
        Duration::from_secs(10),
    )
    .await;
    assert!(!answer.starts_with("HTTP/1.1 2"), "{answer}");
    server.shutdown().await;
}
