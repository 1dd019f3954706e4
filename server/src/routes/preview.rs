//! `POST /v1/nudges/preview` (API document 4.4, 2.4; SPEC 5, 7): after the shared pipeline
//! (routes/mod.rs), the media type (415), the body (at most 64 KiB: 413, refused on its
//! `Content-Length` before a byte is read; 408 when it does not arrive in time), the site's
//! config (500 InvalidConfig when it never had a valid one), then the engine (200, or 400
//! InvalidRequest).

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nudge_rules::limits::MAX_REQUEST_BYTES;

use super::{ApiOptions, BodyRead};
use crate::auth::admit;
use crate::error::{ApiError, json};
use crate::model::event::Mode;
use crate::registry::{Served, Site};
use crate::state::{AppState, Unavailable};

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
    if request.method() != Method::POST {
        return super::method_not_allowed(request.method(), request.uri().path(), "POST")
            .into_response();
    }
    let (caller, decision) = match admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    let mut response = match answer(
        app,
        caller.site,
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
    let body = super::read_body(request, MAX_REQUEST_BYTES, options.body_total_timeout).await?;
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

/// 415 unless there is one `Content-Type` and its media type is `application/json`
/// (parameters such as `charset` allowed).
pub(crate) fn check_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(ApiError::UnsupportedMediaType(
            "the request has more than one Content-Type header; send one: Content-Type: application/json".to_owned(),
        ));
    }
    let content_type = first.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let media_type = content_type
        .as_deref()
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    if media_type.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
        return Ok(());
    }
    let shown = match &content_type {
        None => "no Content-Type".to_owned(),
        Some(v) => format!("Content-Type {:?}", v.chars().take(100).collect::<String>()),
    };
    Err(ApiError::UnsupportedMediaType(format!(
        "the request body must be JSON with Content-Type: application/json; got {shown}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn content_types() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(
                check_content_type(&headers(&[("content-type", ok)])).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "text/plain",
            "application/json-seq",
            "application/x-www-form-urlencoded",
            "",
        ] {
            assert!(
                check_content_type(&headers(&[("content-type", bad)])).is_err(),
                "{bad}"
            );
        }
        assert!(check_content_type(&headers(&[])).is_err());
        let two = headers(&[
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
        ]);
        assert!(check_content_type(&two).is_err());
    }
}
