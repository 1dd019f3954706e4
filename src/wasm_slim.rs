//! The slim WASM facade for storefront pages (feature `slim`; docs/contract/storefront.md): `pkg/wasm/slim/`, the
//! module the storefront runtime (`nudge-rules/storefront`, `pkg/dist/storefront.js`) loads.
//!
//! Only what a page needs: `new NudgeEngine(config)` and `engine.decide(sessionState)`, with the
//! same engine, the same config compile and the same decision as the package's first module
//! (`src/wasm.rs`, whose `decide` this mirrors line for line); none of the editor's surface
//! (preview objects, explain, decision maps, lint, summaries, page reports, URL normalization),
//! so the linker drops their code. `pkg/test/slim-parity.test.mjs` checks that both modules
//! decide alike on 100,000 states (history, visitor ids and exit intent included).

use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::code::DiagnosticCode;
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, ErrorKind};
use crate::preview::Decision;
use crate::request::SessionState;

/// The allocator of the slim module: Talc's WebAssembly configuration instead of the standard
/// library's dlmalloc (docs/PERFORMANCE.md, "Bytes before the first decision, step by step").
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// Runs when the module is instantiated: hands the platform's NFKC and lowercasing to the engine.
#[wasm_bindgen(start)]
fn start() {
    #[cfg(target_arch = "wasm32")]
    crate::normalize::use_platform_unicode(crate::normalize::PlatformUnicode {
        nfkc: |text| String::from(js_sys::JsString::from(text).normalize("NFKC")),
        lowercase: |text| String::from(js_sys::JsString::from(text).to_lower_case()),
    });
}

/// A plain JS object with `fields` set in order (as `JSON.stringify` then lists them).
fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let out = js_sys::Object::new();
    for (key, value) in fields {
        let _ = js_sys::Reflect::set(&out, &JsValue::from_str(key), value);
    }
    out.into()
}

/// A number, or `null` for `None`.
fn number_or_null(value: Option<f64>) -> JsValue {
    value.map_or(JsValue::NULL, JsValue::from_f64)
}

/// `text` as a JSON string: quoted, `"` and `\` escaped, control characters as `\u00XX`.
fn push_json_str(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let b = u32::from(c) as usize;
                out.push_str("\\u00");
                for digit in [b >> 4, b & 15] {
                    out.push(HEX.get(digit).map_or('0', |&h| char::from(h)));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `,"key":` (without the comma for the first field).
fn push_key(out: &mut String, key: &str) {
    if !out.ends_with('{') {
        out.push(',');
    }
    push_json_str(out, key);
    out.push(':');
}

fn push_str_or_null(out: &mut String, key: &str, value: Option<&str>) {
    push_key(out, key);
    match value {
        Some(text) => push_json_str(out, text),
        None => out.push_str("null"),
    }
}

fn push_number_or_null(out: &mut String, key: &str, value: Option<u64>) {
    push_key(out, key);
    match value {
        Some(n) => out.push_str(itoa::Buffer::new().format(n)),
        None => out.push_str("null"),
    }
}

/// The decision as the first module's `serde-wasm-bindgen` gives it (`Decision`'s and `Nudge`'s
/// serde field names and order, absent values as `null`, `cta_url` only when set): JSON text
/// written here, then one `JSON.parse`, so that this module carries no serializer
/// (docs/PERFORMANCE.md, "Bytes before the first decision, step by step"). One call across the
/// boundary, not one per field: a JS object built field by field with `Reflect.set` made
/// `decide` about 1.2 times slower.
fn decision_js(decision: &Decision<'_>) -> Result<JsValue, JsValue> {
    let mut out = String::with_capacity(256);
    out.push('{');
    push_key(&mut out, "would_fire");
    out.push_str(if decision.would_fire { "true" } else { "false" });
    push_str_or_null(&mut out, "rule_id", decision.rule_id);
    push_number_or_null(
        &mut out,
        "rule_index",
        decision.rule_index.and_then(|i| u64::try_from(i).ok()),
    );
    push_key(&mut out, "nudge");
    match decision.nudge {
        Some(nudge) => {
            out.push('{');
            push_str_or_null(&mut out, "type", Some(nudge.nudge_type.as_str()));
            push_str_or_null(&mut out, "message", Some(&nudge.message));
            push_str_or_null(&mut out, "cta", Some(&nudge.cta));
            if let Some(url) = &nudge.cta_url {
                push_str_or_null(&mut out, "cta_url", Some(url));
            }
            out.push('}');
        }
        None => out.push_str("null"),
    }
    push_str_or_null(&mut out, "held_out_rule_id", decision.held_out_rule_id);
    push_str_or_null(
        &mut out,
        "quiet_zone",
        decision.quiet_zone.map(|zone| zone.as_written()),
    );
    push_str_or_null(&mut out, "path", Some(decision.path));
    push_number_or_null(
        &mut out,
        "next_idle_ms",
        decision.next_idle_ms.map(u64::from),
    );
    out.push('}');
    js_sys::JSON::parse(&out)
}

/// A diagnostic in the first module's shape, `{ severity, code, path, message, line, column }`,
/// whose `message` is its code: this module carries no message texts (`msg!` in src/lib.rs;
/// docs/DECISIONS.md, docs/contract/storefront.md), and docs/CODES.md says what each code means.
fn diagnostic_js(d: &Diagnostic) -> JsValue {
    object(&[
        ("severity", JsValue::from_str(d.severity.as_str())),
        ("code", JsValue::from_str(d.code.as_str())),
        ("path", JsValue::from_str(&d.path)),
        ("message", JsValue::from_str(d.code.as_str())),
        ("line", number_or_null(d.line.map(f64::from))),
        ("column", number_or_null(d.column.map(f64::from))),
    ])
}

/// `path: code` for each diagnostic (the path left out when empty), joined by `; `: the message
/// of this module's errors, which carry codes, not message texts.
fn error_message(error: &Error) -> String {
    let mut out = String::new();
    for d in error.diagnostics() {
        if !out.is_empty() {
            out.push_str("; ");
        }
        if !d.path.is_empty() {
            out.push_str(&d.path);
            out.push_str(": ");
        }
        out.push_str(d.code.as_str());
    }
    out
}

/// A native error as a thrown JS `Error` with `kind` and `diagnostics`, as `src/wasm.rs` throws,
/// with codes for message texts (`rules[0].nudge.type: unknown_nudge_type`).
fn js_error(error: &Error) -> JsValue {
    let js = js_sys::Error::new(&error_message(error));
    let set = |key: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str(key), value);
    };
    set("kind", &JsValue::from_str(error.kind().name()));
    let diagnostics: js_sys::Array = error.diagnostics().iter().map(diagnostic_js).collect();
    set("diagnostics", &diagnostics);
    js.into()
}

