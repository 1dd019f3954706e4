//! Who is calling (docs/contract/server.md "Sites and keys", "Authentication", "Rate limit"; docs/contract/read-api.md "Modes"):
//! the server's lifecycle, the key of `Authorization: Bearer`, its site and mode, and the key's
//! one rolling window, shared by every endpoint of the REST API.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::app::state::AppState;
use crate::domain::event::{Mode, Scope};
use crate::domain::ingest::Batch;
use crate::http::error::{ApiError, AuthFailure, error};
use crate::http::query::Params;
use crate::limiter::Decision;
use crate::metrics::SiteLabels;
use crate::sites::keys::{KeyHash, KeyKind, key_kind};
use crate::sites::registry::Site;

/// Who is calling: the site of the key, the records it may see, and the key's hash. The
/// admission layer (`pipeline.rs`) puts it in the request's extensions;
/// a handler takes it as an extractor.
#[derive(Clone)]
pub struct Caller {
    /// The key's site, as the sites file defined it when the request arrived.
    pub site: Arc<Site>,
    /// The key's site and mode (docs/contract/read-api.md "Modes").
    pub scope: Scope,
    /// The key's hash (log lines name it by its first 8 hex digits).
    pub key_hash: KeyHash,
}

/// The secret key of `Authorization: Bearer <key>` (API document section 5), well formed
/// (docs/contract/server.md).
///
/// # Errors
///
/// The [`AuthFailure`].
pub fn bearer_key(headers: &HeaderMap) -> Result<&str, AuthFailure> {
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

/// The key of `Authorization: Bearer <key>` as sent, any kind (`None` without the header):
/// the relay's and the runtime config's, whose keys may come in the body or the query too.
///
/// # Errors
///
/// Two headers, or not `Bearer <key>`.
pub fn bearer_any(headers: &HeaderMap) -> Result<Option<&str>, AuthFailure> {
    if !headers.contains_key(header::AUTHORIZATION) {
        return Ok(None);
    }
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value = values.next().and_then(|v| v.to_str().ok());
    value
        .filter(|_| values.next().is_none())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, key)| Some(key.trim()))
        .ok_or(AuthFailure::Malformed)
}

/// The caller of the runtime config (docs/contract/storefront.md): a publishable key's site and mode, the key
/// given as `?key=` (so the request stays "simple": no CORS preflight) or `Authorization:
/// Bearer`. Checks, in order: the lifecycle (503), the query (400 for another parameter or
/// `key` twice), the key (both given and different, 400; 401 otherwise).
pub struct PageCaller {
    /// The key's site.
    pub site: Arc<Site>,
    /// The key's mode.
    pub mode: Mode,
}

/// Why the runtime config refuses a caller.
pub enum PageRefusal {
    /// One of the API's errors.
    Api(ApiError),
    /// 401 with this message; `missing` when no key was sent at all.
    Unauthorized {
        /// The message.
        message: &'static str,
        /// No key at all.
        missing: bool,
    },
}

impl From<ApiError> for PageRefusal {
    fn from(error: ApiError) -> PageRefusal {
        PageRefusal::Api(error)
    }
}

impl IntoResponse for PageRefusal {
    fn into_response(self) -> Response {
        let (message, missing) = match self {
            PageRefusal::Api(e) => return e.into_response(),
            PageRefusal::Unauthorized { message, missing } => (message, missing),
        };
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
}

/// What a malformed page key is told.
const MALFORMED: &str = "the key must be a publishable key: pk_live_ or pk_test_ followed by at least 16 letters or digits, as ?key=... or Authorization: Bearer";

impl FromRequestParts<Arc<AppState>> for PageCaller {
    type Rejection = PageRefusal;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &Arc<AppState>,
    ) -> Result<PageCaller, PageRefusal> {
        let unauthorized = |message| PageRefusal::Unauthorized {
            message,
            missing: false,
        };
        if let Some(why) = app.unavailable() {
            return Err(ApiError::Unavailable(why).into());
        }
        let params = Params::parse(parts.uri.query(), &["key"])?;
        let header_key = bearer_any(&parts.headers).map_err(|_| unauthorized(MALFORMED))?;
        let key = match (params.get("key"), header_key) {
            (Some(a), Some(b)) if a != b => return Err(ApiError::InvalidRequest(
                "the key query parameter and the Authorization header name different keys; send one"
                    .to_owned(),
            ).into()),
            (Some(key), _) | (None, Some(key)) => key,
            (None, None) => return Err(PageRefusal::Unauthorized {
                message: "missing key; send the site's publishable key as ?key=pk_live_... or ?key=pk_test_...",
                missing: true,
            }),
        };
        match key_kind(key) {
            Some(KeyKind::Publishable) => {}
            Some(KeyKind::Secret) => {
                return Err(unauthorized(
                    "a secret key (sk_) must never be put in a page, where anyone can read it; pages fetch their config with the site's publishable key (pk_live_ or pk_test_); replace this secret key",
                ));
            }
            None => return Err(unauthorized(MALFORMED)),
        }
        let key_hash = KeyHash::of_key(key);
        let sites = app.sites();
        let Some(site) = sites.site_of(KeyKind::Publishable, &key_hash) else {
            return Err(unauthorized("the publishable key is not valid"));
        };
        record_caller(site, &key_hash);
        Ok(PageCaller {
            site: site.clone(),
            mode: Mode::of_key(key),
        })
    }
}

