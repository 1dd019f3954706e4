//! The sites being served: each site's compiled config, swapped atomically on reload, and what
//! the admin listener reports about it (docs/contract/server.md "Config reload").
//!
//! A site's config file is polled for changes (modification time, size and inode). A changed
//! file is read and compiled off the request path; a valid config is swapped in with one atomic
//! pointer store, so each request evaluates against exactly one config, the old or the new. An
//! invalid file is refused: the last valid config keeps serving, and the refusal with every
//! diagnostic is logged, counted and shown on the admin listener's `/sites`.
//!
//! A site without a config file is managed through the API (docs/contract/versions.md): each mode serves the
//! latest version published to the store, installed by the instance that published it at once
//! and by every other instance at its next poll of the store ([`Sites::refresh_from_store`]).
//! Before the first version, a mode serves [`EMPTY_CONFIG`] as version 0: no nudge fires.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use nudge_rules::Engine;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::def::{ConfigSource, SiteDef};
use crate::domain::event::{Mode, Scope};
use crate::domain::retention::Retention;
use crate::metrics::{Metrics, ReloadLabels, SiteLabels};
use crate::sites::keys::{KeyHash, KeyKind};
use crate::store::{Store, StoreError};

/// What an API-managed mode serves before its first published version: no rules, so no nudge
/// fires (docs/DECISIONS.md, docs/contract/backtest.md and docs/contract/versions.md).
pub const EMPTY_CONFIG: &str = r#"{"version": 1}"#;

/// `version` of a mode with no version yet.
const NO_VERSION: i64 = -1;

/// What a site answers with right now.
pub enum Served {
    /// The config has not been read yet (the server is not ready).
    Loading,
    /// A valid config, compiled.
    Valid {
        /// The compiled config, shared by every request that loaded it.
        engine: Arc<Engine>,
        /// SHA-256 of the config text, hex.
        config_sha256: String,
        /// The config text.
        config_text: Arc<str>,
        /// `Nudge-Config-Version` (docs/contract/versions.md): the published version (`0` before the first), or
        /// the first 12 hex digits of the file's SHA-256 for a file-managed site.
        version: String,
    },
    /// The site never had a valid config: requests get 500 with this InvalidConfig body.
    NeverValid {
        /// `{"error":"InvalidConfig","message":...}`, every diagnostic in the message.
        body: String,
    },
}

/// One site being served.
pub struct Site {
    /// The site id.
    pub id: String,
    /// Where its config comes from.
    pub source: ConfigSource,
    /// Requests per rolling 60 s per key.
    pub rate_limit: u32,
    /// How long its sessions stay visible (docs/contract/read-api.md).
    pub retention: Retention,
    /// The browser origins its REST endpoints answer CORS for (docs/contract/backtest.md).
    pub allowed_origins: Vec<String>,
    key_count: usize,
    /// What it serves: kept across reloads of the sites file while the site keeps its id and
    /// its config's source ([`Sites::reloaded`]).
    config: Arc<SiteConfig>,
}

/// What a site serves, and its config's reload history.
struct SiteConfig {
    /// What each mode answers with, by [`slot`]; a file-managed site holds one config in both.
    served: [ArcSwap<Served>; 2],
    /// The published version each mode serves (API-managed sites), by [`slot`]; [`NO_VERSION`]
    /// until the store was read.
    versions: [AtomicI64; 2],
    status: Mutex<SiteStatus>,
}

impl SiteConfig {
    fn new() -> SiteConfig {
        SiteConfig {
            served: [
                ArcSwap::from_pointee(Served::Loading),
                ArcSwap::from_pointee(Served::Loading),
            ],
            versions: [AtomicI64::new(NO_VERSION), AtomicI64::new(NO_VERSION)],
            status: Mutex::new(SiteStatus::default()),
        }
    }
}

/// The index of a mode in [`Site`]'s arrays.
fn slot(mode: Mode) -> usize {
    match mode {
        Mode::Live => 0,
        Mode::Test => 1,
    }
}

#[derive(Default)]
struct SiteStatus {
    stamp: Option<FileStamp>,
    /// SHA-256 of the last text read, valid or not.
    last_seen_sha256: Option<String>,
    loaded_at_unix_s: Option<u64>,
    reloads_ok: u64,
    reloads_refused: u64,
    last_refusal: Option<Refusal>,
}

