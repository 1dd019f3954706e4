//! The engine's hot paths against a hand-written floor and a general rules engine, measured in
//! one run (`cargo bench`; `make bench` prints the ratios, docs/PERFORMANCE.md has a real run).
//!
//! Groups (criterion ids `group/function`):
//! - `storefront/{floor,preview,datalogic}`: the mix of 16 states of `benches/states.json`
//!   (quiet-zone hits, first-rule hits, last-rule hits, no match, URLs needing full normalization)
//!   against the embedded storefront config, per iteration the whole mix; `floor` is a
//!   hand-written `match` for this config, using the crate's own normalization.
//! - `scale/{rules,quiet_zones,glob_rules,prefix_glob_rules,infix_glob_rules,
//!   infix_glob_tree_rules}/N`: worst case, only the last rule
//!   can match; rules with literal and `X/**` patterns, (`glob_rules`) with a wildcard pattern
//!   each, and (`prefix_glob_rules`) with one glob `/collections/c{i}/*` each, globs that share
//!   a literal prefix as catalogs do; (`infix_glob_rules`, `infix_glob_tree_rules`) with one
//!   glob `/shop/*/c{i}/*-sale` or `/brands/*/b{i}/**` each, globs whose distinguishing literal
//!   follows a wildcard under a prefix they all share.
//! - `normalize/*`: URL shapes; `canonical_short` takes the fast path, `slow_same_path` is the same
//!   page with a trailing slash, which takes full normalization.
//! - `compile/{rules,glob_rules}/N`: config text to engine, JSON parse included.
//! - `wire/preview_body`: request body bytes to response body text.
//! - `map/{decision_map,previews_200}`: the storefront's decision map of a product page against
//!   200 single previews on the same page.
//! - `replay/{sessions_10000,parse_json_10000}`: 10,000 recorded sessions (examples/sessions.jsonl
//!   repeated with fresh ids, 11 MB of JSONL) read and replayed against the storefront config
//!   into the summary (docs/contract/as-code.md), against serde_json reading the same lines into values.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nudge_rules::analysis::Analysis;
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::{Engine, SessionState, normalize_page_url};
use serde_json::json;

const STOREFRONT: &str = include_str!("../examples/storefront.json");

/// The state mix shared with the Node benchmark (benches/states.json), and the code each must give.
fn states() -> Vec<(SessionState, i32)> {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("states.json")).expect("benches/states.json");
    doc["states"]
        .as_array()
        .expect("states")
        .iter()
        .map(|s| {
            let state = SessionState {
                intent_score: s["intent_score"].as_u64().expect("intent") as u8,
                page_url: s["page_url"].as_str().expect("url").to_owned(),
                idle_ms: s["idle_ms"].as_u64().expect("idle") as u32,
                ..Default::default()
            };
            (state, s["fires"].as_i64().expect("fires") as i32)
        })
        .collect()
}

/// What fires: the rule index, or a negative code (-1 none, -2 quiet), as `previewFields`.
fn code(p: &nudge_rules::Preview<'_>) -> i32 {
    match (p.rule_index(), p.quiet_zone()) {
        (Some(i), _) => i as i32,
        (None, Some(_)) => -2,
        (None, None) => -1,
    }
}

