//! The page URLs a WASM engine keeps (the package's URL cache; docs/PERFORMANCE.md, "WASM build
//! profile"): a page URL previewed again is named by its index instead of being copied across
//! the boundary again.
//!
//! All of it lives here: the texts, their index (a JS `Map` from the URL string to its position,
//! which `pkg/index.js` only reads, because a lookup of a JS string costs 6 to 8 ns in JS and a
//! call out of the module here), the bounds and when to start afresh. The package's wrapper looks
//! a URL up in [`PageUrls::index`] and passes its index to the `…At` previews
//! ([`PageUrls::with_at`]); on a miss it passes the URL to the `…Keep` previews, which copy it in
//! and keep it ([`PageUrls::with_kept`]).

use std::cell::{Cell, RefCell};

use wasm_bindgen::prelude::*;

/// How many page URLs one engine keeps; when full, all are forgotten and the next ones kept
/// afresh.
const MAX_KEPT_PAGE_URLS: usize = 1024;

/// The longest page URL kept, in UTF-16 units (a JS string's `length`): 1,024 of them are at
/// most 768 KB of UTF-8. A longer URL is copied on every call.
const MAX_KEPT_PAGE_URL_LENGTH: usize = 256;

#[wasm_bindgen]
extern "C" {
    /// A JS `Map` from a page URL (the JS string) to its index in [`PageUrls`].
    #[wasm_bindgen(js_name = Map)]
    #[derive(Clone)]
    pub(super) type UrlIndex;

    #[wasm_bindgen(constructor, js_class = Map)]
    fn new() -> UrlIndex;

    #[wasm_bindgen(method, js_class = Map, js_name = set)]
    fn set(this: &UrlIndex, url: &JsValue, index: u32);

    #[wasm_bindgen(method, js_class = Map, js_name = set)]
    pub(super) fn set_x(this: &UrlIndex, url: &JsValue, index: u32);

    #[wasm_bindgen(method, js_class = Map, js_name = clear)]
    fn clear(this: &UrlIndex);
}

/// A page URL as the module holds it.
pub(super) struct PageUrl {
    /// The URL as wasm-bindgen copies any JS string (a lone surrogate becomes U+FFFD), so that a
    /// preview of a kept URL is the preview of the string.
    pub(super) text: String,
    /// [`PageUrl::is_well_formed`], found on first use: only the object API asks, and the scan
    /// is a visible share of keeping a URL (20 to 40 ns of the 450 that `previewFields` of a new
    /// URL costs).
    well_formed: Cell<Option<bool>>,
}

impl PageUrl {
    /// A URL copied into the module.
    pub(super) fn new(text: String) -> Self {
        PageUrl {
            text,
            well_formed: Cell::new(None),
        }
    }

    /// No U+FFFD in the text, so the JS string had no lone surrogate either, and its JSON form is
    /// the text. The object API's fast path takes only such URLs; the others, and the rare URL
    /// with a real U+FFFD, go through `JSON.stringify` for the exact answer.
    pub(super) fn is_well_formed(&self) -> bool {
        if let Some(known) = self.well_formed.get() {
            return known;
        }
        let well_formed = self.text.is_ascii() || !self.text.contains(char::REPLACEMENT_CHARACTER);
        self.well_formed.set(Some(well_formed));
        well_formed
    }
}

/// The page URLs one engine has seen, and their index for the package's wrapper.
pub(super) struct PageUrls {
    /// URL to position in `urls`.
    index: UrlIndex,
    urls: RefCell<Vec<PageUrl>>,
}

impl PageUrls {
    /// None kept yet.
    pub(super) fn new() -> Self {
        PageUrls {
            index: UrlIndex::new(),
            urls: RefCell::new(Vec::new()),
        }
    }

    /// The JS `Map` from each kept URL to its index: what `pkg/index.js` looks a URL up in.
    pub(super) fn index(&self) -> &UrlIndex {
        &self.index
    }

    /// Runs `f` on the kept URL at `index` (from [`PageUrls::index`]); `None` for an index no
    /// longer valid.
    pub(super) fn with_at<R>(&self, index: u32, f: impl FnOnce(Option<&PageUrl>) -> R) -> R {
        let urls = self.urls.try_borrow();
        let url = match (&urls, usize::try_from(index)) {
            (Ok(urls), Ok(index)) => urls.get(index),
            _ => None,
        };
        f(url)
    }

    /// Keeps the page URL `text` unless it is too long, with `key`, the JS string it was copied
    /// from, in the index, and runs `f` on it.
    pub(super) fn with_kept<R>(
        &self,
        text: String,
        key: &JsValue,
        f: impl FnOnce(&PageUrl) -> R,
    ) -> R {
        // A JS string's length is at most its UTF-8 length, so most URLs need no count.
        let too_long = text.len() > MAX_KEPT_PAGE_URL_LENGTH
            && text.encode_utf16().count() > MAX_KEPT_PAGE_URL_LENGTH;
        let (false, Ok(mut urls)) = (too_long, self.urls.try_borrow_mut()) else {
            return f(&PageUrl::new(text));
        };
        if urls.len() >= MAX_KEPT_PAGE_URLS {
            self.index.clear();
            urls.clear();
        }
        let Ok(index) = u32::try_from(urls.len()) else {
            return f(&PageUrl::new(text));
        };
        self.index.set(key, index);
        let url = PageUrl::new(text);
        let out = f(&url);
        urls.push(url);
        out
    }
}
