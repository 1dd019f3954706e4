//! The replay summary (docs/contract/as-code.md): sessions and page views reached per rule and per nudge type,
//! compared with the nudges the sessions really showed and their outcomes.

use serde::Serialize;

use super::record::RecordedNudge;
use super::{NudgeOutcome, PageOutcome, Replayed};
use crate::config::NudgeType;
use crate::engine::Engine;

/// How many recorded nudges ended in each outcome, and how many influenced a conversion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OutcomeCounts {
    /// Recorded nudges counted.
    pub nudges: usize,
    /// Outcome `shown`.
    pub shown: usize,
    /// Outcome `clicked`.
    pub clicked: usize,
    /// Outcome `dismissed`.
    pub dismissed: usize,
    /// Outcome `chat_opened`.
    pub chat_opened: usize,
    /// `influenced_conversion: true`.
    pub influenced_conversion: usize,
}

impl OutcomeCounts {
    fn add(&mut self, n: &RecordedNudge) {
        self.nudges += 1;
        *match n.outcome {
            NudgeOutcome::Shown => &mut self.shown,
            NudgeOutcome::Clicked => &mut self.clicked,
            NudgeOutcome::Dismissed => &mut self.dismissed,
            NudgeOutcome::ChatOpened => &mut self.chat_opened,
        } += 1;
        self.influenced_conversion += usize::from(n.influenced_conversion);
    }
}

/// One rule's predicted reach.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RuleReach {
    /// The rule id.
    pub rule_id: String,
    /// The rule's nudge type.
    pub nudge_type: NudgeType,
    /// False for a disabled rule (it reaches nothing).
    pub enabled: bool,
    /// Sessions in which it fires on at least one page: its predicted treated reach, with caps
    /// and holdouts applied (docs/contract/caps.md).
    pub sessions: usize,
    /// Of those, sessions that converted.
    pub converted_sessions: usize,
    /// Page views on which it fires.
    pub page_views: usize,
    /// The nudges of the rule's type that were really shown on those page views, by outcome.
    pub recorded_same_type: OutcomeCounts,
    /// Page views on which it would have fired but was capped (docs/contract/caps.md: it fired, or the visitor
    /// was held out from it, often enough earlier in the session).
    pub capped_page_views: usize,
    /// Recorded `NUDGE_HELD_OUT` events of the rule (docs/contract/caps.md: visitors of its control group).
    pub held_out_events: usize,
    /// Sessions in which the rule would have fired but the session's `visitor_id` is in its
    /// control group (docs/contract/caps.md), on at least one page: its predicted control reach. Always 0 for
    /// sessions without a visitor id.
    pub held_out_sessions: usize,
}

/// One nudge type's predicted reach against the nudges of that type really shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TypeReach {
    /// The nudge type.
    pub nudge_type: NudgeType,
    /// Sessions in which a rule of this type fires on at least one page.
    pub predicted_sessions: usize,
    /// Page views on which a rule of this type fires.
    pub predicted_page_views: usize,
    /// Sessions that really showed a nudge of this type.
    pub recorded_sessions: usize,
    /// The recorded nudges of this type, by outcome (unplaced ones included).
    pub recorded: OutcomeCounts,
    /// Of those, the ones shown on a page view where this type is predicted, by outcome.
    pub recorded_where_predicted: OutcomeCounts,
}

/// Reach per rule and per nudge type over the replayed sessions (docs/contract/as-code.md), against the recorded
/// nudges.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReplaySummary {
    /// Sessions replayed.
    pub sessions: usize,
    /// Of those, sessions that converted (`converted: true`).
    pub converted_sessions: usize,
    /// Page views (events) replayed.
    pub page_views: usize,
    /// Page views on which a nudge fires.
    pub page_views_with_nudge: usize,
    /// Page views in a quiet zone.
    pub page_views_quiet: usize,
    /// Page views whose URL docs/contract/urls.md rejects.
    pub page_views_rejected: usize,
    /// Recorded nudges, placed or not.
    pub recorded_nudges: usize,
    /// Recorded nudges shown before the first event or after `ended_at`.
    pub unplaced_nudges: usize,
    /// Every rule, in config order.
    pub rules: Vec<RuleReach>,
    /// The four nudge types, in the API document's order.
    pub nudge_types: Vec<TypeReach>,
}

