//! The session model (docs/contract/read-api.md): what a stored event is, the fields derived from a session's
//! events, times on the wire, retention windows and signed page cursors; and the webhooks'
//! rules (docs/contract/webhooks.md): which stored changes make which messages, how an attempt is judged, when
//! it is retried and when an endpoint is disabled. Pure code: no I/O, and no clock of its own:
//! every "now" is the server's clock's (`clock.rs`), read by the callers and passed in as
//! `now_ms`.

pub mod cursor;
pub mod derive;
pub mod event;
pub mod ids;
pub mod ingest;
pub mod retention;
pub mod time;
pub mod webhook;
pub mod wire;