/// The hand-written floor: the storefront config's decision as code.
fn floor(state: &SessionState) -> i32 {
    let Ok(path) = normalize_page_url(&state.page_url, false) else {
        return -3;
    };
    let p: &str = &path;
    let under = |prefix: &str| {
        p == prefix
            || p.strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if under("/checkout") || under("/cart") || under("/account") || under("/orders") {
        return -2;
    }
    let (i, idle) = (state.intent_score, state.idle_ms);
    let products = under("/products");
    let collections = under("/collections");
    if i >= 85 && idle >= 20_000 && (products || collections) {
        0
    } else if i >= 60 && idle >= 8_000 && products && p != "/products/gift-card" {
        1
    } else if i >= 30
        && idle >= 2_000
        && (under("/collections/sale") || under("/collections/clearance"))
    {
        2
    } else if (30..=59).contains(&i) && (collections || products) {
        3
    } else if i >= 20 && idle >= 6_000 && p == "/search" {
        4
    } else if idle >= 15_000 && under("/blog") && !under("/blog/tags") {
        5
    } else if i <= 40 && idle >= 3_000 && p == "/" {
        6
    } else if i >= 90 && idle >= 45_000 && !under("/blog") && p != "/search" {
        8
    } else {
        -1
    }
}

/// The storefront config in JSON Logic. Every storefront pattern is a literal path or a literal
/// `X/**` prefix, so `==` and `starts_with` express it exactly: nothing is simplified.
fn storefront_json_logic() -> serde_json::Value {
    let under = |prefix: &str| json!({"or": [{"==": [{"var": "path"}, prefix]}, {"starts_with": [{"var": "path"}, format!("{prefix}/")]}]});
    let is = |page: &str| json!({"==": [{"var": "path"}, page]});
    let ge = |v: &str, n: u32| json!({">=": [{"var": v}, n]});
    let le = |v: &str, n: u32| json!({"<=": [{"var": v}, n]});
    json!({"if": [
        {"or": [under("/checkout"), under("/cart"), under("/account"), under("/orders")]}, -2,
        {"and": [ge("intent", 85), ge("idle", 20_000), {"or": [under("/products"), under("/collections")]}]}, 0,
        {"and": [ge("intent", 60), ge("idle", 8_000), under("/products"), {"!": is("/products/gift-card")}]}, 1,
        {"and": [ge("intent", 30), ge("idle", 2_000), {"or": [under("/collections/sale"), under("/collections/clearance")]}]}, 2,
        {"and": [ge("intent", 30), le("intent", 59), {"or": [under("/collections"), under("/products")]}]}, 3,
        {"and": [ge("intent", 20), ge("idle", 6_000), is("/search")]}, 4,
        {"and": [ge("idle", 15_000), under("/blog"), {"!": under("/blog/tags")}]}, 5,
        {"and": [le("intent", 40), ge("idle", 3_000), is("/")]}, 6,
        {"and": [ge("intent", 90), ge("idle", 45_000), {"!": under("/blog")}, {"!": is("/search")}]}, 8,
        -1
    ]})
}

fn storefront(c: &mut Criterion) {
    let engine = Engine::compile(STOREFRONT).unwrap();
    let (states, expected): (Vec<SessionState>, Vec<i32>) = states().into_iter().unzip();
    // The three must agree before their speed means anything.
    let dl = datalogic_rs::Engine::new();
    let logic = dl
        .compile(storefront_json_logic().to_string().as_str())
        .unwrap();
    let mut session = dl.session();
    let datalogic = |session: &mut datalogic_rs::Session<'_>, s: &SessionState| -> i32 {
        let Ok(path) = normalize_page_url(&s.page_url, false) else {
            return -3;
        };
        let data = json!({"path": path.as_ref(), "intent": s.intent_score, "idle": s.idle_ms});
        let code = session
            .eval(&logic, &data)
            .ok()
            .and_then(|v| v.as_i64())
            .unwrap_or(-3);
        session.reset();
        code as i32
    };
    for (s, want) in states.iter().zip(expected) {
        let ours = code(&engine.preview(s).unwrap());
        assert_eq!(ours, want, "benches/states.json disagrees on {s:?}");
        assert_eq!(ours, floor(s), "floor disagrees on {s:?}");
        assert_eq!(
            ours,
            datalogic(&mut session, s),
            "datalogic disagrees on {s:?}"
        );
    }

    let mut g = c.benchmark_group("storefront");
    g.throughput(Throughput::Elements(states.len() as u64));
    g.bench_function("floor", |b| {
        b.iter(|| states.iter().map(|s| floor(black_box(s))).sum::<i32>())
    });
    g.bench_function("preview", |b| {
        b.iter(|| {
            states
                .iter()
                .map(|s| engine.preview(black_box(s)).map_or(-3, |p| code(&p)))
                .sum::<i32>()
        })
    });
    g.bench_function("datalogic", |b| {
        b.iter(|| {
            states
                .iter()
                .map(|s| datalogic(&mut session, black_box(s)))
                .sum::<i32>()
        })
    });
    g.finish();
}

