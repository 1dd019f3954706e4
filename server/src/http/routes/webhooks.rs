//! The webhook routes (SPEC 16 "Endpoints"): endpoints, their secret, tests, attempts,
//! recover, and resending a message. Secret keys only; one list per site and mode. The rules
//! are `app/webhooks.rs`'s.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::app::state::AppState;
use crate::app::webhooks::{self as rules, Change, WebhookError};
use crate::domain::cursor::Endpoint as List;
use crate::domain::time::WireTime;
use crate::domain::webhook::endpoint::{AttemptItem, EndpointItem};
use crate::http::auth::Caller;
use crate::http::error::{ApiError, json};
use crate::http::extract::{BodyForm, Drained, Sent, Stored};
use crate::http::page::{DataEnvelope, keyset_after, keyset_envelope, to_body};
use crate::http::pipeline::{store_of, unavailable};
use crate::http::query::{KeysetQuery, NoQuery, read_time};

/// `GET`, `POST`.
pub const ENDPOINTS_PATH: &str = "/v1/webhook_endpoints";
/// `GET`, `PATCH`, `DELETE`.
pub const ENDPOINT_PATH: &str = "/v1/webhook_endpoints/{id}";
/// `POST`.
pub const ROTATE_PATH: &str = "/v1/webhook_endpoints/{id}/rotate_secret";
/// `POST`.
pub const TEST_PATH: &str = "/v1/webhook_endpoints/{id}/test";
/// `GET`.
pub const ATTEMPTS_PATH: &str = "/v1/webhook_endpoints/{id}/attempts";
/// `POST`.
pub const RECOVER_PATH: &str = "/v1/webhook_endpoints/{id}/recover";
/// `POST`.
pub const RESEND_PATH: &str = "/v1/webhook_messages/{id}/resend";

/// The largest body of these routes, in bytes.
const MAX_BODY_BYTES: usize = 16 * 1024;

/// A body these routes do not use (any, or none), read to its end.
type Unused = Drained<MAX_BODY_BYTES>;

/// A handler's answer.
type Answer = Result<Response, ApiError>;

impl WebhookError {
    fn into_api(self, app: &AppState) -> ApiError {
        match self {
            WebhookError::Invalid(m) => ApiError::InvalidRequest(m),
            WebhookError::Refused(r) => ApiError::InvalidRequest(format!("url: {r}")),
            WebhookError::NotFound(m) => ApiError::NotFound(m),
            WebhookError::TooMany => ApiError::Conflict(format!(
                "this site and mode have {} webhook endpoints, the most allowed; delete one first",
                crate::domain::webhook::endpoint::MAX_ENDPOINTS
            )),
            WebhookError::Store(e) => unavailable(app, &e),
        }
    }
}

/// `{"data": ...}` with `status`.
fn data<T: serde::Serialize>(status: StatusCode, item: T) -> Answer {
    Ok(json(status, to_body(&DataEnvelope { data: item })))
}

/// `POST /v1/webhook_endpoints`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Create {
    url: String,
    event_types: Vec<String>,
    description: Option<String>,
}

impl BodyForm for Create {
    const MAX_BYTES: usize = MAX_BODY_BYTES;
    const SHAPE: &'static str =
        "{\"url\": URL, \"event_types\": [TYPE, ...], \"description\"?: TEXT}";
}

/// `PATCH /v1/webhook_endpoints/{id}`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    url: Option<String>,
    event_types: Option<Vec<String>>,
    description: Option<String>,
    status: Option<String>,
}

impl BodyForm for Patch {
    const MAX_BYTES: usize = MAX_BODY_BYTES;
    const SHAPE: &'static str = "{\"url\"?: URL, \"event_types\"?: [TYPE, ...], \"description\"?: TEXT, \"status\"?: \"enabled\" | \"disabled\"}";
}

/// `POST /v1/webhook_endpoints/{id}/recover`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recover {
    since: String,
}

impl BodyForm for Recover {
    const MAX_BYTES: usize = MAX_BODY_BYTES;
    const SHAPE: &'static str = "{\"since\": RFC 3339 TIME}";
}

/// `GET /v1/webhook_endpoints`: newest first.
pub async fn list(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    query: KeysetQuery,
) -> Answer {
    let after = keyset_after(
        &app,
        &caller,
        List::WebhookEndpoints,
        query.cursor.as_deref(),
    )?;
    let after = after.as_ref().map(|(at, id)| (*at, id.as_str()));
    let rows = store
        .webhook_endpoints(&caller.scope, after, query.limit + 1)
        .await
        .map_err(|e| unavailable(&app, &e))?;
    let position = |e: &crate::domain::webhook::endpoint::Endpoint| (e.created_at_ms, e.id.clone());
    let (endpoint, limit) = (List::WebhookEndpoints, query.limit);
    let body = keyset_envelope(
        &app,
        &caller,
        endpoint,
        &rows,
        limit,
        position,
        EndpointItem::of,
    );
    Ok(json(StatusCode::OK, body))
}

