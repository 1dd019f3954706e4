//! How the server runs ([`ServeConfig`]): the one place its defaults live. The command line
//! (main.rs) takes its defaults from the constants here, and [`ServeConfig::default`] is made
//! of the same constants, so the binary and the library cannot disagree.
//!
//! One default differs on purpose: the store. The library's default is none (the read
//! endpoints answer 503); the binary's is a SQLite file beside the sites file
//! ([`default_store_url`]), or a fresh file in the temp folder with `--demo`.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The public listener's default address.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));
/// The admin listener's default address.
pub const DEFAULT_ADMIN_LISTEN: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9090));
/// How often config files are checked for changes by default, in milliseconds.
pub const DEFAULT_RELOAD_INTERVAL_MS: u64 = 1000;
/// How long one Redis rate-limit call may take before the request is decided locally
/// (`--redis-timeout-ms`, docs/contract/server.md "Several instances"), in milliseconds.
pub const DEFAULT_REDIS_TIMEOUT_MS: u64 = 250;
/// How long a request head may take by default, in milliseconds.
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: u64 = 10_000;
/// How long a body may pause between chunks by default, in milliseconds.
pub const DEFAULT_BODY_READ_TIMEOUT_MS: u64 = 10_000;
/// How long a whole body may take by default, in milliseconds.
pub const DEFAULT_BODY_TOTAL_TIMEOUT_MS: u64 = 30_000;
/// The most connections the public listener keeps open by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// How long in-flight requests may take after SIGTERM by default, in milliseconds.
pub const DEFAULT_DRAIN_TIMEOUT_MS: u64 = 30_000;
/// What `--demo` lets webhook endpoints reach besides public addresses: the loopback (a
/// receiver on the same machine, docs/WEBHOOKS.md), with `http:` too.
pub const DEMO_WEBHOOK_RANGES: [&str; 2] = ["127.0.0.0/8", "::1/128"];
/// How often sessions past retention are purged (docs/contract/read-api.md: at least once a day).
pub const DEFAULT_PURGE_INTERVAL: Duration = Duration::from_secs(3600);

/// How the server runs; [`ServeConfig::default`] gives the documented defaults.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The public listener (`POST /v1/nudges/preview`). Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// The admin listener. Default `127.0.0.1:9090`.
    pub admin_listen: SocketAddr,
    /// A Redis URL (`redis://host:port`) to share rate limits between instances.
    pub redis_url: Option<String>,
    /// How long one Redis call or connection attempt may take before the request is decided
    /// by the local limiter. Default 250 ms.
    pub redis_timeout: Duration,
    /// How long a client may take to send a request's head (and how long an idle keep-alive
    /// connection stays open). Default 10 s.
    pub header_read_timeout: Duration,
    /// How long the body may pause between two chunks before 408. Default 10 s.
    pub body_read_timeout: Duration,
    /// How long a whole body may take to arrive before 408, however it trickles. Default 30 s.
    pub body_total_timeout: Duration,
    /// The most connections the public listener keeps open; more are answered 503 and closed
    /// at once. Default 4,096.
    pub max_connections: usize,
    /// How long in-flight requests may take to finish after SIGTERM. Default 30 s.
    pub drain_timeout: Duration,
    /// How often config files are checked for changes. Default 1 s.
    pub reload_interval: Duration,
    /// Serve the benchmark's constant-body route (`/v1/_bench/constant`).
    pub constant_route: bool,
    /// The store (docs/contract/store.md): `sqlite:PATH` or `postgres://...`; `None`: no store, the read
    /// endpoints answer 503.
    pub store: Option<String>,
    /// The secret that signs page cursors (at least 32 bytes), the same on every instance;
    /// `None`: a random one (cursors then die with the process).
    pub cursor_secret: Option<Vec<u8>>,
    /// How often sessions past retention plus grace are deleted. Default 1 hour (docs/contract/read-api.md: at
    /// least once a day).
    pub purge_interval: Duration,
    /// The webhook retry delays (`--webhook-schedule`); `None`: docs/contract/webhooks.md's ladder (5 s, 5 min,
    /// 30 min, 2 h, 5 h, 10 h, 10 h; `domain::webhook::schedule::DEFAULT_DELAYS`).
    pub webhook_delays: Option<Vec<Duration>>,
    /// Accept `http:` endpoint URLs (`--webhook-allow-http`; tests, private networks).
    pub webhook_allow_http: bool,
    /// Address ranges endpoints may reach though special-purpose (`--webhook-allow-private`).
    pub webhook_allow_private: Vec<ipnet::IpNet>,
    /// Whether this instance runs the webhook delivery worker (`--webhook-worker on|off`).
    /// Default on. Off needs a PostgreSQL store, and a `nudge-rules-server worker` (or an
    /// instance with it on) somewhere, or nothing is delivered (docs/WEBHOOKS.md).
    pub webhook_worker: bool,
    /// The sites file the sites were read from: reloaded at `reload_interval` (docs/contract/server.md), so
    /// keys, plans and origins change without a restart. `None`: the sites never change.
    pub sites_file: Option<PathBuf>,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            listen: DEFAULT_LISTEN,
            admin_listen: DEFAULT_ADMIN_LISTEN,
            redis_url: None,
            redis_timeout: Duration::from_millis(DEFAULT_REDIS_TIMEOUT_MS),
            header_read_timeout: Duration::from_millis(DEFAULT_HEADER_READ_TIMEOUT_MS),
            body_read_timeout: Duration::from_millis(DEFAULT_BODY_READ_TIMEOUT_MS),
            body_total_timeout: Duration::from_millis(DEFAULT_BODY_TOTAL_TIMEOUT_MS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            drain_timeout: Duration::from_millis(DEFAULT_DRAIN_TIMEOUT_MS),
            reload_interval: Duration::from_millis(DEFAULT_RELOAD_INTERVAL_MS),
            constant_route: false,
            store: None,
            cursor_secret: None,
            purge_interval: DEFAULT_PURGE_INTERVAL,
            webhook_delays: None,
            webhook_allow_http: false,
            webhook_allow_private: Vec::new(),
            webhook_worker: true,
            sites_file: None,
        }
    }
}

/// The binary's store when `--store` is not given (and not `--demo`): `nudge-rules.db` beside
/// the sites file.
pub fn default_store_url(sites_file: Option<&Path>) -> String {
    let dir = sites_file
        .and_then(Path::parent)
        .unwrap_or_else(|| Path::new(""));
    format!("sqlite:{}", dir.join("nudge-rules.db").display())
}
