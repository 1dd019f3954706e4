//! The routes that answer every origin themselves, which the CORS layer (`cors.rs`)
//! leaves alone: the relay (docs/contract/relay.md) and the runtime config (docs/contract/storefront.md). Storefront pages on any
//! domain call them, with publishable keys only.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Who may call a route that answers every origin itself (the relay, docs/contract/relay.md; the runtime
/// config, docs/contract/storefront.md): its preflight's methods and request headers, and the headers a page may
/// read.
pub struct AnyOrigin {
    /// `Access-Control-Allow-Methods` of the preflight.
    methods: &'static str,
    /// `Access-Control-Allow-Headers` of the preflight.
    request_headers: &'static str,
    /// `Access-Control-Expose-Headers` of every answer.
    expose: &'static str,
}

/// `POST /v1/events`: any origin may send events (storefront pages do).
pub const RELAY: AnyOrigin = AnyOrigin {
    methods: "POST, OPTIONS",
    request_headers: "Authorization, Content-Type",
    expose: "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset",
};

/// `GET /v1/runtime/config`: a page needs the preflight only when it sends `If-None-Match`.
pub const RUNTIME: AnyOrigin = AnyOrigin {
    methods: "GET, HEAD, OPTIONS",
    request_headers: "Authorization, If-None-Match",
    expose: "ETag, Retry-After",
};

impl AnyOrigin {
    /// `Access-Control-Allow-Origin: *` and the headers a page may read, on `response`.
    pub fn allow(&self, mut response: Response) -> Response {
        let headers = response.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(self.expose),
        );
        response
    }

    /// The preflight: 204 with the methods and request headers, kept a day.
    pub fn preflight(&self) -> Response {
        let mut response = StatusCode::NO_CONTENT.into_response();
        let map = response.headers_mut();
        map.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(self.methods),
        );
        map.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(self.request_headers),
        );
        map.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("86400"),
        );
        self.allow(response)
    }
}

/// `OPTIONS /v1/events`.
pub async fn relay_preflight() -> Response {
    RELAY.preflight()
}

/// `OPTIONS /v1/runtime/config`.
pub async fn runtime_preflight() -> Response {
    RUNTIME.preflight()
}

/// Every answer of `/v1/runtime/config` but the router's 405.
pub async fn runtime_answer(response: Response) -> Response {
    RUNTIME.allow(response)
}
