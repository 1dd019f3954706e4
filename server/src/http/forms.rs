//! The routes' request bodies and answers (docs/contract/backtest.md, docs/contract/versions.md, docs/contract/caps.md, docs/contract/webhooks.md; API document 2.2): each body
//! with its largest size and its shape ([`BodyForm`], read by the
//! [`Sent`](crate::http::extract::Sent) extractor), and the answers the routes build from the
//! store's records.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nudge_rules::as_code::backtest::PageChanges;
use nudge_rules::replay::ReplaySummary;
use nudge_rules::{NudgeOutcome, NudgeType};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::app::runtime_config::Prepared;
use crate::app::uplift::RuleUplift;
use crate::app::versions;
use crate::app::webhooks::{Change, NewEndpoint};
use crate::domain::time::WireTime;
use crate::domain::wire::{ConfigVersion, SessionItem, VersionItem};
use crate::http::error::json;
use crate::http::extract::BodyForm;
use crate::http::page::{DataEnvelope, to_body};
use crate::store::SessionDetail;

/// The largest publish body: 2 MiB, as a backtest's (a config is at most 1 MiB; the rest is
/// for scenarios and the message).
pub const MAX_PUBLISH_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The largest body: 2 MiB (docs/contract/backtest.md).
pub const MAX_BACKTEST_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The largest body of the webhook routes, in bytes.
pub const MAX_WEBHOOK_BODY_BYTES: usize = 16 * 1024;

impl BodyForm for NewEndpoint {
    const MAX_BYTES: usize = MAX_WEBHOOK_BODY_BYTES;
    const SHAPE: &'static str =
        "{\"url\": URL, \"event_types\": [TYPE, ...], \"description\"?: TEXT}";
}

/// `PATCH /v1/webhook_endpoints/{id}`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    pub(crate) url: Option<String>,
    pub(crate) event_types: Option<Vec<String>>,
    pub(crate) description: Option<String>,
    pub(crate) status: Option<String>,
}

impl BodyForm for Patch {
    const MAX_BYTES: usize = MAX_WEBHOOK_BODY_BYTES;
    const SHAPE: &'static str = "{\"url\"?: URL, \"event_types\"?: [TYPE, ...], \"description\"?: TEXT, \"status\"?: \"enabled\" | \"disabled\"}";
}

impl From<Patch> for Change {
    /// The change a `PATCH` asks for; an empty description removes it.
    fn from(sent: Patch) -> Change {
        Change {
            url: sent.url,
            event_types: sent.event_types,
            description: sent.description.map(|d| Some(d).filter(|d| !d.is_empty())),
            status: sent.status,
        }
    }
}

/// `POST /v1/webhook_endpoints/{id}/recover`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recover {
    pub(crate) since: String,
}

impl BodyForm for Recover {
    const MAX_BYTES: usize = MAX_WEBHOOK_BODY_BYTES;
    const SHAPE: &'static str = "{\"since\": RFC 3339 TIME}";
}

/// A session with its log (API document 2.2).
#[derive(Serialize)]
pub struct SessionDetailItem<'a> {
    #[serde(flatten)]
    pub(crate) session: SessionItem<'a>,
    pub(crate) events: Vec<EventItem<'a>>,
    pub(crate) nudges: Vec<SessionNudgeItem<'a>>,
}

impl<'a> SessionDetailItem<'a> {
    /// The wire form of a session with its events and nudges.
    pub fn of(d: &'a SessionDetail) -> SessionDetailItem<'a> {
        SessionDetailItem {
            session: SessionItem::of(&d.summary),
            events: d
                .events
                .iter()
                .map(|e| EventItem {
                    event_type: &e.event_type,
                    url: &e.url,
                    occurred_at: WireTime(e.occurred_at_ms),
                    intent_score: e.intent_score,
                })
                .collect(),
            nudges: d
                .nudges
                .iter()
                .map(|n| SessionNudgeItem {
                    nudge_id: &n.id,
                    nudge_type: n.nudge_type,
                    shown_at: WireTime(n.shown_at_ms),
                    outcome: n.outcome,
                    influenced_conversion: n.influenced_conversion,
                })
                .collect(),
        }
    }
}

/// A page event (API document 2.2 "Session event"), with the SDK's intent score when it sent
/// one (docs/contract/as-code.md replay reads it).
#[derive(Serialize)]
pub struct EventItem<'a> {
    #[serde(rename = "type")]
    pub(crate) event_type: &'a str,
    pub(crate) url: &'a str,
    pub(crate) occurred_at: WireTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) intent_score: Option<i64>,
}

/// A nudge inside a session (API document 2.2 "Session nudge").
#[derive(Serialize)]
pub struct SessionNudgeItem<'a> {
    pub(crate) nudge_id: &'a str,
    #[serde(rename = "type")]
    pub(crate) nudge_type: NudgeType,
    pub(crate) shown_at: WireTime,
    pub(crate) outcome: NudgeOutcome,
    pub(crate) influenced_conversion: bool,
}

/// A config read: kept, but checked again each time (`ETag`: the version, new with every
/// publish).
pub struct ConfigAnswer {
    status: StatusCode,
    body: String,
    version: Option<i64>,
    location: Option<String>,
}

