//! Reason texts (docs/contract/preview.md evaluation steps 1 to 3) and the per-rule condition checks they are
//! written from.
//!
//! Preview reasons and explain (docs/contract/analysis.md) are both derived from [`RuleCheck`], so they cannot
//! disagree; the conditions themselves are [`Conditions`](crate::Conditions)' predicates.

use serde::Serialize;

use crate::config::{Config, Pattern, Rule};
use crate::engine::{Engine, Outcome};
use crate::matches::{List, PageMatches};
use crate::text::{Quoted, push_quoted};
use crate::visit::{Capped, Visit};
use crate::words::{Condition, PageCondition};

/// The outcome of one condition of one rule, with the compared values in `detail`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ConditionCheck {
    /// The condition's field name: `min_intent_score`, `max_intent_score`, `min_idle_ms`,
    /// `pages`, `exclude_pages` or `exit_intent`; or, for a cap the rule has reached (docs/contract/caps.md,
    /// listed only then, never holding), `cap` or `max_nudges_per_session`.
    pub condition: &'static str,
    /// True when the condition holds.
    pub holds: bool,
    /// What was compared: `intent_score 42 < min 60`,
    /// `page /cart matches exclude_pages[1] "/cart"`.
    pub detail: String,
}

/// Which of a rule's conditions hold for one state. A condition that is absent or at its default
/// (always holds) is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RuleCheck {
    pub(crate) rule: usize,
    pub(crate) min_intent: Option<bool>,
    pub(crate) max_intent: Option<bool>,
    pub(crate) min_idle: Option<bool>,
    /// `Some(Some(i))`: `pages[i]` is the first that matches; `Some(None)`: none matches.
    pub(crate) pages: Option<Option<usize>>,
    /// `Some(Some(i))`: `exclude_pages[i]` matches (the condition fails).
    pub(crate) exclude: Option<Option<usize>>,
    /// `exit_intent`'s outcome, when the rule sets it: `(holds, the state's exit intent)`.
    pub(crate) exit_intent: Option<(bool, bool)>,
    /// The cap the rule has reached for this visit (docs/contract/caps.md), which fails it.
    pub(crate) capped: Option<Capped>,
}

impl RuleCheck {
    pub(crate) fn new(
        rule: &Rule,
        index: usize,
        matches: &PageMatches<'_>,
        intent_score: u8,
        idle_ms: u32,
    ) -> Self {
        Self::with_first_matches(rule, index, intent_score, idle_ms, |list| {
            matches.first(index, list)
        })
    }

    /// [`RuleCheck::new`] for a visit (docs/contract/caps.md): with its exit intent, and the cap the rule has
    /// reached in `config` for it.
    pub(crate) fn of_visit(
        config: &Config,
        (rule, index): (&Rule, usize),
        matches: &PageMatches<'_>,
        (intent_score, idle_ms): (u8, u32),
        visit: &Visit<'_>,
    ) -> Self {
        Self::new(rule, index, matches, intent_score, idle_ms).with_visit(config, rule, visit)
    }

    /// This check with the visit's exit intent and caps.
    fn with_visit(mut self, config: &Config, rule: &Rule, visit: &Visit<'_>) -> Self {
        self.exit_intent = rule.when.exit_intent.map(|_| {
            (
                rule.when.exit_intent_holds(visit.exit_intent),
                visit.exit_intent,
            )
        });
        self.capped = visit.capped(config, rule);
        self
    }

    /// The check of a rule that fired, whose first matching `pages` pattern is `first_page`
    /// (no `exclude_pages` pattern matches, or it would not have fired): no page matching needed.
    fn fired(
        rule: &Rule,
        index: usize,
        first_page: Option<usize>,
        intent_score: u8,
        idle_ms: u32,
    ) -> Self {
        Self::with_first_matches(rule, index, intent_score, idle_ms, |list| match list {
            List::Pages => first_page,
            List::ExcludePages => None,
        })
    }

