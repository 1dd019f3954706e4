//! The relay under load (docs/contract/relay.md): 100,000 events from 8 concurrent clients with resent batches,
//! a `kill -9` under load, two instances on one PostgreSQL and one Redis sharing the limit.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use nudge_rules_server::clock::SystemClock;
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::domain::event::{EventKind, Mode, NewEvent};
use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::sites::keys::KeyHash;
use nudge_rules_server::store::{ListWindow, Store};
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;
use crate::store::{Rng, scope, walk_sessions};

/// A publishable key, distinct per `n`.
fn pk(n: u32) -> String {
    format!("pk_test_loadKey{n:08}AbCdEf")
}

fn site_keys_line(keys: &[String]) -> String {
    let hashes: Vec<String> = keys
        .iter()
        .map(|k| format!("\"{}\"", KeyHash::of_key(k)))
        .collect();
    format!("site_keys = [{}]", hashes.join(", "))
}

fn wire(e: &NewEvent) -> Value {
    let mut v = json!({
        "message_id": e.message_id, "session_id": e.session_id, "type": e.kind.as_str(),
        "occurred_at": format_ms(e.occurred_at_ms),
    });
    if let Some(url) = &e.url {
        v["url"] = json!(url);
    }
    if let Some(score) = e.intent_score {
        v["intent_score"] = json!(score);
    }
    if let Some(id) = &e.nudge_id {
        v["nudge_id"] = json!(id);
    }
    if let Some(t) = &e.nudge_type {
        v["nudge_type"] = json!(t);
    }
    if let Some(o) = &e.outcome {
        v["outcome"] = json!(o);
    }
    v
}

/// Posts one batch. A connection that fails before an answer (a CPU-starved machine can keep
/// the server from reading the request within its 10 s header timeout) is sent again, as the
/// relay client does: a batch the server stored meanwhile comes back as duplicates, so the
/// "each stored once" checks still hold.
async fn post(base: &str, key: &str, events: &[Value]) -> (u16, Value) {
    let (status, body, _) = post_tries(base, key, events).await;
    (status, body)
}

/// [`post`], with the number of tries it took (1 when the first connection answered).
async fn post_tries(base: &str, key: &str, events: &[Value]) -> (u16, Value, u32) {
    let mut tries = 0;
    loop {
        tries += 1;
        let sent = client()
            .post(format!("{base}/v1/events"))
            .bearer_auth(key)
            .json(&json!({ "events": events }))
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                return (status, response.json().await.unwrap_or(Value::Null), tries);
            }
            Err(e) if tries < 4 && (e.is_request() || e.is_connect() || e.is_timeout()) => {
                eprintln!("batch sent again after: {e}");
            }
            Err(e) => panic!("batch not sent after {tries} tries: {e}"),
        }
    }
}

