//! The words of a rule's conditions for a merchant, in one place: idle times as the editor's
//! cards say them ("8 s", "at once", never rounded up), intent ranges, page patterns ("pages under
//! /products"), quiet zones, and one sentence per condition of a rule for a visitor ("Waits 9 s
//! of the 12 s this rule needs"). The rule summaries (`Analysis::summary`) and a visitor's
//! sentences (`Analysis::sentences`) are written with them, and the editor gets them through the
//! WASM facade (`NudgeEngine.idleWords`, `engine.conditionSentences`).
//!
//! What each condition compared is a `Condition`, made by the same per-rule check as the
//! preview's reasons and explain's `detail` (`reason.rs`), which word it for engineers
//! (`idle_ms 9000 < min 12000`); the sentences here word the same values for merchants.

use crate::config::Pattern;
use crate::matches::List;
use crate::visit::Capped;

/// What one condition of a rule compared, for one visitor.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Condition<'a> {
    /// `min_intent_score`: the visitor's intent and the rule's lowest.
    MinIntent { intent: u8, min: u8 },
    /// `max_intent_score`: the visitor's intent and the rule's highest.
    MaxIntent { intent: u8, max: u8 },
    /// `min_idle_ms`: the visitor's idle time and the rule's wait, in ms.
    MinIdle { idle_ms: u32, min: u32 },
    /// `pages` or `exclude_pages`.
    Pages(PageCondition<'a>),
    /// `exit_intent` (docs/contract/caps.md): the visitor's exit intent and the one the rule wants.
    ExitIntent { exit_intent: bool, want: bool },
    /// A cap the rule has reached (docs/contract/caps.md); listed only when reached, so it never holds.
    Cap(Capped),
}

/// What a page list condition compared: the list, the page's path, its patterns, and the first
/// of them that matches the page.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageCondition<'a> {
    pub(crate) list: List,
    pub(crate) path: &'a str,
    pub(crate) patterns: &'a [Pattern],
    pub(crate) first: Option<usize>,
}

impl<'a> PageCondition<'a> {
    pub(crate) fn new(
        list: List,
        path: &'a str,
        patterns: &'a [Pattern],
        first: Option<usize>,
    ) -> Self {
        PageCondition {
            list,
            path,
            patterns,
            first,
        }
    }
}

impl Condition<'_> {
    /// The condition's field name, as explain's `condition`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Condition::MinIntent { .. } => "min_intent_score",
            Condition::MaxIntent { .. } => "max_intent_score",
            Condition::MinIdle { .. } => "min_idle_ms",
            Condition::Pages(page) => page.list.key(),
            Condition::ExitIntent { .. } => "exit_intent",
            Condition::Cap(Capped::Session { .. }) => "max_nudges_per_session",
            Condition::Cap(_) => "cap",
        }
    }

    /// The condition as a sentence about the visitor; `matched`: every pattern of a page list
    /// that matches the page (the first alone when not given).
    pub(crate) fn sentence(&self, holds: bool, matched: &[&Pattern]) -> String {
        match *self {
            Condition::MinIntent { intent, min } if holds => {
                format!("Intent {intent} is at least the {min} this rule needs")
            }
            Condition::MinIntent { intent, min } => {
                format!("Intent {intent} is below the {min} this rule needs")
            }
            Condition::MaxIntent { intent, max } if holds => {
                format!("Intent {intent} is at most this rule's limit of {max}")
            }
            Condition::MaxIntent { intent, max } => {
                format!("Intent {intent} is above this rule's limit of {max}")
            }
            Condition::MinIdle { idle_ms, min } => {
                let (idle, needed) = seconds_pair(idle_ms, min);
                if holds {
                    format!("Idle {idle}, past the {needed} this rule waits for")
                } else {
                    format!("Waits {idle} of the {needed} this rule needs")
                }
            }
            Condition::Pages(PageCondition {
                list,
                path,
                patterns,
                first,
            }) => {
                let first = first.and_then(|i| patterns.get(i));
                let matched: Vec<&Pattern> = if matched.is_empty() {
                    first.into_iter().collect()
                } else {
                    matched.to_vec()
                };
                match (list, holds) {
                    (List::Pages, true) => format!(
                        "Page {path} is one of this rule's pages ({})",
                        pattern_list(&matched)
                    ),
                    (List::Pages, false) if patterns.is_empty() => {
                        "This rule lists no pages, so it shows on none".to_owned()
                    }
                    (List::Pages, false) => format!(
                        "Page {path} is not one of this rule's pages ({})",
                        pattern_list(&patterns.iter().collect::<Vec<_>>())
                    ),
                    (List::ExcludePages, true) => format!(
                        "Page {path} is not excluded ({})",
                        pattern_list(&patterns.iter().collect::<Vec<_>>())
                    ),
                    (List::ExcludePages, false) => {
                        format!("Page {path} is excluded by {}", pattern_list(&matched))
                    }
                }
            }
            Condition::ExitIntent { want: true, .. } if holds => {
                "The visitor is about to leave, the moment this rule waits for".to_owned()
            }
            Condition::ExitIntent { want: true, .. } => {
                "Shows only when the visitor is about to leave".to_owned()
            }
            Condition::ExitIntent { want: false, .. } if holds => {
                "The visitor is not leaving".to_owned()
            }
            Condition::ExitIntent { want: false, .. } => {
                "The visitor is about to leave, and this rule never shows then".to_owned()
            }
            Condition::Cap(Capped::Session { entries, max }) => format!(
                "This visit has had {entries} {}, the most a visit may have ({max})",
                if entries == 1 { "nudge" } else { "nudges" }
            ),
            Condition::Cap(Capped::PerSession { times, per_session }) => format!(
                "Already fired {} this visit (at most {} per visit)",
                times_words(times),
                times_words(u32::from(per_session))
            ),
            Condition::Cap(Capped::Cooldown {
                ms_ago,
                cooldown_ms,
            }) => format!(
                "Closed by this visitor {} ago: not again for {} more",
                duration_words(ms_ago),
                duration_words(cooldown_ms.saturating_sub(ms_ago))
            ),
        }
    }
}

