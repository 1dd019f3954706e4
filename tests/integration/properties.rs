//! Property tests (proptest): safety and agreement between preview, explain, the decision map
//! and lint, on random configs, pages and states.

use nudge_rules::analysis::Analysis;
use nudge_rules::as_code::ConfigAsCode;
use nudge_rules::diff::{ChangeKind, DiffInput};
use nudge_rules::limits::MAX_IDLE_MS;
use nudge_rules::replay::{PageOutcome, Sessions};
use nudge_rules::{
    DiagnosticCode, Engine, HistoryEntry, NudgeOutcome, SessionState, normalize_page_url,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const SEGMENTS: &[&str] = &[
    "products",
    "collections",
    "cart",
    "checkout",
    "blog",
    "a",
    "b",
];
const INTENTS: &[u8] = &[0, 1, 29, 30, 50, 59, 60, 99, 100];
const IDLES: &[u32] = &[0, 1, 999, 1000, 5000, 8000, 86_400_000];

fn segment() -> impl Strategy<Value = String> {
    prop::sample::select(SEGMENTS).prop_map(str::to_owned)
}

/// Patterns over a small vocabulary, so that rules overlap often.
fn pattern() -> impl Strategy<Value = String> {
    (segment(), segment(), 0..8u8).prop_map(|(s, t, form)| match form {
        0 => format!("/{s}"),
        1 => format!("/{s}/**"),
        2 => format!("/{s}/*"),
        3 => format!("/{s}/{t}"),
        4 => "/**".to_owned(),
        5 => format!("**/{t}"),
        6 => format!("/{{{s},{t}}}/**"),
        _ => "/".to_owned(),
    })
}

fn rule(index: usize) -> impl Strategy<Value = Value> {
    (
        any::<bool>(),
        prop::sample::select(INTENTS),
        prop::sample::select(INTENTS),
        prop::sample::select(IDLES),
        prop::option::of(prop::collection::vec(pattern(), 0..3)),
        prop::collection::vec(pattern(), 0..2),
        0..4usize,
        prop::bool::weighted(0.85),
        // docs/contract/caps.md: exit intent, cap, holdout.
        (
            prop::option::of(any::<bool>()),
            prop::option::of((1..=3u8, prop::sample::select(&[0u64, 1000, 86_400_000][..]))),
            prop::sample::select(&[0u8, 0, 10, 50][..]),
        ),
    )
        .prop_map(move |(_, a, b, idle, pages, exclude, kind, enabled, (exit, cap, holdout))| {
            let (min, max) = (a.min(b), a.max(b));
            let mut when = json!({ "min_intent_score": min, "max_intent_score": max, "min_idle_ms": idle, "exclude_pages": exclude });
            if let Some(pages) = pages {
                when["pages"] = json!(pages);
            }
            if let Some(exit) = exit {
                when["exit_intent"] = json!(exit);
            }
            let nudge_type = ["chat_bubble", "toast", "exit_modal", "sticky_bar"][kind];
            let mut rule = json!({
                "id": format!("r{index}"),
                "enabled": enabled,
                "nudge": { "type": nudge_type, "message": "m", "cta": "c" },
                "when": when,
                "holdout_percent": holdout,
            });
            if let Some((per_session, cooldown_ms)) = cap {
                rule["cap"] = json!({ "per_session": per_session, "cooldown_ms": cooldown_ms });
            }
            rule
        })
}

fn config() -> impl Strategy<Value = (String, Engine)> {
    (
        prop::collection::vec(pattern(), 0..3),
        (0..7usize).prop_flat_map(|n| (0..n).map(rule).collect::<Vec<_>>()),
        any::<bool>(),
        prop::option::of(1..=3u8),
    )
        .prop_map(|(quiet, rules, case_sensitive, max_nudges)| {
            let mut config = json!({ "version": 1, "case_sensitive": case_sensitive, "quiet_zones": quiet, "rules": rules });
            if let Some(max) = max_nudges {
                config["max_nudges_per_session"] = json!(max);
            }
            let text = config.to_string();
            let engine = Engine::compile(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            (text, engine)
        })
}

/// docs/contract/caps.md's part of a state: exit intent, a visitor id (or none), and a history over the rule
/// ids `config()` makes (and one it does not).
fn visit() -> impl Strategy<Value = (bool, Option<String>, Vec<HistoryEntry>)> {
    let entry = (
        0..8usize,
        prop::sample::select(&[0u64, 999, 1000, 86_399_999, 86_400_000, 31_536_000_000][..]),
        any::<bool>(),
        0..6usize,
    )
        .prop_map(|(rule, ms_ago, this_session, how)| HistoryEntry {
            rule_id: format!("r{rule}"),
            ms_ago,
            this_session,
            outcome: [
                Some(NudgeOutcome::Shown),
                Some(NudgeOutcome::Clicked),
                Some(NudgeOutcome::Dismissed),
                Some(NudgeOutcome::ChatOpened),
                None,
                None,
            ][how],
            held_out: how == 5,
        });
    (
        any::<bool>(),
        prop::option::of((0..10_000u32).prop_map(|n| format!("vis_{n}"))),
        // Newest first, as docs/contract/caps.md has it: this session's entries, then by time.
        prop::collection::vec(entry, 0..5).prop_map(|mut history| {
            history.sort_by_key(|e| (!e.this_session, e.ms_ago));
            history
        }),
    )
}

/// docs/contract/caps.md's evaluation written plainly from the spec, as a model: the first enabled rule whose
/// docs/contract/config.md conditions hold (read from explain of the state without docs/contract/caps.md's fields), whose
/// `exit_intent` holds and which no cap stops; then the holdout bucket from SHA-256. Returns
/// `(fired, held_out)` rule indices.
fn model(engine: &Engine, state: &SessionState) -> (Option<usize>, Option<usize>) {
    use sha2::{Digest, Sha256};
    let config = engine.config();
    let plain = SessionState {
        exit_intent: false,
        visitor_id: None,
        history: Vec::new(),
        ..state.clone()
    };
    let explanation = Analysis::new(engine).explain(&plain).unwrap();
    if explanation.quiet_zone.is_some() || explanation.path.is_none() {
        return (None, None);
    }
    let this_session = state.history.iter().filter(|e| e.this_session).count();
    for (rule, seen) in config.rules.iter().zip(&explanation.rules) {
        let base = rule.enabled
            && seen
                .conditions
                .iter()
                .filter(|c| c.condition != "exit_intent")
                .all(|c| c.holds);
        let exit = rule
            .when
            .exit_intent
            .is_none_or(|want| want == state.exit_intent);
        let session_capped = config
            .max_nudges_per_session
            .is_some_and(|max| this_session >= usize::from(max));
        let mine = || state.history.iter().filter(|e| e.rule_id == rule.id);
        let rule_capped =
            mine().filter(|e| e.this_session).count() >= usize::from(rule.cap.per_session);
        let cooling = mine()
            .any(|e| e.outcome == Some(NudgeOutcome::Dismissed) && e.ms_ago < rule.cap.cooldown_ms);
        if base && exit && !session_capped && !rule_capped && !cooling {
            let held = state.visitor_id.as_ref().is_some_and(|v| {
                let digest = Sha256::digest(format!("{}:{v}", rule.id).as_bytes());
                let n = u64::from_be_bytes(digest[..8].try_into().unwrap()) % 10_000;
                n < u64::from(rule.holdout_percent) * 100
            });
            let i = seen.index;
            return if held {
                (None, Some(i))
            } else {
                (Some(i), None)
            };
        }
    }
    (None, None)
}

fn page() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 0..4).prop_map(|s| format!("/{}", s.join("/")))
}

