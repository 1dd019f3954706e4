//! The wasm-bindgen facade behind the npm package in `pkg/` (feature `wasm`): the JS API of
//! `docs/JS-API.md`, mapped one to one onto the native API.
//!
//! A thin layer: every decision is the native crate's. This module only converts values (results
//! with serde-wasm-bindgen's [`Serializer::json_compatible`], so they are plain JS objects and
//! `None` is `null`; arguments through `JSON.stringify`, see below) and turns [`Error`]s into
//! thrown JS `Error`s carrying `kind` and `diagnostics`.
//!
//! A config or state given as a JS object is converted with `JSON.stringify` and the crate's strict
//! parser (no recursion without a limit inside the module); a config object is compiled with
//! [`Engine::compile_value`]: its diagnostics have no line and column (`null`).
//!
//! The preview, the package's hot path, has two helpers here, so that `pkg/index.js` only has to
//! pass a plain session state as three primitives: `wasm/result.rs` makes the result object of
//! `src/wire.rs`'s [`PreviewResult`](crate::wire::PreviewResult), and `wasm/page_urls.rs` keeps
//! the page URLs an engine has seen (their texts, their index, its bounds), so that a URL
//! previewed again is named by its index instead of being copied again.
//!
//! Config as code (docs/contract/as-code.md: scenarios, coverage, replay, diff) is in `wasm/as_code.rs`, built
//! only with the feature `config-as-code` (a second module of the package); what the editor asks
//! besides (a pattern checked alone, the limits) in `wasm/editor.rs`.

#[cfg(feature = "config-as-code")]
mod as_code;
mod editor;
mod page_urls;
mod result;

use crate::code::DiagnosticCode;
use serde::Serialize;
use serde_json::Value;
use serde_wasm_bindgen::Serializer;
use wasm_bindgen::prelude::*;

use crate::analysis::{Analysis, Validation, validate_config, validate_config_value};
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, ErrorKind};
use crate::limits::{MAX_IDLE_MS, MAX_INTENT_SCORE};
use crate::normalize::normalize_page_url;
use crate::preview::Preview;
use crate::request::SessionState;
use page_urls::{PageUrl, PageUrls};
use result::ResultObjects;

/// A value as a plain JS value: objects as plain objects (not `Map`s), `None` as `null`.
fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&Serializer::json_compatible())
        .map_err(|e| js_sys::Error::new(&e.to_string()).into())
}

/// Sets `target[key] = value`. Setting a property on a fresh `Error` object cannot fail; were it
/// to, the error is still thrown, only without that property.
fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(target, &JsValue::from_str(key), value);
}

/// A native error as a thrown JS `Error`: the native message, `kind` (`"InvalidConfig"` or
/// `"InvalidRequest"`) and `diagnostics`.
fn js_error(error: &Error) -> JsValue {
    let js = js_sys::Error::new(&error.to_string());
    set(&js, "kind", &JsValue::from_str(error.kind().name()));
    let diagnostics = to_js(error.diagnostics()).unwrap_or_else(|_| js_sys::Array::new().into());
    set(&js, "diagnostics", &diagnostics);
    js.into()
}

/// A `string | object` config argument: text as the caller wrote it (diagnostics have line and
/// column), or a JSON tree converted from a JS object (they do not).
enum ConfigInput {
    Text(String),
    Tree(Value),
}

impl ConfigInput {
    /// Reads a `string | object` config argument.
    ///
    /// # Errors
    ///
    /// - `InvalidConfig` when the value has no JSON form (see [`json_tree`]).
    fn from_js(config: &JsValue) -> Result<ConfigInput, Error> {
        if let Some(text) = config.as_string() {
            return Ok(ConfigInput::Text(text));
        }
        json_tree(config, ErrorKind::InvalidConfig, "", "the config").map(ConfigInput::Tree)
    }

    fn compile(&self) -> Result<Engine, Error> {
        match self {
            ConfigInput::Text(text) => Engine::compile(text),
            ConfigInput::Tree(tree) => Engine::compile_value(tree),
        }
    }
}

