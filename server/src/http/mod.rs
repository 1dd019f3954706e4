//! HTTP, the only module that names axum: the public router (built from the route table,
//! [`routes::ROUTES`]: each route's methods, one 405 for the others, one 404 naming them all),
//! the shared request pipeline ([`pipeline`], [`auth`]), bodies ([`body`]), the routes' request
//! bodies and answers ([`forms`]), pages and their envelopes ([`page`]), query parameters
//! ([`query`]), CORS ([`cors`], and [`any_origin`] for the routes every page may call), the
//! errors ([`error`]), the admin listener ([`admin`]) and the API document ([`openapi`]); the
//! routes are in [`routes`], one room per resource (API document 4, 5, 7, 8;
//! docs/contract/server.md, read-api.md, relay.md, backtest.md, versions.md, caps.md and
//! webhooks.md):
//! `POST /v1/nudges/preview` ([`routes::preview`]), `GET /v1/sessions` and `GET
//! /v1/sessions/{id}` ([`routes::sessions`]), `GET /v1/nudges` ([`routes::nudges`]), `POST
//! /v1/events` ([`routes::events`]), `POST /v1/nudges/backtest` ([`routes::backtest`]), `GET
//! /v1/reports/uplift` ([`routes::reports`]), the config routes ([`routes::config`],
//! [`routes::versions`]), the storefront's `GET /v1/runtime/config` ([`routes::runtime`]) and
//! the webhook routes ([`routes::webhooks`], [`routes::webhook_actions`],
//! [`routes::webhook_attempts`]).
//!
//! Handlers extract, call and respond: the extractors are [`extract`]'s and [`query`]'s, and
//! the routes a secret key calls sit behind the admission layer ([`pipeline::admitted`]),
//! which admits the caller and writes the limiter's headers. The order of the checks, each
//! refusal an [`ApiError`] with the `{"error", "message"}` body (docs/SERVER.md has the whole
//! table):
//!
//! 1. HTTP rules (`connection_rules`): one `Host`, no transfer coding but `chunked` (400);
//! 2. route and method: 404 NotFound, 405 MethodNotAllowed with `Allow` (no key needed);
//! 3. the server's lifecycle: 503 ServiceUnavailable while loading or shutting down;
//! 4. `Authorization: Bearer <secret key>`: 401 Unauthorized with `WWW-Authenticate`;
//! 5. the key's one rolling window: 429 RateLimitExceeded with `Retry-After` (not counted);
//! 6. the route's own checks: the preview's media type, body and config; the reads' query
//!    parameters (400) and the store (503 while unreachable).
//!
//! Every response from step 5 on carries the rate-limit headers of the decision.

pub mod admin;
pub mod any_origin;
pub mod auth;
pub mod body;
pub mod cors;
pub mod error;
pub mod extract;
pub mod forms;
pub mod openapi;
pub mod page;
pub mod pipeline;
pub mod query;
pub mod routes;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Uri;
use axum::http::{HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Router};
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::{DefaultOnFailure, TraceLayer};
use tracing::Level;
use tracing::field::Empty;

use crate::app::state::AppState;
use crate::http::error::ApiError;
use crate::http::pipeline::{ApiOptions, BodyRead, admitted, method_not_allowed};
use crate::metrics::{RequestLabels, RouteLabels};
use routes::{Access, Route};

