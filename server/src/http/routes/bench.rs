//! `POST /v1/_bench/constant`, the benchmark's baseline (docs/PERFORMANCE.md): the preview's
//! whole pipeline (lifecycle, key, limiter, content type, body, site) answering a constant body
//! instead of calling the engine. Served only with `--constant-route`; not part of the API.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Request, State};
use axum::response::Response;
use nudge_rules::Engine;

use super::preview::answer;
use crate::app::state::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::pipeline::{ApiOptions, admitted_unbooked};

/// The route's path.
pub const CONSTANT_PATH: &str = "/v1/_bench/constant";

/// What the route answers: a preview result of typical size.
const CONSTANT_BODY: &str = r#"{"data":{"would_fire":true,"nudge":{"type":"chat_bubble","message":"Not sure about the fit? Ask a stylist.","cta":"Start chat","reason":"constant body: the benchmark's baseline, no engine call"}}}"#;

/// `POST /v1/_bench/constant`.
pub async fn constant(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let answer = |caller: Caller, request| answer(&app, caller, request, &options, constant_body);
    admitted_unbooked(&app, request, answer).await
}

fn constant_body(_: &AppState, _: &Engine, _: &[u8]) -> Result<String, ApiError> {
    Ok(CONSTANT_BODY.to_owned())
}
