//! The lists' pages (docs/contract/read-api.md "Parameters", "Pagination", "Retention"; API document section 1):
//! the window of `from` and `to`, the cursor's position, and the envelopes.

use serde::Serialize;

use crate::app::state::AppState;
use crate::domain::cursor::{Position, Walk, WalkPage};
use crate::domain::time::ExactTime;
use crate::http::auth::Caller;
use crate::http::error::{ApiError, json};
use crate::http::query::{KeysetQuery, ListQuery};
use crate::store::ListWindow;

/// The default look-back of both lists when `from` is absent (docs/contract/read-api.md: 30 days before now).
const DEFAULT_LOOKBACK_MS: i64 = 30 * crate::domain::retention::DAY_MS;

/// The window of `from` and `to` (exactly as given, when given) at `now` (docs/contract/read-api.md "Parameters",
/// "Retention"): `to` defaults to now, `from` to 30 days before, and the retention window's
/// start at `now`; the one clamp of `from` to it is [`ListWindow::visible_start_ms`], applied
/// by the store and by the answers that show the window. `from` (inclusive) and `to` (exclusive)
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
) -> Result<ListWindow, ApiError> {
    let to = to.unwrap_or(ExactTime::from_ms(now));
    let from = from.unwrap_or(ExactTime::from_ms(now - DEFAULT_LOOKBACK_MS));
    if from > to {
        return Err(ApiError::InvalidRequest(format!(
            "from ({from}) is after to ({to}); from must be at or before to"
        )));
    }
    Ok(ListWindow {
        from_ms: from.ceil_ms(),
        to_ms: to.ceil_ms(),
        visible_from_ms: caller.site.retention.visible_from_ms(now),
    })
}

/// The state `cursor` carries, signed by this server for `endpoint` and the caller's site and
/// mode (docs/contract/read-api.md "Pagination").
///
/// # Errors
///
/// 400 InvalidCursor naming why, for any other text.
fn verify_cursor(
    app: &AppState,
    caller: &Caller,
    endpoint: crate::domain::cursor::Endpoint,
    cursor: &str,
) -> Result<crate::domain::cursor::CursorState, ApiError> {
    app.cursor_key
        .verify(endpoint, &caller.scope, cursor)
        .map_err(|why| {
            ApiError::InvalidCursor(format!("cursor: {why}; start again without a cursor"))
        })
}

/// A list request resolved: its window, where the page starts, its size, and what the next
/// page's cursor will carry.
pub(crate) struct ListPage {
    pub window: ListWindow,
    pub walk: Walk,
    pub limit: u32,
    pub filters: crate::domain::cursor::Filters,
}

impl ListPage {
    /// Resolves `from`, `to`, `limit` and `cursor` of `query` for `endpoint` (docs/contract/read-api.md
    /// "Parameters", "Pagination", "Retention"); `filters` are the request's own filters.
    pub(crate) fn resolve(
        app: &AppState,
        caller: &Caller,
        query: &ListQuery,
        endpoint: crate::domain::cursor::Endpoint,
        mut filters: crate::domain::cursor::Filters,
    ) -> Result<ListPage, ApiError> {
        let limit = query.limit;
        filters.from = query.from;
        filters.to = query.to;
        let now = app.clock.now_ms();
        let (window, walk, filters) = match query.cursor.as_deref() {
            Some(cursor) => {
                let state = verify_cursor(app, caller, endpoint, cursor)?;
                if let Some(name) = filters.first_conflict(&state.filters) {
                    return Err(ApiError::InvalidCursor(format!(
                        "cursor: {name} differs from the {name} of the request that began this walk; keep the filters, or start again without a cursor"
                    )));
                }
                let window = ListWindow {
                    from_ms: state.from_ms,
                    to_ms: state.to_ms,
                    visible_from_ms: caller.site.retention.visible_from_ms(now),
                };
                (window, state.walk(), state.filters)
            }
            None => (
                resolve_window(caller, filters.from, filters.to, now)?,
                Walk::default(),
                filters,
            ),
        };
        Ok(ListPage {
            window,
            walk,
            limit,
            filters,
        })
    }

