//! Differential: the canonical-path fast path and the full normalizer agree on every input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nudge_rules::{normalize_page_url, normalize_page_url_full};

fuzz_target!(|data: &[u8]| {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    for case_sensitive in [false, true] {
        let fast = normalize_page_url(url, case_sensitive).map(|p| p.into_owned());
        let full = normalize_page_url_full(url, case_sensitive);
        assert_eq!(fast, full, "{url:?} case_sensitive={case_sensitive}");
    }
});
