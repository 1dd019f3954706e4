//! # nudge-rules
//!
//! A rules engine that decides which on-site nudge (chat bubble, toast, exit modal, sticky bar)
//! fires for a storefront visitor, given the visitor's intent score, page and idle time: the
//! answer to `POST /v1/nudges/preview`. The same crate runs in a server, on the command line and
//! in the browser (WASM).
//!
//! ```
//! use nudge_rules::{Engine, SessionState};
//!
//! let engine = Engine::compile(r#"{
//!   "version": 1,
//!   "quiet_zones": ["/checkout/**"],
//!   "rules": [{
//!     "id": "sizing-help",
//!     "nudge": { "type": "chat_bubble", "message": "Not sure about the fit?", "cta": "Start chat" },
//!     "when": { "min_intent_score": 60, "min_idle_ms": 8000, "pages": ["/products/**"] }
//!   }]
//! }"#)?;
//!
//! let state = SessionState { intent_score: 82, page_url: "/Products/Linen-Shirt".into(), idle_ms: 9000, ..Default::default() };
//! let preview = engine.preview(&state)?;
//! assert_eq!(preview.nudge().map(|n| n.cta.as_str()), Some("Start chat"));
//!
//! // The wire format, as a server answers it.
//! let body = engine.preview_body(br#"{"session_state":{"intent_score":82,"page_url":"/checkout/pay"}}"#)?;
//! assert!(body.starts_with(r#"{"data":{"would_fire":false,"nudge":null,"reason":"#));
//! # Ok::<(), nudge_rules::Error>(())
//! ```
//!
//! ## Map
//!
//! - Here, at the root: the [`Engine`] (compile once, preview per request), the request
//!   ([`SessionState`]), the result ([`Preview`], and on the wire [`PreviewResult`] or
//!   [`Engine::preview_body`]), the config types ([`Config`], [`Rule`], [`Nudge`],
//!   [`Conditions`], [`Pattern`]), the errors ([`Error`], [`Diagnostic`], [`DiagnosticCode`]) and
//!   [`normalize_page_url`].
//! - [`analysis`]: what an editor needs beyond a preview (docs/contract/analysis.md), as an
//!   [`Analysis`](analysis::Analysis) of an engine: explain, decision map, lint, plain-language
//!   summary, page report; and validation that never fails.
//! - [`as_code`]: config as code (docs/contract/as-code.md), as [`ConfigAsCode`](as_code::ConfigAsCode) of an
//!   engine: [`scenarios`] (the scenario file, [`ConfigAsCode::test`](as_code::ConfigAsCode::test)),
//!   [`coverage`] ([`ConfigAsCode::coverage`](as_code::ConfigAsCode::coverage)), [`replay`] of
//!   recorded sessions from any iterator ([`ConfigAsCode::replay`](as_code::ConfigAsCode::replay)),
//!   [`diff`] between two configs ([`ConfigAsCode::diff`](as_code::ConfigAsCode::diff)). The four
//!   modules are re-exported here, at their old paths.
//! - [`limits`]: every limit of the specification, as constants.
//!
//! Sections cited in the docs (`docs/contract/urls.md`) are those of the product specification; the API
//! document is "Visitor Sessions and Nudges API".

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

/// A diagnostic's message text, as `format!` builds it; in the slim WASM module for storefront
/// pages (docs/contract/storefront.md, src/wasm_slim.rs) an empty string, with nothing formatted: that module reports
/// a refusal by kind, code and path, and carries no message texts nor the formatting code they
/// need (docs/DECISIONS.md, docs/contract/storefront.md; docs/PERFORMANCE.md, "Bytes before the first decision, step
/// by step"). Only for message texts: never for paths, fixes or anything a decision reads.
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
macro_rules! msg {
    ($($t:tt)*) => {{
        // Type-checked (and the arguments count as used), never run: the optimizer drops it.
        if false {
            let _ = format!($($t)*);
        }
        String::new()
    }};
}
/// A diagnostic's message text: `format!` (in the slim WASM module, an empty string).
#[cfg(not(all(feature = "slim", target_arch = "wasm32")))]
macro_rules! msg {
    ($($t:tt)*) => {
        format!($($t)*)
    };
}

pub mod analysis;
pub mod as_code;
pub mod channel;
mod code;
mod config;
mod engine;
mod error;
mod host;
mod json;
pub mod limits;
mod matches;
mod normalize;
mod pattern;
mod preview;
mod reason;
mod request;
mod text;
mod visit;
#[cfg(all(feature = "wasm", not(feature = "slim")))]
mod wasm;
#[cfg(feature = "slim")]
mod wasm_slim;
mod wire;
pub mod words;

pub use as_code::{coverage, diff, replay, scenarios};
pub use code::DiagnosticCode;
pub use config::{Cap, Conditions, Config, Nudge, NudgeType, Pattern, Rule, holdout_bucket};
pub use engine::Engine;
pub use error::{Diagnostic, Error, ErrorKind, Severity};
pub use json::{line_column, suggest_name};
#[cfg(fuzzing)]
pub use normalize::normalize_page_url_full;
pub use normalize::{UrlError, normalize_page_url};
#[cfg(fuzzing)]
pub use pattern::glob_verdicts;
pub use preview::{Decision, Preview};
pub use request::SessionState;
pub use visit::{HistoryEntry, NudgeOutcome};
pub use wire::{NudgeResult, PreviewResult, preview_response};

/// The examples of the README and of the Rust guide (docs/RUST.md) run as doc tests.
#[doc = include_str!("../README.md")]
#[doc = include_str!("../docs/RUST.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
