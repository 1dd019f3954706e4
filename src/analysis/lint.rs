//! Lint (docs/contract/analysis.md): warnings that do not stop a config from loading, each with a stable code, a
//! JSON path, and a message a merchant understands.
//!
//! Claims are made only where they are certain. Page coverage uses
//! [`pattern::covers`](crate::pattern::covers) (identical patterns, `/**`, literal `X/**`
//! prefixes) and literal-prefix disjointness; where neither decides, nothing is said. So a
//! "shadowed" warning is never issued for a rule that preview can make fire (a property test
//! checks this against the decision map).

use super::Analysis;
use crate::code::DiagnosticCode;
use serde::Serialize;

use super::cover::{CoverIndex, covers};
use crate::config::{Pattern, Rule};
use crate::engine::Engine;
use crate::error::{Diagnostic, Error};
use crate::json::{Findings, Path};
use crate::limits::MAX_INTENT_SCORE;
use crate::pattern::matches_every_path;

/// The result of [`validate_config`]: errors (the config is rejected) and warnings (lint).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Validation {
    /// True when there is no error (warnings do not count).
    pub valid: bool,
    /// Every error, as [`Engine::compile`] reports them.
    pub errors: Vec<Diagnostic>,
    /// Lint warnings; empty when the config has errors.
    pub warnings: Vec<Diagnostic>,
}

/// Validates config text without failing: its errors, or its lint warnings (for an editor that
/// checks on every keystroke, and for `nudge-rules check`).
pub fn validate_config(config_text: &str) -> Validation {
    Validation::of(Engine::compile(config_text))
}

/// [`validate_config`] for a config already parsed as JSON (diagnostics have no line and column).
pub fn validate_config_value(config: &serde_json::Value) -> Validation {
    Validation::of(Engine::compile_value(config))
}

impl Validation {
    /// The validation of a compilation's outcome.
    pub(crate) fn of(compiled: Result<Engine, Error>) -> Self {
        match compiled {
            Ok(engine) => Validation {
                valid: true,
                errors: Vec::new(),
                warnings: Analysis::new(&engine).lint(),
            },
            Err(e) => Validation {
                valid: false,
                errors: e.diagnostics().to_vec(),
                warnings: Vec::new(),
            },
        }
    }

    /// The errors as an [`Error`], or `None` when valid.
    pub fn error(&self) -> Option<Error> {
        (!self.valid).then(|| Error::new(crate::ErrorKind::InvalidConfig, self.errors.clone()))
    }
}

/// The literal text every path matching a normalized pattern starts with (`/products` for
/// `/products/**`, `/a/` for `/a/*.html`, empty for `**/x`).
fn literal_prefix(normalized: &str) -> &str {
    let base = normalized.strip_suffix("/**").unwrap_or(normalized);
    let end = base.find(['*', '?', '[', '{', '\\']).unwrap_or(base.len());
    base.get(..end).unwrap_or("")
}

/// True when no path can match both patterns (their literal prefixes diverge).
fn disjoint(a: &str, b: &str) -> bool {
    let (pa, pb) = (literal_prefix(a), literal_prefix(b));
    !pa.starts_with(pb) && !pb.starts_with(pa)
}

fn covered_by_any(specific: &Pattern, general: &[Pattern]) -> bool {
    general
        .iter()
        .any(|g| covers(g.normalized(), specific.normalized()))
}

/// True when every exit intent at which `later` can fire satisfies `earlier`'s (docs/contract/caps.md): an
/// earlier rule that sets none holds at both; one that sets it holds only where `later` wants
/// the same.
fn exit_intent_covered(earlier: &Rule, later: &Rule) -> bool {
    earlier.when.exit_intent.is_none() || earlier.when.exit_intent == later.when.exit_intent
}