/// A refused config, as `/sites` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Refusal {
    /// When it was refused (Unix seconds).
    pub at_unix_s: u64,
    /// SHA-256 of the refused text (hex), or empty when the file could not be read.
    pub config_sha256: String,
    /// Every diagnostic, as `nudge-rules check` prints them: `path: message (line L, column C)`.
    pub errors: Vec<String>,
}

/// What identifies a version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

impl FileStamp {
    fn of(path: &std::path::Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            inode,
        })
    }
}

impl Site {
    fn new(def: SiteDef, config: Arc<SiteConfig>) -> Site {
        Site {
            id: def.id,
            source: def.source,
            rate_limit: def.rate_limit,
            retention: def.retention,
            allowed_origins: def.allowed_origins,
            key_count: def.keys.len() + def.site_keys.len(),
            config,
        }
    }

    /// Whether `def` reads its config from where this site does (the same file, the store).
    fn same_source(&self, def: &SiteDef) -> bool {
        match (&self.source, &def.source) {
            (ConfigSource::File(a), ConfigSource::File(b)) => a == b,
            (ConfigSource::Embedded(a), ConfigSource::Embedded(b)) => a == b,
            (ConfigSource::Store, ConfigSource::Store) => true,
            _ => false,
        }
    }

    /// What the site answers `mode`'s keys with now; the guard pins one config for the whole
    /// request, so a request is answered wholly by one version (docs/contract/versions.md).
    pub fn served(&self, mode: Mode) -> arc_swap::Guard<Arc<Served>> {
        self.served_slot(mode).load()
    }

    fn served_slot(&self, mode: Mode) -> &ArcSwap<Served> {
        let [live, test] = &self.config.served;
        match slot(mode) {
            0 => live,
            _ => test,
        }
    }

    fn version_slot(&self, mode: Mode) -> &AtomicI64 {
        let [live, test] = &self.config.versions;
        match slot(mode) {
            0 => live,
            _ => test,
        }
    }

    /// Whether the site's config is managed through the API (docs/contract/versions.md): it has no config file.
    pub fn api_managed(&self) -> bool {
        matches!(self.source, ConfigSource::Store)
    }

    /// The published version `mode` serves (API-managed sites): 0 before the first, `None`
    /// before the store was read.
    pub fn served_version(&self, mode: Mode) -> Option<i64> {
        Some(self.version_slot(mode).load(Ordering::SeqCst)).filter(|&v| v != NO_VERSION)
    }

    /// Serves `text` as published version `version` of `mode` (API-managed sites, docs/contract/versions.md),
    /// unless the mode already serves that version or a later one: the publishing instance and
    /// the store poll may both install it, in either order.
    ///
    /// # Errors
    ///
    /// The engine's error when `text` does not compile (a version published by an older
    /// engine that this one refuses): the mode keeps what it served (or, if it served nothing
    /// yet, answers 500 InvalidConfig), and the version counts as installed.
    pub fn install_version(
        &self,
        mode: Mode,
        version: i64,
        text: &str,
        metrics: &Metrics,
    ) -> Result<(), nudge_rules::Error> {
        // One installer at a time per site: the check and the swap are one step.
        let status = self.status();
        if self
            .served_version(mode)
            .is_some_and(|served| served >= version)
        {
            return Ok(());
        }
        let engine = match Engine::compile(text) {
            Ok(engine) => engine,
            Err(e) => {
                // Not retried at every poll: the version is what it is. A mode that served
                // nothing yet answers 500 InvalidConfig, as a file-managed site that never had
                // a valid config.
                self.version_slot(mode).store(version, Ordering::SeqCst);
                if matches!(**self.served(mode), Served::Loading) {
                    self.served_slot(mode)
                        .store(Arc::new(Served::NeverValid { body: e.to_body() }));
                }
                return Err(e);
            }
        };
        let sha = hex::encode(Sha256::digest(text.as_bytes()));
        self.served_slot(mode).store(Arc::new(Served::Valid {
            engine: Arc::new(engine),
            config_text: Arc::from(text),
            config_sha256: sha,
            version: version.to_string(),
        }));
        self.version_slot(mode).store(version, Ordering::SeqCst);
        drop(status);
        self.count_reload_ok(metrics);
        tracing::info!(site = %self.id, %mode, version, "config version installed");
        Ok(())
    }