/// A JS value as a JSON tree, through `JSON.stringify` and the crate's strict parser: fields
/// that are `undefined` are absent (as in JSON); cycles, BigInts and nesting deeper than the
/// parser's limit (128) are errors, never a stack overflow inside the module.
///
/// # Errors
///
/// - `kind` at `path` when the value has no JSON form.
fn json_tree(value: &JsValue, kind: ErrorKind, path: &str, what: &str) -> Result<Value, Error> {
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| {
            let detail = js_sys::Error::from(e)
                .message()
                .as_string()
                .unwrap_or_default();
            not_json(kind, path, what, &detail)
        })?
        .as_string()
        .ok_or_else(|| not_json(kind, path, what, "it is undefined, a function or a symbol"))?;
    crate::json::parse(&text).map_err(|d| not_json(kind, path, what, &d.message))
}

/// The error for a JS value that has no JSON form.
fn not_json(kind: ErrorKind, path: &str, what: &str, detail: &str) -> Error {
    Error::new(
        kind,
        vec![Diagnostic::error(
            DiagnosticCode::NotJson,
            path.to_owned(),
            format!("{what} cannot be read as JSON: {detail}"),
        )],
    )
}

/// Reads a `session_state` argument as [`SessionState::from_json_value`] does, so that messages
/// are the native ones. A field whose value is `undefined` counts as absent, as in JSON
/// (`{ idle_ms: undefined }` means the default idle time).
fn session_state(state: &JsValue) -> Result<SessionState, Error> {
    let tree = json_tree(
        state,
        ErrorKind::InvalidRequest,
        "session_state",
        "session_state",
    )?;
    SessionState::from_json_value(&tree)
}

/// An integer-valued JS number in `0..=max`, or `None`.
fn whole_number(n: f64, max: u32) -> Option<u32> {
    // `as` saturates; the range check and the round trip reject fractions, NaN and infinities.
    let whole = n as u32;
    (n >= 0.0 && n <= f64::from(max) && f64::from(whole) == n).then_some(whole)
}

/// `previewFields` code for invalid input.
const INVALID: i32 = -3;

/// The `previewFields` code of a preview: the index (config order) of the rule that fires, `-1`
/// when none does, `-2` in a quiet zone.
fn outcome_code(preview: &Preview<'_>) -> i32 {
    match preview.rule_index() {
        Some(index) => i32::try_from(index).unwrap_or(INVALID),
        None if preview.quiet_zone().is_some() => -2,
        None => -1,
    }
}

/// A compiled site config (JS `NudgeEngine`): compile once, then preview per visitor.
#[wasm_bindgen(js_name = NudgeEngine)]
pub struct WasmEngine {
    engine: Engine,
    /// The page URLs this engine keeps, so that a URL previewed again does not cross the boundary
    /// again (`wasm/page_urls.rs`).
    page_urls: PageUrls,
    /// Makes `preview`'s result objects, with the JS texts of the nudges of the rules that fired
    /// (`wasm/result.rs`).
    result_objects: ResultObjects,
}

#[wasm_bindgen(js_class = NudgeEngine)]
impl WasmEngine {
    /// `new NudgeEngine(config: string | object)`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidConfig` with every diagnostic, as [`Engine::compile`].
    #[wasm_bindgen(constructor)]
    pub fn new(config: &JsValue) -> Result<WasmEngine, JsValue> {
        ConfigInput::from_js(config)
            .and_then(|input| input.compile())
            .map(|engine| WasmEngine {
                engine,
                page_urls: PageUrls::new(),
                result_objects: ResultObjects::default(),
            })
            .map_err(|e| js_error(&e))
    }

    /// `engine.preview(sessionState): PreviewResult`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidRequest` for a bad state, with the native message.
    pub fn preview(&self, session_state_value: &JsValue) -> Result<JsValue, JsValue> {
        let state = session_state(session_state_value).map_err(|e| js_error(&e))?;
        let preview = self.engine.preview(&state).map_err(|e| js_error(&e))?;
        Ok(self.result_object(&preview))
    }