/// True when every page on which `later` can fire satisfies `earlier`'s page conditions.
fn pages_covered(earlier: &Rule, later: &Rule) -> bool {
    let included = match (&earlier.when.pages, &later.when.pages) {
        (None, _) => true,
        (Some(e), None) => e.iter().any(|p| matches_every_path(p.normalized())),
        (Some(e), Some(l)) => l.iter().all(|p| covered_by_any(p, e)),
    };
    // Every page `earlier` excludes must be excluded by `later` too, or outside its pages.
    included
        && earlier.when.exclude_pages.iter().all(|x| {
            covered_by_any(x, &later.when.exclude_pages)
                || later
                    .when
                    .pages
                    .as_ref()
                    .is_some_and(|l| l.iter().all(|p| disjoint(p.normalized(), x.normalized())))
        })
}

fn quoted_list(ids: &[&str]) -> String {
    let quoted: Vec<String> = ids.iter().map(|id| format!("{id:?}")).collect();
    match quoted.as_slice() {
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    }
}

impl Analysis<'_> {
    /// Lint warnings for the config (docs/contract/analysis.md), each a [`Diagnostic`] with severity warning, a
    /// stable code, a JSON path and, when the engine was compiled from text, line and column.
    ///
    /// Codes: `shadowed_rule`, `catch_all_rule`, `rule_in_quiet_zone`, `rule_excludes_all_pages`,
    /// `empty_pages`, `quiet_zone_covers_every_page`, `duplicate_pattern`, `redundant_pattern`,
    /// `pattern_query_string`, `pattern_has_scheme`, `pattern_uppercase`,
    /// `pattern_never_matches`, `pattern_byte_wildcard`; docs/contract/caps.md: `costly_holdout`,
    /// `capped_by_session`.
    pub fn lint(&self) -> Vec<Diagnostic> {
        let config = self.engine.config();
        let mut f = Findings::default();
        let root = Path::root();
        let quiet = &config.quiet_zones;
        let quiet_index =
            CoverIndex::new(quiet.iter().enumerate().map(|(i, q)| (i, q.normalized())));
        let rules = &config.rules;
        // Every enabled rule's `pages` patterns, by rule: the candidates that may shadow a rule.
        let page_index = CoverIndex::new(
            rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.enabled)
                .flat_map(|(i, r)| {
                    r.when
                        .pages
                        .iter()
                        .flatten()
                        .map(move |p| (i, p.normalized()))
                }),
        );
        let quiet_path = root.key("quiet_zones");
        list_hygiene(quiet, &quiet_path, config.case_sensitive, &mut f);
        for (i, q) in quiet.iter().enumerate() {
            if matches_every_path(q.normalized()) {
                f.push(
                    DiagnosticCode::QuietZoneCoversEveryPage,
                    &quiet_path.index(i),
                    format!("quiet zone {q} covers every page, so no nudge can ever fire"),
                );
            }
        }
        for (i, rule) in rules.iter().enumerate() {
            let path = root.key("rules").index(i);
            let when = path.key("when");
            if let Some(pages) = &rule.when.pages {
                list_hygiene(pages, &when.key("pages"), config.case_sensitive, &mut f);
            }
            list_hygiene(
                &rule.when.exclude_pages,
                &when.key("exclude_pages"),
                config.case_sensitive,
                &mut f,
            );
            if !rule.enabled {
                continue;
            }
            if dead_rule(rule, &path, quiet, &quiet_index, &mut f) {
                continue;
            }
            let w = &rule.when;
            if rule.holdout_percent > COSTLY_HOLDOUT_PERCENT {
                let percent = rule.holdout_percent;
                f.push(
                    DiagnosticCode::CostlyHoldout,
                    &path.key("holdout_percent"),
                    format!(
                        "holdout_percent {percent} keeps {percent} % of the visitors this rule reaches from ever seeing its nudge; 5 to 10 % usually measures uplift at a lower cost"
                    ),
                );
            }
            let catch_all = w.pages.is_none()
                && w.exclude_pages.is_empty()
                && w.min_intent_score == 0
                && w.max_intent_score == MAX_INTENT_SCORE
                && w.min_idle_ms == 0
                && w.exit_intent.is_none();
            let later = rules.len() - i - 1;
            if catch_all && later > 0 {
                f.push(
                    DiagnosticCode::CatchAllRule,
                    &path,
                    format!(
                        "rule {:?} fires on every page outside the quiet zones at any intent score and idle time, so the {later} rule(s) after it can never fire",
                        rule.id
                    ),
                );
            }
            if let Some(shadow) = shadowed_by(rules, i, &page_index) {
                let by = quoted_list(&shadow.by);
                match config.max_nudges_per_session {
                    Some(max) if shadow.fires_before >= u32::from(max) => f.push(
                        DiagnosticCode::CappedBySession,
                        &path,
                        format!(
                            "rule {:?} can never fire: earlier rules ({by}) fire in every state in which it could, and together they may fire {} time(s) per session, which reaches max_nudges_per_session {max}",
                            rule.id, shadow.fires_before
                        ),
                    ),
                    _ => f.push(
                        DiagnosticCode::ShadowedRule,
                        &path,
                        format!(
                            "rule {:?} is shadowed: earlier rule(s) {by} fire in every state it could fire in, so it fires only once they are capped in a session",
                            rule.id,
                        ),
                    ),
                }
            }
        }
        f.into_warnings(self.engine.source())
    }
}

