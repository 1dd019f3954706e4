//! The web-platform-tests URL test data (`tests/data/urltestdata.json`, a copy of
//! web-platform-tests' url/resources/urltestdata.json; BSD 3-Clause) through the normalizer:
//! no panic on any input, and for every http(s) entry that parses, either a docs/contract/urls.md rejection or
//! the browser's reading of its pathname (docs/contract/urls.md step 6: the WHATWG pathname decoded once, NFKC,
//! lowercased, `;` parameters cut, empty segments dropped).

use crate::common::browser_reading;
use nudge_rules::normalize_page_url;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/urltestdata.json"
    ))
    .unwrap();
    let all: Vec<Value> = serde_json::from_str(&text).unwrap();
    all.into_iter().filter(Value::is_object).collect()
}

#[test]
fn no_input_panics() {
    let cases = cases();
    assert!(cases.len() > 800);
    for case in &cases {
        for field in ["input", "base", "href", "pathname"] {
            if let Some(s) = case[field].as_str() {
                for case_sensitive in [false, true] {
                    let _ = normalize_page_url(s, case_sensitive);
                }
            }
        }
    }
}

#[test]
fn http_entries_are_read_as_a_browser_reads_them_or_rejected() {
    let mut accepted = 0;
    let mut rejected = 0;
    let mut failures = Vec::new();
    for case in cases() {
        let parses = case.get("failure").is_none();
        let http = matches!(case["protocol"].as_str(), Some("http:" | "https:"));
        if !parses || !http {
            continue;
        }
        let input = case["input"].as_str().unwrap();
        let pathname = case["pathname"].as_str().unwrap();
        match normalize_page_url(input, false) {
            Err(_) => rejected += 1,
            Ok(ours) => {
                accepted += 1;
                let want = browser_reading(pathname, false);
                if want.as_deref() != Some(ours.as_ref()) {
                    failures.push(format!(
                        "{input:?}: ours {ours:?}, pathname {pathname:?} -> {want:?}"
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Both outcomes occur: the corpus exercises acceptance and rejection.
    assert!(
        accepted > 50 && rejected > 50,
        "accepted {accepted}, rejected {rejected}"
    );
    println!("http(s) entries: {accepted} accepted as a browser reads them, {rejected} rejected");
}
