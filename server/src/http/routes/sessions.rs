//! `GET /v1/sessions` (API document 4.1) and `GET /v1/sessions/{id}` (4.2), docs/contract/read-api.md.

use std::sync::Arc;

use crate::app::state::AppState;
use crate::domain::cursor::{Endpoint, Filters};
use crate::domain::ids::is_session_id;
use crate::domain::wire::SessionItem;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::forms::SessionDetailItem;
use crate::http::page::{DataEnvelope, ListPage, to_body};
use crate::http::pipeline::{Read, store_of};
use crate::http::query::{NoQuery, SessionsQuery};
use axum::extract::{Path, State};

/// The list's path.
pub const LIST_PATH: &str = "/v1/sessions";
/// The detail's path (axum's form).
pub const DETAIL_PATH: &str = "/v1/sessions/{id}";

/// `GET /v1/sessions`: sessions that started in `[from, to)`, newest first.
pub async fn list(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    SessionsQuery(query): SessionsQuery,
) -> Result<Read, ApiError> {
    let page = ListPage::resolve(
        &app,
        &caller,
        &query,
        Endpoint::Sessions,
        Filters::default(),
    )?;
    let mut rows = store_of(&app)?
        .list_sessions(&caller.scope, &page.window, &page.walk, page.limit + 1)
        .await?;
    Ok(Read(page.envelope(
        &app,
        &caller,
        Endpoint::Sessions,
        &mut rows,
        SessionItem::of,
    )))
}

/// `GET /v1/sessions/{id}`: one session with its events and nudges; 404 when it does not exist
/// for the caller's site and mode or is older than the retention window.
pub async fn detail(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    _: NoQuery,
) -> Result<Read, ApiError> {
    let not_found = || {
        let shown: String = id.chars().take(80).collect();
        ApiError::NotFound(format!("no session {shown:?}"))
    };
    if !is_session_id(&id) {
        return Err(not_found());
    }
    let visible_from = caller.site.retention.visible_from_ms(app.clock.now_ms());
    let detail = store_of(&app)?
        .session(&caller.scope, &id, visible_from)
        .await?
        .ok_or_else(not_found)?;
    let data = SessionDetailItem::of(&detail);
    Ok(Read(to_body(&DataEnvelope { data })))
}