/// Reports a rule that can fire on no page; returns true when it did.
fn dead_rule(
    rule: &Rule,
    path: &Path,
    quiet: &[Pattern],
    quiet_index: &CoverIndex<'_>,
    f: &mut Findings,
) -> bool {
    let excluded = &rule.when.exclude_pages;
    let Some(pages) = &rule.when.pages else {
        if quiet.iter().any(|q| matches_every_path(q.normalized())) {
            f.push(
                DiagnosticCode::RuleInQuietZone,
                path,
                format!(
                    "rule {:?} can never fire: a quiet zone covers every page",
                    rule.id
                ),
            );
            return true;
        }
        return false;
    };
    if pages.is_empty() {
        f.push(
            DiagnosticCode::EmptyPages,
            &path.key("when").key("pages"),
            format!(
                "rule {:?} has an empty pages list, so it matches no page and never fires; remove \"pages\" to match every page",
                rule.id
            ),
        );
        return true;
    }
    let in_quiet = |p: &Pattern| {
        let mut any = false;
        quiet_index.covering(p.normalized(), |_| any = true);
        any
    };
    let is_excluded = |p: &Pattern| covered_by_any(p, excluded);
    if pages.iter().all(|p| in_quiet(p) || is_excluded(p)) {
        if pages.iter().all(is_excluded) {
            f.push(
                DiagnosticCode::RuleExcludesAllPages,
                &path.key("when").key("exclude_pages"),
                format!(
                    "rule {:?} excludes every page it includes, so it never fires",
                    rule.id
                ),
            );
        } else {
            f.push(
                DiagnosticCode::RuleInQuietZone,
                &path.key("when").key("pages"),
                format!(
                    "rule {:?} can never fire: every page it targets is inside a quiet zone",
                    rule.id
                ),
            );
        }
        return true;
    }
    false
}

/// A holdout above this share is named as costly (docs/contract/caps.md lint).
const COSTLY_HOLDOUT_PERCENT: u8 = 20;

/// The earlier rules that shadow a rule, and how many times they fire in a session before it
/// can (docs/contract/caps.md caps).
struct Shadow<'r> {
    /// Their ids, in config order.
    by: Vec<&'r str>,
    /// The fewest nudges the session must have held before the rule can fire in some state:
    /// over the intent scores it accepts, the least sum of the `cap.per_session` of the earlier
    /// rules that hold there at its idle threshold (each must be capped first).
    fires_before: u32,
}

