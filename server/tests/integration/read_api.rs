//! The read API over real HTTP on both store backends (docs/contract/read-api.md): pagination walks, cursors,
//! parameters, retention, modes and sites, a store outage.

use std::collections::HashSet;
use std::path::Path;

use nudge_rules_server::domain::event::{EventKind, Mode, NewEvent};
use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::runtime::Server;
use nudge_rules_server::store::Store;
use serde_json::Value;

use crate::common::*;
use crate::pg::TestStore;
use crate::store::{Rng, event, page_view, scope};

const DAY_MS: i64 = 86_400_000;

/// Sites: `shop` (starter; test key 1, live key 1), `big` (scale; test key 2), `other`
/// (starter; test key 3).
fn sites(dir: &Path) -> std::path::PathBuf {
    write_sites(
        dir,
        &[
            TestSite::new("shop", STOREFRONT, 100_000, &[key(1), live_key(1)]),
            TestSite::new("big", STOREFRONT, 100_000, &[key(2)]).with("plan = \"scale\""),
            TestSite::new("other", STOREFRONT, 100_000, &[key(3)]),
        ],
    )
}

struct Fixture {
    _dir: tempfile::TempDir,
    server: Server,
    store: Store,
    base: String,
}

async fn fixture(test_store: &TestStore) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let sites = sites(dir.path());
    let server = start_with_store(&sites, &test_store.url).await;
    let store = Store::open(&test_store.url).await.unwrap();
    let base = format!("http://{}", server.api_addr());
    Fixture {
        _dir: dir,
        server,
        store,
        base,
    }
}

async fn get(url: &str, key: &str) -> (u16, Value, reqwest::header::HeaderMap) {
    let response = client().get(url).bearer_auth(key).send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status} {text:?}: {e}"));
    (status, body, headers)
}

/// Walks every page of `first_url`; returns the ids in order.
async fn walk(first_url: &str, key: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut url = first_url.to_owned();
    loop {
        let (status, body, _) = get(&url, key).await;
        assert_eq!(status, 200, "{body}");
        for item in body["data"].as_array().unwrap() {
            ids.push(item["id"].as_str().unwrap().to_owned());
        }
        match body["next_cursor"].as_str() {
            Some(cursor) => {
                assert_eq!(body["has_more"], true);
                let sep = if first_url.contains('?') { '&' } else { '?' };
                url = format!("{first_url}{sep}cursor={cursor}");
            }
            None => {
                assert_eq!(body["has_more"], false);
                assert!(body["next_cursor"].is_null());
                return ids;
            }
        }
    }
}

