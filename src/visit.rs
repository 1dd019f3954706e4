//! What docs/contract/caps.md adds to a session state and to evaluation: the visitor's nudge history, the caps
//! it reaches, exit intent and the holdout (control group) a visitor may fall in.
//!
//! [`HistoryEntry`] is the wire form (`session_state.history[]`); [`Visit`] is the view of one
//! state that evaluation reads (crate-private), with the two questions it asks of a rule that
//! would fire: is it capped ([`Visit::capped`]), and is this visitor held out from it
//! ([`Visit::held_out`]).

use std::cell::RefCell;

use serde::Serialize;

use crate::config::{Config, Rule, holdout_bucket};

/// A nudge's outcome (API document 2.2, 3): in recorded sessions (docs/contract/as-code.md) and in a session
/// state's `history` (docs/contract/caps.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NudgeOutcome {
    /// Displayed, nothing more.
    Shown,
    /// Its call to action was clicked.
    Clicked,
    /// Closed by the visitor.
    Dismissed,
    /// A chat was opened from it.
    ChatOpened,
}

impl NudgeOutcome {
    /// Every outcome, in the API document's order.
    pub const ALL: [NudgeOutcome; 4] = [
        NudgeOutcome::Shown,
        NudgeOutcome::Clicked,
        NudgeOutcome::Dismissed,
        NudgeOutcome::ChatOpened,
    ];

    /// The wire name: `shown`, `clicked`, `dismissed` or `chat_opened`.
    pub fn as_str(self) -> &'static str {
        match self {
            NudgeOutcome::Shown => "shown",
            NudgeOutcome::Clicked => "clicked",
            NudgeOutcome::Dismissed => "dismissed",
            NudgeOutcome::ChatOpened => "chat_opened",
        }
    }

    /// The outcome of a wire name (`shown`, `clicked`, `dismissed`, `chat_opened`), or `None`
    /// for any other text.
    pub fn from_wire(name: &str) -> Option<NudgeOutcome> {
        NudgeOutcome::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

/// One nudge this visitor was shown or held out from (docs/contract/caps.md `session_state.history[]`),
/// newest first in the list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    /// The rule whose nudge it was (1 to 64 of `A-Za-z0-9_-`). An id the config does not have
    /// counts for no rule's cap, but for `max_nudges_per_session` when `this_session`.
    pub rule_id: String,
    /// How long ago it was shown (or held out), in milliseconds: 0 to 31,536,000,000.
    pub ms_ago: u64,
    /// True when it happened in the current session.
    pub this_session: bool,
    /// What the visitor did with it (`None`: not told; a held-out entry has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<NudgeOutcome>,
    /// True when the visitor was held out (the rule's control group): nothing was shown.
    #[serde(skip_serializing_if = "is_false")]
    pub held_out: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Why a rule whose conditions hold does not fire (docs/contract/caps.md caps), with the numbers its reason
/// gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Capped {
    /// The session holds `entries` nudges shown or held out, and `max_nudges_per_session` is
    /// `max`.
    Session { entries: u32, max: u8 },
    /// The rule was shown or held out `times` times this session; its `cap.per_session` is
    /// `per_session`.
    PerSession { times: u32, per_session: u8 },
    /// The visitor dismissed the rule's nudge `ms_ago` ms ago; `cap.cooldown_ms` is
    /// `cooldown_ms`.
    Cooldown { ms_ago: u64, cooldown_ms: u64 },
}

impl Capped {
    /// Appends the reason's words: `capped (fired 1 time this session; cap.per_session 1)`.
    pub(crate) fn write(self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = match self {
            Capped::Session { entries, max } => write!(
                out,
                "capped ({entries} {} this session; max_nudges_per_session {max})",
                if entries == 1 { "nudge" } else { "nudges" }
            ),
            Capped::PerSession { times, per_session } => write!(
                out,
                "capped (fired {times} {} this session; cap.per_session {per_session})",
                if times == 1 { "time" } else { "times" }
            ),
            Capped::Cooldown {
                ms_ago,
                cooldown_ms,
            } => write!(
                out,
                "capped (dismissed {ms_ago} ms ago, {} ms of cooldown left; cap.cooldown_ms {cooldown_ms})",
                cooldown_ms.saturating_sub(ms_ago)
            ),
        };
    }
}

/// The parts of a session state that docs/contract/caps.md adds, as evaluation reads them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Visit<'a> {
    /// The visitor is about to leave (`session_state.exit_intent`).
    pub(crate) exit_intent: bool,
    /// `session_state.visitor_id`; without it no one is held out.
    pub(crate) visitor_id: Option<&'a str>,
    /// `session_state.history`, newest first.
    pub(crate) history: &'a [HistoryEntry],
}

