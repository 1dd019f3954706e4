//! Which stored changes make which webhook messages, to which endpoints (docs/contract/webhooks.md "Event types and
//! payloads"): pure. The store's transactions gather the changes (a batch's recomputed
//! sessions, a published version, a disabled endpoint), call [`changes_of_batch`] and
//! [`address`], and write the addressed [`Message`]s to the outbox in the same transaction,
//! keeping only SQL and row mapping (`store/queries/webhooks.rs`).
//!
//! A new event type is a variant of [`Change`] (its [`EventType`] and its `data`) and, when a
//! stored batch makes it, a line of [`changes_of_batch`].

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::endpoint::{Endpoint, EndpointItem};
use super::event_type::EventType;
use crate::domain::derive::{NudgeSummary, SessionSummary};
use crate::domain::event::{EventKind, NewEvent};
use crate::domain::time::WireTime;
use crate::domain::wire::{ConfigVersion, NudgeItem, SessionItem, VersionItem};

/// What recomputing a batch's sessions found (the store fills it in the batch's transaction).
#[derive(Debug, Default)]
pub struct Recomputed {
    /// The sessions' derived fields.
    pub sessions: Vec<SessionSummary>,
    /// Their nudges.
    pub nudges: Vec<NudgeSummary>,
    /// The ids of the nudges that were not stored before.
    pub new_nudges: HashSet<String>,
    /// PURCHASE events per session, all stored ones.
    pub purchases: HashMap<String, usize>,
}