impl ConfigAnswer {
    /// With `Location: location` (a new version's address).
    pub(crate) fn at(mut self, location: String) -> ConfigAnswer {
        self.location = Some(location);
        self
    }
}

impl IntoResponse for ConfigAnswer {
    fn into_response(self) -> Response {
        let mut response = json(self.status, self.body);
        let headers = response.headers_mut();
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-cache"),
        );
        if let Some(version) = self.version {
            let etag = HeaderValue::from_str(&format!("\"v{version}\""));
            headers.insert(
                header::ETAG,
                etag.unwrap_or(HeaderValue::from_static("\"v0\"")),
            );
        }
        if let Some(Ok(location)) = self.location.as_deref().map(HeaderValue::from_str) {
            headers.insert(header::LOCATION, location);
        }
        response
    }
}

/// One version (`{"data": VERSION}`, docs/contract/versions.md) with `status`, its `ETag` the version.
pub(crate) fn version_answer(status: StatusCode, version: &ConfigVersion) -> ConfigAnswer {
    let body = to_body(&DataEnvelope {
        data: VersionItem::of(version),
    });
    answer(status, body, Some(version.version))
}

/// A config read or publish with `status`, of the version `version` if any.
pub(crate) fn answer(status: StatusCode, body: String, version: Option<i64>) -> ConfigAnswer {
    ConfigAnswer {
        status,
        body,
        version,
        location: None,
    }
}

impl BodyForm for versions::Sent {
    const MAX_BYTES: usize = MAX_PUBLISH_BODY_BYTES;
    const SHAPE: &'static str = "{\"config\": CONFIG, \"message\"?: TEXT, \"scenarios\"?: SCENARIO FILE, \"restores\"?: VERSION}";
}

/// The request body (docs/contract/backtest.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BacktestRequest {
    /// The draft: a config object, or its text as a string.
    pub(crate) config: Option<Box<RawValue>>,
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
}

impl BodyForm for BacktestRequest {
    const MAX_BYTES: usize = MAX_BACKTEST_BODY_BYTES;
    const SHAPE: &'static str = "{\"config\"?: CONFIG, \"from\"?: TIME, \"to\"?: TIME}";
}

/// The answer's `data` (docs/contract/backtest.md): the draft's replay summary (the names of
/// `nudge-rules replay --summary --json`), the live config's, and the changes.
#[derive(Serialize)]
pub struct BacktestAnswer {
    pub(crate) from: String,
    pub(crate) to: String,
    /// Which live config the draft was compared with (`Nudge-Config-Version`).
    pub(crate) live_version: String,
    /// The draft's summary, its fields at the top as `nudge-rules replay --summary --json`
    /// writes them.
    #[serde(flatten)]
    pub(crate) draft: ReplaySummary,
    /// The live config's summary, in the same shape.
    pub(crate) live: ReplaySummary,
    /// The page views whose outcome changes.
    pub(crate) changes: PageChanges,
}

/// The answer's `data`.
#[derive(Serialize)]
pub struct UpliftReport {
    pub(crate) from: String,
    pub(crate) to: String,
    /// By `rule_id` ascending (byte order).
    pub(crate) rules: Vec<RuleUplift>,
}

/// `Cache-Control` of a runtime config answer (docs/contract/storefront.md; the API document recommends 60 to 300 s).
pub const RUNTIME_CACHE_CONTROL: &str = "public, max-age=60, stale-while-revalidate=240";

/// A `GET /v1/runtime/config` answer (docs/contract/storefront.md): the kept body (200) or `304 Not Modified`, with
/// the weak `ETag`, `Cache-Control`, `Vary: Accept-Encoding` and `Nudge-Config-Version`.
pub struct RuntimeAnswer {
    /// The version's kept answer.
    pub prepared: Arc<Prepared>,
    /// `false` when `If-None-Match` named this version (304, no body).
    pub fresh: bool,
    /// The client accepts gzip: the compressed form, when one is kept.
    pub gzip: bool,
}

impl IntoResponse for RuntimeAnswer {
    fn into_response(self) -> Response {
        let prepared = &self.prepared;
        let mut response = if self.fresh {
            let (body, gzipped) = match &prepared.gzip {
                Some(compressed) if self.gzip => (compressed.clone(), true),
                _ => (prepared.body.clone(), false),
            };
            // The kept bytes themselves, not a copy.
            let mut response =
                (StatusCode::OK, Body::from(Bytes::from_owner(body))).into_response();
            let headers = response.headers_mut();
            let json = HeaderValue::from_static("application/json");
            headers.insert(header::CONTENT_TYPE, json);
            if gzipped {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            response
        } else {
            StatusCode::NOT_MODIFIED.into_response()
        };
        let headers = response.headers_mut();
        if let Ok(etag) = HeaderValue::from_str(&format!("W/\"{}\"", prepared.tag)) {
            headers.insert(header::ETAG, etag);
        }
        let cache = HeaderValue::from_static(RUNTIME_CACHE_CONTROL);
        headers.insert(header::CACHE_CONTROL, cache);
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        if let Ok(value) = HeaderValue::from_str(&prepared.version) {
            headers.insert("nudge-config-version", value);
        }
        response
    }
}
