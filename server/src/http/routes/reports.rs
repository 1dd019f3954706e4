//! `GET /v1/reports/uplift` (SPEC 15 "Measured uplift"): per rule with exposures in the window,
//! its treated and control arms, their conversion rates, the absolute uplift with Newcombe's
//! hybrid score interval, the relative uplift, the pooled z-test's p-value and `enough_data`
//! ([`crate::app::uplift`]).
//!
//! The window is the read API's (SPEC 9 "Parameters", "Retention"): `from` and `to` exactly as
//! the list endpoints read them, `to` now and `from` 30 days before by default, a `from` older
//! than the plan's window moved to it; the sessions counted are those that started in it.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;
use serde::Serialize;

use crate::app::state::AppState;
use crate::app::uplift::{Arm, RuleUplift, rule_uplift};
use crate::domain::time::{format_ms, now_ms};
use crate::http::page::{DataEnvelope, resolve_window, to_body};
use crate::http::pipeline::{serve_read, store_of, unavailable};
use crate::http::query::Params;

/// The endpoint's path.
pub const UPLIFT_PATH: &str = "/v1/reports/uplift";

/// The answer's `data`.
#[derive(Serialize)]
struct UpliftReport {
    from: String,
    to: String,
    /// By `rule_id` ascending (byte order).
    rules: Vec<RuleUplift>,
}

/// `GET /v1/reports/uplift?from&to`.
pub async fn uplift(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let app = &*app;
    serve_read(app, request, |caller, request| async move {
        let params = Params::parse(request.uri().query(), &["from", "to"])?;
        let (from, to) = (params.time("from")?, params.time("to")?);
        let window = resolve_window(&caller, from, to, now_ms())?;
        let store = store_of(app)?;
        let counts = store
            .uplift_counts(&caller.scope, &window)
            .await
            .map_err(|e| unavailable(app, &e))?;
        // rule id -> (treated, control)
        let mut arms: BTreeMap<String, (Arm, Arm)> = BTreeMap::new();
        for count in counts {
            let entry = arms.entry(count.rule_id).or_default();
            let arm = if count.treated {
                &mut entry.0
            } else {
                &mut entry.1
            };
            arm.sessions += count.sessions;
            arm.converted += count.converted;
        }
        let rules = arms
            .iter()
            .map(|(rule_id, &(treated, control))| rule_uplift(rule_id, treated, control))
            .collect();
        Ok(to_body(&DataEnvelope {
            data: UpliftReport {
                from: format_ms(window.from_ms),
                to: format_ms(window.to_ms),
                rules,
            },
        }))
    })
    .await
}
