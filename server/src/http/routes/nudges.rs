//! `GET /v1/nudges` (API document 4.3), SPEC 9.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;

use crate::app::state::AppState;
use crate::domain::cursor::{Endpoint, Filters};
use crate::domain::wire::NudgeItem;
use crate::http::page::ListPage;
use crate::http::pipeline::{serve_read, store_of, unavailable};
use crate::http::query::Params;
use crate::store::NudgeFilter;

/// The list's path.
pub const LIST_PATH: &str = "/v1/nudges";

/// `GET /v1/nudges`: nudge events shown in `[from, to)` whose session is visible, newest first.
pub async fn list(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let app = &*app;
    serve_read(app, request, |caller, request| async move {
        let params = Params::parse(
            request.uri().query(),
            &["session_id", "type", "from", "to", "limit", "cursor"],
        )?;
        let filters = Filters {
            session_id: params.session_id()?,
            nudge_type: params.nudge_type()?,
            ..Filters::default()
        };
        let page = ListPage::resolve(app, &caller, &params, Endpoint::Nudges, filters)?;
        let filter = NudgeFilter {
            session_id: page.filters.session_id.clone(),
            nudge_type: page.filters.nudge_type,
        };
        let store = store_of(app)?;
        let mut rows = store
            .list_nudges(
                &caller.scope,
                &page.window,
                &filter,
                &page.walk,
                page.limit + 1,
            )
            .await
            .map_err(|e| unavailable(app, &e))?;
        Ok(page.envelope(app, &caller, Endpoint::Nudges, &mut rows, NudgeItem::of))
    })
    .await
}
