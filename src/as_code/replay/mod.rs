//! Replay of recorded sessions against a config (docs/contract/as-code.md): for each page a session visited, the
//! nudge that would have fired and after how many ms of idling, beside the nudges the session
//! really showed; and a summary of reach per rule and per nudge type against the recorded
//! nudges and their outcomes.
//!
//! Semantics (README, Decisions):
//! - a session's events are sorted by `occurred_at` (stably); every event, whatever its `type`,
//!   makes its `url` the current page and restarts idle time;
//! - a page's dwell time runs until the next event, the last page's until `ended_at`;
//! - the intent score is the session's `intent_score`, or the event's own when it has one;
//! - the nudge that fires on a page is the first to become true as idle time grows from 0 to the
//!   dwell time, inclusive: computed exactly, as explain's earliest idle time (never by
//!   sampling): the rule that fires at idle 0, else the rule lacking only idle time with the
//!   smallest `min_idle_ms` (config order on ties), if that is at most the dwell time;
//! - a recorded nudge belongs to the page on which it was shown: the last event at or before its
//!   `shown_at`; one shown before the first event or after `ended_at` is "unplaced";
//! - docs/contract/caps.md: each session keeps its own simulated history: a rule that fires counts for its
//!   `cap.per_session` and `max_nudges_per_session` on the session's later pages (a rule with the
//!   default cap fires once per session), and so does a recorded `NUDGE_HELD_OUT` event (with
//!   its `rule_id`; no page view) from the first page after it; `exit_intent: true` rules are
//!   tried at the end of the last page (the visitor left), when nothing fired on it before;
//! - docs/contract/caps.md holdouts: with the session's `visitor_id`, the engine buckets the visitor as a
//!   storefront would, and a page whose rule holds the visitor out is a `held_out` outcome (no
//!   nudge shown, no later rule tried), which counts for caps like a shown nudge; without a
//!   visitor id no one is held out.

mod read;
mod record;
mod session;
mod summary;
#[cfg(test)]
mod tests;
mod timestamp;

use crate::as_code::ConfigAsCode;
use serde::Serialize;

pub use session::{
    EventRecord, NudgeOutcome, NudgeRecord, Records, SessionParts, SessionRecord, Sessions,
};
pub use summary::{OutcomeCounts, ReplaySummary, RuleReach, TypeReach};
pub use timestamp::{format_unix_ms, format_unix_ms_ascii};

use crate::analysis::{QuietZoneRef, UrlRejection};
use crate::config::NudgeType;
use crate::engine::Outcome;
use crate::limits::MAX_IDLE_MS;
use crate::reason::{earliest_idle, enabled_checks};
use crate::visit::{HistoryEntry, Visit};
use record::{Event, RecordedNudge, Session};
use std::borrow::Cow;

/// What fires on one page view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PageOutcome {
    /// A nudge fires: the rule, its nudge type, and the idle time at which it fires (ms after
    /// the page's event, at most the dwell time).
    Fired {
        /// The rule id.
        rule_id: String,
        /// The rule's index in config order.
        rule_index: usize,
        /// The rule's nudge type.
        nudge_type: NudgeType,
        /// Idle time in ms at which the nudge fires, 0 to 86,400,000.
        at_ms: u32,
    },
    /// The page is in a quiet zone (the first in config order).
    QuietZone {
        /// The quiet zone.
        quiet_zone: QuietZoneRef,
    },
    /// docs/contract/caps.md: the rule that would fire holds the visitor out (the session's `visitor_id` is in
    /// its control group): no nudge is shown, and it counts for caps as a shown nudge.
    HeldOut {
        /// The rule id.
        rule_id: String,
        /// The rule's index in config order.
        rule_index: usize,
        /// The rule's nudge type (not shown).
        nudge_type: NudgeType,
        /// Idle time in ms at which the rule would fire.
        at_ms: u32,
    },
    /// No rule becomes true within the dwell time.
    NoNudge,
    /// docs/contract/urls.md rejects the page URL: nothing is evaluated.
    Rejected {
        /// Why.
        url_error: UrlRejection,
    },
}

