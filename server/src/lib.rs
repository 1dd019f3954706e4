//! # nudge-rules-server
//!
//! The preview server of SPEC 7: `POST /v1/nudges/preview` over HTTP for many sites, each with
//! its config file (hot-reloaded) and its API keys (stored as SHA-256 hashes), an exact
//! rolling-minute rate limit per key (in process, or shared by many instances through Redis),
//! and an admin listener with health, readiness, Prometheus metrics and the API document.
//!
//! The binary is `nudge-rules-server`; this library is what it and the integration tests start:
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use nudge_rules_server::{limiter::SystemClock, server::{Options, Server}, sites};
//!
//! let specs = sites::load("sites.toml".as_ref())?;
//! let defs = specs.into_iter().map(Into::into).collect();
//! let mut server = Server::bind(defs, &Options::default(), Arc::new(SystemClock::new())).await?;
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

pub mod admin;
pub mod auth;
pub mod conn;
pub mod demo;
pub mod error;
pub mod import;
pub mod keys;
pub mod limiter;
pub mod metrics;
pub mod model;
pub mod openapi;
pub mod registry;
pub mod routes;
pub mod server;
pub mod sites;
pub mod state;
pub mod store;
pub mod uplift;
pub mod webhook;

/// The demo site's config: the repository's `examples/storefront.json`, the library's embedded
/// default.
pub const DEMO_CONFIG: &str = include_str!("../../examples/storefront.json");

/// The demo site's one test key (`--demo`, `make serve`): public, so the README's `curl` works
/// at once. `--demo` listens on loopback addresses only.
pub const DEMO_KEY: &str = "sk_test_nudgeRulesDemoKey0001";

/// The demo site's publishable relay key (SPEC 10), public like [`DEMO_KEY`].
pub const DEMO_SITE_KEY: &str = "pk_test_nudgeRulesDemoKey0001";

/// The origins the demo site answers CORS for (SPEC 12): the editor of `make demo` (port
/// 8000) on the loopback names a browser uses.
pub const DEMO_ALLOWED_ORIGINS: [&str; 2] = ["http://127.0.0.1:8000", "http://localhost:8000"];

/// The demo's recorded sessions (`examples/sessions.jsonl`), imported in test mode at start.
pub const DEMO_SESSIONS: &str = include_str!("../../examples/sessions.jsonl");
