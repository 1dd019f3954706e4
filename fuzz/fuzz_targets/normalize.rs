//! page_url to normalized path: never panics; an accepted URL gives a canonical path (starts with
//! '/', no empty, '.' or '..' segments, no trailing slash, no ';', '\\' or '%') that normalizes to
//! itself once the three characters a URL carries only escaped (space, '?', '#') are escaped,
//! when that escaped form is within the page URL limit (escaping lengthens it: a path just under
//! the limit may escape to one over it, which is refused as too long).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nudge_rules::limits::MAX_PAGE_URL_BYTES;
use nudge_rules::normalize_page_url;

fuzz_target!(|data: &[u8]| {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    for case_sensitive in [false, true] {
        let Ok(path) = normalize_page_url(url, case_sensitive) else {
            continue;
        };
        assert!(path.starts_with('/'), "{url:?} -> {path:?}");
        assert!(path == "/" || !path.ends_with('/'), "{url:?} -> {path:?}");
        assert!(!path.contains("//") && !path.contains(['\\', '%', ';']), "{url:?} -> {path:?}");
        assert!(path.split('/').skip(1).all(|s| s != "." && s != ".."), "{url:?} -> {path:?}");
        assert!(!path.chars().any(char::is_control), "{url:?} -> {path:?}");
        let as_url = path.replace(' ', "%20").replace('?', "%3F").replace('#', "%23");
        if as_url.len() > MAX_PAGE_URL_BYTES {
            continue;
        }
        let again = normalize_page_url(&as_url, case_sensitive);
        assert_eq!(again.as_deref().ok(), Some(path.as_ref()), "not idempotent: {url:?}");
    }
});
