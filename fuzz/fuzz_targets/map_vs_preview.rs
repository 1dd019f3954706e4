//! Differential: for a config built from the input, the decision map of a page names, at every
//! probed point, exactly the rule preview fires; its regions never overlap and cover the plane;
//! explain fires the same rule.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nudge_rules::analysis::Analysis;
use nudge_rules::limits::MAX_IDLE_MS;
use nudge_rules::{Engine, SessionState};
use serde_json::json;

const SEGMENTS: &[&str] = &["p", "q", "checkout", "a", "b"];
const INTENTS: &[u8] = &[0, 1, 29, 30, 50, 59, 60, 99, 100];
const IDLES: &[u32] = &[0, 1, 999, 1000, 5000, 8000, 86_400_000];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> usize {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        self.0 = rest;
        usize::from(first)
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() % from.len()]
    }
    fn pattern(&mut self) -> String {
        let (s, t) = (self.pick(SEGMENTS), self.pick(SEGMENTS));
        match self.next() % 8 {
            0 => format!("/{s}"),
            1 => format!("/{s}/**"),
            2 => format!("/{s}/*"),
            3 => format!("/{s}/{t}"),
            4 => "/**".to_owned(),
            5 => format!("**/{t}"),
            6 => format!("/{{{s},{t}}}/**"),
            _ => format!("/{s}?"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let quiet: Vec<String> = (0..b.next() % 3).map(|_| b.pattern()).collect();
    let rules: Vec<_> = (0..b.next() % 7)
        .map(|i| {
            let (x, y) = (b.pick(INTENTS), b.pick(INTENTS));
            let mut when = json!({"min_intent_score": x.min(y), "max_intent_score": x.max(y),
                                  "min_idle_ms": b.pick(IDLES)});
            if b.next() % 3 > 0 {
                when["pages"] = json!((0..b.next() % 3).map(|_| b.pattern()).collect::<Vec<_>>());
            }
            when["exclude_pages"] = json!((0..b.next() % 2).map(|_| b.pattern()).collect::<Vec<_>>());
            json!({"id": format!("r{i}"), "enabled": b.next() % 8 != 0, "when": when,
                   "nudge": {"type": "toast", "message": "m", "cta": "c"}})
        })
        .collect();
    let text = json!({"version": 1, "quiet_zones": quiet, "rules": rules}).to_string();
    let engine = Engine::compile(&text).expect("generated configs are valid");
    let page = format!("/{}/{}", b.pick(SEGMENTS), b.pick(SEGMENTS));
    let map = Analysis::new(&engine).decision_map(&page);
    assert!(map.url_error.is_none(), "generated pages are valid: {page}");
    let mut area: u128 = 0;
    for r in &map.regions {
        area += u128::from(r.max_intent_score - r.min_intent_score + 1)
            * u128::from(r.max_idle_ms - r.min_idle_ms + 1);
    }
    assert_eq!(area, 101 * (u128::from(MAX_IDLE_MS) + 1), "{text} {page}");
    let mut points: Vec<(u8, u32)> = map
        .regions
        .iter()
        .flat_map(|r| [(r.min_intent_score, r.min_idle_ms), (r.max_intent_score, r.max_idle_ms)])
        .collect();
    points.push((b.pick(INTENTS), b.pick(IDLES)));
    for (intent, idle) in points {
        let preview = engine.preview_fields(intent, &page, idle).expect("valid");
        let region = map.region_at(intent, idle).expect("the map covers the plane");
        assert_eq!(region.rule_index, preview.rule_index(), "{text} {page} ({intent}, {idle})");
        let state = SessionState { intent_score: intent, page_url: page.clone(), idle_ms: idle, ..Default::default() };
        let explained = Analysis::new(&engine).explain(&state).expect("valid");
        assert_eq!(explained.fired_rule_id.as_deref(), preview.rule().map(|r| r.id.as_str()));
    }
});
