//! The shared request pipeline of the REST API: the method (405 with `Allow`, the router's),
//! then the admission layer ([`admitted`]: lifecycle, key and limit, [`crate::http::auth`]),
//! then the route's extractors and handler; the layer writes the limiter's headers on every
//! answer and books what every answer shares (the store's gauge and error counter, whether
//! the body was read).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::state::AppState;
use crate::http::auth::{Caller, admit};
use crate::http::error::{ApiError, Refused, json};
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

/// 405 with `Allow: allow` (the route table's methods, `GET, POST`).
pub(crate) fn method_not_allowed(method: &Method, path: &str, allow: HeaderValue) -> ApiError {
    let path: String = path.chars().take(200).collect();
    let message = format!(
        "{method} is not allowed on {path}; use {}",
        allow.to_str().unwrap_or_default()
    );
    ApiError::MethodNotAllowed { allow, message }
}

/// `Cache-Control` of a successful read (docs/contract/read-api.md; API document section 8 recommends caching
/// session and nudge data for 60 to 300 s).
pub const READ_CACHE_CONTROL: &str = "private, max-age=60";

/// A successful read: 200 with the JSON body and `Cache-Control: private, max-age=60`.
pub struct Read(pub String);

impl IntoResponse for Read {
    fn into_response(self) -> Response {
        let mut response = json(StatusCode::OK, self.0);
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(READ_CACHE_CONTROL),
        );
        response
    }
}

/// The admission layer of the routes a secret key calls (a `route_layer`, so that a 404 or
/// 405 needs no key): the lifecycle (503), the key (401) and its window (429)
/// ([`admit`]); an admitted request carries its [`Caller`] in its
/// extensions for the handler's extractor. On the way back, every answer gets the decision's
/// headers, and what every answer shares is booked once (`book`).
pub async fn admitted(
    State(app): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let post = request.method() == Method::POST;
    let (caller, decision) = match admit(&app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    request.extensions_mut().insert(caller);
    let mut response = next.run(request).await;
    book(&app, &mut response, post);
    decision.write_headers(response.headers_mut());
    response
}

/// The admission of [`admitted`] for a route that books nothing of the store's (the preview,
/// whose answers say nothing of the store): the lifecycle, the key and its window, then
/// `route` with the [`Caller`]; the decision's headers on every answer after the admission, and
/// the body marked read ([`BodyRead`]) on a refusal made after reading it (the route's own
/// 503 among them: the preview reads its site's config after the body).
pub(crate) async fn admitted_unbooked<F, Fut>(
    app: &AppState,
    request: Request,
    route: F,
) -> Response
where
    F: FnOnce(Caller, Request) -> Fut,
    Fut: Future<Output = Result<Response, ApiError>>,
{
    let (caller, decision) = match admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    let mut response = match route(caller, request).await {
        Ok(response) => response,
        Err(refusal) => {
            let read = refusal.reads_body() || matches!(refusal, ApiError::Unavailable(_));
            let mut response = refusal.into_response();
            if read {
                response.extensions_mut().insert(BodyRead);
            }
            response
        }
    };
    decision.write_headers(response.headers_mut());
    response
}

/// Books what every answer of the REST API shares, once: on success the store counted up and
/// a POST's body marked read ([`BodyRead`]); on a refusal ([`Refused`]) a store failure
/// counted, and the body marked read when the refusal was made after reading it
/// ([`ApiError::reads_body`]); a store that did not answer is counted down.
pub(crate) fn book(app: &AppState, response: &mut Response, post: bool) {
    match response.extensions_mut().remove::<Refused>() {
        None => {
            if app.store.is_some() {
                app.metrics.store_up.set(1);
            }
            if post && response.status().is_success() {
                response.extensions_mut().insert(BodyRead);
            }
        }
        Some(refused) => {
            if refused.store {
                app.metrics.store_errors.inc();
                if app.store.is_some() {
                    app.metrics.store_up.set(0);
                }
            }
            if refused.reads_body {
                response.extensions_mut().insert(BodyRead);
            }
        }
    }
}

/// The store, or 503 when the server has none.
pub(crate) fn store_of(app: &AppState) -> Result<&Store, ApiError> {
    app.store.as_ref().ok_or(ApiError::StoreUnavailable)
}