    fn status(&self) -> MutexGuard<'_, SiteStatus> {
        self.config
            .status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Loads the config if it changed since the last look (always on the first call).
    fn refresh(&self, metrics: &Metrics) {
        let loaded_once = !matches!(**self.served(Mode::Live), Served::Loading);
        let text = match &self.source {
            ConfigSource::Store => return,
            ConfigSource::Embedded(text) => {
                if loaded_once {
                    return;
                }
                Ok((*text).to_owned())
            }
            ConfigSource::File(path) => {
                let stamp = FileStamp::of(path);
                {
                    let mut status = self.status();
                    if loaded_once && stamp == status.stamp {
                        return;
                    }
                    status.stamp = stamp;
                }
                std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))
            }
        };
        let text = match text {
            Ok(text) => text,
            Err(message) => {
                let body = serde_json::json!({
                    "error": "InvalidConfig",
                    "message": "the site's config file cannot be read; the server's log names the reason",
                })
                .to_string();
                self.refuse(metrics, String::new(), vec![message], body);
                return;
            }
        };
        let sha = hex::encode(Sha256::digest(text.as_bytes()));
        {
            // The same text as last time (a touched file, or a race between the stamp and the
            // read): already loaded or already refused and reported.
            let mut status = self.status();
            if loaded_once && status.last_seen_sha256.as_deref() == Some(sha.as_str()) {
                return;
            }
            status.last_seen_sha256 = Some(sha.clone());
        }
        match Engine::compile(&text) {
            Ok(engine) => {
                let rules = engine.config().rules.len();
                let served = Arc::new(Served::Valid {
                    engine: Arc::new(engine),
                    config_text: Arc::from(text.as_str()),
                    version: sha.get(..12).unwrap_or_default().to_owned(),
                    config_sha256: sha.clone(),
                });
                self.served_slot(Mode::Live).store(served.clone());
                self.served_slot(Mode::Test).store(served);
                {
                    let mut status = self.status();
                    status.loaded_at_unix_s = Some(unix_now_s());
                    status.reloads_ok += 1;
                }
                self.count_reload_ok(metrics);
                tracing::info!(
                    site = %self.id,
                    config_sha256 = %sha.get(..12).unwrap_or_default(),
                    rules,
                    "config loaded"
                );
            }
            Err(error) => {
                let errors = error
                    .diagnostics()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                self.refuse(metrics, sha, errors, error.to_body());
            }
        }
    }

    fn refuse(&self, metrics: &Metrics, config_sha256: String, errors: Vec<String>, body: String) {
        let never_valid = matches!(
            **self.served(Mode::Live),
            Served::Loading | Served::NeverValid { .. }
        );
        let listing = errors.join("\n  ");
        if never_valid {
            let served = Arc::new(Served::NeverValid { body });
            self.served_slot(Mode::Live).store(served.clone());
            self.served_slot(Mode::Test).store(served);
            metrics
                .site_config_valid
                .get_or_create(&self.labels())
                .set(0);
            tracing::error!(
                site = %self.id,
                errors = errors.len(),
                "config refused, and the site never had a valid one: its requests get 500 InvalidConfig\n  {listing}"
            );
        } else {
            tracing::warn!(
                site = %self.id,
                errors = errors.len(),
                "config refused; the last valid config keeps serving\n  {listing}"
            );
        }
        let mut status = self.status();
        status.reloads_refused += 1;
        status.last_refusal = Some(Refusal {
            at_unix_s: unix_now_s(),
            config_sha256,
            errors,
        });
        drop(status);
        metrics
            .reloads
            .get_or_create(&self.reload_labels("refused"))
            .inc();
    }

    /// A valid config is now served, from the sites file or the store: one more good reload,
    /// and the site's config is valid.
    fn count_reload_ok(&self, metrics: &Metrics) {
        metrics
            .reloads
            .get_or_create(&self.reload_labels("ok"))
            .inc();
        metrics
            .site_config_valid
            .get_or_create(&self.labels())
            .set(1);
    }

    fn labels(&self) -> SiteLabels {
        SiteLabels {
            site: self.id.clone(),
        }
    }

    fn reload_labels(&self, result: &'static str) -> ReloadLabels {
        ReloadLabels {
            site: self.id.clone(),
            result,
        }
    }

    fn report(&self) -> SiteReport {
        let status = self.status();
        let served = self.served(Mode::Live);
        let (state, config_sha256) = match &**served {
            Served::Loading => ("loading", None),
            Served::Valid { config_sha256, .. } => ("valid", Some(config_sha256.clone())),
            Served::NeverValid { .. } => ("never_valid", None),
        };
        let versions = self.api_managed().then(|| ServedVersions {
            live: self.served_version(Mode::Live),
            test: self.served_version(Mode::Test),
        });
        SiteReport {
            id: self.id.clone(),
            config: match &self.source {
                ConfigSource::File(path) => path.display().to_string(),
                ConfigSource::Embedded(_) => "(embedded examples/storefront.json)".to_owned(),
                ConfigSource::Store => "(managed through the API: published versions)".to_owned(),
            },
            versions,
            rate_limit: self.rate_limit,
            keys: self.key_count,
            state,
            config_sha256,
            loaded_at_unix_s: status.loaded_at_unix_s,
            reloads_ok: status.reloads_ok,
            reloads_refused: status.reloads_refused,
            last_refusal: status.last_refusal.clone(),
        }
    }
}

