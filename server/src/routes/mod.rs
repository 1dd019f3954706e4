//! The public listener's routes and what they share (API document 4, 5, 7, 8; SPEC 7, 9):
//! `POST /v1/nudges/preview` ([`preview`]), `GET /v1/sessions` and `GET /v1/sessions/{id}`
//! ([`sessions`]), `GET /v1/nudges` ([`nudges`]), `GET /v1/reports/uplift` ([`reports`]), each a
//! room of its own, behind one pipeline.
//!
//! The order of the checks, each refusal an [`ApiError`] with the `{"error", "message"}` body
//! (docs/SERVER.md has the whole table):
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

pub mod backtest;
pub mod config;
pub mod cors;
pub mod events;
pub mod nudges;
pub mod preview;
pub mod query;
pub mod reports;
pub mod runtime;
pub mod sessions;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Extension, Router};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Serialize;
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutError};
use tower_http::trace::{DefaultOnFailure, TraceLayer};
use tracing::Level;
use tracing::field::Empty;

use crate::auth::{Caller, admit};
use crate::error::{ApiError, json};
use crate::metrics::{RequestLabels, RouteLabels};
use crate::model::time::ExactTime;
use crate::state::AppState;
use crate::store::Store;
use preview::{CONSTANT_PATH, PREVIEW_PATH};

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
        .route(PREVIEW_PATH, any(preview::preview))
        .route(sessions::LIST_PATH, any(sessions::list))
        .route(sessions::DETAIL_PATH, any(sessions::detail))
        .route(nudges::LIST_PATH, any(nudges::list))
        .route(events::EVENTS_PATH, any(events::events))
        .route(backtest::BACKTEST_PATH, any(backtest::backtest))
        .route(reports::UPLIFT_PATH, any(reports::uplift))
        .route(config::CONFIG_PATH, any(config::current))
        .route(config::VERSIONS_PATH, any(config::versions))
        .route(config::VERSION_PATH, any(config::version))
        .route(runtime::RUNTIME_PATH, any(runtime::runtime_config));
    if options.constant_route {
        router = router.route(CONSTANT_PATH, any(preview::constant));
    }
    router
        .fallback(not_found)
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
        Some(events::EVENTS_PATH) => events::EVENTS_PATH,
        Some(backtest::BACKTEST_PATH) => backtest::BACKTEST_PATH,
        Some(reports::UPLIFT_PATH) => reports::UPLIFT_PATH,
        Some(config::CONFIG_PATH) => config::CONFIG_PATH,
        Some(config::VERSIONS_PATH) => config::VERSIONS_PATH,
        Some(config::VERSION_PATH) => config::VERSION_PATH,
        Some(runtime::RUNTIME_PATH) => runtime::RUNTIME_PATH,
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

/// Marks a response whose request body was read to its end: the connection can carry another
/// request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyRead;

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

/// 405 with `Allow: allow`.
pub(crate) fn method_not_allowed(method: &Method, path: &str, allow: &'static str) -> ApiError {
    let path: String = path.chars().take(200).collect();
    ApiError::MethodNotAllowed {
        allow,
        message: format!("{method} is not allowed on {path}; use {allow}"),
    }
}

async fn not_found(method: Method, uri: axum::http::Uri) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::NotFound(format!(
            "no endpoint at {method} {path}; this server serves POST {PREVIEW_PATH}, GET {}, GET /v1/sessions/{{id}}, GET {}, POST {}, POST {}, GET {}, GET {}, GET and POST {}, GET {}/{{n}} and GET {}",
            sessions::LIST_PATH,
            nudges::LIST_PATH,
            events::EVENTS_PATH,
            backtest::BACKTEST_PATH,
            reports::UPLIFT_PATH,
            config::CONFIG_PATH,
            config::VERSIONS_PATH,
            config::VERSIONS_PATH,
            runtime::RUNTIME_PATH,
        ),
    ).into_response()
}

/// The whole body, at most `max_bytes`: refused on its `Content-Length` before a byte is read,
/// or as soon as a chunked body passes the limit; cut after `total_timeout` however slowly it
/// trickles.
pub(crate) async fn read_body(
    request: Request,
    max_bytes: usize,
    total_timeout: Duration,
) -> Result<Bytes, ApiError> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&n| n > max_bytes as u64) {
        return Err(ApiError::PayloadTooLarge(format!(
            "the request body has {length} bytes; at most {max_bytes} ({}) are allowed",
            kib(max_bytes)
        )));
    }
    let limited = Limited::new(request.into_body(), max_bytes);
    let Ok(collected) = tokio::time::timeout(total_timeout, limited.collect()).await else {
        return Err(ApiError::RequestTimeout(format!(
            "the request body did not arrive within {} ms",
            total_timeout.as_millis()
        )));
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if caused_by::<LengthLimitError>(e.as_ref()) => {
            Err(ApiError::PayloadTooLarge(format!(
                "the request body is larger than {max_bytes} bytes ({}), the most allowed",
                kib(max_bytes)
            )))
        }
        Err(e) if caused_by::<TimeoutError>(e.as_ref()) => Err(ApiError::RequestTimeout(
            "the request body did not arrive in time".to_owned(),
        )),
        Err(_) => Err(ApiError::InvalidRequest(
            "the request body could not be read".to_owned(),
        )),
    }
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

