//! Config as code (docs/contract/as-code.md), as [`ConfigAsCode`] of a compiled [`Engine`]: scenario files and
//! [`ConfigAsCode::test`] ([`scenarios`]), [`ConfigAsCode::coverage`] ([`coverage`]), the replay
//! of recorded sessions from any iterator ([`ConfigAsCode::replay`], [`replay`]), and the diff of
//! this config and another ([`ConfigAsCode::diff`], [`ConfigAsCode::diff_maps`], [`diff`]). The
//! same layer is the `config-as-code` feature of the WASM package (its second module,
//! `src/wasm/as_code.rs`).
//!
//! Like [`Analysis`](crate::analysis::Analysis), it reads the engine only through its
//! crate-internal seam (`src/engine.rs`, "The seam").
//!
//! ```
//! use nudge_rules::{as_code::ConfigAsCode, replay::Sessions, Engine};
//!
//! let engine = Engine::compile(&std::fs::read_to_string("examples/storefront.json")?)?;
//! let sessions = Sessions::from_text(&std::fs::read_to_string("examples/sessions.jsonl")?)?;
//! let as_code = ConfigAsCode::new(&engine);
//! // Any iterator of sessions: here, those that converted.
//! let converted = sessions.records().filter(|s| s.converted() == Some(true));
//! assert_eq!(as_code.replay_summary(converted).sessions, 50);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod backtest;
pub mod coverage;
pub mod diff;
pub mod replay;
pub mod scenarios;

use crate::engine::Engine;

/// Config as code over one compiled config (docs/contract/as-code.md). Cheap to make (one reference):
/// `ConfigAsCode::new(&engine).test(&file)`.
#[derive(Clone, Copy, Debug)]
pub struct ConfigAsCode<'e> {
    engine: &'e Engine,
}

impl<'e> ConfigAsCode<'e> {
    /// Config as code over `engine`'s config.
    pub fn new(engine: &'e Engine) -> Self {
        ConfigAsCode { engine }
    }

    /// The engine.
    pub fn engine(&self) -> &'e Engine {
        self.engine
    }
}