fn point() -> impl Strategy<Value = (u8, u32)> {
    (
        prop_oneof![prop::sample::select(INTENTS), 0..=100u8],
        prop_oneof![prop::sample::select(IDLES), 0..=MAX_IDLE_MS],
    )
}

/// Meaning-preserving mangles of a path under docs/contract/urls.md (case-insensitive).
fn mangle(path: &str, how: &[u8]) -> String {
    let mut out = String::new();
    for (i, seg) in path.split('/').skip(1).enumerate() {
        let h = how.get(i).copied().unwrap_or(0);
        let seg = match h % 4 {
            1 => seg.to_uppercase(),
            2 => seg
                .chars()
                .map(|c| format!("%{:02X}", c as u32))
                .collect::<String>(),
            3 => seg
                .chars()
                .map(|c| char::from_u32(c as u32 - 'a' as u32 + 0xFF41).unwrap_or(c))
                .collect(),
            _ => seg.to_owned(),
        };
        out.push('/');
        match (h / 4) % 5 {
            1 => out.push('/'),
            2 => out.push_str("./"),
            3 => out.push_str("zz/../"),
            4 => out.push_str(&format!("{seg};jsessionid=1/..;/")),
            _ => {}
        }
        out.push_str(&seg);
    }
    match how.last().copied().unwrap_or(0) % 4 {
        1 => format!("https://shop.example:8443{out}/?q=/x#frag"),
        2 => format!("HTTP://user:pw@shop.example{out}#top"),
        3 => format!("{out}/"),
        _ => {
            if out.is_empty() {
                "/".to_owned()
            } else {
                out
            }
        }
    }
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=N for longer runs.

    #[test]
    fn compile_and_preview_never_panic(text in ".{0,300}", url in ".{0,100}", intent in any::<u8>(), idle in any::<u32>()) {
        let _ = Engine::compile(&text);
        let engine = Engine::compile(include_str!("../../examples/storefront.json")).unwrap();
        let _ = engine.preview_fields(intent, &url, idle);
        let _ = engine.preview_body(text.as_bytes());
        let _ = Analysis::new(&engine).decision_map(&url);
        let _ = Analysis::new(&engine).page_report(&url);
    }

    #[test]
    fn compile_never_panics_on_structured_junk(
        quiet in prop::collection::vec(".{0,12}", 0..4),
        pages in prop::collection::vec("[/*?{}\\[\\]!a-c\\\\.,]{0,10}", 0..4),
        id in ".{0,70}",
        numbers in prop::collection::vec(any::<i64>(), 3),
    ) {
        let config = json!({ "version": 1, "quiet_zones": quiet, "rules": [{
            "id": id, "nudge": {"type": "toast", "message": "m", "cta": "c"},
            "when": {"pages": pages, "min_intent_score": numbers[0], "max_intent_score": numbers[1], "min_idle_ms": numbers[2]}
        }]});
        if let Ok(engine) = Engine::compile(&config.to_string()) {
            let _ = engine.preview_fields(50, "/a/b", 10);
            let _ = Analysis::new(&engine).lint();
            let _ = Analysis::new(&engine).summary();
        }
    }

    #[test]
    fn no_nudge_fires_inside_a_quiet_zone_however_mangled(path in page(), how in prop::collection::vec(any::<u8>(), 0..6), intent in 0..=100u8, idle in 0..=MAX_IDLE_MS) {
        let engine = Engine::compile(r#"{"version": 1, "quiet_zones": ["/checkout/**", "/account/**"],
            "rules": [{"id": "everywhere", "nudge": {"type": "toast", "message": "m", "cta": "c"}}]}"#).unwrap();
        for prefix in ["/checkout", "/account"] {
            let inside = format!("{prefix}{}", if path == "/" { "" } else { &path });
            let url = mangle(&inside, &how);
            if let Ok(p) = engine.preview_fields(intent, &url, idle) {
                prop_assert!(!p.would_fire(), "{url} -> {} fired", p.path());
                prop_assert!(p.quiet_zone().is_some());
            }
        }
    }

    /// A canonical path may hold a space, '?' or '#' (decoded from %20, %3F, %23), which a URL
    /// carries only escaped: escaped again, it normalizes to itself.
    #[test]
    fn normalization_is_idempotent(url in "(/|https?://h/)?([a-zA-Z0-9%./;?#~ÄÉßİΣ\u{FF41}-\u{FF43}-]|%20|%3[fF]|%23|%2[eE]){0,40}", case_sensitive in any::<bool>()) {
        if let Ok(once) = normalize_page_url(&url, case_sensitive) {
            let as_url = once.replace(' ', "%20").replace('?', "%3F").replace('#', "%23");
            let twice = normalize_page_url(&as_url, case_sensitive);
            prop_assert_eq!(twice.as_deref().ok(), Some(once.as_ref()), "{}", url);
        }
    }

    #[test]
    fn absolute_and_path_forms_agree(path in "/[a-zA-Z0-9%./;~-]{0,30}") {
        // A path-form "//x" reads as a host and is rejected; after "https://host" it cannot.
        prop_assume!(!path.starts_with("//"));
        let absolute = format!("https://shop.example{path}");
        prop_assert_eq!(normalize_page_url(&path, false).ok(), normalize_page_url(&absolute, false).ok());
    }

    #[test]
    fn preview_is_deterministic_and_thread_safe((text, engine) in config(), url in page(), (intent, idle) in point()) {
        let body = json!({"session_state": {"intent_score": intent, "page_url": url, "idle_ms": idle}}).to_string();
        let first = engine.preview_body(body.as_bytes());
        let again = std::thread::scope(|s| s.spawn(|| engine.preview_body(body.as_bytes())).join().unwrap());
        prop_assert_eq!(&first, &again);
        let recompiled = Engine::compile(&text).unwrap();
        prop_assert_eq!(first, recompiled.preview_body(body.as_bytes()));
    }

    #[test]
    fn decision_map_agrees_with_preview_and_partitions_the_plane((_, engine) in config(), url in page(), points in prop::collection::vec(point(), 8)) {
        let map = Analysis::new(&engine).decision_map(&url);
        let mut area: u128 = 0;
        for (i, a) in map.regions.iter().enumerate() {
            prop_assert!(a.min_intent_score <= a.max_intent_score && a.min_idle_ms <= a.max_idle_ms);
            area += u128::from(a.max_intent_score - a.min_intent_score + 1) * u128::from(a.max_idle_ms - a.min_idle_ms + 1);
            for b in map.regions.iter().skip(i + 1) {
                let overlap = a.min_intent_score <= b.max_intent_score && b.min_intent_score <= a.max_intent_score
                    && a.min_idle_ms <= b.max_idle_ms && b.min_idle_ms <= a.max_idle_ms;
                prop_assert!(!overlap, "{a:?} overlaps {b:?}");
            }
        }
        prop_assert_eq!(area, 101 * (u128::from(MAX_IDLE_MS) + 1));
        let mut corners = points;
        for r in &map.regions {
            corners.push((r.min_intent_score, r.min_idle_ms));
            corners.push((r.max_intent_score, r.max_idle_ms));
        }
        for (intent, idle) in corners {
            let preview = engine.preview_fields(intent, &url, idle).unwrap();
            let region = map.region_at(intent, idle).unwrap();
            prop_assert_eq!(region.rule_index, preview.rule_index(), "at ({}, {})", intent, idle);
            // docs/contract/caps.md: the map of a visitor with exit intent.
            let leaving = SessionState { intent_score: intent, page_url: url.clone(), idle_ms: idle, exit_intent: true, ..Default::default() };
            let preview = engine.preview(&leaving).unwrap();
            let region = map.region_at_exit(intent, idle, true).unwrap();
            prop_assert_eq!(region.rule_index, preview.rule_index(), "exit intent at ({}, {})", intent, idle);
        }
    }

    /// docs/contract/caps.md: caps, cooldowns, the session cap, exit intent and holdouts agree with a model
    /// written plainly from the spec, and explain, scenarios' outcome and the preview agree.
    #[test]
    fn caps_exit_intent_and_holdouts_follow_the_spec((_, engine) in config(), url in page(), (intent, idle) in point(), (exit_intent, visitor_id, history) in visit()) {
        let state = SessionState { intent_score: intent, page_url: url, idle_ms: idle, exit_intent, visitor_id, history };
        let preview = engine.preview(&state).unwrap();
        let (fired, held_out) = model(&engine, &state);
        prop_assert_eq!(preview.rule_index(), fired);
        let held = engine.config().rules.iter().position(|r| Some(r) == preview.held_out_rule());
        prop_assert_eq!(held, held_out);
        let explanation = Analysis::new(&engine).explain(&state).unwrap();
        prop_assert_eq!(explanation.fired_rule_id.as_deref(), preview.rule().map(|r| r.id.as_str()));
        prop_assert_eq!(explanation.held_out_rule_id.as_deref(), preview.held_out_rule().map(|r| r.id.as_str()));
        prop_assert_eq!(explanation.result.as_ref(), Some(&preview.to_result()));
        // The next idle threshold is exact: at it something fires or holds out, and not before.
        if let Some(at) = preview.next_idle_ms() {
            prop_assert!(at > idle);
            let decides = |idle_ms: u32| {
                let at = SessionState { idle_ms, ..state.clone() };
                let p = engine.preview(&at).unwrap();
                p.would_fire() || p.held_out_rule().is_some()
            };
            prop_assert!(decides(at), "nothing at {}", at);
            prop_assert!(!decides(at - 1), "something before {}", at);
        } else if !preview.would_fire() && preview.held_out_rule().is_none() && preview.quiet_zone().is_none() {
            let later = SessionState { idle_ms: MAX_IDLE_MS, ..state.clone() };
            let later = engine.preview(&later).unwrap();
            prop_assert!(!later.would_fire() && later.held_out_rule().is_none());
        }
    }

    #[test]
    fn explain_agrees_with_preview((_, engine) in config(), url in page(), (intent, idle) in point()) {
        let state = SessionState { intent_score: intent, page_url: url, idle_ms: idle, ..Default::default() };
        let preview = engine.preview(&state).unwrap();
        let explanation = Analysis::new(&engine).explain(&state).unwrap();
        prop_assert_eq!(explanation.fired_rule_id.as_deref(), preview.rule().map(|r| r.id.as_str()));
        prop_assert_eq!(explanation.result.as_ref(), Some(&preview.to_result()));
        // The earliest idle time is exact: a nudge fires there, and none between idle and it.
        if let Some(at) = explanation.earliest_idle_ms {
            let then = engine.preview_fields(intent, &state.page_url, at).unwrap();
            prop_assert_eq!(then.rule().map(|r| r.id.clone()), explanation.earliest_rule_id.clone());
            if at > idle {
                prop_assert!(!engine.preview_fields(intent, &state.page_url, at - 1).unwrap().would_fire());
            }
        } else if preview.quiet_zone().is_none() {
            prop_assert!(!engine.preview_fields(intent, &state.page_url, MAX_IDLE_MS).unwrap().would_fire());
        }
    }

    #[test]
    fn shadowed_rules_never_fire((_, engine) in config(), extra_pages in prop::collection::vec(page(), 4)) {
        let shadowed: Vec<usize> = Analysis::new(&engine).lint().iter()
            .filter(|d| matches!(d.code, DiagnosticCode::ShadowedRule | DiagnosticCode::CappedBySession | DiagnosticCode::RuleInQuietZone | DiagnosticCode::EmptyPages | DiagnosticCode::RuleExcludesAllPages))
            .filter_map(|d| d.path.strip_prefix("rules[").and_then(|r| r.split(']').next()).and_then(|n| n.parse().ok()))
            .collect();
        // Every page the vocabulary can reach with up to two segments, plus random deeper ones.
        let mut pages = vec!["/".to_owned()];
        for s in SEGMENTS {
            pages.push(format!("/{s}"));
            for t in SEGMENTS {
                pages.push(format!("/{s}/{t}"));
            }
        }
        pages.extend(extra_pages);
        for url in &pages {
            let map = Analysis::new(&engine).decision_map(url);
            for r in map.regions.iter().chain(map.exit_intent_regions.iter().flatten()) {
                if let Some(i) = r.rule_index {
                    prop_assert!(!shadowed.contains(&i), "rule {} flagged but fires on {} at {:?}", i, url, r);
                }
            }
        }
    }

    /// Scenario files and sessions (docs/contract/as-code.md) are read without panicking, whatever the text: junk,
    /// and near-misses of the real shapes (timestamps, fields, nesting).
    #[test]
    fn scenario_and_session_readers_never_panic(
        junk in ".{0,200}",
        stamp in "[0-9T:.Zz+-]{0,30}",
        field in "[a-z_]{0,12}",
        number in any::<i64>(),
    ) {
        let engine = Engine::compile(include_str!("../../examples/storefront.json")).unwrap();
        let session = json!({"id": junk, "intent_score": number, "ended_at": stamp, field.clone(): [number],
            "events": [{"type": junk, "url": junk, "occurred_at": stamp, "intent_score": number}],
            "nudges": [{"type": junk, "shown_at": stamp, "outcome": field, "influenced_conversion": number}]}).to_string();
        for text in [junk.as_str(), session.as_str(), &format!("{session}\n{junk}"), &format!("[{session},{junk}]")] {
            if let Ok(sessions) = Sessions::from_text(text) {
                let _ = ConfigAsCode::new(&engine).replay(&sessions);
            }
            if let Ok(file) = nudge_rules::scenarios::ScenarioFile::from_text(text) {
                let _ = ConfigAsCode::new(&engine).test(&file);
            }
            let _ = DiffInput::from_text(text);
        }
        let scenario = json!({"scenarios": [{"name": junk, "session_state": {"intent_score": number, "page_url": junk, field: stamp}, "expect": {"rule": junk}}]}).to_string();
        if let Ok(file) = nudge_rules::scenarios::ScenarioFile::from_text(&scenario) {
            let _ = ConfigAsCode::new(&engine).coverage(file.scenarios());
        }
    }

    /// Replay (docs/contract/as-code.md) agrees with previews at the idle times it computes: a rule that fires at
    /// `at_ms` is what preview gives at that idle time, nothing fires a millisecond earlier, and a
    /// page without a nudge gets none at its whole dwell time.
    #[test]
    fn replay_agrees_with_per_page_previews((_, engine) in config(), visits in prop::collection::vec((page(), prop::sample::select(INTENTS), prop::sample::select(DWELLS)), 1..6), session_intent in 0..=100u8, own_intent in prop::collection::vec(any::<bool>(), 6)) {
        let (text, expected) = session_text(&visits, session_intent, &own_intent);
        let sessions = Sessions::from_text(&text).unwrap();
        let replay = ConfigAsCode::new(&engine).replay(&sessions);
        let pages = &replay.sessions[0].pages;
        prop_assert_eq!(pages.len(), visits.len());
        // docs/contract/caps.md: the session's own history; exit intent at the end of the last page.
        let mut history: Vec<HistoryEntry> = Vec::new();
        let last = pages.len() - 1;
        for (i, (page, (url, intent, dwell))) in pages.iter().zip(expected).enumerate() {
            prop_assert_eq!((page.intent_score, page.dwell_ms), (intent, u64::from(dwell)));
            let at = |idle_ms: u32, exit_intent: bool| {
                let state = SessionState { intent_score: intent, page_url: url.clone(), idle_ms, exit_intent, visitor_id: None, history: history.clone() };
                let p = engine.preview(&state).unwrap();
                (p.rule().map(|r| r.id.clone()), p.quiet_zone().is_some())
            };
            let end = dwell.min(MAX_IDLE_MS);
            match &page.outcome {
                PageOutcome::Fired { rule_id, at_ms, .. } => {
                    prop_assert!(*at_ms <= dwell);
                    let leaving = i == last && *at_ms == end && at(end, false).0.is_none();
                    let then = at(*at_ms, leaving).0;
                    prop_assert_eq!(then.as_deref(), Some(rule_id.as_str()));
                    if *at_ms > 0 {
                        prop_assert!(at(at_ms - 1, false).0.is_none());
                    }
                    history.push(HistoryEntry { rule_id: rule_id.clone(), this_session: true, ..HistoryEntry::default() });
                }
                PageOutcome::QuietZone { .. } => prop_assert!(at(0, false).1),
                PageOutcome::NoNudge => {
                    prop_assert!(at(end, false) == (None, false));
                    if i == last {
                        prop_assert!(at(end, true).0.is_none());
                    }
                }
                PageOutcome::Rejected { .. } => prop_assert!(engine.preview_fields(intent, &url, 0).is_err()),
                _ => prop_assert!(false, "unknown outcome"),
            }
        }
    }

    /// Diff (docs/contract/as-code.md) of a config against itself is empty; swapping the two configs swaps every
    /// pair of outcomes and inverts each kind.
    #[test]
    fn diff_is_empty_against_itself_and_symmetric((_, a) in config(), (_, b) in config(), visits in prop::collection::vec((page(), prop::sample::select(INTENTS), prop::sample::select(DWELLS)), 1..6), states in prop::collection::vec((page(), point()), 1..6)) {
        let (sessions, _) = session_text(&visits, 50, &[]);
        let scenarios: Vec<Value> = states.iter().enumerate().map(|(i, (url, (intent, idle)))| json!({
            "name": format!("s{i}"), "session_state": {"intent_score": intent, "page_url": url, "idle_ms": idle},
            "expect": {"no_nudge": true}})).collect();
        let inputs = [
            DiffInput::from_text(&sessions).unwrap(),
            DiffInput::from_value(&json!({ "scenarios": scenarios })).unwrap(),
        ];
        for engine in [&a, &b] {
            let same = ConfigAsCode::new(engine).diff(engine, &inputs);
            prop_assert!(same.changes.is_empty() && same.counts.is_empty(), "{:?}", same.changes);
            prop_assert!(ConfigAsCode::new(engine).diff(engine, &[]).map_changes.is_empty());
        }
        let (forth, back) = (ConfigAsCode::new(&a).diff(&b, &inputs), ConfigAsCode::new(&b).diff(&a, &inputs));
        prop_assert_eq!(forth.changes.len(), back.changes.len());
        for (f, g) in forth.changes.iter().zip(&back.changes) {
            prop_assert_eq!((&f.old, &f.new), (&g.new, &g.old));
            prop_assert_eq!(f.kind.inverse(), g.kind);
        }
        let (forth, back) = (ConfigAsCode::new(&a).diff(&b, &[]), ConfigAsCode::new(&b).diff(&a, &[]));
        prop_assert_eq!(forth.map_changes.len(), back.map_changes.len());
        for (f, g) in forth.map_changes.iter().zip(&back.map_changes) {
            prop_assert_eq!((&f.old_quiet_zone, &f.new_quiet_zone), (&g.new_quiet_zone, &g.old_quiet_zone));
            prop_assert_eq!(f.regions.len(), g.regions.len());
            for (x, y) in f.regions.iter().zip(&g.regions) {
                prop_assert_eq!((x.min_intent_score, x.max_intent_score, x.min_idle_ms, x.max_idle_ms), (y.min_intent_score, y.max_intent_score, y.min_idle_ms, y.max_idle_ms));
                prop_assert_eq!((&x.old_rule_id, &x.new_rule_id), (&y.new_rule_id, &y.old_rule_id));
                prop_assert_eq!(x.kind.inverse(), y.kind);
                prop_assert!(x.kind != ChangeKind::TimingChanged);
            }
        }
    }
}

