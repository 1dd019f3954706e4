//! The public listener: `POST /v1/nudges/preview` (API document 4.4, 5, 7, 8; SPEC 7), with
//! authentication, the rate limit, the content-type and size checks, and the error bodies.
//!
//! The order of the checks, each answering with `{"error", "message"}` (docs/SERVER.md has the
//! whole table):
//!
//! 1. route and method: 404 NotFound, 405 MethodNotAllowed with `Allow: POST` (no key needed);
//! 2. the server's lifecycle: 503 ServiceUnavailable while loading or shutting down;
//! 3. `Authorization: Bearer <key>`: 401 Unauthorized with `WWW-Authenticate: Bearer`;
//! 4. the key's rate limit: 429 RateLimitExceeded with `Retry-After` (not counted);
//! 5. `Content-Type: application/json`: 415 UnsupportedMediaType;
//! 6. the body, at most 64 KiB: 413 PayloadTooLarge (refused on `Content-Length` before a byte
//!    of it is read), 408 RequestTimeout when it does not arrive in time;
//! 7. the site's config: 500 InvalidConfig when it never had a valid one;
//! 8. the engine: 200, or 400 InvalidRequest.
//!
//! Every response from step 4 on carries the rate-limit headers of the decision.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::any;
use axum::Extension;
use axum::Router;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use nudge_rules::limits::MAX_REQUEST_BYTES;
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutError};
use tower_http::trace::{DefaultOnFailure, TraceLayer};
use tracing::field::Empty;
use tracing::Level;

use crate::keys::{key_kind, KeyHash, KeyKind};
use crate::limiter::Decision;
use crate::metrics::{RequestLabels, RouteLabels, SiteLabels};
use crate::model::event::{Mode, Scope};
use crate::registry::{Served, Site};
use crate::routes::{nudges, sessions};
use crate::state::{AppState, Unavailable};

/// The preview endpoint (API document 4.4).
pub const PREVIEW_PATH: &str = "/v1/nudges/preview";

/// The benchmark's baseline: the same pipeline as the preview (lifecycle, key, limiter,
/// content type, body, site) answering a constant body instead of calling the engine. Served
/// only with `--constant-route`; not part of the API.
pub const CONSTANT_PATH: &str = "/v1/_bench/constant";

/// What the constant route answers: a preview result of typical size.
const CONSTANT_BODY: &str = r#"{"data":{"would_fire":true,"nudge":{"type":"chat_bubble","message":"Not sure about the fit? Ask a stylist.","cta":"Start chat","reason":"constant body: the benchmark's baseline, no engine call"}}}"#;

/// The realm of `WWW-Authenticate`.
const REALM: &str = "nudge-rules";

/// How the public listener behaves beyond the contract's fixed parts.
#[derive(Clone, Copy, Debug)]
pub struct ApiOptions {
    /// How long the body may take to arrive between two chunks before 408.
    pub body_read_timeout: Duration,
    /// How long the whole body may take to arrive before 408.
    pub body_total_timeout: Duration,
    /// Whether [`CONSTANT_PATH`] is served.
    pub constant_route: bool,
}

/// The public router.
pub fn router(state: Arc<AppState>, options: ApiOptions) -> Router {
    let mut router = Router::new()
        .route(PREVIEW_PATH, any(preview))
        .route(sessions::LIST_PATH, any(sessions::list))
        .route(sessions::DETAIL_PATH, any(sessions::detail))
        .route(nudges::LIST_PATH, any(nudges::list));
    if options.constant_route {
        router = router.route(CONSTANT_PATH, any(constant));
    }
    router
        .fallback(not_found)
        .layer(RequestBodyTimeoutLayer::new(options.body_read_timeout))
        .layer(Extension(options))
        .layer(middleware::from_fn(connection_rules))
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

/// Which route label a request gets: the matched path, or `unmatched`.
fn route_of(request: &Request) -> &'static str {
    match request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
    {
        Some(PREVIEW_PATH) => PREVIEW_PATH,
        Some(CONSTANT_PATH) => CONSTANT_PATH,
        Some(sessions::LIST_PATH) => sessions::LIST_PATH,
        Some(sessions::DETAIL_PATH) => sessions::DETAIL_PATH,
        Some(nudges::LIST_PATH) => nudges::LIST_PATH,
        _ => "unmatched",
    }
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

#[derive(Clone, Copy)]
enum Evaluate {
    Engine,
    Constant,
}

async fn preview(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    handle(&app, request, Evaluate::Engine, &options).await
}

async fn constant(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    handle(&app, request, Evaluate::Constant, &options).await
}

/// Marks a response whose request body was read to its end: the connection can carry another
/// request.
#[derive(Clone, Copy, Debug)]
struct BodyRead;

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
        Some(message) => error(StatusCode::BAD_REQUEST, "InvalidRequest", &message),
        None => next.run(request).await,
    };
    if body_sent && response.extensions().get::<BodyRead>().is_none() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

