//! The built `nudge-rules-server` binary: keys never in its logs, SIGTERM drains, a bad sites
//! file stops the start with every error, `hash-key`, and `--demo` (what `make serve` runs).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use nudge_rules_server::sites::keys::KeyHash;
use nudge_rules_server::{DEMO_KEY, DEMO_SITE_KEY};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

const BIN: &str = env!("CARGO_BIN_EXE_nudge-rules-server");

fn listen_args(sites: &std::path::Path) -> Vec<String> {
    [
        "--sites",
        sites.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
        "--reload-interval-ms",
        "20",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_never_appear_in_logs() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[
            TestSite::new("shop", STOREFRONT, 2, &[key(1)]),
            TestSite::new("broken", "{", 1000, &[key(2)]),
        ],
    );
    let args = listen_args(&sites);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut server = Binary::start(
        &args,
        &[("RUST_LOG", "trace")],
        &dir.path().join("stderr.log"),
    );
    server.wait_ready().await;
    let client = client();
    let api = server.api;
    let unknown = key(77);
    let malformed = "sk_live_shortKey";
    for _ in 0..3 {
        preview(&client, api, &key(1), REQUEST).await; // 200, 200, 429
    }
    preview(&client, api, &key(1), "{bad json").await;
    preview(&client, api, &key(2), REQUEST).await; // 500
    preview(&client, api, &unknown, REQUEST).await; // 401
    preview(&client, api, malformed, REQUEST).await; // 401
    // Keys where they do not belong: in the query and the path.
    let _ = client
        .post(format!("http://{api}/v1/nudges/preview?api_key={}", key(1)))
        .bearer_auth(key(1))
        .header("content-type", "application/json")
        .body(REQUEST)
        .send()
        .await
        .unwrap();
    let _ = client
        .get(format!("http://{api}/v1/{}", key(1)))
        .send()
        .await
        .unwrap();
    // A config reload that is refused.
    std::fs::write(
        dir.path().join("shop.json"),
        "{\"version\": 1, \"rulez\": []}",
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.terminate();
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));

    let log = format!("{}\n{}", server.stderr(), server.stdout());
    assert!(
        log.lines().count() > 10,
        "too little was logged to mean anything:\n{log}"
    );
    for k in [key(1), key(2), unknown.clone(), malformed.to_owned()] {
        let secret = k
            .strip_prefix("sk_test_")
            .or(k.strip_prefix("sk_live_"))
            .unwrap();
        assert!(!log.contains(secret), "a key is in the log: {k}\n{log}");
        let full_hash = KeyHash::of_key(&k).to_string();
        assert!(
            !log.contains(&full_hash["sha256:".len()..]),
            "a full key hash is in the log"
        );
    }
    // A log line names a key by the first 8 hex digits of its hash.
    assert!(log.contains(&KeyHash::of_key(&key(1)).log_id()), "{log}");
    assert!(log.contains("config refused"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_in_flight_requests_and_refuses_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 1000, &[key(1)])],
    );
    let args = listen_args(&sites);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut server = Binary::start(&args, &[], &dir.path().join("stderr.log"));
    server.wait_ready().await;

    // A connection the server has accepted and served once (keep-alive), then a request in
    // flight on it: head and half the body sent.
    let mut in_flight = TcpStream::connect(server.api).await.unwrap();
    let request = |body: &str| {
        format!(
            "POST /v1/nudges/preview HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            key(1),
            REQUEST.len()
        )
    };
    in_flight
        .write_all(request(REQUEST).as_bytes())
        .await
        .unwrap();
    let mut first_answer = Vec::new();
    while !String::from_utf8_lossy(&first_answer).ends_with("}}}") {
        let mut buf = [0u8; 4096];
        let n = in_flight.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "closed early: {}",
            String::from_utf8_lossy(&first_answer)
        );
        first_answer.extend_from_slice(&buf[..n]);
    }
    assert!(first_answer.starts_with(b"HTTP/1.1 200"));
    let (first, second) = REQUEST.split_at(REQUEST.len() / 2);
    in_flight
        .write_all(request(first).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;

    server.terminate();
    // Draining: /readyz says so while the admin listener is still up, and the public listener
    // accepts no new connection.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = admin_get(server.admin, "/readyz").await;
        if status == 503 {
            assert!(body.contains("shutting_down"), "{body}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/readyz never turned 503"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        TcpStream::connect(server.api).await.is_err(),
        "a new connection was accepted"
    );

    // The request in flight finishes with its answer.
    in_flight.write_all(second.as_bytes()).await.unwrap();
    let (answer, closed) = read_until_close(&mut in_flight, Duration::from_secs(10)).await;
    assert!(closed);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"would_fire\":true"), "{answer}");
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
}

