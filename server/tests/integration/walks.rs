//! SPEC 9 "Pagination": a walk returns each record that matched at its first page exactly once,
//! also when records' times move during the walk (a late event with an earlier time moves a
//! session's start; a second NUDGE_SHOWN a nudge's `shown_at`): records already read, not yet
//! read, moved twice, and moved out of the window. Both stores; the store's walk and the HTTP
//! API's cursors.

use std::collections::BTreeMap;

use nudge_rules_server::domain::cursor::{Walk, WalkPage};
use nudge_rules_server::domain::event::{Mode, NewEvent, Scope};
use nudge_rules_server::store::{ListWindow, NudgeFilter, Store};

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
        if let Some((record, position)) = page.rows.last() {
            into.push(id(record));
            *walk = Walk {
                after: Some(position.clone()),
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
        let ids: Vec<&str> = page.rows.iter().map(|(r, _)| r.id.as_str()).collect();
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
