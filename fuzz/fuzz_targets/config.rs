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
        // docs/contract/caps.md: exit intent, a visitor (holdouts) and a history (caps, cooldowns).
        let history = ["r0", "a", "rule-1"]
            .iter()
            .enumerate()
            .map(|(i, id)| nudge_rules::HistoryEntry {
                rule_id: (*id).to_owned(),
                ms_ago: 1000 * i as u64,
                this_session: i % 2 == 0,
                ..Default::default()
            })
            .collect();
        let visit = SessionState { exit_intent: true, visitor_id: Some("vis_fuzz".to_owned()), history, ..state };
        let _ = engine.preview(&visit).map(|p| (p.to_response_body(), p.next_idle_ms()));
        let _ = Analysis::new(&engine).explain(&visit);
    }
    let _ = Analysis::new(&engine).lint();
    let _ = Analysis::new(&engine).summary();
});
