//! What a site is (docs/contract/server.md "Sites and keys"): its id, where its config comes from, its keys, rate
//! limit, plan and origins ([`SiteDef`]), with the bounds the sites file is checked against, and
//! the problems a sites file can have.

use std::fmt;
use std::path::PathBuf;

use crate::domain::retention::{Plan, Retention};
use crate::sites::keys::KeyHash;

/// The default of `rate_limit`: the API document's 1,000 requests per minute (section 8).
pub const DEFAULT_RATE_LIMIT: u32 = 1000;

/// The largest `rate_limit`. The limiter keeps one timestamp per admitted request in the
/// window (an exact sliding log), so a key at this limit holds 100,000 x 8 bytes = 800 KB.
pub const MAX_RATE_LIMIT: u32 = 100_000;

/// The longest site id, in characters.
pub const MAX_SITE_ID_CHARS: usize = 64;

/// The most `allowed_origins` of one site.
pub const MAX_ALLOWED_ORIGINS: usize = 100;

/// Where a site's config comes from.
#[derive(Clone, Debug)]
pub enum ConfigSource {
    /// A file, polled for changes.
    File(PathBuf),
    /// A text built into the binary (the demo site: `examples/storefront.json`).
    Embedded(&'static str),
    /// Published versions in the store, one history per mode (docs/contract/versions.md): the site has no
    /// config file.
    Store,
}

/// A site as defined: a `[[site]]` of the sites file (`file::load`), or the demo site. The
/// registry (`registry.rs`) serves it.
#[derive(Clone, Debug)]
pub struct SiteDef {
    /// The site id.
    pub id: String,
    /// Its config.
    pub source: ConfigSource,
    /// Requests per rolling 60 s per key.
    pub rate_limit: u32,
    /// Hashes of its API keys.
    pub keys: Vec<KeyHash>,
    /// Hashes of its publishable relay keys (docs/contract/relay.md).
    pub site_keys: Vec<KeyHash>,
    /// Its plan (API document section 8).
    pub plan: Plan,
    /// How long its sessions stay visible (docs/contract/read-api.md).
    pub retention: Retention,
    /// Browser origins (`https://editor.example.com`) its REST endpoints answer CORS for
    /// (docs/contract/backtest.md), in their serialized form: scheme, host and a port other than the default.
    pub allowed_origins: Vec<String>,
}

/// One problem found in a sites file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where: `site[1].keys[0]`; empty for the whole document.
    pub path: String,
    /// What is wrong, naming the value.
    pub message: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column in characters, when known.
    pub column: Option<usize>,
}

impl fmt::Display for Problem {
    /// `site[0].rate_limit: message (line 4, column 14)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

/// An invalid sites file: every problem found, in document order.
#[derive(Clone, Debug)]
pub struct SitesError {
    /// The sites file.
    pub file: PathBuf,
    /// Never empty.
    pub problems: Vec<Problem>,
}

impl fmt::Display for SitesError {
    /// `FILE is invalid: N errors` and one indented line per problem, as `nudge-rules check`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "{} is invalid: {n} error{}",
            self.file.display(),
            if n == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SitesError {}
