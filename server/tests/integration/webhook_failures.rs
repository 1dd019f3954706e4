//! Webhook attempts that fail (docs/contract/webhooks.md "Delivery"), on both stores: the contract's whole retry
//! ladder and the 5-day rule, crossed by moving the server's clock (`clock::OffsetClock`)
//! instead of compressing the ladder; and a stored secret that does not read, which fails the
//! attempt loudly (its log line, its error) instead of sending it unsigned.

use std::time::Duration;

use nudge_rules_server::clock::Clock;
use nudge_rules_server::domain::retention::DAY_MS;
use nudge_rules_server::domain::time::parse_rfc3339_ms;
use nudge_rules_server::sites::keys::KeyHash;
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;
use crate::webhooks::{Answer, PK, Receiver, call, hooked_with, register, verify, wait_attempts};

/// The contract's delays after attempts 1 to 7, in seconds.
const LADDER_S: [i64; 7] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

fn ms(value: &Value) -> i64 {
    parse_rfc3339_ms(value.as_str().unwrap(), 3).unwrap()
}

/// Sends a `webhook.test` to `endpoint` now.
async fn send_test(base: &str, endpoint: &str) {
    let (status, body) = call(
        base,
        "POST",
        &format!("/v1/webhook_endpoints/{endpoint}/test"),
        None,
    )
    .await;
    assert_eq!(status, 202, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_ladder_and_five_days_of_failures_run_on_the_servers_clock() {
    for store in TestStore::both() {
        let backend = store.backend;
        let receiver = Receiver::start().await;
        let h = hooked_with(&store.url, true, None).await;
        let (down, _) = register(
            &h.base,
            &receiver.on("down", &[Answer::Status(500)]),
            &["nudge.shown"],
        )
        .await;
        register(
            &h.base,
            &receiver.on("watcher", &[]),
            &["webhook_endpoint.disabled"],
        )
        .await;
        send_test(&h.base, &down).await;
        // Eight attempts, each due at the ladder's next delay (+-20 %) after the last: the
        // clock is moved to each due time as the attempt before it is logged.
        for n in 1..=8 {
            let attempts = wait_attempts(&h.base, &down, n).await;
            assert_eq!(attempts.len(), n, "{backend}");
            let newest = &attempts[0];
            assert_eq!(newest["attempt"], n, "{backend}");
            assert_eq!(newest["response_status"], 500, "{backend}");
            if n >= 2 {
                let gap = ms(&newest["attempted_at"]) - ms(&attempts[1]["attempted_at"]);
                let delay = LADDER_S[n - 2] * 1000;
                assert!(
                    gap >= delay * 4 / 5 && gap <= delay * 6 / 5 + 3000,
                    "{backend}: attempt {n} came {gap} ms after the last, not {delay} ms +-20 %"
                );
            }
            if n == 8 {
                assert!(newest["next_attempt_at"].is_null(), "{backend}: {newest}");
                break;
            }
            let due = ms(&newest["next_attempt_at"]);
            let ahead = due - h.clock.now_ms();
            h.clock.advance(Duration::from_millis(
                u64::try_from(ahead.max(0)).unwrap() + 500,
            ));
        }
        let got = receiver.got("down");
        assert_eq!(got.len(), 8, "{backend}");
        assert!(
            got.iter().all(|g| g.id == got[0].id),
            "one message, one webhook-id"
        );
        // 27.6 hours of failures: still enabled.
        let endpoint_path = format!("/v1/webhook_endpoints/{down}");
        let (_, endpoint) = call(&h.base, "GET", &endpoint_path, None).await;
        assert_eq!(endpoint["data"]["status"], "enabled", "{backend}");
        assert!(receiver.got("watcher").is_empty(), "{backend}");
        // Five days after the first failure, the next failed attempt disables it, and the
        // watcher is told.
        let first = ms(&wait_attempts(&h.base, &down, 8).await[7]["attempted_at"]);
        let to = first + 5 * DAY_MS + 60_000 - h.clock.now_ms();
        h.clock
            .advance(Duration::from_millis(u64::try_from(to).unwrap()));
        send_test(&h.base, &down).await;
        let told = receiver.wait_for("watcher", 1).await;
        assert_eq!(told.len(), 1, "{backend}");
        let body: Value = serde_json::from_str(&told[0].body).unwrap();
        assert_eq!(body["type"], "webhook_endpoint.disabled");
        assert_eq!(body["data"]["id"], down.as_str());
        let (_, endpoint) = call(&h.base, "GET", &endpoint_path, None).await;
        assert_eq!(endpoint["data"]["status"], "disabled", "{backend}");
        // Enabled again, the 5 days start afresh: a failure does not disable it.
        let enable = json!({"status": "enabled"});
        let (status, _) = call(&h.base, "PATCH", &endpoint_path, Some(enable)).await;
        assert_eq!(status, 200);
        send_test(&h.base, &down).await;
        wait_attempts(&h.base, &down, 10).await;
        let (_, endpoint) = call(&h.base, "GET", &endpoint_path, None).await;
        assert_eq!(endpoint["data"]["status"], "enabled", "{backend}");
        assert_eq!(receiver.got("watcher").len(), 1, "{backend}");
        h.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_secret_that_does_not_read_fails_the_attempt_and_is_logged() {
    for store in TestStore::both() {
        let backend = store.backend;
        let dir = tempfile::tempdir().unwrap();
        let receiver = Receiver::start().await;
        let sites = write_sites(
            dir.path(),
            &[TestSite::api_managed("shop", 100_000, &[key(1)])
                .with(&format!("site_keys = [\"{}\"]", KeyHash::of_key(PK)))],
        );
        let port = free_port().to_string();
        let sites_arg = sites.display().to_string();
        let argv = [
            "--sites",
            &sites_arg,
            "--store",
            &store.url,
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--admin-listen",
            "127.0.0.1:0",
            "--webhook-allow-http",
            "--webhook-allow-private",
            "127.0.0.0/8",
        ];
        let server = Binary::start(&argv, &[], &dir.path().join("stderr.txt"));
        server.wait_ready().await;
        let base = format!("http://{}", server.api);
        let (id, _) = register(&base, &receiver.on("unsigned", &[]), &["nudge.shown"]).await;
        let damaged =
            format!("UPDATE webhook_endpoints SET secret = 'whsec_tooShort' WHERE id = '{id}'");
        crate::store::raw_sql(&store, None, &[damaged]).await;
        send_test(&base, &id).await;
        let attempts = wait_attempts(&base, &id, 1).await;
        assert!(
            attempts[0]["response_status"].is_null(),
            "{backend}: {attempts:?}"
        );
        let error = attempts[0]["error"].as_str().unwrap();
        assert!(
            error.contains("not sent: the endpoint's stored secret does not read")
                && error.contains("rotate_secret"),
            "{backend}: {error}"
        );
        assert!(
            !attempts[0]["next_attempt_at"].is_null(),
            "{backend}: retried on the ladder"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            receiver.got("unsigned").is_empty(),
            "{backend}: sent unsigned"
        );
        let log = server.stderr();
        assert!(
            log.contains("ERROR") && log.contains("a stored signing secret does not read"),
            "{backend}: {log}"
        );
        // A rotation replaces it (no previous secret kept): the next message goes out signed
        // by the new secret alone.
        let (status, rotated) = call(
            &base,
            "POST",
            &format!("/v1/webhook_endpoints/{id}/rotate_secret"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{rotated}");
        let secret = rotated["data"]["secret"].as_str().unwrap().to_owned();
        send_test(&base, &id).await;
        let got = receiver.wait_for("unsigned", 1).await;
        assert_eq!(got.len(), 1, "{backend}");
        assert_eq!(got[0].signature.split(' ').count(), 1, "{backend}");
        verify(&secret, &got[0]).unwrap();
    }
}