/// Random events of `sessions` sessions (pages, purchases, nudges and outcomes in any order),
/// all within the last hour.
fn events_for(rng: &mut Rng, client: usize, sessions: usize, per_session: usize) -> Vec<NewEvent> {
    let now = now_ms();
    let mut out = Vec::new();
    for s in 0..sessions {
        let sid = format!("sess_c{client}s{s}");
        for i in 0..per_session {
            // Distinct times within a session (the `+ i`): no tie for arrival order to break.
            let at = now - 3_000_000 + (rng.below(600) as i64) * 1000 + i as i64;
            let id = format!("c{client}s{s}e{i}");
            let base = NewEvent {
                message_id: id,
                session_id: sid.clone(),
                visitor_id: None,
                kind: EventKind::PageView,
                occurred_at_ms: at,
                url: None,
                path_key: None,
                intent_score: None,
                nudge_id: None,
                nudge_type: None,
                rule_id: None,
                outcome: None,
            };
            let nudge = format!("nudg_c{client}s{s}n{}", rng.below(2));
            out.push(match rng.below(8) {
                0..=3 => {
                    let path = ["/", "/a", "/b"][rng.below(3) as usize].to_owned();
                    NewEvent {
                        url: Some(path.clone()),
                        path_key: Some(path),
                        intent_score: Some(rng.below(101) as u8),
                        ..base
                    }
                }
                4 => NewEvent {
                    kind: EventKind::Purchase,
                    url: Some("/thanks".into()),
                    path_key: Some("/thanks".into()),
                    ..base
                },
                5 | 6 => NewEvent {
                    kind: EventKind::NudgeShown,
                    nudge_id: Some(nudge),
                    nudge_type: Some(nudge_rules::NudgeType::Toast),
                    ..base
                },
                _ => NewEvent {
                    kind: EventKind::NudgeOutcome,
                    nudge_id: Some(nudge),
                    outcome: Some(nudge_rules::NudgeOutcome::Clicked),
                    ..base
                },
            });
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_events_from_eight_clients_each_stored_once() {
    for test_store in TestStore::both() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<String> = (0..16).map(pk).collect();
        let sites = write_sites(
            dir.path(),
            &[TestSite::new("shop", STOREFRONT, 100_000, &[key(1)]).with(&site_keys_line(&keys))],
        );
        let options = ServeConfig {
            store: Some(test_store.url.clone()),
            ..options()
        };
        let server = start(&sites, options, Arc::new(SystemClock::new())).await;
        let base = format!("http://{}", server.api_addr());
        let mut tasks = Vec::new();
        for c in 0..8 {
            let base = base.clone();
            let keys = [keys[2 * c].clone(), keys[2 * c + 1].clone()];
            tasks.push(tokio::spawn(async move {
                let mut rng = Rng(1000 + c as u64);
                let events = events_for(&mut rng, c, 1250, 10);
                let (mut accepted, mut duplicates, mut resent) = (0u64, 0u64, 0u64);
                let mut retried = 0u64;
                for (b, batch) in events.chunks(250).enumerate() {
                    let wired: Vec<Value> = batch.iter().map(wire).collect();
                    let key = &keys[b % 2];
                    let (status, body, tries) = post_tries(&base, key, &wired).await;
                    retried += u64::from(tries > 1);
                    assert_eq!(status, 202, "{body}");
                    assert!(
                        body["data"]["rejected"].as_array().unwrap().is_empty(),
                        "{body}"
                    );
                    accepted += body["data"]["accepted"].as_u64().unwrap();
                    duplicates += body["data"]["duplicates"].as_u64().unwrap();
                    // 5 % of batches are sent again, as after a lost answer.
                    if rng.below(20) == 0 {
                        let (status, body) = post(&base, &keys[(b + 1) % 2], &wired).await;
                        assert_eq!(status, 202, "{body}");
                        assert_eq!(
                            body["data"]["duplicates"].as_u64().unwrap(),
                            wired.len() as u64
                        );
                        resent += wired.len() as u64;
                        duplicates += wired.len() as u64;
                    }
                }
                (events, accepted, duplicates, resent, retried)
            }));
        }
        let mut all = Vec::new();
        let (mut accepted, mut duplicates, mut resent, mut retried) = (0, 0, 0, 0);
        for task in tasks {
            let (events, a, d, r, t) = task.await.unwrap();
            all.extend(events);
            accepted += a;
            duplicates += d;
            resent += r;
            retried += t;
        }
        assert_eq!(all.len(), 100_000);
        // Every event answered once as accepted or duplicate; exactly 100,000 accepted unless a
        // batch was sent again after a failed connection (then it may have been stored by the
        // first try). The store's contents are checked exactly below.
        assert_eq!(
            accepted + duplicates,
            100_000 + resent,
            "{}",
            test_store.backend
        );
        if retried == 0 {
            assert_eq!(accepted, 100_000, "{}", test_store.backend);
            assert_eq!(duplicates, resent);
        }
        assert!(resent > 0);
        // The derived fields equal a plain recomputation from the events.
        let store = Store::open(&test_store.url).await.unwrap();
        let s = scope("shop", Mode::Test);
        let want = crate::store::recompute(&all);
        let window = ListWindow {
            from_ms: i64::MIN / 2,
            to_ms: i64::MAX / 2,
            visible_from_ms: i64::MIN / 2,
        };
        let mut got = BTreeMap::new();
        for summary in walk_sessions(&store, &s, &window, 200).await {
            got.insert(
                summary.id.clone(),
                (
                    summary.started_at_ms,
                    summary.ended_at_ms,
                    summary.page_count,
                    summary.intent_score,
                    summary.converted,
                    summary.nudge_count,
                ),
            );
        }
        let want_summaries: BTreeMap<String, _> = want
            .into_iter()
            .map(|(id, (summary, _))| (id, summary))
            .collect();
        assert_eq!(got.len(), 10_000);
        assert_eq!(got, want_summaries, "{}", test_store.backend);
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_load_loses_no_acknowledged_event_and_no_batch_is_half_stored() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..4).map(pk).collect();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 100_000, &[key(1)]).with(&site_keys_line(&keys))],
    );
    let store_url = format!("sqlite:{}", dir.path().join("store.db").display());
    let port = free_port();
    let args = |port: u16| -> Vec<String> {
        vec![
            "--sites".into(),
            sites.display().to_string(),
            "--store".into(),
            store_url.clone(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--admin-listen".into(),
            "127.0.0.1:0".into(),
        ]
    };
    let argv = args(port);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut binary = Binary::start(
        &argv,
        &[("RUST_LOG", "warn")],
        &dir.path().join("stderr1.txt"),
    );
    binary.wait_ready().await;
    let base = format!("http://127.0.0.1:{port}");
    // Each batch is one session of 50 page views of distinct pages and one NUDGE_HELD_OUT
    // (docs/contract/caps.md) of a rule of its own, every event with the visitor's id: whole means
    // page_count 50 and one control exposure of that rule.
    let batch = |c: usize, b: usize| -> Vec<Value> {
        let now = now_ms();
        let mut events: Vec<Value> = (0..50).map(|i| json!({"message_id": format!("k{c}b{b}e{i}"), "session_id": format!("sess_k{c}b{b}"), "type": "PAGE_VIEW", "occurred_at": format_ms(now - 1000), "url": format!("/p{i}"), "visitor_id": format!("vis_k{c}")})).collect();
        events.push(json!({"message_id": format!("k{c}b{b}h"), "session_id": format!("sess_k{c}b{b}"), "type": "NUDGE_HELD_OUT", "occurred_at": format_ms(now - 1000), "rule_id": format!("k{c}b{b}"), "nudge_type": "toast", "url": "/p0", "visitor_id": format!("vis_k{c}")}));
        events
    };
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (c, key) in keys.iter().enumerate() {
        let (base, key, acknowledged) = (base.clone(), key.clone(), acknowledged.clone());
        tasks.push(tokio::spawn(async move {
            let mut sent = Vec::new();
            for b in 0..10_000 {
                sent.push((c, b));
                let response = client()
                    .post(format!("{base}/v1/events"))
                    .bearer_auth(&key)
                    .json(&json!({"events": batch(c, b)}))
                    .send()
                    .await;
                match response {
                    Ok(r) if r.status() == 202 => acknowledged.lock().unwrap().push((c, b)),
                    _ => break,
                }
            }
            sent
        }));
    }
    // Kill under load at a moment that depends on the run: once 20 batches are acknowledged
    // (however loaded the machine, so the kill meets a store in use), then 0 to 500 ms more.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while acknowledged.lock().unwrap().len() < 20 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let wait = (now_ms() % 500) as u64;
    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
    binary.child.kill().unwrap(); // SIGKILL
    binary.child.wait().unwrap();
    let mut sent = Vec::new();
    for task in tasks {
        sent.extend(task.await.unwrap());
    }
    let acknowledged: HashSet<(usize, usize)> =
        acknowledged.lock().unwrap().iter().copied().collect();
    assert!(
        acknowledged.len() > 10,
        "too few batches before the kill: {}",
        acknowledged.len()
    );
    // Restart on the same store and look.
    let argv = args(free_port());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let binary = Binary::start(
        &argv,
        &[("RUST_LOG", "warn")],
        &dir.path().join("stderr2.txt"),
    );
    binary.wait_ready().await;
    let store = Store::open(&store_url).await.unwrap();
    let s = scope("shop", Mode::Test);
    let everything = ListWindow {
        from_ms: i64::MIN / 2,
        to_ms: i64::MAX / 2,
        visible_from_ms: i64::MIN / 2,
    };
    let held_out: HashSet<String> = store
        .uplift_counts(&s, &everything)
        .await
        .unwrap()
        .into_iter()
        .map(|arm| {
            assert_eq!((arm.treated, arm.sessions), (false, 1), "{}", arm.rule_id);
            arm.rule_id
        })
        .collect();
    for &(c, b) in &sent {
        let session = store
            .session(&s, &format!("sess_k{c}b{b}"), i64::MIN / 2)
            .await
            .unwrap();
        let exposed = held_out.contains(&format!("k{c}b{b}"));
        match session {
            Some(detail) => {
                assert_eq!(detail.summary.page_count, 50, "batch {c}/{b} half stored");
                assert!(exposed, "batch {c}/{b} lost its held-out event");
            }
            None => {
                assert!(
                    !acknowledged.contains(&(c, b)),
                    "batch {c}/{b} was acknowledged and is lost"
                );
                assert!(!exposed, "batch {c}/{b} half stored");
            }
        }
    }
    // Resending every batch: the stored ones are all duplicates, the others all new.
    let base = format!("http://{}", binary.api);
    for &(c, b) in &sent {
        let (status, body) = post(&base, &keys[c], &batch(c, b)).await;
        assert_eq!(status, 202, "{body}");
        let (accepted, duplicates) = (
            body["data"]["accepted"].as_u64().unwrap(),
            body["data"]["duplicates"].as_u64().unwrap(),
        );
        assert!(
            (accepted, duplicates) == (51, 0) || (accepted, duplicates) == (0, 51),
            "{c}/{b}: {body}"
        );
        if acknowledged.contains(&(c, b)) {
            assert_eq!(duplicates, 51);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgresql_and_one_redis_admit_exactly_ten_thousand_events() {
    let test_store = TestStore::postgres();
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let key = pk(1);
    let sites = write_sites(
        dir.path(),
        &[
            TestSite::new("shop", STOREFRONT, 100_000, &[crate::common::key(1)])
                .with(&site_keys_line(std::slice::from_ref(&key))),
        ],
    );
    let options = ServeConfig {
        store: Some(test_store.url.clone()),
        redis_url: Some(redis.url()),
        ..options()
    };
    let a = start(&sites, options.clone(), Arc::new(SystemClock::new())).await;
    let b = start(&sites, options, Arc::new(SystemClock::new())).await;
    let now = now_ms();
    let mut admitted_events = 0;
    let mut refused = 0;
    for i in 0..150 {
        let server = if i % 2 == 0 { &a } else { &b };
        let events: Vec<Value> = (0..100).map(|e| json!({"message_id": format!("t{i}e{e}"), "session_id": format!("sess_t{i}"), "type": "PAGE_VIEW", "occurred_at": format_ms(now), "url": "/"})).collect();
        let (status, body) = post(&format!("http://{}", server.api_addr()), &key, &events).await;
        match status {
            202 => admitted_events += body["data"]["accepted"].as_u64().unwrap(),
            429 => refused += 1,
            other => panic!("{other} {body}"),
        }
    }
    assert_eq!(admitted_events, 10_000);
    assert_eq!(refused, 50);
    a.shutdown().await;
    b.shutdown().await;
}