/// `POST /v1/webhook_endpoints`: 201, the secret shown once.
pub async fn create(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Sent(sent): Sent<Create>,
) -> Answer {
    let (url, types) = (&sent.url, &sent.event_types);
    let endpoint = rules::create(
        &app.delivery,
        &store,
        &caller.scope,
        url,
        types,
        sent.description,
    )
    .await
    .map_err(|e| e.into_api(&app))?;
    data(StatusCode::CREATED, EndpointItem::with_secret(&endpoint))
}

/// `GET /v1/webhook_endpoints/{id}`.
pub async fn get(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: NoQuery,
) -> Answer {
    let endpoint = rules::get(&store, &caller.scope, &id)
        .await
        .map_err(|e| e.into_api(&app))?;
    data(StatusCode::OK, EndpointItem::of(&endpoint))
}

/// `PATCH /v1/webhook_endpoints/{id}`.
pub async fn update(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Sent(sent): Sent<Patch>,
) -> Answer {
    let change = Change {
        url: sent.url,
        event_types: sent.event_types,
        description: sent.description.map(|d| Some(d).filter(|d| !d.is_empty())),
        status: sent.status,
    };
    let endpoint = rules::update(&app.delivery, &store, &caller.scope, &id, change)
        .await
        .map_err(|e| e.into_api(&app))?;
    data(StatusCode::OK, EndpointItem::of(&endpoint))
}

/// `DELETE /v1/webhook_endpoints/{id}`.
pub async fn delete(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Answer {
    let deleted = store.delete_webhook_endpoint(&caller.scope, &id).await;
    if !deleted.map_err(|e| unavailable(&app, &e))? {
        return Err(rules::not_found(&id).into_api(&app));
    }
    Ok(json(
        StatusCode::OK,
        "{\"data\":{\"deleted\":true}}".to_owned(),
    ))
}

/// `POST /v1/webhook_endpoints/{id}/rotate_secret`: the new secret, shown once.
pub async fn rotate(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: Unused,
) -> Answer {
    let endpoint = rules::rotate_secret(store_of(&app)?, &caller.scope, &id)
        .await
        .map_err(|e| e.into_api(&app))?;
    data(StatusCode::OK, EndpointItem::with_secret(&endpoint))
}

/// `POST /v1/webhook_endpoints/{id}/test`: 202 with the message (`webhook.test`).
pub async fn test(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: Unused,
) -> Answer {
    let message = rules::send_test(&app.delivery, store_of(&app)?, &caller.scope, &id)
        .await
        .map_err(|e| e.into_api(&app))?;
    let body: &serde_json::value::RawValue =
        serde_json::from_str(&message.body).map_err(|e| ApiError::InvalidRequest(e.to_string()))?;
    data(StatusCode::ACCEPTED, body)
}

/// `GET /v1/webhook_endpoints/{id}/attempts`: newest first.
pub async fn attempts(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    query: KeysetQuery,
) -> Answer {
    let before = match keyset_after(
        &app,
        &caller,
        List::WebhookAttempts,
        query.cursor.as_deref(),
    )? {
        Some((seq, of)) if of == id => Some(seq),
        Some(_) => {
            return Err(ApiError::InvalidCursor(
                "cursor: it walks another endpoint's attempts; start again without a cursor"
                    .to_owned(),
            ));
        }
        None => None,
    };
    let rows = store_of(&app)?
        .webhook_attempts(&caller.scope, &id, before, query.limit + 1)
        .await
        .map_err(|e| unavailable(&app, &e))?
        .ok_or_else(|| rules::not_found(&id).into_api(&app))?;
    let (endpoint, limit) = (List::WebhookAttempts, query.limit);
    let position = |a: &crate::domain::webhook::endpoint::Attempt| (a.seq, id.clone());
    let body = keyset_envelope(
        &app,
        &caller,
        endpoint,
        &rows,
        limit,
        position,
        AttemptItem::of,
    );
    Ok(json(StatusCode::OK, body))
}

/// `POST /v1/webhook_endpoints/{id}/recover` `{"since"}`: 202 with how many messages.
pub async fn recover(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Sent(sent): Sent<Recover>,
) -> Answer {
    let since = read_time("since", &sent.since)?.ceil_ms();
    let n = rules::recover(&app.delivery, store_of(&app)?, &caller.scope, &id, since)
        .await
        .map_err(|e| e.into_api(&app))?;
    let answer = serde_json::json!({ "messages": n, "since": WireTime(since) });
    data(StatusCode::ACCEPTED, answer)
}

/// `POST /v1/webhook_messages/{id}/resend`: 202 with how many deliveries are due again.
pub async fn resend(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: Unused,
) -> Answer {
    let n = rules::resend(&app.delivery, store_of(&app)?, &caller.scope, &id)
        .await
        .map_err(|e| e.into_api(&app))?;
    let answer = serde_json::json!({ "message_id": id, "deliveries": n });
    data(StatusCode::ACCEPTED, answer)
}