/// The earlier enabled rules that together cover every state in which rule `i` could fire, when
/// that can be decided; `None` otherwise.
fn shadowed_by<'r>(rules: &'r [Rule], i: usize, page_index: &CoverIndex<'_>) -> Option<Shadow<'r>> {
    let rule = rules.get(i)?;
    let w = &rule.when;
    // Candidates: earlier enabled rules without `pages`, and those with a pattern covering the
    // rule's first page pattern (or matching every path, when the rule has no `pages`).
    // The earlier rules as a set (one flag per rule before this one), read in config order: no
    // sort in the WASM module (size).
    let earlier = rules.get(..i)?;
    let mut candidate: Vec<bool> = earlier
        .iter()
        .map(|e| e.enabled && e.when.pages.is_none())
        .collect();
    let mut mark = |j: usize| {
        if let Some(flag) = candidate.get_mut(j) {
            *flag = true;
        }
    };
    match w.pages.as_deref() {
        Some([first, ..]) => page_index.covering(first.normalized(), &mut mark),
        Some([]) => return None,
        None => page_index.covering("", &mut mark),
    }
    let covering: Vec<&Rule> = earlier
        .iter()
        .zip(&candidate)
        .filter(|&(e, &flag)| {
            flag && e.enabled && pages_covered(e, rule) && exit_intent_covered(e, rule)
        })
        .map(|(e, _)| e)
        .collect();
    // Which covering rules shadow some intent score, by position in `covering` (config order).
    let mut used = vec![false; covering.len()];
    let mut fires_before = u32::MAX;
    // For every intent score the rule accepts, some covering rule must accept it at an idle
    // threshold no higher than the rule's own: then wherever it holds, an earlier rule holds.
    for intent in w.min_intent_score..=w.max_intent_score {
        let (best, _) = covering
            .iter()
            .enumerate()
            .filter(|(_, e)| (e.when.min_intent_score..=e.when.max_intent_score).contains(&intent))
            .filter(|(_, e)| e.when.min_idle_ms <= w.min_idle_ms)
            .min_by_key(|(_, e)| e.when.min_idle_ms)?;
        if let Some(flag) = used.get_mut(best) {
            *flag = true;
        }
        let before: u32 = covering
            .iter()
            .filter(|e| (e.when.min_intent_score..=e.when.max_intent_score).contains(&intent))
            .filter(|e| e.when.min_idle_ms <= w.min_idle_ms)
            .map(|e| u32::from(e.cap.per_session))
            .sum();
        fires_before = fires_before.min(before);
    }
    // Named in config order.
    let by = covering
        .iter()
        .zip(&used)
        .filter(|&(_, &flag)| flag)
        .map(|(e, _)| e.id.as_str())
        .collect();
    Some(Shadow { by, fires_before })
}

/// Duplicates, redundant patterns and patterns that look like mistakes, in one list.
fn list_hygiene(list: &[Pattern], path: &Path, case_sensitive: bool, f: &mut Findings) {
    let index = CoverIndex::new(list.iter().enumerate().map(|(i, p)| (i, p.normalized())));
    for (k, p) in list.iter().enumerate() {
        let at = path.index(k);
        let text = p.normalized();
        let mut covered_by: Option<usize> = None;
        index.covering(text, |j| {
            let other = list.get(j).is_some_and(|q| q.normalized() != text);
            if other && covered_by.is_none_or(|c| j < c) {
                covered_by = Some(j);
            }
        });
        if let Some(&j) = index.identical(text).first().filter(|&&j| j < k) {
            f.push(
                DiagnosticCode::DuplicatePattern,
                &at,
                format!("pattern {p} repeats {path}[{j}]; remove one"),
            );
        } else if let Some((j, q)) = covered_by.and_then(|j| list.get(j).map(|q| (j, q))) {
            f.push(
                DiagnosticCode::RedundantPattern,
                &at,
                format!("pattern {p} is already covered by {path}[{j}] {q}; it can be removed"),
            );
        }
        pattern_mistakes(p, &at, case_sensitive, f);
    }
}