/// One site on the admin listener's `/sites`.
#[derive(Debug, Serialize)]
pub struct SiteReport {
    /// The site id.
    pub id: String,
    /// The config file.
    pub config: String,
    /// API-managed sites: the published version each mode serves (docs/contract/versions.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<ServedVersions>,
    /// Requests per rolling 60 s per key.
    pub rate_limit: u32,
    /// How many keys the site has (never the keys or their hashes).
    pub keys: usize,
    /// `loading`, `valid` or `never_valid`.
    pub state: &'static str,
    /// SHA-256 of the config being served (hex).
    pub config_sha256: Option<String>,
    /// When the serving config was loaded (Unix seconds).
    pub loaded_at_unix_s: Option<u64>,
    /// Configs swapped in, the first included.
    pub reloads_ok: u64,
    /// Configs refused.
    pub reloads_refused: u64,
    /// The latest refusal with every diagnostic.
    pub last_refusal: Option<Refusal>,
}

/// The published version each mode of an API-managed site serves; `None` before the store was
/// read, 0 before the first version.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ServedVersions {
    /// Live keys' version.
    pub live: Option<i64>,
    /// Test keys' version.
    pub test: Option<i64>,
}

/// Every site, and which site each key belongs to.
pub struct Sites {
    sites: Vec<Arc<Site>>,
    by_key: HashMap<KeyHash, usize>,
    by_site_key: HashMap<KeyHash, usize>,
}

impl Sites {
    /// The registry of `defs` (already checked: unique ids, no key in two sites). Nothing is
    /// loaded yet: every site is [`Served::Loading`].
    pub fn new(defs: Vec<SiteDef>) -> Sites {
        let mut by_key = HashMap::new();
        let mut by_site_key = HashMap::new();
        for (i, def) in defs.iter().enumerate() {
            for key in &def.keys {
                by_key.insert(*key, i);
            }
            for key in &def.site_keys {
                by_site_key.insert(*key, i);
            }
        }
        Sites {
            sites: defs
                .into_iter()
                .map(|def| Arc::new(Site::new(def, Arc::new(SiteConfig::new()))))
                .collect(),
            by_key,
            by_site_key,
        }
    }

