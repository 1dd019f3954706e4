//! The decision map (docs/contract/analysis.md): for one page, which rule fires over the whole plane
//! intent_score 0..=100 x idle_ms 0..=86,400,000, computed exactly from the thresholds.
//!
//! A rule that can fire on the page fires on the rectangle `[min_intent, max_intent] x
//! [min_idle_ms, MAX]`. Within one band of intent scores (between consecutive thresholds) the
//! winner at idle time `t` is the first rule, in config order, covering the band with
//! `min_idle_ms <= t`; walking the rules in order, each rule that lowers the running minimum of
//! `min_idle_ms` wins the idle interval just below the previous minimum. Bands are then merged
//! with their neighbours where the same rule fires on the same idle interval.

use super::Analysis;
use serde::Serialize;

use super::{QuietZoneRef, UrlRejection};
use crate::config::NudgeType;
use crate::limits::{MAX_IDLE_MS, MAX_INTENT_SCORE};
use crate::matches::List;

/// One rectangle of a [`DecisionMap`], with inclusive bounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Region {
    /// Lowest intent score, 0 to 100.
    pub min_intent_score: u8,
    /// Highest intent score, inclusive.
    pub max_intent_score: u8,
    /// Lowest idle time in ms.
    pub min_idle_ms: u32,
    /// Highest idle time in ms, inclusive (the last region of a band ends at 86,400,000).
    pub max_idle_ms: u32,
    /// The rule that fires everywhere in the region; `None` when none does.
    pub rule_id: Option<String>,
    /// That rule's index in config order.
    pub rule_index: Option<usize>,
    /// That rule's nudge type.
    pub nudge_type: Option<NudgeType>,
}

/// The exact partition of the intent x idle plane for one page: regions never overlap and
/// cover the plane; for any point, the region containing it names the rule that preview fires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DecisionMap {
    /// The page URL as given.
    pub page_url: String,
    /// The normalized path (docs/contract/urls.md); `None` when the URL is rejected.
    pub path: Option<String>,
    /// Why the URL is rejected, when it is (then there are no regions).
    pub url_error: Option<UrlRejection>,
    /// The quiet zone containing the page, if any (then one region, where nothing fires).
    pub quiet_zone: Option<QuietZoneRef>,
    /// The regions, sorted by `min_intent_score`, then `min_idle_ms`, for a visitor without
    /// exit intent (`exit_intent` false, the default state).
    pub regions: Vec<Region>,
    /// The regions for a visitor with exit intent (docs/contract/caps.md `exit_intent` true), in the same
    /// order; present only when a rule that can fire on the page sets `when.exit_intent`
    /// (otherwise they are `regions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_intent_regions: Option<Vec<Region>>,
}

impl DecisionMap {
    /// The region containing a point, if the point is on the plane and the URL was accepted
    /// (for a visitor without exit intent).
    pub fn region_at(&self, intent_score: u8, idle_ms: u32) -> Option<&Region> {
        self.region_at_exit(intent_score, idle_ms, false)
    }

    /// [`DecisionMap::region_at`] for a visitor with or without exit intent (docs/contract/caps.md).
    pub fn region_at_exit(
        &self,
        intent_score: u8,
        idle_ms: u32,
        exit_intent: bool,
    ) -> Option<&Region> {
        let regions = match (&self.exit_intent_regions, exit_intent) {
            (Some(exit), true) => exit,
            _ => &self.regions,
        };
        regions.iter().find(|r| {
            (r.min_intent_score..=r.max_intent_score).contains(&intent_score)
                && (r.min_idle_ms..=r.max_idle_ms).contains(&idle_ms)
        })
    }
}

/// A rule that can fire on the page: its intent range and idle threshold.
struct Candidate {
    rule: usize,
    min_intent: u8,
    max_intent: u8,
    min_idle: u32,
}

