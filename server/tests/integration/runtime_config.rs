//! The config for storefront pages over real HTTP (docs/contract/storefront.md): `GET /v1/runtime/config?key=pk_...`
//! on both stores: the key's site and mode, the published version or the file's SHA-256 prefix,
//! `ETag` and 304, the cache headers, gzip, CORS for any origin, 401 for secret keys, and a new
//! version served within 2 s (on the publishing instance, and on another one sharing the store).

use std::io::Read as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nudge_rules_server::clock::SystemClock;
use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::sites::keys::KeyHash;
use serde_json::{Value, json};

use crate::common::*;
use crate::pg::TestStore;

const PK: &str = "pk_test_runtimeKey00000001";
const PK_LIVE: &str = "pk_live_runtimeKey00000001";
const PK_FILE: &str = "pk_test_runtimeFile0000001";

/// Sites: `shop` (API-managed; secret keys `key(1)` and `live_key(1)`, publishable `PK` and
/// `PK_LIVE`, a rate limit of 3 requests a minute), `file` (the storefront config file,
/// publishable `PK_FILE`).
fn sites(dir: &std::path::Path) -> std::path::PathBuf {
    let shop_keys = format!(
        "site_keys = [\"{}\", \"{}\"]",
        KeyHash::of_key(PK),
        KeyHash::of_key(PK_LIVE)
    );
    let file_keys = format!("site_keys = [\"{}\"]", KeyHash::of_key(PK_FILE));
    write_sites(
        dir,
        &[
            TestSite::api_managed("shop", 3, &[key(1), live_key(1)]).with(&shop_keys),
            TestSite::new("file", STOREFRONT, 100_000, &[key(2)]).with(&file_keys),
        ],
    )
}

struct Got {
    status: u16,
    headers: reqwest::header::HeaderMap,
    bytes: Vec<u8>,
}

impl Got {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes)
            .unwrap_or_else(|e| panic!("{} {:?}: {e}", self.status, self.bytes))
    }
}

async fn get(url: &str, headers: &[(&str, &str)]) -> Got {
    request("GET", url, headers).await
}

