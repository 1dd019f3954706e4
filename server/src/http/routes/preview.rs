//! `POST /v1/nudges/preview` (API document 4.4, 2.4; SPEC 5, 7): after the lifecycle, key and
//! limit (`auth::admit`, called here rather than by the admission layer: a preview books
//! nothing of the store's), the media type (415), the body (at most 64 KiB: 413, refused on its
//! `Content-Length` before a byte is read; 408 when it does not arrive in time), the site's
//! config (500 InvalidConfig when it never had a valid one), then the engine (200, or 400
//! InvalidRequest).

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nudge_rules::limits::MAX_REQUEST_BYTES;

use crate::app::state::{AppState, Unavailable};
use crate::domain::event::Mode;
use crate::http::auth::admit;
use crate::http::body::{check_content_type, read_body};
use crate::http::error::{ApiError, json};
use crate::http::pipeline::{ApiOptions, BodyRead};
use crate::sites::registry::{Served, Site};

/// The preview endpoint (API document 4.4).
pub const PREVIEW_PATH: &str = "/v1/nudges/preview";

/// The benchmark's baseline: the same pipeline as the preview (lifecycle, key, limiter,
/// content type, body, site) answering a constant body instead of calling the engine. Served
/// only with `--constant-route`; not part of the API.
pub const CONSTANT_PATH: &str = "/v1/_bench/constant";

/// What the constant route answers: a preview result of typical size.
const CONSTANT_BODY: &str = r#"{"data":{"would_fire":true,"nudge":{"type":"chat_bubble","message":"Not sure about the fit? Ask a stylist.","cta":"Start chat","reason":"constant body: the benchmark's baseline, no engine call"}}}"#;

#[derive(Clone, Copy)]
enum Evaluate {
    Engine,
    Constant,
}

/// `POST /v1/nudges/preview`.
pub async fn preview(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    handle(&app, request, Evaluate::Engine, &options).await
}

/// `POST /v1/_bench/constant`.
pub async fn constant(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    handle(&app, request, Evaluate::Constant, &options).await
}

async fn handle(
    app: &AppState,
    request: Request,
    evaluate: Evaluate,
    options: &ApiOptions,
) -> Response {
    let (caller, decision) = match admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    let mut response = match answer(
        app,
        &caller.site,
        caller.scope.mode,
        request,
        evaluate,
        options,
    )
    .await
    {
        Ok(response) => response,
        Err(refusal) => {
            let body_read = !matches!(
                refusal,
                ApiError::PayloadTooLarge(_)
                    | ApiError::RequestTimeout(_)
                    | ApiError::UnsupportedMediaType(_)
            );
            let mut response = refusal.into_response();
            if body_read {
                response.extensions_mut().insert(BodyRead);
            }
            response
        }
    };
    decision.write_headers(response.headers_mut());
    response
}

/// Everything after the key and the limit, for an admitted request.
async fn answer(
    app: &AppState,
    site: &Site,
    mode: Mode,
    request: Request,
    evaluate: Evaluate,
    options: &ApiOptions,
) -> Result<Response, ApiError> {
    check_content_type(request.headers())?;
    let body = read_body(request, MAX_REQUEST_BYTES, options.body_total_timeout).await?;
    let served = site.served(mode);
    let (engine, version) = match &**served {
        Served::Valid {
            engine, version, ..
        } => (engine, version),
        Served::NeverValid { body } => return Err(ApiError::InvalidConfig(body.clone())),
        Served::Loading => return Err(ApiError::Unavailable(Unavailable::Loading)),
    };
    let mut response = match evaluate {
        Evaluate::Constant => json(StatusCode::OK, CONSTANT_BODY.to_owned()),
        Evaluate::Engine => {
            let start = Instant::now();
            let result = engine.preview_body(&body);
            app.metrics
                .engine_duration
                .observe(start.elapsed().as_secs_f64());
            json(StatusCode::OK, result.map_err(ApiError::Engine)?)
        }
    };
    if let Ok(value) = HeaderValue::from_str(version) {
        response.headers_mut().insert(CONFIG_VERSION, value);
    }
    response.extensions_mut().insert(BodyRead);
    Ok(response)
}

/// `Nudge-Config-Version` (SPEC 13): which config answered a preview, the published version
/// or a file's SHA-256 prefix.
pub const CONFIG_VERSION: header::HeaderName =
    header::HeaderName::from_static("nudge-config-version");
