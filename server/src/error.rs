//! The API's errors (API document section 7; SPEC 7, 9): one enum whose [`IntoResponse`]
//! gives each its status, error name, headers and `{"error", "message"}` body, so handlers
//! return `Result<_, ApiError>` and use `?`.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::AuthFailure;
use crate::limiter::Decision;
use crate::state::Unavailable;

/// Why a request was refused.
#[derive(Debug)]
pub enum ApiError {
    /// 400 InvalidRequest: a parameter, a header or a body field, named with its value.
    InvalidRequest(String),
    /// 400 InvalidCursor: a cursor that is damaged, of another list, site, mode or server, or
    /// sent with other filters than its own (SPEC 9 "Pagination").
    InvalidCursor(String),
    /// 401 Unauthorized with `WWW-Authenticate` (SPEC 7 "Authentication").
    Unauthorized(AuthFailure),
    /// 404 NotFound; for records, the same message whether the record is unknown or another
    /// site's or mode's (SPEC 9 "Modes").
    NotFound(String),
    /// 405 MethodNotAllowed with `Allow`.
    MethodNotAllowed {
        /// The methods the route serves, for `Allow`.
        allow: &'static str,
        /// The message.
        message: String,
    },
    /// 408 RequestTimeout: the body did not arrive in time.
    RequestTimeout(String),
    /// 413 PayloadTooLarge, with `Connection: close` (the rest of the body is never read).
    PayloadTooLarge(String),
    /// 415 UnsupportedMediaType.
    UnsupportedMediaType(String),
    /// 429 RateLimitExceeded with `Retry-After` and the decision's headers (SPEC 7).
    RateLimited(Decision),
    /// 429 RateLimitExceeded for a relay batch of this many events, refused whole (SPEC 10).
    EventsRateLimited(Decision, u32),
    /// 500 InvalidConfig: the site never had a valid config; the body names every diagnostic.
    InvalidConfig(String),
    /// The engine's refusal of a request (400 InvalidRequest), with the engine's body.
    Engine(nudge_rules::Error),
    /// 503 while loading or shutting down, with `Retry-After`.
    Unavailable(Unavailable),
    /// 503 while the store is unreachable (SPEC 9: never a 500), with `Retry-After`.
    StoreUnavailable,
    /// 400 for a config or scenario file the caller sent (SPEC 12, 13): the engine's error
    /// name (`InvalidConfig`, `InvalidScenarios`) and message, and every diagnostic in
    /// `diagnostics` (`{severity, code, path, message, line, column}`), so an editor can point
    /// at each.
    Sent(nudge_rules::Error),
    /// 409 ConfigManagedByFile: the site's config is a file on the server (SPEC 13).
    ConfigManagedByFile(String),
    /// 412 PreconditionFailed: `If-Match` names a version that is no longer the latest.
    PreconditionFailed(String),
    /// 428 PreconditionRequired: a publish without `If-Match` or `If-None-Match: *`.
    PreconditionRequired(String),
    /// 422 ScenariosFailed: the scenarios given with a publish do not all pass; nothing was
    /// published. The message lists each failure as `nudge-rules test` prints it, and
    /// `failures` has them as `{name, expected, got, reason}`.
    ScenariosFailed {
        /// The message.
        message: String,
        /// Each failed scenario, serialized.
        failures: serde_json::Value,
    },
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, name, message) = match &self {
            ApiError::InvalidRequest(m) => (StatusCode::BAD_REQUEST, "InvalidRequest", m.clone()),
            ApiError::InvalidCursor(m) => (StatusCode::BAD_REQUEST, "InvalidCursor", m.clone()),
            ApiError::Unauthorized(failure) => (
                StatusCode::UNAUTHORIZED,
                "Unauthorized",
                failure.message().to_owned(),
            ),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "NotFound", m.clone()),
            ApiError::MethodNotAllowed { message, .. } => (
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                message.clone(),
            ),
            ApiError::RequestTimeout(m) => {
                (StatusCode::REQUEST_TIMEOUT, "RequestTimeout", m.clone())
            }
            ApiError::PayloadTooLarge(m) => {
                (StatusCode::PAYLOAD_TOO_LARGE, "PayloadTooLarge", m.clone())
            }
            ApiError::UnsupportedMediaType(m) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UnsupportedMediaType",
                m.clone(),
            ),
            ApiError::RateLimited(decision) => (
                StatusCode::TOO_MANY_REQUESTS,
                "RateLimitExceeded",
                format!(
                    "rate limit of {} requests per rolling 60 s exceeded for this API key; retry in {} seconds",
                    decision.limit,
                    decision.reset_after_s()
                ),
            ),
            ApiError::EventsRateLimited(decision, events) => (
                StatusCode::TOO_MANY_REQUESTS,
                "RateLimitExceeded",
                format!(
                    "the batch of {events} events does not fit in this key's limit of {} events per rolling 60 s ({} used); nothing was stored; retry in {} seconds",
                    decision.limit,
                    decision.count,
                    decision.reset_after_s()
                ),
            ),
            ApiError::InvalidConfig(body) => {
                return json(StatusCode::INTERNAL_SERVER_ERROR, body.clone());
            }
            ApiError::Engine(e) => {
                let status =
                    StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
                return json(status, e.to_body());
            }
            ApiError::Unavailable(why) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                match why {
                    Unavailable::Loading => "the server is starting: site configs are loading",
                    Unavailable::ShuttingDown => "the server is shutting down",
                }
                .to_owned(),
            ),
            ApiError::StoreUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "the store is unreachable; nothing was read or written; retry shortly".to_owned(),
            ),
            ApiError::Sent(e) => {
                let body = serde_json::json!({
                    "error": e.kind().name(),
                    "message": e.to_string(),
                    "diagnostics": e.diagnostics(),
                });
                return json(StatusCode::BAD_REQUEST, body.to_string());
            }
            ApiError::ConfigManagedByFile(m) => {
                (StatusCode::CONFLICT, "ConfigManagedByFile", m.clone())
            }
            ApiError::PreconditionFailed(m) => (
                StatusCode::PRECONDITION_FAILED,
                "PreconditionFailed",
                m.clone(),
            ),
            ApiError::PreconditionRequired(m) => (
                StatusCode::PRECONDITION_REQUIRED,
                "PreconditionRequired",
                m.clone(),
            ),
            ApiError::ScenariosFailed { message, failures } => {
                let body = serde_json::json!({
                    "error": "ScenariosFailed",
                    "message": message,
                    "failures": failures,
                });
                return json(StatusCode::UNPROCESSABLE_ENTITY, body.to_string());
            }
        };
        let mut response = error(status, name, &message);
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthorized(failure) => {
                if let Ok(value) = HeaderValue::try_from(failure.challenge()) {
                    headers.insert(header::WWW_AUTHENTICATE, value);
                }
            }
            ApiError::MethodNotAllowed { allow, .. } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
            }
            ApiError::PayloadTooLarge(_) => {
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            ApiError::RateLimited(decision) | ApiError::EventsRateLimited(decision, _) => {
                decision.write_headers(headers);
            }
            ApiError::Unavailable(why) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                if *why == Unavailable::ShuttingDown {
                    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
            }
            ApiError::StoreUnavailable => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            }
            _ => {}
        }
        response
    }
}

/// The API document's error body (section 7): `{"error": NAME, "message": TEXT}`.
pub fn error(status: StatusCode, name: &str, message: &str) -> Response {
    let body = serde_json::json!({ "error": name, "message": message }).to_string();
    json(status, body)
}

/// A JSON response that no cache keeps.
pub fn json(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        Body::from(body),
    )
        .into_response()
}
