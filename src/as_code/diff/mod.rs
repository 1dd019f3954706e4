//! Diff between two configs (docs/contract/as-code.md): the inputs (scenarios, recorded page views) whose outcome
//! changes, with both outcomes and a count per kind of change; without inputs, the decision
//! maps of the pages the two configs mention, compared exactly (the regions that change owner).
//! [`ConfigAsCode::diff`] and [`ConfigAsCode::diff_maps`] compare a config (the old one) with
//! another; this module holds what they report.
//!
//! Outcomes are those of scenarios ([`Expectation`]: which rule fires, quiet zone, no nudge,
//! InvalidRequest), plus, for the same rule, its nudge (type, message, cta) and, on a recorded
//! page view, the idle time at which it fires. Swapping the two configs swaps every pair of
//! outcomes and turns each kind into its [`ChangeKind::inverse`].

mod map;

use crate::as_code::ConfigAsCode;
use serde::Serialize;
use serde_json::Value;

pub use map::{PageMapChange, RegionChange};

use crate::as_code::replay::{PageOutcome, ReplaySummary, Sessions};
use crate::as_code::scenarios::{Expectation, ScenarioFile};
use crate::config::Nudge;
use crate::engine::Engine;
use crate::error::Error;

/// What changed between the two outcomes of one input (or one region of a decision map).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Nothing fired (no nudge or quiet zone); now a rule fires.
    NudgeAdded,
    /// A rule fired; now nothing does.
    NudgeRemoved,
    /// Another rule fires.
    RuleChanged,
    /// The same rule fires with another nudge (type, message or cta).
    NudgeChanged,
    /// The same rule fires at another idle time (recorded page views only).
    TimingChanged,
    /// Nothing fired; now the page is in a quiet zone.
    QuietZoneAdded,
    /// The page was in a quiet zone; now it is not, and still nothing fires.
    QuietZoneRemoved,
    /// The input is rejected on one side only (InvalidRequest).
    ErrorChanged,
    /// The visitor is held out (docs/contract/caps.md) on one side, or from another rule: a change in who is
    /// in a control group, not in what is shown to others.
    HoldoutChanged,
}

impl ChangeKind {
    /// Every kind, in the order of [`Diff::counts`].
    pub const ALL: [ChangeKind; 9] = [
        ChangeKind::NudgeAdded,
        ChangeKind::NudgeRemoved,
        ChangeKind::RuleChanged,
        ChangeKind::NudgeChanged,
        ChangeKind::TimingChanged,
        ChangeKind::QuietZoneAdded,
        ChangeKind::QuietZoneRemoved,
        ChangeKind::ErrorChanged,
        ChangeKind::HoldoutChanged,
    ];

    /// The kind of the same change seen from the other side (old and new swapped).
    pub fn inverse(self) -> ChangeKind {
        match self {
            ChangeKind::NudgeAdded => ChangeKind::NudgeRemoved,
            ChangeKind::NudgeRemoved => ChangeKind::NudgeAdded,
            ChangeKind::QuietZoneAdded => ChangeKind::QuietZoneRemoved,
            ChangeKind::QuietZoneRemoved => ChangeKind::QuietZoneAdded,
            same => same,
        }
    }

    /// The snake_case name, as serialized: `nudge_added`, `rule_changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::NudgeAdded => "nudge_added",
            ChangeKind::NudgeRemoved => "nudge_removed",
            ChangeKind::RuleChanged => "rule_changed",
            ChangeKind::NudgeChanged => "nudge_changed",
            ChangeKind::TimingChanged => "timing_changed",
            ChangeKind::QuietZoneAdded => "quiet_zone_added",
            ChangeKind::QuietZoneRemoved => "quiet_zone_removed",
            ChangeKind::ErrorChanged => "error_changed",
            ChangeKind::HoldoutChanged => "holdout_changed",
        }
    }

    /// The kind of change from `old` to `new`, or `None` when they are the same outcome.
    pub(crate) fn between(old: &Side, new: &Side) -> Option<ChangeKind> {
        use Expectation::{HeldOut, InvalidRequest, NoNudge, QuietZone, Rule};
        Some(match (&old.outcome, &new.outcome) {
            (Rule(a), Rule(b)) if a == b => {
                if old.nudge != new.nudge {
                    ChangeKind::NudgeChanged
                } else if old.at_ms != new.at_ms {
                    ChangeKind::TimingChanged
                } else {
                    return None;
                }
            }
            (a, b) if a == b => return None,
            (InvalidRequest, _) | (_, InvalidRequest) => ChangeKind::ErrorChanged,
            (HeldOut(_), _) | (_, HeldOut(_)) => ChangeKind::HoldoutChanged,
            (Rule(_), Rule(_)) => ChangeKind::RuleChanged,
            (_, Rule(_)) => ChangeKind::NudgeAdded,
            (Rule(_), _) => ChangeKind::NudgeRemoved,
            (NoNudge, _) => ChangeKind::QuietZoneAdded,
            (QuietZone, _) => ChangeKind::QuietZoneRemoved,
        })
    }
}