fn one_page_session(n: usize, at: i64) -> NewEvent {
    page_view(&format!("m{n}"), &format!("sess_{n:05}"), at, "/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_returns_each_session_once_in_order_even_while_sessions_arrive() {
    for test_store in TestStore::both() {
        let f = fixture(&test_store).await;
        let now = now_ms();
        let tie = now - 5 * DAY_MS;
        let events: Vec<NewEvent> = (0..1000)
            .map(|n| {
                one_page_session(
                    n,
                    if n < 300 {
                        tie
                    } else {
                        now - DAY_MS - (n as i64) * 60_000
                    },
                )
            })
            .collect();
        f.store
            .insert_events(&scope("shop", Mode::Test), &events, 0)
            .await
            .unwrap();
        let mut want: Vec<(i64, String)> = events
            .iter()
            .map(|e| (e.occurred_at_ms, e.session_id.clone()))
            .collect();
        want.sort_by(|a, b| b.cmp(a));
        let want: Vec<String> = want.into_iter().map(|(_, id)| id).collect();

        let url = format!("{}/v1/sessions?limit=7", f.base);
        let ids = walk(&url, &key(1)).await;
        assert_eq!(ids, want, "{}", test_store.backend);

        // Again while another task inserts sessions inside the window (some at the tie).
        let writer_store = f.store.clone();
        let writer = tokio::spawn(async move {
            for n in 1000..1300 {
                let at = if n % 2 == 0 {
                    tie
                } else {
                    now - 2 * DAY_MS - (n as i64) * 1000
                };
                writer_store
                    .insert_events(&scope("shop", Mode::Test), &[one_page_session(n, at)], 0)
                    .await
                    .unwrap();
            }
        });
        let ids = walk(&url, &key(1)).await;
        writer.await.unwrap();
        let mut seen = HashSet::new();
        for id in &ids {
            assert!(
                seen.insert(id.clone()),
                "{id} twice ({})",
                test_store.backend
            );
        }
        for id in &want {
            assert!(seen.contains(id), "{id} missing ({})", test_store.backend);
        }
        f.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_bind_site_mode_endpoint_and_filters_and_limits_are_checked() {
    for test_store in TestStore::both() {
        let f = fixture(&test_store).await;
        let now = now_ms();
        let events: Vec<NewEvent> = (0..20)
            .map(|n| one_page_session(n, now - (n as i64 + 1) * 60_000))
            .collect();
        for s in ["shop", "other"] {
            f.store
                .insert_events(&scope(s, Mode::Test), &events, 0)
                .await
                .unwrap();
            f.store
                .insert_events(&scope(s, Mode::Live), &events, 0)
                .await
                .unwrap();
        }
        let from = format_ms(now - DAY_MS);
        let first = format!("{}/v1/sessions?limit=5&from={from}", f.base);
        let (status, body, headers) = get(&first, &key(1)).await;
        assert_eq!(status, 200);
        assert_eq!(headers["cache-control"], "private, max-age=60");
        assert!(headers.contains_key("x-ratelimit-remaining"));
        let cursor = body["next_cursor"].as_str().unwrap().to_owned();
        assert!(cursor.len() <= 512);

        // The cursor alone, or with the same filters: the next page.
        for url in [
            format!("{}/v1/sessions?cursor={cursor}", f.base),
            format!("{}/v1/sessions?limit=3&cursor={cursor}&from={from}", f.base),
        ] {
            let (status, body, _) = get(&url, &key(1)).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["data"][0]["id"], "sess_00005");
        }
        let mut damaged = cursor.clone().into_bytes();
        damaged[10] = if damaged[10] == b'A' { b'B' } else { b'A' };
        let damaged = String::from_utf8(damaged).unwrap();
        let cases = [
            (format!("{}/v1/sessions?cursor={damaged}", f.base), key(1)),
            (format!("{}/v1/sessions?cursor={cursor}", f.base), key(3)),
            (
                format!("{}/v1/sessions?cursor={cursor}", f.base),
                live_key(1),
            ),
            (format!("{}/v1/nudges?cursor={cursor}", f.base), key(1)),
            (
                format!(
                    "{}/v1/sessions?cursor={cursor}&from={}",
                    f.base,
                    format_ms(now - 2 * DAY_MS)
                ),
                key(1),
            ),
            (format!("{}/v1/sessions?cursor=abc", f.base), key(1)),
        ];
        for (url, k) in &cases {
            let (status, body, _) = get(url, k).await;
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some("InvalidCursor")),
                "{url} {body}"
            );
        }
        for bad in ["0", "201", "abc", "", "1.5", "-3"] {
            let (status, body, _) =
                get(&format!("{}/v1/sessions?limit={bad}", f.base), &key(1)).await;
            assert_eq!(status, 400);
            assert_eq!(body["error"], "InvalidRequest");
            let message = body["message"].as_str().unwrap();
            assert!(
                message.starts_with("limit must be") && message.contains(&format!("{bad:?}")),
                "{message}"
            );
        }
        for (query, named) in [
            ("limt=5", "limt"),
            ("limit=5&limit=6", "limit"),
            ("from=yesterday", "from"),
            ("to=2026-02-30T00:00:00Z", "to"),
        ] {
            let (status, body, _) = get(&format!("{}/v1/sessions?{query}", f.base), &key(1)).await;
            assert_eq!(status, 400, "{query}");
            assert!(
                body["message"].as_str().unwrap().contains(named),
                "{query}: {body}"
            );
        }
        let t = format_ms(now - 1000);
        let (status, body, _) =
            get(&format!("{}/v1/sessions?from={t}&to={t}", f.base), &key(1)).await;
        assert_eq!(
            (
                status,
                body["data"].as_array().unwrap().len(),
                &body["has_more"]
            ),
            (200, 0, &Value::Bool(false))
        );
        let (status, body, _) = get(
            &format!(
                "{}/v1/sessions?from={t}&to={}",
                f.base,
                format_ms(now - 5000)
            ),
            &key(1),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        f.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_per_plan_and_the_purge() {
    for test_store in TestStore::both() {
        let f = fixture(&test_store).await;
        let now = now_ms();
        let old = now - 31 * DAY_MS;
        for site in ["shop", "big"] {
            let shown = NewEvent {
                nudge_id: Some("nudg_old".into()),
                nudge_type: Some(nudge_rules::NudgeType::Toast),
                ..event("m2", "sess_old", EventKind::NudgeShown, old + 1000)
            };
            f.store
                .insert_events(
                    &scope(site, Mode::Test),
                    &[page_view("m1", "sess_old", old, "/"), shown],
                    0,
                )
                .await
                .unwrap();
        }
        let from = format_ms(now - 60 * DAY_MS);
        // Starter (30 days): gone by id and from both lists, even when asked from 60 days back.
        let (status, _, _) = get(&format!("{}/v1/sessions/sess_old", f.base), &key(1)).await;
        assert_eq!(status, 404, "{}", test_store.backend);
        let (_, body, _) = get(&format!("{}/v1/sessions?from={from}", f.base), &key(1)).await;
        assert_eq!(body["data"].as_array().unwrap().len(), 0);
        let (_, body, _) = get(&format!("{}/v1/nudges?from={from}", f.base), &key(1)).await;
        assert_eq!(body["data"].as_array().unwrap().len(), 0);
        // Scale (90 days): there; the default from (30 days) does not reach it, an older from does.
        let (status, body, _) = get(&format!("{}/v1/sessions/sess_old", f.base), &key(2)).await;
        assert_eq!(status, 200);
        assert_eq!(body["data"]["nudges"][0]["nudge_id"], "nudg_old");
        let (_, body, _) = get(&format!("{}/v1/sessions", f.base), &key(2)).await;
        assert_eq!(body["data"].as_array().unwrap().len(), 0);
        let (_, body, _) = get(&format!("{}/v1/sessions?from={from}", f.base), &key(2)).await;
        assert_eq!(body["data"][0]["id"], "sess_old");
        let (_, body, _) = get(&format!("{}/v1/nudges?from={from}", f.base), &key(2)).await;
        assert_eq!(body["data"][0]["id"], "nudg_old");

        // The purge: starter sessions older than 30 + 7 days go, younger ones stay (even
        // hidden ones, within the grace).
        let s = scope("shop", Mode::Test);
        f.store
            .insert_events(
                &s,
                &[
                    page_view("m3", "sess_38d", now - 38 * DAY_MS, "/"),
                    page_view("m4", "sess_36d", now - 36 * DAY_MS, "/"),
                ],
                0,
            )
            .await
            .unwrap();
        nudge_rules_server::runtime::purge(f.server.state()).await;
        assert!(
            f.store
                .session(&s, "sess_38d", i64::MIN / 2)
                .await
                .unwrap()
                .is_none(),
            "{}",
            test_store.backend
        );
        assert!(
            f.store
                .session(&s, "sess_36d", i64::MIN / 2)
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            f.store
                .session(&s, "sess_old", i64::MIN / 2)
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            f.store
                .session(&scope("big", Mode::Test), "sess_old", i64::MIN / 2)
                .await
                .unwrap()
                .is_some()
        );
        f.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_sees_only_its_sites_records_of_its_mode_and_404s_look_alike() {
    for test_store in TestStore::both() {
        let f = fixture(&test_store).await;
        let now = now_ms();
        let shown = |id: &str, session: &str| NewEvent {
            nudge_id: Some(id.into()),
            nudge_type: Some(nudge_rules::NudgeType::ChatBubble),
            ..event(
                &format!("n-{id}"),
                session,
                EventKind::NudgeShown,
                now - 5000,
            )
        };
        f.store
            .insert_events(
                &scope("shop", Mode::Live),
                &[
                    page_view("m1", "sess_live", now - 9000, "/"),
                    shown("nudg_live", "sess_live"),
                ],
                0,
            )
            .await
            .unwrap();
        f.store
            .insert_events(
                &scope("shop", Mode::Test),
                &[
                    page_view("m1", "sess_test", now - 9000, "/"),
                    shown("nudg_test", "sess_test"),
                ],
                0,
            )
            .await
            .unwrap();
        let ids = |body: &Value| -> Vec<String> {
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let (_, body, _) = get(&format!("{}/v1/sessions", f.base), &key(1)).await;
        assert_eq!(ids(&body), ["sess_test"], "{}", test_store.backend);
        let (_, body, _) = get(&format!("{}/v1/sessions", f.base), &live_key(1)).await;
        assert_eq!(ids(&body), ["sess_live"]);
        let (_, body, _) = get(&format!("{}/v1/nudges", f.base), &key(1)).await;
        assert_eq!(ids(&body), ["nudg_test"]);
        let (_, body, _) = get(&format!("{}/v1/sessions", f.base), &key(3)).await;
        assert!(ids(&body).is_empty());

        let (s1, unknown, _) = get(&format!("{}/v1/sessions/sess_live", f.base), &key(3)).await;
        let (s2, other_mode, _) = get(&format!("{}/v1/sessions/sess_live", f.base), &key(1)).await;
        let (s3, mine, _) = get(&format!("{}/v1/sessions/sess_live", f.base), &live_key(1)).await;
        assert_eq!((s1, s2, s3), (404, 404, 200));
        assert_eq!(unknown, other_mode);
        assert_eq!(
            unknown,
            serde_json::json!({"error": "NotFound", "message": "no session \"sess_live\""})
        );
        assert_eq!(mine["data"]["nudges"][0]["nudge_id"], "nudg_live");
        let (_, body, _) = get(
            &format!("{}/v1/nudges?session_id=sess_live", f.base),
            &key(1),
        )
        .await;
        assert!(ids(&body).is_empty());
        let (_, body, _) = get(
            &format!("{}/v1/nudges?session_id=sess_live&type=chat_bubble", f.base),
            &live_key(1),
        )
        .await;
        assert_eq!(ids(&body), ["nudg_live"]);

        // Publishable keys and other methods.
        let (status, body, _) = get(
            &format!("{}/v1/sessions", f.base),
            "pk_test_abcdefghijklmnop",
        )
        .await;
        assert_eq!(status, 401, "{body}");
        let response = client()
            .post(format!("{}/v1/sessions", f.base))
            .bearer_auth(key(1))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405);
        assert_eq!(header(&response, "allow"), "GET");
        f.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_query_strings_never_answer_500_and_never_change_data() {
    for test_store in TestStore::both() {
        let f = fixture(&test_store).await;
        let now = now_ms();
        let events: Vec<NewEvent> = (0..30)
            .map(|n| one_page_session(n, now - (n as i64 + 1) * 60_000))
            .collect();
        f.store
            .insert_events(&scope("shop", Mode::Test), &events, 0)
            .await
            .unwrap();
        let url = format!("{}/v1/sessions?limit=200", f.base);
        let (_, before, _) = get(&url, &key(1)).await;
        let names = [
            "from",
            "to",
            "limit",
            "cursor",
            "type",
            "session_id",
            "x",
            "",
            "LIMIT",
            "from%00",
        ];
        let values = [
            "1",
            "200",
            "201",
            "-1",
            "%27%20OR%201%3D1--",
            "'; DROP TABLE sessions;--",
            "%00",
            "%ZZ",
            "%C3%28",
            "2026-11-24T10:00:00Z",
            "2026-11-24T10:00:00.1234Z",
            "9999-12-31T23:59:59Z",
            "0000-01-01T00:00:00Z",
            "sess_x",
            "sess_%2e%2e",
            "toast",
            "%E2%80%AE",
            "a%26limit%3D5",
            "",
        ];
        let mut rng = Rng(7);
        for _ in 0..300 {
            let mut query = String::new();
            for _ in 0..rng.below(4) {
                let name = names[rng.below(names.len() as u64) as usize];
                let value = values[rng.below(values.len() as u64) as usize];
                query.push_str(&format!("{name}={value}&"));
            }
            for path in [
                "/v1/sessions",
                "/v1/nudges",
                "/v1/sessions/sess_00001",
                "/v1/sessions/%27%3B",
            ] {
                let response = client()
                    .get(format!("{}{path}?{query}", f.base))
                    .bearer_auth(key(1))
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                assert!(
                    [200, 400, 404].contains(&status),
                    "{path}?{query}: {status}"
                );
                let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
                if status != 200 {
                    assert!(body["error"].is_string() && body["message"].is_string());
                }
            }
        }
        let (_, after, _) = get(&url, &key(1)).await;
        assert_eq!(before, after, "{}", test_store.backend);
        f.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_answers_503_with_retry_after_never_500() {
    let test_store = TestStore::postgres_alone();
    let f = fixture(&test_store).await;
    f.store
        .insert_events(
            &scope("shop", Mode::Test),
            &[one_page_session(1, now_ms() - 1000)],
            0,
        )
        .await
        .unwrap();
    let (status, _, _) = get(&format!("{}/v1/sessions", f.base), &key(1)).await;
    assert_eq!(status, 200);
    let pg = test_store.pg.as_ref().unwrap();
    pg.stop();
    for path in [
        "/v1/sessions",
        "/v1/sessions/sess_00001",
        "/v1/nudges",
        "/v1/reports/uplift",
    ] {
        let (status, body, headers) = get(&format!("{}{path}", f.base), &key(1)).await;
        assert_eq!(status, 503, "{path}: {body}");
        assert_eq!(body["error"], "ServiceUnavailable");
        assert!(headers.contains_key("retry-after"));
        assert!(headers.contains_key("x-ratelimit-remaining"));
    }
    let (status, body) = admin_get(f.server.admin_addr(), "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("store_unreachable"));
    let (_, metrics) = admin_get(f.server.admin_addr(), "/metrics").await;
    assert_eq!(metric(&metrics, "nudge_store_up"), 0.0);
    assert!(metric(&metrics, "nudge_store_errors_total") >= 4.0);
    // The preview does not need the store.
    let response = preview(&client(), f.server.api_addr(), &key(1), REQUEST).await;
    assert_eq!(response.status(), 200);
    pg.start_again();
    let mut status = 0;
    for _ in 0..50 {
        (status, _, _) = get(&format!("{}/v1/sessions", f.base), &key(1)).await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200);
    f.server.shutdown().await;
}

/// docs/contract/read-api.md "Parameters": `from` and `to` take up to nine fraction digits (what Python's
/// `isoformat()` and generated clients send), compared exactly with the millisecond times stored:
/// `from` is inclusive and `to` exclusive, so `.123456` excludes a record at `.123` for `from`
/// and includes it for `to`; a cursor binds them exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_and_to_take_nine_fraction_digits_compared_exactly() {
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let f = fixture(&test_store).await;
        // Three sessions, each with a nudge shown when it starts: at .122, .123 and .124.
        let base = (now_ms() - DAY_MS) / 1000 * 1000 + 123;
        let mut events = Vec::new();
        for (name, at) in [("c", base - 1), ("a", base), ("b", base + 1)] {
            let session = format!("sess_{name}");
            events.push(page_view(&format!("p{name}"), &session, at, "/"));
            events.push(NewEvent {
                nudge_id: Some(format!("nudg_{name}")),
                nudge_type: Some(nudge_rules::NudgeType::Toast),
                ..event(&format!("n{name}"), &session, EventKind::NudgeShown, at)
            });
        }
        f.store
            .insert_events(&scope("shop", Mode::Test), &events, 0)
            .await
            .unwrap();
        // `base`'s second with the fraction digits `digits` (`base` is at .123 of it).
        let second = format_ms(base);
        let second = second.strip_suffix(".123Z").unwrap();
        let t = |digits: &str| format!("{second}.{digits}Z");
        let early = format_ms(base - DAY_MS);
        let late = format_ms(base + DAY_MS);
        let ids = |body: &Value| -> Vec<String> {
            body["data"]
                .as_array()
                .unwrap_or_else(|| panic!("{body}"))
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_owned())
                .collect()
        };
        for (from, to, want) in [
            // from: inclusive, exact.
            (t("123456"), late.clone(), vec!["b"]),
            (t("123"), late.clone(), vec!["b", "a"]),
            (t("123000000"), late.clone(), vec!["b", "a"]),
            (t("122999999"), late.clone(), vec!["b", "a"]),
            (t("122000001"), late.clone(), vec!["b", "a"]),
            (t("1220"), late.clone(), vec!["b", "a", "c"]),
            // to: exclusive, exact.
            (early.clone(), t("123456"), vec!["a", "c"]),
            (early.clone(), t("123"), vec!["c"]),
            (early.clone(), t("123000000"), vec!["c"]),
            (early.clone(), t("123000001"), vec!["a", "c"]),
            (early.clone(), t("124000001"), vec!["b", "a", "c"]),
            // No whole millisecond between them: an empty page, not an error.
            (t("123456"), t("123457"), vec![]),
            (t("1234567"), t("1234567"), vec![]),
        ] {
            for (path, prefix) in [("sessions", "sess_"), ("nudges", "nudg_")] {
                let url = format!("{}/v1/{path}?from={from}&to={to}", f.base);
                let (status, body, _) = get(&url, &key(1)).await;
                assert_eq!(status, 200, "{backend} {url}: {body}");
                let want: Vec<String> = want.iter().map(|n| format!("{prefix}{n}")).collect();
                assert_eq!(ids(&body), want, "{backend} {url}");
            }
        }
        // From after to, compared exactly; ten digits; a bad one among nine.
        for (query, named) in [
            (format!("from={}&to={}", t("123457"), t("123456")), "from"),
            (format!("from={}", t("1234567891")), "from"),
            (format!("to={}", t("12345678x")), "to"),
        ] {
            let (status, body, _) = get(&format!("{}/v1/sessions?{query}", f.base), &key(1)).await;
            assert_eq!(status, 400, "{backend} {query}: {body}");
            let message = body["message"].as_str().unwrap();
            assert!(message.starts_with(named), "{query}: {message}");
        }
        // A walk with sub-millisecond bounds, the bounds repeated on every page.
        let (from, to) = (t("121999999"), t("124000001"));
        let first = format!("{}/v1/sessions?limit=1&from={from}&to={to}", f.base);
        assert_eq!(
            walk(&first, &key(1)).await,
            ["sess_b", "sess_a", "sess_c"],
            "{backend}"
        );
        // A cursor binds them exactly: another value in the same millisecond differs.
        let (_, body, _) = get(&first, &key(1)).await;
        let cursor = body["next_cursor"].as_str().unwrap();
        let (status, body, _) = get(
            &format!(
                "{}/v1/sessions?cursor={cursor}&from={}&to={to}",
                f.base,
                t("121999998")
            ),
            &key(1),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("InvalidCursor")),
            "{backend}: {body}"
        );
        let (status, body, _) = get(
            &format!("{}/v1/sessions?limit=1&cursor={cursor}&to={to}", f.base),
            &key(1),
        )
        .await;
        assert_eq!(status, 200, "{backend}: {body}");
        assert_eq!(ids(&body), ["sess_a"], "{backend}");
        f.server.shutdown().await;
    }
}

/// One session of `rule`: a page view at `at`, its exposure (shown, or held out) a second
/// later, and a purchase `purchase_after` ms after the exposure when given (negative: before).
fn exposed_session(
    id: &str,
    at: i64,
    rule: &str,
    treated: bool,
    purchase_after: Option<i64>,
) -> Vec<NewEvent> {
    let session = format!("sess_{id}");
    let mut events = vec![page_view(&format!("{id}p"), &session, at, "/")];
    let exposure = if treated {
        NewEvent {
            nudge_id: Some(format!("nudg_{id}")),
            nudge_type: Some(nudge_rules::NudgeType::Toast),
            rule_id: Some(rule.into()),
            ..event(
                &format!("{id}x"),
                &session,
                EventKind::NudgeShown,
                at + 1000,
            )
        }
    } else {
        NewEvent {
            rule_id: Some(rule.into()),
            nudge_type: Some(nudge_rules::NudgeType::Toast),
            url: Some("/".into()),
            visitor_id: Some(format!("vis_{id}")),
            ..event(
                &format!("{id}x"),
                &session,
                EventKind::NudgeHeldOut,
                at + 1000,
            )
        }
    };
    events.push(exposure);
    if let Some(after) = purchase_after {
        events.push(NewEvent {
            url: Some("/thanks".into()),
            ..event(
                &format!("{id}b"),
                &session,
                EventKind::Purchase,
                at + 1000 + after,
            )
        });
    }
    events
}

/// docs/contract/caps.md "Measured uplift" over HTTP on both stores: per rule, the arms of the sessions that
/// started in the window (retention, modes and sites as the read API), exposure by the first
/// NUDGE_SHOWN or NUDGE_HELD_OUT, conversion by a purchase at or after it; the statistics of
/// `nudge_rules_server::app::uplift`; sorted by rule id; 400s naming the parameter; the read API's
/// headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_uplift_report_counts_exposed_sessions_per_rule_and_arm() {
    use nudge_rules_server::app::uplift::{Arm, rule_uplift};
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let f = fixture(&test_store).await;
        let now = now_ms();
        let day = now - DAY_MS;
        let mut events = Vec::new();
        // "lift": 200 treated, 40 bought after the nudge and 10 only before it; 200 held out,
        // 10 bought (one at the very instant of its exposure).
        for i in 0..200 {
            let purchase = match i {
                0..40 => Some(60_000),
                40..50 => Some(-500),
                _ => None,
            };
            events.extend(exposed_session(
                &format!("t{i}"),
                day + i,
                "lift",
                true,
                purchase,
            ));
            let purchase = match i {
                0 => Some(0),
                1..10 => Some(5_000),
                _ => None,
            };
            events.extend(exposed_session(
                &format!("c{i}"),
                day + i,
                "lift",
                false,
                purchase,
            ));
        }
        // "few": 3 treated, 1 converted; no control.
        for i in 0..3 {
            events.extend(exposed_session(
                &format!("f{i}"),
                day,
                "few",
                true,
                (i == 0).then_some(1),
            ));
        }
        // "a-held": held-out events alone (no session of the read API), 4 sessions, none bought.
        for i in 0..4 {
            let session = format!("sess_h{i}");
            events.push(NewEvent {
                rule_id: Some("a-held".into()),
                nudge_type: Some(nudge_rules::NudgeType::ExitModal),
                url: Some("/".into()),
                ..event(&format!("h{i}"), &session, EventKind::NudgeHeldOut, day)
            });
        }
        // Out of sight: older than the starter plan's 30 days, another mode, another site.
        events.extend(exposed_session(
            "old",
            now - 40 * DAY_MS,
            "lift",
            true,
            Some(1),
        ));
        for chunk in events.chunks(400) {
            f.store
                .insert_events(&scope("shop", Mode::Test), chunk, 0)
                .await
                .unwrap();
        }
        f.store
            .insert_events(
                &scope("shop", Mode::Live),
                &exposed_session("l", day, "lift", true, Some(1)),
                0,
            )
            .await
            .unwrap();
        f.store
            .insert_events(
                &scope("other", Mode::Test),
                &exposed_session("o", day, "lift", true, Some(1)),
                0,
            )
            .await
            .unwrap();

        let url = format!("{}/v1/reports/uplift", f.base);
        let (status, body, headers) = get(&url, &key(1)).await;
        assert_eq!(status, 200, "{backend}: {body}");
        assert_eq!(headers["cache-control"], "private, max-age=60");
        assert!(headers.contains_key("x-ratelimit-remaining"));
        let data = &body["data"];
        assert_eq!(data["to"].as_str().unwrap().len(), 24, "{data}");
        let rules = data["rules"].as_array().unwrap();
        let ids: Vec<&str> = rules
            .iter()
            .map(|r| r["rule_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a-held", "few", "lift"], "{backend}");
        let arm = |sessions, converted| Arm {
            sessions,
            converted,
        };
        let want = [
            rule_uplift("a-held", arm(0, 0), arm(4, 0)),
            rule_uplift("few", arm(3, 1), arm(0, 0)),
            rule_uplift("lift", arm(200, 40), arm(200, 10)),
        ];
        for (got, want) in rules.iter().zip(&want) {
            assert_eq!(got, &serde_json::to_value(want).unwrap(), "{backend}");
        }
        let lift = &rules[2];
        assert_eq!(
            lift["treated"],
            serde_json::json!({"sessions": 200, "converted": 40})
        );
        assert_eq!(
            lift["control"],
            serde_json::json!({"sessions": 200, "converted": 10})
        );
        assert_eq!(
            lift["conversion_rate"],
            serde_json::json!({"treated": 0.2, "control": 0.05})
        );
        assert_eq!(lift["uplift"]["absolute"], 0.15);
        assert_eq!(lift["uplift"]["relative"], 3.0);
        assert_eq!(lift["enough_data"], true);
        assert!(lift["p_value"].as_f64().unwrap() < 0.0001);
        let ci = lift["uplift"]["ci95"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() > 0.0 && ci[1].as_f64().unwrap() > 0.15);
        let few = &rules[1];
        assert_eq!(few["conversion_rate"]["control"], Value::Null);
        assert_eq!(
            few["uplift"],
            serde_json::json!({"absolute": null, "ci95": null, "relative": null})
        );
        assert_eq!(few["p_value"], Value::Null);
        assert_eq!(few["enough_data"], false);
        // The live key reads the live records.
        let (_, body, _) = get(&url, &live_key(1)).await;
        assert_eq!(body["data"]["rules"].as_array().unwrap().len(), 1, "{body}");
        assert_eq!(body["data"]["rules"][0]["treated"]["sessions"], 1);
        // The window: sessions that started in it.
        let (_, body, _) = get(&format!("{url}?from={}", format_ms(day + 100)), &key(1)).await;
        let lift = &body["data"]["rules"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(lift["treated"]["sessions"], 100, "{backend}: {body}");
        assert_eq!(body["data"]["from"], format_ms(day + 100));
        let (_, body, _) = get(
            &format!("{url}?from={}&to={}", format_ms(now), format_ms(now)),
            &key(1),
        )
        .await;
        assert_eq!(body["data"]["rules"], serde_json::json!([]));
        // A from older than the retention window moves to it.
        let (_, body, _) = get(&format!("{url}?from=2000-01-01T00:00:00Z"), &key(1)).await;
        assert_ne!(body["data"]["from"], "2000-01-01T00:00:00.000Z");
        assert_eq!(body["data"]["rules"].as_array().unwrap().len(), 3);
        // 400s naming the parameter.
        for (query, named) in [
            ("from=yesterday", "from must be"),
            ("to=2026-02-30T00:00:00Z", "to must be"),
            ("limit=5", "\"limit\""),
            (
                "from=2026-01-01T00:00:00Z&from=2026-01-02T00:00:00Z",
                "from is given more than once",
            ),
            (
                "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
                "from must be at or before to",
            ),
        ] {
            let (status, body, _) = get(&format!("{url}?{query}"), &key(1)).await;
            assert_eq!(status, 400, "{query}: {body}");
            assert_eq!(body["error"], "InvalidRequest");
            assert!(
                body["message"].as_str().unwrap().contains(named),
                "{query}: {body}"
            );
        }
        let response = client()
            .post(&url)
            .bearer_auth(key(1))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405);
        assert_eq!(response.headers()["allow"], "GET");
        let response = client().get(&url).send().await.unwrap();
        assert_eq!(response.status(), 401);
        f.server.shutdown().await;
    }
}
