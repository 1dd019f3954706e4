//! What the server does, with no HTTP in it: the state every request shares, recorded sessions'
//! import, the demo's data, the uplift report's statistics, publishing a config version, the
//! backtest's replay, the storefront's config answers, webhook endpoints and their delivery.

pub mod backtest;
pub mod delivery;
pub mod demo;
pub mod import;
pub mod ingest;
pub mod runtime_config;
pub mod state;
pub mod uplift;
pub mod versions;
pub mod webhooks;
