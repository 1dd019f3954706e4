//! Integration tests of the server against real parts: HTTP over loopback with a real
//! client, the built binary, a real `redis-server`, schemathesis. `cargo test -p
//! nudge-rules-server` runs them; scripts/setup.sh installs redis-server and schemathesis.

mod api;
mod backtest;
mod binary;
mod common;
mod config_versions;
mod hardening;
mod import_cli;
mod pg;
mod read_api;
mod redis;
mod relay;
mod relay_load;
mod reload;
mod routes;
mod runtime_config;
mod schemathesis;
mod sites_reload;
mod store;
mod walks;
mod webhook_failures;
mod webhook_signature;
mod webhook_worker;
mod webhooks;
