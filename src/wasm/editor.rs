//! What the config editor (`www/`) asks of the engine besides a config's preview, as methods of
//! `NudgeEngine` (so `pkg/index.js` passes them on unchanged): one pattern checked on its own,
//! with the patterns to offer instead of an invalid one, the config's limits, and the words of
//! `crate::words` (a visitor's conditions as sentences, idle times as the cards say them). The
//! editor then needs neither a copy of the limits, nor the text of a message, nor sentences of
//! its own.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{WasmEngine, js_error, session_state, to_js};
use crate::analysis::Analysis;
use crate::code::DiagnosticCode;
use crate::limits;
use crate::pattern;
use crate::words;

/// Why a pattern is invalid (`NudgeEngine.checkPattern`).
#[derive(Serialize)]
struct PatternFinding {
    code: DiagnosticCode,
    message: String,
    /// The patterns the message suggests instead that are valid themselves ("did you mean").
    fixes: Vec<String>,
}

/// The limits of a config and a request (docs/contract/config.md and docs/contract/preview.md), for an editor's controls and words.
#[derive(Serialize)]
struct Limits {
    config_bytes: usize,
    rules: usize,
    quiet_zones: usize,
    patterns_per_list: usize,
    pattern_bytes: usize,
    rule_id_chars: usize,
    message_chars: usize,
    cta_chars: usize,
    intent_score: u8,
    idle_ms: u32,
    page_url_bytes: usize,
    request_bytes: usize,
    scenario_name_chars: usize,
}

#[wasm_bindgen(js_class = NudgeEngine)]
impl WasmEngine {
    /// `NudgeEngine.checkPattern(pattern, caseSensitive): null | { code, message, fixes }`: the
    /// check every pattern of a config gets (docs/contract/patterns.md), alone: `null` when it is valid, else the
    /// diagnostic's code and message and the valid patterns the message suggests instead.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for strings.
    #[wasm_bindgen(js_name = checkPattern)]
    pub fn check_pattern(pattern_text: &str, case_sensitive: bool) -> Result<JsValue, JsValue> {
        match pattern::check(pattern_text, case_sensitive) {
            Ok(_) => Ok(JsValue::NULL),
            Err(problem) => to_js(&PatternFinding {
                code: problem.code,
                message: problem.message,
                fixes: problem
                    .fixes
                    .into_iter()
                    .filter(|fix| pattern::check(fix, case_sensitive).is_ok())
                    .collect(),
            }),
        }
    }

    /// `NudgeEngine.limits()`: the limits of `nudge_rules::limits` that a config and a request
    /// must keep.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for numbers.
    pub fn limits() -> Result<JsValue, JsValue> {
        to_js(&Limits {
            config_bytes: limits::MAX_CONFIG_BYTES,
            rules: limits::MAX_RULES,
            quiet_zones: limits::MAX_QUIET_ZONES,
            patterns_per_list: limits::MAX_PATTERNS_PER_LIST,
            pattern_bytes: limits::MAX_PATTERN_BYTES,
            rule_id_chars: limits::MAX_RULE_ID_CHARS,
            message_chars: limits::MAX_MESSAGE_CHARS,
            cta_chars: limits::MAX_CTA_CHARS,
            intent_score: limits::MAX_INTENT_SCORE,
            idle_ms: limits::MAX_IDLE_MS,
            page_url_bytes: limits::MAX_PAGE_URL_BYTES,
            request_bytes: limits::MAX_REQUEST_BYTES,
            scenario_name_chars: limits::MAX_SCENARIO_NAME_CHARS,
        })
    }

    /// `NudgeEngine.idleWords(ms): string`: a rule's idle wait as its card says it ("at once",
    /// "8 s", "7.9 s": cut, never rounded up; `crate::words::idle_words`).
    #[wasm_bindgen(js_name = idleWords)]
    pub fn idle_words(ms: u32) -> String {
        words::idle_words(ms)
    }

    /// `engine.conditionSentences(sessionState): { rules: string[][], quiet_zone: string | null }`:
    /// every rule's conditions for the visitor as sentences for a merchant, in the order of
    /// `explain`'s rules and conditions (`Analysis::sentences`).
    ///
    /// # Errors
    ///
    /// - Throws `InvalidRequest` for a bad state, as `explain`.
    #[wasm_bindgen(js_name = conditionSentences)]
    pub fn condition_sentences(&self, session_state_value: &JsValue) -> Result<JsValue, JsValue> {
        let state = session_state(session_state_value).map_err(|e| js_error(&e))?;
        let sentences = Analysis::new(&self.engine)
            .sentences(&state)
            .map_err(|e| js_error(&e))?;
        to_js(&sentences)
    }
}