    /// The list envelope (API document section 1) of a walk's page fetched with `limit + 1`:
    /// at most `limit` items, `has_more`, and a signed `next_cursor` at the last item's
    /// position, with the walk's revision.
    pub(crate) fn envelope<'r, T, I: Serialize>(
        &self,
        app: &AppState,
        caller: &Caller,
        endpoint: crate::domain::cursor::Endpoint,
        page: &'r mut WalkPage<T>,
        item: impl Fn(&'r T) -> I,
    ) -> String {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let has_more = page.rows.len() > limit;
        page.truncate(limit);
        let next_cursor = match page.last_position() {
            Some(Position { at_ms, id }) if has_more => {
                let state = crate::domain::cursor::CursorState {
                    from_ms: self.window.from_ms,
                    to_ms: self.window.to_ms,
                    filters: self.filters.clone(),
                    last_at_ms: at_ms,
                    last_id: id,
                    walk_rev: page.rev,
                };
                Some(app.cursor_key.sign(endpoint, &caller.scope, &state))
            }
            _ => None,
        };
        let rows: &'r Vec<T> = &page.rows;
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

/// A page of a plain keyset list (a list without a time window: webhook endpoints, their
/// attempts, config versions): where it starts, its size, and its envelope.
pub(crate) struct KeysetPage<'a> {
    app: &'a AppState,
    caller: &'a Caller,
    endpoint: crate::domain::cursor::Endpoint,
    limit: u32,
    /// The `(at, id)` the request's `cursor` carries: the page starts after it; `None` without
    /// a cursor.
    pub after: Option<(i64, String)>,
}

impl<'a> KeysetPage<'a> {
    /// The page `query` asks for of `endpoint`'s list.
    ///
    /// # Errors
    ///
    /// 400 InvalidCursor for a cursor this server did not sign for `endpoint` and the caller.
    pub(crate) fn start(
        app: &'a AppState,
        caller: &'a Caller,
        endpoint: crate::domain::cursor::Endpoint,
        query: &KeysetQuery,
    ) -> Result<KeysetPage<'a>, ApiError> {
        let after = match query.cursor.as_deref() {
            None => None,
            Some(cursor) => {
                let state = verify_cursor(app, caller, endpoint, cursor)?;
                Some((state.last_at_ms, state.last_id))
            }
        };
        Ok(KeysetPage {
            app,
            caller,
            endpoint,
            limit: query.limit,
            after,
        })
    }

    /// [`Self::after`] borrowed, as the store's keyset queries take it.
    pub(crate) fn after_ref(&self) -> Option<(i64, &str)> {
        self.after.as_ref().map(|(at, id)| (*at, id.as_str()))
    }

    /// How many rows to read: one more than the page holds, to know whether more follow.
    pub(crate) fn read_limit(&self) -> u32 {
        self.limit.saturating_add(1)
    }

    /// The list envelope (API document section 1) of `rows` read with [`Self::read_limit`]:
    /// at most `limit` items, `has_more`, and a signed cursor at the last item's `position`.
    pub(crate) fn envelope<'r, T, I: Serialize>(
        &self,
        rows: &'r [T],
        position: impl Fn(&T) -> (i64, String),
        item: impl Fn(&'r T) -> I,
    ) -> String {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let has_more = rows.len() > limit;
        let rows = rows.get(..limit.min(rows.len())).unwrap_or_default();
        let next_cursor = match rows.last() {
            Some(last) if has_more => {
                let (last_at_ms, last_id) = position(last);
                let state = crate::domain::cursor::CursorState {
                    from_ms: 0,
                    to_ms: 0,
                    filters: crate::domain::cursor::Filters::default(),
                    last_at_ms,
                    last_id,
                    walk_rev: 0,
                };
                let (endpoint, scope) = (self.endpoint, &self.caller.scope);
                Some(self.app.cursor_key.sign(endpoint, scope, &state))
            }
            _ => None,
        };
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

/// A handler's answer.
pub(crate) type Answer = Result<axum::response::Response, ApiError>;

/// `{"data": item}` with `status` (API document section 1, the single-object envelope).
pub(crate) fn data<T: Serialize>(status: axum::http::StatusCode, item: T) -> Answer {
    Ok(json(status, to_body(&DataEnvelope { data: item })))
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
