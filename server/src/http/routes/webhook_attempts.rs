//! `GET /v1/webhook_endpoints/{id}/attempts` (docs/contract/webhooks.md "Endpoints"): an endpoint's delivery
//! attempts, newest first, one keyset walk per endpoint.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;

use crate::app::state::AppState;
use crate::app::webhooks as rules;
use crate::domain::cursor::Endpoint as List;
use crate::domain::webhook::attempt::{Attempt, AttemptItem};
use crate::http::auth::Caller;
use crate::http::error::{ApiError, json};
use crate::http::page::{Answer, KeysetPage};
use crate::http::pipeline::store_of;
use crate::http::query::KeysetQuery;

/// `GET`.
pub const ATTEMPTS_PATH: &str = "/v1/webhook_endpoints/{id}/attempts";

/// `GET /v1/webhook_endpoints/{id}/attempts`: newest first.
///
/// # Errors
///
/// 400 InvalidCursor for a cursor of another endpoint's attempts; 404 for an endpoint the
/// caller's site and mode do not have.
pub async fn attempts(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    query: KeysetQuery,
) -> Answer {
    let page = KeysetPage::start(&app, &caller, List::WebhookAttempts, &query)?;
    let before = match &page.after {
        Some((seq, of)) if *of == id => Some(*seq),
        Some(_) => {
            return Err(ApiError::InvalidCursor(
                "cursor: it walks another endpoint's attempts; start again without a cursor"
                    .to_owned(),
            ));
        }
        None => None,
    };
    let rows = store_of(&app)?
        .webhook_attempts(&caller.scope, &id, before, page.read_limit())
        .await?
        .ok_or_else(|| ApiError::from(rules::not_found(&id)))?;
    let position = |a: &Attempt| (a.seq, id.clone());
    let body = page.envelope(&rows, position, AttemptItem::of);
    Ok(json(StatusCode::OK, body))
}
