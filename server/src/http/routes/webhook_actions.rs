//! The webhook routes that act on an endpoint or a message (SPEC 16 "Endpoints"): rotate its
//! secret, send a test, list its attempts, recover, resend a message. The rules are
//! `app/webhooks.rs`'s; the paths are [`super::webhooks`]'.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::forms::{MAX_WEBHOOK_BODY_BYTES, Recover};
use super::webhooks::{Answer, data};
use crate::app::state::AppState;
use crate::app::webhooks as rules;
use crate::domain::cursor::Endpoint as List;
use crate::domain::time::WireTime;
use crate::domain::webhook::endpoint::{Attempt, AttemptItem, EndpointItem};
use crate::http::auth::Caller;
use crate::http::error::{ApiError, json};
use crate::http::extract::{Drained, Sent};
use crate::http::page::{keyset_after, keyset_envelope};
use crate::http::pipeline::store_of;
use crate::http::query::{KeysetQuery, read_time};

/// A body these routes do not use (any, or none), read to its end.
type Unused = Drained<MAX_WEBHOOK_BODY_BYTES>;

/// `POST /v1/webhook_endpoints/{id}/rotate_secret`: the new secret, shown once.
pub async fn rotate(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: Unused,
) -> Answer {
    let endpoint = rules::rotate_secret(store_of(&app)?, &caller.scope, &id).await?;
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
        .await?
        .ok_or_else(|| ApiError::from(rules::not_found(&id)))?;
    let (endpoint, limit) = (List::WebhookAttempts, query.limit);
    let position = |a: &Attempt| (a.seq, id.clone());
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
