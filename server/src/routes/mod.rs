//! The read endpoints of SPEC 9: `GET /v1/sessions`, `GET /v1/sessions/{id}` and
//! `GET /v1/nudges`, on the store of SPEC 11. They share the preview's pipeline (api.rs: route
//! and method, lifecycle, secret key, the key's one rolling window) and then read their query
//! parameters ([`query`]) and the store.

pub mod nudges;
pub mod query;
pub mod sessions;

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::api::{self, Caller};
use crate::error::{json, ApiError};
use crate::state::AppState;
use crate::store::Store;

/// `Cache-Control` of a successful read (SPEC 9; API document section 8 recommends caching
/// session and nudge data for 60 to 300 s).
pub const READ_CACHE_CONTROL: &str = "private, max-age=60";

/// Runs a read handler behind the shared pipeline: 405 for a method other than GET, then
/// lifecycle, key and limit (api.rs), then `read`; the answer carries the limiter's headers.
pub(crate) async fn serve_read<'a, F, Fut>(app: &'a AppState, request: Request, read: F) -> Response
where
    F: FnOnce(Caller<'a>, Request) -> Fut,
    Fut: std::future::Future<Output = Result<String, ApiError>>,
{
    if request.method() != Method::GET {
        let message = format!(
            "{} is not allowed on {}; use GET",
            request.method(),
            request.uri().path().chars().take(200).collect::<String>()
        );
        return ApiError::MethodNotAllowed {
            allow: "GET",
            message,
        }
        .into_response();
    }
    let (caller, decision) = match api::admit(app, request.headers()).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal,
    };
    let mut response = match read(caller, request).await {
        Ok(body) => {
            if app.store.is_some() {
                app.metrics.store_up.set(1);
            }
            let mut response = json(StatusCode::OK, body);
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static(READ_CACHE_CONTROL),
            );
            response
        }
        Err(error) => {
            if matches!(error, ApiError::StoreUnavailable) {
                app.metrics.store_errors.inc();
            }
            error.into_response()
        }
    };
    decision.write_headers(response.headers_mut());
    response
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
        use crate::model::time::{format_ms, now_ms};
        let limit = params.limit()?;
        filters.from_ms = params.time("from")?;
        filters.to_ms = params.time("to")?;
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
                let to_ms = filters.to_ms.unwrap_or(now);
                let from_ms = filters.from_ms.unwrap_or(now - DEFAULT_LOOKBACK_MS);
                if from_ms > to_ms {
                    return Err(ApiError::InvalidRequest(format!(
                        "from ({}) is after to ({}); from must be at or before to",
                        format_ms(from_ms),
                        format_ms(to_ms)
                    )));
                }
                // A from older than the retention window starts at the window (SPEC 9).
                (from_ms.max(visible_from_ms), to_ms, None, filters)
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
        to_body(&ListEnvelope {
            data: rows.iter().map(item).collect(),
            next_cursor,
            has_more,
        })
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
    serde_json::to_string(value).unwrap_or_default()
}
