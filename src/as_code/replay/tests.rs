//! docs/contract/caps.md holdouts in the replay: a session's `visitor_id` is bucketed as a storefront would,
//! and a visitor in a rule's control group is held out (a `held_out` page, counted for caps),
//! never reached; sessions without a visitor id are as before.

use sha2::{Digest, Sha256};

use super::{PageOutcome, SessionParts, Sessions};
use crate::Engine;
use crate::as_code::ConfigAsCode;

/// The bucket exactly as docs/contract/caps.md words it, computed here independently of the engine: the first
/// 8 bytes of SHA-256 of `RULE_ID:VISITOR_ID`, big-endian, modulo 10,000.
fn spec_bucket(rule_id: &str, visitor_id: &str) -> u64 {
    let digest = Sha256::digest(format!("{rule_id}:{visitor_id}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % 10_000
}

/// A visitor id whose bucket for `rule_id` is below `holdout_percent` x 100 (`inside`), or not.
fn visitor(rule_id: &str, holdout_percent: u64, inside: bool) -> String {
    (0..10_000)
        .map(|i| format!("vis_t{i}"))
        .find(|id| (spec_bucket(rule_id, id) < holdout_percent * 100) == inside)
        .unwrap()
}

const CONFIG: &str = r#"{"version": 1, "rules": [
  {"id": "size-help", "holdout_percent": 30,
   "nudge": {"type": "chat_bubble", "message": "Size?", "cta": "Chat"},
   "when": {"min_idle_ms": 5000, "pages": ["/products/**"]}},
  {"id": "cart-toast", "cap": {"per_session": 3},
   "nudge": {"type": "toast", "message": "Free shipping", "cta": "Cart"},
   "when": {"pages": ["/cart"]}}]}"#;

/// Two product pages of 10 s each, then the cart; `visitor_id` written when given.
fn session(id: &str, visitor_id: Option<&str>) -> String {
    let visitor = visitor_id.map_or(String::new(), |v| format!(r#""visitor_id": "{v}", "#));
    format!(
        r#"{{"id": "{id}", {visitor}"intent_score": 50, "ended_at": "2026-03-01T12:00:40Z", "converted": false, "events": [
          {{"type": "PAGE_VIEW", "url": "/products/a", "occurred_at": "2026-03-01T12:00:00Z"}},
          {{"type": "PAGE_VIEW", "url": "/products/b", "occurred_at": "2026-03-01T12:00:10Z"}},
          {{"type": "PAGE_VIEW", "url": "/cart", "occurred_at": "2026-03-01T12:00:20Z"}}]}}"#
    )
}

#[test]
fn a_visitor_in_the_control_group_is_held_out_and_counted_apart() {
    let engine = Engine::compile(CONFIG).unwrap();
    let (held, treated) = (
        visitor("size-help", 30, true),
        visitor("size-help", 30, false),
    );
    assert!(crate::holdout_bucket("size-help", &held) < 3000);
    assert!(crate::holdout_bucket("size-help", &treated) >= 3000);
    let text = [
        session("sess_held", Some(&held)),
        session("sess_treated", Some(&treated)),
        session("sess_unknown", None),
    ]
    .iter()
    .map(|s| s.replace('\n', " "))
    .collect::<Vec<_>>()
    .join("\n");
    let sessions = Sessions::from_text(&text).unwrap();
    let replay = ConfigAsCode::new(&engine).replay(&sessions);
    let [held_s, treated_s, unknown_s] = &replay.sessions[..] else {
        panic!("three sessions")
    };
    // Held out on the first product page at 5 s, then capped (the hold-out counts as shown).
    assert_eq!(
        held_s.pages[0].outcome,
        PageOutcome::HeldOut {
            rule_id: "size-help".into(),
            rule_index: 0,
            nudge_type: crate::NudgeType::ChatBubble,
            at_ms: 5000,
        }
    );
    assert_eq!(
        held_s.pages[0].outcome.held_out_rule_id(),
        Some("size-help")
    );
    assert_eq!(held_s.pages[1].outcome, PageOutcome::NoNudge);
    assert_eq!(held_s.pages[1].capped_rule_id.as_deref(), Some("size-help"));
    // Another rule is not held out: cart-toast has no holdout.
    assert_eq!(held_s.pages[2].outcome.rule_id(), Some("cart-toast"));
    for s in [treated_s, unknown_s] {
        assert_eq!(s.pages[0].outcome.rule_id(), Some("size-help"));
        assert_eq!(s.pages[1].capped_rule_id.as_deref(), Some("size-help"));
    }
    let size_help = &replay.summary.rules[0];
    assert_eq!(
        (
            size_help.sessions,
            size_help.held_out_sessions,
            size_help.page_views
        ),
        (2, 1, 2)
    );
    assert_eq!(size_help.capped_page_views, 3);
    let cart = &replay.summary.rules[1];
    assert_eq!((cart.sessions, cart.held_out_sessions), (3, 0));
    // Held-out pages are no nudges.
    assert_eq!(replay.summary.page_views_with_nudge, 5);
    let json = serde_json::to_value(&replay).unwrap();
    assert_eq!(
        json["sessions"][0]["pages"][0]["outcome"]["kind"],
        "held_out"
    );
    assert_eq!(json["summary"]["rules"][0]["held_out_sessions"], 1);
}

#[test]
fn held_out_visitors_follow_the_percent_and_push_reads_the_same() {
    let engine = Engine::compile(CONFIG).unwrap();
    let mut pushed = Sessions::default();
    let ids: Vec<String> = (0..400).map(|i| format!("vis_p{i}")).collect();
    for (i, v) in ids.iter().enumerate() {
        let id = format!("sess_{i}");
        pushed
            .push(SessionParts {
                id: &id,
                ended_at_ms: 1_772_366_430_000,
                intent_score: 50,
                converted: None,
                events: vec![super::EventRecord {
                    event_type: "PAGE_VIEW",
                    url: "/products/a",
                    occurred_at_ms: 1_772_366_400_000,
                    intent_score: None,
                    rule_id: None,
                }],
                nudges: vec![],
                visitor_id: Some(v),
            })
            .unwrap();
    }
    let summary = ConfigAsCode::new(&engine).replay_summary(&pushed);
    let expected = ids
        .iter()
        .filter(|v| spec_bucket("size-help", v) < 3000)
        .count();
    let rule = &summary.rules[0];
    assert_eq!(rule.held_out_sessions, expected);
    assert_eq!(rule.sessions + rule.held_out_sessions, 400);
    assert_eq!(
        pushed.records().next().unwrap().visitor_id(),
        Some("vis_p0")
    );
}

#[test]
fn a_malformed_visitor_id_is_refused_with_its_path() {
    let text = session("sess_1", Some("visitor_1")).replace('\n', " ");
    let err = Sessions::from_text(&text).unwrap_err();
    let d = &err.diagnostics()[0];
    assert_eq!(
        (d.code.as_str(), d.path.as_str()),
        ("invalid_visitor_id", "[0].visitor_id")
    );
    let mut sessions = Sessions::default();
    let err = sessions
        .push(SessionParts {
            id: "sess_1",
            ended_at_ms: 0,
            intent_score: 1,
            converted: None,
            events: vec![],
            nudges: vec![],
            visitor_id: Some("vis_"),
        })
        .unwrap_err();
    assert_eq!(err.diagnostics()[0].path, "visitor_id");
    assert!(sessions.is_empty());
}