impl Analysis<'_> {
    /// The decision map of one page (docs/contract/analysis.md): the plane intent_score 0..=100 x idle_ms
    /// 0..=86,400,000 split into rectangles, each labelled with the rule that fires there.
    ///
    /// ```
    /// let engine = nudge_rules::Engine::compile(r#"{"version": 1, "rules": [
    ///   {"id": "a", "nudge": {"type": "toast", "message": "m", "cta": "c"},
    ///    "when": {"min_intent_score": 50, "min_idle_ms": 5000}}]}"#).unwrap();
    /// let map = nudge_rules::analysis::Analysis::new(&engine).decision_map("/x");
    /// assert_eq!(map.region_at(60, 6000).unwrap().rule_id.as_deref(), Some("a"));
    /// assert_eq!(map.region_at(60, 4999).unwrap().rule_id, None);
    ///
    /// let rejected = nudge_rules::analysis::Analysis::new(&engine).decision_map("//x");
    /// assert_eq!(rejected.url_error.unwrap().code.as_str(), "double_slash");
    /// assert!(rejected.regions.is_empty());
    /// ```
    ///
    /// Never fails: a URL that docs/contract/urls.md rejects is reported in [`DecisionMap::url_error`], as
    /// [`Analysis::explain`] and [`Analysis::page_report`] do.
    pub fn decision_map(&self, page_url: &str) -> DecisionMap {
        let mut map = DecisionMap {
            page_url: page_url.to_owned(),
            path: None,
            url_error: None,
            quiet_zone: None,
            regions: Vec::new(),
            exit_intent_regions: None,
        };
        let path = match self.engine.normalize(page_url) {
            Ok(path) => path.into_owned(),
            Err(e) => {
                map.url_error = Some(UrlRejection::from(&e));
                return map;
            }
        };
        if let Some(z) = self.engine.quiet_zone_of(&path) {
            map.quiet_zone = QuietZoneRef::new(self.engine, z);
            map.regions = vec![self.region(0, MAX_INTENT_SCORE, 0, MAX_IDLE_MS, None)];
            map.path = Some(path);
            return map;
        }
        let rules = &self.engine.config().rules;
        let exit_rules = self.engine.with_page_matches(&path, |m| {
            rules.iter().enumerate().any(|(i, r)| {
                r.enabled
                    && r.when.exit_intent.is_some()
                    && r.when.pages_hold(|| m.any(i, List::Pages))
            })
        });
        map.regions = self.regions(&path, false);
        map.exit_intent_regions = exit_rules.then(|| self.regions(&path, true));
        map.path = Some(path);
        map
    }

    /// The regions of a page that is in no quiet zone, for one exit intent.
    fn regions(&self, path: &str, exit_intent: bool) -> Vec<Region> {
        let rules = &self.engine.config().rules;
        let candidates: Vec<Candidate> = self.engine.with_page_matches(path, |m| {
            rules
                .iter()
                .enumerate()
                .filter(|(i, r)| {
                    r.enabled
                        && r.when.exit_intent_holds(exit_intent)
                        && r.when.pages_hold(|| m.any(*i, List::Pages))
                        && r.when.exclude_pages_hold(|| m.any(*i, List::ExcludePages))
                })
                .map(|(i, r)| Candidate {
                    rule: i,
                    min_intent: r.when.min_intent_score,
                    max_intent: r.when.max_intent_score,
                    min_idle: r.when.min_idle_ms,
                })
                .collect()
        });
        // Intent bands: split at every rule's min and max + 1.
        // A set of scores rather than a sorted vector: no sort in the WASM module (size).
        let mut is_cut = [false; MAX_INTENT_SCORE as usize + 1];
        let mut mark = |score: u8| {
            if let Some(slot) = is_cut.get_mut(usize::from(score)) {
                *slot = true;
            }
        };
        mark(0);
        for c in &candidates {
            mark(c.min_intent);
            if c.max_intent < MAX_INTENT_SCORE {
                mark(c.max_intent + 1);
            }
        }
        let cuts: Vec<u8> = (0..=MAX_INTENT_SCORE)
            .filter(|&score| is_cut.get(usize::from(score)) == Some(&true))
            .collect();
        let mut regions: Vec<Region> = Vec::new();
        // Regions of the previous band still open for extension, by idle interval and rule.
        let mut open: Vec<usize> = Vec::new();
        for (b, &lo) in cuts.iter().enumerate() {
            let hi = cuts.get(b + 1).map_or(MAX_INTENT_SCORE, |next| next - 1);
            let mut next_open = Vec::new();
            for (min_idle, max_idle, rule) in band(&candidates, lo) {
                let extends = open.iter().copied().find(|&i| {
                    regions.get(i).is_some_and(|r| {
                        r.min_idle_ms == min_idle
                            && r.max_idle_ms == max_idle
                            && r.rule_index == rule
                    })
                });
                match extends.and_then(|i| regions.get_mut(i).map(|r| (i, r))) {
                    Some((i, r)) => {
                        r.max_intent_score = hi;
                        next_open.push(i);
                    }
                    None => {
                        next_open.push(regions.len());
                        regions.push(self.region(lo, hi, min_idle, max_idle, rule));
                    }
                }
            }
            open = next_open;
        }
        // Already in (intent, idle) order, so no sort: each band's regions are made after those of
        // the bands below it (a region keeps the score it was made at as its minimum), and `band`
        // answers in idle order.
        debug_assert!(
            regions.is_sorted_by_key(|r| (r.min_intent_score, r.min_idle_ms)),
            "regions out of order"
        );
        regions
    }

    fn region(
        &self,
        min_intent: u8,
        max_intent: u8,
        min_idle: u32,
        max_idle: u32,
        rule: Option<usize>,
    ) -> Region {
        let r = rule.and_then(|i| self.engine.config().rules.get(i));
        Region {
            min_intent_score: min_intent,
            max_intent_score: max_intent,
            min_idle_ms: min_idle,
            max_idle_ms: max_idle,
            rule_id: r.map(|r| r.id.clone()),
            rule_index: rule.filter(|_| r.is_some()),
            nudge_type: r.map(|r| r.nudge.nudge_type),
        }
    }
}

/// The idle intervals of one intent band (every intent score in the band is covered by the same
/// rules, so the band's lowest score `intent` stands for all), as (min, max inclusive, rule),
/// ascending and covering 0..=MAX_IDLE_MS.
fn band(candidates: &[Candidate], intent: u8) -> Vec<(u32, u32, Option<usize>)> {
    let mut descending = Vec::new();
    let mut running_min = MAX_IDLE_MS + 1;
    for c in candidates {
        if (c.min_intent..=c.max_intent).contains(&intent) && c.min_idle < running_min {
            descending.push((c.min_idle, running_min - 1, Some(c.rule)));
            running_min = c.min_idle;
        }
    }
    if running_min > 0 {
        descending.push((0, running_min - 1, None));
    }
    descending.reverse();
    descending
}
