//! The wire forms of the read API's records (API document 2.1, 2.3; docs/contract/versions.md's versions): one
//! shape for the list and detail routes and for the webhook payloads (docs/contract/webhooks.md), so a receiver
//! parses one vocabulary.

use nudge_rules::{NudgeOutcome, NudgeType};
use serde::Serialize;
use serde_json::value::RawValue;

use super::derive::{NudgeSummary, SessionSummary};
use super::time::{WireTime, format_ms};

/// One published config version (docs/contract/versions.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigVersion {
    /// 1, 2, 3, ... per site and mode.
    pub version: i64,
    /// When it was published, Unix milliseconds.
    pub published_at_ms: i64,
    /// The first 8 hex digits of the publishing key's SHA-256.
    pub published_by: String,
    /// The publisher's message, at most 500 characters.
    pub message: Option<String>,
    /// SHA-256 of the config text, hex.
    pub sha256: String,
    /// The earlier version this one publishes again (a rollback).
    /// The version this one publishes again.
    pub restores: Option<i64>,
    /// The config text; `None` when a list was read without the bodies.
    pub config: Option<String>,
}

/// A session as a list item (API document 2.1).
#[derive(Serialize)]
pub struct SessionItem<'a> {
    id: &'a str,
    started_at: WireTime,
    ended_at: WireTime,
    page_count: i64,
    intent_score: i64,
    converted: bool,
    nudge_count: i64,
}

impl<'a> SessionItem<'a> {
    /// The wire form of a session's derived fields.
    pub fn of(s: &'a SessionSummary) -> SessionItem<'a> {
        SessionItem {
            id: &s.id,
            started_at: WireTime(s.started_at_ms),
            ended_at: WireTime(s.ended_at_ms),
            page_count: s.page_count,
            intent_score: s.intent_score,
            converted: s.converted,
            nudge_count: s.nudge_count,
        }
    }
}

/// A nudge event as a list item (API document 2.3).
#[derive(Serialize)]
pub struct NudgeItem<'a> {
    id: &'a str,
    session_id: &'a str,
    #[serde(rename = "type")]
    nudge_type: NudgeType,
    shown_at: WireTime,
    outcome: NudgeOutcome,
    influenced_conversion: bool,
}

impl<'a> NudgeItem<'a> {
    /// The wire form of a shown nudge.
    pub fn of(n: &'a NudgeSummary) -> NudgeItem<'a> {
        NudgeItem {
            id: &n.id,
            session_id: &n.session_id,
            nudge_type: n.nudge_type,
            shown_at: WireTime(n.shown_at_ms),
            outcome: n.outcome,
            influenced_conversion: n.influenced_conversion,
        }
    }
}
/// A version as the API writes it (docs/contract/versions.md).
#[derive(Serialize)]
pub struct VersionItem<'a> {
    /// 1, 2, 3, ...
    pub version: i64,
    /// RFC 3339, UTC.
    pub published_at: String,
    /// The publisher's message.
    pub message: Option<&'a str>,
    /// The first 8 hex digits of the publishing key's SHA-256.
    pub published_by: &'a str,
    /// SHA-256 of the config text, hex.
    pub sha256: &'a str,
    /// The version this one publishes again.
    pub restores: Option<i64>,
    /// The config, when read with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<&'a RawValue>,
}

impl<'a> VersionItem<'a> {
    /// The wire form of a version; `config` is left out when `v` has none.
    pub fn of(v: &'a ConfigVersion) -> VersionItem<'a> {
        VersionItem {
            version: v.version,
            published_at: format_ms(v.published_at_ms),
            message: v.message.as_deref(),
            published_by: &v.published_by,
            sha256: &v.sha256,
            restores: v.restores,
            config: v
                .config
                .as_deref()
                .and_then(|text| serde_json::from_str::<&RawValue>(text).ok()),
        }
    }
}

/// `GET /v1/config`'s data (docs/contract/versions.md): a version with `managed_by`.
#[derive(Serialize)]
pub struct LiveConfig<'a> {
    managed_by: &'static str,
    version: Option<i64>,
    published_at: Option<String>,
    message: Option<&'a str>,
    published_by: Option<&'a str>,
    sha256: &'a str,
    restores: Option<i64>,
    config: &'a RawValue,
}

impl<'a> LiveConfig<'a> {
    /// The config of a file-managed site: no version.
    pub fn of_file(sha256: &'a str, config: &'a RawValue) -> LiveConfig<'a> {
        LiveConfig {
            managed_by: "file",
            version: None,
            published_at: None,
            message: None,
            published_by: None,
            sha256,
            restores: None,
            config,
        }
    }

    /// A published version read with its config (`None` without it).
    pub fn of_version(v: &'a ConfigVersion) -> Option<LiveConfig<'a>> {
        let item = VersionItem::of(v);
        Some(LiveConfig {
            managed_by: "api",
            version: Some(item.version),
            published_at: Some(item.published_at),
            message: item.message,
            published_by: Some(item.published_by),
            sha256: item.sha256,
            restores: item.restores,
            config: item.config?,
        })
    }
}
