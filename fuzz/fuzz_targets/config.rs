//! Config text to engine: compilation never panics; a compiled engine previews, explains, maps,
//! lints and summarizes without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nudge_rules::analysis::Analysis;
use nudge_rules::{Engine, SessionState};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(engine) = Engine::compile(text) else {
        return;
    };
    for url in ["/", "/products/x", "/checkout", "/a/b/c"] {
        let state = SessionState { intent_score: 50, page_url: url.to_owned(), idle_ms: 5000, ..Default::default() };
        let _ = engine.preview(&state).map(|p| p.to_response_body());
        let _ = Analysis::new(&engine).explain(&state);
        let _ = Analysis::new(&engine).decision_map(url);
        let _ = Analysis::new(&engine).page_report(url);
    }
    let _ = Analysis::new(&engine).lint();
    let _ = Analysis::new(&engine).summary();
});
