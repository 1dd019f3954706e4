//! Request body to response body against the storefront config and a config with docs/contract/caps.md's caps,
//! exit intent and holdouts (examples/caps.json): never panics; the answer is a response body or
//! an InvalidRequest, never anything else.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nudge_rules::{Engine, ErrorKind};

static ENGINES: OnceLock<[Engine; 2]> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let engines = ENGINES.get_or_init(|| {
        [
            Engine::compile(include_str!("../../examples/storefront.json")).expect("storefront config"),
            Engine::compile(include_str!("../../examples/caps.json")).expect("caps config"),
        ]
    });
    for engine in engines {
        match engine.preview_body(data) {
            Ok(body) => assert!(body.starts_with("{\"data\":{\"would_fire\":")),
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::InvalidRequest);
                assert!(e.to_body().starts_with("{\"error\":\"InvalidRequest\",\"message\":"));
            }
        }
    }
});
