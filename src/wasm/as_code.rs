//! Config as code in the npm package (docs/contract/as-code.md; docs/JS-API.md "Config as code"): scenarios,
//! coverage, replay of recorded sessions and diff, mapped one to one onto the native API.
//!
//! Inputs are text (diagnostics with line and column) or JS values (read through
//! `JSON.stringify`, as configs are); a bad input throws an `Error` with `kind`
//! (`InvalidScenarios`, `InvalidSessions`, `InvalidConfig`) and `diagnostics`. What the
//! engine decides about a scenario's state (an InvalidRequest, a rejected page URL) is reported
//! inside the results, never thrown.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::{ConfigInput, WasmEngine, js_error, json_tree, set};
use crate::as_code::ConfigAsCode;
use crate::as_code::diff::DiffInput;
use crate::as_code::replay::Sessions;
use crate::as_code::scenarios::ScenarioFile;
use crate::error::{Error, ErrorKind};

/// A result as a plain JS value, through JSON text and `JSON.parse`: one serializer for every
/// result type (serde_json's, already in the module) instead of one per type and target, which
/// keeps these large, rarely called results small in the `.wasm`.
fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value).map_err(|e| js_sys::Error::new(&e.to_string()))?;
    js_sys::JSON::parse(&text)
}

/// Reads a `string | object` input: text with `text`, a JS value as a JSON tree with `value`.
fn read<T>(
    input: &JsValue,
    kind: ErrorKind,
    what: &str,
    text: impl Fn(&str) -> Result<T, Error>,
    value: impl Fn(&Value) -> Result<T, Error>,
) -> Result<T, Error> {
    match input.as_string() {
        Some(t) => text(&t),
        None => value(&json_tree(input, kind, "", what)?),
    }
}

fn scenario_file(input: &JsValue) -> Result<ScenarioFile, JsValue> {
    read(
        input,
        ErrorKind::InvalidScenarios,
        "the scenario file",
        ScenarioFile::from_text,
        ScenarioFile::from_value,
    )
    .map_err(|e| js_error(&e))
}

fn sessions(input: &JsValue) -> Result<Sessions, JsValue> {
    read(
        input,
        ErrorKind::InvalidSessions,
        "the sessions",
        Sessions::from_text,
        Sessions::from_value,
    )
    .map_err(|e| js_error(&e))
}

/// Recorded sessions read once (JS `RecordedSessions`), to replay against many configs: an
/// editor replays the same file on every edit without reading it again.
#[wasm_bindgen(js_name = RecordedSessions)]
pub struct WasmSessions {
    sessions: Sessions,
}

#[wasm_bindgen(js_class = RecordedSessions)]
impl WasmSessions {
    /// `new RecordedSessions(sessions: string | object)`: JSONL or JSON text, an array of
    /// session objects, or one.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidSessions` with every diagnostic, as [`Sessions::from_text`].
    #[wasm_bindgen(constructor)]
    pub fn new(input: &JsValue) -> Result<WasmSessions, JsValue> {
        sessions(input).map(|sessions| WasmSessions { sessions })
    }

    /// `recorded.length`: how many sessions.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.sessions.len()
    }
}

#[wasm_bindgen(js_class = NudgeEngine)]
impl WasmEngine {
    /// `engine.test(scenarios: string | object): TestReport`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidScenarios` for a bad scenario file; a scenario's own outcome (an
    ///   InvalidRequest included) is reported in its result.
    pub fn test(&self, scenarios: &JsValue) -> Result<JsValue, JsValue> {
        to_js(&ConfigAsCode::new(&self.engine).test(&scenario_file(scenarios)?))
    }

    /// `engine.coverage(scenarios: string | object): Coverage`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidScenarios` for a bad scenario file.
    pub fn coverage(&self, scenarios: &JsValue) -> Result<JsValue, JsValue> {
        let file = scenario_file(scenarios)?;
        to_js(&ConfigAsCode::new(&self.engine).coverage(file.scenarios()))
    }

