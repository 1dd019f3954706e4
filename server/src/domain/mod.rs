//! The session model (docs/contract/read-api.md): what a stored event is, the fields derived from a session's
//! events, times on the wire, retention windows and signed page cursors; and the webhooks'
//! parts that need no I/O (docs/contract/webhooks.md). Pure code: no I/O, no clock (callers pass `now`).

pub mod cursor;
pub mod derive;
pub mod event;
pub mod ids;
pub mod ingest;
pub mod retention;
pub mod time;
pub mod webhook;
pub mod wire;
