//! `GET /v1/reports/uplift` (docs/contract/caps.md "Measured uplift"): per rule with exposures in the window,
//! its treated and control arms, their conversion rates, the absolute uplift with Newcombe's
//! hybrid score interval, the relative uplift, the pooled z-test's p-value and `enough_data`
//! ([`crate::app::uplift`]).
//!
//! The window is the read API's (docs/contract/read-api.md "Parameters", "Retention"): `from` and `to` exactly as
//! the list endpoints read them, `to` now and `from` 30 days before by default, a `from` older
//! than the plan's window moved to it; the sessions counted are those that started in it.

use std::sync::Arc;

use axum::extract::State;

use crate::app::state::AppState;
use crate::app::uplift::uplift_of;
use crate::domain::time::format_ms;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::forms::UpliftReport;
use crate::http::page::{DataEnvelope, resolve_window, to_body};
use crate::http::pipeline::{Read, store_of};
use crate::http::query::WindowQuery;

/// The endpoint's path.
pub const UPLIFT_PATH: &str = "/v1/reports/uplift";

/// `GET /v1/reports/uplift?from&to`.
pub async fn uplift(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    query: WindowQuery,
) -> Result<Read, ApiError> {
    let window = resolve_window(&caller, query.from, query.to, app.clock.now_ms())?;
    let counts = store_of(&app)?
        .uplift_counts(&caller.scope, &window)
        .await?;
    let data = UpliftReport {
        from: format_ms(window.visible_start_ms()),
        to: format_ms(window.to_ms),
        rules: uplift_of(counts),
    };
    Ok(Read(to_body(&DataEnvelope { data })))
}
