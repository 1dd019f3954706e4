//! Published configs (SPEC 13): `GET /v1/config`, `POST /v1/config/versions`,
//! `GET /v1/config/versions` and `GET /v1/config/versions/{n}`.
//!
//! A site whose sites-file entry names a `config` file is managed by that file: its writes are
//! 409 ConfigManagedByFile, `GET /v1/config` shows the file's config (`managed_by: "file"`,
//! no version), its history is empty. Any other site is managed through the API, one history
//! per mode, kept in the store. A publish is checked in this order: the precondition headers
//! (428, 400), the body (400), the config (400 InvalidConfig with every diagnostic), the
//! scenarios (400 InvalidScenarios, 422 ScenariosFailed), then the store's compare-and-publish
//! (412 when another version was published meanwhile).

use std::borrow::Cow;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use nudge_rules::Engine;
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::scenarios::ScenarioFile;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::app::state::AppState;
use crate::app::versions::{self, Publish};
use crate::domain::cursor::{CursorState, Endpoint, Filters};
use crate::domain::time::format_ms;
use crate::domain::wire::{ConfigVersion, VersionItem};
use crate::http::auth::Caller;
use crate::http::body::{read_json_body, refuse_nulls};
use crate::http::error::{ApiError, json};
use crate::http::page::{DataEnvelope, to_body};
use crate::http::pipeline::{ApiOptions, serve, store_of, unavailable};
use crate::http::query::Params;
use crate::sites::def::ConfigSource;
use crate::sites::registry::{Served, Site};
use crate::store::Published;

/// `GET /v1/config`.
pub const CONFIG_PATH: &str = "/v1/config";
/// `GET` and `POST /v1/config/versions`.
pub const VERSIONS_PATH: &str = "/v1/config/versions";
/// `GET /v1/config/versions/{n}` (axum's form).
pub const VERSION_PATH: &str = "/v1/config/versions/{n}";

/// The largest publish body: 2 MiB, as a backtest's (a config is at most 1 MiB; the rest is
/// for scenarios and the message).
pub const MAX_PUBLISH_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The longest publish message, in characters (SPEC 13).
pub const MAX_MESSAGE_CHARS: usize = 500;

/// `Cache-Control` of the config reads: kept, but checked again each time (the `ETag` changes
/// with every publish).
const CONFIG_CACHE_CONTROL: &str = "private, no-cache";

/// The live engine of the caller's site and mode, with its `Nudge-Config-Version`.
///
/// # Errors
///
/// 500 InvalidConfig when the site never had a valid config; 503 while it loads.
pub(crate) fn live_engine(
    site: &Site,
    mode: crate::domain::event::Mode,
) -> Result<(Arc<Engine>, String), ApiError> {
    match &**site.served(mode) {
        Served::Valid {
            engine, version, ..
        } => Ok((engine.clone(), version.clone())),
        Served::NeverValid { body } => Err(ApiError::InvalidConfig(body.clone())),
        Served::Loading => Err(ApiError::Unavailable(
            crate::app::state::Unavailable::Loading,
        )),
    }
}

/// The text of a `config` field the caller sent: a config object as written in the body, or
/// a string holding the config text (its lines and columns are then the editor's own).
fn sent_text(raw: &RawValue) -> Result<Cow<'_, str>, ApiError> {
    let text = raw.get();
    if text.starts_with('"') {
        serde_json::from_str::<String>(text)
            .map(Cow::Owned)
            .map_err(|e| ApiError::InvalidRequest(format!("config: {e}")))
    } else {
        Ok(Cow::Borrowed(text))
    }
}

/// Compiles a config the caller sent; returns the engine and its text.
///
/// # Errors
///
/// 400 InvalidConfig with every diagnostic.
pub(crate) fn compile_sent(raw: &RawValue) -> Result<(Engine, String), ApiError> {
    let text = sent_text(raw)?;
    let engine = Engine::compile(&text).map_err(ApiError::Sent)?;
    Ok((engine, text.into_owned()))
}

/// `GET /v1/config`'s data: a version with `managed_by`.
#[derive(Serialize)]
struct LiveConfig<'a> {
    managed_by: &'static str,
    version: Option<i64>,
    published_at: Option<String>,
    message: Option<&'a str>,
    published_by: Option<&'a str>,
    sha256: &'a str,
    restores: Option<i64>,
    config: &'a RawValue,
}

fn etag(version: i64) -> HeaderValue {
    HeaderValue::from_str(&format!("\"v{version}\"")).unwrap_or(HeaderValue::from_static("\"v0\""))
}

fn config_response(status: StatusCode, body: String, version: Option<i64>) -> Response {
    let mut response = json(status, body);
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CONFIG_CACHE_CONTROL),
    );
    if let Some(version) = version {
        headers.insert(header::ETAG, etag(version));
    }
    response
}

fn scope_words(caller: &Caller) -> String {
    format!("site {:?}, {} mode", caller.site.id, caller.scope.mode)
}

