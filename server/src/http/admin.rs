//! The admin listener (docs/contract/server.md "Operations"): `/healthz`, `/readyz`, `/metrics`, `/openapi.json`
//! and `/sites` (each site's config state and its latest refused config with every
//! diagnostic); a worker instance's ([`worker_router`]) has the first three. It has no
//! authentication: bind it to a private address.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::app::state::{AppState, Unavailable};
use crate::metrics::Metrics;
use crate::store::Store;

/// The admin router.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route("/sites", get(sites))
        .fallback(|| async {
            crate::http::error::error(
                StatusCode::NOT_FOUND,
                "NotFound",
                "the admin listener serves /healthz, /readyz, /metrics, /openapi.json and /sites",
            )
        })
        .with_state(state)
}

/// What a worker instance's admin listener reads.
struct WorkerAdmin {
    store: Store,
    metrics: Arc<Metrics>,
    draining: Arc<AtomicBool>,
}

/// The admin router of a worker instance (`nudge-rules-server worker`): `/healthz`, `/readyz`
/// (200 while the store answers and the worker runs; 503 while the store is unreachable and
/// once `draining` is set) and `/metrics` (the attempts' counts, the store's gauge).
pub fn worker_router(store: Store, metrics: Arc<Metrics>, draining: Arc<AtomicBool>) -> Router {
    let admin = Arc::new(WorkerAdmin {
        store,
        metrics,
        draining,
    });
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(worker_ready))
        .route(
            "/metrics",
            get(|State(w): State<Arc<WorkerAdmin>>| async move { metrics_answer(&w.metrics) }),
        )
        .fallback(|| async {
            crate::http::error::error(
                StatusCode::NOT_FOUND,
                "NotFound",
                "a webhook worker's admin listener serves /healthz, /readyz and /metrics",
            )
        })
        .with_state(admin)
}

/// A worker's readiness: its store answers, and it is not stopping.
async fn worker_ready(State(w): State<Arc<WorkerAdmin>>) -> Response {
    let ping = tokio::time::timeout(std::time::Duration::from_secs(2), w.store.ping()).await;
    let up = matches!(ping, Ok(Ok(())));
    w.metrics.store_up.set(i64::from(up));
    let (status, body) = if w.draining.load(Ordering::SeqCst) {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting_down")
    } else if up {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "store_unreachable")
    };
    json_response(
        status,
        json!({ "status": body, "role": "webhook_worker" }).to_string(),
    )
}

/// 200 while the process runs.
async fn healthz() -> Response {
    json_response(StatusCode::OK, json!({ "status": "ok" }).to_string())
}

/// 200 once every site's config was read once and the store answers; 503 before, while the
/// store is unreachable, and while shutting down.
async fn readyz(State(app): State<Arc<AppState>>) -> Response {
    let store_down = match &app.store {
        None => false,
        Some(store) => {
            let ping = tokio::time::timeout(std::time::Duration::from_secs(2), store.ping()).await;
            let up = matches!(ping, Ok(Ok(())));
            app.metrics.store_up.set(i64::from(up));
            !up
        }
    };
    let (status, body) = match app.unavailable() {
        None if store_down => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "store_unreachable" }),
        ),
        None => (StatusCode::OK, json!({ "status": "ready" })),
        Some(Unavailable::Loading) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "loading", "sites_loading": app.sites().pending() }),
        ),
        Some(Unavailable::ShuttingDown) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "shutting_down" }),
        ),
    };
    json_response(status, body.to_string())
}

async fn metrics(State(app): State<Arc<AppState>>) -> Response {
    metrics_answer(&app.metrics)
}

/// `/metrics`: OpenMetrics text.
fn metrics_answer(metrics: &Metrics) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        metrics.encode(),
    )
        .into_response()
}

async fn openapi(State(app): State<Arc<AppState>>) -> Response {
    json_response(StatusCode::OK, app.openapi_json.clone())
}

async fn sites(State(app): State<Arc<AppState>>) -> Response {
    let body = json!({ "sites": app.sites().reports() }).to_string();
    json_response(StatusCode::OK, body)
}

fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}