/// `64 KiB`.
fn kib(bytes: usize) -> String {
    format!("{} KiB", bytes / 1024)
}

/// `Cache-Control` of a successful read (SPEC 9; API document section 8 recommends caching
/// session and nudge data for 60 to 300 s).
pub const READ_CACHE_CONTROL: &str = "private, max-age=60";

/// Runs a read handler behind the shared pipeline ([`serve`] with GET); a successful read is
/// a 200 with `Cache-Control: private, max-age=60`.
pub(crate) async fn serve_read<'a, F, Fut>(app: &'a AppState, request: Request, read: F) -> Response
where
    F: FnOnce(Caller<'a>, Request) -> Fut,
    Fut: std::future::Future<Output = Result<String, ApiError>>,
{
    serve(app, request, Method::GET, |caller, request| async move {
        let mut response = json(StatusCode::OK, read(caller, request).await?);
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(READ_CACHE_CONTROL),
        );
        Ok(response)
    })
    .await
}

/// Runs a handler behind the shared pipeline: 405 for a method other than `method`, then
/// lifecycle, key and limit (auth.rs), then `handle`; the answer carries the limiter's headers.
/// A POST refused after its body was read keeps the connection open ([`BodyRead`]).
pub(crate) async fn serve<'a, F, Fut>(
    app: &'a AppState,
    request: Request,
    method: Method,
    handle: F,
) -> Response
where
    F: FnOnce(Caller<'a>, Request) -> Fut,
    Fut: std::future::Future<Output = Result<Response, ApiError>>,
{
    if request.method() != method {
        let allow = if method == Method::POST {
            "POST"
        } else {
            "GET"
        };
        return method_not_allowed(request.method(), request.uri().path(), allow).into_response();
    }
    let (caller, decision) = match admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal.into_response(),
    };
    let mut response = match handle(caller, request).await {
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
            let body_read = !matches!(
                error,
                ApiError::PayloadTooLarge(_)
                    | ApiError::RequestTimeout(_)
                    | ApiError::UnsupportedMediaType(_)
            );
            let mut response = error.into_response();
            if body_read {
                response.extensions_mut().insert(BodyRead);
            }
            response
        }
    };
    if method == Method::POST && response.status().is_success() {
        response.extensions_mut().insert(BodyRead);
    }
    decision.write_headers(response.headers_mut());
    response
}

/// Refuses a field given as `null` in a JSON object body: an optional field is left out, never
/// `null` (which serde would read as absent: a silent default).
///
/// # Errors
///
/// 400 naming the first such field.
pub(crate) fn refuse_nulls(body: &[u8]) -> Result<(), ApiError> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice::<serde_json::Value>(body)
    else {
        return Ok(());
    };
    match fields.iter().find(|(_, v)| v.is_null()) {
        Some((name, _)) => Err(ApiError::InvalidRequest(format!(
            "{name} is null; leave an optional field out rather than sending null"
        ))),
        None => Ok(()),
    }
}