/// One side of a change: the outcome under one config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Side {
    /// Which rule fires, quiet zone, no nudge or InvalidRequest, as a scenario's `expect`.
    pub outcome: Expectation,
    /// The nudge shown, when a rule fires.
    pub nudge: Option<Nudge>,
    /// Recorded page views: the idle time in ms at which the rule fires.
    pub at_ms: Option<u32>,
    /// Scenarios: the preview's reason text or the InvalidRequest message (informational).
    pub reason: Option<String>,
}

/// An input whose outcome differs between the two configs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Change {
    /// What changed.
    pub kind: ChangeKind,
    /// Which of the inputs given (index in the list) it comes from.
    pub input: usize,
    /// A scenario's name.
    pub scenario: Option<String>,
    /// A recorded page view's session id.
    pub session_id: Option<String>,
    /// A recorded page view's index in its session (events sorted by time), from 0.
    pub page_index: Option<usize>,
    /// A recorded page view's URL, or a scenario's `page_url` when it has one.
    pub page_url: Option<String>,
    /// The outcome under the old config.
    pub old: Side,
    /// The outcome under the new config.
    pub new: Side,
}

/// How many changes of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ChangeCount {
    /// The kind.
    pub kind: ChangeKind,
    /// How many inputs (or, comparing decision maps, regions and pages) changed so.
    pub count: usize,
}

/// Sessions and page views a rule reaches under each config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Reach {
    /// Sessions in which the rule fires on at least one page.
    pub sessions: usize,
    /// Page views on which it fires.
    pub page_views: usize,
}

/// One rule's reach before and after (recorded sessions only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReachChange {
    /// The rule id.
    pub rule_id: String,
    /// Under the old config; `None` when it has no such rule.
    pub old: Option<Reach>,
    /// Under the new config; `None` when it has no such rule.
    pub new: Option<Reach>,
}

/// An input to a diff: a scenario file or recorded sessions.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DiffInput {
    /// A scenario file (docs/contract/as-code.md).
    Scenarios(ScenarioFile),
    /// Recorded sessions (API document 2.2).
    Sessions(Sessions),
}

impl DiffInput {
    /// Reads a scenario file (a JSON object with `scenarios`) or recorded sessions (anything
    /// else), as [`ScenarioFile::from_text`] and [`Sessions::from_text`] do.
    ///
    /// # Errors
    ///
    /// - `InvalidScenarios` or `InvalidSessions` as those functions.
    pub fn from_text(text: &str) -> Result<DiffInput, Error> {
        if text.trim_start().starts_with('{')
            && let Ok(Value::Object(map)) = crate::json::parse(text)
            && map.contains_key("scenarios")
        {
            return ScenarioFile::from_text(text).map(DiffInput::Scenarios);
        }
        Sessions::from_text(text).map(DiffInput::Sessions)
    }

    /// As [`DiffInput::from_text`], for a parsed JSON value.
    ///
    /// # Errors
    ///
    /// - As [`DiffInput::from_text`], without syntax errors.
    pub fn from_value(value: &Value) -> Result<DiffInput, Error> {
        if value.get("scenarios").is_some() {
            return ScenarioFile::from_value(value).map(DiffInput::Scenarios);
        }
        Sessions::from_value(value).map(DiffInput::Sessions)
    }
}