    /// `engine.decide(sessionState): Decision`: the structured decision (docs/contract/storefront.md, docs/contract/caps.md) of the
    /// state (its docs/contract/caps.md fields included): the rule that fires and its whole nudge, the rule the
    /// visitor is held out from, the quiet zone, and `next_idle_ms` (when a rule would fire if
    /// the visitor keeps idling: what a storefront sets its timer by). No reason text.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidRequest` for a bad state, with the native message, as `preview`.
    pub fn decide(&self, session_state_value: &JsValue) -> Result<JsValue, JsValue> {
        let state = session_state(session_state_value).map_err(|e| js_error(&e))?;
        let preview = self.engine.preview(&state).map_err(|e| js_error(&e))?;
        to_js(&preview.decision())
    }

    /// The shape of a plain `session_state` as the fast path below takes it: for each field of
    /// [`SessionState::FIELDS`] (intent score, page URL, idle time, in the order of the
    /// parameters), `[name, typeof, required]`: `["intent_score", "number", true]`,
    /// `["page_url", "string", true]`, `["idle_ms", "number", false]`. Not public:
    /// `pkg/index.js` checks a state against it before passing its values as primitives (made in
    /// the module, the check would take a call out of it per value).
    #[wasm_bindgen(js_name = _sessionStateShape, skip_typescript)]
    pub fn session_state_shape() -> Result<JsValue, JsValue> {
        let [intent_score, page_url, idle_ms, ..] = SessionState::FIELDS;
        to_js(&[
            (intent_score, "number", true),
            (page_url, "string", true),
            (idle_ms, "number", false),
        ])
    }

    /// The object API's fast path for a plain `session_state` (`preview` in `pkg/index.js`, not
    /// public): [`WasmEngine::preview`] of its values, of the types
    /// [`WasmEngine::session_state_shape`] gives, for a page URL not kept yet: `page_url` is its
    /// text, `key` the same JS string for the index of kept URLs. `undefined` when the engine
    /// rejects the values, or the URL is not well formed: the caller then takes `preview`, whose
    /// error is the exact one.
    #[wasm_bindgen(js_name = _previewStateKeep, skip_typescript)]
    pub fn preview_state_keep(
        &self,
        intent_score: f64,
        page_url: String,
        key: &JsValue,
        idle_ms: Option<f64>,
    ) -> JsValue {
        self.page_urls.with_kept(page_url, key, |url| {
            self.preview_state_of(intent_score, Some(url), idle_ms)
        })
    }

    /// [`WasmEngine::preview_state_keep`] of a kept URL, by its index in
    /// [`WasmEngine::page_url_index`] (not public; `pkg/index.js`); `undefined` for an index no
    /// longer valid.
    #[wasm_bindgen(js_name = _previewStateAt, skip_typescript)]
    pub fn preview_state_at(
        &self,
        intent_score: f64,
        page_url_index: u32,
        idle_ms: Option<f64>,
    ) -> JsValue {
        self.page_urls.with_at(page_url_index, |url| {
            self.preview_state_of(intent_score, url, idle_ms)
        })
    }

    fn preview_state_of(
        &self,
        intent_score: f64,
        url: Option<&PageUrl>,
        idle_ms: Option<f64>,
    ) -> JsValue {
        url.filter(|url| url.is_well_formed())
            .and_then(|url| {
                let idle_ms = idle_ms.unwrap_or(f64::from(SessionState::DEFAULT_IDLE_MS));
                self.preview_primitives(intent_score, &url.text, idle_ms)
            })
            .map_or(JsValue::UNDEFINED, |preview| self.result_object(&preview))
    }

    /// The result object of a preview (`wasm/result.rs`).
    fn result_object(&self, preview: &Preview<'_>) -> JsValue {
        self.result_objects
            .make(&preview.to_result(), preview.rule_index())
    }

    /// `engine.previewBody(requestBodyText): string`: the 200 body or the InvalidRequest error
    /// body, exactly as a server sends it. Never throws for a bad request.
    #[wasm_bindgen(js_name = previewBody)]
    pub fn preview_body(&self, request_body: &str) -> String {
        self.engine
            .preview_body(request_body.as_bytes())
            .unwrap_or_else(|e| e.to_body())
    }

    /// `engine.previewResponse(requestBodyText): { status, body }`: the HTTP status and body a
    /// server answers with, as [`Engine::preview_body`]: 200 and the result, or 400 and the
    /// InvalidRequest error body. Never throws for a bad request.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for a status and a string.
    #[wasm_bindgen(js_name = previewResponse)]
    pub fn preview_response(&self, request_body: &str) -> Result<JsValue, JsValue> {
        to_js(&HttpResponse::of(
            self.engine.preview_body(request_body.as_bytes()),
        ))
    }

