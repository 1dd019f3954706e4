//! Hardening found by a trial from outside (issue "The whole API", docs/contract/server.md): bounded request
//! heads and connections, a whole-body deadline, `Connection: close` after early answers, one
//! `Content-Type` and one `Host`, no transfer codings, JSON bodies on hyper's own errors, and a
//! Redis error of one key kept to that key. Each of these failed before its fix.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nudge_rules_server::clock::SystemClock;
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::runtime::Server;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::common::*;

async fn shop(options: ServeConfig) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 100_000, &[key(1)])],
    );
    let server = start(&sites, options, Arc::new(SystemClock::new())).await;
    (dir, server)
}

fn status_and_body(answer: &str) -> (u16, serde_json::Value) {
    let status = answer.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{answer:?}: {e}"));
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hypers_own_errors_carry_the_json_error_body() {
    let (_dir, server) = shop(options()).await;
    let addr = server.api_addr();
    let wait = Duration::from_secs(5);
    let big_header = format!(
        "GET /v1/sessions HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    for (request, status) in [
        (big_header.as_bytes(), 431),
        // Past the 16 KiB head bound before the target ends: 431 too.
        (long_target.as_bytes(), 431),
        (b"GARBAGE\r\n\r\n".as_slice(), 400),
    ] {
        let answer = raw_exchange(addr, request, wait).await;
        let (got, body) = status_and_body(&answer);
        assert_eq!(got, status, "{answer}");
        assert_eq!(body["error"], "InvalidRequest", "{answer}");
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("content-type: application/json")
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_host_one_content_type_and_no_transfer_codings() {
    let (_dir, server) = shop(options()).await;
    let addr = server.api_addr();
    let wait = Duration::from_secs(5);
    let auth = format!("Authorization: Bearer {}\r\n", key(1));
    let body = REQUEST;
    let cases = [
        (
            format!("GET /v1/sessions HTTP/1.1\r\n{auth}Connection: close\r\n\r\n"),
            400,
            "InvalidRequest",
        ),
        (
            format!(
                "GET /v1/sessions HTTP/1.1\r\nHost: a\r\nHost: b\r\n{auth}Connection: close\r\n\r\n"
            ),
            400,
            "InvalidRequest",
        ),
        (
            format!(
                "POST /v1/nudges/preview HTTP/1.1\r\nHost: a\r\n{auth}Content-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
            415,
            "UnsupportedMediaType",
        ),
        (
            format!(
                "POST /v1/nudges/preview HTTP/1.1\r\nHost: a\r\n{auth}Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            ),
            400,
            "InvalidRequest",
        ),
    ];
    for (request, status, error) in cases {
        let answer = raw_exchange(addr, request.as_bytes(), wait).await;
        let (got, json) = status_and_body(&answer);
        assert_eq!(
            (got, json["error"].as_str()),
            (status, Some(error)),
            "{request}\n{answer}"
        );
    }
    // HTTP/1.0 needs no Host.
    let answer = raw_exchange(
        addr,
        format!("GET /v1/sessions HTTP/1.0\r\n{auth}\r\n").as_bytes(),
        wait,
    )
    .await;
    assert_eq!(status_and_body(&answer).0, 503, "{answer}"); // no store in this server
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_early_answer_to_a_request_with_a_body_says_connection_close() {
    let (_dir, server) = shop(options()).await;
    let addr = server.api_addr();
    let body = REQUEST;
    let auth = format!("Authorization: Bearer {}\r\n", key(1));
    for (headers, status) in [
        (String::new(), 401),
        (format!("{auth}Content-Type: text/plain\r\n"), 415),
    ] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "POST /v1/nudges/preview HTTP/1.1\r\nHost: a\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let (answer, _) = read_until_close(&mut stream, Duration::from_secs(2)).await;
        assert_eq!(status_and_body(&answer).0, status, "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }
    // A request whose body was read keeps the connection: two previews on one connection.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let one = format!(
        "POST /v1/nudges/preview HTTP/1.1\r\nHost: a\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(format!("{one}{one}").as_bytes())
        .await
        .unwrap();
    let (answer, _) = read_until_close(&mut stream, Duration::from_millis(800)).await;
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 2, "{answer}");
    assert!(
        !answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_body_is_cut_at_the_whole_body_deadline() {
    let (_dir, server) = shop(ServeConfig {
        body_read_timeout: Duration::from_millis(500),
        body_total_timeout: Duration::from_millis(1500),
        ..options()
    })
    .await;
    let mut stream = TcpStream::connect(server.api_addr()).await.unwrap();
    let head = format!(
        "POST /v1/nudges/preview HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        key(1)
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let trickle = tokio::spawn(async move {
        // One byte every 300 ms: never a pause of 500 ms.
        for _ in 0..30 {
            if stream.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        stream
    });
    let mut stream = trickle.await.unwrap();
    let (answer, _) = read_until_close(&mut stream, Duration::from_secs(3)).await;
    assert_eq!(status_and_body(&answer).0, 408, "{answer}");
    assert!(started.elapsed() < Duration::from_secs(12));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_bound_are_refused_and_counted() {
    let (_dir, server) = shop(ServeConfig {
        max_connections: 5,
        header_read_timeout: Duration::from_secs(5),
        ..options()
    })
    .await;
    let addr = server.api_addr();
    let mut held = Vec::new();
    for _ in 0..5 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = raw_exchange(
        addr,
        b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\n\r\n",
        Duration::from_secs(3),
    )
    .await;
    let (status, body) = status_and_body(&answer);
    assert_eq!(status, 503, "{answer}");
    assert_eq!(body["error"], "ServiceUnavailable");
    let (_, metrics) = admin_get(server.admin_addr(), "/metrics").await;
    assert!(
        metric(&metrics, "nudge_connections_refused_total") >= 1.0,
        "{metrics}"
    );
    assert_eq!(metric(&metrics, "nudge_connections_open"), 5.0);
    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let response = preview(&client(), addr, &key(1), REQUEST).await;
    assert_eq!(response.status(), 200);
    server.shutdown().await;
}

/// The server binary's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_large_heads_hold_at_most_the_head_bound_each() {
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("shop", STOREFRONT, 1000, &[key(1)])],
    );
    let (api, admin) = (free_port(), free_port());
    let binary = Binary::start(
        &[
            "--sites",
            sites.to_str().unwrap(),
            "--listen",
            &format!("127.0.0.1:{api}"),
            "--admin-listen",
            &format!("127.0.0.1:{admin}"),
        ],
        &[],
        &dir.path().join("stderr.txt"),
    );
    binary.wait_ready().await;
    let pid = binary.child.id();
    let before = rss_kib(pid);
    let mut held = Vec::new();
    for _ in 0..400 {
        let mut stream = TcpStream::connect(("127.0.0.1", api)).await.unwrap();
        // 15 KiB of header, never finished (no blank line): just under the 16 KiB bound.
        let head = format!(
            "GET /v1/sessions HTTP/1.1\r\nHost: x\r\nX-Pad: {}",
            "p".repeat(15_000)
        );
        let _ = stream.write_all(head.as_bytes()).await;
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let grown_mib = rss_kib(pid).saturating_sub(before) as f64 / 1024.0;
    // Before the bound, 1,000 such connections took 390 MiB (about 400 KiB each); now each
    // holds its 16 KiB read buffer and little more.
    assert!(
        grown_mib < 40.0,
        "400 unfinished heads grew the server by {grown_mib:.1} MiB"
    );
    drop(held);
}