/// A config of `rules` rules (each with include and exclude patterns) and `quiet` quiet zones,
/// where only the last rule can match `/section{last}/item`. With `wildcards`, every rule also has
/// a wildcard pattern (`/s{i}/*/x`), matched by the segment glob matcher.
fn scaled_config(rules: usize, quiet: usize, wildcards: bool) -> String {
    let rules: Vec<_> = (0..rules)
        .map(|i| {
            let mut pages = vec![format!("/section{i}/**"), format!("/s{i}")];
            if wildcards {
                pages.push(format!("/s{i}/*/x"));
            }
            json!({
                "id": format!("rule-{i}"),
                "nudge": {"type": "toast", "message": "m", "cta": "c"},
                "when": {"min_intent_score": 10, "min_idle_ms": 1000,
                         "pages": pages,
                         "exclude_pages": [format!("/section{i}/hidden")]}
            })
        })
        .collect();
    let quiet: Vec<String> = (0..quiet).map(|i| format!("/quiet{i}/**")).collect();
    json!({"version": 1, "quiet_zones": quiet, "rules": rules}).to_string()
}

/// A catalog config: `rules` rules whose page is `pattern` with `{i}` replaced by the rule's
/// number (`/collections/c{i}/*`: globs that share the literal prefix `/collections/`), ten quiet
/// zones.
fn catalog_config(rules: usize, pattern: &str) -> String {
    let rules: Vec<_> = (0..rules)
        .map(|i| {
            json!({
                "id": format!("collection-{i}"),
                "nudge": {"type": "toast", "message": "m", "cta": "c"},
                "when": {"min_intent_score": 10, "pages": [pattern.replace("{i}", &i.to_string())]}
            })
        })
        .collect();
    let quiet: Vec<String> = (0..10).map(|i| format!("/quiet{i}/**")).collect();
    json!({"version": 1, "quiet_zones": quiet, "rules": rules}).to_string()
}

fn scale(c: &mut Criterion) {
    let mut g = c.benchmark_group("scale");
    // Each shape's sizes run back to back, so that the ratios of the results table (1,000 vs 10)
    // compare measurements seconds apart: this machine's speed drifts over minutes.
    for (kind, rules, quiet, wildcards) in [
        ("rules", None, Some(10), false),
        ("quiet_zones", Some(10), None, false),
        ("glob_rules", None, Some(10), true),
    ] {
        for n in [10usize, 100, 1000] {
            let (rules, quiet) = (rules.unwrap_or(n), quiet.unwrap_or(n));
            let engine = Engine::compile(&scaled_config(rules, quiet, wildcards)).unwrap();
            let state = SessionState {
                intent_score: 50,
                page_url: format!("/section{}/item", rules - 1),
                idle_ms: 5000,
                ..Default::default()
            };
            assert_eq!(
                engine.preview(&state).unwrap().rule_index(),
                Some(rules - 1)
            );
            g.bench_with_input(BenchmarkId::new(kind, n), &state, |b, s| {
                b.iter(|| engine.preview(black_box(s)).map(|p| p.rule_index()).ok())
            });
        }
    }
    // Globs sharing a literal prefix (`/collections/c{i}/*`), as real catalogs have them; and
    // globs whose distinguishing literal follows a wildcard, under a prefix they all share
    // (`/shop/*/c{i}/*-sale`, `/brands/*/b{i}/**`). The page is the last rule's.
    for (kind, pattern, page) in [
        (
            "prefix_glob_rules",
            "/collections/c{i}/*",
            "/collections/c{i}/linen-shirt",
        ),
        (
            "infix_glob_rules",
            "/shop/*/c{i}/*-sale",
            "/shop/summer/c{i}/linen-sale",
        ),
        (
            "infix_glob_tree_rules",
            "/brands/*/b{i}/**",
            "/brands/acme/b{i}/shirts/linen",
        ),
    ] {
        for n in [10usize, 100, 1000] {
            let engine = Engine::compile(&catalog_config(n, pattern)).unwrap();
            let state = SessionState {
                intent_score: 50,
                page_url: page.replace("{i}", &(n - 1).to_string()),
                idle_ms: 5000,
                ..Default::default()
            };
            assert_eq!(engine.preview(&state).unwrap().rule_index(), Some(n - 1));
            g.bench_with_input(BenchmarkId::new(kind, n), &state, |b, s| {
                b.iter(|| engine.preview(black_box(s)).map(|p| p.rule_index()).ok())
            });
        }
    }
    g.finish();
}