/// `once`, `twice`, `3 times`.
pub(crate) fn times_words(n: u32) -> String {
    match n {
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        n => format!("{n} times"),
    }
}

/// A duration in ms in the largest whole unit it reaches, rounded down: `7 days`, `3 h`,
/// `20 min`, `9 s`, `0 s`.
pub(crate) fn duration_words(ms: u64) -> String {
    const UNITS: [(u64, &str, &str); 4] = [
        (86_400_000, " day", " days"),
        (3_600_000, " h", " h"),
        (60_000, " min", " min"),
        (1_000, " s", " s"),
    ];
    for (size, one, many) in UNITS {
        if ms >= size {
            let n = ms / size;
            return format!("{n}{}", if n == 1 { one } else { many });
        }
    }
    "0 s".to_owned()
}

/// The first three patterns as written, `, `-separated, then "and 4 more".
fn pattern_list(patterns: &[&Pattern]) -> String {
    let mut out = String::new();
    for (i, p) in patterns.iter().take(3).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(p.as_written());
    }
    let more = patterns.len().saturating_sub(3);
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

/// A time as a merchant reads it, cut and never rounded up: "0 s", "500 ms", "7.9 s" (for
/// 7,999 ms: "8 s" would contradict a rule waiting 8 s), "12.5 s", "1 min 30 s", "24 h".
///
/// ```
/// use nudge_rules::words::seconds;
/// assert_eq!(seconds(8000), "8 s");
/// assert_eq!(seconds(7999), "7.9 s");
/// assert_eq!(seconds(90_000), "1 min 30 s");
/// assert_eq!(seconds(86_400_000), "24 h");
/// ```
pub fn seconds(ms: u32) -> String {
    if ms == 0 {
        return "0 s".to_owned();
    }
    if ms < 1000 {
        return format!("{ms} ms");
    }
    if ms < 60_000 {
        let tenths = ms / 100;
        return if tenths.is_multiple_of(10) {
            format!("{} s", tenths / 10)
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        };
    }
    let total = ms / 1000;
    if ms < 3_600_000 {
        let (m, s) = (total / 60, total % 60);
        return if s == 0 {
            format!("{m} min")
        } else {
            format!("{m} min {s} s")
        };
    }
    let (h, m) = (total / 3600, (total % 3600) / 60);
    if m == 0 {
        format!("{h} h")
    } else {
        format!("{h} h {m} min")
    }
}

/// How long a rule waits for idle time, as its card says it: "at once" for 0, else [`seconds`].
///
/// ```
/// assert_eq!(nudge_rules::words::idle_words(0), "at once");
/// assert_eq!(nudge_rules::words::idle_words(8000), "8 s");
/// ```
pub fn idle_words(ms: u32) -> String {
    if ms == 0 {
        "at once".to_owned()
    } else {
        seconds(ms)
    }
}