    /// `engine.previewFields(intentScore, pageUrl, idleMs): number`: the index (config order) of
    /// the rule that fires, `-1` when none does, `-2` in a quiet zone, `-3` for invalid input.
    #[wasm_bindgen(js_name = previewFields)]
    pub fn preview_fields(&self, intent_score: f64, page_url: &str, idle_ms: f64) -> i32 {
        self.preview_primitives(intent_score, page_url, idle_ms)
            .map_or(INVALID, |p| outcome_code(&p))
    }

    /// [`WasmEngine::preview_fields`] of a page URL not kept yet, which it keeps (not public;
    /// `pkg/index.js`): `page_url` is its text, `key` the same JS string for the index of kept
    /// URLs.
    #[wasm_bindgen(js_name = _previewFieldsKeep, skip_typescript)]
    pub fn preview_fields_keep(
        &self,
        intent_score: f64,
        page_url: String,
        key: &JsValue,
        idle_ms: f64,
    ) -> i32 {
        self.page_urls.with_kept(page_url, key, |url| {
            self.fields_code(intent_score, Some(url), idle_ms)
        })
    }

    /// [`WasmEngine::preview_fields`] of a kept URL, by its index in
    /// [`WasmEngine::page_url_index`] (not public; `pkg/index.js`); `-3` for an index no longer
    /// valid.
    #[wasm_bindgen(js_name = _previewFieldsAt, skip_typescript)]
    pub fn preview_fields_at(&self, intent_score: f64, page_url_index: u32, idle_ms: f64) -> i32 {
        self.page_urls.with_at(page_url_index, |url| {
            self.fields_code(intent_score, url, idle_ms)
        })
    }

    fn fields_code(&self, intent_score: f64, url: Option<&PageUrl>, idle_ms: f64) -> i32 {
        url.and_then(|url| self.preview_primitives(intent_score, &url.text, idle_ms))
            .map_or(INVALID, |p| outcome_code(&p))
    }

    /// The index of the page URLs this engine keeps, a JS `Map` from URL to index (not public):
    /// `pkg/index.js` looks a URL up in it and passes the index to the `…At` previews, or the URL
    /// to the `…Keep` previews when it is not there. Only this module writes it
    /// (`wasm/page_urls.rs`).
    #[wasm_bindgen(js_name = _pageUrlIndex, skip_typescript)]
    pub fn page_url_index(&self) -> JsValue {
        self.page_urls.index().clone().into()
    }

    /// A preview of JS numbers and a URL; `None` for a number that is not a whole number in its
    /// range, or a URL that docs/contract/urls.md rejects.
    fn preview_primitives<'a>(
        &'a self,
        intent_score: f64,
        page_url: &'a str,
        idle_ms: f64,
    ) -> Option<Preview<'a>> {
        let intent = whole_number(intent_score, u32::from(MAX_INTENT_SCORE))
            .and_then(|n| u8::try_from(n).ok())?;
        let idle = whole_number(idle_ms, MAX_IDLE_MS)?;
        self.engine.preview_fields(intent, page_url, idle).ok()
    }

    /// `engine.config(): Config`: the validated config with defaults filled in.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for a config.
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js(self.engine.config())
    }

    /// `engine.explain(sessionState): Explanation`.
    ///
    /// # Errors
    ///
    /// - Throws `InvalidRequest` for a bad state as [`WasmEngine::preview`]; a rejected `page_url`
    ///   is reported inside the explanation.
    pub fn explain(&self, session_state_value: &JsValue) -> Result<JsValue, JsValue> {
        let state = session_state(session_state_value).map_err(|e| js_error(&e))?;
        let explanation = Analysis::new(&self.engine)
            .explain(&state)
            .map_err(|e| js_error(&e))?;
        to_js(&explanation)
    }

    /// `engine.decisionMap(pageUrl): DecisionMap`. A rejected URL is reported inside the map
    /// (`url_error`), as `explain` and `pageReport` do.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for a map.
    #[wasm_bindgen(js_name = decisionMap)]
    pub fn decision_map(&self, page_url: &str) -> Result<JsValue, JsValue> {
        to_js(&Analysis::new(&self.engine).decision_map(page_url))
    }

    /// `engine.lint(): Diagnostic[]` (warnings).
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for diagnostics.
    pub fn lint(&self) -> Result<JsValue, JsValue> {
        to_js(&Analysis::new(&self.engine).lint())
    }

    /// `engine.summary(): { rule_id, text }[]`: one plain sentence per rule.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for summaries.
    pub fn summary(&self) -> Result<JsValue, JsValue> {
        to_js(&Analysis::new(&self.engine).summary())
    }

    /// `engine.pageReport(pageUrl): PageReport`. A rejected URL is reported inside the report.
    ///
    /// # Errors
    ///
    /// - Only if serialization failed, which it does not for a report.
    #[wasm_bindgen(js_name = pageReport)]
    pub fn page_report(&self, page_url: &str) -> Result<JsValue, JsValue> {
        to_js(&Analysis::new(&self.engine).page_report(page_url))
    }
}

