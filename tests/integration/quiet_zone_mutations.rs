//! Mutation suite: for each quiet zone of the storefront config and pages inside it, mangled
//! URLs (case changes, dot segments, duplicate slashes, `;` parameters, percent-encoding of
//! unreserved characters, full-width Unicode, absolute URLs with odd hosts and ports, query and
//! fragment) never fire a nudge. A mutation docs/contract/urls.md rejects counts as rejected, never as fired.
//! Two families target docs/contract/urls.md step 6: dot segments that a browser resolves against an empty
//! segment (`/checkout//./../pay` is `/checkout/pay` to a browser, `/pay` to the steps alone) and
//! `..;` segments that Tomcat-style servers resolve and browsers keep.
//!
//! Deterministic (a fixed-seed generator). `MUTATIONS_PER_ZONE=N` sets the count (default 10,000
//! per quiet zone; docs/RELIABILITY.md has a run of 1,000,000).

use crate::common::Rng;
use nudge_rules::Engine;
use nudge_rules::limits::MAX_IDLE_MS;

const ZONES: &[(&str, &[&str])] = &[
    (
        "/checkout/**",
        &[
            "/checkout",
            "/checkout/payment",
            "/checkout/shipping/address",
        ],
    ),
    (
        "/cart/**",
        &["/cart", "/cart/items", "/cart/items/linen-shirt-42"],
    ),
    (
        "/account/**",
        &["/account", "/account/orders/123", "/account/settings"],
    ),
    (
        "/orders/**",
        &["/orders", "/orders/abc-123", "/orders/abc-123/invoice.pdf"],
    ),
];

const HOSTS: &[&str] = &[
    "https://shop.example",
    "http://shop.example:8080",
    "HTTPS://SHOP.EXAMPLE.",
    "https://user:pw@shop.example:8443",
    "http://[::1]:80",
    "http://127.0.0.1:65535",
    "https://xn--bcher-kva.example",
    "hTtP://a.b.c.d.example:1",
];

/// One character mangled so that it reads as the same character after docs/contract/urls.md.
fn mangle_char(c: char, rng: &mut Rng) -> String {
    match rng.below(6) {
        0 if c.is_ascii_lowercase() => c.to_ascii_uppercase().to_string(),
        1 if c.is_ascii_alphanumeric() || "-._~".contains(c) => format!("%{:02X}", c as u32),
        2 if c.is_ascii_lowercase() => format!("%{:02x}", c as u32),
        3 if c.is_ascii_lowercase() => char::from_u32(c as u32 - 'a' as u32 + 0xFF41)
            .unwrap()
            .to_string(),
        4 if c.is_ascii_digit() => char::from_u32(c as u32 - '0' as u32 + 0xFF10)
            .unwrap()
            .to_string(),
        _ => c.to_string(),
    }
}

/// A mutated URL for `path` that docs/contract/urls.md normalizes back to `path` (or rejects).
fn mutate(path: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
    for segment in path.split('/').skip(1) {
        out.push('/');
        if rng.chance(15) {
            out.push('/');
        }
        if rng.chance(15) {
            out.push_str(if rng.chance(50) { "./" } else { "%2e/" });
        }
        if rng.chance(10) {
            out.push_str(["x/../", "zz;a=b/../", "y/%2E%2e/", "q/..;/"][rng.below(4)]);
        }
        if rng.chance(10) {
            // Neutral for a browser (the `..` removes the empty segment), not for the steps alone.
            out.push_str(["/./../", "/%2e%2e/", "/.%2E/", "%2e//../", "/%2E/%2e./"][rng.below(5)]);
        }
        if rng.chance(5) {
            out.push_str(["..;/", "%2e%2e;x/", ".;/"][rng.below(3)]);
        }
        for c in segment.chars() {
            out.push_str(&mangle_char(c, rng));
        }
        if rng.chance(15) {
            out.push_str([";jsessionid=1", ";", ";v=2;w=3"][rng.below(3)]);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    if rng.chance(20) {
        out.push('/');
    }
    if rng.chance(25) {
        out.push_str(["?next=/x", "?a=1&b=%zz", "#top", "?q=checkout#frag", "?"][rng.below(5)]);
    }
    if rng.chance(35) {
        out = format!("{}{out}", HOSTS[rng.below(HOSTS.len())]);
    }
    out
}

#[test]
fn no_nudge_fires_inside_quiet_zones() {
    let per_zone: usize = std::env::var("MUTATIONS_PER_ZONE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let engine = Engine::compile(include_str!("../../examples/storefront.json")).unwrap();
    let mut rng = Rng(0x5EED);
    let (mut quiet, mut rejected) = (0usize, 0usize);
    for (zone, paths) in ZONES {
        for k in 0..per_zone {
            let url = mutate(paths[k % paths.len()], &mut rng);
            let intent = rng.below(101) as u8;
            let idle = (rng.next() % (u64::from(MAX_IDLE_MS) + 1)) as u32;
            match engine.preview_fields(intent, &url, idle) {
                Err(e) => {
                    if std::env::var("SHOW_REJECTIONS").is_ok() && rejected < 8 {
                        println!("rejected {url}: {e}");
                    }
                    rejected += 1;
                }
                Ok(p) => {
                    assert!(
                        !p.would_fire(),
                        "{url} fired {:?} (normalized {})",
                        p.rule().map(|r| &r.id),
                        p.path()
                    );
                    assert_eq!(
                        p.quiet_zone().map(|z| z.as_written()),
                        Some(*zone),
                        "{url} -> {}",
                        p.path()
                    );
                    quiet += 1;
                }
            }
        }
    }
    println!(
        "{} mutations: {quiet} quiet, {rejected} rejected, 0 fired",
        quiet + rejected
    );
    // The generator must produce mostly accepted URLs, or it tests little.
    assert!(quiet > rejected, "{quiet} quiet vs {rejected} rejected");
}