/// A stored change a message tells of, with the record its `data` is (the read API's shape).
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// A nudge stored for the first time (`nudge.shown`), as the store has it after the batch.
    NudgeShown(&'a NudgeSummary),
    /// An outcome stored (`nudge.outcome`): the nudge with it.
    NudgeOutcome(&'a NudgeSummary),
    /// A session's first PURCHASE stored (`session.converted`).
    SessionConverted(&'a SessionSummary),
    /// A version published (`config.published`), sent without its config body.
    ConfigPublished(&'a ConfigVersion),
    /// An endpoint disabled by a 410 or the 5-day rule (`webhook_endpoint.disabled`), sent
    /// without its secret to the scope's other endpoints.
    EndpointDisabled(&'a Endpoint),
    /// `POST /v1/webhook_endpoints/{id}/test` (`webhook.test`): to that endpoint only, whatever
    /// it subscribes to.
    Test(&'a Endpoint),
}

impl Change<'_> {
    /// The type of its message.
    pub fn event_type(&self) -> EventType {
        match self {
            Change::NudgeShown(_) => EventType::NudgeShown,
            Change::NudgeOutcome(_) => EventType::NudgeOutcome,
            Change::SessionConverted(_) => EventType::SessionConverted,
            Change::ConfigPublished(_) => EventType::ConfigPublished,
            Change::EndpointDisabled(_) => EventType::EndpointDisabled,
            Change::Test(_) => EventType::Test,
        }
    }

    /// The ids of the endpoints of `endpoints` (a scope's enabled ones) its message goes to:
    /// those subscribed to its type; a test goes to its own endpoint, and a disabled
    /// endpoint's message to the others.
    pub fn recipients(&self, endpoints: &[Endpoint]) -> Vec<String> {
        let event_type = self.event_type();
        match self {
            Change::Test(endpoint) => vec![endpoint.id.clone()],
            Change::EndpointDisabled(gone) => endpoints
                .iter()
                .filter(|e| e.id != gone.id && e.subscribes(event_type))
                .map(|e| e.id.clone())
                .collect(),
            _ => endpoints
                .iter()
                .filter(|e| e.subscribes(event_type))
                .map(|e| e.id.clone())
                .collect(),
        }
    }

    /// Its message, made at `created_at_ms`.
    ///
    /// # Errors
    ///
    /// A message when the system has no random source.
    pub fn message(&self, created_at_ms: i64) -> Result<Message, String> {
        let event_type = self.event_type();
        match *self {
            Change::NudgeShown(n) | Change::NudgeOutcome(n) => {
                Message::new(event_type, created_at_ms, NudgeItem::of(n))
            }
            Change::SessionConverted(s) => {
                Message::new(event_type, created_at_ms, SessionItem::of(s))
            }
            Change::ConfigPublished(v) => {
                let bare = VersionItem {
                    config: None,
                    ..VersionItem::of(v)
                };
                Message::new(event_type, created_at_ms, bare)
            }
            Change::EndpointDisabled(e) => {
                Message::new(event_type, created_at_ms, EndpointItem::of(e))
            }
            Change::Test(e) => Message::new(
                event_type,
                created_at_ms,
                TestData {
                    endpoint_id: &e.id,
                    message: "a test message from nudge-rules",
                },
            ),
        }
    }
}

/// The data of `webhook.test`.
#[derive(Serialize)]
struct TestData<'a> {
    endpoint_id: &'a str,
    message: &'static str,
}

/// The changes of one stored batch, in its events' order: `nudge.shown` for each nudge stored
/// for the first time, `nudge.outcome` for each outcome stored (of a nudge the store has), then
/// `session.converted` for each session whose first PURCHASE this batch stored. `stored` are
/// the batch's events that were stored (not duplicates); `recomputed` what recomputing their
/// sessions found.
pub fn changes_of_batch<'a>(stored: &[&NewEvent], recomputed: &'a Recomputed) -> Vec<Change<'a>> {
    let nudges: HashMap<&str, &NudgeSummary> = recomputed
        .nudges
        .iter()
        .map(|n| (n.id.as_str(), n))
        .collect();
    let mut changes = Vec::new();
    let mut purchases: HashMap<&str, usize> = HashMap::new();
    for e in stored {
        let nudge = || e.nudge_id.as_deref().and_then(|id| nudges.get(id).copied());
        match e.kind {
            EventKind::NudgeShown => {
                if let Some(n) = nudge().filter(|n| recomputed.new_nudges.contains(&n.id)) {
                    changes.push(Change::NudgeShown(n));
                }
            }
            EventKind::NudgeOutcome => changes.extend(nudge().map(Change::NudgeOutcome)),
            EventKind::Purchase => *purchases.entry(e.session_id.as_str()).or_default() += 1,
            _ => {}
        }
    }
    for s in &recomputed.sessions {
        let new = purchases.get(s.id.as_str()).copied().unwrap_or(0);
        let first = recomputed.purchases.get(&s.id).copied() == Some(new);
        if s.converted && new > 0 && first {
            changes.push(Change::SessionConverted(s));
        }
    }
    changes
}

/// Each of `changes` as a message made at `created_at_ms`, addressed to its recipients among
/// `endpoints` ([`Change::recipients`]); a change nobody receives makes no message.
///
/// # Errors
///
/// A message when the system has no random source.
pub fn address(
    changes: &[Change<'_>],
    endpoints: &[Endpoint],
    created_at_ms: i64,
) -> Result<Vec<Message>, String> {
    let mut addressed = Vec::new();
    for change in changes {
        let to = change.recipients(endpoints);
        if !to.is_empty() {
            addressed.push(Message {
                to,
                ..change.message(created_at_ms)?
            });
        }
    }
    Ok(addressed)
}

/// A message of the outbox: its id, type, time, the whole body every attempt sends, and the
/// endpoints it goes to (one delivery each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// `msg_` and 32 hex digits: the `webhook-id` of every attempt and resend.
    pub id: String,
    /// What it tells.
    pub event_type: EventType,
    /// When the change that caused it was stored, Unix ms.
    pub created_at_ms: i64,
    /// `{"id", "type", "created_at", "data"}`, signed as is.
    pub body: String,
    /// The ids of the endpoints it goes to ([`address`]; none yet when just made).
    pub to: Vec<String>,
}

/// The body of a message.
#[derive(Serialize)]
struct Body<'a, T: Serialize> {
    id: &'a str,
    #[serde(rename = "type")]
    event_type: &'static str,
    created_at: WireTime,
    data: T,
}