/// The body of a POST route that takes JSON: one `Content-Type: application/json` (415), at
/// most `max_bytes` (413), in time (408).
pub(crate) async fn read_json_body(
    request: Request,
    max_bytes: usize,
    options: &ApiOptions,
) -> Result<Bytes, ApiError> {
    preview::check_content_type(request.headers())?;
    read_body(request, max_bytes, options.body_total_timeout).await
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

/// The default look-back of both lists when `from` is absent (SPEC 9: 30 days before now).
const DEFAULT_LOOKBACK_MS: i64 = 30 * crate::model::retention::DAY_MS;

/// The window of `from` and `to` (exactly as given, when given) at `now` (SPEC 9 "Parameters",
/// "Retention"): `to` defaults to now, `from` to 30 days before; a `from` older than the
/// caller's retention window starts at the window. `from` (inclusive) and `to` (exclusive)
/// become the first whole millisecond at or after each ([`ExactTime::ceil_ms`]): the same
/// records, since times are stored in whole milliseconds.
///
/// # Errors
///
/// 400 when `from` is after `to` (compared exactly).
pub(crate) fn resolve_window(
    caller: &Caller,
    from: Option<ExactTime>,
    to: Option<ExactTime>,
    now: i64,
) -> Result<crate::store::ListWindow, ApiError> {
    let to = to.unwrap_or(ExactTime::from_ms(now));
    let from = from.unwrap_or(ExactTime::from_ms(now - DEFAULT_LOOKBACK_MS));
    if from > to {
        return Err(ApiError::InvalidRequest(format!(
            "from ({from}) is after to ({to}); from must be at or before to"
        )));
    }
    let visible_from_ms = caller.site.retention.visible_from_ms(now);
    Ok(crate::store::ListWindow {
        from_ms: from.ceil_ms().max(visible_from_ms),
        to_ms: to.ceil_ms(),
        visible_from_ms,
    })
}

/// A list request resolved: its window, where the page starts, its size, and what the next
/// page's cursor will carry.
pub(crate) struct ListPage {
    pub window: crate::store::ListWindow,
    pub after: Option<(i64, String)>,
    pub limit: u32,
    pub filters: crate::model::cursor::Filters,
}

impl ListPage {
    /// Resolves `from`, `to`, `limit` and `cursor` of `params` for `endpoint` (SPEC 9
    /// "Parameters", "Pagination", "Retention"); `filters` are the request's own filters.
    pub(crate) fn resolve(
        app: &AppState,
        caller: &Caller,
        params: &query::Params,
        endpoint: crate::model::cursor::Endpoint,
        mut filters: crate::model::cursor::Filters,
    ) -> Result<ListPage, ApiError> {
        use crate::model::time::now_ms;
        let limit = params.limit()?;
        filters.from = params.time("from")?;
        filters.to = params.time("to")?;
        let now = now_ms();
        let visible_from_ms = caller.site.retention.visible_from_ms(now);
        let (from_ms, to_ms, after, filters) = match params.get("cursor") {
            Some(cursor) => {
                let state = app
                    .cursor_key
                    .verify(endpoint, &caller.scope, cursor)
                    .map_err(|why| {
                        ApiError::InvalidCursor(format!(
                            "cursor: {why}; start again without a cursor"
                        ))
                    })?;
                if let Some(name) = filters.first_conflict(&state.filters) {
                    return Err(ApiError::InvalidCursor(format!(
                        "cursor: {name} differs from the {name} of the request that began this walk; keep the filters, or start again without a cursor"
                    )));
                }
                (
                    state.from_ms,
                    state.to_ms,
                    Some((state.last_at_ms, state.last_id)),
                    state.filters,
                )
            }
            None => {
                let window = resolve_window(caller, filters.from, filters.to, now)?;
                (window.from_ms, window.to_ms, None, filters)
            }
        };
        Ok(ListPage {
            window: crate::store::ListWindow {
                from_ms,
                to_ms,
                visible_from_ms,
            },
            after,
            limit,
            filters,
        })
    }

    /// The list envelope (API document section 1) of `rows` fetched with `limit + 1`: at most
    /// `limit` items, `has_more`, and a signed `next_cursor` at the last item.
    pub(crate) fn envelope<'r, T, I: Serialize>(
        &self,
        app: &AppState,
        caller: &Caller,
        endpoint: crate::model::cursor::Endpoint,
        rows: &'r mut Vec<T>,
        key: impl Fn(&T) -> (i64, String),
        item: impl Fn(&'r T) -> I,
    ) -> String {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        let next_cursor = match rows.last() {
            Some(last) if has_more => {
                let (last_at_ms, last_id) = key(last);
                let state = crate::model::cursor::CursorState {
                    from_ms: self.window.from_ms,
                    to_ms: self.window.to_ms,
                    filters: self.filters.clone(),
                    last_at_ms,
                    last_id,
                };
                Some(app.cursor_key.sign(endpoint, &caller.scope, &state))
            }
            _ => None,
        };
        let rows: &'r Vec<T> = rows;
        // Sized for the page up front (a listed session is about 200 bytes), so that the text
        // is not copied again and again as it grows.
        to_body_sized(
            &ListEnvelope {
                data: rows.iter().map(item).collect(),
                next_cursor,
                has_more,
            },
            256 + 256 * rows.len(),
        )
    }
}

/// API document section 1: the list envelope.
#[derive(Serialize)]
struct ListEnvelope<I> {
    data: Vec<I>,
    next_cursor: Option<String>,
    has_more: bool,
}

/// API document section 1: the single-object envelope.
#[derive(Serialize)]
pub(crate) struct DataEnvelope<I> {
    pub data: I,
}

/// The JSON text of a response body (fields in declaration order).
pub(crate) fn to_body<T: Serialize>(value: &T) -> String {
    to_body_sized(value, 128)
}

/// [`to_body`] into a buffer of `capacity` bytes first.
pub(crate) fn to_body_sized<T: Serialize>(value: &T, capacity: usize) -> String {
    let mut text = Vec::with_capacity(capacity);
    match serde_json::to_writer(&mut text, value) {
        // serde_json writes UTF-8 only.
        Ok(()) => String::from_utf8(text).unwrap_or_default(),
        Err(_) => String::new(),
    }
}
