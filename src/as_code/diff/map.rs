//! Decision maps compared exactly (docs/contract/as-code.md diff without inputs): the regions of a page's
//! intent x idle plane that change owner, found by overlaying the two exact partitions, and the
//! pages the two configs mention.

use rustc_hash::FxHashSet;
use serde::Serialize;

use super::ChangeKind;
use crate::analysis::{Analysis, Region};
use crate::engine::Engine;
use crate::limits::{MAX_DIFF_PAGES, MAX_IDLE_MS, MAX_INTENT_SCORE};

/// A rectangle of a page's plane whose owner (the rule that fires there) changes; bounds
/// inclusive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RegionChange {
    /// Lowest intent score, 0 to 100.
    pub min_intent_score: u8,
    /// Highest intent score, inclusive.
    pub max_intent_score: u8,
    /// Lowest idle time in ms.
    pub min_idle_ms: u32,
    /// Highest idle time in ms, inclusive (at most 86,400,000).
    pub max_idle_ms: u32,
    /// `nudge_added`, `nudge_removed` or `rule_changed`.
    pub kind: ChangeKind,
    /// The rule that fires there under the old config; `None`: none does.
    pub old_rule_id: Option<String>,
    /// The rule that fires there under the new config.
    pub new_rule_id: Option<String>,
}

/// One page whose decision map changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PageMapChange {
    /// The page, as compared.
    pub page_url: String,
    /// Its normalized path under the new config (under the old one if only it accepts it).
    pub path: Option<String>,
    /// The quiet zone (pattern as written) containing the page under the old config.
    pub old_quiet_zone: Option<String>,
    /// The same under the new config.
    pub new_quiet_zone: Option<String>,
    /// The regions that change owner, sorted by intent, then idle time; with the unchanged
    /// rest they cover the plane exactly, and they never overlap.
    pub regions: Vec<RegionChange>,
}

impl PageMapChange {
    /// The kinds of change on this page: one per region, and a quiet zone entered or left.
    pub(super) fn kinds(&self) -> impl Iterator<Item = ChangeKind> + '_ {
        let quiet = match (&self.old_quiet_zone, &self.new_quiet_zone) {
            (None, Some(_)) => Some(ChangeKind::QuietZoneAdded),
            (Some(_), None) => Some(ChangeKind::QuietZoneRemoved),
            _ => None,
        };
        quiet.into_iter().chain(self.regions.iter().map(|r| r.kind))
    }
}