    /// The check, given the first matching pattern of each of the rule's page lists.
    fn with_first_matches(
        rule: &Rule,
        index: usize,
        intent_score: u8,
        idle_ms: u32,
        first: impl Fn(List) -> Option<usize>,
    ) -> Self {
        let w = &rule.when;
        RuleCheck {
            rule: index,
            min_intent: w.has_min_intent().then(|| w.min_intent_holds(intent_score)),
            max_intent: w.has_max_intent().then(|| w.max_intent_holds(intent_score)),
            min_idle: w.has_min_idle().then(|| w.min_idle_holds(idle_ms)),
            // The first matching pattern of each list, when the list is set: the reasons name it.
            pages: w.pages.as_ref().map(|_| first(List::Pages)),
            exclude: (!w.exclude_pages.is_empty()).then(|| first(List::ExcludePages)),
            exit_intent: w.exit_intent.map(|_| (w.exit_intent_holds(false), false)),
            capped: None,
        }
    }

    fn outcomes(&self) -> [Option<bool>; 7] {
        [
            self.min_intent,
            self.max_intent,
            self.min_idle,
            self.pages_holds(),
            self.exclude_holds(),
            self.exit_intent.map(|(holds, _)| holds),
            self.capped.map(|_| false),
        ]
    }

    /// `pages`' outcome, when the rule has the list.
    fn pages_holds(&self) -> Option<bool> {
        self.pages.map(|first| first.is_some())
    }

    /// `exclude_pages`' outcome, when the rule has patterns in it.
    fn exclude_holds(&self) -> Option<bool> {
        self.exclude.map(|first| first.is_none())
    }

    /// How many conditions fail.
    pub(crate) fn failing(&self) -> usize {
        self.outcomes()
            .iter()
            .filter(|o| **o == Some(false))
            .count()
    }

    /// True when every condition holds.
    pub(crate) fn holds(&self) -> bool {
        self.failing() == 0
    }

    /// True when idle time is the only thing missing (idle time only grows, so the rule will
    /// fire if the visitor keeps idling).
    pub(crate) fn only_idle_missing(&self) -> bool {
        self.min_idle == Some(false) && self.failing() == 1
    }

    /// The conditions with their outcomes and compared values, in field order.
    pub(crate) fn conditions(
        &self,
        rule: &Rule,
        path: &str,
        intent_score: u8,
        idle_ms: u32,
    ) -> Vec<ConditionCheck> {
        let mut out = Vec::new();
        self.for_each_condition(rule, path, intent_score, idle_ms, |c, holds| {
            let mut detail = String::new();
            write_detail(&mut detail, c, holds);
            out.push(ConditionCheck {
                condition: c.name(),
                holds,
                detail,
            });
        });
        out
    }

    /// Writes the compared values of the conditions whose outcome is `holds` (all of them when
    /// `None`) into `out`, separated by `separator`; returns how many it wrote.
    fn write_details(
        &self,
        rule: &Rule,
        (path, intent_score, idle_ms): (&str, u8, u32),
        holds: Option<bool>,
        separator: &str,
        out: &mut String,
    ) -> usize {
        let mut written = 0;
        self.for_each_condition(rule, path, intent_score, idle_ms, |c, h| {
            if holds.is_none_or(|want| want == h) {
                if written > 0 {
                    out.push_str(separator);
                }
                write_detail(out, c, h);
                written += 1;
            }
        });
        written
    }