impl Message {
    /// A new message of `event_type` with `data` (the read API's shape of the record),
    /// addressed to no endpoint yet.
    ///
    /// # Errors
    ///
    /// A message when the system has no random source, or `data` does not serialize.
    pub fn new<T: Serialize>(
        event_type: EventType,
        created_at_ms: i64,
        data: T,
    ) -> Result<Message, String> {
        let id = time_ordered_id("msg_", created_at_ms)?;
        let body = serde_json::to_string(&Body {
            id: &id,
            event_type: event_type.as_str(),
            created_at: WireTime(created_at_ms),
            data,
        })
        .map_err(|e| e.to_string())?;
        Ok(Message {
            id,
            event_type,
            created_at_ms,
            body,
            to: Vec::new(),
        })
    }
}

/// A message id: `prefix`, then 32 hex digits: `created_at_ms` as 6 bytes (big-endian, so ids
/// sort by time, as Svix's KSUID message ids do) and 10 random bytes (80 bits: unguessable and
/// unique). New messages land at the right edge of the outbox's primary keys instead of on
/// random pages: each group commit rewrites a few pages of the B-trees, not one per message
/// (docs/PERFORMANCE.md "Webhook figures").
///
/// # Errors
///
/// A message when the system has no random source.
pub fn time_ordered_id(prefix: &str, created_at_ms: i64) -> Result<String, String> {
    let mut raw = [0u8; 16];
    let (time, random) = raw.split_at_mut(6);
    let ms = created_at_ms.clamp(0, (1 << 48) - 1).to_be_bytes();
    time.copy_from_slice(ms.get(2..).unwrap_or_default());
    getrandom::fill(random).map_err(|e| format!("no random source: {e}"))?;
    Ok(format!("{prefix}{}", hex::encode(raw)))
}

#[cfg(test)]
mod tests {
    use nudge_rules::{NudgeOutcome, NudgeType};

    use super::*;
    use crate::domain::webhook::endpoint::Status;
    use crate::domain::webhook::signature::{Secret, StoredSecret};

    fn endpoint(id: &str, types: &[EventType]) -> Endpoint {
        Endpoint {
            id: id.to_owned(),
            url: "https://example.com/".to_owned(),
            event_types: types.to_vec(),
            description: None,
            status: Status::Enabled,
            secret: StoredSecret::from(Secret::generate().unwrap()),
            previous_secret: None,
            previous_secret_until_ms: None,
            failing_since_ms: None,
            created_at_ms: 0,
            updated_at_ms: 0,
        }
    }

    fn event(id: &str, session: &str, kind: EventKind, nudge: Option<&str>) -> NewEvent {
        NewEvent {
            nudge_id: nudge.map(str::to_owned),
            ..NewEvent::new(id, session, kind, 0)
        }
    }

    fn nudge(id: &str, session: &str) -> NudgeSummary {
        NudgeSummary {
            id: id.to_owned(),
            session_id: session.to_owned(),
            nudge_type: NudgeType::Toast,
            shown_at_ms: 0,
            outcome: NudgeOutcome::Clicked,
            influenced_conversion: false,
        }
    }

    fn session(id: &str, converted: bool) -> SessionSummary {
        SessionSummary {
            id: id.to_owned(),
            started_at_ms: 0,
            ended_at_ms: 0,
            page_count: 1,
            intent_score: 0,
            converted,
            nudge_count: 1,
        }
    }

