//! `GET /v1/runtime/config?key=pk_...`, the config for storefront pages (SPEC 14): the
//! publishable key's site and mode, answered with `{"data": {"version", "config"}}` from memory.
//!
//! - **The key**: the `key` query parameter (so the request stays "simple": no CORS preflight)
//!   or `Authorization: Bearer`; both present and different is a 400. A secret `sk_` key is a
//!   401 saying that a secret key never goes in a page; a malformed or unknown key is a 401.
//! - **The version**: an API-managed site's published version (SPEC 13; `0` before the first,
//!   whose config has no rules), or a file-managed site's SHA-256 prefix (12 hex digits), the
//!   same `Nudge-Config-Version` a preview answers with. A new version reaches this endpoint as
//!   soon as the instance serves it (the store poll, within 2 s).
//! - **Caching**: a weak `ETag` of the version and the config's SHA-256, `304` on a matching
//!   `If-None-Match`, `Cache-Control: public, max-age=60, stale-while-revalidate=240`,
//!   `Vary: Accept-Encoding`; the body gzip-compressed when `Accept-Encoding` allows it. Both
//!   forms are made once per version and kept in memory
//!   ([`RuntimeCache`](crate::app::runtime_config::RuntimeCache)).
//! - **CORS**: every answer carries `Access-Control-Allow-Origin: *` and exposes `ETag`;
//!   `OPTIONS` is the preflight (204) a page needs only when it sends `If-None-Match` itself.
//! - **Limits**: none; it does not count against the key's event limit (SPEC 14), and every
//!   answer comes from memory.
//!
//! Checks, in order: the method (405 with `Allow: GET, HEAD, OPTIONS`, from the router), the
//! lifecycle (503), the
//! query (400 for another parameter or `key` twice), the key (401), the site's config (500
//! InvalidConfig when it never had a valid one).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::runtime_config::NoConfig;
use crate::app::state::{AppState, Unavailable};
use crate::domain::event::Mode;
use crate::http::error::{ApiError, error};
use crate::http::query::Params;
use crate::sites::keys::{KeyHash, KeyKind, key_kind};

/// The route's path.
pub const RUNTIME_PATH: &str = "/v1/runtime/config";

/// `Cache-Control` of a config answer (SPEC 14; the API document recommends 60 to 300 s).
pub const RUNTIME_CACHE_CONTROL: &str = "public, max-age=60, stale-while-revalidate=240";

/// Methods the route serves (the router's 405 names them).
pub const ALLOW: &str = "GET, HEAD, OPTIONS";

/// `GET`, `HEAD` and `OPTIONS /v1/runtime/config`.
pub async fn runtime_config(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let method = request.method().clone();
    let response = if method == Method::OPTIONS {
        preflight()
    } else {
        // GET or HEAD: the router answers the other methods.
        answer(&app, request.headers(), request.uri().query())
            .unwrap_or_else(IntoResponse::into_response)
    };
    super::allow_any_origin(response, "ETag, Retry-After")
}

/// The CORS preflight: any origin, with `Authorization` or `If-None-Match`.
fn preflight() -> Response {
    super::any_origin_preflight("GET, HEAD, OPTIONS", "Authorization, If-None-Match")
}

/// Why a request gets no config.
enum Refusal {
    /// One of the API's errors.
    Api(ApiError),
    /// 401 with this message; `missing` when no key was sent at all.
    Unauthorized {
        message: &'static str,
        missing: bool,
    },
    /// The site has no config to give.
    NoConfig(NoConfig),
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Refusal {
        Refusal::Api(error)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Api(e) => e.into_response(),
            Refusal::Unauthorized { message, missing } => unauthorized(message, missing),
            Refusal::NoConfig(NoConfig::NeverValid(body)) => {
                ApiError::InvalidConfig(body).into_response()
            }
            Refusal::NoConfig(NoConfig::Loading) => {
                ApiError::Unavailable(Unavailable::Loading).into_response()
            }
            Refusal::NoConfig(NoConfig::NotJson(why)) => error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InvalidConfig",
                &format!("the site's config is not JSON: {why}"),
            ),
        }
    }
}

/// A 401 with `WWW-Authenticate` and `message`.
fn unauthorized(message: &str, missing: bool) -> Response {
    let mut response = error(StatusCode::UNAUTHORIZED, "Unauthorized", message);
    let challenge = if missing {
        "Bearer realm=\"nudge-rules\""
    } else {
        "Bearer realm=\"nudge-rules\", error=\"invalid_token\""
    };
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

/// What a malformed key is told.
const MALFORMED: &str = "the key must be a publishable key: pk_live_ or pk_test_ followed by at least 16 letters or digits, as ?key=... or Authorization: Bearer";

/// The key of the request: `?key=` or `Authorization: Bearer`.
fn key_of<'a>(params: &'a Params, headers: &'a HeaderMap) -> Result<&'a str, Refusal> {
    let header_key = if headers.contains_key(header::AUTHORIZATION) {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let value = values.next().and_then(|v| v.to_str().ok());
        let key = value
            .filter(|_| values.next().is_none())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, key)| key.trim());
        match key {
            Some(key) => Some(key),
            None => {
                return Err(Refusal::Unauthorized {
                    message: MALFORMED,
                    missing: false,
                });
            }
        }
    } else {
        None
    };
    match (params.get("key"), header_key) {
        (Some(a), Some(b)) if a != b => Err(Refusal::Api(ApiError::InvalidRequest(
            "the key query parameter and the Authorization header name different keys; send one"
                .to_owned(),
        ))),
        (Some(key), _) | (None, Some(key)) => Ok(key),
        (None, None) => Err(Refusal::Unauthorized {
            message: "missing key; send the site's publishable key as ?key=pk_live_... or ?key=pk_test_...",
            missing: true,
        }),
    }
}