    /// The registry of a reloaded sites file (docs/contract/server.md): `defs`' keys, rate limits, plans and
    /// origins, each site that keeps its id and its config's source keeping what it serves
    /// (its config is not read again unless it changed); a new site, or one whose config moved,
    /// is [`Served::Loading`] until [`Sites::refresh_all`].
    pub fn reloaded(&self, defs: Vec<SiteDef>) -> Sites {
        let configs: Vec<Arc<SiteConfig>> = defs
            .iter()
            .map(|def| {
                self.sites
                    .iter()
                    .find(|s| s.id == def.id && s.same_source(def))
                    .map_or_else(|| Arc::new(SiteConfig::new()), |s| s.config.clone())
            })
            .collect();
        let mut sites = Sites::new(defs);
        for (site, config) in sites.sites.iter_mut().zip(configs) {
            if let Some(site) = Arc::get_mut(site) {
                site.config = config;
            }
        }
        sites
    }

    /// The site a secret key belongs to.
    pub fn site_of_key(&self, key: &KeyHash) -> Option<&Arc<Site>> {
        self.site_of(KeyKind::Secret, key)
    }

    /// The site a key of `kind` belongs to: secret keys are looked up among the sites' `keys`,
    /// publishable keys among their `site_keys`.
    pub fn site_of(&self, kind: KeyKind, key: &KeyHash) -> Option<&Arc<Site>> {
        let table = match kind {
            KeyKind::Secret => &self.by_key,
            KeyKind::Publishable => &self.by_site_key,
        };
        table.get(key).and_then(|&i| self.sites.get(i))
    }

    /// Every site.
    pub fn iter(&self) -> impl Iterator<Item = &Site> {
        self.sites.iter().map(|s| &**s)
    }

    /// The site with this id.
    pub fn by_id(&self, id: &str) -> Option<&Site> {
        self.iter().find(|s| s.id == id)
    }

    /// Every key of every site, secret and publishable.
    pub fn keys(&self) -> impl Iterator<Item = KeyHash> + '_ {
        self.by_key.keys().chain(self.by_site_key.keys()).copied()
    }

    /// Loads every site whose config changed (every site on the first call). Blocking: reads
    /// files and compiles; call it off the async runtime.
    pub fn refresh_all(&self, metrics: &Metrics) {
        for site in &self.sites {
            site.refresh(metrics);
        }
    }

    /// Installs, for every API-managed site and mode, the latest version the store has (or
    /// [`EMPTY_CONFIG`] as version 0 when there is none) if it serves an older one: how a
    /// version published through another instance reaches this one (docs/contract/versions.md "Propagation").
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be read; what was installed before stays.
    pub async fn refresh_from_store(
        &self,
        store: &Store,
        metrics: &Metrics,
    ) -> Result<(), StoreError> {
        if !self.iter().any(Site::api_managed) {
            return Ok(());
        }
        let latest = store.latest_versions().await?;
        for site in self.iter().filter(|s| s.api_managed()) {
            for mode in [Mode::Live, Mode::Test] {
                let want = latest
                    .iter()
                    .find(|(id, m, _)| *id == site.id && m == mode.as_str())
                    .map_or(0, |(_, _, version)| *version);
                if site.served_version(mode).is_some_and(|v| v >= want) {
                    continue;
                }
                let scope = Scope {
                    site: site.id.clone(),
                    mode,
                };
                let text = match want {
                    0 => None,
                    n => store
                        .config_version(&scope, Some(n))
                        .await?
                        .and_then(|v| v.config),
                };
                let text = text.as_deref().unwrap_or(EMPTY_CONFIG);
                if let Err(e) = site.install_version(mode, want, text, metrics) {
                    tracing::error!(site = %site.id, %mode, version = want, error = %e, "a published config version does not compile; the mode keeps its previous version");
                }
            }
        }
        Ok(())
    }

    /// Whether every site's config was read once (valid or not): the readiness of docs/contract/server.md.
    pub fn all_loaded(&self) -> bool {
        self.pending().is_empty()
    }

    /// The ids of the sites not loaded yet.
    pub fn pending(&self) -> Vec<String> {
        self.sites
            .iter()
            .filter(|s| {
                [Mode::Live, Mode::Test]
                    .into_iter()
                    .any(|mode| matches!(**s.served(mode), Served::Loading))
            })
            .map(|s| s.id.clone())
            .collect()
    }

    /// What `/sites` shows.
    pub fn reports(&self) -> Vec<SiteReport> {
        self.iter().map(Site::report).collect()
    }
}

fn unix_now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