/// `GET /v1/config`: the config the caller's keys are served.
pub async fn current(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        Params::parse(request.uri().query(), &[])?;
        if let ConfigSource::File(_) | ConfigSource::Embedded(_) = caller.site.source {
            let served = caller.site.served(caller.scope.mode);
            let Served::Valid { config_sha256, config_text, .. } = &**served else {
                return Err(live_engine(&caller.site, caller.scope.mode).err().unwrap_or(ApiError::StoreUnavailable));
            };
            let config = serde_json::from_str::<&RawValue>(config_text)
                .map_err(|e| ApiError::InvalidRequest(format!("the config file is not JSON: {e}")))?;
            let data = LiveConfig {
                managed_by: "file",
                version: None,
                published_at: None,
                message: None,
                published_by: None,
                sha256: config_sha256,
                restores: None,
                config,
            };
            return Ok(config_response(StatusCode::OK, to_body(&DataEnvelope { data }), None));
        }
        let store = store_of(app)?;
        let version = store
            .config_version(&caller.scope, None)
            .await
            .map_err(|e| unavailable(app, &e))?
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "no config version published yet for {}; publish one with POST {VERSIONS_PATH} and If-None-Match: *",
                    scope_words(&caller)
                ))
            })?;
        let item = VersionItem::of(&version);
        let data = LiveConfig {
            managed_by: "api",
            version: Some(item.version),
            published_at: Some(item.published_at),
            message: item.message,
            published_by: Some(item.published_by),
            sha256: item.sha256,
            restores: item.restores,
            config: item.config.ok_or(ApiError::StoreUnavailable)?,
        };
        Ok(config_response(StatusCode::OK, to_body(&DataEnvelope { data }), Some(version.version)))
    })
    .await
}

/// `GET` (list) and `POST` (publish) on `/v1/config/versions`.
pub async fn versions(
    State(app): State<Arc<AppState>>,
    Extension(options): Extension<ApiOptions>,
    request: Request,
) -> Response {
    let app = &*app;
    if request.method() == Method::POST {
        return serve(app, request, |caller, request| async move {
            publish(app, &caller, request, &options).await
        })
        .await;
    }
    serve(app, request, |caller, request| async move {
        let params = Params::parse(request.uri().query(), &["limit", "cursor"])?;
        let limit = params.limit()?;
        let before = match params.get("cursor") {
            None => None,
            Some(cursor) => {
                let state = app
                    .cursor_key
                    .verify(Endpoint::ConfigVersions, &caller.scope, cursor)
                    .map_err(|why| {
                        ApiError::InvalidCursor(format!(
                            "cursor: {why}; start again without a cursor"
                        ))
                    })?;
                Some(state.last_at_ms)
            }
        };
        let mut rows = if caller.site.api_managed() {
            store_of(app)?
                .list_versions(&caller.scope, before, limit + 1)
                .await
                .map_err(|e| unavailable(app, &e))?
        } else {
            Vec::new()
        };
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_cursor = match rows.last() {
            Some(last) if has_more => Some(app.cursor_key.sign(
                Endpoint::ConfigVersions,
                &caller.scope,
                &CursorState {
                    from_ms: 0,
                    to_ms: 0,
                    filters: Filters::default(),
                    last_at_ms: last.version,
                    last_id: String::new(),
                    walk_rev: 0,
                },
            )),
            _ => None,
        };
        #[derive(Serialize)]
        struct Page<'a> {
            data: Vec<VersionItem<'a>>,
            next_cursor: Option<String>,
            has_more: bool,
        }
        let body = to_body(&Page {
            data: rows.iter().map(VersionItem::of).collect(),
            next_cursor,
            has_more,
        });
        Ok(config_response(StatusCode::OK, body, None))
    })
    .await
}

/// `GET /v1/config/versions/{n}`: one version with its config.
pub async fn version(
    State(app): State<Arc<AppState>>,
    Path(n): Path<String>,
    request: Request,
) -> Response {
    let app = &*app;
    serve(app, request, |caller, request| async move {
        Params::parse(request.uri().query(), &[])?;
        let shown: String = n.chars().take(40).collect();
        let not_found = || {
            ApiError::NotFound(format!(
                "no config version {shown:?} for {}",
                scope_words(&caller)
            ))
        };
        let number = n
            .parse::<i64>()
            .ok()
            .filter(|&v| v >= 1 && !n.starts_with('+') && !n.starts_with('0'))
            .ok_or_else(not_found)?;
        if !caller.site.api_managed() {
            return Err(not_found());
        }
        let version = store_of(app)?
            .config_version(&caller.scope, Some(number))
            .await
            .map_err(|e| unavailable(app, &e))?
            .ok_or_else(not_found)?;
        let body = to_body(&DataEnvelope {
            data: VersionItem::of(&version),
        });
        Ok(config_response(StatusCode::OK, body, Some(version.version)))
    })
    .await
}

/// The publish body (SPEC 13).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PublishRequest<'a> {
    #[serde(borrow)]
    config: &'a RawValue,
    message: Option<String>,
    #[serde(borrow)]
    scenarios: Option<&'a RawValue>,
    restores: Option<i64>,
}

