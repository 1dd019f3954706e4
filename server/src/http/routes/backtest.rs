//! `POST /v1/nudges/backtest` (docs/contract/backtest.md): the stored sessions of the caller's site and mode that
//! started in the window, replayed against a draft config (or the live one) and against the
//! live config, with what changes ([`crate::app::backtest`]). Checks, in order: the body (415,
//! 413, 408, 400), `from` and `to`, the live config (500, 503), the draft (400 InvalidConfig),
//! the window, the store (503).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::config::live;
use crate::app::backtest::replay_window;
use crate::app::state::AppState;
use crate::app::versions::compile_sent;
use crate::domain::time::format_ms;
use crate::http::auth::Caller;
use crate::http::error::{ApiError, json};
use crate::http::extract::Sent;
use crate::http::forms::{BacktestAnswer, BacktestRequest};
use crate::http::page::{DataEnvelope, resolve_window, to_body};
use crate::http::pipeline::store_of;
use crate::http::query::read_time;

/// The endpoint's path.
pub const BACKTEST_PATH: &str = "/v1/nudges/backtest";

/// `POST /v1/nudges/backtest`.
pub async fn backtest(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Sent(sent): Sent<BacktestRequest>,
) -> Result<Response, ApiError> {
    // Up to nine fraction digits, compared exactly (docs/contract/read-api.md "Parameters", as the lists).
    let time = |name: &str, text: Option<&str>| text.map(|t| read_time(name, t)).transpose();
    let (from, to) = (
        time("from", sent.from.as_deref())?,
        time("to", sent.to.as_deref())?,
    );
    let (live, live_version) = live(&caller)?;
    let draft = match sent.config {
        Some(raw) => Arc::new(compile_sent(&raw)?.0),
        None => live.clone(),
    };
    let window = resolve_window(&caller, from, to, app.clock.now_ms())?;
    let store = store_of(&app)?;
    let report = replay_window(store, &caller.scope, &window, live, draft, &app.tasks).await?;
    let data = BacktestAnswer {
        from: format_ms(window.visible_start_ms()),
        to: format_ms(window.to_ms),
        live_version,
        draft: report.draft,
        live: report.live,
        changes: report.changes,
    };
    Ok(json(StatusCode::OK, to_body(&DataEnvelope { data })))
}