async fn handle(
    app: &AppState,
    request: Request,
    evaluate: Evaluate,
    options: &ApiOptions,
) -> Response {
    if request.method() != Method::POST {
        return method_not_allowed(request.method(), request.uri().path());
    }
    let (caller, decision) = match admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal,
    };
    let mut response = admitted(app, caller.site, request, evaluate, options).await;
    decision.write_headers(response.headers_mut());
    response
}

/// Who is calling: the site of the key, the records it may see, and the key's hash.
pub struct Caller<'a> {
    /// The key's site.
    pub site: &'a Site,
    /// The key's site and mode (SPEC 9 "Modes").
    pub scope: Scope,
    /// The key's hash (log lines name it by its first 8 hex digits).
    pub key_hash: KeyHash,
}

/// Steps 2 to 4 of the module docs, shared by every endpoint of the REST API: the lifecycle
/// (503), a secret key of a site (401), the key's one rolling window (429). An admitted request
/// gets the caller and the decision, whose headers its answer must carry; a refused one gets
/// its whole answer.
///
/// # Errors
///
/// The refusal's response (503, 401, or 429 with the rate-limit headers).
pub async fn admit<'a>(
    app: &'a AppState,
    headers: &HeaderMap,
) -> Result<(Caller<'a>, Decision), Response> {
    if let Some(why) = app.unavailable() {
        return Err(unavailable(why));
    }
    let key = bearer_key(headers).map_err(unauthorized)?;
    let key_hash = KeyHash::of_key(key);
    let Some(site) = app.sites.site_of_key(&key_hash) else {
        tracing::debug!(key = %key_hash.log_id(), "unknown API key");
        return Err(unauthorized(AuthFailure::Unknown));
    };
    let span = tracing::Span::current();
    span.record("site", site.id.as_str());
    span.record("key", key_hash.log_id().as_str());

    let decision = app.limiter.decide(&key_hash, site.rate_limit).await;
    if !decision.admitted {
        app.metrics
            .rate_limited
            .get_or_create(&SiteLabels {
                site: site.id.clone(),
            })
            .inc();
        let seconds = decision.reset_after_s();
        let mut response = error(
            StatusCode::TOO_MANY_REQUESTS,
            "RateLimitExceeded",
            &format!(
                "rate limit of {} requests per rolling 60 s exceeded for this API key; retry in {seconds} seconds",
                decision.limit
            ),
        );
        decision.write_headers(response.headers_mut());
        return Err(response);
    }
    let scope = Scope {
        site: site.id.clone(),
        mode: Mode::of_key(key),
    };
    Ok((
        Caller {
            site,
            scope,
            key_hash,
        },
        decision,
    ))
}

/// Steps 5 to 8 of the module docs, for a request the limiter admitted.
async fn admitted(
    app: &AppState,
    site: &Site,
    request: Request,
    evaluate: Evaluate,
    options: &ApiOptions,
) -> Response {
    let mut response = answer(app, site, request, evaluate, options).await;
    if response.status() != StatusCode::PAYLOAD_TOO_LARGE
        && response.status() != StatusCode::REQUEST_TIMEOUT
        && response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE
    {
        response.extensions_mut().insert(BodyRead);
    }
    response
}

