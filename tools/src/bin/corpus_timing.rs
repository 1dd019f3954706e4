//! Replays the fuzz corpora (`fuzz/corpus/<target>/`) through the functions the fuzz targets call
//! and reports the slowest input of each, in microseconds (docs/RELIABILITY.md: every input
//! must take at most 100 ms). Exits 1 when one takes longer.

use std::time::Instant;

use nudge_rules::analysis::Analysis;
use nudge_rules::{Engine, normalize_page_url};

fn main() {
    let storefront =
        Engine::compile(include_str!("../../../examples/storefront.json")).expect("storefront");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus");
    let mut failed = false;
    for target in ["config", "request", "normalize", "fast_path"] {
        let Ok(dir) = std::fs::read_dir(format!("{root}/{target}")) else {
            println!("{target:>10}: no corpus (run scripts/fuzz.sh first)");
            continue;
        };
        let (mut count, mut slowest, mut slowest_name) = (0usize, 0u128, String::new());
        for entry in dir.flatten() {
            let Ok(data) = std::fs::read(entry.path()) else {
                continue;
            };
            let text = String::from_utf8_lossy(&data);
            let start = Instant::now();
            match target {
                "config" => {
                    if let Ok(e) = Engine::compile(&text) {
                        let _ = Analysis::new(&e).decision_map("/products/x");
                        let _ = Analysis::new(&e).lint();
                    }
                }
                "request" => {
                    let _ = storefront.preview_body(&data);
                }
                _ => {
                    let _ = normalize_page_url(&text, false);
                    let _ = normalize_page_url(&text, true);
                }
            }
            let micros = start.elapsed().as_micros();
            count += 1;
            if micros > slowest {
                slowest = micros;
                slowest_name = entry.file_name().to_string_lossy().into_owned();
            }
        }
        println!("{target:>10}: {count} inputs, slowest {slowest} us ({slowest_name})");
        failed |= slowest > 100_000;
    }
    if failed {
        eprintln!("an input took more than 100 ms");
        std::process::exit(1);
    }
}