impl PageOutcome {
    /// The rule that fires, if any.
    pub fn rule_id(&self) -> Option<&str> {
        match self {
            PageOutcome::Fired { rule_id, .. } => Some(rule_id),
            _ => None,
        }
    }

    /// The rule that holds the visitor out on this page, if any (docs/contract/caps.md).
    pub fn held_out_rule_id(&self) -> Option<&str> {
        match self {
            PageOutcome::HeldOut { rule_id, .. } => Some(rule_id),
            _ => None,
        }
    }
}

/// A nudge the session really showed (API document 2.2 "Session nudge").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RecordedNudgeView {
    /// `nudg_...`, when recorded.
    pub nudge_id: Option<String>,
    /// The nudge type.
    pub nudge_type: NudgeType,
    /// When it was shown, as recorded.
    pub shown_at: String,
    /// Ms after the event of the page it was shown on; `None` when unplaced.
    pub at_ms: Option<u64>,
    /// Shown, clicked, dismissed or chat_opened.
    pub outcome: NudgeOutcome,
    /// True if a purchase occurred within 30 minutes of the interaction (API document 8).
    pub influenced_conversion: bool,
}

/// One page view of a replayed session: an event and what happens until the next.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PageReplay {
    /// The event's `type` (PAGE_VIEW, ADD_TO_CART, PURCHASE, ...).
    pub event_type: String,
    /// The event's `url` as recorded.
    pub page_url: String,
    /// The event's `occurred_at` as recorded.
    pub occurred_at: String,
    /// Ms from the session's first event to this one.
    pub offset_ms: u64,
    /// Ms until the next event, or until `ended_at` for the last.
    pub dwell_ms: u64,
    /// The intent score used: the event's, else the session's; 0 to 100.
    pub intent_score: u8,
    /// The normalized path (docs/contract/urls.md); `None` when rejected.
    pub path: Option<String>,
    /// What would fire.
    pub outcome: PageOutcome,
    /// The rule that would have fired on this page but was capped (docs/contract/caps.md: it fired, or the
    /// visitor was held out from it, often enough earlier in the session). Written only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capped_rule_id: Option<String>,
    /// The nudges really shown on this page, by `shown_at`.
    pub recorded: Vec<RecordedNudgeView>,
}

/// One replayed session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SessionReplay {
    /// The session id (`sess_...`).
    pub id: String,
    /// The session's intent score, 0 to 100.
    pub intent_score: u8,
    /// Whether the session converted, when recorded.
    pub converted: Option<bool>,
    /// Each event's page, by `occurred_at`.
    pub pages: Vec<PageReplay>,
    /// Recorded nudges shown before the first event or after `ended_at`.
    pub unplaced_nudges: Vec<RecordedNudgeView>,
}

/// The replay of recorded sessions against one config (docs/contract/as-code.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Replay {
    /// Every session, in input order.
    pub sessions: Vec<SessionReplay>,
    /// Reach per rule and per nudge type, against the recorded nudges.
    pub summary: ReplaySummary,
}

