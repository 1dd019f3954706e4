//! Backtest (docs/contract/backtest.md): recorded sessions replayed against a draft config and against the live
//! one, page by page, with what changes between the two. The sessions come in any number of
//! batches (a server streams them from its store a page at a time), so memory does not grow
//! with their number: only the two summaries and at most
//! [`MAX_BACKTEST_EXAMPLES`] examples are kept.
//!
//! Each session is replayed by [`ConfigAsCode::replay`]'s own code, so a backtest and
//! `nudge-rules replay` of the same sessions agree on every count.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::as_code::ConfigAsCode;
use crate::as_code::diff::{ChangeKind, Side, page_side};
use crate::as_code::replay::{PageOutcome, ReplaySummary, SessionRecord};
use crate::engine::Engine;
use crate::limits::MAX_BACKTEST_EXAMPLES;

/// A backtest under way: add sessions with [`Backtest::add`], then read [`Backtest::finish`].
///
/// ```
/// use nudge_rules::{as_code::backtest::Backtest, replay::Sessions, Engine};
/// let live = Engine::compile(include_str!("../../examples/storefront.json")).unwrap();
/// // The draft turns the sizing help off.
/// let text = include_str!("../../examples/storefront.json")
///     .replacen("\"id\": \"sizing-help\",", "\"id\": \"sizing-help\", \"enabled\": false,", 1);
/// let draft = Engine::compile(&text).unwrap();
/// let sessions = Sessions::from_text(include_str!("../../examples/sessions.jsonl")).unwrap();
/// let mut backtest = Backtest::new(&live, &draft);
/// backtest.add(&sessions);
/// let report = backtest.finish();
/// let sizing = report.live.rules.iter().find(|r| r.rule_id == "sizing-help").unwrap();
/// assert!(sizing.page_views > 0);
/// // At least the page views the rule won change: with caps (docs/contract/caps.md), a rule that takes its
/// // place there is capped on a later page of the session where it fired before.
/// assert!(report.changes.page_views >= sizing.page_views);
/// ```
#[derive(Clone, Debug)]
pub struct Backtest<'e> {
    live: &'e Engine,
    draft: &'e Engine,
    live_summary: ReplaySummary,
    draft_summary: ReplaySummary,
    changes: PageChanges,
}

/// What a backtest found (docs/contract/backtest.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BacktestReport {
    /// The replay summary under the draft config.
    pub draft: ReplaySummary,
    /// The replay summary under the live config.
    pub live: ReplaySummary,
    /// The page views whose outcome differs.
    pub changes: PageChanges,
}

/// The page views whose outcome differs between the live config and the draft.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PageChanges {
    /// How many page views changed.
    pub page_views: usize,
    /// How many of each kind (every kind, zeros included), serialized as
    /// `{"nudge_added": N, ...}` in [`ChangeKind::ALL`]'s order.
    pub by_kind: ChangeCounts,
    /// The first changes in replay order, at most
    /// [`MAX_BACKTEST_EXAMPLES`].
    pub examples: Vec<PageChange>,
}

/// A count per [`ChangeKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChangeCounts([usize; ChangeKind::ALL.len()]);

impl ChangeCounts {
    /// How many changes of `kind`.
    pub fn get(&self, kind: ChangeKind) -> usize {
        self.0.get(kind as usize).copied().unwrap_or(0)
    }
}

impl Serialize for ChangeCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(ChangeKind::ALL.len()))?;
        for kind in ChangeKind::ALL {
            map.serialize_entry(kind.as_str(), &self.get(kind))?;
        }
        map.end()
    }
}

/// One page view whose outcome differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PageChange {
    /// The session id.
    pub session_id: String,
    /// The page view's index in its session (events by time), from 0.
    pub page_index: usize,
    /// The event's `url` as recorded.
    pub url: String,
    /// The event's `occurred_at` as recorded: tells repeated views of one page apart.
    pub occurred_at: String,
    /// What changed.
    pub kind: ChangeKind,
    /// The outcome under the live config.
    pub before: Side,
    /// The outcome under the draft.
    pub after: Side,
}

impl<'e> Backtest<'e> {
    /// A backtest of `draft` against `live`, with no session yet.
    pub fn new(live: &'e Engine, draft: &'e Engine) -> Self {
        Backtest {
            live,
            draft,
            live_summary: ReplaySummary::new(live),
            draft_summary: ReplaySummary::new(draft),
            changes: PageChanges::default(),
        }
    }

    /// Replays more sessions against both configs.
    pub fn add<'s>(&mut self, sessions: impl IntoIterator<Item = SessionRecord<'s>>) {
        let (live, draft) = (ConfigAsCode::new(self.live), ConfigAsCode::new(self.draft));
        for s in sessions {
            let before = live.replay_session(s.session);
            let after = draft.replay_session(s.session);
            self.live_summary.add(&before);
            self.draft_summary.add(&after);
            for (page_index, (p, q)) in before.pages.iter().zip(&after.pages).enumerate() {
                if self.same(&p.outcome, &q.outcome) {
                    continue;
                }
                let (x, y) = (
                    page_side(self.live, &p.outcome),
                    page_side(self.draft, &q.outcome),
                );
                let Some(kind) = ChangeKind::between(&x, &y) else {
                    continue;
                };
                self.changes.page_views += 1;
                if let Some(n) = self.changes.by_kind.0.get_mut(kind as usize) {
                    *n += 1;
                }
                if self.changes.examples.len() < MAX_BACKTEST_EXAMPLES {
                    self.changes.examples.push(PageChange {
                        session_id: before.session.id.clone(),
                        page_index,
                        url: p.event.url.clone(),
                        occurred_at: p.event.occurred_at.text(),
                        kind,
                        before: x,
                        after: y,
                    });
                }
            }
        }
    }

    /// Whether two outcomes are surely the same (the cheap test before building both sides):
    /// the same non-firing outcome, or the same rule at the same idle time with an equal nudge.
    fn same(&self, before: &PageOutcome, after: &PageOutcome) -> bool {
        match (before, after) {
            (
                PageOutcome::Fired {
                    rule_id: a,
                    rule_index: i,
                    at_ms: x,
                    ..
                },
                PageOutcome::Fired {
                    rule_id: b,
                    rule_index: j,
                    at_ms: y,
                    ..
                },
            ) => {
                fn nudge(engine: &Engine, index: usize) -> Option<&crate::config::Nudge> {
                    engine.config().rules.get(index).map(|r| &r.nudge)
                }
                a == b && x == y && nudge(self.live, *i) == nudge(self.draft, *j)
            }
            (PageOutcome::Fired { .. }, _) | (_, PageOutcome::Fired { .. }) => false,
            (
                PageOutcome::HeldOut {
                    rule_id: a,
                    at_ms: x,
                    ..
                },
                PageOutcome::HeldOut {
                    rule_id: b,
                    at_ms: y,
                    ..
                },
            ) => a == b && x == y,
            _ => before == after,
        }
    }

    /// The summaries and the changes.
    pub fn finish(self) -> BacktestReport {
        BacktestReport {
            draft: self.draft_summary,
            live: self.live_summary,
            changes: self.changes,
        }
    }
}
