//! `POST /v1/events`, the SDK relay (docs/contract/relay.md): storefront pages send batches of events with a
//! publishable key; each event is judged alone, every accepted one is committed before the 202,
//! and each key may send 10,000 events per rolling minute.
//!
//! Checks, in order: the method (`OPTIONS` is the CORS preflight, 204), the lifecycle (503), the
//! media type (`application/json` or `text/plain`, 415), the body (at most 512 KiB, 413; a body
//! that cannot be read as a batch, 400), the key (`Authorization: Bearer pk_...` or the body's
//! `site_key`; both and different, 400; a secret key, missing or unknown, 401), the key's
//! window counting the batch's events (429, refused whole), each event, the store (503). Every
//! answer carries `Access-Control-Allow-Origin: *` ([`RELAY`]).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::app::ingest::{self, Ingested};
use crate::app::state::AppState;
use crate::domain::ingest::{MAX_BODY_BYTES, read_batch};
use crate::http::any_origin::RELAY;
use crate::http::auth::{admit_relay, bearer_any};
use crate::http::body::{check_batch_type, read_body};
use crate::http::error::{ApiError, json};
use crate::http::page::{DataEnvelope, to_body};
use crate::http::pipeline::{ApiOptions, book, store_of};
use crate::limiter::Decision;

/// The relay's path.
pub const EVENTS_PATH: &str = "/v1/events";

/// `POST /v1/events`.
pub async fn events(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let (mut response, decision) = match relay(&app, request, &options).await {
        Ok((ingested, decision)) => {
            let body = to_body(&DataEnvelope { data: ingested });
            (json(StatusCode::ACCEPTED, body), Some(decision))
        }
        Err((refusal, decision)) => (refusal.into_response(), decision),
    };
    book(&app, &mut response, true);
    if let Some(decision) = decision {
        decision.write_headers(response.headers_mut());
    }
    RELAY.allow(response)
}

/// The relay's checks in their order, then the batch stored.
async fn relay(
    app: &AppState,
    request: Request,
    options: &ApiOptions,
) -> Result<(Ingested, Decision), (ApiError, Option<Decision>)> {
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
    let received_at_ms = app.clock.now_ms();
    let batch = read_batch(&body).map_err(|m| early(ApiError::InvalidRequest(m)))?;
    let (site, scope, decision) = admit_relay(app, header_key.as_deref(), &batch).await?;
    let late = |e: ApiError| (e, Some(decision));
    let store = store_of(app).map_err(late)?;
    let (to, of) = ((store, &*app.metrics), (&*site, &scope));
    let ingested = ingest::relay(to, of, &batch, received_at_ms).await;
    Ok((ingested.map_err(|e| late(ApiError::from(e)))?, decision))
}
