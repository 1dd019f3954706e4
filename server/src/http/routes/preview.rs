//! `POST /v1/nudges/preview` (API document 4.4, 2.4; docs/contract/preview.md, docs/contract/server.md): after the lifecycle, key and
//! limit (`pipeline::admitted_unbooked`: a preview books nothing of the store's), the media
//! type (415), the body (at most 64 KiB: 413, refused on its `Content-Length` before a byte is
//! read; 408 when it does not arrive in time), the site's config (500 InvalidConfig when it
//! never had a valid one), then the engine (200, or 400 InvalidRequest).

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use nudge_rules::Engine;
use nudge_rules::limits::MAX_REQUEST_BYTES;

use crate::app::state::{AppState, Unavailable};
use crate::http::auth::Caller;
use crate::http::body::{check_content_type, read_body};
use crate::http::error::{ApiError, json};
use crate::http::pipeline::{ApiOptions, BodyRead, admitted_unbooked};
use crate::sites::registry::Served;

/// The preview endpoint (API document 4.4).
pub const PREVIEW_PATH: &str = "/v1/nudges/preview";

/// `Nudge-Config-Version` (docs/contract/versions.md): which config answered a preview, the published version
/// or a file's SHA-256 prefix.
pub const CONFIG_VERSION: header::HeaderName =
    header::HeaderName::from_static("nudge-config-version");

/// What answers an admitted request's body once its site's engine is known: the engine
/// itself, or the benchmark's constant (`routes/bench.rs`).
pub(crate) type Evaluate = fn(&AppState, &Engine, &[u8]) -> Result<String, ApiError>;

/// `POST /v1/nudges/preview`.
pub async fn preview(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let answer = |caller: Caller, request| answer(&app, caller, request, &options, evaluate);
    admitted_unbooked(&app, request, answer).await
}

/// The engine's answer to `body`, timed in `nudge_engine_duration_seconds`.
fn evaluate(app: &AppState, engine: &Engine, body: &[u8]) -> Result<String, ApiError> {
    let start = Instant::now();
    let result = engine.preview_body(body);
    let seconds = start.elapsed().as_secs_f64();
    app.metrics.engine_duration.observe(seconds);
    result.map_err(ApiError::Engine)
}

/// Everything after the key and the limit, for an admitted request of `caller`.
pub(crate) async fn answer(
    app: &AppState,
    caller: Caller,
    request: Request,
    options: &ApiOptions,
    evaluate: Evaluate,
) -> Result<Response, ApiError> {
    check_content_type(request.headers())?;
    let body = read_body(request, MAX_REQUEST_BYTES, options.body_total_timeout).await?;
    let served = caller.site.served(caller.scope.mode);
    let (engine, version) = match &**served {
        Served::Valid {
            engine, version, ..
        } => (engine, version),
        Served::NeverValid { body } => return Err(ApiError::InvalidConfig(body.clone())),
        Served::Loading => return Err(ApiError::Unavailable(Unavailable::Loading)),
    };
    let mut response = json(StatusCode::OK, evaluate(app, engine, &body)?);
    if let Ok(value) = HeaderValue::from_str(version) {
        response.headers_mut().insert(CONFIG_VERSION, value);
    }
    response.extensions_mut().insert(BodyRead);
    Ok(response)
}
