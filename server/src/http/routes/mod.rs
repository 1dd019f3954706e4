//! The public listener's routes, one room each: extract, call, respond. What they share (the
//! pipeline, bodies, pages, errors) is one floor up, in [`crate::http`].

pub mod backtest;
pub mod bench;
pub mod config;
pub mod events;
pub mod nudges;
pub mod preview;
pub mod reports;
pub mod runtime;
pub mod sessions;
pub mod versions;
pub mod webhook_actions;
pub mod webhook_attempts;
pub mod webhooks;
