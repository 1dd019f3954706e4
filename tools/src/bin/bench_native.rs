//! The native side of the Node benchmark (benches/node.mjs): the same state mix
//! (benches/states.json) through the same three entry points as the WASM package, timed the
//! same way (one warm-up, then the best of 9 runs). Prints JSON:
//! `{"preview_fields_ns", "preview_object_ns", "preview_body_ns"}` per call.

use std::hint::black_box;
use std::time::Instant;

use nudge_rules::{Engine, SessionState};

fn best_ns_per_call(calls: usize, mut body: impl FnMut(usize)) -> f64 {
    body(calls);
    (0..9)
        .map(|_| {
            let start = Instant::now();
            body(calls);
            start.elapsed().as_nanos() as f64 / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let engine =
        Engine::compile(include_str!("../../../examples/storefront.json")).expect("storefront");
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../../../benches/states.json")).expect("states.json");
    let states: Vec<SessionState> = doc["states"]
        .as_array()
        .expect("states")
        .iter()
        .map(|s| SessionState {
            intent_score: s["intent_score"].as_u64().unwrap_or(0) as u8,
            page_url: s["page_url"].as_str().unwrap_or("/").to_owned(),
            idle_ms: s["idle_ms"].as_u64().unwrap_or(0) as u32,
            ..Default::default()
        })
        .collect();
    let bodies: Vec<String> = states
        .iter()
        .map(|s| serde_json::json!({ "session_state": s }).to_string())
        .collect();
    let n = states.len();
    let mut sink = 0i64;
    let fields = best_ns_per_call(400_000, |calls| {
        for i in 0..calls {
            let s = &states[i % n];
            sink += engine
                .preview_fields(s.intent_score, black_box(&s.page_url), s.idle_ms)
                .map_or(-3, |p| p.rule_index().map_or(-1, |r| r as i64));
        }
    });
    let object = best_ns_per_call(100_000, |calls| {
        for i in 0..calls {
            let r = engine
                .preview(black_box(&states[i % n]))
                .map(|p| p.to_result());
            sink += r.map_or(0, |r| i64::from(r.would_fire));
        }
    });
    let body = best_ns_per_call(100_000, |calls| {
        for i in 0..calls {
            sink += engine
                .preview_body(black_box(bodies[i % n].as_bytes()))
                .map_or(0, |b| b.len() as i64);
        }
    });
    println!(
        "{}",
        serde_json::json!({
            "preview_fields_ns": fields.round(),
            "preview_object_ns": object.round(),
            "preview_body_ns": body.round(),
            "sink": sink % 7,
        })
    );
}