/// To the millisecond: "7.999 s", "8 s", "90.5 s".
fn exact_seconds(ms: u32) -> String {
    let (s, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        return format!("{s} s");
    }
    let digits = format!("{frac:03}");
    format!("{s}.{} s", digits.trim_end_matches('0'))
}

/// An idle time and a rule's wait, worded so that the verdict between them reads true: when they
/// differ by less than [`seconds`] shows (a tenth of a second under a minute, a second above), or
/// read the same, both are written to the millisecond: "Waits 7.999 s of the 8 s", not "Waits
/// 8 s of the 8 s" (nor "7.9 s", which reads as 7,900 ms).
///
/// ```
/// use nudge_rules::words::seconds_pair;
/// assert_eq!(seconds_pair(7999, 8000), ("7.999 s".to_owned(), "8 s".to_owned()));
/// assert_eq!(seconds_pair(9000, 12_000), ("9 s".to_owned(), "12 s".to_owned()));
/// ```
pub fn seconds_pair(a: u32, b: u32) -> (String, String) {
    let (sa, sb) = (seconds(a), seconds(b));
    let close = a.abs_diff(b) < if a.max(b) < 60_000 { 100 } else { 1000 };
    if a != b && (close || sa == sb) {
        (exact_seconds(a), exact_seconds(b))
    } else {
        (sa, sb)
    }
}

/// The intent a rule wants, as the rule summaries say it after "visitors": "at any intent",
/// "with intent 60 or more", "with intent up to 40", "with intent 60 to 80".
pub fn intent_words(min: u8, max: u8) -> String {
    let max_set = max < crate::limits::MAX_INTENT_SCORE;
    match (min > 0, max_set) {
        (false, false) => "at any intent".to_owned(),
        (true, false) => format!("with intent {min} or more"),
        (false, true) => format!("with intent up to {max}"),
        (true, true) => format!("with intent {min} to {max}"),
    }
}

/// A page pattern in words: `/products/**` is "pages under /products", `/` "the home page",
/// `/**` "every page", a literal path as is, any other glob quoted ("pages matching "/a/*"").
pub fn pattern_words(pattern: &str) -> String {
    let literal = |s: &str| !s.contains(['*', '?', '[', ']', '{', '}', '\\']);
    if pattern == "/" {
        return "the home page".to_owned();
    }
    if pattern == "/**" || pattern == "**" {
        return "every page".to_owned();
    }
    if let Some(prefix) = pattern.strip_suffix("/**")
        && literal(prefix)
    {
        return format!("pages under {prefix}");
    }
    if literal(pattern) {
        return pattern.to_owned();
    }
    format!("pages matching {pattern:?}")
}

/// A page in a quiet zone, for a merchant.
pub fn quiet_zone_words(pattern: &str) -> String {
    format!(
        "This page is in the quiet zone {pattern}: no nudge shows here, whatever the rules say."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_cut_never_rounded_up() {
        assert_eq!(seconds(0), "0 s");
        assert_eq!(seconds(500), "500 ms");
        assert_eq!(seconds(7999), "7.9 s");
        assert_eq!(seconds(8000), "8 s");
        assert_eq!(seconds(12_345), "12.3 s");
        assert_eq!(seconds(60_000), "1 min");
        assert_eq!(seconds(90_500), "1 min 30 s");
        assert_eq!(seconds(3_600_000), "1 h");
        assert_eq!(seconds(3_900_000), "1 h 5 min");
        assert_eq!(seconds(90_000_000), "25 h");
    }

    #[test]
    fn pairs_never_contradict_the_verdict() {
        assert_eq!(seconds_pair(7999, 8000), ("7.999 s".into(), "8 s".into()));
        assert_eq!(seconds_pair(8000, 8000), ("8 s".into(), "8 s".into()));
        assert_eq!(seconds_pair(8050, 8000), ("8.05 s".into(), "8 s".into()));
        assert_eq!(
            seconds_pair(61_500, 61_000),
            ("61.5 s".into(), "61 s".into())
        );
        assert_eq!(seconds_pair(0, 8000), ("0 s".into(), "8 s".into()));
    }

    #[test]
    fn intents_and_patterns() {
        assert_eq!(intent_words(0, 100), "at any intent");
        assert_eq!(intent_words(60, 100), "with intent 60 or more");
        assert_eq!(intent_words(0, 40), "with intent up to 40");
        assert_eq!(intent_words(60, 80), "with intent 60 to 80");
        assert_eq!(pattern_words("/products/**"), "pages under /products");
        assert_eq!(pattern_words("/"), "the home page");
        assert_eq!(pattern_words("/a/*"), "pages matching \"/a/*\"");
    }
}