/// The whole answer of a GET (or HEAD): the key's site and mode, then its current config.
fn answer(app: &AppState, headers: &HeaderMap, query: Option<&str>) -> Result<Response, Refusal> {
    if let Some(why) = app.unavailable() {
        return Err(ApiError::Unavailable(why).into());
    }
    let params = Params::parse(query, &["key"])?;
    let key = key_of(&params, headers)?;
    match key_kind(key) {
        Some(KeyKind::Publishable) => {}
        Some(KeyKind::Secret) => {
            return Err(Refusal::Unauthorized {
                message: "a secret key (sk_) must never be put in a page, where anyone can read it; pages fetch their config with the site's publishable key (pk_live_ or pk_test_); replace this secret key",
                missing: false,
            });
        }
        None => {
            return Err(Refusal::Unauthorized {
                message: MALFORMED,
                missing: false,
            });
        }
    }
    let key_hash = KeyHash::of_key(key);
    let sites = app.sites();
    let Some(site) = sites.site_of(KeyKind::Publishable, &key_hash) else {
        return Err(Refusal::Unauthorized {
            message: "the publishable key is not valid",
            missing: false,
        });
    };
    let span = tracing::Span::current();
    span.record("site", site.id.as_str());
    span.record("key", key_hash.log_id().as_str());
    let mode = Mode::of_key(key);
    let prepared = app
        .runtime_cache
        .prepared(site, mode)
        .map_err(Refusal::NoConfig)?;
    let mut response = if not_modified(headers, &prepared.tag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let (body, gzipped) = match &prepared.gzip {
            Some(gzip) if accepts_gzip(headers) => (gzip.clone(), true),
            _ => (prepared.body.clone(), false),
        };
        // The kept bytes themselves, not a copy.
        let body = Body::from(axum::body::Bytes::from_owner(body));
        let mut response = (StatusCode::OK, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if gzipped {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response
    };
    let headers = response.headers_mut();
    if let Ok(etag) = HeaderValue::from_str(&format!("W/\"{}\"", prepared.tag)) {
        headers.insert(header::ETAG, etag);
    }
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(RUNTIME_CACHE_CONTROL),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    if let Ok(value) = HeaderValue::from_str(&prepared.version) {
        headers.insert("nudge-config-version", value);
    }
    Ok(response)
}

/// Whether `If-None-Match` names `tag` (weak comparison, RFC 9110 13.1.2) or is `*`.
fn not_modified(headers: &HeaderMap, tag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|candidate| {
            candidate == "*"
                || candidate
                    .trim_start_matches("W/")
                    .strip_prefix('"')
                    .and_then(|c| c.strip_suffix('"'))
                    == Some(tag)
        })
}

/// Whether `Accept-Encoding` allows gzip (`gzip`, `x-gzip` or `*`, with a q-value above 0).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let named = ["gzip", "x-gzip", "*"]
                .iter()
                .any(|n| name.eq_ignore_ascii_case(n));
            let q_zero = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            named && !q_zero
        })
}

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
    fn if_none_match_compares_weakly_and_takes_lists_and_star() {
        let tag = "3-abcdef0123456789";
        for yes in [
            "W/\"3-abcdef0123456789\"",
            "\"3-abcdef0123456789\"",
            "\"x\", W/\"3-abcdef0123456789\"",
            "*",
        ] {
            assert!(
                not_modified(&headers(&[("if-none-match", yes)]), tag),
                "{yes}"
            );
        }
        for no in ["W/\"2-abcdef0123456789\"", "3-abcdef0123456789", ""] {
            assert!(
                !not_modified(&headers(&[("if-none-match", no)]), tag),
                "{no}"
            );
        }
        assert!(!not_modified(&headers(&[]), tag));
    }

    #[test]
    fn accept_encoding_gzip_unless_q_zero() {
        for yes in ["gzip", "deflate, gzip;q=0.5", "br, *", "GZIP", "x-gzip"] {
            assert!(accepts_gzip(&headers(&[("accept-encoding", yes)])), "{yes}");
        }
        for no in ["identity", "gzip;q=0", "br", ""] {
            assert!(!accepts_gzip(&headers(&[("accept-encoding", no)])), "{no}");
        }
    }
}
