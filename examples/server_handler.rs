//! The preview endpoint inside your own HTTP server: compile the site config once at startup,
//! share the engine across request threads, and answer each `POST /v1/nudges/preview` body with
//! the status and body of the API document (sections 2.4, 4.4, 7).
//!
//! ```text
//! cargo run --example server_handler
//! ```
//!
//! The handler is framework-neutral: `(status, body)` in and out. (The project's own server,
//! `nudge-rules-server`, adds authentication, rate limits and reloads around the same call.)

use std::sync::Arc;
use std::thread;

use nudge_rules::Engine;

/// Answers one request body: `(200, result body)`, or the error's status (400 for an invalid
/// request) and its `{"error", "message"}` body. Never panics, whatever the body.
fn handle_preview(engine: &Engine, body: &[u8]) -> (u16, String) {
    match engine.preview_body(body) {
        Ok(response) => (200, response),
        Err(error) => (error.http_status(), error.to_body()),
    }
}

fn main() -> Result<(), nudge_rules::Error> {
    // At startup: an invalid config is refused with every problem listed (path, line, column).
    let engine = Arc::new(Engine::compile(include_str!("storefront.json"))?);

    let bodies = [
        r#"{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}"#,
        r#"{"session_state":{"intent_score":95,"page_url":"https://shop.example/checkout/pay"}}"#,
        r#"{"session_state":{"intent_score":"82","page_url":"/"}}"#,
    ];
    // The engine is immutable and `Send + Sync`: every request thread shares the one compiled copy.
    let handles: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let engine = Arc::clone(&engine);
            thread::spawn(move || handle_preview(&engine, body.as_bytes()))
        })
        .collect();
    for handle in handles {
        if let Ok((status, body)) = handle.join() {
            println!("{status} {body}");
        }
    }
    Ok(())
}