/// The change of one page's decision map, or `None` when it is the same (or the URL is rejected
/// by both configs).
///
/// Exact and linear in the maps' sizes: intent scores are cut into bands at every region edge of
/// either map (at most 101 bands); within a band, both maps are partitions of the idle axis,
/// walked together; a changed segment extends the region of the band below when it has the same
/// idle interval and owners.
pub(super) fn page_change(old: &Engine, new: &Engine, page: &str) -> Option<PageMapChange> {
    let (a, b) = (
        Analysis::new(old).decision_map(page),
        Analysis::new(new).decision_map(page),
    );
    let mut regions: Vec<RegionChange> = Vec::new();
    if !a.regions.is_empty() && !b.regions.is_empty() {
        let mut cuts: Vec<u8> = vec![0];
        for r in a.regions.iter().chain(&b.regions) {
            cuts.push(r.min_intent_score);
            if r.max_intent_score < MAX_INTENT_SCORE {
                cuts.push(r.max_intent_score + 1);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        // Regions of the band below, open for extension (indices into `regions`, by idle).
        let mut open: Vec<usize> = Vec::new();
        for (i, &lo) in cuts.iter().enumerate() {
            let hi = cuts.get(i + 1).map_or(MAX_INTENT_SCORE, |next| next - 1);
            let mut next_open = Vec::new();
            let (x, y) = (band(&a.regions, lo), band(&b.regions, lo));
            for (min_idle, max_idle, old_rule, new_rule) in changed(&x, &y) {
                let same = |r: &RegionChange| {
                    (r.min_idle_ms, r.max_idle_ms) == (min_idle, max_idle)
                        && r.old_rule_id.as_deref() == old_rule
                        && r.new_rule_id.as_deref() == new_rule
                };
                match open
                    .iter()
                    .copied()
                    .find(|&k| regions.get(k).is_some_and(same))
                {
                    Some(k) => {
                        if let Some(r) = regions.get_mut(k) {
                            r.max_intent_score = hi;
                        }
                        next_open.push(k);
                    }
                    None => {
                        next_open.push(regions.len());
                        regions.push(RegionChange {
                            min_intent_score: lo,
                            max_intent_score: hi,
                            min_idle_ms: min_idle,
                            max_idle_ms: max_idle,
                            kind: kind(old_rule, new_rule),
                            old_rule_id: old_rule.map(str::to_owned),
                            new_rule_id: new_rule.map(str::to_owned),
                        });
                    }
                }
            }
            open = next_open;
        }
    }
    let old_quiet_zone = a.quiet_zone.map(|z| z.pattern);
    let new_quiet_zone = b.quiet_zone.map(|z| z.pattern);
    if regions.is_empty() && old_quiet_zone.is_some() == new_quiet_zone.is_some() {
        return None;
    }
    Some(PageMapChange {
        page_url: page.to_owned(),
        path: b.path.or(a.path),
        old_quiet_zone,
        new_quiet_zone,
        regions,
    })
}

/// The regions of a map that contain intent score `intent`, by idle time: a partition of the
/// idle axis.
fn band(regions: &[Region], intent: u8) -> Vec<&Region> {
    let mut band: Vec<&Region> = regions
        .iter()
        .filter(|r| (r.min_intent_score..=r.max_intent_score).contains(&intent))
        .collect();
    band.sort_unstable_by_key(|r| r.min_idle_ms);
    band
}

/// The idle segments where two partitions of the idle axis have different owners, as
/// (min, max inclusive, old owner, new owner), by idle time.
fn changed<'a>(
    x: &[&'a Region],
    y: &[&'a Region],
) -> Vec<(u32, u32, Option<&'a str>, Option<&'a str>)> {
    let mut out = Vec::new();
    let (mut i, mut j, mut at) = (0, 0, 0u32);
    while let (Some(p), Some(q)) = (x.get(i), y.get(j)) {
        let end = p.max_idle_ms.min(q.max_idle_ms);
        if p.rule_id != q.rule_id && at <= end {
            out.push((at, end, p.rule_id.as_deref(), q.rule_id.as_deref()));
        }
        if end >= MAX_IDLE_MS {
            break;
        }
        at = end + 1;
        i += usize::from(p.max_idle_ms == end);
        j += usize::from(q.max_idle_ms == end);
    }
    out
}

fn kind(old: Option<&str>, new: Option<&str>) -> ChangeKind {
    match (old, new) {
        (None, _) => ChangeKind::NudgeAdded,
        (_, None) => ChangeKind::NudgeRemoved,
        _ => ChangeKind::RuleChanged,
    }
}

/// The pages the two configs mention: one per pattern of either (quiet zones, `pages`,
/// `exclude_pages`), and one per `{a,b}` alternative; sorted, so that swapping the configs
/// compares the same pages in the same order; at most `MAX_DIFF_PAGES` (the first mentioned,
/// old config first, when there are more).
pub(super) fn mentioned_pages(old: &Engine, new: &Engine) -> Vec<String> {
    let mut seen: FxHashSet<String> = FxHashSet::default();
    let mut pages = Vec::new();
    for engine in [old, new] {
        let config = engine.config();
        let rule_patterns = config
            .rules
            .iter()
            .flat_map(|r| r.when.pages.iter().flatten().chain(&r.when.exclude_pages));
        for p in config.quiet_zones.iter().chain(rule_patterns) {
            for expanded in alternatives(p.as_written(), MAX_ALTERNATIVES) {
                let page = fill(&expanded);
                if pages.len() < MAX_DIFF_PAGES && seen.insert(page.clone()) {
                    pages.push(page);
                }
            }
        }
    }
    pages.sort_unstable();
    pages
}

/// Most pages one pattern's `{a,b}` alternates expand to.
const MAX_ALTERNATIVES: usize = 16;

/// The pattern with its first `{...}` group (and those after it) expanded, at most `budget`
/// results; a pattern without groups, or with an unclosed one, is itself.
fn alternatives(pattern: &str, budget: usize) -> Vec<String> {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'{' => break,
            _ => i += 1,
        }
    }
    let Some(close) = group_end(pattern, i) else {
        return vec![pattern.to_owned()];
    };
    let (head, body, tail) = (
        pattern.get(..i).unwrap_or(""),
        pattern.get(i + 1..close).unwrap_or(""),
        pattern.get(close + 1..).unwrap_or(""),
    );
    let mut out = Vec::new();
    for choice in split_top_level(body) {
        for rest in alternatives(&format!("{choice}{tail}"), budget) {
            if out.len() == budget {
                return out;
            }
            out.push(format!("{head}{rest}"));
        }
    }
    out
}

/// The index of the `}` closing the `{` at `open`, if any.
fn group_end(pattern: &str, open: usize) -> Option<usize> {
    let bytes = pattern.as_bytes();
    if bytes.get(open) != Some(&b'{') {
        return None;
    }
    let (mut depth, mut i) = (0usize, open);
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `a,b{c,d},e` split at its top-level commas.
fn split_top_level(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut escaped) = (0usize, 0, false);
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(body.get(start..i).unwrap_or(""));
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(body.get(start..).unwrap_or(""));
    parts
}

/// A page matched by a pattern without alternates: `**` segments dropped, `*` dropped (a
/// segment left empty becomes `x`), `?` as `x`, a class as its first member (`x` if negated),
/// escapes as the escaped character.
fn fill(pattern: &str) -> String {
    let mut page = String::new();
    for segment in pattern.split('/').filter(|s| !s.is_empty() && *s != "**") {
        let mut text = String::new();
        let mut chars = segment.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => text.extend(chars.next()),
                '*' => {}
                '?' => text.push('x'),
                '[' => {
                    let class: String = chars.by_ref().take_while(|&c| c != ']').collect();
                    match class.chars().next() {
                        Some('!' | '^') | None => text.push('x'),
                        Some(first) => text.push(first),
                    }
                }
                c => text.push(c),
            }
        }
        page.push('/');
        page.push_str(if text.is_empty() { "x" } else { &text });
    }
    if page.is_empty() {
        page.push('/');
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_of_patterns() {
        let cases: &[(&str, &[&str])] = &[
            ("/checkout/**", &["/checkout"]),
            ("/cart", &["/cart"]),
            ("/", &["/"]),
            ("/**", &["/"]),
            ("**/reviews", &["/reviews"]),
            (
                "/collections/{sale,clearance}/**",
                &["/collections/sale", "/collections/clearance"],
            ),
            ("/guide{,s}", &["/guide", "/guides"]),
            ("/{a,b{c,d}}/x", &["/a/x", "/bc/x", "/bd/x"]),
            ("/products/*", &["/products/x"]),
            ("/p/*.html", &["/p/.html"]),
            ("/p/[ab]?", &["/p/ax"]),
            ("/p/[!ab]", &["/p/x"]),
            ("/a\\*b", &["/a*b"]),
            ("/{unclosed", &["/{unclosed"]),
        ];
        for (pattern, want) in cases {
            let got: Vec<String> = alternatives(pattern, MAX_ALTERNATIVES)
                .iter()
                .map(|p| fill(p))
                .collect();
            assert_eq!(got, *want, "{pattern}");
        }
        assert_eq!(alternatives("/{a,b}{c,d}{e,f}{g,h}{i,j}", 16).len(), 16);
    }
}