#[test]
fn a_bad_sites_file_stops_the_start_with_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites.toml");
    std::fs::write(
        &sites,
        "[[site]]\nid = \"shop one\"\nconfig = \"missing.json\"\nrate_limit = 0\nkeys = [\"sk_live_aaaaaaaaaaaaaaaaaaaa\"]\nlimit = 3\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(listen_args(&sites))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("is invalid: 5 errors"), "{stderr}");
    for expected in [
        "site[0].limit: unknown field \"limit\"",
        "site[0].id: site id \"shop one\" contains ' '",
        "site[0].config: cannot read",
        "site[0].rate_limit: rate_limit must be an integer from 1 to 100000",
        "site[0].keys[0]: this is an API key in clear",
        "(line 4, column 14)",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in\n{stderr}"
        );
    }
    assert!(!stderr.contains("aaaaaaaaaaaaaaaaaaaa"));
}

#[test]
fn a_redis_timeout_out_of_range_is_refused_naming_the_flag_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 10, &[key(1)])],
    );
    for bad in ["0", "60001", "soon"] {
        let out = Command::new(BIN)
            .args(listen_args(&sites))
            .args(["--redis", "redis://127.0.0.1:1", "--redis-timeout-ms", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(&format!("'{bad}'")) && stderr.contains("--redis-timeout-ms"),
            "{stderr}"
        );
    }
}

#[test]
fn hash_key_prints_the_sites_file_line() {
    let out = Command::new(BIN)
        .args(["hash-key", &key(5)])
        .output()
        .unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        line.trim(),
        format!("keys = [\"{}\"]", KeyHash::of_key(&key(5)))
    );

    let mut child = Command::new(BIN)
        .args(["hash-key", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{}", key(5)).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), line);

    let out = Command::new(BIN)
        .args(["hash-key", "sk_test_short"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_mode_serves_the_storefront_with_the_printed_key() {
    let dir = tempfile::tempdir().unwrap();
    // The demo's store goes to the temp folder. Stores left there by demo processes that were
    // killed are removed at start; a live process's store stays.
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let abandoned = [
        "nudge-rules-demo-4000000000.db",
        "nudge-rules-demo-4000000000.db-wal",
    ];
    let kept = [
        format!("nudge-rules-demo-{}.db", std::process::id()),
        "nudge-rules-demo-x.db".to_owned(),
        "notes.db".to_owned(),
    ];
    for name in abandoned
        .iter()
        .copied()
        .chain(kept.iter().map(String::as_str))
    {
        std::fs::write(temp.join(name), "").unwrap();
    }
    let mut server = Binary::start(
        &[
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
        ],
        &[("TMPDIR", temp.to_str().unwrap())],
        &dir.path().join("stderr.log"),
    );
    server.wait_ready().await;
    for name in abandoned {
        assert!(!temp.join(name).exists(), "{name} was left");
    }
    for name in &kept {
        assert!(temp.join(name).exists(), "{name} was removed");
    }
    // What `make serve` prints: the test key, the publishable key and the relay's URL, and a
    // curl line that works as printed.
    let printed = server.stdout();
    assert!(
        printed.contains(&format!("test key {DEMO_KEY}")),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("publishable key {DEMO_SITE_KEY}")),
        "{printed}"
    );
    let relay_url = printed
        .lines()
        .find_map(|l| l.strip_prefix("relay: POST "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no relay line in {printed}"));
    assert!(
        relay_url.starts_with("http://127.0.0.1:") && relay_url.ends_with("/v1/events"),
        "{relay_url}"
    );
    let curl = printed
        .lines()
        .find_map(|l| l.strip_prefix("try: "))
        .unwrap_or_else(|| panic!("no curl line in {printed}"))
        .to_owned();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("sh").args(["-c", &curl]).output().unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "curl failed (is curl installed?): {out:?}"
    );
    let body = String::from_utf8(out.stdout).unwrap();
    assert!(body.starts_with("{\"data\":{\"would_fire\":true"), "{body}");
    assert!(body.contains("\"cta\":\"Start chat\""), "{body}");
    // The demo's holdout traffic (docs/contract/caps.md): one rule lifting conversion, one not, one without
    // enough data.
    let report: serde_json::Value = client()
        .get(format!("http://{}/v1/reports/uplift", server.api))
        .bearer_auth(DEMO_KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rules = report["data"]["rules"].as_array().unwrap();
    let line = |id: &str| {
        rules
            .iter()
            .find(|r| r["rule_id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {report}"))
            .clone()
    };
    let lift = line("sale-toast");
    assert_eq!(lift["enough_data"], true, "{lift}");
    assert!(lift["uplift"]["ci95"][0].as_f64().unwrap() > 0.0, "{lift}");
    let flat = line("free-shipping-bar");
    assert_eq!(flat["enough_data"], true, "{flat}");
    assert!(flat["uplift"]["ci95"][0].as_f64().unwrap() < 0.0, "{flat}");
    assert!(flat["uplift"]["ci95"][1].as_f64().unwrap() > 0.0, "{flat}");
    assert_eq!(line("welcome-bar")["enough_data"], false);

    let out = Command::new(BIN)
        .args(["--demo", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "--demo must refuse a public address"
    );
    server.terminate();
    assert_eq!(server.wait_exit(Duration::from_secs(10)), Some(0));
    // Its own store is gone at a clean exit.
    let mut left: Vec<String> = std::fs::read_dir(&temp)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let mut want = kept.to_vec();
    want.sort();
    assert_eq!(left, want);
}