/// The difference between two configs (docs/contract/as-code.md `nudge-rules diff`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diff {
    /// Scenarios compared.
    pub scenarios: usize,
    /// Recorded page views compared.
    pub page_views: usize,
    /// The inputs whose outcome changes, in input order.
    pub changes: Vec<Change>,
    /// Without inputs: the pages whose decision maps were compared (those the configs mention).
    pub pages: Vec<String>,
    /// Without inputs: the pages whose decision map changes, with the regions that change owner.
    pub map_changes: Vec<PageMapChange>,
    /// How many changes of each kind (kinds with none are left out), in [`ChangeKind::ALL`]'s
    /// order.
    pub counts: Vec<ChangeCount>,
    /// With recorded sessions: each rule's reach before and after (old config's rules in order,
    /// then the new config's new ones).
    pub reach: Vec<ReachChange>,
}

impl ConfigAsCode<'_> {
    /// Compares this config, the old one, with `new` on inputs (docs/contract/as-code.md `nudge-rules diff`):
    /// every scenario and recorded page view whose outcome changes. Without inputs, compares the
    /// decision maps of the pages the configs mention ([`ConfigAsCode::diff_maps`]).
    ///
    /// ```
    /// use nudge_rules::{as_code::ConfigAsCode, diff::{ChangeKind, DiffInput}, Engine};
    /// let text = std::fs::read_to_string("examples/storefront.json").unwrap();
    /// let old = Engine::compile(&text).unwrap();
    /// let new = Engine::compile(&text.replace("\"min_idle_ms\": 8000", "\"min_idle_ms\": 12000")).unwrap();
    /// let input = DiffInput::from_text(r#"{"scenarios": [{"name": "stylist",
    ///   "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000},
    ///   "expect": {"rule": "sizing-help"}}]}"#).unwrap();
    /// let d = ConfigAsCode::new(&old).diff(&new, &[input]);
    /// assert_eq!(d.changes[0].kind, ChangeKind::NudgeRemoved);
    /// assert_eq!(d.counts[0].count, 1);
    /// ```
    pub fn diff(&self, new: &Engine, inputs: &[DiffInput]) -> Diff {
        let old = self.engine;
        if inputs.is_empty() {
            return self.diff_maps(new, None);
        }
        let mut out = Diff::default();
        let mut summaries: Option<(ReplaySummary, ReplaySummary)> = None;
        for (input, given) in inputs.iter().enumerate() {
            match given {
                DiffInput::Scenarios(file) => {
                    for scenario in file.scenarios() {
                        out.scenarios += 1;
                        let side = |engine: &Engine| {
                            let (outcome, reason) = ConfigAsCode::new(engine).outcome(scenario);
                            Side {
                                nudge: nudge_of(engine, &outcome),
                                outcome,
                                at_ms: None,
                                reason: Some(reason),
                            }
                        };
                        let (a, b) = (side(old), side(new));
                        if let Some(kind) = ChangeKind::between(&a, &b) {
                            out.changes.push(Change {
                                kind,
                                input,
                                scenario: Some(scenario.name().to_owned()),
                                session_id: None,
                                page_index: None,
                                page_url: scenario
                                    .session_state()
                                    .get("page_url")
                                    .and_then(Value::as_str)
                                    .map(str::to_owned),
                                old: a,
                                new: b,
                            });
                        }
                    }
                }
                DiffInput::Sessions(sessions) => {
                    let (a, b) = summaries
                        .get_or_insert_with(|| (ReplaySummary::new(old), ReplaySummary::new(new)));
                    for s in &sessions.sessions {
                        let (before, after) = (
                            self.replay_session(s),
                            ConfigAsCode::new(new).replay_session(s),
                        );
                        a.add(&before);
                        b.add(&after);
                        for (page_index, (p, q)) in
                            before.pages.iter().zip(&after.pages).enumerate()
                        {
                            out.page_views += 1;
                            let (x, y) = (page_side(old, &p.outcome), page_side(new, &q.outcome));
                            if let Some(kind) = ChangeKind::between(&x, &y) {
                                out.changes.push(Change {
                                    kind,
                                    input,
                                    scenario: None,
                                    session_id: Some(before.session.id.clone()),
                                    page_index: Some(page_index),
                                    page_url: Some(p.event.url.clone()),
                                    old: x,
                                    new: y,
                                });
                            }
                        }
                    }
                }
            }
        }
        if let Some((a, b)) = &summaries {
            out.reach = reach(a, b);
        }
        out.counts = counts(out.changes.iter().map(|c| c.kind));
        out
    }

    /// Compares the decision maps (docs/contract/analysis.md) of this config, the old one, and `new` exactly, on
    /// `pages` or, when `None`, on the pages the two configs mention: for every pattern of
    /// either, the page it names (`/cart` for `/cart` and `/cart/**`; one page per `{a,b}`
    /// alternative; wildcards filled in: `/products/*` gives `/products/x`), sorted; at most
    /// [`MAX_DIFF_PAGES`](crate::limits::MAX_DIFF_PAGES) pages.
    ///
    /// ```
    /// use nudge_rules::{as_code::ConfigAsCode, diff::ChangeKind, Engine};
    /// let text = std::fs::read_to_string("examples/storefront.json").unwrap();
    /// let old = Engine::compile(&text).unwrap();
    /// let new = Engine::compile(&text.replace("\"min_idle_ms\": 8000", "\"min_idle_ms\": 12000")).unwrap();
    /// let d = ConfigAsCode::new(&old).diff_maps(&new, Some(&["/products/linen-shirt".to_owned()]));
    /// assert_eq!(d.map_changes[0].page_url, "/products/linen-shirt");
    /// assert!(d.counts.iter().any(|c| c.kind == ChangeKind::NudgeRemoved));
    /// ```
    pub fn diff_maps(&self, new: &Engine, pages: Option<&[String]>) -> Diff {
        let old = self.engine;
        let pages = match pages {
            Some(pages) => pages.to_vec(),
            None => map::mentioned_pages(old, new),
        };
        let mut out = Diff::default();
        let mut kinds = Vec::new();
        for page in &pages {
            if let Some(change) = map::page_change(old, new, page) {
                kinds.extend(change.kinds());
                out.map_changes.push(change);
            }
        }
        out.counts = counts(kinds.into_iter());
        out.pages = pages;
        out
    }
}

