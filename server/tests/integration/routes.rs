//! The route table (`http/routes/mod.rs`) over real HTTP: every route it lists answers each of
//! its methods (no 404, no 405), every other method gets a 405 whose `Allow` names the table's
//! methods, the 404 lists every route, and each request is counted under the route's label.

use std::collections::BTreeSet;

use nudge_rules_server::config::ServeConfig;
use nudge_rules_server::http::routes::{ROUTES, served};

use crate::common::*;
use crate::pg::TestStore;

/// A route's path with each `{param}` filled in.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|part| if part.starts_with('{') { "x1" } else { part })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_of_the_table_answers_and_the_404_lists_them_all() {
    let store = TestStore::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let sites = write_sites(
        dir.path(),
        &[TestSite::api_managed("shop", 100_000, &[key(1)])],
    );
    let options = ServeConfig {
        store: Some(store.url.clone()),
        cursor_secret: Some(vec![5; 32]),
        constant_route: true,
        ..options()
    };
    let server = start(
        &sites,
        options,
        std::sync::Arc::new(nudge_rules_server::clock::SystemClock::new()),
    )
    .await;
    let base = format!("http://{}", server.api_addr());
    let client = client();
    let all = [
        reqwest::Method::GET,
        reqwest::Method::HEAD,
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::PATCH,
        reqwest::Method::DELETE,
        reqwest::Method::OPTIONS,
    ];
    assert_eq!(served(true).count(), ROUTES.len());
    for route in &ROUTES {
        let url = format!("{base}{}", concrete(route.path));
        let methods: BTreeSet<&str> = route.methods.iter().map(|m| m.as_str()).collect();
        for method in &all {
            // No key: keyed routes stop at the admission layer (401), the others at their
            // own checks; none is a 404 or a 405 for a method the table lists.
            let response = client.request(method.clone(), &url).send().await.unwrap();
            let status = response.status().as_u16();
            if methods.contains(method.as_str()) {
                assert!(
                    status != 404 && status != 405,
                    "{method} {}: {status}",
                    route.path
                );
            } else {
                assert_eq!(status, 405, "{method} {}", route.path);
                assert_eq!(header(&response, "allow"), route.allow(), "{}", route.path);
                if *method != reqwest::Method::HEAD {
                    let body: serde_json::Value = response.json().await.unwrap();
                    assert_eq!(body["error"], "MethodNotAllowed");
                }
            }
        }
    }
    let response = client.get(format!("{base}/v1/nope")).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    let serves = message
        .strip_prefix("no endpoint at GET /v1/nope; this server serves: ")
        .unwrap();
    let listed: Vec<String> = ROUTES.iter().map(|r| r.words()).collect();
    assert_eq!(serves.split("; ").collect::<Vec<_>>(), listed);
    // Each route's requests are counted under its label, the 404 under `unmatched`.
    let metrics = client
        .get(format!("http://{}/metrics", server.admin_addr()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for route in &ROUTES {
        let counted = format!("route=\"{}\"", route.label);
        assert!(metrics.contains(&counted), "{counted} not in /metrics");
    }
    assert!(
        metrics.contains("route=\"unmatched\",status=\"404\""),
        "{metrics}"
    );
    server.shutdown().await;
}

/// Without `--constant-route` the benchmark's route is not served, nor named by the 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_benchmarks_route_is_served_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let server = storefront(dir.path(), 1000).await;
    let base = format!("http://{}", server.api_addr());
    let response = client()
        .post(format!("{base}/v1/_bench/constant"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    let (_, serves) = message.split_once("this server serves: ").unwrap();
    let listed: Vec<String> = served(false).map(|r| r.words()).collect();
    assert_eq!(serves.split("; ").collect::<Vec<_>>(), listed);
    assert!(!serves.contains("/v1/_bench/constant"), "{message}");
    server.shutdown().await;
}