/// The public router, built from the route table ([`routes::ROUTES`]): each route's handlers,
/// behind the admission layer when it is keyed, and for every other method one 405 whose
/// `Allow` names the route's methods (axum's own `Allow` is left unwritten, since the answer
/// has one; `HEAD` is refused unless listed: axum would serve it with the `GET` handler);
/// anything else is the 404 that lists the routes.
pub fn router(state: Arc<AppState>, options: ApiOptions) -> Router {
    let mut router = Router::new();
    let served: Vec<&Route> = routes::served(options.constant_route).collect();
    for route in &served {
        let mut methods = (route.handlers)();
        if route.access == Access::Keyed {
            methods = methods.route_layer(middleware::from_fn_with_state(state.clone(), admitted));
        }
        let allow = HeaderValue::from_str(&route.allow()).unwrap_or(HeaderValue::from_static(""));
        let refuse = move |method: Method, uri: Uri| {
            let allow = allow.clone();
            async move { method_not_allowed(&method, uri.path(), allow).into_response() }
        };
        if !route.methods.contains(&Method::HEAD) {
            methods = methods.head(refuse.clone());
        }
        router = router.route(route.path, methods.fallback(refuse));
    }
    let words: Vec<String> = served.iter().map(|r| r.words()).collect();
    let serves: Arc<str> = words.join("; ").into();
    router
        .fallback(move |method: Method, uri: Uri| not_found(method, uri, Arc::clone(&serves)))
        .layer(RequestBodyTimeoutLayer::new(options.body_read_timeout))
        .layer(Extension(options))
        .layer(middleware::from_fn(connection_rules))
        .layer(middleware::from_fn_with_state(state.clone(), cors::cors))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &Request| {
                    // The route, never the raw path or query: a key pasted there stays out of
                    // logs.
                    tracing::debug_span!(
                        "request",
                        method = %request.method(),
                        route = route_of(request),
                        site = Empty,
                        key = Empty,
                    )
                })
                // A 500 InvalidConfig is the site's config, logged once when it was refused;
                // not an error line per request.
                .on_failure(DefaultOnFailure::new().level(Level::DEBUG)),
        )
        .with_state(state)
}

/// Which route label a request gets (the route table's, by the matched path), or `unmatched`.
fn route_of(request: &Request) -> &'static str {
    routes::label_of(
        request
            .extensions()
            .get::<MatchedPath>()
            .map(MatchedPath::as_str),
    )
}

/// Counts every public response by route and status and times it.
async fn observe(State(app): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let route = route_of(&request);
    let start = Instant::now();
    let response = next.run(request).await;
    let labels = RequestLabels {
        route,
        status: response.status().as_u16(),
    };
    app.metrics.requests.get_or_create(&labels).inc();
    app.metrics
        .request_duration
        .get_or_create(&RouteLabels { route })
        .observe(start.elapsed().as_secs_f64());
    response
}

/// HTTP rules of every request (RFC 9112), before any route, and the connection after an early
/// answer:
/// - HTTP/1.1 with no `Host` or more than one: 400;
/// - a `Transfer-Encoding` other than `chunked` (a `gzip, chunked` body would be read with the
///   coding ignored): 400;
/// - an answer given without reading a request body the client sent (401, 404, 405, 415, 429,
///   503, ...) says `Connection: close`, so a keep-alive client does not send its next request
///   into the unread body.
async fn connection_rules(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let hosts = headers.get_all(header::HOST).iter().count();
    let refusal = if request.version() == axum::http::Version::HTTP_11 && hosts != 1 {
        Some(format!(
            "an HTTP/1.1 request carries exactly one Host header; this one has {hosts}"
        ))
    } else {
        headers
            .get_all(header::TRANSFER_ENCODING)
            .iter()
            .flat_map(|v| v.to_str().unwrap_or("?").split(','))
            .map(str::trim)
            .find(|coding| !coding.eq_ignore_ascii_case("chunked"))
            .map(|coding| {
                format!(
                    "Transfer-Encoding {:?} is not supported; send the body as it is, with Content-Length or chunked",
                    coding.chars().take(40).collect::<String>()
                )
            })
    };
    let body_sent = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0");
    let mut response = match refusal {
        Some(message) => ApiError::InvalidRequest(message).into_response(),
        None => next.run(request).await,
    };
    if body_sent && response.extensions().get::<BodyRead>().is_none() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The 404 of a path no route serves, naming every route this server serves (`serves`: each
/// route's methods and path, `; `-separated).
async fn not_found(method: Method, uri: Uri, serves: Arc<str>) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::NotFound(format!(
        "no endpoint at {method} {path}; this server serves: {serves}"
    ))
    .into_response()
}

/// A header map of `(name, value)` pairs, repeats kept (the unit tests of the extractors,
/// bodies and keys).
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn test_headers(pairs: &[(&str, &str)]) -> axum::http::HeaderMap {
    let mut map = axum::http::HeaderMap::new();
    for (k, v) in pairs {
        map.append(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            axum::http::HeaderValue::from_str(v).unwrap(),
        );
    }
    map
}
