//! `GET /v1/sessions` (API document 4.1) and `GET /v1/sessions/{id}` (4.2), SPEC 9.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::response::Response;
use serde_json::{json, Value};

use super::query::{is_session_id, Params};
use super::{serve_read, store_of, unavailable, ListPage};
use crate::error::ApiError;
use crate::model::cursor::{Endpoint, Filters};
use crate::model::derive::{NudgeSummary, SessionSummary};
use crate::model::time::{format_ms, now_ms};
use crate::state::AppState;
use crate::store::SessionDetail;

/// The list's path.
pub const LIST_PATH: &str = "/v1/sessions";
/// The detail's path (axum's form).
pub const DETAIL_PATH: &str = "/v1/sessions/{id}";

/// `GET /v1/sessions`: sessions that started in `[from, to)`, newest first.
pub async fn list(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let app = &*app;
    serve_read(app, request, |caller, request| async move {
        let params = Params::parse(request.uri().query(), &["from", "to", "limit", "cursor"])?;
        let page = ListPage::resolve(
            app,
            &caller,
            &params,
            Endpoint::Sessions,
            Filters::default(),
        )?;
        let store = store_of(app)?;
        let after = page.after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let rows = store
            .list_sessions(&caller.scope, &page.window, after, page.limit + 1)
            .await
            .map_err(|e| unavailable(app, &e))?;
        Ok(page.envelope(
            app,
            &caller,
            Endpoint::Sessions,
            rows,
            |s| (s.started_at_ms, s.id.clone()),
            session_item,
        ))
    })
    .await
}

/// `GET /v1/sessions/{id}`: one session with its events and nudges; 404 when it does not exist
/// for the caller's site and mode or is older than the retention window.
pub async fn detail(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve_read(app, request, |caller, request| async move {
        Params::parse(request.uri().query(), &[])?;
        let not_found = || {
            let shown: String = id.chars().take(80).collect();
            ApiError::NotFound(format!("no session {shown:?}"))
        };
        if !is_session_id(&id) {
            return Err(not_found());
        }
        let store = store_of(app)?;
        let visible_from = caller.site.retention.visible_from_ms(now_ms());
        let detail = store
            .session(&caller.scope, &id, visible_from)
            .await
            .map_err(|e| unavailable(app, &e))?
            .ok_or_else(not_found)?;
        Ok(json!({ "data": session_detail(&detail) }))
    })
    .await
}

/// A session as a list item (API document 2.1).
pub fn session_item(s: &SessionSummary) -> Value {
    json!({
        "id": s.id,
        "started_at": format_ms(s.started_at_ms),
        "ended_at": format_ms(s.ended_at_ms),
        "page_count": s.page_count,
        "intent_score": s.intent_score,
        "converted": s.converted,
        "nudge_count": s.nudge_count,
    })
}

/// A session with its log (API document 2.2).
pub fn session_detail(d: &SessionDetail) -> Value {
    let mut value = session_item(&d.summary);
    let events: Vec<Value> = d
        .events
        .iter()
        .map(|e| {
            let mut event = json!({
                "type": e.event_type,
                "url": e.url,
                "occurred_at": format_ms(e.occurred_at_ms),
            });
            if let (Some(score), Some(object)) = (e.intent_score, event.as_object_mut()) {
                object.insert("intent_score".to_owned(), json!(score));
            }
            event
        })
        .collect();
    let nudges: Vec<Value> = d.nudges.iter().map(session_nudge).collect();
    if let Some(object) = value.as_object_mut() {
        object.insert("events".to_owned(), Value::Array(events));
        object.insert("nudges".to_owned(), Value::Array(nudges));
    }
    value
}

/// A nudge inside a session (API document 2.2 "Session nudge").
fn session_nudge(n: &NudgeSummary) -> Value {
    json!({
        "nudge_id": n.id,
        "type": n.nudge_type,
        "shown_at": format_ms(n.shown_at_ms),
        "outcome": n.outcome,
        "influenced_conversion": n.influenced_conversion,
    })
}
