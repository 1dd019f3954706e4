//! The sites being served: each site's compiled config, swapped atomically on reload, and what
//! the admin listener reports about it (SPEC 7 "Config reload").
//!
//! A site's config file is polled for changes (modification time, size and inode). A changed
//! file is read and compiled off the request path; a valid config is swapped in with one atomic
//! pointer store, so each request evaluates against exactly one config, the old or the new. An
//! invalid file is refused: the last valid config keeps serving, and the refusal with every
//! diagnostic is logged, counted and shown on the admin listener's `/sites`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use nudge_rules::Engine;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::keys::{KeyHash, KeyKind};
use crate::metrics::{Metrics, ReloadLabels, SiteLabels};
use crate::model::retention::Retention;
use crate::sites::{ConfigSource, SiteDef};

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
    /// How long its sessions stay visible (SPEC 9).
    pub retention: Retention,
    key_count: usize,
    served: ArcSwap<Served>,
    status: Mutex<SiteStatus>,
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
    fn new(def: SiteDef) -> Site {
        Site {
            id: def.id,
            source: def.source,
            rate_limit: def.rate_limit,
            retention: def.retention,
            key_count: def.keys.len() + def.site_keys.len(),
            served: ArcSwap::from_pointee(Served::Loading),
            status: Mutex::new(SiteStatus::default()),
        }
    }

    /// What the site answers with now; the guard pins one config for the whole request.
    pub fn served(&self) -> arc_swap::Guard<Arc<Served>> {
        self.served.load()
    }

    fn status(&self) -> MutexGuard<'_, SiteStatus> {
        self.status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Loads the config if it changed since the last look (always on the first call).
    fn refresh(&self, metrics: &Metrics) {
        let loaded_once = !matches!(**self.served.load(), Served::Loading);
        let text = match &self.source {
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
                self.served.store(Arc::new(Served::Valid {
                    engine: Arc::new(engine),
                    config_sha256: sha.clone(),
                }));
                {
                    let mut status = self.status();
                    status.loaded_at_unix_s = Some(unix_now_s());
                    status.reloads_ok += 1;
                }
                metrics
                    .reloads
                    .get_or_create(&self.reload_labels("ok"))
                    .inc();
                metrics
                    .site_config_valid
                    .get_or_create(&self.labels())
                    .set(1);
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
            **self.served.load(),
            Served::Loading | Served::NeverValid { .. }
        );
        let listing = errors.join("\n  ");
        if never_valid {
            self.served.store(Arc::new(Served::NeverValid { body }));
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
        let served = self.served.load();
        let (state, config_sha256) = match &**served {
            Served::Loading => ("loading", None),
            Served::Valid { config_sha256, .. } => ("valid", Some(config_sha256.clone())),
            Served::NeverValid { .. } => ("never_valid", None),
        };
        SiteReport {
            id: self.id.clone(),
            config: match &self.source {
                ConfigSource::File(path) => path.display().to_string(),
                ConfigSource::Embedded(_) => "(embedded examples/storefront.json)".to_owned(),
            },
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

/// Every site, and which site each key belongs to.
pub struct Sites {
    sites: Vec<Site>,
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
            sites: defs.into_iter().map(Site::new).collect(),
            by_key,
            by_site_key,
        }
    }

    /// The site a secret key belongs to.
    pub fn site_of_key(&self, key: &KeyHash) -> Option<&Site> {
        self.site_of(KeyKind::Secret, key)
    }

    /// The site a key of `kind` belongs to: secret keys are looked up among the sites' `keys`,
    /// publishable keys among their `site_keys`.
    pub fn site_of(&self, kind: KeyKind, key: &KeyHash) -> Option<&Site> {
        let table = match kind {
            KeyKind::Secret => &self.by_key,
            KeyKind::Publishable => &self.by_site_key,
        };
        table.get(key).and_then(|&i| self.sites.get(i))
    }

    /// Every site.
    pub fn iter(&self) -> impl Iterator<Item = &Site> {
        self.sites.iter()
    }

    /// The site with this id.
    pub fn by_id(&self, id: &str) -> Option<&Site> {
        self.sites.iter().find(|s| s.id == id)
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

    /// Whether every site's config was read once (valid or not): the readiness of SPEC 7.
    pub fn all_loaded(&self) -> bool {
        self.sites
            .iter()
            .all(|s| !matches!(**s.served.load(), Served::Loading))
    }

    /// The ids of the sites not loaded yet.
    pub fn pending(&self) -> Vec<String> {
        self.sites
            .iter()
            .filter(|s| matches!(**s.served.load(), Served::Loading))
            .map(|s| s.id.clone())
            .collect()
    }

    /// What `/sites` shows.
    pub fn reports(&self) -> Vec<SiteReport> {
        self.sites.iter().map(Site::report).collect()
    }
}

fn unix_now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