/// Events per rolling 60 s per publishable key (API document section 8).
pub const EVENTS_PER_MINUTE: u32 = 10_000;

/// The relay's caller (docs/contract/relay.md), from `header_key` (the key of `Authorization: Bearer`) and
/// the `batch`'s `site_key` (both and different, 400); a publishable key of a site (401); the
/// key's window counting the batch's events (429, refused whole, with the decision).
///
/// # Errors
///
/// The refusal, with the decision once the window was asked.
pub async fn admit_relay(
    app: &AppState,
    header_key: Option<&str>,
    batch: &Batch<'_>,
) -> Result<(Arc<Site>, Scope, Decision), (ApiError, Option<Decision>)> {
    let refuse = |failure| Err((ApiError::Unauthorized(failure), None));
    let cost = u32::try_from(batch.events.len()).unwrap_or(u32::MAX);
    let key = match (header_key, batch.site_key.as_deref()) {
        (Some(a), Some(b)) if a != b => return Err((
            ApiError::InvalidRequest(
                "the Authorization header and the body's site_key name different keys; send one"
                    .to_owned(),
            ),
            None,
        )),
        (Some(key), _) | (None, Some(key)) => key,
        (None, None) => return refuse(AuthFailure::Missing),
    };
    match key_kind(key) {
        Some(KeyKind::Publishable) => {}
        Some(KeyKind::Secret) => return refuse(AuthFailure::SecretInPage),
        None => return refuse(AuthFailure::Malformed),
    }
    let key_hash = KeyHash::of_key(key);
    let sites = app.sites();
    let Some(site) = sites.site_of(KeyKind::Publishable, &key_hash) else {
        return refuse(AuthFailure::Unknown);
    };
    record_caller(site, &key_hash);
    let decision = decide(app, site, &key_hash, EVENTS_PER_MINUTE, cost).await;
    if !decision.admitted {
        return Err((ApiError::EventsRateLimited(decision, cost), Some(decision)));
    }
    let scope = Scope {
        site: site.id.clone(),
        mode: Mode::of_key(key),
    };
    Ok((site.clone(), scope, decision))
}

/// The lifecycle (503), a secret key of a site (401), the key's one rolling window (429): the
/// steps every endpoint of the REST API shares. An admitted request gets the caller and the
/// decision, whose headers its answer must carry.
///
/// # Errors
///
/// [`ApiError::Unavailable`], [`ApiError::Unauthorized`], [`ApiError::RateLimited`].
pub async fn admit(app: &AppState, headers: &HeaderMap) -> Result<(Caller, Decision), ApiError> {
    if let Some(why) = app.unavailable() {
        return Err(ApiError::Unavailable(why));
    }
    let key = bearer_key(headers).map_err(ApiError::Unauthorized)?;
    let key_hash = KeyHash::of_key(key);
    let Some(site) = app.sites().site_of_key(&key_hash).cloned() else {
        tracing::debug!(key = %key_hash.log_id(), "unknown API key");
        return Err(ApiError::Unauthorized(AuthFailure::Unknown));
    };
    record_caller(&site, &key_hash);
    let decision = decide(app, &site, &key_hash, site.rate_limit, 1).await;
    if !decision.admitted {
        return Err(ApiError::RateLimited(decision));
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

/// Names the caller's site and key (its hash's first 8 hex digits) in the request's log span.
pub fn record_caller(site: &Site, key_hash: &KeyHash) {
    let span = tracing::Span::current();
    span.record("site", site.id.as_str());
    span.record("key", key_hash.log_id().as_str());
}

/// The key's one rolling window, for a request that costs `cost` admissions at once under
/// `limit` (1 for a request of the REST API, a relay batch's events for the relay); a refusal
/// is counted for the site.
pub async fn decide(
    app: &AppState,
    site: &Site,
    key_hash: &KeyHash,
    limit: u32,
    cost: u32,
) -> Decision {
    let decision = app.limiter.decide_cost(key_hash, limit, cost).await;
    if !decision.admitted {
        app.metrics
            .rate_limited
            .get_or_create(&SiteLabels {
                site: site.id.clone(),
            })
            .inc();
    }
    decision
}

#[cfg(test)]
mod tests {

    use super::*;

    use crate::http::test_headers as headers;

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
        let publishable = headers(&[("authorization", "Bearer pk_test_abcdefghijklmnop")]);
        assert_eq!(bearer_key(&publishable), Err(AuthFailure::Publishable));
    }
}