    /// Calls `f(condition, holds)` for each condition that is set, in field order: what it
    /// compared ([`Condition`]), which the reasons and explain's `detail` word for engineers
    /// ([`write_detail`]) and `words.rs` for merchants.
    pub(crate) fn for_each_condition<'a>(
        &self,
        rule: &'a Rule,
        path: &'a str,
        intent_score: u8,
        idle_ms: u32,
        mut f: impl FnMut(Condition<'a>, bool),
    ) {
        let w = &rule.when;
        let intent = intent_score;
        if let Some(holds) = self.min_intent {
            let min = w.min_intent_score;
            f(Condition::MinIntent { intent, min }, holds);
        }
        if let Some(holds) = self.max_intent {
            let max = w.max_intent_score;
            f(Condition::MaxIntent { intent, max }, holds);
        }
        if let Some(holds) = self.min_idle {
            let min = w.min_idle_ms;
            f(Condition::MinIdle { idle_ms, min }, holds);
        }
        if let (Some(first), Some(patterns)) = (self.pages, w.pages.as_deref()) {
            let list = List::Pages;
            let page = PageCondition::new(list, path, patterns, first);
            f(Condition::Pages(page), first.is_some());
        }
        if let Some(first) = self.exclude {
            let list = List::ExcludePages;
            let page = PageCondition::new(list, path, &w.exclude_pages, first);
            f(Condition::Pages(page), first.is_none());
        }
        if let (Some((holds, exit_intent)), Some(want)) = (self.exit_intent, w.exit_intent) {
            f(Condition::ExitIntent { exit_intent, want }, holds);
        }
        if let Some(capped) = self.capped {
            f(Condition::Cap(capped), false);
        }
    }
}

/// Appends a condition's compared values in the engine's words (explain's `detail`, the
/// reasons): `intent_score 42 < min 60`, `idle_ms 9000 < min 12000`, `page /a matches
/// pages[1] "/a"`, `page /a matches none of pages ("/b", ...)`, `pages is empty, so no page
/// matches`.
fn write_detail(out: &mut String, c: Condition<'_>, holds: bool) {
    use Part::{Number, Text};
    let (name, value, op, bound) = match c {
        Condition::MinIntent { intent, min } => {
            let op = if holds { " >= min " } else { " < min " };
            ("intent_score ", u32::from(intent), op, u32::from(min))
        }
        Condition::MaxIntent { intent, max } => {
            let op = if holds { " <= max " } else { " > max " };
            ("intent_score ", u32::from(intent), op, u32::from(max))
        }
        Condition::MinIdle { idle_ms, min } => {
            let op = if holds { " >= min " } else { " < min " };
            ("idle_ms ", idle_ms, op, min)
        }
        Condition::Pages(page) => return write_page_detail(out, &page),
        Condition::ExitIntent { exit_intent, want } => {
            let show = |b: bool| if b { "true" } else { "false" };
            let op = if holds { " == " } else { " != " };
            return write_parts(
                out,
                &[
                    Text("exit_intent "),
                    Text(show(exit_intent)),
                    Text(op),
                    Text(show(want)),
                ],
            );
        }
        Condition::Cap(capped) => return capped.write(out),
    };
    write_parts(out, &[Text(name), Number(value), Text(op), Number(bound)]);
}

/// A page list's part of [`write_detail`].
fn write_page_detail(out: &mut String, page: &PageCondition<'_>) {
    use Part::{Number, Patterns, Text, Written};
    let (path, patterns, condition) = (page.path, page.patterns, page.list.key());
    if page.list == List::Pages && patterns.is_empty() {
        return write_parts(out, &[Text("pages is empty, so no page matches")]);
    }
    match page.first.and_then(|i| patterns.get(i).map(|p| (i, p))) {
        Some((i, p)) => {
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            let parts = [
                Text("page "),
                Text(path),
                Text(" matches "),
                Text(condition),
                Text("["),
                Number(index),
                Text("] "),
                Written(p),
            ];
            write_parts(out, &parts);
        }
        None => {
            let parts = [
                Text("page "),
                Text(path),
                Text(" matches none of "),
                Text(condition),
                Text(" "),
                Patterns(patterns),
            ];
            write_parts(out, &parts);
        }
    }
}

