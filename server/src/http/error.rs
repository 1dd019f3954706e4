//! The API's errors (API document section 7; docs/contract/server.md, docs/contract/read-api.md): one enum whose [`IntoResponse`]
//! gives each its status, error name, headers and `{"error", "message"}` body, so handlers
//! return `Result<_, ApiError>` and use `?`.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::runtime_config::NoConfig;
use crate::app::state::Unavailable;
use crate::app::versions::Refusal;
use crate::app::webhooks::WebhookError;
use crate::limiter::Decision;
use crate::store::StoreError;

/// The realm of `WWW-Authenticate`.
const REALM: &str = "nudge-rules";

/// Why a request failed authentication. The messages say what a well-formed request looks
/// like and never whether a key exists (for this or another site).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header.
    Missing,
    /// Not `Bearer <well-formed key>`, or two headers.
    Malformed,
    /// A well-formed key of no site.
    Unknown,
    /// A publishable `pk_` key: it may only send events to the relay (docs/contract/relay.md).
    Publishable,
    /// A secret `sk_` key sent to the relay, which pages call (docs/contract/relay.md).
    SecretInPage,
}

impl AuthFailure {
    /// The 401's message.
    pub fn message(self) -> &'static str {
        match self {
            AuthFailure::Missing => {
                "missing Authorization header; send Authorization: Bearer <API key>"
            }
            AuthFailure::Malformed => {
                "the Authorization header must be \"Bearer \" followed by an API key: sk_live_ or sk_test_ (pk_live_ or pk_test_ for POST /v1/events) and at least 16 letters or digits"
            }
            AuthFailure::Unknown => "the API key is not valid",
            AuthFailure::Publishable => {
                "a publishable key (pk_) can only send events to POST /v1/events; this endpoint needs a secret key (sk_live_ or sk_test_)"
            }
            AuthFailure::SecretInPage => {
                "a secret key (sk_) must never be put in a page, where anyone can read it; send events with the site's publishable key (pk_live_ or pk_test_), and replace this secret key"
            }
        }
    }

    /// The `WWW-Authenticate` challenge.
    pub fn challenge(self) -> String {
        match self {
            AuthFailure::Missing => format!("Bearer realm=\"{REALM}\""),
            _ => format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""),
        }
    }
}

