//! The extractors of the REST API's handlers: who calls ([`Caller`], put in the request by
//! the admission layer, [`crate::http::pipeline::admitted`]), the store ([`Stored`]), a JSON
//! body ([`Sent`], by the rules of [`crate::http::body`]: 415, 413, 408, 400), a body the route
//! does not use ([`Drained`]), the publish's precondition ([`Precondition`], 428 and 400) and
//! its site ([`ApiManaged`], 409), and the conditional and encoding headers of the runtime
//! config ([`IfNoneMatch`], [`AcceptsGzip`]). The list queries are [`crate::http::query`]'s.
//!
//! Axum runs a handler's extractors in the order of its arguments, the body's last: a route
//! lists them in the order its checks are documented, so a refusal made before the body is
//! read still leaves it unread.

use std::sync::Arc;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use serde::de::DeserializeOwned;

use crate::app::state::AppState;
use crate::http::auth::Caller;
use crate::http::body::{read_body, read_json_body, refuse_nulls};
use crate::http::error::{ApiError, AuthFailure};
use crate::http::pipeline::ApiOptions;
use crate::store::Store;

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    /// The caller the admission layer admitted (a route without the layer has none: 401).
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, ApiError> {
        parts
            .extensions
            .remove::<Caller>()
            .ok_or(ApiError::Unauthorized(AuthFailure::Missing))
    }
}

/// The caller of a publish, whose site is managed through the API (409
/// ConfigManagedByFile for a site managed by its config file on the server, docs/contract/versions.md).
pub struct ApiManaged(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for ApiManaged {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<ApiManaged, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if !caller.site.api_managed() {
            return Err(ApiError::ConfigManagedByFile(format!(
                "site {:?} is managed by its config file on the server; change that file (it is reloaded within seconds), or remove `config` from the site's entry to manage it through the API",
                caller.site.id
            )));
        }
        Ok(ApiManaged(caller))
    }
}

/// The store (503 when the server has none).
pub struct Stored(pub Store);

impl FromRequestParts<Arc<AppState>> for Stored {
    type Rejection = ApiError;

    async fn from_request_parts(_: &mut Parts, app: &Arc<AppState>) -> Result<Stored, ApiError> {
        app.store
            .clone()
            .map(Stored)
            .ok_or(ApiError::StoreUnavailable)
    }
}

/// The listener's options, put in every request by the router.
fn options_of(request: &Request) -> Result<ApiOptions, ApiError> {
    request
        .extensions()
        .get::<ApiOptions>()
        .copied()
        .ok_or_else(|| ApiError::InvalidRequest("the request body could not be read".to_owned()))
}

/// A JSON body a route takes: its largest size, and its shape as a 400 describes it.
pub trait BodyForm: DeserializeOwned {
    /// The largest body, in bytes (413 above).
    const MAX_BYTES: usize;
    /// The body's shape, for the 400 of a body that does not fit it.
    const SHAPE: &'static str;
}

/// A JSON body of the form `T`: one `Content-Type: application/json` (415), at most
/// `T::MAX_BYTES` (413), in time (408), no field `null`, the form's fields and no other (400).
pub struct Sent<T>(pub T);

impl<S: Send + Sync, T: BodyForm> FromRequest<S> for Sent<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Sent<T>, ApiError> {
        let options = options_of(&request)?;
        let bytes = read_json_body(request, T::MAX_BYTES, &options).await?;
        refuse_nulls(&bytes)?;
        serde_json::from_slice(&bytes).map(Sent).map_err(|e| {
            ApiError::InvalidRequest(format!("the request body must be {}: {e}", T::SHAPE))
        })
    }
}

/// A body the route does not use (any, or none), read to its end (at most `MAX` bytes, in
/// time) so the connection can carry the next request.
pub struct Drained<const MAX: usize>;

impl<S: Send + Sync, const MAX: usize> FromRequest<S> for Drained<MAX> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Drained<MAX>, ApiError> {
        let options = options_of(&request)?;
        read_body(request, MAX, options.body_total_timeout).await?;
        Ok(Drained)
    }
}

/// Which version a publish expects to replace: `If-Match: "v<n>"` (`Some(n)`) or
/// `If-None-Match: *` (`None`).
pub struct Precondition(pub Option<i64>);

impl<S: Send + Sync> FromRequestParts<S> for Precondition {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Precondition, ApiError> {
        precondition(&parts.headers).map(Precondition)
    }
}

/// `GET /v1/config`, whose `ETag` a publish's `If-Match` names.
const CONFIG_PATH: &str = "/v1/config";