fn nudge_of(engine: &Engine, outcome: &Expectation) -> Option<Nudge> {
    let Expectation::Rule(id) = outcome else {
        return None;
    };
    let rules = &engine.config().rules;
    rules.iter().find(|r| &r.id == id).map(|r| r.nudge.clone())
}

pub(crate) fn page_side(engine: &Engine, outcome: &PageOutcome) -> Side {
    let (outcome, at_ms) = match outcome {
        PageOutcome::Fired { rule_id, at_ms, .. } => {
            (Expectation::Rule(rule_id.clone()), Some(*at_ms))
        }
        PageOutcome::HeldOut { rule_id, at_ms, .. } => {
            (Expectation::HeldOut(rule_id.clone()), Some(*at_ms))
        }
        PageOutcome::QuietZone { .. } => (Expectation::QuietZone, None),
        PageOutcome::NoNudge => (Expectation::NoNudge, None),
        PageOutcome::Rejected { .. } => (Expectation::InvalidRequest, None),
    };
    Side {
        nudge: nudge_of(engine, &outcome),
        outcome,
        at_ms,
        reason: None,
    }
}

fn counts(kinds: impl Iterator<Item = ChangeKind>) -> Vec<ChangeCount> {
    let mut by_kind = [0usize; ChangeKind::ALL.len()];
    for kind in kinds {
        if let Some(n) = by_kind.get_mut(kind as usize) {
            *n += 1;
        }
    }
    ChangeKind::ALL
        .into_iter()
        .zip(by_kind)
        .filter(|&(_, count)| count > 0)
        .map(|(kind, count)| ChangeCount { kind, count })
        .collect()
}

fn reach(old: &ReplaySummary, new: &ReplaySummary) -> Vec<ReachChange> {
    let of = |s: &ReplaySummary, id: &str| {
        s.rules.iter().find(|r| r.rule_id == id).map(|r| Reach {
            sessions: r.sessions,
            page_views: r.page_views,
        })
    };
    let mut ids: Vec<&str> = old.rules.iter().map(|r| r.rule_id.as_str()).collect();
    for r in &new.rules {
        if !ids.contains(&r.rule_id.as_str()) {
            ids.push(&r.rule_id);
        }
    }
    ids.into_iter()
        .map(|id| ReachChange {
            rule_id: id.to_owned(),
            old: of(old, id),
            new: of(new, id),
        })
        .collect()
}