fn normalize(c: &mut Criterion) {
    let long = format!(
        "/{}",
        [
            "department",
            "category",
            "sub-category",
            "brand",
            "line",
            "model",
            "variant",
            "size",
            "colour",
            "item"
        ]
        .join("/")
    );
    let shapes: [(&str, &str); 7] = [
        ("canonical_short", "/products/linen-shirt"),
        ("slow_same_path", "/products/linen-shirt/"),
        ("canonical_long", &long),
        (
            "full_url_query",
            "https://shop.example:443/products/linen-shirt?utm_source=mail&ref=x#reviews",
        ),
        ("needs_decoding", "/%70roducts/caf%C3%A9-linen%20shirt"),
        (
            "dot_segments",
            "/collections/../products/./linen-shirt;jsessionid=1",
        ),
        ("case_folding", "/Products/LINEN-Shirt"),
    ];
    let mut g = c.benchmark_group("normalize");
    for (name, url) in shapes {
        g.bench_function(name, |b| {
            b.iter(|| normalize_page_url(black_box(url), false).map(|p| p.len()))
        });
    }
    g.finish();
}

fn compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.sample_size(20);
    for n in [10usize, 1000] {
        for (kind, wildcards) in [("rules", false), ("glob_rules", true)] {
            let text = scaled_config(n, 10, wildcards);
            g.bench_with_input(BenchmarkId::new(kind, n), &text, |b, t| {
                b.iter(|| Engine::compile(black_box(t)).map(|e| e.config().rules.len()))
            });
        }
    }
    g.finish();
}

fn wire(c: &mut Criterion) {
    let engine = Engine::compile(STOREFRONT).unwrap();
    let body = br#"{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}"#;
    c.bench_function("wire/preview_body", |b| {
        b.iter(|| engine.preview_body(black_box(body)).map(|s| s.len()))
    });
}

fn map(c: &mut Criterion) {
    let engine = Engine::compile(STOREFRONT).unwrap();
    let page = "/products/linen-shirt";
    let points: Vec<(u8, u32)> = (0..200u32)
        .map(|k| ((k % 101) as u8, (k * 997) % 60_000))
        .collect();
    let mut g = c.benchmark_group("map");
    g.bench_function("decision_map", |b| {
        b.iter(|| {
            Analysis::new(&engine)
                .decision_map(black_box(page))
                .regions
                .len()
        })
    });
    g.bench_function("previews_200", |b| {
        b.iter(|| {
            points
                .iter()
                .filter_map(|&(i, idle)| {
                    engine
                        .preview_fields(i, black_box(page), idle)
                        .ok()?
                        .rule_index()
                })
                .count()
        })
    });
    g.finish();
}

