//! Runs previews of the storefront mix in a loop, for profilers (`valgrind --tool=callgrind`);
//! with `PROFILE_REASON=1`, builds each preview's reason text too.
fn main() {
    let engine =
        nudge_rules::Engine::compile(include_str!("../../../examples/storefront.json")).unwrap();
    let urls = [
        "/checkout/payment",
        "https://shop.example/cart?x=1",
        "/products/linen-shirt",
        "/collections/summer",
        "/collections/sale",
        "/search",
        "/blog/how-to-linen",
        "/about",
        "/products/gift-card",
    ];
    let with_reason = std::env::var_os("PROFILE_REASON").is_some();
    let mut n = 0usize;
    for i in 0..200_000u32 {
        let url = urls[(i as usize) % urls.len()];
        if let Ok(p) = engine.preview_fields((i % 101) as u8, url, (i * 37) % 50_000) {
            n += p.rule_index().unwrap_or(0);
            // `PROFILE_REASON=1`: the reason texts too (the object API's cost).
            if with_reason {
                n += p.reason().len();
            }
        }
    }
    println!("{n}");
}
