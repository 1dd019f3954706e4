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
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;
use serde::Serialize;

use crate::app::ingest::{self, Rejected};
use crate::app::state::AppState;
use crate::domain::event::{Mode, Scope};
use crate::domain::ingest::{Clocks, MAX_BODY_BYTES, read_batch};
use crate::domain::time::now_ms;
use crate::http::auth::{decide, record_caller};
use crate::http::body::read_body;
use crate::http::error::AuthFailure;
use crate::http::error::{ApiError, json};
use crate::http::pipeline::{ApiOptions, BodyRead, respond, unavailable};
use crate::limiter::Decision;
use crate::metrics::RelayEventLabels;
use crate::sites::keys::{KeyHash, KeyKind, key_kind};
use crate::sites::registry::Served;

/// The relay's path.
pub const EVENTS_PATH: &str = "/v1/events";

/// Events per rolling 60 s per publishable key (API document section 8).
pub const EVENTS_PER_MINUTE: u32 = 10_000;

/// `POST /v1/events` and its preflight.
pub async fn events(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let response = if request.method() == Method::OPTIONS {
        preflight()
    } else {
        let (result, decision) = match relay(&app, request, &options).await {
            Ok((response, decision)) => (Ok(response), Some(decision)),
            Err((refusal, decision)) => (Err(refusal), decision),
        };
        let mut response = respond(&app, result);
        if let Some(decision) = decision {
            decision.write_headers(response.headers_mut());
        }
        response
    };
    super::allow_any_origin(
        response,
        "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset",
    )
}

/// The CORS preflight: any origin may send events (storefront pages do).
fn preflight() -> Response {
    super::any_origin_preflight("POST, OPTIONS", "Authorization, Content-Type")
}

/// The 202's body (SPEC 10 "Answer").
#[derive(Serialize)]
struct Accepted {
    accepted: usize,
    duplicates: usize,
    rejected: Vec<Rejected>,
}

type Refusal = (ApiError, Option<Decision>);

async fn relay(
    app: &AppState,
    request: Request,
    options: &ApiOptions,
) -> Result<(Response, Decision), Refusal> {
    if let Some(why) = app.unavailable() {
        return Err((ApiError::Unavailable(why), None));
    }
    check_content_type(request.headers()).map_err(|e| (e, None))?;
    let header_key = header_key(request.headers()).map_err(|e| (e, None))?;
    let body = read_body(request, MAX_BODY_BYTES, options.body_total_timeout)
        .await
        .map_err(|e| (e, None))?;
    let received_at_ms = now_ms();
    let batch = read_batch(&body).map_err(|m| (ApiError::InvalidRequest(m), None))?;
    let key = match (header_key.as_deref(), batch.site_key.as_deref()) {
        (Some(a), Some(b)) if a != b => return Err((
            ApiError::InvalidRequest(
                "the Authorization header and the body's site_key name different keys; send one"
                    .to_owned(),
            ),
            None,
        )),
        (Some(key), _) | (None, Some(key)) => key.to_owned(),
        (None, None) => return Err((ApiError::Unauthorized(AuthFailure::Missing), None)),
    };
    match key_kind(&key) {
        Some(KeyKind::Publishable) => {}
        Some(KeyKind::Secret) => {
            return Err((ApiError::Unauthorized(AuthFailure::SecretInPage), None));
        }
        None => return Err((ApiError::Unauthorized(AuthFailure::Malformed), None)),
    }
    let key_hash = KeyHash::of_key(&key);
    let sites = app.sites();
    let Some(site) = sites.site_of(KeyKind::Publishable, &key_hash) else {
        return Err((ApiError::Unauthorized(AuthFailure::Unknown), None));
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
        app.metrics
            .relay_events
            .get_or_create(labels)
            .inc_by(u64::try_from(n).unwrap_or(u64::MAX));
    };
    count(&RelayEventLabels::ACCEPTED, ingested.accepted);
    count(&RelayEventLabels::DUPLICATE, ingested.duplicates);
    count(&RelayEventLabels::REJECTED, ingested.rejected.len());
    let body = crate::http::page::to_body(&crate::http::page::DataEnvelope {
        data: Accepted {
            accepted: ingested.accepted,
            duplicates: ingested.duplicates,
            rejected: ingested.rejected,
        },
    });
    let mut response = json(StatusCode::ACCEPTED, body);
    response.extensions_mut().insert(BodyRead);
    Ok((response, decision))
}

/// 415 unless there is one `Content-Type`, `application/json` or `text/plain` (what
/// `navigator.sendBeacon` sends a string as), parameters allowed.
fn check_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let first = values.next();
    let media_type = first
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    let ok = values.next().is_none()
        && media_type.is_some_and(|m| {
            m.eq_ignore_ascii_case("application/json") || m.eq_ignore_ascii_case("text/plain")
        });
    if ok {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType(
            "send the batch as JSON with one Content-Type: application/json or text/plain"
                .to_owned(),
        ))
    }
}

/// The key of `Authorization: Bearer <key>`, if the header is there.
fn header_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    if !headers.contains_key(header::AUTHORIZATION) {
        return Ok(None);
    }
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value = values.next().and_then(|v| v.to_str().ok());
    let key = value
        .filter(|_| values.next().is_none())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, key)| key.trim().to_owned());
    key.map(Some)
        .ok_or(ApiError::Unauthorized(AuthFailure::Malformed))
}
