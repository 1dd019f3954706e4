//! The wire format of `POST /v1/nudges/preview` (docs/contract/preview.md; API document 2.4, 4.4, 7): bodies in,
//! bodies out.
//!
//! A server holds one [`Engine`] per site config and calls [`Engine::preview_body`]: `Ok(body)` is
//! the 200 body, `Err(e)` answers with [`Error::http_status`] and [`Error::to_body`]. For a
//! one-off, [`preview_response`] compiles the config too.

use serde::Serialize;

use crate::config::NudgeType;
use crate::engine::Engine;
use crate::error::Error;
use crate::preview::Preview;
use crate::request::SessionState;

/// The preview result (API document 2.4), the `data` of the 200 body.
///
/// Serializes as `{"would_fire": true, "nudge": {"type", "message", "cta", "reason"}}` or
/// `{"would_fire": false, "nudge": null, "reason": "..."}`: `nudge` is always present, `reason`
/// only when no nudge fires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PreviewResult {
    /// True when a nudge would fire.
    pub would_fire: bool,
    /// The nudge that would fire; `null` when none would.
    pub nudge: Option<NudgeResult>,
    /// Why no nudge fires (informational); absent when one fires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The nudge of a [`PreviewResult`] (API document 2.4 `data.nudge`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct NudgeResult {
    /// The nudge kind.
    #[serde(rename = "type")]
    pub nudge_type: NudgeType,
    /// Text of the nudge.
    pub message: String,
    /// Call-to-action label.
    pub cta: String,
    /// Why it fires (informational).
    pub reason: String,
}

impl PreviewResult {
    /// The result of a preview, with its reason text.
    fn from_preview(preview: &Preview<'_>) -> Self {
        let reason = preview.reason();
        match preview.nudge() {
            Some(n) => PreviewResult {
                would_fire: true,
                nudge: Some(NudgeResult {
                    nudge_type: n.nudge_type,
                    message: n.message.clone(),
                    cta: n.cta.clone(),
                    reason,
                }),
                reason: None,
            },
            None => PreviewResult {
                would_fire: false,
                nudge: None,
                reason: Some(reason),
            },
        }
    }

    /// `{"data": result}` as JSON text: the 200 body.
    fn to_response_body(&self) -> String {
        #[derive(Serialize)]
        struct Body<'a> {
            data: &'a PreviewResult,
        }
        // Serializing plain structs of strings and booleans cannot fail.
        serde_json::to_string(&Body { data: self }).unwrap_or_default()
    }
}

impl Preview<'_> {
    /// The preview result (API document 2.4) as an owned value: what `data` holds.
    pub fn to_result(&self) -> PreviewResult {
        PreviewResult::from_preview(self)
    }

    /// The 200 response body: `{"data": <preview result>}` (API document 2.4, 4.4).
    pub fn to_response_body(&self) -> String {
        self.to_result().to_response_body()
    }
}

impl Engine {
    /// Reads a request body and returns the response body (docs/contract/preview.md; API document 2.4 and 4.4):
    /// `{"data":{"would_fire":true,"nudge":{"type","message","cta","reason"}}}` or
    /// `{"data":{"would_fire":false,"nudge":null,"reason":"..."}}`.
    ///
    /// # Errors
    ///
    /// - `InvalidRequest` as [`SessionState::from_request_body`] and [`Engine::preview`]; answer it
    ///   with [`Error::http_status`] (400) and [`Error::to_body`].
    pub fn preview_body(&self, body: &[u8]) -> Result<String, Error> {
        let state = SessionState::from_request_body(body)?;
        let preview = self.preview(&state)?;
        Ok(preview.to_response_body())
    }
}

/// Compiles `config_text` and answers one request body: the whole endpoint in one call.
///
/// ```
/// let config = r#"{"version": 1, "rules": [{"id": "hi", "nudge": {"type": "toast", "message": "Hi", "cta": "Ok"}}]}"#;
/// let body = nudge_rules::preview_response(config, br#"{"session_state": {"intent_score": 5, "page_url": "/"}}"#).unwrap();
/// assert!(body.starts_with(r#"{"data":{"would_fire":true,"nudge":{"type":"toast","message":"Hi","cta":"Ok","reason":"#));
///
/// let err = nudge_rules::preview_response(config, br#"{"session_state": {"intent_score": 500, "page_url": "/"}}"#).unwrap_err();
/// assert_eq!(err.http_status(), 400);
/// assert!(err.to_body().starts_with(r#"{"error":"InvalidRequest","message":"session_state.intent_score: "#));
/// ```
///
/// # Errors
///
/// - `InvalidConfig` (HTTP 500) as [`Engine::compile`]; `InvalidRequest` (HTTP 400) as
///   [`Engine::preview_body`].
pub fn preview_response(config_text: &str, body: &[u8]) -> Result<String, Error> {
    Engine::compile(config_text)?.preview_body(body)
}
