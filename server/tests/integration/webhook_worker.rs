//! The webhook delivery worker on instances of its own (docs/WEBHOOKS.md "Running the worker on
//! its own"), with the built binary: an API instance started with `--webhook-worker off`
//! delivers nothing, and `nudge-rules-server worker` instances on the same PostgreSQL deliver
//! each message exactly once; a SQLite store refuses the split with a message that says why.

use std::time::Duration;

use nudge_rules_server::domain::time::format_ms;
use nudge_rules_server::sites::keys::KeyHash;
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;
use crate::webhooks::{PK, Receiver, register, relay, verify};

/// The flags every instance of these tests shares: receivers on the loopback.
const OPEN: [&str; 3] = [
    "--webhook-allow-http",
    "--webhook-allow-private",
    "127.0.0.0/8",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_instance_with_the_worker_off_and_worker_instances_deliver_each_message_once() {
    let store = TestStore::postgres();
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start().await;
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 100_000, &[key(1)])
            .with(&format!("site_keys = [\"{}\"]", KeyHash::of_key(PK)))],
    );
    let sites_arg = sites.display().to_string();
    let listen = format!("127.0.0.1:{}", free_port());
    let mut argv = vec![
        "--sites",
        &sites_arg,
        "--store",
        &store.url,
        "--listen",
        &listen,
        "--admin-listen",
        "127.0.0.1:0",
        "--webhook-worker",
        "off",
    ];
    argv.extend(OPEN);
    let api = Binary::start(&argv, &[], &dir.path().join("api.txt"));
    api.wait_ready().await;
    let base = format!("http://{}", api.api);
    let (_, secret) = register(&base, &receiver.on("split", &[]), &["nudge.shown"]).await;
    let now = now_ms();
    let n = 200;
    for batch in 0..4 {
        let events: Vec<Value> = (0..n / 4)
            .map(|i| {
                let k = batch * 1000 + i;
                json!({"message_id": format!("m{k}"), "session_id": format!("sess_split{k}"), "type": "NUDGE_SHOWN", "occurred_at": format_ms(now - 1000), "nudge_id": format!("nudg_split{k}"), "nudge_type": "toast", "rule_id": "r"})
            })
            .collect();
        relay(&base, json!(events)).await;
    }
    // The API instance wrote the outbox and delivers none of it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        receiver.got("split").is_empty(),
        "the API instance delivered"
    );
    // Two workers: the messages are delivered once between them.
    let worker_argv: Vec<&str> = [
        "--store",
        store.url.as_str(),
        "--admin-listen",
        "127.0.0.1:0",
    ]
    .into_iter()
    .chain(OPEN)
    .collect();
    let workers = [
        Binary::worker(&worker_argv, &[], &dir.path().join("worker1.txt")),
        Binary::worker(&worker_argv, &[], &dir.path().join("worker2.txt")),
    ];
    for worker in &workers {
        worker.wait_ready().await;
        let (status, body) = admin_get(worker.admin, "/readyz").await;
        assert_eq!(status, 200);
        assert!(body.contains("\"role\":\"webhook_worker\""), "{body}");
    }
    let got = receiver.wait_for("split", n).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let got_after = receiver.got("split");
    let mut ids: Vec<&str> = got_after.iter().map(|g| g.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(got.len(), n);
    assert_eq!(ids.len(), n, "distinct messages");
    assert_eq!(got_after.len(), n, "an attempt was taken twice");
    verify(&secret, &got_after[0]).unwrap();
    // The workers' metrics count every attempt; the API instance's none.
    let mut delivered = 0.0;
    for worker in &workers {
        let (_, text) = admin_get(worker.admin, "/metrics").await;
        delivered += metric(&text, "nudge_webhook_attempts_total{outcome=\"delivered\"}");
    }
    assert_eq!(delivered, n as f64);
    let (_, text) = admin_get(api.admin, "/metrics").await;
    assert_eq!(
        metric(&text, "nudge_webhook_attempts_total{outcome=\"delivered\"}"),
        0.0
    );
    // SIGTERM stops a worker cleanly: its /readyz goes, it exits 0.
    let [mut first, _second] = workers;
    first.terminate();
    assert_eq!(first.wait_exit(Duration::from_secs(10)), Some(0));
    assert!(
        first.stderr().contains("webhook worker: stopped"),
        "{}",
        first.stderr()
    );
}

#[test]
fn a_sqlite_store_refuses_the_split_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 1000, &[key(1)])],
    );
    let store = format!("sqlite:{}", dir.path().join("store.db").display());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_nudge-rules-server"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let sites_arg = sites.display().to_string();
    let (code, said) = run(&[
        "--sites",
        &sites_arg,
        "--store",
        &store,
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--webhook-worker",
        "off",
    ]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("--webhook-worker off needs a PostgreSQL store"),
        "{said}"
    );
    assert!(said.contains("--webhook-worker on, the default"), "{said}");
    let (code, said) = run(&["worker", "--store", &store, "--admin-listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("the worker needs a PostgreSQL store"),
        "{said}"
    );
    let (code, said) = run(&["--demo", "--webhook-worker", "maybe"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("'maybe'") && said.contains("on, off"),
        "{said}"
    );
    assert!(
        !dir.path().join("store.db").exists(),
        "refused before the store was made"
    );
}
