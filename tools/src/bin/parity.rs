//! The native side of the native/WASM parity test (pkg/test/parity.test.mjs): reads JSON lines
//! `{"config": TEXT, "bodies": [TEXT, ...]}` on stdin and writes, per line, the JSON array of
//! response bodies (the 200 body, or the error body of an InvalidRequest or InvalidConfig).

use std::io::{self, BufRead, Write};

fn main() {
    let stdin = io::stdin();
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(case) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let config = case["config"].as_str().unwrap_or_default();
        let bodies = case["bodies"].as_array().cloned().unwrap_or_default();
        let answers: Vec<String> = match nudge_rules::Engine::compile(config) {
            Err(e) => bodies.iter().map(|_| e.to_body()).collect(),
            Ok(engine) => bodies
                .iter()
                .map(|b| {
                    let body = b.as_str().unwrap_or_default();
                    engine
                        .preview_body(body.as_bytes())
                        .unwrap_or_else(|e| e.to_body())
                })
                .collect(),
        };
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&answers).unwrap_or_default()
        );
    }
}
