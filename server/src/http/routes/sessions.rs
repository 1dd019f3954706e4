//! `GET /v1/sessions` (API document 4.1) and `GET /v1/sessions/{id}` (4.2), SPEC 9.

use std::sync::Arc;

use axum::extract::{Path, State};
use serde::Serialize;

use crate::app::state::AppState;
use crate::domain::cursor::{Endpoint, Filters};
use crate::domain::ids::is_session_id;
use crate::domain::time::{WireTime, now_ms};
use crate::domain::wire::SessionItem;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::page::{DataEnvelope, ListPage, to_body};
use crate::http::pipeline::{Read, store_of, unavailable};
use crate::http::query::{NoQuery, SessionsQuery};
use crate::store::SessionDetail;

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
        .await
        .map_err(|e| unavailable(&app, &e))?;
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
    let visible_from = caller.site.retention.visible_from_ms(now_ms());
    let detail = store_of(&app)?
        .session(&caller.scope, &id, visible_from)
        .await
        .map_err(|e| unavailable(&app, &e))?
        .ok_or_else(not_found)?;
    let data = SessionDetailItem::of(&detail);
    Ok(Read(to_body(&DataEnvelope { data })))
}

/// A session with its log (API document 2.2).
#[derive(Serialize)]
pub struct SessionDetailItem<'a> {
    #[serde(flatten)]
    session: SessionItem<'a>,
    events: Vec<EventItem<'a>>,
    nudges: Vec<SessionNudgeItem<'a>>,
}

impl<'a> SessionDetailItem<'a> {
    /// The wire form of a session with its events and nudges.
    pub fn of(d: &'a SessionDetail) -> SessionDetailItem<'a> {
        SessionDetailItem {
            session: SessionItem::of(&d.summary),
            events: d
                .events
                .iter()
                .map(|e| EventItem {
                    event_type: &e.event_type,
                    url: &e.url,
                    occurred_at: WireTime(e.occurred_at_ms),
                    intent_score: e.intent_score,
                })
                .collect(),
            nudges: d
                .nudges
                .iter()
                .map(|n| SessionNudgeItem {
                    nudge_id: &n.id,
                    nudge_type: &n.nudge_type,
                    shown_at: WireTime(n.shown_at_ms),
                    outcome: &n.outcome,
                    influenced_conversion: n.influenced_conversion,
                })
                .collect(),
        }
    }
}

/// A page event (API document 2.2 "Session event"), with the SDK's intent score when it sent
/// one (SPEC 8 replay reads it).
#[derive(Serialize)]
struct EventItem<'a> {
    #[serde(rename = "type")]
    event_type: &'a str,
    url: &'a str,
    occurred_at: WireTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    intent_score: Option<i64>,
}

/// A nudge inside a session (API document 2.2 "Session nudge").
#[derive(Serialize)]
struct SessionNudgeItem<'a> {
    nudge_id: &'a str,
    #[serde(rename = "type")]
    nudge_type: &'a str,
    shown_at: WireTime,
    outcome: &'a str,
    influenced_conversion: bool,
}
