//! docs/contract/read-api.md "Pagination": a walk returns each record that matched at its first page exactly once,
//! also when records' times move during the walk (a late event with an earlier time moves a
//! session's start; a second NUDGE_SHOWN a nudge's `shown_at`): records already read, not yet
//! read, moved twice, and moved out of the window. Both stores; the store's walk, and the HTTP
//! API's cursors with the late events sent through the relay.

use std::collections::BTreeMap;

use nudge_rules_server::domain::cursor::{Walk, WalkPage};
use nudge_rules_server::domain::event::{Mode, NewEvent, Scope};
use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::sites::keys::KeyHash;
use nudge_rules_server::store::{ListWindow, NudgeFilter, Store};
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;
use crate::store::{page_view, scope, shown_by};

/// The window of the walks: records from 100 ms on.
const WINDOW: ListWindow = ListWindow {
    from_ms: 100,
    to_ms: 10_000,
    visible_from_ms: 0,
};

/// Moves a session's start to `at` (a late page view) and its nudge `nudge` to `at` (a second
/// NUDGE_SHOWN), as a relay batch does.
async fn move_to(store: &Store, s: &Scope, session: &str, nudge: &str, at: i64, n: u32) {
    let events: Vec<NewEvent> = vec![
        page_view(&format!("late-{session}-{n}"), session, at, "/late"),
        shown_by(&format!("again-{nudge}-{n}"), session, at, nudge, "r"),
    ];
    store.insert_events(s, &events, 0).await.unwrap();
}

