//! One plain sentence per rule, for merchants (SPEC 6).

use super::Analysis;
use serde::Serialize;

use crate::config::{NudgeType, Pattern, Rule};
use crate::limits::MAX_INTENT_SCORE;

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
            s.push_str(&join(pages.iter().map(describe).collect()));
        }
    }
    s.push_str(
        match (
            w.min_intent_score > 0,
            w.max_intent_score < MAX_INTENT_SCORE,
        ) {
            (false, false) => " to visitors at any intent",
            _ => " to visitors with intent",
        },
    );
    match (
        w.min_intent_score > 0,
        w.max_intent_score < MAX_INTENT_SCORE,
    ) {
        (true, true) => s.push_str(&format!(
            " {} to {}",
            w.min_intent_score, w.max_intent_score
        )),
        (true, false) => s.push_str(&format!(" {} or more", w.min_intent_score)),
        (false, true) => s.push_str(&format!(" up to {}", w.max_intent_score)),
        (false, false) => {}
    }
    if w.min_idle_ms > 0 {
        s.push_str(&format!(" after {} idle", duration(w.min_idle_ms)));
    } else {
        s.push_str(" right away");
    }
    if !w.exclude_pages.is_empty() {
        s.push_str(", except ");
        s.push_str(&join(w.exclude_pages.iter().map(describe).collect()));
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

/// `/products/**` → "pages under /products"; `/` → "the home page"; a literal path as is;
/// any other glob quoted.
fn describe(p: &Pattern) -> String {
    let written = p.as_written();
    let literal = |s: &str| !s.contains(['*', '?', '[', ']', '{', '}', '\\']);
    if written == "/" {
        return "the home page".to_owned();
    }
    if written == "/**" || written == "**" {
        return "every page".to_owned();
    }
    if let Some(prefix) = written.strip_suffix("/**")
        && literal(prefix)
    {
        return format!("pages under {prefix}");
    }
    if literal(written) {
        return written.to_owned();
    }
    format!("pages matching {written:?}")
}

fn join(items: Vec<String>) -> String {
    match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// 8000 → "8 s", 2500 → "2.5 s", 90000 → "90 s", 600000 → "10 min", 500 → "500 ms".
fn duration(ms: u32) -> String {
    if ms < 1000 {
        return format!("{ms} ms");
    }
    if ms.is_multiple_of(60_000) && ms >= 120_000 {
        return format!("{} min", ms / 60_000);
    }
    if ms.is_multiple_of(1000) {
        return format!("{} s", ms / 1000);
    }
    let tenths = ms / 100;
    if ms.is_multiple_of(100) {
        return format!("{}.{} s", tenths / 10, tenths % 10);
    }
    format!("{ms} ms")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    #[test]
    fn durations() {
        assert_eq!(duration(8000), "8 s");
        assert_eq!(duration(2500), "2.5 s");
        assert_eq!(duration(600_000), "10 min");
        assert_eq!(duration(500), "500 ms");
        assert_eq!(duration(1234), "1234 ms");
    }

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
            "Disabled: would show a toast on pages under /collections/gifts to visitors at any intent right away."
        );
        assert!(text("last-chance-exit").starts_with("Shows an exit modal on every page"));
    }
}
