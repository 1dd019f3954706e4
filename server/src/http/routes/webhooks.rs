//! The webhook routes (SPEC 16 "Endpoints"): endpoints, their secret, tests, attempts,
//! recover, and resending a message. Secret keys only; one list per site and mode. The rules
//! are `app/webhooks.rs`'s.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::forms::{Create, Patch};
use crate::app::state::AppState;
use crate::app::webhooks::{self as rules, Change};
use crate::domain::cursor::Endpoint as List;
use crate::domain::webhook::endpoint::{Endpoint, EndpointItem};
use crate::http::auth::Caller;
use crate::http::error::{ApiError, json};
use crate::http::extract::{Sent, Stored};
use crate::http::page::{DataEnvelope, keyset_after, keyset_envelope, to_body};
use crate::http::query::{KeysetQuery, NoQuery};

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

/// A handler's answer.
pub(crate) type Answer = Result<Response, ApiError>;

/// `{"data": ...}` with `status`.
pub(crate) fn data<T: serde::Serialize>(status: StatusCode, item: T) -> Answer {
    Ok(json(status, to_body(&DataEnvelope { data: item })))
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
        .await?;
    let position = |e: &Endpoint| (e.created_at_ms, e.id.clone());
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
    .await?;
    data(StatusCode::CREATED, EndpointItem::with_secret(&endpoint))
}

/// `GET /v1/webhook_endpoints/{id}`.
pub async fn get(
    Stored(store): Stored,
    caller: Caller,
    Path(id): Path<String>,
    _: NoQuery,
) -> Answer {
    let endpoint = rules::get(&store, &caller.scope, &id).await?;
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
    let endpoint = rules::update(&app.delivery, &store, &caller.scope, &id, change).await?;
    data(StatusCode::OK, EndpointItem::of(&endpoint))
}

/// `DELETE /v1/webhook_endpoints/{id}`.
pub async fn delete(Stored(store): Stored, caller: Caller, Path(id): Path<String>) -> Answer {
    if !store.delete_webhook_endpoint(&caller.scope, &id).await? {
        return Err(ApiError::from(rules::not_found(&id)));
    }
    Ok(json(
        StatusCode::OK,
        "{\"data\":{\"deleted\":true}}".to_owned(),
    ))
}
