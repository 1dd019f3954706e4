//! Compiles configs at docs/contract/config.md's limits and prints the time each takes, for docs/RELIABILITY.md.
//! Peak memory: run under `/usr/bin/time -v` (`make limits` does), one scenario at a time:
//!
//! ```text
//! cargo run --release -p nudge-rules-tools --bin limits -- [all|rules|patterns|text-literal|text-globs|text-short-literal|text-short-globs|text-prefix-globs|text-unanchored-globs|text-negated-globs|text-byte-class-globs|text-regex-globs]
//! ```

use std::time::Instant;

use serde_json::{Value, json};

fn rule(i: usize, pages: Vec<String>, exclude: Vec<String>) -> Value {
    json!({"id": format!("r{i}"), "nudge": {"type": "toast", "message": "m".repeat(500), "cta": "c".repeat(80)},
           "when": {"min_intent_score": i % 101, "min_idle_ms": i * 1000, "pages": pages, "exclude_pages": exclude}})
}

/// Fills rules with patterns made by `pattern(rule, k)` until the text is just under 1 MiB.
fn fill_to_one_mib(pattern: impl Fn(usize, usize) -> String) -> String {
    let mut rules: Vec<Value> = Vec::new();
    let mut size = 0;
    'outer: for i in 0..1000 {
        let mut pages = Vec::new();
        for k in 0..100 {
            let p = pattern(i, k);
            if size + p.len() + 4 > (1 << 20) - 200_000 {
                rules.push(rule(i, pages, vec![]));
                break 'outer;
            }
            size += p.len() + 3;
            pages.push(p);
        }
        size += 700;
        rules.push(rule(i, pages, vec![]));
    }
    json!({"version": 1, "rules": rules}).to_string()
}

fn scenario(name: &str) -> String {
    match name {
        // 1,000 rules with 500-character messages and 1,000 quiet zones.
        "rules" => {
            let rules: Vec<Value> = (0..1000)
                .map(|i| rule(i, vec![format!("/s{i}/**")], vec![format!("/s{i}/x")]))
                .collect();
            let quiet: Vec<String> = (0..1000).map(|i| format!("/q{i}/**")).collect();
            json!({"version": 1, "quiet_zones": quiet, "rules": rules}).to_string()
        }
        // 1,000 rules with 100 literal-prefix patterns in pages and 100 in exclude_pages.
        "patterns" => {
            let rules: Vec<Value> = (0..40)
                .map(|i| {
                    rule(
                        i,
                        (0..100).map(|k| format!("/a{i}/b{k}/**")).collect(),
                        (0..100).map(|k| format!("/a{i}/b{k}/x")).collect(),
                    )
                })
                .collect();
            json!({"version": 1, "rules": rules}).to_string()
        }
        // Close to 1 MiB of literal and `X/**` patterns (the common kind).
        "text-literal" => fill_to_one_mib(|i, k| format!("/c{i}/p{k}/{}/**", "l".repeat(40))),
        // Close to 1 MiB of wildcard globs of up to 512 bytes, all matched by globset's regexes.
        "text-globs" => fill_to_one_mib(|i, k| format!("/c{i}/*/p{k}-*/{}", "[a-c]?".repeat(80))),
        // Close to 1 MiB of short literal patterns (about 41,000): the same count as the next.
        "text-short-literal" => fill_to_one_mib(|i, k| format!("/c{i}/x/p{k}")),
        // Close to 1 MiB of short wildcard globs (about 41,000 patterns).
        "text-short-globs" => fill_to_one_mib(|i, k| format!("/c{i}/*/p{k}")),
        // Close to 1 MiB of short globs without a literal segment, indexed by the literal start
        // of the first segment.
        "text-prefix-globs" => fill_to_one_mib(|i, k| format!("/c{i}*/*/p{k}*")),
        // Close to 1 MiB of short globs that no index narrows down, so that every preview tries
        // each of them (the matching worst case).
        "text-unanchored-globs" => fill_to_one_mib(|i, k| format!("/*c{i}/*/*p{k}*")),
        // Close to 1 MiB of globs with a negated class (it can match `/`: two segment globs each).
        "text-negated-globs" => fill_to_one_mib(|i, k| format!("/c{i}/[!x]*/p{k}")),
        // Close to 1 MiB of globs with a non-ASCII class member (the class is a set of bytes).
        "text-byte-class-globs" => fill_to_one_mib(|i, k| format!("/c{i}/[éa]*/p{k}")),
        // Close to 1 MiB of globs with a class inside alternates, a form left to globset's
        // regexes.
        "text-regex-globs" => fill_to_one_mib(|i, k| format!("/c{i}/{{a*,[bc]}}/p{k}")),
        other => {
            eprintln!("unknown scenario {other}");
            std::process::exit(2);
        }
    }
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".to_owned());
    let names = [
        "rules",
        "patterns",
        "text-literal",
        "text-globs",
        "text-short-literal",
        "text-short-globs",
        "text-prefix-globs",
        "text-unanchored-globs",
        "text-negated-globs",
        "text-byte-class-globs",
        "text-regex-globs",
    ];
    for name in names.iter().filter(|n| which == "all" || which == **n) {
        let text = scenario(name);
        let start = Instant::now();
        let result = nudge_rules::Engine::compile(&text);
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let outcome = match &result {
            Ok(e) => {
                // Previews of paths that no pattern matches, so every candidate is tried: one
                // ordinary, one with every letter and digit of the patterns (no byte filter).
                let mut times = Vec::new();
                for page_url in ["/c999x/y/z", "/c0123456789p/q/p0123456789x"] {
                    let state = nudge_rules::SessionState {
                        intent_score: 100,
                        page_url: page_url.into(),
                        idle_ms: 86_400_000,
                        ..Default::default()
                    };
                    let runs = 100;
                    let start = Instant::now();
                    for _ in 0..runs {
                        std::hint::black_box(e.preview(&state).ok());
                    }
                    let us = start.elapsed().as_secs_f64() * 1e6 / f64::from(runs);
                    times.push(format!("{us:.1}"));
                }
                format!(
                    "ok, {} rules, preview {} us",
                    e.config().rules.len(),
                    times.join(" / ")
                )
            }
            Err(e) => format!(
                "error: {}",
                e.diagnostics()
                    .first()
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ),
        };
        println!(
            "{name:>13}: {:>8} bytes, compile {ms:8.1} ms, {outcome}",
            text.len()
        );
    }
}
