//! Publishing a config version (SPEC 13), one path for `POST /v1/config/versions` and `--demo`:
//! the version's SHA-256 and time are set here, the `If-Match` check and the insert are the
//! store's one transaction.

use sha2::{Digest, Sha256};

use crate::domain::event::Scope;
use crate::domain::time::now_ms;
use crate::store::{NewVersion, Published, Store, StoreError};

/// A config to publish, already checked (it compiled; its scenarios passed).
#[derive(Clone, Copy, Debug)]
pub struct Publish<'a> {
    /// The config text, stored as sent.
    pub config: &'a str,
    /// The first 8 hex digits of the publishing key's SHA-256.
    pub published_by: &'a str,
    /// The publisher's message.
    pub message: Option<&'a str>,
    /// The earlier version this one publishes again.
    pub restores: Option<i64>,
}

/// Publishes `publish` as the next version of `scope` when `expected` is its latest version
/// (`None`: when it has none yet), at the time now.
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
        published_at_ms: now_ms(),
        published_by: publish.published_by,
        message: publish.message,
        sha256: &sha256,
        restores: publish.restores,
        config: publish.config,
    };
    store.publish(scope, expected, &new).await
}
