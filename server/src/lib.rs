//! # nudge-rules-server
//!
//! The server of docs/contract/ (server.md, read-api.md, relay.md, store.md, backtest.md, versions.md, caps.md): `POST /v1/nudges/preview` over HTTP for many sites, each
//! with its config (a file, hot-reloaded, or versions published through the API and kept in
//! the store), its API keys (stored as SHA-256 hashes) and an exact rolling-minute rate limit
//! per key (in process, or shared by many instances through Redis); the relay of page events
//! (`POST /v1/events`), the read API over the stored sessions and nudges, backtests and the
//! uplift report; and an admin listener with health, readiness, Prometheus metrics and the API
//! document.
//!
//! ## Layout: which room a change belongs in
//!
//! The modules are floors: each names only floors below it (`scripts/check-modules.py` checks
//! it in `make lint`, with no import cycle at any depth and no file over 700 lines).
//!
//! - [`runtime`]: the listeners, the drain and the server's lifecycle ([`runtime::Server`]):
//!   a new listener, a change to how connections are accepted or how shutdown proceeds.
//! - [`http`]: the only module that names axum: the router, the admission layer (lifecycle,
//!   key, limit, the limiter's headers, what every answer books), the extractors (the caller,
//!   list queries, JSON bodies, preconditions), pages and cursors on the wire, CORS,
//!   [`http::error::ApiError`], and `http/routes/`, handlers that extract, call and respond:
//!   a new endpoint, a new header, a new error status.
//! - [`app`]: what the server does with no HTTP in it, called by `http`, the import and `--demo`
//!   alike: the state requests share, storing events ([`app::ingest`], the relay's 24-hour rule
//!   inside the write transaction), publishing a config version ([`app::versions`]), the
//!   backtest's replay ([`app::backtest`]), the import
//!   of recorded sessions, the demo's data, the uplift statistics: a rule that the relay, the
//!   import and `--demo` must all follow.
//! - [`limiter`]: the rolling-minute limit, local or through Redis.
//! - [`sites`]: what a site is, the sites file, the registry of served configs, API keys.
//! - [`store`]: SQLite and PostgreSQL behind one query text: a new query, a migration.
//! - [`domain`]: the session model, pure: events, ids, derived fields, retention, times,
//!   cursors, and webhooks' event types, signatures, address rules and retry ladder: a new
//!   field of a stored event or a derived value.
//! - [`config`], [`metrics`] and [`tasks`]: leaves every floor may use: how the server runs
//!   ([`config::ServeConfig`], the one place its defaults live), the Prometheus metrics, and the
//!   one owner of every background task.
//!
//! The binary (`main.rs`) reads the command line into a [`config::ServeConfig`] and runs
//! [`runtime::Server`].
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use nudge_rules_server::limiter::SystemClock;
//! use nudge_rules_server::config::ServeConfig;
//! use nudge_rules_server::runtime::Server;
//! use nudge_rules_server::sites;
//!
//! let specs = sites::file::load("sites.toml".as_ref())?;
//! let defs = specs.into_iter().map(Into::into).collect();
//! let mut server = Server::bind(defs, &ServeConfig::default(), Arc::new(SystemClock::new())).await?;
//! server.load().await; // ready
//! server.shutdown().await; // drain
//! # Ok(()) }
//! ```
//!
//! docs/SERVER.md is the operator's guide: the contract table, the headers, the deployment
//! pictures; the load figures are in docs/PERFORMANCE.md ("The server").

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]
#![deny(missing_docs)]

pub mod app;
pub mod config;
pub mod domain;
pub mod http;
pub mod limiter;
pub mod metrics;
pub mod runtime;
pub mod sites;
pub mod store;
pub mod tasks;

/// The demo site's config: the repository's `examples/storefront.json`, the library's embedded
/// default.
pub const DEMO_CONFIG: &str = include_str!("../../examples/storefront.json");

/// The demo site's one test key (`--demo`, `make serve`): public, so the README's `curl` works
/// at once. `--demo` listens on loopback addresses only.
pub const DEMO_KEY: &str = "sk_test_nudgeRulesDemoKey0001";

/// The demo site's publishable relay key (docs/contract/relay.md), public like [`DEMO_KEY`].
pub const DEMO_SITE_KEY: &str = "pk_test_nudgeRulesDemoKey0001";

/// The origins the demo site answers CORS for (docs/contract/backtest.md): the editor of `make demo` (port
/// 8000) on the loopback names a browser uses.
pub const DEMO_ALLOWED_ORIGINS: [&str; 2] = ["http://127.0.0.1:8000", "http://localhost:8000"];

/// The demo's recorded sessions (`examples/sessions.jsonl`), imported in test mode at start.
pub const DEMO_SESSIONS: &str = include_str!("../../examples/sessions.jsonl");
