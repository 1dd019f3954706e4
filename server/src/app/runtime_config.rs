//! The config storefront pages fetch (docs/contract/storefront.md, `GET /v1/runtime/config`), made once per version
//! and kept in memory: the `{"data": {"version", "config"}}` body, its gzip form and its entity
//! tag. The HTTP side (the key, CORS, `If-None-Match`, `Accept-Encoding`) is
//! `http/routes/runtime.rs`.
//!
//! The version is an API-managed site's published version (docs/contract/versions.md; `0` before the first, whose
//! config has no rules) or a file-managed site's SHA-256 prefix (12 hex digits), the same
//! `Nudge-Config-Version` a preview answers with; a new version is made at the first request
//! after the instance serves it (the store poll, within 2 s). The entity tag is weak: the
//! version and the config's SHA-256 prefix.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::domain::event::Mode;
use crate::sites::registry::{Served, Site};

/// Bodies at least this long are worth compressing; smaller ones go as they are.
const GZIP_MIN_BYTES: usize = 256;

/// The answers already made, one per site and mode, each for one version.
#[derive(Default)]
pub struct RuntimeCache {
    entries: Mutex<HashMap<(String, Mode), Arc<Prepared>>>,
}

/// One version's answer.
pub struct Prepared {
    /// The served version it was made from (`Nudge-Config-Version`).
    pub version: String,
    /// SHA-256 of the config text, hex.
    sha256: String,
    /// The opaque part of the weak entity tag (`W/"<tag>"`), compared with `If-None-Match`.
    pub tag: String,
    /// The JSON body.
    pub body: Arc<[u8]>,
    /// The body gzip-compressed, when that makes it smaller.
    pub gzip: Option<Arc<[u8]>>,
}

/// Why a site's mode has no config to give.
#[derive(Debug)]
pub enum NoConfig {
    /// The site never had a valid config: the engine's error body (500 InvalidConfig).
    NeverValid(String),
    /// The site's first config is still loading (503).
    Loading,
    /// The served config text is not JSON (it compiled, so never in practice; 500).
    NotJson(String),
}

/// `{"data": {"version", "config"}}`.
#[derive(Serialize)]
struct Envelope<'a> {
    data: Data<'a>,
}

#[derive(Serialize)]
struct Data<'a> {
    version: Version<'a>,
    config: &'a RawValue,
}

/// A published version is a number, a file's SHA-256 prefix a string.
#[derive(Serialize)]
#[serde(untagged)]
enum Version<'a> {
    Published(i64),
    File(&'a str),
}

impl RuntimeCache {
    /// The answer of `site`'s `mode` for the version it serves now, made once per version.
    ///
    /// # Errors
    ///
    /// [`NoConfig`] when the site has no valid config to serve.
    pub fn prepared(&self, site: &Site, mode: Mode) -> Result<Arc<Prepared>, NoConfig> {
        let served = site.served(mode);
        let (config_sha256, config_text, version) = match &**served {
            Served::Valid {
                config_sha256,
                config_text,
                version,
                ..
            } => (config_sha256, config_text, version),
            Served::NeverValid { body } => return Err(NoConfig::NeverValid(body.clone())),
            Served::Loading => return Err(NoConfig::Loading),
        };
        let key = (site.id.clone(), mode);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = entries.get(&key)
            && entry.version == *version
            && entry.sha256 == *config_sha256
        {
            return Ok(entry.clone());
        }
        let config = serde_json::from_str::<&RawValue>(config_text)
            .map_err(|e| NoConfig::NotJson(e.to_string()))?;
        let data = Data {
            version: if site.api_managed() {
                Version::Published(version.parse().unwrap_or(0))
            } else {
                Version::File(version)
            },
            config,
        };
        let body =
            serde_json::to_vec(&Envelope { data }).map_err(|e| NoConfig::NotJson(e.to_string()))?;
        let gzip = (body.len() >= GZIP_MIN_BYTES)
            .then(|| gzip(&body))
            .flatten()
            .filter(|g| g.len() < body.len())
            .map(Arc::from);
        let sha_prefix = config_sha256.get(..16).unwrap_or(config_sha256);
        let entry = Arc::new(Prepared {
            version: version.clone(),
            sha256: config_sha256.clone(),
            tag: format!("{version}-{sha_prefix}"),
            body: Arc::from(body),
            gzip,
        });
        entries.insert(key, entry.clone());
        Ok(entry)
    }
}

/// `bytes` gzip-compressed (best compression: made once per version).
fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 3),
        flate2::Compression::best(),
    );
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}
