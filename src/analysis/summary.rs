//! One plain sentence per rule, for merchants (docs/contract/analysis.md), in the words of `crate::words`.

use super::Analysis;
use serde::Serialize;

use crate::config::{Cap, NudgeType, Pattern, Rule};
use crate::words::{duration_words, idle_words, intent_words, pattern_words, times_words};

/// A rule's plain-language summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RuleSummary {
    /// The rule id.
    pub rule_id: String,
    /// One sentence, e.g. "Shows a chat bubble on pages under /products to visitors with intent
    /// 60 or more after 8 s idle, except /products/gift-card."
    pub text: String,
}

impl Analysis<'_> {
    /// One plain sentence per rule, in config order.
    ///
    /// ```
    /// let engine = nudge_rules::Engine::compile(r#"{"version": 1, "rules": [{"id": "sizing-help",
    ///   "nudge": {"type": "chat_bubble", "message": "Need help?", "cta": "Chat"},
    ///   "when": {"min_intent_score": 60, "min_idle_ms": 8000, "pages": ["/products/**"],
    ///            "exclude_pages": ["/products/gift-card"]}}]}"#).unwrap();
    /// assert_eq!(nudge_rules::analysis::Analysis::new(&engine).summary()[0].text,
    ///   "Shows a chat bubble on pages under /products to visitors with intent 60 or more after 8 s idle, except /products/gift-card.");
    /// ```
    pub fn summary(&self) -> Vec<RuleSummary> {
        self.engine
            .config()
            .rules
            .iter()
            .map(|rule| RuleSummary {
                rule_id: rule.id.clone(),
                text: sentence(rule),
            })
            .collect()
    }
}

fn sentence(rule: &Rule) -> String {
    let w = &rule.when;
    let mut s = String::new();
    if !rule.enabled {
        s.push_str("Disabled: would show ");
    } else {
        s.push_str("Shows ");
    }
    s.push_str(article(rule.nudge.nudge_type));
    s.push(' ');
    s.push_str(&rule.nudge.nudge_type.as_str().replace('_', " "));
    match &w.pages {
        None => s.push_str(" on every page"),
        Some(pages) if pages.is_empty() => s.push_str(" on no page (its page list is empty)"),
        Some(pages) => {
            s.push_str(" on ");
            s.push_str(&join(pages));
        }
    }
    s.push_str(" to visitors ");
    s.push_str(&intent_words(w.min_intent_score, w.max_intent_score));
    if w.min_idle_ms > 0 {
        s.push_str(&format!(" after {} idle", idle_words(w.min_idle_ms)));
    } else {
        s.push(' ');
        s.push_str(&idle_words(0));
    }
    if !w.exclude_pages.is_empty() {
        s.push_str(", except ");
        s.push_str(&join(&w.exclude_pages));
    }
    // docs/contract/caps.md, said only where the rule sets it (the default cap, once per visit, goes unsaid).
    match w.exit_intent {
        Some(true) => s.push_str(", only when they are about to leave"),
        Some(false) => s.push_str(", never when they are about to leave"),
        None => {}
    }
    if rule.cap != Cap::DEFAULT {
        s.push_str(&format!(
            "; at most {} per visit",
            times_words(u32::from(rule.cap.per_session))
        ));
        if rule.cap.cooldown_ms > 0 {
            s.push_str(&format!(
                ", not again for {} after a visitor closes it",
                duration_words(rule.cap.cooldown_ms)
            ));
        }
    }
    if rule.holdout_percent > 0 {
        s.push_str(&format!(
            "; {} % of visitors are kept as a control group",
            rule.holdout_percent
        ));
    }
    s.push('.');
    s
}

fn article(t: NudgeType) -> &'static str {
    match t {
        NudgeType::ExitModal => "an",
        _ => "a",
    }
}

/// The patterns in words ([`pattern_words`]): "a, b and c".
fn join(patterns: &[Pattern]) -> String {
    let items: Vec<String> = patterns
        .iter()
        .map(|p| pattern_words(p.as_written()))
        .collect();
    match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    #[test]
    fn storefront_sentences() {
        let e = Engine::compile(include_str!("../../examples/storefront.json")).unwrap();
        let s = Analysis::new(&e).summary();
        let text = |id: &str| s.iter().find(|r| r.rule_id == id).unwrap().text.clone();
        assert_eq!(
            text("welcome-bar"),
            "Shows a sticky bar on the home page to visitors with intent up to 40 after 3 s idle."
        );
        assert_eq!(
            text("gift-guide"),
            "Disabled: would show a toast on pages under /collections/gifts to visitors at any intent at once."
        );
        assert!(text("last-chance-exit").starts_with("Shows an exit modal on every page"));
    }

    #[test]
    fn spec15_settings_are_said_where_set() {
        let e = Engine::compile(include_str!("../../examples/caps.json")).unwrap();
        let s = Analysis::new(&e).summary();
        let text = |id: &str| s.iter().find(|r| r.rule_id == id).unwrap().text.clone();
        assert_eq!(
            text("exit-offer"),
            "Shows an exit modal on pages under /products and pages under /collections to visitors with intent 40 or more at once, only when they are about to leave; at most once per visit, not again for 7 days after a visitor closes it; 10 % of visitors are kept as a control group."
        );
        assert!(
            text("sizing-help").ends_with(", never when they are about to leave; at most twice per visit, not again for 1 day after a visitor closes it; 10 % of visitors are kept as a control group."),
            "{}",
            text("sizing-help")
        );
        assert!(text("free-shipping-bar").ends_with("at once."));
    }
}
