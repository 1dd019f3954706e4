//! Several instances sharing one real `redis-server` (docs/contract/server.md "Several instances"): one limit
//! per key across instances; Redis killed mid-run: no 500, the local fallback shows in
//! `/metrics`, and the shared limit comes back with Redis.

use std::sync::Arc;
use std::time::Duration;

use nudge_rules_server::clock::SystemClock;
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::runtime::Server;

use crate::common::*;

/// Two instances of one site (limit 1,000, key `key(1)`) sharing `redis`, each falling back
/// when a Redis call takes longer than `redis_timeout`.
async fn two_instances(
    redis: &Redis,
    dir: &std::path::Path,
    redis_timeout: Duration,
) -> (Server, Server) {
    let sites = write_sites(dir, &[TestSite::new("shop", STOREFRONT, 1000, &[key(1)])]);
    let options = ServeConfig {
        redis_url: Some(redis.url()),
        redis_timeout,
        ..options()
    };
    let a = start(&sites, options.clone(), Arc::new(SystemClock::new())).await;
    let b = start(&sites, options, Arc::new(SystemClock::new())).await;
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_one_redis_admit_exactly_the_limit() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    // Exactness is the point here, not the fallback: a 10 s timeout keeps a loaded machine (a
    // Redis call stalled past the default 250 ms) from deciding a request locally.
    let (a, b) = two_instances(&redis, dir.path(), Duration::from_secs(10)).await;
    let client = client();

    let (mut admitted, mut refused) = (0, 0);
    for i in 0..1500 {
        let addr = if i % 2 == 0 {
            a.api_addr()
        } else {
            b.api_addr()
        };
        let r = preview(&client, addr, &key(1), REQUEST).await;
        match r.status().as_u16() {
            200 => {
                admitted += 1;
                // One window across both instances: Remaining counts the other's admissions.
                assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 1000 - admitted);
            }
            429 => {
                refused += 1;
                assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
                let reset = header_u64(&r, "x-ratelimit-reset");
                let retry_after = header_u64(&r, "retry-after");
                let now = unix_s();
                assert!(reset - retry_after <= now && reset - retry_after + 5 >= now);
            }
            other => panic!("status {other}"),
        }
    }
    assert_eq!((admitted, refused), (1000, 500));
    for server in [&a, &b] {
        let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
        assert_eq!(metric(&metrics, "nudge_redis_up"), 1.0);
        assert_eq!(metric(&metrics, "nudge_rate_limit_fallback_total"), 0.0);
    }
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_run_falls_back_without_a_500() {
    let mut redis = Redis::start();
    let port = redis.port;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_instances(&redis, dir.path(), ServeConfig::default().redis_timeout).await;
    let client = client();
    let run = |n: usize| {
        let client = client.clone();
        let addrs = [a.api_addr(), b.api_addr()];
        async move {
            let mut statuses = Vec::new();
            for i in 0..n {
                let r = preview(&client, addrs[i % 2], &key(1), REQUEST).await;
                assert!(r.headers().contains_key("x-ratelimit-remaining"));
                statuses.push(r.status().as_u16());
            }
            statuses
        }
    };

    assert!(run(100).await.iter().all(|&s| s == 200));
    redis.kill();
    let during = run(300).await;
    assert!(
        during.iter().all(|&s| s == 200),
        "statuses while Redis is down: {during:?}"
    );
    for server in [&a, &b] {
        let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
        assert_eq!(metric(&metrics, "nudge_redis_up"), 0.0, "{metrics}");
        assert!(metric(&metrics, "nudge_rate_limit_fallback_total") >= 100.0);
        assert!(metric(&metrics, "nudge_redis_errors_total") >= 1.0);
        assert_eq!(
            metric(
                &metrics,
                "nudge_http_requests_total{route=\"/v1/nudges/preview\",status=\"500\"}"
            ),
            0.0
        );
    }

    // Redis back on the same port: after the retry delay the instances share it again.
    let _redis = Redis::start_on(port);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(run(10).await.iter().all(|&s| s == 200));
    for server in [&a, &b] {
        let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
        assert_eq!(metric(&metrics, "nudge_redis_up"), 1.0);
    }
    a.shutdown().await;
    b.shutdown().await;
}

/// Sends one command to `redis` in RESP and returns the reply's first line.
fn redis_command(redis: &Redis, args: &[&str]) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redis.port)).unwrap();
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes()).unwrap();
    let mut buf = [0u8; 256];
    let n = stream.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_key_of_the_wrong_type_stays_that_keys_problem() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 1000, &[key(1), key(2)])],
    );
    let options = ServeConfig {
        redis_url: Some(redis.url()),
        ..options()
    };
    let server = start(&sites, options, Arc::new(SystemClock::new())).await;
    let client = client();
    // key(1)'s sliding log made a string: its script fails with WRONGTYPE.
    let hash = nudge_rules_server::sites::keys::KeyHash::of_key(&key(1));
    let log_key = format!("nudge-rules:rl:{{{hash}}}");
    assert_eq!(redis_command(&redis, &["SET", &log_key, "x"]), "+OK");
    for _ in 0..3 {
        assert_eq!(
            preview(&client, server.api_addr(), &key(1), REQUEST)
                .await
                .status(),
            200
        );
    }
    for _ in 0..5 {
        assert_eq!(
            preview(&client, server.api_addr(), &key(2), REQUEST)
                .await
                .status(),
            200
        );
    }
    let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
    assert_eq!(
        metric(&metrics, "nudge_redis_key_errors_total"),
        3.0,
        "{metrics}"
    );
    assert_eq!(metric(&metrics, "nudge_redis_up"), 1.0, "Redis is not down");
    assert_eq!(metric(&metrics, "nudge_redis_errors_total"), 0.0);
    // Only key(1)'s three requests were decided locally; key(2) stayed in Redis.
    assert_eq!(metric(&metrics, "nudge_rate_limit_fallback_total"), 3.0);
    let zcard = redis_command(
        &redis,
        &[
            "ZCARD",
            &format!(
                "nudge-rules:rl:{{{}}}",
                nudge_rules_server::sites::keys::KeyHash::of_key(&key(2))
            ),
        ],
    );
    assert_eq!(zcard, ":5");
    server.shutdown().await;
}
