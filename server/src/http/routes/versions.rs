//! Published configs' history (docs/contract/versions.md): `GET /v1/config/versions`, `GET
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

use crate::app::state::AppState;
use crate::app::versions;
use crate::domain::cursor::Endpoint;
use crate::domain::wire::VersionItem;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::extract::{ApiManaged, Precondition, Sent};
use crate::http::forms::{ConfigAnswer, answer, version_answer};
use crate::http::page::KeysetPage;
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
    let page = KeysetPage::start(&app, &caller, Endpoint::ConfigVersions, &query)?;
    let rows = if caller.site.api_managed() {
        let before = page.after.as_ref().map(|&(version, _)| version);
        store_of(&app)?
            .list_versions(&caller.scope, before, page.read_limit())
            .await?
    } else {
        Vec::new()
    };
    let body = page.envelope(&rows, |v| (v.version, String::new()), VersionItem::of);
    Ok(answer(StatusCode::OK, body, None))
}

/// `GET /v1/config/versions/{n}`: one version with its config.
pub async fn version(
    caller: Caller,
    State(app): State<Arc<AppState>>,
    Path(n): Path<String>,
    _: NoQuery,
) -> Result<ConfigAnswer, ApiError> {
    let (site, scope) = (&caller.site, &caller.scope);
    let version = versions::version_named(app.store.as_ref(), site, scope, &n).await?;
    Ok(version_answer(StatusCode::OK, &version))
}

/// `POST /v1/config/versions`: 201 with the new version, its `ETag` and `Location`.
pub async fn publish(
    ApiManaged(caller): ApiManaged,
    Precondition(expected): Precondition,
    State(app): State<Arc<AppState>>,
    Sent(sent): Sent<versions::Sent>,
) -> Result<ConfigAnswer, ApiError> {
    let by = caller.key_hash.log_id();
    let (site, scope) = (&caller.site, &caller.scope);
    let store = app.store.as_ref();
    let by = versions::Publisher {
        key_id: &by,
        at_ms: app.clock.now_ms(),
    };
    let version =
        versions::publish_sent(store, site, scope, expected, &sent, by, &app.metrics).await?;
    let location = format!("{VERSIONS_PATH}/{}", version.version);
    Ok(version_answer(StatusCode::CREATED, &version).at(location))
}
