//! A visitor's conditions as sentences for a merchant (`crate::words`), beside explain's.

use serde::Serialize;

use super::Analysis;
use crate::config::Pattern;
use crate::error::Error;
use crate::matches::List;
use crate::reason::RuleCheck;
use crate::request::SessionState;
use crate::words::{Condition, quiet_zone_words};

/// The sentences of one visitor's explanation ([`Analysis::sentences`]), in the order of
/// explain's rules and conditions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Sentences {
    /// Per rule in config order, one sentence per condition of explain's `conditions` (empty
    /// when the page URL is rejected).
    pub rules: Vec<Vec<String>>,
    /// The page's quiet zone in words, when it is in one.
    pub quiet_zone: Option<String>,
}

impl Analysis<'_> {
    /// Every rule's conditions for one visitor as sentences for a merchant, each beside explain's
    /// condition of the same place ([`Analysis::explain`]): "Intent 42 is below the 60 this rule
    /// needs", "Waits 9 s of the 12 s this rule needs", "Page /cart is excluded by /cart".
    ///
    /// ```
    /// let engine = nudge_rules::Engine::compile(r#"{"version": 1, "rules": [{"id": "a",
    ///   "nudge": {"type": "toast", "message": "Hi", "cta": "Go"},
    ///   "when": {"min_idle_ms": 12000, "pages": ["/products/**"]}}]}"#).unwrap();
    /// let state = nudge_rules::SessionState {
    ///     intent_score: 82,
    ///     page_url: "/products/shirt".to_owned(),
    ///     idle_ms: 9000,
    ///     ..Default::default()
    /// };
    /// let words = nudge_rules::analysis::Analysis::new(&engine).sentences(&state).unwrap();
    /// assert_eq!(words.rules[0], ["Waits 9 s of the 12 s this rule needs",
    ///   "Page /products/shirt is one of this rule's pages (/products/**)"]);
    /// ```
    ///
    /// # Errors
    ///
    /// - `InvalidRequest` when `intent_score` is over 100 or `idle_ms` over 86,400,000, as
    ///   [`Analysis::explain`].
    pub fn sentences(&self, state: &SessionState) -> Result<Sentences, Error> {
        SessionState::check_ranges(state.intent_score, state.idle_ms)?;
        let engine = self.engine();
        let Ok(path) = engine.normalize(&state.page_url) else {
            return Ok(Sentences {
                rules: Vec::new(),
                quiet_zone: None,
            });
        };
        let quiet_zone = engine
            .quiet_zone_of(&path)
            .and_then(|z| engine.config().quiet_zones.get(z))
            .map(|p| quiet_zone_words(p.as_written()));
        let config = engine.config();
        let rules = &config.rules;
        let (intent, idle) = (state.intent_score, state.idle_ms);
        let visit = state.visit();
        let rules = engine.with_page_matches(&path, |m| {
            // Every matching pattern of each rule's lists (the sentences list them all).
            let mut matched: Vec<[Vec<usize>; 2]> = vec![[Vec::new(), Vec::new()]; rules.len()];
            for owner in m.all() {
                if owner.quiet_zone_index().is_some() {
                    continue;
                }
                let slot = usize::from(owner.list() == List::ExcludePages);
                if let Some(lists) = matched.get_mut(owner.rule())
                    && let Some(list) = lists.get_mut(slot)
                {
                    list.push(owner.pattern());
                }
            }
            rules
                .iter()
                .zip(&matched)
                .enumerate()
                .map(|(i, (rule, [pages, excluded]))| {
                    let check = RuleCheck::of_visit(config, (rule, i), m, (intent, idle), &visit);
                    let mut out = Vec::new();
                    check.for_each_condition(rule, path.as_ref(), intent, idle, |c, holds| {
                        let found: Vec<&Pattern> = match c {
                            Condition::Pages(page) => {
                                let at = if page.list == List::Pages {
                                    pages
                                } else {
                                    excluded
                                };
                                at.iter().filter_map(|&k| page.patterns.get(k)).collect()
                            }
                            _ => Vec::new(),
                        };
                        out.push(c.sentence(holds, &found));
                    });
                    out
                })
                .collect()
        });
        Ok(Sentences { rules, quiet_zone })
    }
}