/// Dwell times around the configs' idle thresholds (`IDLES`), in ms.
const DWELLS: &[u32] = &[
    0, 1, 998, 999, 1000, 4999, 5000, 7999, 8000, 60_000, 90_000_000,
];

/// One recorded session (API document 2.2) visiting `visits` (page, intent, dwell ms) in order,
/// its intent `session_intent`, each event carrying its own intent where `own_intent` says so;
/// and what replay must read of each page: (url, intent, dwell).
fn session_text(
    visits: &[(String, u8, u32)],
    session_intent: u8,
    own_intent: &[bool],
) -> (String, Vec<(String, u8, u32)>) {
    let stamp = |ms: u64| {
        let (s, ms) = (ms / 1000, ms % 1000);
        let (d, s) = (s / 86_400, s % 86_400);
        format!(
            "2026-03-{:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            1 + d,
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    };
    let mut at = 0u64;
    let mut events = Vec::new();
    // (time, url, intent) of each visit, in the order the events are listed: reversed, so that
    // replay must sort them (stably: visits at the same time keep the listed order).
    let mut listed = Vec::new();
    for (i, (url, intent, dwell)) in visits.iter().enumerate() {
        let own = own_intent.get(i).copied().unwrap_or(false);
        let mut event = json!({"type": if i % 3 == 2 { "ADD_TO_CART" } else { "PAGE_VIEW" }, "url": url, "occurred_at": stamp(at)});
        if own {
            event["intent_score"] = json!(intent);
        }
        events.push(event);
        listed.push((at, url.clone(), if own { *intent } else { session_intent }));
        at += u64::from(*dwell);
    }
    events.reverse();
    listed.reverse();
    listed.sort_by_key(|(time, _, _)| *time);
    let expected = listed
        .iter()
        .enumerate()
        .map(|(k, (time, url, intent))| {
            let until = listed.get(k + 1).map_or(at, |next| next.0);
            (url.clone(), *intent, u32::try_from(until - time).unwrap())
        })
        .collect();
    let session = json!({"id": "sess_p", "intent_score": session_intent, "ended_at": stamp(at), "events": events});
    (session.to_string(), expected)
}