/// `examples/sessions.jsonl` repeated to `count` sessions, each copy with its own ids.
fn sessions_jsonl(count: usize) -> String {
    let lines: Vec<&str> = include_str!("../examples/sessions.jsonl").lines().collect();
    (0..count)
        .map(|i| {
            let line = lines[i % lines.len()];
            line.replacen(
                "\"id\":\"sess_",
                &format!("\"id\":\"sess_{}_", i / lines.len()),
                1,
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn replay(c: &mut Criterion) {
    let engine = Engine::compile(STOREFRONT).unwrap();
    let text = sessions_jsonl(10_000);
    let sessions = nudge_rules::replay::Sessions::from_text(&text).unwrap();
    assert_eq!(sessions.len(), 10_000);
    assert_eq!(
        ConfigAsCode::new(&engine)
            .replay_summary(&sessions)
            .sessions,
        10_000
    );
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(10_000));
    g.bench_function("sessions_10000", |b| {
        b.iter(|| {
            let sessions = nudge_rules::replay::Sessions::from_text(black_box(&text)).unwrap();
            ConfigAsCode::new(&engine)
                .replay_summary(&sessions)
                .page_views
        })
    });
    g.bench_function("parse_json_10000", |b| {
        b.iter(|| {
            black_box(&text)
                .lines()
                .map(|line| {
                    serde_json::from_str::<serde_json::Value>(line)
                        .map_or(0, |v| v.is_object() as usize)
                })
                .sum::<usize>()
        })
    });
    g.finish();
}

/// docs/contract/caps.md: a preview with a 200-entry history and a visitor id (caps counted, the holdout bucket
/// hashed) against the plain preview of the same config (examples/caps.json) and page.
fn visit(c: &mut Criterion) {
    use nudge_rules::{HistoryEntry, NudgeOutcome};
    let engine = Engine::compile(include_str!("../examples/caps.json")).unwrap();
    let plain = SessionState {
        intent_score: 70,
        page_url: "/products/linen-shirt".into(),
        idle_ms: 9000,
        ..Default::default()
    };
    // A visitor of 100 days, newest first: one nudge held out earlier this session, then a
    // nudge every 12 hours in earlier sessions, a quarter of them this rule's (none dismissed
    // inside its one-day cooldown), so that it still fires; a visitor outside its control group,
    // so that the bucket is hashed and the nudge shown. Evaluation reads the history up to the
    // first entry of an earlier session past the cooldown.
    let entry = |i: u64, ms_ago: u64| HistoryEntry {
        rule_id: if i.is_multiple_of(4) {
            "sizing-help".into()
        } else {
            format!("old-rule-{i}")
        },
        ms_ago,
        this_session: false,
        outcome: Some(if i % 2 == 1 {
            NudgeOutcome::Dismissed
        } else {
            NudgeOutcome::Clicked
        }),
        held_out: false,
    };
    let mut history: Vec<HistoryEntry> = vec![HistoryEntry {
        rule_id: "exit-offer".into(),
        ms_ago: 60_000,
        this_session: true,
        outcome: None,
        held_out: true,
    }];
    history.extend((1..200).map(|i| entry(i, 3_600_000 + i * 43_200_000)));
    // The worst case, reported only: 200 entries of other rules inside the cooldown, all read.
    let worst: Vec<HistoryEntry> = (1..=200).map(|i| entry(2 * i + 1, i * 1000)).collect();
    let visitor = (0..)
        .map(|n| format!("vis_bench{n}"))
        .find(|v| nudge_rules::holdout_bucket("sizing-help", v) >= 1000)
        .unwrap();
    let with_history = SessionState {
        visitor_id: Some(visitor),
        history,
        ..plain.clone()
    };
    let worst = SessionState {
        history: worst,
        ..with_history.clone()
    };
    let fired = |s: &SessionState| engine.preview(s).unwrap().rule().map(|r| r.id.clone());
    for state in [&plain, &with_history, &worst] {
        assert_eq!(fired(state).as_deref(), Some("sizing-help"));
    }

    let mut g = c.benchmark_group("visit");
    g.bench_function("plain", |b| {
        b.iter(|| engine.preview(black_box(&plain)).map_or(-3, |p| code(&p)))
    });
    g.bench_function("history_200", |b| {
        b.iter(|| {
            engine
                .preview(black_box(&with_history))
                .map_or(-3, |p| code(&p))
        })
    });
    g.bench_function("history_200_worst", |b| {
        b.iter(|| engine.preview(black_box(&worst)).map_or(-3, |p| code(&p)))
    });
    // A new visitor on every preview: the bucket is hashed each time (a server previewing
    // requests of many visitors); reported only.
    let visitors: Vec<SessionState> = (0..1024)
        .map(|n| SessionState {
            visitor_id: Some(format!("vis_new{n}")),
            ..with_history.clone()
        })
        .collect();
    let mut next = visitors.iter().cycle();
    g.bench_function("history_200_new_visitor", |b| {
        b.iter(|| {
            let s = next.next().unwrap_or(&plain);
            engine.preview(black_box(s)).map_or(-3, |p| code(&p))
        })
    });
    g.bench_function("holdout_bucket", |b| {
        b.iter(|| nudge_rules::holdout_bucket(black_box("sizing-help"), black_box("vis_bench1")))
    });
    g.finish();
}

criterion_group!(
    benches, storefront, scale, normalize, compile, wire, map, replay, visit
);
criterion_main!(benches);