/// One page of each list, one record per page, after the walks' positions.
async fn next_pages(
    store: &Store,
    s: &Scope,
    sessions: &mut Walk,
    nudges: &mut Walk,
    got: &mut (Vec<String>, Vec<String>),
) {
    fn step<T>(
        walk: &mut Walk,
        page: WalkPage<T>,
        id: impl Fn(&T) -> String,
        into: &mut Vec<String>,
    ) {
        if let (Some(record), Some(position)) = (page.rows.last(), page.last_position()) {
            into.push(id(record));
            *walk = Walk {
                after: Some(position),
                rev: Some(page.rev),
            };
        }
    }
    let page = store.list_sessions(s, &WINDOW, sessions, 1).await.unwrap();
    step(sessions, page, |r| r.id.clone(), &mut got.0);
    let page = store
        .list_nudges(s, &WINDOW, &NudgeFilter::default(), nudges, 1)
        .await
        .unwrap();
    step(nudges, page, |r| r.id.clone(), &mut got.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_returns_each_record_once_when_records_move_during_it() {
    for test_store in TestStore::both() {
        let store = Store::open(&test_store.url).await.unwrap();
        let s = scope("shop", Mode::Test);
        // Five sessions, each with one nudge shown at its start: newest first a, b, c, d, e.
        let start: Vec<NewEvent> = [("a", 500), ("b", 400), ("c", 300), ("d", 200), ("e", 150)]
            .iter()
            .flat_map(|(id, at)| {
                [
                    page_view(&format!("pv-{id}"), &format!("sess_{id}"), *at, "/"),
                    shown_by(
                        &format!("sh-{id}"),
                        &format!("sess_{id}"),
                        *at,
                        &format!("nudg_{id}"),
                        "r",
                    ),
                ]
            })
            .collect();
        store.insert_events(&s, &start, 0).await.unwrap();
        let (mut sessions, mut nudges) = (Walk::default(), Walk::default());
        let mut got = (Vec::new(), Vec::new());
        next_pages(&store, &s, &mut sessions, &mut nudges, &mut got).await; // a
        // a, already read, moves past every other record: it must not come again.
        move_to(&store, &s, "sess_a", "nudg_a", 120, 1).await;
        next_pages(&store, &s, &mut sessions, &mut nudges, &mut got).await; // b
        // b, read, moves twice; c, not yet read, moves twice, the second time out of the
        // window; d, not yet read, moves once within it.
        move_to(&store, &s, "sess_b", "nudg_b", 140, 1).await;
        move_to(&store, &s, "sess_c", "nudg_c", 130, 1).await;
        move_to(&store, &s, "sess_b", "nudg_b", 110, 2).await;
        move_to(&store, &s, "sess_c", "nudg_c", 50, 2).await;
        move_to(&store, &s, "sess_d", "nudg_d", 160, 1).await;
        for _ in 0..10 {
            next_pages(&store, &s, &mut sessions, &mut nudges, &mut got).await;
        }
        let counts = |ids: &[String]| {
            let mut counts = BTreeMap::new();
            for id in ids {
                *counts.entry(id.clone()).or_insert(0) += 1;
            }
            counts
        };
        let want = |prefix: &str| -> BTreeMap<String, i32> {
            ["a", "b", "c", "d", "e"]
                .iter()
                .map(|id| (format!("{prefix}_{id}"), 1))
                .collect()
        };
        assert_eq!(
            counts(&got.0),
            want("sess"),
            "sessions, {}: {:?}",
            test_store.backend,
            got.0
        );
        assert_eq!(
            counts(&got.1),
            want("nudg"),
            "nudges, {}: {:?}",
            test_store.backend,
            got.1
        );
        // In the order of the positions they had when the walk began.
        assert_eq!(
            got.0,
            ["sess_a", "sess_b", "sess_c", "sess_d", "sess_e"],
            "{}",
            test_store.backend
        );
        // A new walk sees the records where they are now (c left the window).
        let page = store
            .list_sessions(&s, &WINDOW, &Walk::default(), 10)
            .await
            .unwrap();
        let ids: Vec<&str> = page.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            ["sess_d", "sess_e", "sess_a", "sess_b"].to_vec(),
            "{}",
            test_store.backend
        );
        assert_eq!(
            page.rev, 6,
            "one walk revision per moving batch, {}",
            test_store.backend
        );
    }
}

/// A cursor walk over HTTP, one page at a time.
struct HttpWalk {
    first: String,
    next: Option<String>,
    done: bool,
    ids: Vec<String>,
}

impl HttpWalk {
    fn new(first: String) -> HttpWalk {
        HttpWalk {
            first,
            next: None,
            done: false,
            ids: Vec::new(),
        }
    }

    /// Reads the next page (nothing once the walk is done).
    async fn step(&mut self, key: &str) {
        if self.done {
            return;
        }
        let url = match &self.next {
            None => self.first.clone(),
            Some(cursor) => format!("{}&cursor={cursor}", self.first),
        };
        let response = client().get(&url).bearer_auth(key).send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        assert_eq!(status, 200, "{url}: {body}");
        for item in body["data"].as_array().unwrap() {
            self.ids.push(item["id"].as_str().unwrap().to_owned());
        }
        match body["next_cursor"].as_str() {
            Some(cursor) => self.next = Some(cursor.to_owned()),
            None => self.done = true,
        }
    }
}

const PK: &str = "pk_test_walkKey00000000001";

/// `POST /v1/events` with the publishable key: 202 with every event accepted.
async fn send(base: &str, events: Vec<Value>) {
    let n = events.len();
    let response = client()
        .post(format!("{base}/v1/events"))
        .bearer_auth(PK)
        .header("content-type", "application/json")
        .body(json!({ "events": events }).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["data"]["accepted"], n, "{body}");
}

/// A page view of `session` and a NUDGE_SHOWN of `nudge` at `at_ms`.
fn page_and_shown(tag: &str, session: &str, nudge: &str, at_ms: i64) -> Vec<Value> {
    vec![
        json!({"message_id": format!("pv-{tag}"), "session_id": session, "type": "PAGE_VIEW", "occurred_at": format_ms(at_ms), "url": "/products/a"}),
        json!({"message_id": format!("sh-{tag}"), "session_id": session, "type": "NUDGE_SHOWN", "occurred_at": format_ms(at_ms), "nudge_id": nudge, "nudge_type": "toast", "rule_id": "r"}),
    ]
}

/// The same walk as above over the real server: `GET /v1/sessions` and `GET /v1/nudges` one
/// record a page, while late events (earlier `occurred_at`) arrive through `POST /v1/events`
/// between pages and move records already read, not yet read, twice, and out of the window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_walk_returns_each_record_once_while_late_events_arrive_through_the_relay() {
    for test_store in TestStore::both() {
        let dir = tempfile::tempdir().unwrap();
        let sites = write_sites(
            dir.path(),
            &[TestSite::new("shop", STOREFRONT, 100_000, &[key(1)])
                .with(&format!("site_keys = [\"{}\"]", KeyHash::of_key(PK)))],
        );
        let server = start_with_store(&sites, &test_store.url).await;
        let base = format!("http://{}", server.api_addr());
        // Seconds after `t0`, an hour ago (the relay takes events of the last 24 hours).
        let t0 = now_ms() - 3_600_000;
        let at = |s: i64| t0 + s * 1000;
        let mut start = Vec::new();
        for (id, s) in [("a", 500), ("b", 400), ("c", 300), ("d", 200), ("e", 150)] {
            start.extend(page_and_shown(
                id,
                &format!("sess_{id}"),
                &format!("nudg_{id}"),
                at(s),
            ));
        }
        send(&base, start).await;
        let window = format!(
            "limit=1&from={}&to={}",
            format_ms(at(100)),
            format_ms(at(10_000))
        );
        let mut sessions = HttpWalk::new(format!("{base}/v1/sessions?{window}"));
        let mut nudges = HttpWalk::new(format!("{base}/v1/nudges?{window}"));
        let move_to = |id: &str, s: i64, n: u32| {
            page_and_shown(
                &format!("{id}-{n}"),
                &format!("sess_{id}"),
                &format!("nudg_{id}"),
                at(s),
            )
        };
        sessions.step(&key(1)).await; // a
        nudges.step(&key(1)).await;
        // a, already read, moves past every other record.
        send(&base, move_to("a", 120, 1)).await;
        sessions.step(&key(1)).await; // b
        nudges.step(&key(1)).await;
        // b, read, moves twice; c, not yet read, twice, the second time out of the window;
        // d, not yet read, once within it. Each batch between two pages.
        for (id, s, n) in [
            ("b", 140, 1),
            ("c", 130, 1),
            ("b", 110, 2),
            ("c", 50, 2),
            ("d", 160, 1),
        ] {
            send(&base, move_to(id, s, n)).await;
            sessions.step(&key(1)).await;
            nudges.step(&key(1)).await;
        }
        for _ in 0..5 {
            sessions.step(&key(1)).await;
            nudges.step(&key(1)).await;
        }
        assert!(sessions.done && nudges.done, "{}", test_store.backend);
        let backend = test_store.backend;
        assert_eq!(
            sessions.ids,
            ["sess_a", "sess_b", "sess_c", "sess_d", "sess_e"],
            "sessions, {backend}: each once, in the order of the walk's start"
        );
        assert_eq!(
            nudges.ids,
            ["nudg_a", "nudg_b", "nudg_c", "nudg_d", "nudg_e"],
            "nudges, {backend}"
        );
        // A new walk sees the records where they are now: c left the window.
        let mut fresh = HttpWalk::new(format!("{base}/v1/sessions?{window}"));
        for _ in 0..6 {
            fresh.step(&key(1)).await;
        }
        assert_eq!(
            fresh.ids,
            ["sess_d", "sess_e", "sess_a", "sess_b"],
            "{backend}"
        );
        server.shutdown().await;
    }
}
