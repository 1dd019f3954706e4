//! The demo's holdout traffic (docs/contract/caps.md, `--demo`): sessions exposed to three rules of the
//! embedded storefront config, shown their nudge or held out from it, so that the uplift report
//! (`GET /v1/reports/uplift`) has something to say at once:
//!
//! - `sale-toast` clearly lifts conversion: 1,200 treated sessions convert at 12 %, 130 held
//!   out at 4 % (its 95 % interval is above zero);
//! - `free-shipping-bar` clearly does not: 1,000 treated and 200 held out, both at 10 % (its
//!   interval straddles zero);
//! - `welcome-bar` has not enough data yet: 60 treated, 6 held out.
//!
//! Each session is a PAGE_VIEW, its exposure a second later (a NUDGE_SHOWN naming the rule, or
//! a NUDGE_HELD_OUT), and for a converting session a PURCHASE ten minutes after that; every event
//! carries the session's `visitor_id`. Conversions are spread evenly through each arm, and the
//! sessions evenly over the 29 days before an hour ago: the data is the same on every start.

use nudge_rules::NudgeType;

use crate::app::import::{self, ImportOptions};
use crate::app::ingest;
use crate::app::versions::{self, Publish, Publisher};
use crate::domain::event::{EventKind, Mode, NewEvent, Scope};
use crate::sites::keys::KeyHash;
use crate::store::Store;
use crate::{DEMO_CONFIG, DEMO_KEY, DEMO_SESSIONS};