/// Which version a publish expects to replace: `If-Match: "v<n>"` or `If-None-Match: *`.
///
/// # Errors
///
/// 428 without either; 400 for both, or a malformed one.
pub(crate) fn precondition(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let if_match = headers.get(header::IF_MATCH);
    let if_none_match = headers.get(header::IF_NONE_MATCH);
    let text = |v: &HeaderValue| {
        String::from_utf8_lossy(v.as_bytes())
            .chars()
            .take(60)
            .collect::<String>()
    };
    match (if_match, if_none_match) {
        (None, None) => Err(ApiError::PreconditionRequired(format!(
            "a publish names the version it replaces: If-Match: \"v<version>\" (the ETag of GET {CONFIG_PATH}), or If-None-Match: * for the first version"
        ))),
        (Some(_), Some(_)) => Err(ApiError::InvalidRequest(
            "send If-Match or If-None-Match, not both".to_owned(),
        )),
        (None, Some(v)) if v.as_bytes() == b"*" => Ok(None),
        (None, Some(v)) => Err(ApiError::InvalidRequest(format!(
            "If-None-Match must be *, got {:?}",
            text(v)
        ))),
        (Some(v), None) => {
            let t = text(v);
            t.strip_prefix("\"v")
                .and_then(|rest| rest.strip_suffix('"'))
                .filter(|n| {
                    !n.starts_with('0') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                })
                .and_then(|n| n.parse::<i64>().ok())
                .map(Some)
                .ok_or_else(|| {
                    ApiError::InvalidRequest(format!(
                        "If-Match must be \"v<version>\" as GET {CONFIG_PATH}'s ETag, such as \"v3\", got {t:?}"
                    ))
                })
        }
    }
}

/// The entity tags of `If-None-Match` (a cache revalidating), compared weakly.
pub struct IfNoneMatch(Vec<HeaderValue>);

impl<S: Send + Sync> FromRequestParts<S> for IfNoneMatch {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &S,
    ) -> Result<IfNoneMatch, std::convert::Infallible> {
        Ok(IfNoneMatch(
            parts
                .headers
                .get_all(header::IF_NONE_MATCH)
                .iter()
                .cloned()
                .collect(),
        ))
    }
}

impl IfNoneMatch {
    /// Whether it names `tag` (weak comparison, RFC 9110 13.1.2) or is `*`.
    pub fn matches(&self, tag: &str) -> bool {
        self.0
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
}

/// Whether `Accept-Encoding` allows gzip (`gzip`, `x-gzip` or `*`, with a q-value above 0).
pub struct AcceptsGzip(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for AcceptsGzip {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &S,
    ) -> Result<AcceptsGzip, std::convert::Infallible> {
        Ok(AcceptsGzip(accepts_gzip(&parts.headers)))
    }
}

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

    use crate::http::test_headers as headers;

    fn not_modified(headers: &HeaderMap, tag: &str) -> bool {
        IfNoneMatch(
            headers
                .get_all(header::IF_NONE_MATCH)
                .iter()
                .cloned()
                .collect(),
        )
        .matches(tag)
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

    /// The schema of a header parameter of the publish in docs/openapi.yaml.
    fn publish_header(name: &str) -> serde_json::Value {
        let doc: serde_json::Value =
            serde_json::from_str(&crate::http::openapi::openapi_json().unwrap()).unwrap();
        let parameters = doc["paths"]["/v1/config/versions"]["post"]["parameters"]
            .as_array()
            .unwrap()
            .clone();
        parameters.into_iter().find(|p| p["name"] == name).unwrap()["schema"].clone()
    }

    fn accepted(name: header::HeaderName, value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).unwrap());
        precondition(&headers).is_ok()
    }

    /// A generated client never sends a precondition the document allows and the server
    /// refuses, nor the reverse (issue 35: the schema took any string).
    #[test]
    fn the_documents_preconditions_are_those_the_server_takes() {
        let if_match =
            regex::Regex::new(publish_header("If-Match")["pattern"].as_str().unwrap()).unwrap();
        for value in [
            "\"v1\"",
            "\"v42\"",
            "\"v999999999999999999\"",
            "\"v0\"",
            "\"v01\"",
            "\"v\"",
            "\"v-1\"",
            "\"v1\" ",
            "v1",
            "\"1\"",
            "W/\"v1\"",
            "*",
            "",
            "\"v1x\"",
        ] {
            assert_eq!(
                if_match.is_match(value),
                accepted(header::IF_MATCH, value),
                "If-Match: {value}"
            );
        }
        let if_none_match = publish_header("If-None-Match");
        let allowed = if_none_match["enum"].as_array().unwrap();
        for value in ["*", "\"v1\"", "**", "", " *"] {
            assert_eq!(
                allowed.iter().any(|a| a == value),
                accepted(header::IF_NONE_MATCH, value),
                "If-None-Match: {value}"
            );
        }
    }
}
