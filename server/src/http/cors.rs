//! CORS on the REST endpoints (docs/contract/backtest.md): a browser page may call them only from an origin the
//! site lists in `allowed_origins`. The relay (`POST /v1/events`) answers every origin itself
//! (docs/contract/relay.md) and is left alone, as is the runtime config (docs/contract/storefront.md), which answers `*` itself.
//!
//! - A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an origin some site
//!   lists gets 204 with the allowed methods and headers; from any other origin it goes on to
//!   the route, which answers 405 without CORS headers, so the browser refuses the call.
//! - A request with `Origin` gets `Access-Control-Allow-Origin: <origin>` when its key's site
//!   lists the origin; when the key names no site (401), when some site lists it, so that an
//!   editor can tell a refused key from an unreachable server. Never `*`, never another
//!   site's origin.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::state::AppState;
use crate::http::auth::bearer_key;
use crate::http::routes::events::EVENTS_PATH;
use crate::http::routes::runtime::RUNTIME_PATH;
use crate::sites::keys::KeyHash;

/// Methods a preflight allows: `PATCH` and `DELETE` for the editor's webhook endpoints (docs/contract/webhooks.md).
const METHODS: &str = "GET, POST, PATCH, DELETE";
/// Request headers a preflight allows.
const REQUEST_HEADERS: &str = "Authorization, Content-Type, If-Match, If-None-Match";
/// Response headers a page may read.
const EXPOSED: &str = "ETag, Location, Nudge-Config-Version, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset";

/// The CORS layer of the public router.
pub(crate) async fn cors(
    State(app): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path() == EVENTS_PATH || request.uri().path() == RUNTIME_PATH {
        return next.run(request).await;
    }
    let Some(origin) = request.headers().get(header::ORIGIN).cloned() else {
        return next.run(request).await;
    };
    let listed_anywhere = |origin: &HeaderValue| {
        app.sites().iter().any(|s| {
            s.allowed_origins
                .iter()
                .any(|o| o.as_bytes() == origin.as_bytes())
        })
    };
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        if !listed_anywhere(&origin) {
            return next.run(request).await;
        }
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(METHODS),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(REQUEST_HEADERS),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
        return response;
    }
    let allowed = match site_origins(&app, request.headers()) {
        Some(origins) => origins.iter().any(|o| o.as_bytes() == origin.as_bytes()),
        None => listed_anywhere(&origin),
    };
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    if allowed {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED),
        );
    }
    response
}

/// The `allowed_origins` of the site whose secret key the request carries, if any.
fn site_origins(app: &AppState, headers: &HeaderMap) -> Option<Vec<String>> {
    let key = bearer_key(headers).ok()?;
    let sites = app.sites();
    let site = sites.site_of_key(&KeyHash::of_key(key))?;
    Some(site.allowed_origins.clone())
}
