//! Published configs' history (SPEC 13): `GET /v1/config/versions`, `GET
//! /v1/config/versions/{n}` and `POST /v1/config/versions`.
//!
//! A site managed by its sites-file `config` has an empty history and its writes are 409
//! ConfigManagedByFile. A publish is checked in this order: the site (409), the precondition
//! headers (428, 400), the body (400), then [`crate::app::versions::publish_sent`]: the config
//! (400 InvalidConfig with every diagnostic), the scenarios (400 InvalidScenarios, 422
//! ScenariosFailed), the store's compare-and-publish (412 when another version was published
//! meanwhile).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::forms::{ConfigAnswer, PublishRequest, answer};
use crate::app::state::AppState;
use crate::app::versions::{self, scope_words};
use crate::domain::cursor::Endpoint;
use crate::domain::wire::VersionItem;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::extract::{ApiManaged, Precondition, Sent};
use crate::http::page::{DataEnvelope, keyset_after, keyset_envelope, to_body};
use crate::http::pipeline::store_of;
use crate::http::query::{KeysetQuery, NoQuery};

/// `GET` and `POST /v1/config/versions`.
pub const VERSIONS_PATH: &str = "/v1/config/versions";
/// `GET /v1/config/versions/{n}` (axum's form).
pub const VERSION_PATH: &str = "/v1/config/versions/{n}";

/// `GET /v1/config/versions`: the history, newest first.
pub async fn versions(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    query: KeysetQuery,
) -> Result<ConfigAnswer, ApiError> {
    let before = keyset_after(
        &app,
        &caller,
        Endpoint::ConfigVersions,
        query.cursor.as_deref(),
    )?;
    let rows = if caller.site.api_managed() {
        let before = before.map(|(version, _)| version);
        store_of(&app)?
            .list_versions(&caller.scope, before, query.limit + 1)
            .await?
    } else {
        Vec::new()
    };
    let body = keyset_envelope(
        &app,
        &caller,
        Endpoint::ConfigVersions,
        &rows,
        query.limit,
        |v| (v.version, String::new()),
        VersionItem::of,
    );
    Ok(answer(StatusCode::OK, body, None))
}

/// `GET /v1/config/versions/{n}`: one version with its config.
pub async fn version(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(n): Path<String>,
    _: NoQuery,
) -> Result<ConfigAnswer, ApiError> {
    let shown: String = n.chars().take(40).collect();
    let not_found = || {
        let scope = scope_words(&caller.scope);
        ApiError::NotFound(format!("no config version {shown:?} for {scope}"))
    };
    let number = n
        .parse::<i64>()
        .ok()
        .filter(|&v| v >= 1 && !n.starts_with('+') && !n.starts_with('0'))
        .filter(|_| caller.site.api_managed())
        .ok_or_else(not_found)?;
    let version = store_of(&app)?
        .config_version(&caller.scope, Some(number))
        .await?
        .ok_or_else(not_found)?;
    let body = to_body(&DataEnvelope {
        data: VersionItem::of(&version),
    });
    Ok(answer(StatusCode::OK, body, Some(version.version)))
}

/// `POST /v1/config/versions`: 201 with the new version, its `ETag` and `Location`.
pub async fn publish(
    ApiManaged(caller): ApiManaged,
    Precondition(expected): Precondition,
    State(app): State<Arc<AppState>>,
    Sent(sent): Sent<PublishRequest>,
) -> Result<ConfigAnswer, ApiError> {
    let sent = versions::Sent {
        config: &sent.config,
        message: sent.message.as_deref(),
        scenarios: sent.scenarios.as_deref(),
        restores: sent.restores,
    };
    let by = caller.key_hash.log_id();
    let (site, scope) = (&caller.site, &caller.scope);
    let store = app.store.as_ref();
    let version =
        versions::publish_sent(store, site, scope, expected, &sent, &by, &app.metrics).await?;
    let body = to_body(&DataEnvelope {
        data: VersionItem::of(&version),
    });
    let location = format!("{VERSIONS_PATH}/{}", version.version);
    Ok(answer(StatusCode::CREATED, body, Some(version.version)).at(location))
}