fn pattern_mistakes(p: &Pattern, at: &Path, case_sensitive: bool, f: &mut Findings) {
    let written = p.as_written();
    if let Some((token, suggestion)) = byte_wildcard(p.normalized()) {
        f.push(
            DiagnosticCode::PatternByteWildcard,
            at,
            format!("pattern {p} compares bytes: '?' and '[...]' match one byte, and a character such as 'é' is several bytes in UTF-8, so {token:?} never matches one; use '*' instead: {suggestion:?}"),
        );
    }
    if let Some(q) = written.find('?')
        && written.get(q..).is_some_and(|rest| rest.contains('='))
    {
        f.push(
                DiagnosticCode::PatternQueryString,
                at,
                format!("pattern {p} looks like it has a query string; pages are matched without their query, and '?' in a glob matches one character"),
            );
    }
    let lower = written.to_ascii_lowercase();
    if lower.contains("http://") || lower.contains("https://") || lower.contains("://") {
        f.push(
            DiagnosticCode::PatternHasScheme,
            at,
            format!("pattern {p} contains a scheme; patterns match paths only, write just the path (\"/products/**\")"),
        );
    }
    if !case_sensitive && written.chars().any(char::is_uppercase) {
        f.push(
            DiagnosticCode::PatternUppercase,
            at,
            format!("pattern {p} has upper-case letters, but the config is case-insensitive: it is compared as {:?}", p.normalized()),
        );
    }
    let never = if written.contains('%') {
        Some("'%': page paths are percent-decoded before matching, so write the character itself")
    } else if written.contains(';') {
        Some("';': page paths are cut at ';' (path parameters), so a path never contains it")
    } else if written.contains("//") {
        Some("'//': page paths never contain empty segments")
    } else if written
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        Some("a '.' or '..' segment: page paths are resolved, so they never contain one")
    } else {
        None
    };
    if let Some(why) = never {
        f.push(
            DiagnosticCode::PatternNeverMatches,
            at,
            format!("pattern {p} can never match: it contains {why}"),
        );
    }
}

