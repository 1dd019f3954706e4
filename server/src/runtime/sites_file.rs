//! The sites file, reloaded like a config file (docs/contract/server.md "Sites and keys", "Config reload"): keys,
//! publishable keys, rate limits, plans, retention and origins change without a restart, so an
//! operator can rotate a leaked key. Polled at the reload interval (modification time, size,
//! inode, then the text's SHA-256); a valid new file replaces the registry whole, a site that
//! keeps its id and its config's source keeping the config it serves; a file that does not
//! parse, or names a site without a config file on a server without a store, is refused: the
//! last valid one keeps serving, and every problem is logged with its line and column.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::app::state::AppState;
use crate::metrics::{Metrics, SitesFileLabels};
use crate::sites::def::{ConfigSource, SiteDef};
use crate::sites::registry::Sites;

/// What identifies a version of the sites file without reading it.
type Stamp = Option<(Option<SystemTime>, u64, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.modified().ok(), meta.len(), inode))
}

/// The sites file being watched: what was seen of it last.
pub(super) struct SitesFile {
    path: PathBuf,
    stamp: Stamp,
    sha256: Option<[u8; 32]>,
}

impl SitesFile {
    /// Watches `path`, whose current text is the one being served.
    pub(super) fn new(path: PathBuf) -> SitesFile {
        let stamp = stamp(&path);
        let sha256 = std::fs::read(&path)
            .ok()
            .map(|bytes| Sha256::digest(&bytes).into());
        SitesFile {
            path,
            stamp,
            sha256,
        }
    }

    /// The sites file's definitions if it changed since the last look and is valid; `None`
    /// when it did not change, or is refused (logged). Blocking: reads the file.
    pub(super) fn changed(&mut self, has_store: bool, metrics: &Metrics) -> Option<Vec<SiteDef>> {
        let refused = || {
            metrics
                .sites_file_reloads
                .get_or_create(&SitesFileLabels { result: "refused" })
                .inc();
        };
        let stamp = stamp(&self.path);
        if stamp == self.stamp {
            return None;
        }
        self.stamp = stamp;
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) => {
                // Checked again at the next poll (its stamp is gone or new).
                tracing::error!(file = %self.path.display(), error = %e, "sites file cannot be read; the last valid one keeps serving");
                refused();
                return None;
            }
        };
        let sha256: [u8; 32] = Sha256::digest(&bytes).into();
        if self.sha256 == Some(sha256) {
            return None;
        }
        self.sha256 = Some(sha256);
        let defs = match crate::sites::file::load(&self.path) {
            Ok(defs) => defs,
            Err(e) => {
                tracing::error!("sites file refused; the last valid one keeps serving: {e}");
                refused();
                return None;
            }
        };
        if !has_store
            && let Some(site) = defs
                .iter()
                .find(|s| matches!(s.source, ConfigSource::Store))
        {
            tracing::error!(
                site = %site.id,
                "sites file refused; the last valid one keeps serving: site {:?} has no config file, so its config is managed through the API, and this server has no store",
                site.id
            );
            refused();
            return None;
        }
        Some(defs)
    }
}

/// Serves `defs` from now on: their sites' configs are loaded first (new sites, moved configs;
/// API-managed sites from the store), so no request sees a site still loading; the limiter
/// knows both the old and the new keys while the registry is swapped, then the new ones only.
pub(super) async fn apply(state: &std::sync::Arc<AppState>, defs: Vec<SiteDef>) {
    let old = state.sites();
    let count = defs.len();
    let next = old.reloaded(defs);
    let loading = state.clone();
    let next = match state
        .tasks
        .spawn_blocking(move || {
            next.refresh_all(&loading.metrics);
            next
        })
        .await
    {
        Ok(next) => next,
        Err(e) => {
            tracing::error!(error = %e, "sites file reload failed; the last valid one keeps serving");
            return;
        }
    };
    if let Some(store) = &state.store
        && let Err(e) = next.refresh_from_store(store, &state.metrics).await
    {
        tracing::warn!(error = %e, "sites file reload: cannot read published config versions; they are installed at the next poll");
    }
    let (added, removed) = key_changes(&old, &next);
    state
        .limiter
        .set_keys(old.keys().chain(next.keys()).collect::<Vec<_>>());
    state.replace_sites(next);
    state.limiter.set_keys(state.sites().keys());
    state
        .metrics
        .sites_file_reloads
        .get_or_create(&SitesFileLabels { result: "ok" })
        .inc();
    tracing::info!(
        sites = count,
        keys_added = added,
        keys_removed = removed,
        "sites file reloaded"
    );
}

/// How many keys `next` has that `old` has not, and the other way round.
fn key_changes(old: &Sites, next: &Sites) -> (usize, usize) {
    let old_keys: std::collections::HashSet<_> = old.keys().collect();
    let next_keys: std::collections::HashSet<_> = next.keys().collect();
    (
        next_keys.difference(&old_keys).count(),
        old_keys.difference(&next_keys).count(),
    )
}
