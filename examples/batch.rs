//! Batch evaluation: which nudge fires for each of many session states, counted per rule, on all
//! cores, with one compiled engine shared by reference.
//!
//! ```text
//! cargo run --release --example batch < examples/requests/batch.jsonl
//! ```
//!
//! Reads one request body per line of stdin (`{"session_state": {...}}`); prints how many states
//! each rule fires for, how many are in a quiet zone, get no nudge, or are invalid.

use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::thread;

use nudge_rules::{Engine, SessionState};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::compile(include_str!("storefront.json"))?;
    let lines: Vec<String> = io::stdin().lock().lines().collect::<Result<_, _>>()?;

    let workers = thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = lines.len().div_ceil(workers).max(1);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    // Scoped threads borrow the engine: no Arc, no copy.
    thread::scope(|scope| {
        let handles: Vec<_> = lines
            .chunks(chunk)
            .map(|part| {
                scope.spawn(|| {
                    part.iter()
                        .map(|line| outcome(&engine, line))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            for outcome in handle.join().unwrap_or_default() {
                *counts.entry(outcome).or_default() += 1;
            }
        }
    });
    for (outcome, n) in &counts {
        println!("{n:>8}  {outcome}");
    }
    Ok(())
}

/// What happens for one request body: `rule <id>`, `quiet zone <pattern>`, `no nudge`, or
/// `invalid: <error name>`.
fn outcome(engine: &Engine, line: &str) -> String {
    let state = match SessionState::from_request_body(line.as_bytes()) {
        Ok(state) => state,
        Err(e) => return format!("invalid: {}", e.kind()),
    };
    match engine.preview(&state) {
        Ok(p) => match (p.rule(), p.quiet_zone()) {
            (Some(rule), _) => format!("rule {}", rule.id),
            (None, Some(zone)) => format!("quiet zone {zone}"),
            (None, None) => "no nudge".to_owned(),
        },
        Err(e) => format!("invalid: {}", e.kind()),
    }
}