impl Visit<'static> {
    /// A state without docs/contract/caps.md's fields: no exit intent, no visitor, no history (the API
    /// document's three-field request).
    pub(crate) const NONE: Visit<'static> = Visit {
        exit_intent: false,
        visitor_id: None,
        history: &[],
    };
}

impl<'a> Visit<'a> {
    /// Whether `rule` (whose conditions hold) is capped for this visit, and why: the session's
    /// `max_nudges_per_session` first, then the rule's `cap.per_session`, then its cooldown.
    ///
    /// Costs nothing without history; otherwise one pass over it that stops at the first entry
    /// of an earlier session (`this_session` false) at or past the rule's cooldown: the history
    /// is newest first (the request reader holds it to that), so every entry after it is of an
    /// earlier session too and older still, and counts for nothing.
    pub(crate) fn capped(&self, config: &Config, rule: &Rule) -> Option<Capped> {
        if self.history.is_empty() {
            return None;
        }
        let cooldown_ms = rule.cap.cooldown_ms;
        let (mut entries, mut times, mut dismissed) = (0u32, 0u32, None::<u64>);
        for e in self.history {
            if !e.this_session && e.ms_ago >= cooldown_ms {
                break;
            }
            let mine = e.rule_id == rule.id;
            if e.this_session {
                entries += 1;
                times += u32::from(mine);
            }
            if mine && e.outcome == Some(NudgeOutcome::Dismissed) && e.ms_ago < cooldown_ms {
                dismissed = Some(dismissed.map_or(e.ms_ago, |d: u64| d.min(e.ms_ago)));
            }
        }
        if let Some(max) = config.max_nudges_per_session
            && entries >= u32::from(max)
        {
            return Some(Capped::Session { entries, max });
        }
        if times >= u32::from(rule.cap.per_session) {
            return Some(Capped::PerSession {
                times,
                per_session: rule.cap.per_session,
            });
        }
        dismissed.map(|ms_ago| Capped::Cooldown {
            ms_ago,
            cooldown_ms,
        })
    }

    /// The visitor's holdout bucket for `rule` when it falls in the rule's control group
    /// (bucket below `holdout_percent` x 100), else `None`; always `None` without a visitor id
    /// or a holdout (docs/contract/caps.md).
    pub(crate) fn held_out(&self, rule: &Rule) -> Option<u16> {
        let visitor = self.visitor_id.filter(|_| rule.holdout_percent > 0)?;
        let bucket = remembered_bucket(&rule.id, visitor);
        (bucket < u16::from(rule.holdout_percent) * 100).then_some(bucket)
    }
}

/// The last visitor's holdout buckets, by rule id, per thread. A storefront decides for the same
/// visitor again and again (every page view, idle threshold and exit), and SHA-256 is most of the
/// cost of such a decision (docs/PERFORMANCE.md); the bucket is a pure function of the two ids,
/// so remembering it changes no result.
#[derive(Default)]
struct Buckets {
    visitor: String,
    by_rule: Vec<(String, u16)>,
}

/// Rules whose buckets are remembered for one visitor; more are hashed each time.
const REMEMBERED_RULES: usize = 64;

thread_local! {
    static BUCKETS: RefCell<Buckets> = RefCell::new(Buckets::default());
}

/// [`holdout_bucket`], remembered for the last visitor of this thread.
fn remembered_bucket(rule_id: &str, visitor_id: &str) -> u16 {
    BUCKETS.with(|cell| {
        let Ok(mut b) = cell.try_borrow_mut() else {
            return holdout_bucket(rule_id, visitor_id);
        };
        if b.visitor != visitor_id {
            b.visitor.clear();
            b.visitor.push_str(visitor_id);
            b.by_rule.clear();
        }
        if let Some(&(_, bucket)) = b.by_rule.iter().find(|(r, _)| r == rule_id) {
            return bucket;
        }
        let bucket = holdout_bucket(rule_id, visitor_id);
        if b.by_rule.len() < REMEMBERED_RULES {
            b.by_rule.push((rule_id.to_owned(), bucket));
        }
        bucket
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_buckets_are_the_hashed_ones_across_visitors_and_rules() {
        for round in 0..3 {
            for v in ["vis_a", "vis_b", "vis_a"] {
                for r in 0..70 {
                    let rule = format!("rule-{r}-{round}");
                    assert_eq!(remembered_bucket(&rule, v), holdout_bucket(&rule, v));
                }
            }
        }
    }
}