/// Why a request was refused.
#[derive(Debug)]
pub enum ApiError {
    /// 400 InvalidRequest: a parameter, a header or a body field, named with its value.
    InvalidRequest(String),
    /// 400 InvalidCursor: a cursor that is damaged, of another list, site, mode or server, or
    /// sent with other filters than its own (docs/contract/read-api.md "Pagination").
    InvalidCursor(String),
    /// 401 Unauthorized with `WWW-Authenticate` (docs/contract/server.md "Authentication").
    Unauthorized(AuthFailure),
    /// 404 NotFound; for records, the same message whether the record is unknown or another
    /// site's or mode's (docs/contract/read-api.md "Modes").
    NotFound(String),
    /// 405 MethodNotAllowed with `Allow`.
    MethodNotAllowed {
        /// The methods the route serves, for `Allow`.
        allow: HeaderValue,
        /// The message.
        message: String,
    },
    /// 408 RequestTimeout: the body did not arrive in time.
    RequestTimeout(String),
    /// 413 PayloadTooLarge, with `Connection: close` (the rest of the body is never read).
    PayloadTooLarge(String),
    /// 415 UnsupportedMediaType.
    UnsupportedMediaType(String),
    /// 429 RateLimitExceeded with `Retry-After` and the decision's headers (docs/contract/server.md).
    RateLimited(Decision),
    /// 429 RateLimitExceeded for a relay batch of this many events, refused whole (docs/contract/relay.md).
    EventsRateLimited(Decision, u32),
    /// 500 InvalidConfig: the site never had a valid config; the body names every diagnostic.
    InvalidConfig(String),
    /// The engine's refusal of a request (400 InvalidRequest), with the engine's body.
    Engine(nudge_rules::Error),
    /// 503 while loading or shutting down, with `Retry-After`.
    Unavailable(Unavailable),
    /// 503 while the store is unreachable (docs/contract/read-api.md: never a 500), with `Retry-After`.
    StoreUnavailable,
    /// 400 for a config or scenario file the caller sent (docs/contract/backtest.md, docs/contract/versions.md): the engine's error
    /// name (`InvalidConfig`, `InvalidScenarios`) and message, and every diagnostic in
    /// `diagnostics` (`{severity, code, path, message, line, column}`), so an editor can point
    /// at each.
    Sent(nudge_rules::Error),
    /// 409 ConfigManagedByFile: the site's config is a file on the server (docs/contract/versions.md).
    ConfigManagedByFile(String),
    /// 409 Conflict: the request cannot be done in the resource's state (a site and mode with
    /// the most webhook endpoints, docs/contract/webhooks.md).
    Conflict(String),
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

impl ApiError {
    /// Whether the request's body was read to its end when this refusal was made, so that
    /// the connection can carry another request: not for a body refused for its size (413),
    /// its time (408) or its media type (415), nor for the server's lifecycle (503), which
    /// refuses before any body is read.
    pub fn reads_body(&self) -> bool {
        !matches!(
            self,
            ApiError::PayloadTooLarge(_)
                | ApiError::RequestTimeout(_)
                | ApiError::UnsupportedMediaType(_)
                | ApiError::Unavailable(_)
        )
    }
}

impl ApiError {
    /// The answer's status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidRequest(_) | ApiError::InvalidCursor(_) | ApiError::Sent(_) => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::RateLimited(_) | ApiError::EventsRateLimited(..) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::InvalidConfig(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Engine(e) => {
                StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::BAD_REQUEST)
            }
            ApiError::Unavailable(_) | ApiError::StoreUnavailable => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::ConfigManagedByFile(_) | ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PreconditionFailed(_) => StatusCode::PRECONDITION_FAILED,
            ApiError::PreconditionRequired(_) => StatusCode::PRECONDITION_REQUIRED,
            ApiError::ScenariosFailed { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    /// The body's `error`: the API document's name of the error (section 7).
    pub fn name(&self) -> &'static str {
        match self {
            ApiError::InvalidRequest(_) => "InvalidRequest",
            ApiError::InvalidCursor(_) => "InvalidCursor",
            ApiError::Unauthorized(_) => "Unauthorized",
            ApiError::NotFound(_) => "NotFound",
            ApiError::MethodNotAllowed { .. } => "MethodNotAllowed",
            ApiError::RequestTimeout(_) => "RequestTimeout",
            ApiError::PayloadTooLarge(_) => "PayloadTooLarge",
            ApiError::UnsupportedMediaType(_) => "UnsupportedMediaType",
            ApiError::RateLimited(_) | ApiError::EventsRateLimited(..) => "RateLimitExceeded",
            ApiError::InvalidConfig(_) => "InvalidConfig",
            ApiError::Engine(e) | ApiError::Sent(e) => e.kind().name(),
            ApiError::Unavailable(_) | ApiError::StoreUnavailable => "ServiceUnavailable",
            ApiError::ConfigManagedByFile(_) => "ConfigManagedByFile",
            ApiError::Conflict(_) => "Conflict",
            ApiError::PreconditionFailed(_) => "PreconditionFailed",
            ApiError::PreconditionRequired(_) => "PreconditionRequired",
            ApiError::ScenariosFailed { .. } => "ScenariosFailed",
        }
    }
}

/// The body's `message`. (An [`ApiError::InvalidConfig`] is its whole body, already written.)
impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::InvalidRequest(m)
            | ApiError::InvalidCursor(m)
            | ApiError::NotFound(m)
            | ApiError::RequestTimeout(m)
            | ApiError::PayloadTooLarge(m)
            | ApiError::UnsupportedMediaType(m)
            | ApiError::InvalidConfig(m)
            | ApiError::ConfigManagedByFile(m)
            | ApiError::Conflict(m)
            | ApiError::PreconditionFailed(m)
            | ApiError::PreconditionRequired(m)
            | ApiError::MethodNotAllowed { message: m, .. }
            | ApiError::ScenariosFailed { message: m, .. } => f.write_str(m),
            ApiError::Unauthorized(failure) => f.write_str(failure.message()),
            ApiError::RateLimited(decision) => write!(
                f,
                "rate limit of {} requests per rolling 60 s exceeded for this API key; retry in {} seconds",
                decision.limit,
                decision.reset_after_s()
            ),
            ApiError::EventsRateLimited(decision, events) => write!(
                f,
                "the batch of {events} events does not fit in this key's limit of {} events per rolling 60 s ({} used); nothing was stored; retry in {} seconds",
                decision.limit,
                decision.count,
                decision.reset_after_s()
            ),
            ApiError::Engine(e) | ApiError::Sent(e) => write!(f, "{e}"),
            ApiError::Unavailable(Unavailable::Loading) => {
                f.write_str("the server is starting: site configs are loading")
            }
            ApiError::Unavailable(Unavailable::ShuttingDown) => {
                f.write_str("the server is shutting down")
            }
            ApiError::StoreUnavailable => {
                f.write_str("the store is unreachable; nothing was read or written; retry shortly")
            }
        }
    }
}

