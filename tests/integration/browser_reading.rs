//! docs/contract/urls.md step 6, "the browser's reading decides", as a property checked against a real WHATWG
//! URL parser (the `url` crate) on generated URLs: dot segments (`.`, `..`, `%2e` in every case
//! and combination), empty segments, `;` parameters (`..;`, `.;x`), segments that are only `;`
//! parameters (`;a`, `;`, `%3Ba`), case changes and absolute forms, around the storefront's
//! quiet-zone pages and pages next to them.
//!
//! For every variant: an accepted URL's canonical path equals the browser's reading of it (the
//! WHATWG pathname decoded once, NFKC, lowercased, `;` parameters cut, empty segments dropped),
//! a URL whose WHATWG pathname has a segment that is empty once cut at `;` is rejected (servers
//! read it two ways), and a URL a browser places inside a quiet zone never fires a nudge (it is
//! rejected or quiet).
//! Deterministic; `BROWSER_VARIANTS=N` sets the count (default 100,000). pkg/test/
//! browser-reading.test.mjs checks the same property against Node's `URL`.

use crate::common::{Rng, browser_reading};
use nudge_rules::{Engine, normalize_page_url};

/// Pages inside the storefront's quiet zones, and pages next to them.
const PAGES: &[&str] = &[
    "/checkout",
    "/checkout/pay",
    "/checkout/payment/confirm",
    "/cart",
    "/cart/items",
    "/account",
    "/account/settings",
    "/orders/abc-123",
    "/products/linen-shirt",
    "/pay",
    "/settings",
    "/",
];

/// Text inserted between segments: dot segments, empty segments, parameters, in the shapes that
/// browsers and servers read differently.
const PIECES: &[&str] = &[
    "/",
    "//",
    "/./",
    "/%2e/",
    "/%2E/",
    "/../",
    "/%2e%2e/",
    "/.%2E/",
    "/%2E./",
    "/x/../",
    "/x//../",
    "//./../",
    "//%2e/../",
    "//%2e%2E/",
    "/..;/",
    "/.;a/",
    "/..;x=1/",
    "/x;p=1/../",
    ";jsessionid=1/",
    ";/",
    "//..//",
    "/.../",
    "/..%2f/",
    "/%2e%2e;/",
    // Segments that are empty only because of their `;` parameters (rejected: servers read them
    // two ways), with `%3B`, which decodes to `;` before the cut.
    "/;a/",
    "/;jsessionid=1/",
    "/;/",
    "/%3Ba/",
    "/%3b/",
];

const ENDINGS: &[&str] = &[
    "",
    "",
    "/",
    "/.",
    "/..",
    "//",
    "/%2e",
    "/..;",
    ";v=1",
    "?next=/x/../y",
    "#/../z",
    "/;jsessionid=1",
    "/;",
    "/%3Bv=1",
];

const HOSTS: &[&str] = &[
    "https://shop.example",
    "HTTP://Shop.Example:8080",
    "https://u:p@shop.example",
    "http://[::1]",
];

/// One generated URL around `page`.
fn variant(page: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
    for segment in page.split('/').skip(1).filter(|s| !s.is_empty()) {
        while rng.chance(30) {
            out.push_str(rng.pick(PIECES));
        }
        if !out.ends_with('/') {
            out.push('/');
        }
        for c in segment.chars() {
            match rng.below(10) {
                0 => out.push(c.to_ascii_uppercase()),
                1 if c.is_ascii_alphanumeric() => out.push_str(&format!("%{:02X}", c as u32)),
                _ => out.push(c),
            }
        }
    }
    while rng.chance(25) {
        out.push_str(rng.pick(PIECES));
    }
    out.push_str(rng.pick(ENDINGS));
    if !out.starts_with('/') {
        out.insert(0, '/');
    }
    if rng.chance(30) {
        out.insert_str(0, rng.pick(HOSTS));
    }
    out
}

/// The WHATWG pathname of `input` through the `url` crate's parser; `None` when it does not parse.
fn pathname(input: &str) -> Option<String> {
    let absolute = if input.starts_with('/') {
        format!("http://h.example{input}")
    } else {
        input.to_owned()
    };
    Some(url::Url::parse(&absolute).ok()?.path().to_owned())
}

/// A segment of a WHATWG pathname that is empty once cut at its first `;` (`;a`, `;`, `%3Ba`):
/// servers that keep path parameters route it, docs/contract/urls.md's steps drop it (step 6 rejects the URL).
fn has_parameter_only_segment(pathname: &str) -> bool {
    pathname.split('/').any(|segment| {
        segment.starts_with(';')
            || segment
                .get(..3)
                .is_some_and(|head| head.eq_ignore_ascii_case("%3b"))
    })
}

#[test]
fn accepted_urls_are_read_as_a_browser_reads_them() {
    let count: usize = std::env::var("BROWSER_VARIANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let engine = Engine::compile(include_str!("../../examples/storefront.json")).unwrap();
    let mut rng = Rng(0xB20_5E2);
    let (mut accepted, mut rejected, mut browser_quiet) = (0usize, 0usize, 0usize);
    let mut parameter_only = 0usize;
    let mut failures = Vec::new();
    for _ in 0..count {
        let page = rng.pick(PAGES);
        let url = variant(page, &mut rng);
        let path = pathname(&url);
        let read = path.as_deref().and_then(|p| browser_reading(p, false));
        // A `;`-only segment that a browser keeps is read two ways by servers: rejected.
        let two_server_readings = path.as_deref().is_some_and(has_parameter_only_segment);
        parameter_only += usize::from(two_server_readings);
        match normalize_page_url(&url, false) {
            Ok(ours) => {
                accepted += 1;
                if read.as_deref() != Some(ours.as_ref()) {
                    failures.push(format!("{url:?}: ours {ours:?}, browser {read:?}"));
                }
                if two_server_readings {
                    failures.push(format!(
                        "{url:?}: accepted as {ours:?}, but the browser's path {path:?} has a ';'-only segment"
                    ));
                }
            }
            Err(_) => rejected += 1,
        }
        // A page a browser is on inside a quiet zone never gets a nudge.
        if let Some(read) = &read {
            let quiet = engine
                .preview_fields(0, read, 0)
                .is_ok_and(|p| p.quiet_zone().is_some());
            if quiet {
                browser_quiet += 1;
                let intent = rng.below(101) as u8;
                let idle = (rng.next() % 100_000) as u32;
                if let Ok(p) = engine.preview_fields(intent, &url, idle)
                    && p.would_fire()
                {
                    failures.push(format!(
                        "{url:?}: a browser is on {read}, which is quiet, yet {:?} fired",
                        p.rule().map(|r| &r.id)
                    ));
                }
            }
        }
        if failures.len() > 20 {
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!(
        "{count} variants: {accepted} accepted (each as a browser reads it), {rejected} rejected ({parameter_only} with a ';'-only segment); {browser_quiet} inside a quiet zone for a browser, none fired"
    );
    // The generator must exercise both outcomes substantially, and the `;`-only family.
    assert!(
        accepted > count / 4 && rejected > count / 10 && parameter_only > count / 100,
        "{accepted} accepted, {rejected} rejected, {parameter_only} with a ';'-only segment"
    );
}
