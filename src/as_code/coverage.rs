//! Coverage of a config by scenarios (docs/contract/as-code.md `--coverage`): which rules fired, which conditions
//! of each rule were seen true and seen false, which patterns and quiet zones matched, and what
//! was never exercised, by name.
//!
//! Built from the engine's own analysis, not a second evaluation: each scenario's state is
//! explained ([`Analysis::explain`]: every rule's conditions with their outcomes) and its page
//! tested against every pattern ([`Analysis::page_report`]).

use super::ConfigAsCode;
use std::collections::HashMap;

use serde::Serialize;

use crate::analysis::Analysis;
use crate::as_code::scenarios::Scenario;
use crate::config::{Conditions, NudgeType};

/// How often one condition of a rule held and failed over the scenarios.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ConditionCoverage {
    /// `min_intent_score`, `max_intent_score`, `min_idle_ms`, `pages` or `exclude_pages`.
    pub condition: &'static str,
    /// Scenarios in which it held.
    pub seen_true: usize,
    /// Scenarios in which it failed.
    pub seen_false: usize,
}

/// One rule's coverage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RuleCoverage {
    /// Index in config order.
    pub index: usize,
    /// The rule id.
    pub id: String,
    /// The rule's nudge type.
    pub nudge_type: NudgeType,
    /// `false`: the rule is disabled; it never fires and its conditions are not counted.
    pub enabled: bool,
    /// Scenarios in which the rule fired.
    pub fired: usize,
    /// Scenarios in which the visitor was held out from the rule (docs/contract/caps.md: its control group).
    pub held_out: usize,
    /// Scenarios in which the rule was capped (docs/contract/caps.md: `cap` or `max_nudges_per_session`
    /// reached), whether or not its conditions held.
    pub capped: usize,
    /// The conditions the rule sets (absent ones always hold and are not listed), in field
    /// order.
    pub conditions: Vec<ConditionCoverage>,
}

/// One pattern's coverage: a quiet zone or a `pages`/`exclude_pages` pattern.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PatternCoverage {
    /// `quiet_zones[0]`, `rules[2].when.pages[1]`, `rules[2].when.exclude_pages[0]`.
    pub json_path: String,
    /// The pattern as written.
    pub pattern: String,
    /// Scenarios whose page it matched.
    pub matched: usize,
}

/// Totals: exercised out of possible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CoverageTotals {
    /// Enabled rules that fired at least once.
    pub rules_fired: usize,
    /// Enabled rules.
    pub rules: usize,
    /// Condition outcomes seen (each set condition of an enabled rule has two: true, false).
    pub condition_outcomes_seen: usize,
    /// Condition outcomes possible.
    pub condition_outcomes: usize,
    /// Patterns (quiet zones included) that matched at least once.
    pub patterns_matched: usize,
    /// Patterns, quiet zones included.
    pub patterns: usize,
}

/// What the scenarios exercise of a config (docs/contract/as-code.md `--coverage`).
///
/// A rule's conditions count over the scenarios whose state docs/contract/preview.md accepts and whose page is in
/// no quiet zone, for every enabled rule, whether or not an earlier rule fired (as
/// [`Analysis::explain`] reports them); patterns count over every accepted page, quiet ones
/// included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Coverage {
    /// Scenarios counted.
    pub scenarios: usize,
    /// Scenarios whose state was rejected (InvalidRequest): they exercise nothing.
    pub rejected: usize,
    /// Every rule, in config order.
    pub rules: Vec<RuleCoverage>,
    /// Every quiet zone, in config order.
    pub quiet_zones: Vec<PatternCoverage>,
    /// Every `pages` and `exclude_pages` pattern, in config order.
    pub patterns: Vec<PatternCoverage>,
    /// Exercised out of possible.
    pub totals: CoverageTotals,
    /// What was never exercised, one line each: `rule "x" never fired`, `rule "x":
    /// min_idle_ms never seen false`, `pattern rules[1].when.pages[0] "/a/**" never matched`.
    pub unexercised: Vec<String>,
}

