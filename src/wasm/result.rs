//! `engine.preview`'s result object: the preview result of `src/wire.rs` ([`PreviewResult`],
//! API document 2.4) as a plain JS object, `{ would_fire, nudge: { type, message, cta, reason }
//! | null, reason? }`, with its properties in the order of the JSON body.
//!
//! Built here property by property rather than through serde-wasm-bindgen (about 600 ns more per
//! preview, for a preview of about 1 µs), because that is what keeps the object API fast
//! (docs/PERFORMANCE.md, "The WASM object API"): one call out of the module per property, and the
//! texts of a rule's nudge made into JS strings once per engine ([`ResultObjects`]) instead of on
//! every preview. Only the reason text crosses on each call.
//! `pkg/test/parity.test.mjs` holds the object equal to the JSON body's `data` on 100,000 cases.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::wire::{NudgeResult, PreviewResult};

#[wasm_bindgen]
extern "C" {
    /// A fresh plain object (`new Object()`) whose properties are set one by one below.
    #[wasm_bindgen(js_name = Object)]
    type ResultObject;

    #[wasm_bindgen(constructor, js_class = Object)]
    fn new() -> ResultObject;

    #[wasm_bindgen(method, setter = would_fire, structural)]
    fn set_would_fire(this: &ResultObject, value: bool);

    #[wasm_bindgen(method, setter = nudge, structural)]
    fn set_nudge(this: &ResultObject, value: &JsValue);

    #[wasm_bindgen(method, setter = reason, structural)]
    fn set_reason(this: &ResultObject, value: &str);

    #[wasm_bindgen(method, setter = type, structural)]
    fn set_type(this: &ResultObject, value: &JsValue);

    #[wasm_bindgen(method, setter = message, structural)]
    fn set_message(this: &ResultObject, value: &JsValue);

    #[wasm_bindgen(method, setter = cta, structural)]
    fn set_cta(this: &ResultObject, value: &JsValue);
}

/// A nudge's `type`, `message` and `cta` as JS strings.
struct NudgeText {
    nudge_type: JsValue,
    message: JsValue,
    cta: JsValue,
}

/// The result objects of one engine's previews, with the JS strings of its rules' nudges, made on
/// a rule's first firing.
#[derive(Default)]
pub(super) struct ResultObjects {
    nudge_texts: RefCell<Vec<Option<NudgeText>>>,
}

impl ResultObjects {
    /// `result` as a JS object; `rule` is the index of the rule that fired (the key of the nudge's
    /// texts), if any.
    pub(super) fn make(&self, result: &PreviewResult, rule: Option<usize>) -> JsValue {
        let object = ResultObject::new();
        object.set_would_fire(result.would_fire);
        match &result.nudge {
            Some(nudge) => {
                let js = ResultObject::new();
                self.with_text(rule, nudge, |text| {
                    js.set_type(&text.nudge_type);
                    js.set_message(&text.message);
                    js.set_cta(&text.cta);
                });
                js.set_reason(&nudge.reason);
                object.set_nudge(&js);
            }
            None => object.set_nudge(&JsValue::NULL),
        }
        if let Some(reason) = &result.reason {
            object.set_reason(reason);
        }
        object.into()
    }

    /// Runs `f` on the JS texts of `nudge`, the nudge of rule `rule`: made once per rule, or
    /// afresh without a rule index.
    fn with_text(&self, rule: Option<usize>, nudge: &NudgeResult, f: impl FnOnce(&NudgeText)) {
        let make = || NudgeText {
            nudge_type: JsValue::from_str(nudge.nudge_type.as_str()),
            message: JsValue::from_str(&nudge.message),
            cta: JsValue::from_str(&nudge.cta),
        };
        let (Some(rule), Ok(mut by_rule)) = (rule, self.nudge_texts.try_borrow_mut()) else {
            return f(&make());
        };
        if by_rule.len() <= rule {
            by_rule.resize_with(rule + 1, || None);
        }
        match by_rule.get_mut(rule) {
            Some(slot) => f(slot.get_or_insert_with(make)),
            None => f(&make()),
        }
    }
}
