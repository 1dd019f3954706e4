//! Publishing a config version (docs/contract/versions.md), one path for `POST /v1/config/versions` and `--demo`:
//! the version's SHA-256 and time are set here, the `If-Match` check and the insert are the
//! store's one transaction. Also the rules of a publish the API receives ([`publish_sent`]: the
//! message, `restores`, the config, the scenarios, then the store's compare-and-publish and
//! the install), of a config the caller sent (a publish's or a backtest's draft,
//! [`compile_sent`]) and of the live engine a site serves ([`live_engine`]).

use std::borrow::Cow;
use std::sync::Arc;

use nudge_rules::Engine;
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::scenarios::ScenarioFile;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::app::runtime_config::NoConfig;
use crate::domain::event::{Mode, Scope};
use crate::domain::time::format_ms;
use crate::domain::wire::ConfigVersion;
use crate::metrics::Metrics;
use crate::sites::registry::{Served, Site};
use crate::store::{NewVersion, Published, Store, StoreError};

/// The longest publish message, in characters (docs/contract/versions.md).
pub const MAX_MESSAGE_CHARS: usize = 500;

/// `GET /v1/config`, which the refusals of a publish point to.
const CONFIG_PATH: &str = "/v1/config";

/// Why a config the caller sent, or its publish, was refused.
#[derive(Debug)]
pub enum Refusal {
    /// A field of the request, named with its value (400 InvalidRequest).
    Invalid(String),
    /// The config or scenario file sent, with the engine's diagnostics (400).
    Sent(nudge_rules::Error),
    /// Scenarios that fail (422): the message as `nudge-rules test` prints them, and each
    /// failure serialized.
    ScenariosFailed {
        /// The message.
        message: String,
        /// Each failed scenario.
        failures: serde_json::Value,
    },
    /// Another version was published meanwhile, or none yet (412).
    Stale(String),
    /// No such version (404), in words.
    NotFound(String),
    /// The server has no store (503).
    NoStore,
    /// The store did not answer (503).
    Store(StoreError),
}

/// A publish as the API received it (`POST /v1/config/versions`'s body, read as it is).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sent {
    /// The config: an object as written in the body, or a string holding its text.
    pub config: Box<RawValue>,
    /// The publisher's message, at most [`MAX_MESSAGE_CHARS`] characters.
    pub message: Option<String>,
    /// A scenario file the config must pass.
    pub scenarios: Option<Box<RawValue>>,
    /// The earlier version this one publishes again (1 or more).
    pub restores: Option<i64>,
}

/// "site "shop", live mode".
pub fn scope_words(scope: &Scope) -> String {
    format!("site {:?}, {} mode", scope.site, scope.mode)
}

/// The version `n` names in `site`'s history in `scope` (`GET /v1/config/versions/{n}`). The
/// store is asked only for a number of an API-managed site.
///
/// # Errors
///
/// [`Refusal::NotFound`] when `n` is not a version number (digits only, 1 or more, no leading
/// zero or sign), when the site's config is managed by its file (an empty history), or when
/// the store has no such version; [`Refusal::NoStore`] and [`Refusal::Store`] (503).
pub async fn version_named(
    store: Option<&Store>,
    site: &Site,
    scope: &Scope,
    n: &str,
) -> Result<ConfigVersion, Refusal> {
    let number = n
        .parse::<i64>()
        .ok()
        .filter(|&v| v >= 1 && !n.starts_with('+') && !n.starts_with('0'));
    let found = match number {
        Some(number) if site.api_managed() => store
            .ok_or(Refusal::NoStore)?
            .config_version(scope, Some(number))
            .await
            .map_err(Refusal::Store)?,
        _ => None,
    };
    found.ok_or_else(|| {
        let shown: String = n.chars().take(40).collect();
        let scope = scope_words(scope);
        Refusal::NotFound(format!("no config version {shown:?} for {scope}"))
    })
}