/// A JS value as a JSON tree, through `JSON.stringify` and the crate's strict parser (as
/// `src/wasm.rs` reads configs and states), with the length of that text in bytes.
///
/// # Errors
///
/// - `kind` at `path` when the value has no JSON form.
fn json_tree(
    value: &JsValue,
    kind: ErrorKind,
    path: &str,
    what: &str,
) -> Result<(Value, usize), Error> {
    let not_json = |detail: &str| {
        Error::new(
            kind,
            vec![Diagnostic::error(
                DiagnosticCode::NotJson,
                path.to_owned(),
                msg!("{what} cannot be read as JSON: {detail}"),
            )],
        )
    };
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| {
            let detail = js_sys::Error::from(e)
                .message()
                .as_string()
                .unwrap_or_default();
            not_json(&detail)
        })?
        .as_string()
        .ok_or_else(|| not_json("it is undefined, a function or a symbol"))?;
    let tree = crate::json::parse(&text).map_err(|d| not_json(&d.message))?;
    Ok((tree, text.len()))
}

/// A compiled site config for a storefront page (JS `NudgeEngine`): compile once, then decide.
#[wasm_bindgen(js_name = NudgeEngine)]
pub struct SlimEngine {
    engine: Engine,
}

#[wasm_bindgen(js_class = NudgeEngine)]
impl SlimEngine {
    /// `new NudgeEngine(config: string | object)`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidConfig` with every diagnostic, as [`Engine::compile`].
    #[wasm_bindgen(constructor)]
    pub fn new(config: &JsValue) -> Result<SlimEngine, JsValue> {
        // An object's size is its `JSON.stringify` text's length (the first module counts
        // serde_json's compact text of the tree: the same length but for number spellings such
        // as `1e+21`), so that this module carries no serializer.
        let engine = match config.as_string() {
            Some(text) => Engine::compile(&text),
            None => json_tree(config, ErrorKind::InvalidConfig, "", "the config")
                .and_then(|(tree, text_len)| Engine::compile_tree(&tree, text_len)),
        };
        engine
            .map(|engine| SlimEngine { engine })
            .map_err(|e| js_error(&e))
    }

    /// `engine.decide(sessionState): Decision`, exactly as the first module's `decide`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidRequest` for a bad state, with the native message.
    pub fn decide(&self, session_state_value: &JsValue) -> Result<JsValue, JsValue> {
        let (tree, _) = json_tree(
            session_state_value,
            ErrorKind::InvalidRequest,
            "session_state",
            "session_state",
        )
        .map_err(|e| js_error(&e))?;
        let state = SessionState::from_json_value(&tree).map_err(|e| js_error(&e))?;
        let preview = self.engine.preview(&state).map_err(|e| js_error(&e))?;
        decision_js(&preview.decision())
    }
}
