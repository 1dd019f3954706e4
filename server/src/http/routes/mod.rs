//! The public listener's routes, one room each: extract, call, respond. What they share (the
//! pipeline, bodies, pages, errors) is one floor up, in [`crate::http`].

pub mod backtest;
pub mod bench;
pub mod config;
pub mod events;
pub mod nudges;
pub mod preview;
pub mod reports;
pub mod runtime;
pub mod sessions;
pub mod versions;
pub mod webhook_actions;
pub mod webhook_attempts;
pub mod webhooks;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The routes every origin may call (the relay, SPEC 10; the runtime config, SPEC 14), which
/// the CORS layer leaves alone: `Access-Control-Allow-Origin: *` and the headers a page may
/// read (`expose`) on `response`.
pub(crate) fn allow_any_origin(mut response: Response, expose: &'static str) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(expose),
    );
    response
}

/// The CORS preflight of such a route: 204 with its `methods` and request `headers`, kept a day.
pub(crate) fn any_origin_preflight(methods: &'static str, headers: &'static str) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let map = response.headers_mut();
    map.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    map.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(headers),
    );
    map.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}
