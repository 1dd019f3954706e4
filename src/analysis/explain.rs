//! Explain one session state (docs/contract/analysis.md): every rule's verdict and conditions.
//!
//! Built from the same [`RuleCheck`]s as the preview's reasons, and checked against the hot path
//! by property tests, so explain and preview cannot disagree.

use super::Analysis;
use serde::Serialize;

use super::{QuietZoneRef, UrlRejection};
use crate::config::NudgeType;
use crate::error::Error;
use crate::reason::{ConditionCheck, RuleCheck, earliest_idle};
use crate::request::SessionState;
use crate::wire::PreviewResult;

/// A rule's verdict for one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// The first enabled rule whose conditions all hold: it fires.
    Fired,
    /// All its conditions hold, but an earlier rule fired.
    Shadowed,
    /// At least one condition fails.
    Failed,
    /// `enabled: false`: skipped.
    Disabled,
    /// The page is in a quiet zone: no rule fires.
    Quiet,
    /// All its conditions hold and it is not capped, but the visitor is in its control group
    /// (docs/contract/caps.md holdout): no nudge is shown, and later rules are not tried (they are
    /// `shadowed` when their conditions hold).
    HeldOut,
}

/// One rule in an [`Explanation`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RuleExplanation {
    /// Index in config order.
    pub index: usize,
    /// The rule id.
    pub id: String,
    /// The nudge the rule shows.
    pub nudge_type: NudgeType,
    /// Fired, shadowed, failed, disabled or quiet.
    pub verdict: Verdict,
    /// Each condition (those that are set; absent conditions always hold) with its outcome.
    pub conditions: Vec<ConditionCheck>,
}

/// Everything about one session state (docs/contract/analysis.md explain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Explanation {
    /// The page URL as given.
    pub page_url: String,
    /// The normalized path; `None` when the URL is rejected.
    pub path: Option<String>,
    /// Why the URL is rejected, when it is.
    pub url_error: Option<UrlRejection>,
    /// The intent score, 0 to 100.
    pub intent_score: u8,
    /// Idle time in ms, 0 to 86,400,000.
    pub idle_ms: u32,
    /// The first quiet zone (config order) containing the path.
    pub quiet_zone: Option<QuietZoneRef>,
    /// Every rule in config order (empty when the URL is rejected).
    pub rules: Vec<RuleExplanation>,
    /// The rule that fires.
    pub fired_rule_id: Option<String>,
    /// The rule the visitor is held out from (docs/contract/caps.md), when one is: then none fires. Written
    /// only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_out_rule_id: Option<String>,
    /// The earliest idle time (at or after `idle_ms`, in ms) at which a nudge fires for this
    /// intent score and page: `idle_ms` itself when one fires now; `None` when none ever does.
    pub earliest_idle_ms: Option<u32>,
    /// The rule that fires at `earliest_idle_ms`.
    pub earliest_rule_id: Option<String>,
    /// Exactly what the preview returns; `None` when the URL is rejected.
    pub result: Option<PreviewResult>,
}

impl Analysis<'_> {
    /// Explains one session state (docs/contract/analysis.md): the normalized path (or why the URL is rejected), the
    /// quiet zone, every rule's verdict with each condition's compared values, the rule that
    /// fires, and the earliest idle time at which a nudge would fire.
    ///
    /// # Errors
    ///
    /// - `InvalidRequest` when `intent_score` is over 100 or `idle_ms` over 86,400,000. A rejected
    ///   `page_url` is not an error here: it is reported in [`Explanation::url_error`].
    pub fn explain(&self, state: &SessionState) -> Result<Explanation, Error> {
        SessionState::check_ranges(state.intent_score, state.idle_ms)?;
        let normalized = self.engine.normalize(&state.page_url);
        let mut out = Explanation {
            page_url: state.page_url.clone(),
            path: None,
            url_error: None,
            intent_score: state.intent_score,
            idle_ms: state.idle_ms,
            quiet_zone: None,
            rules: Vec::new(),
            fired_rule_id: None,
            held_out_rule_id: None,
            earliest_idle_ms: None,
            earliest_rule_id: None,
            result: None,
        };
        let path = match normalized {
            Ok(path) => path,
            Err(e) => {
                out.url_error = Some(UrlRejection::from(&e));
                return Ok(out);
            }
        };
        let visit = state.visit();
        let preview = self
            .engine
            .preview_path(path, state.intent_score, state.idle_ms, visit);
        let held_out = preview.held_out_rule().map(|r| r.id.as_str());
        let path = preview.path().to_owned();
        let (intent, idle) = (state.intent_score, state.idle_ms);
        let config = self.engine.config();
        let rules = &config.rules;
        let quiet = self.engine.quiet_zone_of(&path);
        let checks: Vec<RuleCheck> = self.engine.with_page_matches(&path, |m| {
            rules
                .iter()
                .enumerate()
                .map(|(i, r)| RuleCheck::of_visit(config, (r, i), m, (intent, idle), &visit))
                .collect()
        });
        let mut fired: Option<usize> = None;
        let mut decided = false;
        for (rule, check) in rules.iter().zip(&checks) {
            let verdict = if !rule.enabled {
                Verdict::Disabled
            } else if quiet.is_some() {
                Verdict::Quiet
            } else if !check.holds() {
                Verdict::Failed
            } else if decided {
                Verdict::Shadowed
            } else if held_out == Some(rule.id.as_str()) {
                decided = true;
                out.held_out_rule_id = Some(rule.id.clone());
                Verdict::HeldOut
            } else {
                decided = true;
                fired = Some(check.rule);
                Verdict::Fired
            };
            out.rules.push(RuleExplanation {
                index: check.rule,
                id: rule.id.clone(),
                nudge_type: rule.nudge.nudge_type,
                verdict,
                conditions: check.conditions(rule, &path, intent, idle),
            });
        }
        let id = |r: usize| rules.get(r).map(|r| r.id.clone());
        out.fired_rule_id = fired.and_then(id);
        if quiet.is_none() && held_out.is_none() {
            let earliest = match fired {
                Some(r) => Some((idle, r)),
                None => {
                    let enabled: Vec<RuleCheck> = checks
                        .iter()
                        .zip(rules)
                        .filter(|(_, r)| r.enabled)
                        .map(|(c, _)| *c)
                        .collect();
                    earliest_idle(self.engine, &enabled)
                }
            };
            out.earliest_idle_ms = earliest.map(|(at, _)| at);
            out.earliest_rule_id = earliest.and_then(|(_, r)| id(r));
        }
        out.quiet_zone = quiet.and_then(|z| QuietZoneRef::new(self.engine, z));
        out.result = Some(preview.to_result());
        out.path = Some(path);
        Ok(out)
    }
}