/// Marks a response made from an [`ApiError`], for what the admission layer
/// (`pipeline.rs`) books once for every route: a store failure counted,
/// and a refusal made after the body was read kept on the connection.
#[derive(Clone, Copy, Debug)]
pub struct Refused {
    /// [`ApiError::reads_body`].
    pub reads_body: bool,
    /// The store did not answer ([`ApiError::StoreUnavailable`]).
    pub store: bool,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let refused = Refused {
            reads_body: self.reads_body(),
            store: matches!(self, ApiError::StoreUnavailable),
        };
        let mut response = self.response();
        response.extensions_mut().insert(refused);
        response
    }
}

impl ApiError {
    /// The answer: status, headers and body.
    fn response(self) -> Response {
        let status = self.status();
        let mut response = match &self {
            ApiError::InvalidConfig(body) => return json(status, body.clone()),
            ApiError::Engine(e) => return json(status, e.to_body()),
            ApiError::Sent(e) => {
                let body = serde_json::json!({
                    "error": self.name(),
                    "message": e.to_string(),
                    "diagnostics": e.diagnostics(),
                });
                return json(status, body.to_string());
            }
            ApiError::ScenariosFailed { message, failures } => {
                let body = serde_json::json!({
                    "error": self.name(),
                    "message": message,
                    "failures": failures,
                });
                return json(status, body.to_string());
            }
            _ => error(status, self.name(), &self.to_string()),
        };
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthorized(failure) => {
                if let Ok(value) = HeaderValue::try_from(failure.challenge()) {
                    headers.insert(header::WWW_AUTHENTICATE, value);
                }
            }
            ApiError::MethodNotAllowed { allow, .. } => {
                headers.insert(header::ALLOW, allow.clone());
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

/// A site with no config to serve: 500 InvalidConfig, or 503 while it loads.
impl From<NoConfig> for ApiError {
    fn from(no_config: NoConfig) -> ApiError {
        match no_config {
            NoConfig::NeverValid(body) => ApiError::InvalidConfig(body),
            NoConfig::Loading => ApiError::Unavailable(Unavailable::Loading),
            NoConfig::NotJson(why) => ApiError::InvalidConfig(
                serde_json::json!({
                    "error": "InvalidConfig",
                    "message": format!("the site's config is not JSON: {why}"),
                })
                .to_string(),
            ),
        }
    }
}

/// A config the caller sent, or its publish, refused (docs/contract/backtest.md, docs/contract/versions.md).
impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        match refusal {
            Refusal::Invalid(message) => ApiError::InvalidRequest(message),
            Refusal::Sent(e) => ApiError::Sent(e),
            Refusal::ScenariosFailed { message, failures } => {
                ApiError::ScenariosFailed { message, failures }
            }
            Refusal::Stale(message) => ApiError::PreconditionFailed(message),
            Refusal::NotFound(message) => ApiError::NotFound(message),
            Refusal::NoStore => ApiError::StoreUnavailable,
            Refusal::Store(error) => error.into(),
        }
    }
}

/// A store that did not answer: logged (without any request data), then the 503; the
/// admission layer counts it and the store down.
impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        tracing::warn!(error = %error, "store unreachable: answering 503");
        ApiError::StoreUnavailable
    }
}

/// A webhook request refused (docs/contract/webhooks.md).
impl From<WebhookError> for ApiError {
    fn from(error: WebhookError) -> ApiError {
        match error {
            WebhookError::Invalid(m) => ApiError::InvalidRequest(m),
            WebhookError::Refused(r) => ApiError::InvalidRequest(format!("url: {r}")),
            WebhookError::NotFound(m) => ApiError::NotFound(m),
            WebhookError::TooMany => ApiError::Conflict(format!(
                "this site and mode have {} webhook endpoints, the most allowed; delete one first",
                crate::domain::webhook::endpoint::MAX_ENDPOINTS
            )),
            WebhookError::Store(e) => e.into(),
        }
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
