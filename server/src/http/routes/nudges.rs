//! `GET /v1/nudges` (API document 4.3), docs/contract/read-api.md.

use std::sync::Arc;

use axum::extract::State;

use crate::app::state::AppState;
use crate::domain::cursor::{Endpoint, Filters};
use crate::domain::wire::NudgeItem;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::page::ListPage;
use crate::http::pipeline::{Read, store_of};
use crate::http::query::NudgesQuery;
use crate::store::NudgeFilter;

/// The list's path.
pub const LIST_PATH: &str = "/v1/nudges";

/// `GET /v1/nudges`: nudge events shown in `[from, to)` whose session is visible, newest first.
pub async fn list(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    query: NudgesQuery,
) -> Result<Read, ApiError> {
    let filters = Filters {
        session_id: query.session_id,
        nudge_type: query.nudge_type,
        ..Filters::default()
    };
    let page = ListPage::resolve(&app, &caller, &query.list, Endpoint::Nudges, filters)?;
    let filter = NudgeFilter {
        session_id: page.filters.session_id.clone(),
        nudge_type: page.filters.nudge_type,
    };
    let (window, walk) = (&page.window, &page.walk);
    let mut rows = store_of(&app)?
        .list_nudges(&caller.scope, window, &filter, walk, page.limit + 1)
        .await?;
    Ok(Read(page.envelope(
        &app,
        &caller,
        Endpoint::Nudges,
        &mut rows,
        NudgeItem::of,
    )))
}