    /// `engine.scenario(name: string, sessionState: object): Scenario`: a scenario whose
    /// `expect` is what this config gives now (the editor's "save this visitor").
    ///
    /// # Errors
    ///
    /// - Throws `InvalidRequest` (code `not_json`) only when the state has no JSON form; a state
    ///   that docs/contract/preview.md rejects gives `expect: {"error": "InvalidRequest"}`.
    pub fn scenario(&self, name: &str, session_state: &JsValue) -> Result<JsValue, JsValue> {
        let tree = json_tree(
            session_state,
            ErrorKind::InvalidRequest,
            "session_state",
            "session_state",
        )
        .map_err(|e| js_error(&e))?;
        to_js(&ConfigAsCode::new(&self.engine).scenario(name, tree))
    }

    /// `engine.replay(sessions: string | object | RecordedSessions): Replay` (`RecordedSessions`
    /// is dispatched in `pkg/index.js` to [`WasmEngine::replay_recorded`]).
    ///
    /// # Errors
    ///
    /// - Throws `InvalidSessions` for bad sessions.
    pub fn replay(&self, sessions_value: &JsValue) -> Result<JsValue, JsValue> {
        to_js(&ConfigAsCode::new(&self.engine).replay(&sessions(sessions_value)?))
    }

    /// `engine.replaySummary(sessions): ReplaySummary`: the summary alone.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidSessions` for bad sessions.
    #[wasm_bindgen(js_name = replaySummary)]
    pub fn replay_summary(&self, sessions_value: &JsValue) -> Result<JsValue, JsValue> {
        to_js(&ConfigAsCode::new(&self.engine).replay_summary(&sessions(sessions_value)?))
    }

    /// `replay` and `replaySummary` of sessions read once (`pkg/index.js` calls it for a
    /// `RecordedSessions`).
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for a replay.
    #[wasm_bindgen(js_name = _replayRecorded, skip_typescript)]
    pub fn replay_recorded(
        &self,
        recorded: &WasmSessions,
        summary_only: bool,
    ) -> Result<JsValue, JsValue> {
        if summary_only {
            to_js(&ConfigAsCode::new(&self.engine).replay_summary(&recorded.sessions))
        } else {
            to_js(&ConfigAsCode::new(&self.engine).replay(&recorded.sessions))
        }
    }

    /// `NudgeEngine.diff(oldConfig, newConfig, inputs?: (string | object)[]): Diff` (static):
    /// the scenarios and recorded page views whose outcome changes; without inputs, the
    /// decision maps of the pages the configs mention.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidConfig` (with `config`: `"old"` or `"new"`) for a bad config,
    ///   `InvalidScenarios` or `InvalidSessions` (with `input`: its index) for a bad input, and a
    ///   `TypeError` when `inputs` is neither an array nor absent.
    pub fn diff(old: &JsValue, new: &JsValue, inputs: &JsValue) -> Result<JsValue, JsValue> {
        let compile = |config: &JsValue, side: &str| {
            ConfigInput::from_js(config)
                .and_then(|c| c.compile())
                .map_err(|e| {
                    let js = js_error(&e);
                    set(&js, "config", &JsValue::from_str(side));
                    js
                })
        };
        let (old, new) = (compile(old, "old")?, compile(new, "new")?);
        let mut given = Vec::new();
        if !inputs.is_undefined() && !inputs.is_null() {
            let list: js_sys::Array = inputs
                .clone()
                .dyn_into()
                .map_err(|_| js_sys::TypeError::new("inputs must be an array of inputs"))?;
            for (i, input) in list.iter().enumerate() {
                let read = read(
                    &input,
                    ErrorKind::InvalidSessions,
                    "the input",
                    DiffInput::from_text,
                    DiffInput::from_value,
                )
                .map_err(|e| {
                    let js = js_error(&e);
                    set(&js, "input", &JsValue::from(i as u32));
                    js
                })?;
                given.push(read);
            }
        }
        to_js(&ConfigAsCode::new(&old).diff(&new, &given))
    }
}
