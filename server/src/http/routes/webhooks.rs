//! The webhook endpoints (docs/contract/webhooks.md "Endpoints"): list, create (the secret shown once), get,
//! update and delete; what acts on one is in `webhook_actions.rs` and `webhook_attempts.rs`.
//! Secret keys only; one list per site and mode. The rules are `app/webhooks.rs`'s.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;

use crate::app::state::AppState;
use crate::app::webhooks::{self as rules, Change, NewEndpoint};
use crate::domain::cursor::Endpoint as List;
use crate::domain::webhook::endpoint::{Endpoint, EndpointItem};
use crate::http::auth::Caller;
use crate::http::error::json;
use crate::http::extract::{Sent, Stored};
use crate::http::forms::Patch;
use crate::http::page::{Answer, KeysetPage, data};
use crate::http::query::{KeysetQuery, NoQuery};

/// `GET`, `POST`.
pub const ENDPOINTS_PATH: &str = "/v1/webhook_endpoints";
/// `GET`, `PATCH`, `DELETE`.
pub const ENDPOINT_PATH: &str = "/v1/webhook_endpoints/{id}";

/// `GET /v1/webhook_endpoints`: newest first.
pub async fn list(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    query: KeysetQuery,
) -> Answer {
    let page = KeysetPage::start(&app, &caller, List::WebhookEndpoints, &query)?;
    let (after, limit) = (page.after_ref(), page.read_limit());
    let rows = store.webhook_endpoints(&caller.scope, after, limit).await?;
    let body = page.envelope(&rows, Endpoint::position, EndpointItem::of);
    Ok(json(StatusCode::OK, body))
}

/// `POST /v1/webhook_endpoints`: 201, the secret shown once.
pub async fn create(
    Stored(store): Stored,
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Sent(asked): Sent<NewEndpoint>,
) -> Answer {
    let endpoint = rules::create(&app.delivery, &store, &caller.scope, asked).await?;
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
    let change = Change::from(sent);
    let endpoint = rules::update(&app.delivery, &store, &caller.scope, &id, change).await?;
    data(StatusCode::OK, EndpointItem::of(&endpoint))
}

/// `DELETE /v1/webhook_endpoints/{id}`.
pub async fn delete(Stored(store): Stored, caller: Caller, Path(id): Path<String>) -> Answer {
    rules::delete(&store, &caller.scope, &id).await?;
    data(StatusCode::OK, serde_json::json!({ "deleted": true }))
}
