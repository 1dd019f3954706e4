//! The sites file reloaded like a config (docs/contract/server.md "Sites and keys"): two instances of the built
//! binary on one PostgreSQL, one sites file; a leaked key is rotated by rewriting the file and
//! within 2 s (the default poll) every instance refuses the old key and admits the new one (the
//! relay's publishable key too); a
//! rate limit changes the same way; a file that does not parse keeps the last valid one, and the
//! log names the line and column.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::sites::keys::KeyHash;

use crate::common::*;
use crate::pg::TestStore;

const PK_OLD: &str = "pk_test_reloadKey00000000001";
const PK_NEW: &str = "pk_test_reloadKey00000000002";

/// The status of a one-event relay batch sent to `api` with the publishable key `pk`.
async fn relay_status(api: SocketAddr, pk: &str) -> u16 {
    let event = serde_json::json!({"events": [{"message_id": format!("m-{pk}-{}", now_ms()), "session_id": "sess_r", "type": "PAGE_VIEW", "occurred_at": format_ms(now_ms() - 1000), "url": "/"}]});
    client()
        .post(format!("http://{api}/v1/events"))
        .bearer_auth(pk)
        .header("content-type", "application/json")
        .body(event.to_string())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The status each instance answers a preview with `key`.
async fn statuses(apis: &[SocketAddr], key: &str) -> Vec<u16> {
    let client = client();
    let mut out = Vec::new();
    for api in apis {
        out.push(preview(&client, *api, key, REQUEST).await.status().as_u16());
    }
    out
}

/// Waits until every instance answers `old` with 401 and `new` with 200: how long it took.
async fn until_rotated(apis: &[SocketAddr], old: &str, new: &str) -> Duration {
    let start = Instant::now();
    loop {
        let (o, n) = (statuses(apis, old).await, statuses(apis, new).await);
        if o.iter().all(|&s| s == 401) && n.iter().all(|&s| s == 200) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "not rotated after 5 s: old key {o:?}, new key {n:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_refused_and_its_successor_admitted_within_2_s_on_every_instance() {
    let test_store = TestStore::postgres();
    let dir = tempfile::tempdir().unwrap();
    let shop = |keys: &[String], rate_limit: u32| {
        // The publishable key rotates with the secret one: key 1 goes with PK_OLD.
        let pk = if keys.contains(&key(1)) {
            PK_OLD
        } else {
            PK_NEW
        };
        let site_keys = format!("site_keys = [\"{}\"]", KeyHash::of_key(pk));
        write_sites(
            dir.path(),
            &[TestSite::new("shop", STOREFRONT, rate_limit, keys).with(&site_keys)],
        )
    };
    let sites = shop(&[key(1)], 1000);
    // The default reload interval: what an operator gets.
    let args = [
        "--sites",
        sites.to_str().unwrap(),
        "--store",
        &test_store.url,
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
    ];
    let a = Binary::start(&args, &[], &dir.path().join("a.log"));
    let b = Binary::start(&args, &[], &dir.path().join("b.log"));
    a.wait_ready().await;
    b.wait_ready().await;
    let apis = [a.api, b.api];
    assert_eq!(statuses(&apis, &key(1)).await, [200, 200]);
    assert_eq!(statuses(&apis, &key(2)).await, [401, 401]);
    for api in apis {
        assert_eq!(relay_status(api, PK_OLD).await, 202);
        assert_eq!(relay_status(api, PK_NEW).await, 401);
    }

    // Key 1 leaked: the operator replaces it with key 2.
    shop(&[key(2)], 1000);
    let took = until_rotated(&apis, &key(1), &key(2)).await;
    assert!(took < Duration::from_secs(2), "rotation took {took:?}");
    // The relay's publishable keys came with the same file.
    for api in apis {
        assert_eq!(relay_status(api, PK_OLD).await, 401);
        assert_eq!(relay_status(api, PK_NEW).await, 202);
    }

    // A plan change (the rate limit) applies the same way; the key keeps its window (the
    // requests above count): 3 per minute admits at most 3 more in the minute.
    shop(&[key(2)], 3);
    let start = Instant::now();
    let client = client();
    loop {
        let r = preview(&client, a.api, &key(2), REQUEST).await;
        if r.headers()["x-ratelimit-limit"] == "3" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "the limit did not change"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let mut refused = false;
    for _ in 0..4 {
        refused |= preview(&client, a.api, &key(2), REQUEST).await.status() == 429;
    }
    assert!(refused, "the new limit of 3 per minute is enforced");

    // A sites file that does not parse: the last valid one keeps serving, the log says where.
    std::fs::write(&sites, "[[site]]\nid = \"shop\"\nrate_limit = \n").unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(statuses(&apis, &key(1)).await, [401, 401]);
    assert_ne!(statuses(&apis, &key(2)).await, [401, 401]);
    for log in ["a.log", "b.log"] {
        let text = std::fs::read_to_string(dir.path().join(log)).unwrap();
        assert!(
            text.contains("sites file refused; the last valid one keeps serving")
                && text.contains("(line 3, column 14)"),
            "{log}:\n{text}"
        );
        assert!(text.contains("sites file reloaded"), "{log}:\n{text}");
    }
    for admin in [a.admin, b.admin] {
        let metrics = client
            .get(format!("http://{admin}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for result in ["ok", "refused"] {
            assert!(
                metrics.contains(&format!(
                    "nudge_sites_file_reloads_total{{result=\"{result}\"}}"
                )),
                "{metrics}"
            );
        }
    }

    // Fixed again, with key 1 back (say, a mistaken rotation): admitted again.
    shop(&[key(1), key(3)], 1000);
    let took = until_rotated(&apis, &key(2), &key(1)).await;
    assert!(took < Duration::from_secs(2), "rotation took {took:?}");
    assert_eq!(statuses(&apis, &key(3)).await, [200, 200]);
}