/// The live engine of `site`'s `mode`, with its `Nudge-Config-Version`.
///
/// # Errors
///
/// [`NoConfig`] when the site never had a valid config, or while it loads.
pub fn live_engine(site: &Site, mode: Mode) -> Result<(Arc<Engine>, String), NoConfig> {
    match &**site.served(mode) {
        Served::Valid {
            engine, version, ..
        } => Ok((engine.clone(), version.clone())),
        Served::NeverValid { body } => Err(NoConfig::NeverValid(body.clone())),
        Served::Loading => Err(NoConfig::Loading),
    }
}

/// The config a file-managed `site` serves in `mode`: its SHA-256 and text.
///
/// # Errors
///
/// [`NoConfig`] when the site never had a valid config, or while it loads.
pub fn file_config(site: &Site, mode: Mode) -> Result<(String, Arc<str>), NoConfig> {
    match &**site.served(mode) {
        Served::Valid {
            config_sha256,
            config_text,
            ..
        } => Ok((config_sha256.clone(), config_text.clone())),
        Served::NeverValid { body } => Err(NoConfig::NeverValid(body.clone())),
        Served::Loading => Err(NoConfig::Loading),
    }
}

/// The text of a `config` field the caller sent: a config object as written in the body, or
/// a string holding the config text (its lines and columns are then the editor's own).
fn sent_text(raw: &RawValue) -> Result<Cow<'_, str>, Refusal> {
    let text = raw.get();
    if text.starts_with('"') {
        serde_json::from_str::<String>(text)
            .map(Cow::Owned)
            .map_err(|e| Refusal::Invalid(format!("config: {e}")))
    } else {
        Ok(Cow::Borrowed(text))
    }
}

/// Compiles a config the caller sent; returns the engine and its text.
///
/// # Errors
///
/// [`Refusal::Sent`] with every diagnostic.
pub fn compile_sent(raw: &RawValue) -> Result<(Engine, String), Refusal> {
    let text = sent_text(raw)?;
    let engine = Engine::compile(&text).map_err(Refusal::Sent)?;
    Ok((engine, text.into_owned()))
}

/// Checks a publish in the order of docs/contract/versions.md (the message, `restores`, the config with every
/// diagnostic, the scenarios), then publishes it as the next version of `site`'s mode when
/// `expected` is its latest (`None`: when it has none yet), and installs it on this instance.
/// `by` names the publishing key and the time (the server clock's now).
///
/// # Errors
///
/// [`Refusal`].
pub async fn publish_sent(
    store: Option<&Store>,
    site: &Site,
    scope: &Scope,
    expected: Option<i64>,
    sent: &Sent,
    by: Publisher<'_>,
    metrics: &Metrics,
) -> Result<ConfigVersion, Refusal> {
    if let Some(message) = &sent.message {
        let chars = message.chars().count();
        if chars > MAX_MESSAGE_CHARS {
            return Err(Refusal::Invalid(format!(
                "message has {chars} characters; at most {MAX_MESSAGE_CHARS} are allowed"
            )));
        }
    }
    if let Some(n) = sent.restores.filter(|&n| n < 1) {
        return Err(Refusal::Invalid(format!(
            "restores must be a version number, 1 or more, got {n}"
        )));
    }
    let (engine, text) = compile_sent(&sent.config)?;
    if let Some(raw) = &sent.scenarios {
        check_scenarios(&engine, raw)?;
    }
    let publish = Publish {
        config: &text,
        by,
        message: sent.message.as_deref(),
        restores: sent.restores,
    };
    let store = store.ok_or(Refusal::NoStore)?;
    let version = match self::publish(store, scope, expected, &publish)
        .await
        .map_err(Refusal::Store)?
    {
        Published::Version(version) => version,
        Published::NoSuchVersion(n) => {
            return Err(Refusal::Invalid(format!(
                "restores names version {n}, which {} does not have",
                scope_words(scope)
            )));
        }
        Published::Stale { current } => {
            return Err(Refusal::Stale(stale_words(
                scope,
                expected,
                current.as_ref(),
                by.key_id,
            )));
        }
    };
    if let Err(e) = site.install_version(scope.mode, version.version, &text, metrics) {
        tracing::error!(error = %e, "a config that compiled did not install");
    }
    tracing::info!(site = %site.id, mode = %scope.mode, version = version.version, by = %by.key_id, "config version published");
    Ok(version)
}