async fn request(method: &str, url: &str, headers: &[(&str, &str)]) -> Got {
    let mut request = client().request(method.parse().unwrap(), url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    Got {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        bytes: response.bytes().await.unwrap().to_vec(),
    }
}

fn storefront() -> Value {
    serde_json::from_str(STOREFRONT).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keys_config_with_etag_304_gzip_cors_and_a_new_version_within_2_s() {
    for test_store in TestStore::both() {
        let backend = test_store.backend;
        let dir = tempfile::tempdir().unwrap();
        let server = start_with_store(&sites(dir.path()), &test_store.url).await;
        let base = format!("http://{}", server.api_addr());
        let url = format!("{base}/v1/runtime/config?key={PK}");

        // Before the first version: version 0, a config with no rules.
        let first = get(&url, &[("origin", "https://shop.example")]).await;
        assert_eq!(first.status, 200, "{backend}");
        assert_eq!(
            first.json(),
            json!({"data": {"version": 0, "config": {"version": 1}}})
        );
        assert_eq!(first.header("access-control-allow-origin"), "*");
        assert!(
            first
                .header("access-control-expose-headers")
                .contains("ETag")
        );
        assert_eq!(
            first.header("cache-control"),
            "public, max-age=60, stale-while-revalidate=240"
        );
        assert_eq!(first.header("content-type"), "application/json");
        let etag0 = first.header("etag").to_owned();
        assert!(etag0.starts_with("W/\""), "{etag0}");

        // Publish version 1 with the secret key: the page's endpoint serves it within 2 s.
        let published = client()
            .post(format!("{base}/v1/config/versions"))
            .bearer_auth(key(1))
            .header("if-none-match", "*")
            .json(&json!({"config": storefront(), "message": "first"}))
            .send()
            .await
            .unwrap();
        assert_eq!(published.status(), 201, "{backend}");
        let at = Instant::now();
        let v1 = loop {
            let got = get(&url, &[]).await;
            if got.json()["data"]["version"] == 1 {
                break got;
            }
            assert!(
                at.elapsed() < Duration::from_secs(2),
                "{backend}: v1 not served within 2 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(v1.json()["data"]["config"], storefront());
        let etag1 = v1.header("etag").to_owned();
        assert_ne!(etag1, etag0);
        assert_eq!(v1.header("nudge-config-version"), "1");

        // 304 on a matching If-None-Match (weak or strong form, in a list), 200 on an old one.
        for inm in [
            etag1.clone(),
            etag1.trim_start_matches("W/").to_owned(),
            format!("\"other\", {etag1}"),
        ] {
            let again = get(&url, &[("if-none-match", &inm)]).await;
            assert_eq!(again.status, 304, "{backend} {inm}");
            assert!(again.bytes.is_empty());
            assert_eq!(again.header("etag"), etag1);
            assert_eq!(again.header("access-control-allow-origin"), "*");
            assert_eq!(
                again.header("cache-control"),
                "public, max-age=60, stale-while-revalidate=240"
            );
        }
        assert_eq!(get(&url, &[("if-none-match", &etag0)]).await.status, 200);

        // gzip when asked, the same JSON once inflated; not when refused.
        let zipped = get(&url, &[("accept-encoding", "br, gzip")]).await;
        assert_eq!(zipped.status, 200);
        assert_eq!(zipped.header("content-encoding"), "gzip");
        assert_eq!(zipped.header("vary"), "Accept-Encoding");
        assert!(
            zipped.bytes.len() < v1.bytes.len() / 2,
            "{} bytes",
            zipped.bytes.len()
        );
        let mut inflated = String::new();
        flate2::read::GzDecoder::new(zipped.bytes.as_slice())
            .read_to_string(&mut inflated)
            .unwrap();
        assert_eq!(inflated.as_bytes(), v1.bytes.as_slice());
        let plain = get(&url, &[("accept-encoding", "gzip;q=0, identity")]).await;
        assert_eq!(plain.header("content-encoding"), "");
        assert_eq!(plain.bytes, v1.bytes);

        // The key in the header works too; the live key reads the live mode (nothing published).
        let header_key = get(
            &format!("{base}/v1/runtime/config"),
            &[("authorization", &format!("Bearer {PK}"))],
        )
        .await;
        assert_eq!(header_key.json()["data"]["version"], 1);
        let live = get(&format!("{base}/v1/runtime/config?key={PK_LIVE}"), &[]).await;
        assert_eq!(live.json()["data"]["version"], 0);

        // Not rate limited: the site's secret keys have 3 requests a minute; pages many more.
        for _ in 0..20 {
            assert_eq!(get(&url, &[]).await.status, 200);
        }

        // Refusals: secret keys, unknown or malformed keys, no key, other parameters, methods.
        let secret = get(&format!("{base}/v1/runtime/config?key={}", key(1)), &[]).await;
        assert_eq!(secret.status, 401);
        assert!(
            secret.json()["message"]
                .as_str()
                .unwrap()
                .contains("must never be put in a page"),
            "{}",
            secret.json()
        );
        assert!(secret.header("www-authenticate").starts_with("Bearer"));
        assert_eq!(secret.header("access-control-allow-origin"), "*");
        let secret_header = get(
            &format!("{base}/v1/runtime/config"),
            &[("authorization", &format!("Bearer {}", key(1)))],
        )
        .await;
        assert_eq!(secret_header.status, 401);
        for (query, status, words) in [
            ("key=pk_test_unknownKey00000001", 401, "not valid"),
            ("key=pk_test_short", 401, "publishable key"),
            ("", 401, "missing key"),
            ("key=a&key=b", 400, "more than once"),
            (
                &format!("key={PK}&site=x") as &str,
                400,
                "unknown query parameter",
            ),
        ] {
            let got = get(&format!("{base}/v1/runtime/config?{query}"), &[]).await;
            assert_eq!(got.status, status, "{query}");
            let message = got.json()["message"].as_str().unwrap().to_owned();
            assert!(message.contains(words), "{query}: {message}");
        }
        let both = get(&url, &[("authorization", &format!("Bearer {PK_LIVE}"))]).await;
        assert_eq!(both.status, 400);
        let post = request("POST", &url, &[]).await;
        assert_eq!(post.status, 405);
        assert_eq!(post.header("allow"), "GET, HEAD, OPTIONS");
        let preflight = request(
            "OPTIONS",
            &url,
            &[
                ("origin", "https://anywhere.example"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "if-none-match"),
            ],
        )
        .await;
        assert_eq!(preflight.status, 204);
        assert_eq!(preflight.header("access-control-allow-origin"), "*");
        assert!(
            preflight
                .header("access-control-allow-headers")
                .contains("If-None-Match")
        );
        // A publishable key still reads nothing else (docs/contract/relay.md).
        let sessions = client()
            .get(format!("{base}/v1/sessions"))
            .bearer_auth(PK)
            .send()
            .await
            .unwrap();
        assert_eq!(sessions.status(), 401);
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_managed_site_is_served_by_its_sha256_prefix_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let file_keys = format!("site_keys = [\"{}\"]", KeyHash::of_key(PK_FILE));
    let sites = write_sites(
        dir.path(),
        &[TestSite::new("file", STOREFRONT, 100_000, &[key(2)]).with(&file_keys)],
    );
    let server = start(&sites, options(), Arc::new(SystemClock::new())).await;
    let base = format!("http://{}", server.api_addr());
    let url = format!("{base}/v1/runtime/config?key={PK_FILE}");
    let got = get(&url, &[]).await;
    assert_eq!(got.status, 200);
    let sha = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(STOREFRONT.as_bytes()))
    };
    assert_eq!(got.json()["data"]["version"], json!(sha[..12]));
    assert_eq!(got.json()["data"]["config"], storefront());
    // The same version a preview answers with.
    let preview = preview(&client(), server.api_addr(), &key(2), REQUEST).await;
    assert_eq!(
        header(&preview, "nudge-config-version"),
        got.header("nudge-config-version")
    );

    // The file changes: the new config is served within 2 s, with another ETag.
    let mut changed = storefront();
    changed["rules"].as_array_mut().unwrap().truncate(1);
    let text = serde_json::to_string_pretty(&changed).unwrap();
    std::fs::write(dir.path().join("file.json"), &text).unwrap();
    let at = Instant::now();
    loop {
        let again = get(&url, &[]).await;
        if again.json()["data"]["config"] == changed {
            assert_ne!(again.header("etag"), got.header("etag"));
            break;
        }
        assert!(
            at.elapsed() < Duration::from_secs(2),
            "the new file was not served within 2 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_published_through_one_instance_reaches_pages_of_another_within_2_s() {
    let test_store = TestStore::postgres();
    let dir = tempfile::tempdir().unwrap();
    let sites = sites(dir.path());
    // The default poll interval, not the tests' fast one.
    let options = ServeConfig {
        store: Some(test_store.url.clone()),
        cursor_secret: Some(vec![42; 32]),
        reload_interval: Duration::from_millis(1000),
        ..options()
    };
    let a = start(&sites, options.clone(), Arc::new(SystemClock::new())).await;
    let b = start(&sites, options, Arc::new(SystemClock::new())).await;
    let page_url = format!("http://{}/v1/runtime/config?key={PK}", b.api_addr());
    assert_eq!(get(&page_url, &[]).await.json()["data"]["version"], 0);
    let published = client()
        .post(format!("http://{}/v1/config/versions", a.api_addr()))
        .bearer_auth(key(1))
        .header("if-none-match", "*")
        .json(&json!({"config": storefront()}))
        .send()
        .await
        .unwrap();
    assert_eq!(published.status(), 201);
    let at = Instant::now();
    while get(&page_url, &[]).await.json()["data"]["version"] != 1 {
        assert!(
            at.elapsed() < Duration::from_secs(2),
            "v1 did not reach instance b within 2 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.shutdown().await;
    b.shutdown().await;
}