/// `normalizePageUrl(url, options?: { caseSensitive?: boolean }): string`.
///
/// # Errors
///
/// - Throws an `Error` with `code` (the [`UrlError::code`](crate::UrlError::code)), `kind`
///   `"InvalidRequest"` and one diagnostic, when the URL is rejected; a `TypeError` when
///   `options.caseSensitive` is present but not a boolean.
#[wasm_bindgen(js_name = normalizePageUrl)]
pub fn normalize_page_url_js(url: &str, options: &JsValue) -> Result<String, JsValue> {
    let case_sensitive = if options.is_object() {
        let flag = js_sys::Reflect::get(options, &JsValue::from_str("caseSensitive"))?;
        match flag.as_bool() {
            Some(flag) => flag,
            None if flag.is_undefined() || flag.is_null() => false,
            None => {
                return Err(
                    js_sys::TypeError::new("options.caseSensitive must be a boolean").into(),
                );
            }
        }
    } else {
        false
    };
    match normalize_page_url(url, case_sensitive) {
        Ok(path) => Ok(path.into_owned()),
        Err(e) => {
            let error = Error::new(
                ErrorKind::InvalidRequest,
                vec![Diagnostic::error(e.code(), String::new(), e.to_string())],
            );
            let js = js_error(&error);
            set(&js, "code", &JsValue::from_str(e.code().as_str()));
            Err(js)
        }
    }
}

/// A status and body as a server answers them (`{ status, body }` in JS).
#[derive(Serialize)]
struct HttpResponse {
    status: u16,
    body: String,
}

impl HttpResponse {
    fn of(answer: Result<String, Error>) -> Self {
        match answer {
            Ok(body) => HttpResponse { status: 200, body },
            Err(e) => HttpResponse {
                status: e.http_status(),
                body: e.to_body(),
            },
        }
    }
}

/// `previewResponse(config: string | object, requestBodyText): { status, body }`: the whole
/// endpoint in one call, as [`crate::preview_response`]: an invalid config gives 500 and the
/// engine's InvalidConfig error body, an invalid request 400 and its InvalidRequest body, else
/// 200 and the result. Never throws.
///
/// # Errors
///
/// - Only if serialization failed, which it does not for a status and a string.
#[wasm_bindgen(js_name = previewResponse)]
pub fn preview_response_js(config: &JsValue, request_body: &str) -> Result<JsValue, JsValue> {
    let answer = ConfigInput::from_js(config)
        .and_then(|input| input.compile())
        .and_then(|engine| engine.preview_body(request_body.as_bytes()));
    to_js(&HttpResponse::of(answer))
}

/// `validateConfig(config: string | object): { valid, errors, warnings }`. Never throws.
#[wasm_bindgen(js_name = validateConfig)]
pub fn validate_config_js(config: &JsValue) -> JsValue {
    let validation = match ConfigInput::from_js(config) {
        Ok(ConfigInput::Text(text)) => validate_config(&text),
        Ok(ConfigInput::Tree(tree)) => validate_config_value(&tree),
        Err(e) => Validation::of(Err(e)),
    };
    to_js(&validation).unwrap_or(JsValue::NULL)
}
