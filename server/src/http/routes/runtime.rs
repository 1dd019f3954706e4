//! `GET /v1/runtime/config?key=pk_...`, the config for storefront pages (docs/contract/storefront.md): the
//! publishable key's site and mode, answered with `{"data": {"version", "config"}}` from memory.
//!
//! - **The key**: the `key` query parameter (so the request stays "simple": no CORS preflight)
//!   or `Authorization: Bearer`; both present and different is a 400. A secret `sk_` key is a
//!   401 saying that a secret key never goes in a page; a malformed or unknown key is a 401.
//! - **The version**: an API-managed site's published version (docs/contract/versions.md; `0` before the first,
//!   whose config has no rules), or a file-managed site's SHA-256 prefix (12 hex digits), the
//!   same `Nudge-Config-Version` a preview answers with. A new version reaches this endpoint as
//!   soon as the instance serves it (the store poll, within 2 s).
//! - **Caching**: a weak `ETag` of the version and the config's SHA-256, `304` on a matching
//!   `If-None-Match`, `Cache-Control: public, max-age=60, stale-while-revalidate=240`,
//!   `Vary: Accept-Encoding`; the body gzip-compressed when `Accept-Encoding` allows it. Both
//!   forms are made once per version and kept in memory
//!   ([`RuntimeCache`](crate::app::runtime_config::RuntimeCache)); the headers are
//!   [`RuntimeAnswer`]'s.
//! - **CORS**: every answer carries `Access-Control-Allow-Origin: *` and exposes `ETag`;
//!   `OPTIONS` is the preflight (204) a page needs only when it sends `If-None-Match` itself
//!   ([`crate::http::any_origin::RUNTIME`]).
//! - **Limits**: none; it does not count against the key's event limit (docs/contract/storefront.md), and every
//!   answer comes from memory.
//!
//! Checks, in order: the method (405 with `Allow: GET, HEAD, OPTIONS`, from the router), the
//! lifecycle (503), the query (400 for another parameter or `key` twice), the key (401): the
//! [`PageCaller`] extractor; then the site's config (500 InvalidConfig when it never had a
//! valid one).

use std::sync::Arc;

use axum::extract::State;

use crate::app::state::AppState;
use crate::http::auth::PageCaller;
use crate::http::error::ApiError;
use crate::http::extract::{AcceptsGzip, IfNoneMatch};
use crate::http::forms::RuntimeAnswer;

/// The route's path.
pub const RUNTIME_PATH: &str = "/v1/runtime/config";

/// `GET` and `HEAD /v1/runtime/config`: the key's site and mode, then its current config.
pub async fn runtime_config(
    caller: PageCaller,
    State(app): State<Arc<AppState>>,
    if_none_match: IfNoneMatch,
    AcceptsGzip(gzip): AcceptsGzip,
) -> Result<RuntimeAnswer, ApiError> {
    let prepared = app.runtime_cache.prepared(&caller.site, caller.mode)?;
    let fresh = !if_none_match.matches(&prepared.tag);
    Ok(RuntimeAnswer {
        prepared,
        fresh,
        gzip,
    })
}