/// Which version a publish expects to replace: `If-Match: "v<n>"` or `If-None-Match: *`.
///
/// # Errors
///
/// 428 without either; 400 for both, or a malformed one.
fn precondition(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
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
                .filter(|n| !n.starts_with('0') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
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

async fn publish(
    app: &AppState,
    caller: &Caller,
    request: Request,
    options: &ApiOptions,
) -> Result<Response, ApiError> {
    if !caller.site.api_managed() {
        return Err(ApiError::ConfigManagedByFile(format!(
            "site {:?} is managed by its config file on the server; change that file (it is reloaded within seconds), or remove `config` from the site's entry to manage it through the API",
            caller.site.id
        )));
    }
    let expected = precondition(request.headers())?;
    let body = read_json_body(request, MAX_PUBLISH_BODY_BYTES, options).await?;
    refuse_nulls(&body)?;
    let sent: PublishRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::InvalidRequest(format!(
            "the request body must be {{\"config\": CONFIG, \"message\"?: TEXT, \"scenarios\"?: SCENARIO FILE, \"restores\"?: VERSION}}: {e}"
        ))
    })?;
    if let Some(message) = &sent.message {
        let chars = message.chars().count();
        if chars > MAX_MESSAGE_CHARS {
            return Err(ApiError::InvalidRequest(format!(
                "message has {chars} characters; at most {MAX_MESSAGE_CHARS} are allowed"
            )));
        }
    }
    if let Some(n) = sent.restores.filter(|&n| n < 1) {
        return Err(ApiError::InvalidRequest(format!(
            "restores must be a version number, 1 or more, got {n}"
        )));
    }
    let (engine, text) = compile_sent(sent.config)?;
    if let Some(raw) = sent.scenarios {
        let file =
            sent_text(raw).and_then(|t| ScenarioFile::from_text(&t).map_err(ApiError::Sent))?;
        let report = ConfigAsCode::new(&engine).test(&file);
        if report.failed > 0 {
            let failed: Vec<_> = report.results.iter().filter(|r| !r.passed).collect();
            let mut message = format!(
                "{} of {} scenarios fail; nothing was published",
                report.failed,
                report.results.len()
            );
            for r in &failed {
                message.push_str(&format!("\nFAIL {}", r.name));
                for line in r.failure_text(&engine).lines() {
                    message.push_str(&format!("\n  {line}"));
                }
            }
            return Err(ApiError::ScenariosFailed {
                message,
                failures: serde_json::to_value(&failed).unwrap_or_default(),
            });
        }
    }
    let published_by = caller.key_hash.log_id();
    let publish = Publish {
        config: &text,
        published_by: &published_by,
        message: sent.message.as_deref(),
        restores: sent.restores,
    };
    let store = store_of(app)?;
    let published = versions::publish(store, &caller.scope, expected, &publish)
        .await
        .map_err(|e| unavailable(app, &e))?;
    let version = match published {
        Published::Version(version) => version,
        Published::NoSuchVersion(n) => {
            return Err(ApiError::InvalidRequest(format!(
                "restores names version {n}, which {} does not have",
                scope_words(caller)
            )));
        }
        Published::Stale { current } => {
            // Who published the current version: its key's hash prefix, and whether that is
            // the key of this request (a publish retried, two tabs of one editor).
            let current_words = |v: &ConfigVersion| {
                let this_key = if v.published_by == published_by {
                    ", this key,"
                } else {
                    ""
                };
                format!(
                    "the current version is v{} (published by {}{this_key} at {})",
                    v.version,
                    v.published_by,
                    format_ms(v.published_at_ms)
                )
            };
            let message = match (expected, current) {
                (_, None) => format!(
                    "{} has no version yet; publish the first with If-None-Match: * instead of If-Match",
                    scope_words(caller)
                ),
                (None, Some(current)) => format!(
                    "{} already has versions: {}; read it with GET {CONFIG_PATH}, and publish with If-Match: \"v{}\"",
                    scope_words(caller),
                    current_words(&current),
                    current.version
                ),
                (Some(expected), Some(current)) => format!(
                    "v{expected} is not the latest version of {}: {}; read it with GET {CONFIG_PATH}, merge your change, and send If-Match: \"v{}\"",
                    scope_words(caller),
                    current_words(&current),
                    current.version
                ),
            };
            return Err(ApiError::PreconditionFailed(message));
        }
    };
    if let Err(e) =
        caller
            .site
            .install_version(caller.scope.mode, version.version, &text, &app.metrics)
    {
        tracing::error!(error = %e, "a config that compiled did not install");
    }
    tracing::info!(site = %caller.site.id, mode = %caller.scope.mode, version = version.version, by = %published_by, "config version published");
    let body = to_body(&DataEnvelope {
        data: VersionItem::of(&version),
    });
    let mut response = config_response(StatusCode::CREATED, body, Some(version.version));
    if let Ok(location) = HeaderValue::from_str(&format!("{VERSIONS_PATH}/{}", version.version)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

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