    /// Each stored batch's changes, by type and record id.
    #[test]
    fn a_batch_makes_one_change_per_new_nudge_outcome_and_first_purchase() {
        let recomputed = Recomputed {
            sessions: vec![
                session("sess_a", true),
                session("sess_b", true),
                session("sess_c", false),
            ],
            nudges: vec![nudge("nudg_new", "sess_a"), nudge("nudg_old", "sess_b")],
            new_nudges: ["nudg_new".to_owned()].into(),
            purchases: [("sess_a".to_owned(), 1), ("sess_b".to_owned(), 2)].into(),
        };
        let shown = |id, s, n| event(id, s, EventKind::NudgeShown, Some(n));
        let outcome = |id, s, n| event(id, s, EventKind::NudgeOutcome, Some(n));
        let purchase = |id, s| event(id, s, EventKind::Purchase, None);
        let page = |id, s| event(id, s, EventKind::PageView, None);
        let names = |changes: Vec<Change<'_>>| -> Vec<(EventType, String)> {
            changes
                .iter()
                .map(|c| {
                    let id = match c {
                        Change::NudgeShown(n) | Change::NudgeOutcome(n) => n.id.clone(),
                        Change::SessionConverted(s) => s.id.clone(),
                        _ => String::new(),
                    };
                    (c.event_type(), id)
                })
                .collect()
        };
        // (the batch's stored events, the changes they make: type and record id)
        type Case<'a> = (Vec<NewEvent>, Vec<(EventType, &'a str)>);
        let cases: Vec<Case<'_>> = vec![
            // A new nudge shown, its outcome and the session's first purchase.
            (
                vec![
                    page("e0", "sess_a"),
                    shown("e1", "sess_a", "nudg_new"),
                    outcome("e2", "sess_a", "nudg_new"),
                    purchase("e3", "sess_a"),
                ],
                vec![
                    (EventType::NudgeShown, "nudg_new"),
                    (EventType::NudgeOutcome, "nudg_new"),
                    (EventType::SessionConverted, "sess_a"),
                ],
            ),
            // A NUDGE_SHOWN of a nudge stored before, an outcome of one the store has not:
            // nothing; an outcome of an old nudge: `nudge.outcome`.
            (
                vec![
                    shown("e4", "sess_b", "nudg_old"),
                    outcome("e5", "sess_x", "nudg_unknown"),
                    outcome("e6", "sess_b", "nudg_old"),
                ],
                vec![(EventType::NudgeOutcome, "nudg_old")],
            ),
            // A second purchase of a converted session: nothing (sess_b has 2 stored, 1 new).
            (vec![purchase("e7", "sess_b")], vec![]),
            // Both of sess_b's purchases in this batch: its first purchase, converted.
            (
                vec![purchase("e8", "sess_b"), purchase("e9", "sess_b")],
                vec![(EventType::SessionConverted, "sess_b")],
            ),
            // A purchase of a session not converted (it stored none, so recomputed says not).
            (vec![purchase("e10", "sess_c")], vec![]),
        ];
        for (events, expected) in cases {
            let stored: Vec<&NewEvent> = events.iter().collect();
            let got = names(changes_of_batch(&stored, &recomputed));
            let expected: Vec<(EventType, String)> = expected
                .into_iter()
                .map(|(t, id)| (t, id.to_owned()))
                .collect();
            assert_eq!(got, expected, "{events:?}");
        }
    }

    /// Who receives each change.
    #[test]
    fn changes_go_to_their_subscribers_tests_to_their_endpoint() {
        let shown_only = endpoint("we_shown", &[EventType::NudgeShown]);
        let watcher = endpoint("we_watch", &[EventType::EndpointDisabled]);
        let gone = endpoint(
            "we_gone",
            &[EventType::EndpointDisabled, EventType::NudgeShown],
        );
        let all = [shown_only.clone(), watcher.clone(), gone.clone()];
        let n = nudge("nudg_1", "sess_1");
        let s = session("sess_1", true);
        let v = ConfigVersion {
            version: 3,
            published_at_ms: 0,
            published_by: "abcd1234".to_owned(),
            message: None,
            sha256: "00".to_owned(),
            restores: None,
            config: Some("{\"rules\": []}".to_owned()),
        };
        let cases = [
            (Change::NudgeShown(&n), vec!["we_shown", "we_gone"]),
            (Change::NudgeOutcome(&n), vec![]),
            (Change::SessionConverted(&s), vec![]),
            (Change::ConfigPublished(&v), vec![]),
            (Change::EndpointDisabled(&gone), vec!["we_watch"]),
            (Change::Test(&shown_only), vec!["we_shown"]),
        ];
        for (change, to) in cases {
            assert_eq!(change.recipients(&all), to, "{:?}", change.event_type());
        }
        let addressed = address(
            &[
                Change::NudgeOutcome(&n),
                Change::NudgeShown(&n),
                Change::ConfigPublished(&v),
            ],
            &all,
            1_000,
        )
        .unwrap();
        assert_eq!(
            addressed.len(),
            1,
            "nobody receives an outcome or a version"
        );
        assert_eq!(addressed[0].to, ["we_shown", "we_gone"]);
        assert_eq!(addressed[0].event_type, EventType::NudgeShown);
        assert_eq!(addressed[0].created_at_ms, 1_000);
    }

    #[test]
    fn each_message_carries_the_read_apis_record() {
        let e = endpoint("we_1", &[EventType::Test]);
        let v = ConfigVersion {
            version: 3,
            published_at_ms: 5,
            published_by: "abcd1234".to_owned(),
            message: Some("m".to_owned()),
            sha256: "00".to_owned(),
            restores: None,
            config: Some("{\"rules\": []}".to_owned()),
        };
        let data = |change: Change<'_>| {
            let m = change.message(0).unwrap();
            let body: serde_json::Value = serde_json::from_str(&m.body).unwrap();
            assert_eq!(body["type"], change.event_type().as_str());
            assert_eq!(body["id"], m.id.as_str());
            body["data"].clone()
        };
        let version = data(Change::ConfigPublished(&v));
        assert_eq!(version["version"], 3);
        assert!(version.get("config").is_none(), "no config body: {version}");
        let disabled = data(Change::EndpointDisabled(&e));
        assert_eq!(disabled["id"], "we_1");
        assert!(disabled.get("secret").is_none());
        assert_eq!(data(Change::Test(&e))["endpoint_id"], "we_1");
        assert_eq!(
            data(Change::NudgeShown(&nudge("nudg_9", "s")))["outcome"],
            "clicked"
        );
        assert_eq!(
            data(Change::SessionConverted(&session("sess_9", true)))["converted"],
            true
        );
    }

    #[test]
    fn message_ids_sort_by_time_and_differ_within_a_millisecond() {
        let t = 1_795_000_000_123;
        let (a, b) = (
            time_ordered_id("msg_", t).unwrap(),
            time_ordered_id("msg_", t).unwrap(),
        );
        let later = time_ordered_id("msg_", t + 1).unwrap();
        assert_ne!(a, b);
        assert!(a < later && b < later, "{a} {b} {later}");
        assert_eq!(&a[4..16], format!("{t:012x}"));
        for id in [
            &a,
            &time_ordered_id("msg_", -5).unwrap(),
            &time_ordered_id("msg_", i64::MAX).unwrap(),
        ] {
            assert!(
                id.len() == 36 && id[4..].bytes().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
    }

    #[test]
    fn a_message_body_has_id_type_time_and_data() {
        let m = Message::new(EventType::Test, 0, serde_json::json!({"a": 1})).unwrap();
        assert!(m.id.starts_with("msg_") && m.id.len() == 36);
        let v: serde_json::Value = serde_json::from_str(&m.body).unwrap();
        assert_eq!(v["id"], m.id.as_str());
        assert_eq!(v["type"], "webhook.test");
        assert_eq!(v["created_at"], "1970-01-01T00:00:00.000Z");
        assert_eq!(v["data"]["a"], 1);
    }
}