/// The first `?` or class (`[...]`) of a normalized pattern that sits next to non-ASCII text or
/// lists a non-ASCII character (globs match bytes, so it never matches such a character), and the
/// pattern with every such wildcard replaced by `*` (merged with a `*` beside it). `None` when
/// there is none.
fn byte_wildcard(pattern: &str) -> Option<(String, String)> {
    let chars: Vec<char> = pattern.chars().collect();
    // Each wildcard as (start, end) in `chars`, end exclusive; escapes skipped.
    let mut wildcards = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '?' => {
                wildcards.push((i, i + 1));
                i += 1;
            }
            '[' => {
                // globset's class: `!` or `^` may negate, a `]` first is a member.
                let mut j = i + 1;
                if matches!(chars.get(j), Some('!' | '^')) {
                    j += 1;
                }
                j += 1;
                while chars.get(j).is_some_and(|&c| c != ']') {
                    j += 1;
                }
                if j >= chars.len() {
                    break;
                }
                wildcards.push((i, j + 1));
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    let non_ascii = |k: Option<usize>| k.and_then(|k| chars.get(k)).is_some_and(|c| !c.is_ascii());
    let bad: Vec<(usize, usize)> = wildcards
        .into_iter()
        .filter(|&(start, end)| {
            non_ascii(start.checked_sub(1))
                || non_ascii(Some(end))
                || chars
                    .get(start..end)
                    .is_some_and(|w| w.iter().any(|c| !c.is_ascii()))
        })
        .collect();
    let &(first_start, first_end) = bad.first()?;
    let token: String = chars.get(first_start..first_end)?.iter().collect();
    let mut suggestion = String::with_capacity(pattern.len());
    let mut k = 0;
    while let Some(&c) = chars.get(k) {
        if let Some(&(_, end)) = bad.iter().find(|(start, _)| *start == k) {
            if !suggestion.ends_with('*') {
                suggestion.push('*');
            }
            k = end;
            continue;
        }
        if !(c == '*' && suggestion.ends_with('*') && bad.iter().any(|(_, end)| *end == k)) {
            suggestion.push(c);
        }
        k += 1;
    }
    Some((token, suggestion))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(config: &str) -> Vec<(String, DiagnosticCode)> {
        Analysis::new(&Engine::compile(config).unwrap())
            .lint()
            .into_iter()
            .map(|d| (d.path, d.code))
            .collect()
    }

    fn rule(id: &str, when: &str) -> String {
        format!(
            r#"{{"id":"{id}","nudge":{{"type":"toast","message":"m","cta":"c"}},"when":{when}}}"#
        )
    }

    #[test]
    fn shadowing_is_found_where_certain() {
        let config = format!(
            r#"{{"version":1,"rules":[{},{},{},{}]}}"#,
            rule("a", r#"{"min_intent_score":50,"pages":["/products/**"]}"#),
            rule(
                "b",
                r#"{"max_intent_score":49,"min_idle_ms":100,"pages":["/products/**"]}"#
            ),
            rule("c", r#"{"min_idle_ms":200,"pages":["/products/x"]}"#),
            rule("d", r#"{"pages":["/products/*"]}"#),
        );
        let got = codes(&config);
        assert!(
            got.contains(&("rules[2]".to_owned(), DiagnosticCode::ShadowedRule)),
            "{got:?}"
        );
        // d at idle < 100 with intent < 50 is not covered by a or b.
        assert!(!got.iter().any(|(p, _)| p == "rules[3]"), "{got:?}");
    }

    #[test]
    fn dead_rules_and_hygiene() {
        let config = format!(
            r#"{{"version":1,"quiet_zones":["/checkout/**","/checkout/**","/Cart","/**"],"rules":[{},{},{}]}}"#,
            rule("q", r#"{"pages":["/checkout/pay"]}"#),
            rule("e", r#"{"pages":[]}"#),
            rule(
                "x",
                r#"{"pages":["/a/**","/a/b","/search?q=1","/http://x/y","/a%20b"],"exclude_pages":["/a/**"]}"#
            ),
        );
        let got = codes(&config);
        for want in [
            ("quiet_zones[1]", DiagnosticCode::DuplicatePattern),
            ("quiet_zones[2]", DiagnosticCode::PatternUppercase),
            ("quiet_zones[3]", DiagnosticCode::QuietZoneCoversEveryPage),
            ("rules[0].when.pages", DiagnosticCode::RuleInQuietZone),
            ("rules[1].when.pages", DiagnosticCode::EmptyPages),
            ("rules[2].when.pages[1]", DiagnosticCode::RedundantPattern),
            ("rules[2].when.pages[2]", DiagnosticCode::PatternQueryString),
            ("rules[2].when.pages[3]", DiagnosticCode::PatternHasScheme),
            (
                "rules[2].when.pages[4]",
                DiagnosticCode::PatternNeverMatches,
            ),
        ] {
            assert!(
                got.contains(&(want.0.to_owned(), want.1)),
                "{want:?} not in {got:?}"
            );
        }
    }

    #[test]
    fn byte_wildcards_next_to_non_ascii_text() {
        let table = [
            ("/caf?", None),
            ("/caf\u{e9}?", Some(("?", "/caf\u{e9}*"))),
            ("/caf[\u{e9}\u{e8}]", Some(("[\u{e9}\u{e8}]", "/caf*"))),
            ("/\u{e9}t\u{e9}/?x", None),
            ("/x?\u{fc}ber", Some(("?", "/x*\u{fc}ber"))),
            ("/a*?\u{e9}", Some(("?", "/a*\u{e9}"))),
            ("/a\\?\u{e9}", None),
            ("/[a-z]\u{e9}/*", Some(("[a-z]", "/*\u{e9}/*"))),
        ];
        for (pattern, want) in table {
            let got = byte_wildcard(pattern);
            assert_eq!(
                got.as_ref().map(|(t, s)| (t.as_str(), s.as_str())),
                want,
                "{pattern}"
            );
        }
        let config = format!(
            r#"{{"version":1,"rules":[{}]}}"#,
            rule("c", r#"{"pages":["/caf[\u00e9\u00e8]"]}"#)
        );
        assert_eq!(
            codes(&config),
            vec![(
                "rules[0].when.pages[0]".to_owned(),
                DiagnosticCode::PatternByteWildcard
            )]
        );
    }

    #[test]
    fn storefront_lints_clean_and_warnings_have_positions() {
        let storefront = include_str!("../../examples/storefront.json");
        assert_eq!(codes(storefront), vec![]);
        let v = validate_config("{\"version\":1,\n\"quiet_zones\":[\"/**\"]}");
        assert!(v.valid);
        assert_eq!(v.warnings[0].line, Some(2));
    }
}
