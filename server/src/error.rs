//! The API's errors (API document section 7; SPEC 7, 9): one enum whose [`IntoResponse`]
//! gives each its status, error name, headers and `{"error", "message"}` body, so handlers
//! return `Result<Response, ApiError>` and use `?`.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Why a request was refused.
#[derive(Debug)]
pub enum ApiError {
    /// 400 InvalidRequest: a parameter or a body field, named with its value.
    InvalidRequest(String),
    /// 400 InvalidCursor: a cursor that is damaged, of another list, site, mode or server, or
    /// sent with other filters than its own (SPEC 9 "Pagination").
    InvalidCursor(String),
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
    /// 503 while the store is unreachable (SPEC 9: never a 500), with `Retry-After`.
    StoreUnavailable,
}

impl ApiError {
    /// The status, the error name and the message.
    fn parts(&self) -> (StatusCode, &'static str, String) {
        match self {
            ApiError::InvalidRequest(m) => (StatusCode::BAD_REQUEST, "InvalidRequest", m.clone()),
            ApiError::InvalidCursor(m) => (StatusCode::BAD_REQUEST, "InvalidCursor", m.clone()),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "NotFound", m.clone()),
            ApiError::MethodNotAllowed { message, .. } => (
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                message.clone(),
            ),
            ApiError::StoreUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "the store is unreachable; nothing was read or written; retry shortly".to_owned(),
            ),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, name, message) = self.parts();
        let mut response = error(status, name, &message);
        let headers = response.headers_mut();
        match &self {
            ApiError::MethodNotAllowed { allow, .. } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
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