/// The embedded storefront config as version 1 of the demo site's test mode, published at
/// `now_ms` (Unix ms, the server clock's now).
///
/// # Errors
///
/// The store's refusal, as text.
pub async fn publish_config(store: &Store, now_ms: i64) -> Result<(), String> {
    let scope = Scope {
        site: "demo".to_owned(),
        mode: Mode::Test,
    };
    let publish = Publish {
        config: DEMO_CONFIG,
        by: Publisher {
            key_id: &KeyHash::of_key(DEMO_KEY).log_id(),
            at_ms: now_ms,
        },
        message: Some("the demo's starting point: examples/storefront.json"),
        restores: None,
    };
    versions::publish(store, &scope, None, &publish)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `examples/sessions.jsonl` in test mode, moved so its latest event is an hour ago, each
/// session with a visitor id ([`with_visitors`]), and the holdout traffic of
/// [`holdout_events`], all before `now_ms` (Unix ms, the server clock's now); idempotent.
/// Returns how many sessions the file holds.
///
/// # Errors
///
/// The store's refusal, as text.
pub async fn import_sessions(store: &Store, now_ms: i64) -> Result<usize, String> {
    let text = with_visitors(DEMO_SESSIONS);
    let sessions = nudge_rules::replay::Sessions::from_text(&text).map_err(|e| e.to_string())?;
    let latest = sessions
        .records()
        .flat_map(|r| {
            r.events()
                .map(|e| e.occurred_at_ms)
                .chain(r.nudges().map(|n| n.shown_at_ms))
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0);
    let now = now_ms;
    let options = ImportOptions {
        case_sensitive: false,
        shift_ms: now - 3_600_000 - latest,
        visible_from_ms: None,
        received_at_ms: now,
    };
    let scope = Scope {
        site: "demo".to_owned(),
        mode: Mode::Test,
    };
    let report = import::import(store, &scope, &text, &options, &mut |_, _| {})
        .await
        .map_err(|e| e.to_string())?;
    // Holdout traffic for the uplift report (docs/contract/caps.md): one rule lifting conversion, one not,
    // one without enough data. Idempotent, like the import.
    let holdouts = holdout_events(now);
    for batch in holdouts.chunks(1000) {
        ingest::store_events(store, &scope, batch, now, ingest::SessionAge::Any)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(report.sessions)
}

/// The demo's recorded sessions (`examples/sessions.jsonl`, one per line) with a visitor on
/// each, `vis_` then the session id's hex, as a storefront sends it on every event: imported,
/// every event carries it, and a backtest of a draft with a holdout holds that visitor's share
/// out of the predicted reach (docs/contract/caps.md). A line that is not a session object is kept as it is.
pub fn with_visitors(jsonl: &str) -> String {
    jsonl
        .lines()
        .map(|line| {
            let Ok(serde_json::Value::Object(mut session)) = serde_json::from_str(line) else {
                return line.to_owned();
            };
            let visitor = session
                .get("id")
                .and_then(serde_json::Value::as_str)
                .map(|id| format!("vis_{}", id.trim_start_matches("sess_")));
            match visitor {
                Some(v) if crate::domain::ingest::is_visitor_id(&v) => {
                    session.insert("visitor_id".to_owned(), serde_json::Value::String(v));
                    serde_json::Value::Object(session).to_string()
                }
                _ => line.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One arm of a demo rule: `(rule_id, nudge_type, treated, sessions, converted)`.
type DemoArm = (&'static str, NudgeType, bool, u32, u32);

/// The arms, in the order their sessions are made.
const ARMS: [DemoArm; 6] = [
    ("sale-toast", NudgeType::Toast, true, 1200, 144),
    ("sale-toast", NudgeType::Toast, false, 130, 5),
    ("free-shipping-bar", NudgeType::StickyBar, true, 1000, 100),
    ("free-shipping-bar", NudgeType::StickyBar, false, 200, 20),
    ("welcome-bar", NudgeType::StickyBar, true, 60, 3),
    ("welcome-bar", NudgeType::StickyBar, false, 6, 0),
];

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The demo's holdout sessions as events, their times before `now_ms` (module docs).
pub fn holdout_events(now_ms: i64) -> Vec<NewEvent> {
    let total: u32 = ARMS.iter().map(|a| a.3).sum();
    let span_ms = 29 * DAY_MS;
    let latest = now_ms - 60 * 60 * 1000;
    let mut events = Vec::new();
    let mut index: u32 = 0;
    for (arm_no, &(rule_id, nudge_type, treated, sessions, converted)) in ARMS.iter().enumerate() {
        for i in 0..sessions {
            // Spread the arm's sessions over the span, interleaved with the other arms'.
            let at = latest - span_ms + i64::from(index) * span_ms / i64::from(total.max(1));
            index += 1;
            let name = format!("demo_{arm_no}_{i}");
            let session_id = format!("sess_{name}");
            let visitor = Some(format!("vis_{name}"));
            let blank = |suffix: &str, kind: EventKind, at: i64| NewEvent {
                visitor_id: visitor.clone(),
                url: Some("/products/linen-shirt".to_owned()),
                path_key: Some("/products/linen-shirt".to_owned()),
                intent_score: Some(60),
                ..NewEvent::new(
                    format!("demo:{name}:{suffix}"),
                    session_id.clone(),
                    kind,
                    at,
                )
            };
            events.push(blank("p", EventKind::PageView, at));
            let exposure = if treated {
                NewEvent {
                    nudge_id: Some(format!("nudg_{name}")),
                    nudge_type: Some(nudge_type),
                    rule_id: Some(rule_id.to_owned()),
                    ..blank("x", EventKind::NudgeShown, at + 1000)
                }
            } else {
                NewEvent {
                    nudge_type: Some(nudge_type),
                    rule_id: Some(rule_id.to_owned()),
                    ..blank("x", EventKind::NudgeHeldOut, at + 1000)
                }
            };
            events.push(exposure);
            // Evenly spread: session i converts when the running share of conversions steps.
            let (c, n) = (u64::from(converted), u64::from(sessions));
            if (u64::from(i) + 1) * c / n > u64::from(i) * c / n {
                events.push(NewEvent {
                    url: Some("/checkout/thank-you".to_owned()),
                    path_key: Some("/checkout/thank-you".to_owned()),
                    ..blank("b", EventKind::Purchase, at + 1000 + 10 * 60 * 1000)
                });
            }
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::uplift::{Arm, rule_uplift};
    use crate::domain::derive::exposures;
    use crate::domain::event::StoredEvent;
    use std::collections::BTreeMap;

    #[test]
    fn the_demo_sessions_each_get_their_visitor_and_stay_the_same_otherwise() {
        let plain = nudge_rules::replay::Sessions::from_text(crate::DEMO_SESSIONS).unwrap();
        let text = with_visitors(crate::DEMO_SESSIONS);
        let with = nudge_rules::replay::Sessions::from_text(&text).unwrap();
        assert_eq!(plain.len(), with.len());
        for (a, b) in plain.records().zip(with.records()) {
            assert_eq!(a.id(), b.id());
            assert_eq!(a.events().len(), b.events().len());
            assert_eq!(a.visitor_id(), None);
            let visitor = format!("vis_{}", a.id().trim_start_matches("sess_"));
            assert_eq!(b.visitor_id(), Some(visitor.as_str()));
        }
    }

    #[test]
    fn the_demo_shows_a_lift_no_lift_and_not_enough_data() {
        let now = 1_795_000_000_000;
        let events = holdout_events(now);
        let mut by_session: BTreeMap<String, Vec<StoredEvent>> = BTreeMap::new();
        for (seq, e) in events.into_iter().enumerate() {
            assert!(e.occurred_at_ms < now && e.occurred_at_ms > now - 30 * DAY_MS);
            by_session
                .entry(e.session_id.clone())
                .or_default()
                .push(StoredEvent {
                    seq: seq as i64,
                    event: e,
                });
        }
        let mut arms: BTreeMap<String, (Arm, Arm)> = BTreeMap::new();
        for events in by_session.values() {
            for x in exposures(events) {
                let entry = arms.entry(x.rule_id).or_default();
                let arm = if x.treated {
                    &mut entry.0
                } else {
                    &mut entry.1
                };
                arm.sessions += 1;
                arm.converted += i64::from(x.converted);
            }
        }
        let line = |rule: &str| {
            let (t, c) = arms[rule];
            rule_uplift(rule, t, c)
        };
        let lift = line("sale-toast");
        assert_eq!((lift.treated.converted, lift.control.converted), (144, 5));
        assert!(lift.enough_data);
        assert!(lift.uplift.ci95.unwrap()[0] > 0.0, "{lift:?}");
        assert!(lift.p_value.unwrap() < 0.05, "{lift:?}");
        let flat = line("free-shipping-bar");
        assert!(flat.enough_data);
        let [low, high] = flat.uplift.ci95.unwrap();
        assert!(low < 0.0 && high > 0.0, "{flat:?}");
        assert_eq!(flat.uplift.absolute, Some(0.0));
        let few = line("welcome-bar");
        assert!(!few.enough_data);
        assert_eq!((few.treated.sessions, few.control.sessions), (60, 6));
    }
}
