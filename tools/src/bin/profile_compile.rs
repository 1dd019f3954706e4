//! Compiles a 1,000-rule config in a loop, for profilers.
fn main() {
    let rules: Vec<String> = (0..1000)
        .map(|i| format!(r#"{{"id":"rule-{i}","nudge":{{"type":"toast","message":"m","cta":"c"}},"when":{{"min_intent_score":10,"min_idle_ms":1000,"pages":["/section{i}/**","/s{i}"],"exclude_pages":["/section{i}/hidden"]}}}}"#))
        .collect();
    let text = format!(r#"{{"version":1,"rules":[{}]}}"#, rules.join(","));
    let mut n = 0;
    for _ in 0..20 {
        n += nudge_rules::Engine::compile(&text)
            .map(|e| e.config().rules.len())
            .unwrap_or(0);
    }
    println!("{n}");
}