async fn answer(
    app: &AppState,
    site: &Site,
    request: Request,
    evaluate: Evaluate,
    options: &ApiOptions,
) -> Response {
    if let Some(refusal) = refuse_content_type(request.headers()) {
        return refusal;
    }
    let body = match read_body(request, options.body_total_timeout).await {
        Ok(body) => body,
        Err(refusal) => return *refusal,
    };
    let served = site.served();
    let engine = match &**served {
        Served::Valid { engine, .. } => engine,
        Served::NeverValid { body } => {
            return json(StatusCode::INTERNAL_SERVER_ERROR, body.clone());
        }
        Served::Loading => return unavailable(Unavailable::Loading),
    };
    match evaluate {
        Evaluate::Constant => json(StatusCode::OK, CONSTANT_BODY.to_owned()),
        Evaluate::Engine => {
            let start = Instant::now();
            let result = engine.preview_body(&body);
            app.metrics
                .engine_duration
                .observe(start.elapsed().as_secs_f64());
            match result {
                Ok(body) => json(StatusCode::OK, body),
                Err(e) => json(
                    StatusCode::from_u16(e.http_status())
                        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    e.to_body(),
                ),
            }
        }
    }
}

/// Why a request failed authentication. The messages say what a well-formed request looks
/// like and never whether a key exists (for this or another site).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AuthFailure {
    Missing,
    Malformed,
    Unknown,
    /// A publishable `pk_` key: it may only send events to the relay (SPEC 10).
    Publishable,
}

/// The key of `Authorization: Bearer <key>` (API document section 5), well formed (SPEC 7).
fn bearer_key(headers: &HeaderMap) -> Result<&str, AuthFailure> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value = values.next().ok_or(AuthFailure::Missing)?;
    if values.next().is_some() {
        return Err(AuthFailure::Malformed);
    }
    let value = value.to_str().map_err(|_| AuthFailure::Malformed)?;
    let (scheme, key) = value.trim().split_once(' ').ok_or(AuthFailure::Malformed)?;
    let key = key.trim_start_matches(' ');
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthFailure::Malformed);
    }
    match key_kind(key) {
        Some(KeyKind::Secret) => Ok(key),
        Some(KeyKind::Publishable) => Err(AuthFailure::Publishable),
        None => Err(AuthFailure::Malformed),
    }
}

fn unauthorized(failure: AuthFailure) -> Response {
    let (message, challenge) = match failure {
        AuthFailure::Missing => (
            "missing Authorization header; send Authorization: Bearer <API key>",
            format!("Bearer realm=\"{REALM}\""),
        ),
        AuthFailure::Malformed => (
            "the Authorization header must be \"Bearer \" followed by an API key: sk_live_ or sk_test_ and at least 16 letters or digits",
            format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""),
        ),
        AuthFailure::Unknown => (
            "the API key is not valid",
            format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""),
        ),
        AuthFailure::Publishable => (
            "a publishable key (pk_) can only send events to POST /v1/events; this endpoint needs a secret key (sk_live_ or sk_test_)",
            format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""),
        ),
    };
    let mut response = error(StatusCode::UNAUTHORIZED, "Unauthorized", message);
    if let Ok(value) = HeaderValue::try_from(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// 415 unless the media type is `application/json` (parameters such as `charset` allowed).
fn refuse_content_type(headers: &HeaderMap) -> Option<Response> {
    if headers.get_all(header::CONTENT_TYPE).iter().count() > 1 {
        return Some(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            "the request has more than one Content-Type header; send one: Content-Type: application/json",
        ));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let media_type = content_type
        .as_deref()
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    if media_type.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
        return None;
    }
    let shown = match &content_type {
        None => "no Content-Type".to_owned(),
        Some(v) => format!("Content-Type {:?}", v.chars().take(100).collect::<String>()),
    };
    Some(error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UnsupportedMediaType",
        &format!("the request body must be JSON with Content-Type: application/json; got {shown}"),
    ))
}

