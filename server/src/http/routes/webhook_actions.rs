//! The webhook routes that act on an endpoint or a message (docs/contract/webhooks.md "Endpoints"): rotate its
//! secret, send a test, recover, resend a message. The rules are `app/webhooks.rs`'s.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;

use crate::app::state::AppState;
use crate::app::webhooks as rules;
use crate::domain::time::WireTime;
use crate::domain::webhook::endpoint::EndpointItem;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::extract::{Drained, Sent};
use crate::http::forms::{MAX_WEBHOOK_BODY_BYTES, Recover};
use crate::http::page::{Answer, data};
use crate::http::pipeline::store_of;
use crate::http::query::read_time;

/// `POST`.
pub const ROTATE_PATH: &str = "/v1/webhook_endpoints/{id}/rotate_secret";
/// `POST`.
pub const TEST_PATH: &str = "/v1/webhook_endpoints/{id}/test";
/// `POST`.
pub const RECOVER_PATH: &str = "/v1/webhook_endpoints/{id}/recover";
/// `POST`.
pub const RESEND_PATH: &str = "/v1/webhook_messages/{id}/resend";

/// A body these routes do not use (any, or none), read to its end.
type Unused = Drained<MAX_WEBHOOK_BODY_BYTES>;

/// `POST /v1/webhook_endpoints/{id}/rotate_secret`: the new secret, shown once.
pub async fn rotate(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: Unused,
) -> Answer {
    let endpoint = rules::rotate_secret(&app.delivery, store_of(&app)?, &caller.scope, &id).await?;
    data(StatusCode::OK, EndpointItem::with_secret(&endpoint))
}

/// `POST /v1/webhook_endpoints/{id}/test`: 202 with the message (`webhook.test`).
pub async fn test(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: Unused,
) -> Answer {
    let message = rules::send_test(&app.delivery, store_of(&app)?, &caller.scope, &id).await?;
    let body: &serde_json::value::RawValue =
        serde_json::from_str(&message.body).map_err(|e| ApiError::InvalidRequest(e.to_string()))?;
    data(StatusCode::ACCEPTED, body)
}

/// `POST /v1/webhook_endpoints/{id}/recover` `{"since"}`: 202 with how many messages.
pub async fn recover(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Sent(sent): Sent<Recover>,
) -> Answer {
    let since = read_time("since", &sent.since)?.ceil_ms();
    let n = rules::recover(&app.delivery, store_of(&app)?, &caller.scope, &id, since).await?;
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
    let n = rules::resend(&app.delivery, store_of(&app)?, &caller.scope, &id).await?;
    let answer = serde_json::json!({ "message_id": id, "deliveries": n });
    data(StatusCode::ACCEPTED, answer)
}