/// The conditions a rule sets, in field order (as explain lists them).
fn set_conditions(when: &Conditions) -> Vec<&'static str> {
    [
        ("min_intent_score", when.has_min_intent()),
        ("max_intent_score", when.has_max_intent()),
        ("min_idle_ms", when.has_min_idle()),
        ("pages", when.pages.is_some()),
        ("exclude_pages", !when.exclude_pages.is_empty()),
        ("exit_intent", when.exit_intent.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

impl ConfigAsCode<'_> {
    /// What the scenarios exercise of this config (docs/contract/as-code.md `--coverage`).
    ///
    /// ```
    /// use nudge_rules::scenarios::ScenarioFile;
    /// let engine = nudge_rules::Engine::compile(&std::fs::read_to_string("examples/storefront.json").unwrap()).unwrap();
    /// let file = ScenarioFile::from_text(r#"{"scenarios": [{"name": "stylist",
    ///   "session_state": {"intent_score": 82, "page_url": "/products/linen-shirt", "idle_ms": 9000},
    ///   "expect": {"rule": "sizing-help"}}]}"#).unwrap();
    /// let coverage = nudge_rules::as_code::ConfigAsCode::new(&engine).coverage(file.scenarios());
    /// let sizing = coverage.rules.iter().find(|r| r.id == "sizing-help").unwrap();
    /// assert_eq!(sizing.fired, 1);
    /// assert!(coverage.unexercised.contains(&r#"rule "sale-toast" never fired"#.to_owned()));
    /// ```
    pub fn coverage(&self, scenarios: &[Scenario]) -> Coverage {
        let config = self.engine.config();
        let mut rules: Vec<RuleCoverage> = config
            .rules
            .iter()
            .enumerate()
            .map(|(index, rule)| RuleCoverage {
                index,
                id: rule.id.clone(),
                nudge_type: rule.nudge.nudge_type,
                enabled: rule.enabled,
                fired: 0,
                held_out: 0,
                capped: 0,
                conditions: set_conditions(&rule.when)
                    .into_iter()
                    .map(|condition| ConditionCoverage {
                        condition,
                        seen_true: 0,
                        seen_false: 0,
                    })
                    .collect(),
            })
            .collect();
        let pattern = |json_path: String, p: &crate::config::Pattern| PatternCoverage {
            json_path,
            pattern: p.as_written().to_owned(),
            matched: 0,
        };
        let mut quiet_zones: Vec<PatternCoverage> = config
            .quiet_zones
            .iter()
            .enumerate()
            .map(|(i, p)| pattern(format!("quiet_zones[{i}]"), p))
            .collect();
        let mut patterns = Vec::new();
        for (r, rule) in config.rules.iter().enumerate() {
            for (list, items) in [
                ("pages", rule.when.pages.as_deref().unwrap_or(&[])),
                ("exclude_pages", rule.when.exclude_pages.as_slice()),
            ] {
                for (i, p) in items.iter().enumerate() {
                    patterns.push(pattern(format!("rules[{r}].when.{list}[{i}]"), p));
                }
            }
        }
        let by_path: HashMap<String, usize> = patterns
            .iter()
            .enumerate()
            .map(|(i, p)| (p.json_path.clone(), i))
            .collect();

        let mut rejected = 0;
        for scenario in scenarios {
            let Some(explanation) = scenario
                .state()
                .and_then(|s| Analysis::new(self.engine).explain(s).ok())
            else {
                rejected += 1;
                continue;
            };
            let Some(path) = explanation.path.as_deref() else {
                rejected += 1;
                continue;
            };
            for m in Analysis::new(self.engine).page_report(path).matches {
                let slot = match m.json_path.strip_prefix("quiet_zones[") {
                    Some(rest) => rest
                        .trim_end_matches(']')
                        .parse::<usize>()
                        .ok()
                        .and_then(|z| quiet_zones.get_mut(z)),
                    None => by_path.get(&m.json_path).and_then(|&i| patterns.get_mut(i)),
                };
                if let Some(slot) = slot {
                    slot.matched += 1;
                }
            }
            if explanation.quiet_zone.is_some() {
                continue;
            }
            for (seen, cover) in explanation.rules.iter().zip(rules.iter_mut()) {
                if !cover.enabled {
                    continue;
                }
                if explanation.fired_rule_id.as_deref() == Some(cover.id.as_str()) {
                    cover.fired += 1;
                }
                if explanation.held_out_rule_id.as_deref() == Some(cover.id.as_str()) {
                    cover.held_out += 1;
                }
                if seen
                    .conditions
                    .iter()
                    .any(|c| matches!(c.condition, "cap" | "max_nudges_per_session"))
                {
                    cover.capped += 1;
                }
                for check in &seen.conditions {
                    if let Some(c) = cover
                        .conditions
                        .iter_mut()
                        .find(|c| c.condition == check.condition)
                    {
                        if check.holds {
                            c.seen_true += 1;
                        } else {
                            c.seen_false += 1;
                        }
                    }
                }
            }
        }
        let totals = totals(&rules, &quiet_zones, &patterns);
        let unexercised = unexercised(&rules, &quiet_zones, &patterns);
        Coverage {
            scenarios: scenarios.len(),
            rejected,
            rules,
            quiet_zones,
            patterns,
            totals,
            unexercised,
        }
    }
}

fn totals(
    rules: &[RuleCoverage],
    quiet_zones: &[PatternCoverage],
    patterns: &[PatternCoverage],
) -> CoverageTotals {
    let enabled = rules.iter().filter(|r| r.enabled);
    let conditions = || enabled.clone().flat_map(|r| &r.conditions);
    let all_patterns = || quiet_zones.iter().chain(patterns);
    CoverageTotals {
        rules_fired: enabled.clone().filter(|r| r.fired > 0).count(),
        rules: enabled.clone().count(),
        condition_outcomes_seen: conditions()
            .map(|c| usize::from(c.seen_true > 0) + usize::from(c.seen_false > 0))
            .sum(),
        condition_outcomes: conditions().count() * 2,
        patterns_matched: all_patterns().filter(|p| p.matched > 0).count(),
        patterns: all_patterns().count(),
    }
}

fn unexercised(
    rules: &[RuleCoverage],
    quiet_zones: &[PatternCoverage],
    patterns: &[PatternCoverage],
) -> Vec<String> {
    let mut out = Vec::new();
    for rule in rules.iter().filter(|r| r.enabled) {
        let id = crate::text::Quoted(&rule.id);
        if rule.fired == 0 {
            out.push(format!("rule {id} never fired"));
        }
        for c in &rule.conditions {
            match (c.seen_true, c.seen_false) {
                (0, 0) => out.push(format!("rule {id}: {} never evaluated", c.condition)),
                (0, _) => out.push(format!("rule {id}: {} never seen true", c.condition)),
                (_, 0) => out.push(format!("rule {id}: {} never seen false", c.condition)),
                _ => {}
            }
        }
    }
    for (noun, list) in [("quiet zone", quiet_zones), ("pattern", patterns)] {
        for p in list.iter().filter(|p| p.matched == 0) {
            out.push(format!(
                "{noun} {} {} never matched",
                p.json_path,
                crate::text::Quoted(&p.pattern)
            ));
        }
    }
    out
}
