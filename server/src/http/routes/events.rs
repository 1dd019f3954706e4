//! `POST /v1/events`, the SDK relay (SPEC 10): storefront pages send batches of events with a
//! publishable key; each event is judged alone, every accepted one is committed before the 202,
//! and each key may send 10,000 events per rolling minute.
//!
//! Checks, in order: the method (`OPTIONS` is the CORS preflight, 204), the lifecycle (503), the
//! media type (`application/json` or `text/plain`, 415), the body (at most 512 KiB, 413; a body
//! that cannot be read as a batch, 400), the key (`Authorization: Bearer pk_...` or the body's
//! `site_key`; both and different, 400; a secret key, missing or unknown, 401), the key's
//! window counting the batch's events (429, refused whole), each event, the store (503). Every
//! answer carries `Access-Control-Allow-Origin: *`.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use crate::app::ingest::{self, Rejected};
use crate::app::state::AppState;
use crate::domain::event::{Mode, Scope};
use crate::domain::ingest::{Clocks, MAX_BODY_BYTES, read_batch};
use crate::domain::time::now_ms;
use crate::http::auth::{bearer_any, decide, record_caller};
use crate::http::body::{check_batch_type, read_body};
use crate::http::error::{ApiError, AuthFailure, json};
use crate::http::page::{DataEnvelope, to_body};
use crate::http::pipeline::{ApiOptions, book, unavailable};
use crate::limiter::Decision;
use crate::metrics::RelayEventLabels;
use crate::sites::keys::{KeyHash, KeyKind, key_kind};
use crate::sites::registry::Served;

/// The relay's path.
pub const EVENTS_PATH: &str = "/v1/events";

/// Events per rolling 60 s per publishable key (API document section 8).
pub const EVENTS_PER_MINUTE: u32 = 10_000;

/// The headers a page may read.
const EXPOSED: &str = "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset";

/// `POST /v1/events`.
pub async fn events(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let (result, decision) = match relay(&app, request, &options).await {
        Ok((accepted, decision)) => (Ok(accepted), Some(decision)),
        Err((refusal, decision)) => (Err(refusal), decision),
    };
    let mut response = match result {
        Ok(accepted) => json(
            StatusCode::ACCEPTED,
            to_body(&DataEnvelope { data: accepted }),
        ),
        Err(refusal) => axum::response::IntoResponse::into_response(refusal),
    };
    book(&app, &mut response, true);
    if let Some(decision) = decision {
        decision.write_headers(response.headers_mut());
    }
    super::allow_any_origin(response, EXPOSED)
}

/// `OPTIONS /v1/events`, the CORS preflight: any origin may send events (storefront pages do).
pub async fn preflight() -> Response {
    let response = super::any_origin_preflight("POST, OPTIONS", "Authorization, Content-Type");
    super::allow_any_origin(response, EXPOSED)
}

/// The 202's body (SPEC 10 "Answer").
#[derive(Serialize)]
struct Accepted {
    accepted: usize,
    duplicates: usize,
    rejected: Vec<Rejected>,
}

type Refusal = (ApiError, Option<Decision>);

/// The relay's checks in their order, then the batch stored.
async fn relay(
    app: &AppState,
    request: Request,
    options: &ApiOptions,
) -> Result<(Accepted, Decision), Refusal> {
    let early = |e: ApiError| (e, None);
    if let Some(why) = app.unavailable() {
        return Err(early(ApiError::Unavailable(why)));
    }
    check_batch_type(request.headers()).map_err(early)?;
    let header_key = bearer_any(request.headers())
        .map(|key| key.map(str::to_owned))
        .map_err(|failure| early(ApiError::Unauthorized(failure)))?;
    let body = read_body(request, MAX_BODY_BYTES, options.body_total_timeout)
        .await
        .map_err(early)?;
    let received_at_ms = now_ms();
    let batch = read_batch(&body).map_err(|m| early(ApiError::InvalidRequest(m)))?;
    let key =
        match (header_key.as_deref(), batch.site_key.as_deref()) {
            (Some(a), Some(b)) if a != b => return Err(early(ApiError::InvalidRequest(
                "the Authorization header and the body's site_key name different keys; send one"
                    .to_owned(),
            ))),
            (Some(key), _) | (None, Some(key)) => key.to_owned(),
            (None, None) => return Err(early(ApiError::Unauthorized(AuthFailure::Missing))),
        };
    let refuse = |failure| Err(early(ApiError::Unauthorized(failure)));
    match key_kind(&key) {
        Some(KeyKind::Publishable) => {}
        Some(KeyKind::Secret) => return refuse(AuthFailure::SecretInPage),
        None => return refuse(AuthFailure::Malformed),
    }
    let key_hash = KeyHash::of_key(&key);
    let sites = app.sites();
    let Some(site) = sites.site_of(KeyKind::Publishable, &key_hash) else {
        return refuse(AuthFailure::Unknown);
    };
    record_caller(site, &key_hash);
    let cost = u32::try_from(batch.events.len()).unwrap_or(u32::MAX);
    let decision = decide(app, site, &key_hash, EVENTS_PER_MINUTE, cost).await;
    if !decision.admitted {
        return Err((ApiError::EventsRateLimited(decision, cost), Some(decision)));
    }
    let scope = Scope {
        site: site.id.clone(),
        mode: Mode::of_key(&key),
    };
    let case_sensitive = match &**site.served(scope.mode) {
        Served::Valid { engine, .. } => engine.config().case_sensitive,
        _ => false,
    };
    let clocks = Clocks {
        received_at_ms,
        sent_at_ms: batch.sent_at_ms,
    };
    let Some(store) = &app.store else {
        return Err((ApiError::StoreUnavailable, Some(decision)));
    };
    let ingested = ingest::relay(store, &scope, &batch.events, &clocks, case_sensitive)
        .await
        .map_err(|e| (unavailable(app, &e), Some(decision)))?;
    // Committed: counted now, never for a batch the store did not take.
    let count = |labels: &RelayEventLabels, n: usize| {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        app.metrics.relay_events.get_or_create(labels).inc_by(n);
    };
    count(&RelayEventLabels::ACCEPTED, ingested.accepted);
    count(&RelayEventLabels::DUPLICATE, ingested.duplicates);
    count(&RelayEventLabels::REJECTED, ingested.rejected.len());
    let accepted = Accepted {
        accepted: ingested.accepted,
        duplicates: ingested.duplicates,
        rejected: ingested.rejected,
    };
    Ok((accepted, decision))
}