/// Runs the scenarios sent with a publish against its config.
///
/// # Errors
///
/// [`Refusal::Sent`] for a scenario file that does not read, [`Refusal::ScenariosFailed`]
/// unless all pass.
fn check_scenarios(engine: &Engine, raw: &RawValue) -> Result<(), Refusal> {
    let file = sent_text(raw).and_then(|t| ScenarioFile::from_text(&t).map_err(Refusal::Sent))?;
    let report = ConfigAsCode::new(engine).test(&file);
    if report.failed == 0 {
        return Ok(());
    }
    let failed: Vec<_> = report.results.iter().filter(|r| !r.passed).collect();
    let mut message = format!(
        "{} of {} scenarios fail; nothing was published",
        report.failed,
        report.results.len()
    );
    for r in &failed {
        message.push_str(&format!("\nFAIL {}", r.name));
        for line in r.failure_text(engine).lines() {
            message.push_str(&format!("\n  {line}"));
        }
    }
    Err(Refusal::ScenariosFailed {
        message,
        failures: serde_json::to_value(&failed).unwrap_or_default(),
    })
}

/// The 412's message: which version is the latest, who published it (its key's hash prefix,
/// and whether that is the key of this request: a publish retried, two tabs of one editor).
fn stale_words(
    scope: &Scope,
    expected: Option<i64>,
    current: Option<&ConfigVersion>,
    published_by: &str,
) -> String {
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
    match (expected, current) {
        (_, None) => format!(
            "{} has no version yet; publish the first with If-None-Match: * instead of If-Match",
            scope_words(scope)
        ),
        (None, Some(current)) => format!(
            "{} already has versions: {}; read it with GET {CONFIG_PATH}, and publish with If-Match: \"v{}\"",
            scope_words(scope),
            current_words(current),
            current.version
        ),
        (Some(expected), Some(current)) => format!(
            "v{expected} is not the latest version of {}: {}; read it with GET {CONFIG_PATH}, merge your change, and send If-Match: \"v{}\"",
            scope_words(scope),
            current_words(current),
            current.version
        ),
    }
}

/// A config to publish, already checked (it compiled; its scenarios passed).
#[derive(Clone, Copy, Debug)]
pub struct Publish<'a> {
    /// The config text, stored as sent.
    pub config: &'a str,
    /// Who publishes it, and when.
    pub by: Publisher<'a>,
    /// The publisher's message.
    pub message: Option<&'a str>,
    /// The earlier version this one publishes again.
    pub restores: Option<i64>,
}

/// Who publishes a version, and when.
#[derive(Clone, Copy, Debug)]
pub struct Publisher<'a> {
    /// The first 8 hex digits of the publishing key's SHA-256.
    pub key_id: &'a str,
    /// When, Unix ms (the server clock's now).
    pub at_ms: i64,
}

/// Publishes `publish` as the next version of `scope` when `expected` is its latest version
/// (`None`: when it has none yet), at `publish.by.at_ms`.
///
/// # Errors
///
/// [`StoreError`] when the store does not answer.
pub async fn publish(
    store: &Store,
    scope: &Scope,
    expected: Option<i64>,
    publish: &Publish<'_>,
) -> Result<Published, StoreError> {
    let sha256 = hex::encode(Sha256::digest(publish.config.as_bytes()));
    let new = NewVersion {
        published_at_ms: publish.by.at_ms,
        published_by: publish.by.key_id,
        message: publish.message,
        sha256: &sha256,
        restores: publish.restores,
        config: publish.config,
    };
    store.publish(scope, expected, &new).await
}