impl ConfigAsCode<'_> {
    /// Replays recorded sessions against this config (docs/contract/as-code.md): every page with what would fire
    /// and when, beside the nudges really shown, and the summary.
    ///
    /// ```
    /// let engine = nudge_rules::Engine::compile(&std::fs::read_to_string("examples/storefront.json").unwrap()).unwrap();
    /// let sessions = nudge_rules::replay::Sessions::from_text(r#"{"id": "sess_1",
    ///   "ended_at": "2026-03-01T12:00:30Z", "intent_score": 82, "events": [
    ///   {"type": "PAGE_VIEW", "url": "/products/linen-shirt", "occurred_at": "2026-03-01T12:00:00Z"},
    ///   {"type": "PAGE_VIEW", "url": "/checkout", "occurred_at": "2026-03-01T12:00:12Z"}],
    ///   "nudges": [{"type": "chat_bubble", "shown_at": "2026-03-01T12:00:09Z",
    ///               "outcome": "clicked", "influenced_conversion": true}]}"#).unwrap();
    /// let replay = nudge_rules::as_code::ConfigAsCode::new(&engine).replay(&sessions);
    /// let page = &replay.sessions[0].pages[0];
    /// assert_eq!(page.dwell_ms, 12_000);
    /// assert_eq!(page.outcome.rule_id(), Some("sizing-help")); // at 8000 ms, before 12 s
    /// assert_eq!(page.recorded[0].at_ms, Some(9000));
    /// assert_eq!(replay.summary.rules[1].page_views, 1);
    /// ```
    pub fn replay<'s>(&self, sessions: impl IntoIterator<Item = SessionRecord<'s>>) -> Replay {
        let mut summary = ReplaySummary::new(self.engine);
        let sessions = sessions
            .into_iter()
            .map(|s| {
                let replayed = self.replay_session(s.session);
                summary.add(&replayed);
                replayed.to_replay()
            })
            .collect();
        Replay { sessions, summary }
    }

    /// Only the summary of [`ConfigAsCode::replay`], without keeping each page: what an editor
    /// recomputes on every edit.
    pub fn replay_summary<'s>(
        &self,
        sessions: impl IntoIterator<Item = SessionRecord<'s>>,
    ) -> ReplaySummary {
        let mut summary = ReplaySummary::new(self.engine);
        for s in sessions {
            summary.add(&self.replay_session(s.session));
        }
        summary
    }

    /// Replays one session: each event's page and the recorded nudges placed on it, borrowing
    /// the session (no copies; [`Replayed::to_replay`] makes the owned form).
    pub(crate) fn replay_session<'s>(&self, s: &'s Session) -> Replayed<'s> {
        let mut pages: Vec<ReplayedPage<'s>> = Vec::with_capacity(s.events.len());
        // The session's own history (docs/contract/caps.md): what fired, and the recorded holdouts.
        let mut history: Vec<HistoryEntry> = Vec::new();
        let mut held_out = s.held_out.iter().peekable();
        let rules = &self.engine.config().rules;
        for (i, e) in s.events.iter().enumerate() {
            while let Some(h) = held_out.next_if(|h| h.at.at < e.occurred_at.at) {
                history.push(HistoryEntry {
                    rule_id: h.rule_id.clone(),
                    this_session: true,
                    held_out: true,
                    ..HistoryEntry::default()
                });
            }
            let until = s
                .events
                .get(i + 1)
                .map_or(&s.ended_at, |next| &next.occurred_at);
            let dwell_ms = until.at.millis_since(e.occurred_at.at);
            let intent_score = e.intent_score.unwrap_or(s.intent_score);
            let offset_ms = s.events.first().map_or(0, |first| {
                e.occurred_at.at.millis_since(first.occurred_at.at)
            });
            let last = i + 1 == s.events.len();
            let visit = Visit {
                visitor_id: s.visitor_id.as_deref(),
                history: &history,
                ..Visit::NONE
            };
            let (path, outcome, capped) =
                self.page_outcome(&e.url, intent_score, dwell_ms, &visit, last);
            // A held-out page counts for caps as a shown nudge (docs/contract/caps.md).
            let (fired, held_out) = match &outcome {
                PageOutcome::Fired { rule_index, .. } => (Some(*rule_index), false),
                PageOutcome::HeldOut { rule_index, .. } => (Some(*rule_index), true),
                _ => (None, false),
            };
            if let Some(rule) = fired.and_then(|r| rules.get(r)) {
                history.push(HistoryEntry {
                    rule_id: rule.id.clone(),
                    this_session: true,
                    held_out,
                    ..HistoryEntry::default()
                });
            }
            pages.push(ReplayedPage {
                event: e,
                offset_ms,
                dwell_ms,
                intent_score,
                path,
                outcome,
                capped,
                recorded: Vec::new(),
            });
        }
        let mut unplaced = Vec::new();
        for n in &s.nudges {
            // The last page whose event is at or before `shown_at`, if the session has not ended.
            let page = s
                .events
                .partition_point(|e| e.occurred_at.at <= n.shown_at.at);
            let placed = page
                .checked_sub(1)
                .filter(|_| n.shown_at.at <= s.ended_at.at)
                .and_then(|p| pages.get_mut(p));
            match placed {
                Some(page) => {
                    let at_ms = n.shown_at.at.millis_since(page.event.occurred_at.at);
                    page.recorded.push((n, at_ms));
                }
                None => unplaced.push(n),
            }
        }
        Replayed {
            session: s,
            pages,
            unplaced,
        }
    }

    /// What fires on a page visited for `dwell_ms` at `intent_score`, given the visitor and
    /// the session's history so far (docs/contract/caps.md caps and holdouts); `last`: the session's last
    /// page, at whose end exit intent is tried. Returns the normalized path (or `None`), the
    /// outcome, and the rule that would have fired without the caps but did not (capped).
    pub(crate) fn page_outcome<'u>(
        &self,
        page_url: &'u str,
        intent_score: u8,
        dwell_ms: u64,
        visit: &Visit<'_>,
        last: bool,
    ) -> (Option<Cow<'u, str>>, PageOutcome, Option<(usize, String)>) {
        let path = match self.engine.normalize(page_url) {
            Ok(path) => path,
            Err(e) => {
                let url_error = UrlRejection::from(&e);
                return (None, PageOutcome::Rejected { url_error }, None);
            }
        };
        let fired = match self.first_within(&path, intent_score, dwell_ms, visit, last) {
            Ok(fired) => fired,
            Err(z) => {
                let outcome = QuietZoneRef::new(self.engine, z)
                    .map_or(PageOutcome::NoNudge, |quiet_zone| PageOutcome::QuietZone {
                        quiet_zone,
                    });
                return (Some(path), outcome, None);
            }
        };
        // Without a history nothing is capped; with one, what the page gives without it.
        let capped = if visit.history.is_empty() {
            None
        } else {
            self.first_within(&path, intent_score, dwell_ms, &Visit::NONE, last)
                .ok()
                .flatten()
                .map(|(_, r, _)| r)
                .filter(|&r| fired.is_none_or(|(_, f, _)| f != r))
                .and_then(|r| Some((r, self.engine.config().rules.get(r)?.id.clone())))
        };
        let outcome = fired
            .and_then(|(at_ms, r, held_out)| {
                let rule = self.engine.config().rules.get(r)?;
                let (rule_id, rule_index, nudge_type) = (rule.id.clone(), r, rule.nudge.nudge_type);
                Some(if held_out {
                    PageOutcome::HeldOut {
                        rule_id,
                        rule_index,
                        nudge_type,
                        at_ms,
                    }
                } else {
                    PageOutcome::Fired {
                        rule_id,
                        rule_index,
                        nudge_type,
                        at_ms,
                    }
                })
            })
            .unwrap_or(PageOutcome::NoNudge);
        (Some(path), outcome, capped)
    }

    /// The first rule to fire on a normalized path as idle time grows from 0 to `dwell_ms`, with
    /// the idle time at which it fires and whether it holds the visitor out (docs/contract/caps.md), for a
    /// visit without exit intent; on the `last` page, then with exit intent at the end of the
    /// dwell. `Err(zone)` for a quiet page.
    fn first_within(
        &self,
        path: &str,
        intent_score: u8,
        dwell_ms: u64,
        visit: &Visit<'_>,
        last: bool,
    ) -> Result<Option<(u32, usize, bool)>, usize> {
        let fired = match self.engine.decide_with_page(path, intent_score, 0, visit).0 {
            Outcome::Quiet(z) => return Err(z),
            Outcome::Fired(r) => Some((0, r, false)),
            Outcome::HeldOut(r) => Some((0, r, true)),
            Outcome::NoMatch => earliest_idle(
                self.engine,
                &enabled_checks(self.engine, path, intent_score, 0, visit),
            )
            .filter(|&(at, _)| u64::from(at) <= dwell_ms)
            .map(|(at, r)| {
                // The rule that becomes true first holds the visitor out as it would at once.
                let held_out = self
                    .engine
                    .config()
                    .rules
                    .get(r)
                    .is_some_and(|rule| visit.held_out(rule).is_some());
                (at, r, held_out)
            }),
        };
        if fired.is_some() || !last {
            return Ok(fired);
        }
        // The visitor left at the end of the last page: exit intent (docs/contract/caps.md).
        let end = u32::try_from(dwell_ms.min(u64::from(MAX_IDLE_MS))).unwrap_or(MAX_IDLE_MS);
        let leaving = Visit {
            exit_intent: true,
            ..*visit
        };
        Ok(
            match self
                .engine
                .decide_with_page(path, intent_score, end, &leaving)
                .0
            {
                Outcome::Fired(r) => Some((end, r, false)),
                Outcome::HeldOut(r) => Some((end, r, true)),
                _ => None,
            },
        )
    }
}