/// The whole body, at most [`MAX_REQUEST_BYTES`]: refused on its `Content-Length` before a
/// byte is read, or as soon as a chunked body passes the limit.
async fn read_body(request: Request, total_timeout: Duration) -> Result<Bytes, Box<Response>> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&n| n > MAX_REQUEST_BYTES as u64) {
        return Err(Box::new(too_large(&format!(
            "the request body has {length} bytes; at most {MAX_REQUEST_BYTES} (64 KiB) are allowed"
        ))));
    }
    let limited = Limited::new(request.into_body(), MAX_REQUEST_BYTES);
    let Ok(collected) = tokio::time::timeout(total_timeout, limited.collect()).await else {
        return Err(Box::new(error(
            StatusCode::REQUEST_TIMEOUT,
            "RequestTimeout",
            &format!(
                "the request body did not arrive within {} ms",
                total_timeout.as_millis()
            ),
        )));
    };
    let refusal = match collected {
        Ok(collected) => return Ok(collected.to_bytes()),
        Err(e) if caused_by::<LengthLimitError>(e.as_ref()) => too_large(&format!(
            "the request body is larger than {MAX_REQUEST_BYTES} bytes (64 KiB), the most allowed"
        )),
        Err(e) if caused_by::<TimeoutError>(e.as_ref()) => error(
            StatusCode::REQUEST_TIMEOUT,
            "RequestTimeout",
            "the request body did not arrive in time",
        ),
        Err(_) => error(
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
            "the request body could not be read",
        ),
    };
    Err(Box::new(refusal))
}

fn too_large(message: &str) -> Response {
    let mut response = error(StatusCode::PAYLOAD_TOO_LARGE, "PayloadTooLarge", message);
    // The rest of the body is never read, so the connection cannot carry another request.
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Whether `error` or any error in its source chain is a `T`.
fn caused_by<T: std::error::Error + 'static>(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<T>() {
            return true;
        }
        current = e.source();
    }
    false
}

fn unavailable(why: Unavailable) -> Response {
    let message = match why {
        Unavailable::Loading => "the server is starting: site configs are loading",
        Unavailable::ShuttingDown => "the server is shutting down",
    };
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "ServiceUnavailable",
        message,
    );
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    if why == Unavailable::ShuttingDown {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn method_not_allowed(method: &Method, path: &str) -> Response {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        &format!("{method} is not allowed on {path}; use POST"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

async fn not_found(method: Method, uri: axum::http::Uri) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    error(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!(
            "no endpoint at {method} {path}; this server serves POST {PREVIEW_PATH}, GET {}, GET /v1/sessions/{{id}} and GET {}",
            sessions::LIST_PATH,
            nudges::LIST_PATH
        ),
    )
}

pub use crate::error::{error, json};

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
    fn bearer_keys() {
        let key = "sk_test_abcdefghijklmnop";
        let ok = headers(&[("authorization", &format!("Bearer {key}"))]);
        assert_eq!(bearer_key(&ok), Ok(key));
        let lower = headers(&[("authorization", &format!("bearer  {key}"))]);
        assert_eq!(bearer_key(&lower), Ok(key));
        assert_eq!(bearer_key(&headers(&[])), Err(AuthFailure::Missing));
        for bad in [
            key,
            "Basic abc",
            "Bearer sk_test_short",
            "Bearer",
            "Token sk_test_abcdefghijklmnop",
        ] {
            assert_eq!(
                bearer_key(&headers(&[("authorization", bad)])),
                Err(AuthFailure::Malformed),
                "{bad}"
            );
        }
        let twice = headers(&[
            ("authorization", &format!("Bearer {key}")),
            ("authorization", &format!("Bearer {key}")),
        ]);
        assert_eq!(bearer_key(&twice), Err(AuthFailure::Malformed));
    }

    #[test]
    fn content_types() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(
                refuse_content_type(&headers(&[("content-type", ok)])).is_none(),
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
                refuse_content_type(&headers(&[("content-type", bad)])).is_some(),
                "{bad}"
            );
        }
        assert!(refuse_content_type(&headers(&[])).is_some());
    }
}