impl ReplaySummary {
    pub(crate) fn new(engine: &Engine) -> Self {
        ReplaySummary {
            sessions: 0,
            converted_sessions: 0,
            page_views: 0,
            page_views_with_nudge: 0,
            page_views_quiet: 0,
            page_views_rejected: 0,
            recorded_nudges: 0,
            unplaced_nudges: 0,
            rules: engine
                .config()
                .rules
                .iter()
                .map(|r| RuleReach {
                    rule_id: r.id.clone(),
                    nudge_type: r.nudge.nudge_type,
                    enabled: r.enabled,
                    sessions: 0,
                    converted_sessions: 0,
                    page_views: 0,
                    recorded_same_type: OutcomeCounts::default(),
                    capped_page_views: 0,
                    held_out_events: 0,
                    held_out_sessions: 0,
                })
                .collect(),
            nudge_types: NudgeType::ALL
                .into_iter()
                .map(|nudge_type| TypeReach {
                    nudge_type,
                    predicted_sessions: 0,
                    predicted_page_views: 0,
                    recorded_sessions: 0,
                    recorded: OutcomeCounts::default(),
                    recorded_where_predicted: OutcomeCounts::default(),
                })
                .collect(),
        }
    }

    /// Counts one replayed session.
    pub(crate) fn add(&mut self, s: &Replayed<'_>) {
        let converted = s.session.converted == Some(true);
        self.sessions += 1;
        self.converted_sessions += usize::from(converted);
        self.unplaced_nudges += s.unplaced.len();
        // Per session: which rules and types were reached, which types were recorded.
        let mut rules_reached = vec![false; self.rules.len()];
        let mut rules_held_out = vec![false; self.rules.len()];
        let mut types_reached = [false; 4];
        let mut types_recorded = [false; 4];
        let slot = |t: NudgeType| NudgeType::ALL.iter().position(|&x| x == t).unwrap_or(0);
        for n in s
            .pages
            .iter()
            .flat_map(|p| p.recorded.iter().map(|&(n, _)| n))
            .chain(s.unplaced.iter().copied())
        {
            self.recorded_nudges += 1;
            if let Some(t) = self.nudge_types.get_mut(slot(n.nudge_type)) {
                t.recorded.add(n);
            }
            if let Some(seen) = types_recorded.get_mut(slot(n.nudge_type)) {
                *seen = true;
            }
        }
        for h in &s.session.held_out {
            if let Some(rule) = self.rules.iter_mut().find(|r| r.rule_id == h.rule_id) {
                rule.held_out_events += 1;
            }
        }
        for page in &s.pages {
            self.page_views += 1;
            if let Some(rule) = page
                .capped
                .as_ref()
                .and_then(|&(r, _)| self.rules.get_mut(r))
            {
                rule.capped_page_views += 1;
            }
            let (rule_index, nudge_type) = match &page.outcome {
                PageOutcome::Fired {
                    rule_index,
                    nudge_type,
                    ..
                } => (*rule_index, *nudge_type),
                PageOutcome::QuietZone { .. } => {
                    self.page_views_quiet += 1;
                    continue;
                }
                PageOutcome::Rejected { .. } => {
                    self.page_views_rejected += 1;
                    continue;
                }
                PageOutcome::HeldOut { rule_index, .. } => {
                    if let Some(seen) = rules_held_out.get_mut(*rule_index) {
                        *seen = true;
                    }
                    continue;
                }
                PageOutcome::NoNudge => continue,
            };
            self.page_views_with_nudge += 1;
            let same_type = page
                .recorded
                .iter()
                .map(|&(n, _)| n)
                .filter(|n| n.nudge_type == nudge_type);
            if let Some(rule) = self.rules.get_mut(rule_index) {
                rule.page_views += 1;
                same_type
                    .clone()
                    .for_each(|n| rule.recorded_same_type.add(n));
            }
            if let Some(t) = self.nudge_types.get_mut(slot(nudge_type)) {
                t.predicted_page_views += 1;
                same_type.for_each(|n| t.recorded_where_predicted.add(n));
            }
            if let Some(seen) = rules_reached.get_mut(rule_index) {
                *seen = true;
            }
            if let Some(seen) = types_reached.get_mut(slot(nudge_type)) {
                *seen = true;
            }
        }
        for (rule, _) in self.rules.iter_mut().zip(rules_reached).filter(|(_, r)| *r) {
            rule.sessions += 1;
            rule.converted_sessions += usize::from(converted);
        }
        for (rule, _) in self
            .rules
            .iter_mut()
            .zip(rules_held_out)
            .filter(|(_, r)| *r)
        {
            rule.held_out_sessions += 1;
        }
        for ((t, reached), recorded) in self
            .nudge_types
            .iter_mut()
            .zip(types_reached)
            .zip(types_recorded)
        {
            t.predicted_sessions += usize::from(reached);
            t.recorded_sessions += usize::from(recorded);
        }
    }
}