fn view(n: &RecordedNudge, at_ms: Option<u64>) -> RecordedNudgeView {
    RecordedNudgeView {
        nudge_id: n.nudge_id.clone(),
        nudge_type: n.nudge_type,
        shown_at: n.shown_at.text(),
        at_ms,
        outcome: n.outcome,
        influenced_conversion: n.influenced_conversion,
    }
}

/// One session as [`ConfigAsCode::replay_session`] replays it, borrowing the session: what
/// summaries, diffs and backtests read. [`SessionReplay`] is its owned form.
pub(crate) struct Replayed<'s> {
    pub(crate) session: &'s Session,
    /// One per event, in the session's order.
    pub(crate) pages: Vec<ReplayedPage<'s>>,
    /// Recorded nudges shown before the first event or after `ended_at`.
    pub(crate) unplaced: Vec<&'s RecordedNudge>,
}

/// One page view of a [`Replayed`] session.
pub(crate) struct ReplayedPage<'s> {
    pub(crate) event: &'s Event,
    pub(crate) offset_ms: u64,
    pub(crate) dwell_ms: u64,
    pub(crate) intent_score: u8,
    /// The normalized path (borrowed from the URL when normalization changed nothing).
    pub(crate) path: Option<Cow<'s, str>>,
    pub(crate) outcome: PageOutcome,
    /// The rule capped on this page (docs/contract/caps.md), by index and id: it would have fired without the
    /// caps.
    pub(crate) capped: Option<(usize, String)>,
    /// The nudges shown on this page, each with ms after the page's event.
    pub(crate) recorded: Vec<(&'s RecordedNudge, u64)>,
}

impl Replayed<'_> {
    /// The owned, serializable form.
    pub(crate) fn to_replay(&self) -> SessionReplay {
        SessionReplay {
            id: self.session.id.clone(),
            intent_score: self.session.intent_score,
            converted: self.session.converted,
            pages: self
                .pages
                .iter()
                .map(|p| PageReplay {
                    event_type: p.event.event_type.clone(),
                    page_url: p.event.url.clone(),
                    occurred_at: p.event.occurred_at.text(),
                    offset_ms: p.offset_ms,
                    dwell_ms: p.dwell_ms,
                    intent_score: p.intent_score,
                    path: p.path.as_deref().map(str::to_owned),
                    outcome: p.outcome.clone(),
                    capped_rule_id: p.capped.as_ref().map(|(_, id)| id.clone()),
                    recorded: p
                        .recorded
                        .iter()
                        .map(|&(n, at)| view(n, Some(at)))
                        .collect(),
                })
                .collect(),
            unplaced_nudges: self.unplaced.iter().map(|n| view(n, None)).collect(),
        }
    }
}
