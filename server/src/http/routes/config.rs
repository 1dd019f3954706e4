//! The live config (docs/contract/versions.md): `GET /v1/config`; its history and publish are in
//! [`super::versions`].
//!
//! A site whose sites-file entry names a `config` file is managed by that file: `GET
//! /v1/config` shows the file's config (`managed_by: "file"`, no version). Any other site is
//! managed through the API, one history per mode, kept in the store.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::value::RawValue;

use super::versions::VERSIONS_PATH;
use crate::app::state::AppState;
use crate::app::versions::{self, live_engine, scope_words};
use crate::domain::wire::LiveConfig;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::forms::{ConfigAnswer, answer};
use crate::http::page::{DataEnvelope, to_body};
use crate::http::pipeline::store_of;
use crate::http::query::NoQuery;

/// `GET /v1/config`.
pub const CONFIG_PATH: &str = "/v1/config";

/// `GET /v1/config`: the config the caller's keys are served.
pub async fn current(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    _: NoQuery,
) -> Result<ConfigAnswer, ApiError> {
    if !caller.site.api_managed() {
        let (sha256, text) = versions::file_config(&caller.site, caller.scope.mode)?;
        let config = serde_json::from_str::<&RawValue>(&text)
            .map_err(|e| ApiError::InvalidRequest(format!("the config file is not JSON: {e}")))?;
        let data = LiveConfig::of_file(&sha256, config);
        return Ok(answer(
            StatusCode::OK,
            to_body(&DataEnvelope { data }),
            None,
        ));
    }
    let version = store_of(&app)?
        .config_version(&caller.scope, None)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!(
            "no config version published yet for {}; publish one with POST {VERSIONS_PATH} and If-None-Match: *",
            scope_words(&caller.scope)
        )))?;
    let data = LiveConfig::of_version(&version).ok_or(ApiError::StoreUnavailable)?;
    let body = to_body(&DataEnvelope { data });
    Ok(answer(StatusCode::OK, body, Some(version.version)))
}

/// The live engine of the caller's site and mode, with its `Nudge-Config-Version`.
///
/// # Errors
///
/// 500 InvalidConfig when the site never had a valid config; 503 while it loads.
pub(crate) fn live(caller: &Caller) -> Result<(Arc<nudge_rules::Engine>, String), ApiError> {
    Ok(live_engine(&caller.site, caller.scope.mode)?)
}