/// One part of a condition's detail text.
#[derive(Clone, Copy)]
enum Part<'a> {
    Text(&'a str),
    Number(u32),
    /// Quoted and escaped as `{:?}` does.
    Quoted(&'a str),
    /// A pattern as written, quoted as `Quoted` is.
    Written(&'a Pattern),
    /// Quoted patterns as `("/a", "/b", "/c" and 4 more)`.
    Patterns(&'a [Pattern]),
}

/// Appends the parts to `out` without going through `core::fmt` (reasons are built on every
/// preview of the object API, and formatting machinery is the slow part in WASM).
fn write_parts(out: &mut String, parts: &[Part<'_>]) {
    for part in parts {
        match part {
            Part::Text(text) => out.push_str(text),
            Part::Number(n) => out.push_str(itoa::Buffer::new().format(*n)),
            Part::Quoted(text) => push_quoted(out, text),
            Part::Written(pattern) => pattern.push_quoted(out),
            Part::Patterns(patterns) => {
                out.push('(');
                for (i, p) in patterns.iter().take(3).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    p.push_quoted(out);
                }
                let more = patterns.len().saturating_sub(3);
                if more > 0 {
                    out.push_str(" and ");
                    out.push_str(itoa::Buffer::new().format(more));
                    out.push_str(" more");
                }
                out.push(')');
            }
        }
    }
}

/// Every enabled rule's check for a normalized path and a visit, in config order.
pub(crate) fn enabled_checks(
    engine: &Engine,
    path: &str,
    intent_score: u8,
    idle_ms: u32,
    visit: &Visit<'_>,
) -> Vec<RuleCheck> {
    let config = engine.config();
    engine.with_page_matches(path, |matches| {
        config
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.enabled)
            .map(|(i, r)| {
                RuleCheck::of_visit(config, (r, i), matches, (intent_score, idle_ms), visit)
            })
            .collect()
    })
}

/// The earliest idle time (at or after `idle_ms`) at which some rule would fire, and that rule,
/// given checks where nothing fires now: among the rules missing only idle time, the smallest
/// `min_idle_ms`, and the first such rule in config order.
pub(crate) fn earliest_idle(engine: &Engine, checks: &[RuleCheck]) -> Option<(u32, usize)> {
    let rules = &engine.config().rules;
    checks
        .iter()
        .filter(|c| c.only_idle_missing())
        .filter_map(|c| rules.get(c.rule).map(|r| (r.when.min_idle_ms, c.rule)))
        .min()
}

/// Bytes reserved for a reason text up front: most fit, so the text is not grown in steps.
const REASON_CAPACITY: usize = 256;

/// The reason text for an outcome (docs/contract/preview.md evaluation steps 1 to 3; docs/contract/caps.md caps and holdouts).
pub(crate) fn reason(
    engine: &Engine,
    (path, intent_score, idle_ms): (&str, u8, u32),
    visit: &Visit<'_>,
    outcome: Outcome,
    fired_page: Option<usize>,
) -> String {
    let config = engine.config();
    match outcome {
        Outcome::Quiet(z) => {
            let zone = config
                .quiet_zones
                .get(z)
                .map_or(Part::Text(""), Part::Written);
            let index = u32::try_from(z).unwrap_or(u32::MAX);
            let mut text = String::with_capacity(REASON_CAPACITY);
            write_parts(
                &mut text,
                &[
                    Part::Text("page "),
                    Part::Text(path),
                    Part::Text(" is in quiet zone "),
                    zone,
                    Part::Text(" (quiet_zones["),
                    Part::Number(index),
                    Part::Text("]); no nudge fires there"),
                ],
            );
            text
        }
        Outcome::Fired(r) => {
            let Some(rule) = config.rules.get(r) else {
                return String::new();
            };
            let check = RuleCheck::fired(rule, r, fired_page, intent_score, idle_ms)
                .with_visit(config, rule, visit);
            let mut text = String::with_capacity(REASON_CAPACITY);
            write_parts(
                &mut text,
                &[
                    Part::Text("rule "),
                    Part::Quoted(&rule.id),
                    Part::Text(" fired: "),
                ],
            );
            let state = (path, intent_score, idle_ms);
            if check.write_details(rule, state, None, ", ", &mut text) == 0 {
                text.push_str("it has no conditions");
            }
            text
        }
        Outcome::HeldOut(r) => {
            let Some(rule) = config.rules.get(r) else {
                return String::new();
            };
            let bucket = visit.held_out(rule).unwrap_or_default();
            let mut text = String::with_capacity(REASON_CAPACITY);
            write_parts(
                &mut text,
                &[
                    Part::Text("no nudge: rule "),
                    Part::Quoted(&rule.id),
                    Part::Text(" would fire, but visitor "),
                    Part::Text(visit.visitor_id.unwrap_or_default()),
                    Part::Text(" is in its control group (holdout bucket "),
                    Part::Number(u32::from(bucket)),
                    Part::Text(" < "),
                    Part::Number(u32::from(rule.holdout_percent) * 100),
                    Part::Text(" of 10000, holdout_percent "),
                    Part::Number(u32::from(rule.holdout_percent)),
                    Part::Text("); the visitor is held out and no later rule is tried"),
                ],
            );
            text
        }
        Outcome::NoMatch => no_match_reason(engine, (path, intent_score, idle_ms), visit),
    }
}

fn no_match_reason(
    engine: &Engine,
    (path, intent_score, idle_ms): (&str, u8, u32),
    visit: &Visit<'_>,
) -> String {
    let rules = &engine.config().rules;
    if rules.is_empty() {
        return "no nudge: the config has no rules".to_owned();
    }
    let checks = enabled_checks(engine, path, intent_score, idle_ms, visit);
    if checks.is_empty() {
        return match rules.as_slice() {
            [only] => format!("no nudge: the only rule, {}, is disabled", Quoted(&only.id)),
            _ => format!("no nudge: all {} rules are disabled", rules.len()),
        };
    }
    let mut text = String::with_capacity(REASON_CAPACITY);
    write_parts(
        &mut text,
        &[
            Part::Text("no rule matched page "),
            Part::Text(path),
            Part::Text(" at intent_score "),
            Part::Number(u32::from(intent_score)),
            Part::Text(" and idle_ms "),
            Part::Number(idle_ms),
        ],
    );
    // Fewest failing conditions, earliest on ties (min_by_key keeps the first minimum).
    let closest = checks.iter().min_by_key(|c| c.failing());
    if let Some((check, rule)) = closest.and_then(|c| rules.get(c.rule).map(|r| (c, r))) {
        write_parts(
            &mut text,
            &[
                Part::Text("; the closest is rule "),
                Part::Quoted(&rule.id),
                Part::Text(", failing "),
            ],
        );
        let state = (path, intent_score, idle_ms);
        check.write_details(rule, state, Some(false), " and ", &mut text);
    }
    // A rule that only its cap stops (docs/contract/caps.md), when it is not the closest: said too.
    if let Some((capped, rule)) = checks
        .iter()
        .filter(|c| c.failing() == 1 && Some(c.rule) != closest.map(|c| c.rule))
        .find_map(|c| Some((c.capped?, rules.get(c.rule)?)))
    {
        write_parts(
            &mut text,
            &[
                Part::Text("; rule "),
                Part::Quoted(&rule.id),
                Part::Text(" is "),
            ],
        );
        capped.write(&mut text);
    }
    if let Some((at, r)) = earliest_idle(engine, &checks) {
        let id = rules.get(r).map(|r| r.id.as_str()).unwrap_or_default();
        write_parts(
            &mut text,
            &[
                Part::Text("; rule "),
                Part::Quoted(id),
                Part::Text(" would fire after "),
                Part::Number(at.saturating_sub(idle_ms)),
                Part::Text(" more ms of idling (at idle_ms "),
                Part::Number(at),
                Part::Text(")"),
            ],
        );
    }
    text
}
