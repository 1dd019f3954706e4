//! The shared request pipeline of the REST API: the method (405 with `Allow`), then the
//! lifecycle, key and limit ([`admit`]), then the route's handler; the answer carries the
//! limiter's headers, and the store's failures become one 503.

use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::state::AppState;
use crate::http::auth::{Caller, admit};
use crate::http::error::{ApiError, json};
use crate::store::Store;

/// How the public listener behaves beyond the contract's fixed parts.
#[derive(Clone, Copy, Debug)]
pub struct ApiOptions {
    /// How long the body may take to arrive between two chunks before 408.
    pub body_read_timeout: Duration,
    /// How long the whole body may take to arrive before 408.
    pub body_total_timeout: Duration,
    /// Whether the benchmark's constant route (`POST /v1/_bench/constant`) is served.
    pub constant_route: bool,
}

/// Marks a response whose request body was read to its end: the connection can carry another
/// request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyRead;

/// 405 with `Allow: allow`.
pub(crate) fn method_not_allowed(method: &Method, path: &str, allow: &'static str) -> ApiError {
    let path: String = path.chars().take(200).collect();
    ApiError::MethodNotAllowed {
        allow,
        message: format!("{method} is not allowed on {path}; use {allow}"),
    }
}

/// `Cache-Control` of a successful read (SPEC 9; API document section 8 recommends caching
/// session and nudge data for 60 to 300 s).
pub const READ_CACHE_CONTROL: &str = "private, max-age=60";

/// Runs a read handler behind the shared pipeline ([`serve`] with GET); a successful read is
/// a 200 with `Cache-Control: private, max-age=60`.
pub(crate) async fn serve_read<F, Fut>(app: &AppState, request: Request, read: F) -> Response
where
    F: FnOnce(Caller, Request) -> Fut,
    Fut: std::future::Future<Output = Result<String, ApiError>>,
{
    serve(app, request, |caller, request| async move {
        let mut response = json(StatusCode::OK, read(caller, request).await?);
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(READ_CACHE_CONTROL),
        );
        Ok(response)
    })
    .await
}

/// Runs a handler behind the shared pipeline (the router has checked the method): lifecycle,
/// key and limit (`auth.rs`), then `handle`; the answer carries the limiter's headers. A POST
/// refused after its body was read keeps the connection open ([`BodyRead`]).
pub(crate) async fn serve<F, Fut>(app: &AppState, request: Request, handle: F) -> Response
where
    F: FnOnce(Caller, Request) -> Fut,
    Fut: std::future::Future<Output = Result<Response, ApiError>>,
{
    let post = request.method() == Method::POST;
    let (caller, decision) = match admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    let mut response = respond(app, handle(caller, request).await);
    if post && response.status().is_success() {
        response.extensions_mut().insert(BodyRead);
    }
    decision.write_headers(response.headers_mut());
    response
}

/// A route's answer, with what every answer of the pipeline shares: the store counted up on
/// success, a store failure counted, and a refusal made after the body was read marked so
/// ([`BodyRead`], [`ApiError::reads_body`]).
pub(crate) fn respond(app: &AppState, result: Result<Response, ApiError>) -> Response {
    match result {
        Ok(response) => {
            if app.store.is_some() {
                app.metrics.store_up.set(1);
            }
            response
        }
        Err(error) => {
            if matches!(error, ApiError::StoreUnavailable) {
                app.metrics.store_errors.inc();
            }
            let body_read = error.reads_body();
            let mut response = error.into_response();
            if body_read {
                response.extensions_mut().insert(BodyRead);
            }
            response
        }
    }
}

/// The store, or 503 when the server has none.
pub(crate) fn store_of(app: &AppState) -> Result<&Store, ApiError> {
    app.store.as_ref().ok_or(ApiError::StoreUnavailable)
}

/// Logs a store failure (without any request data) and turns it into the 503.
pub(crate) fn unavailable(app: &AppState, error: &crate::store::StoreError) -> ApiError {
    app.metrics.store_up.set(0);
    tracing::warn!(error = %error, "store unreachable: answering 503");
    ApiError::StoreUnavailable
}
