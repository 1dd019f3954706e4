//! Page patterns (SPEC 3): validation, normalization, and compilation into shared glob sets.
//!
//! Every pattern of a kind (all quiet zones; all rules' `pages` and `exclude_pages`) goes into one
//! [`globset::GlobSet`], built once, so matching a path costs one set lookup however many rules
//! there are. Each glob remembers its owner (a quiet zone, or a rule's list and pattern index).
//! Sets are built with `GlobSet::new`, which returns errors, never with `compile_matcher`, which
//! can panic.

use globset::{Candidate, Glob, GlobBuilder, GlobSet};

use crate::normalize::normalize_pattern_text;

/// Longest pattern, in bytes (SPEC 2).
pub const MAX_PATTERN_BYTES: usize = 512;

/// Builds a glob with every option set explicitly (SPEC 3): `*` and `?` never cross `/`, `\`
/// escapes, matching is case-sensitive (case folding is done by normalization), no empty
/// alternates, no unclosed classes.
fn glob(text: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(text)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(false)
        .empty_alternates(false)
        .allow_unclosed_class(false)
        .build()
}

/// The globs a pattern compiles to: itself, plus its prefix when it ends in `/**` (SPEC 3:
/// `/checkout/**` also matches `/checkout`).
fn globs_of(normalized: &str) -> Result<Vec<Glob>, globset::Error> {
    let mut out = vec![glob(normalized)?];
    if let Some(prefix) = normalized.strip_suffix("/**") {
        if !prefix.is_empty() && !prefix.ends_with('\\') {
            out.push(glob(prefix)?);
        }
    }
    Ok(out)
}

/// A pattern problem found while loading a config: a stable code and a message naming the
/// pattern.
pub(crate) struct PatternProblem {
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

/// Checks a pattern as written in the config and returns its normalized text (SPEC 3).
///
/// Rules: at most 512 bytes; starts with `/` or `**`; does not end in `/` (unless it is `/`);
/// parses as a glob (with its `/**` prefix variant); normalized like paths (NFKC, lowercase unless
/// `case_sensitive`).
pub(crate) fn check(raw: &str, case_sensitive: bool) -> Result<String, PatternProblem> {
    let problem = |code, message| Err(PatternProblem { code, message });
    if raw.len() > MAX_PATTERN_BYTES {
        return problem(
            "pattern_too_long",
            format!(
                "pattern is {} bytes long; the limit is 512 bytes",
                raw.len()
            ),
        );
    }
    if !raw.starts_with('/') && !raw.starts_with("**") {
        let hint = if raw.is_empty() {
            "; use \"/**\" for every page".to_owned()
        } else if raw.starts_with("http://") || raw.starts_with("https://") {
            "; write only the path, without scheme and host".to_owned()
        } else {
            format!("; did you mean \"/{raw}\"?")
        };
        return problem(
            "pattern_not_absolute",
            format!("pattern {raw:?} must start with '/' or '**'{hint}"),
        );
    }
    if raw.len() > 1 && raw.ends_with('/') {
        let trimmed = raw.trim_end_matches('/');
        let without = if trimmed.is_empty() { "/" } else { trimmed };
        return problem(
            "pattern_trailing_slash",
            format!(
                "pattern {raw:?} ends with '/', which a normalized path never does; write {without:?}, or \"{trimmed}/**\" for the page and everything below it"
            ),
        );
    }
    let normalized = normalize_pattern_text(raw, case_sensitive);
    if let Err(e) = globs_of(&normalized) {
        return problem(
            "pattern_syntax",
            format!("pattern {raw:?} is not a valid glob: {}", e.kind()),
        );
    }
    // Regex size limits are checked when the whole set is built; see `PatternSet::build`.
    Ok(normalized)
}

/// Many patterns compiled into one glob set; each match reports its owner.
#[derive(Clone, Debug)]
pub(crate) struct PatternSet {
    set: GlobSet,
    /// For each glob of `set`, the owner given to [`PatternSet::build`].
    owners: Vec<u32>,
}

impl PatternSet {
    /// Builds a set from `(owner, normalized pattern)` pairs.
    ///
    /// # Errors
    ///
    /// When globset refuses the set (a regex over its size limits), the indices (into `patterns`)
    /// of the patterns that fail on their own; empty when only the combination is too large.
    pub(crate) fn build(patterns: &[(u32, &str)]) -> Result<Self, Vec<usize>> {
        let mut globs = Vec::with_capacity(patterns.len() + patterns.len() / 2);
        let mut owners = Vec::with_capacity(globs.capacity());
        let mut bad = Vec::new();
        for (i, (owner, text)) in patterns.iter().enumerate() {
            match globs_of(text) {
                Ok(gs) => {
                    owners.extend(std::iter::repeat_n(*owner, gs.len()));
                    globs.extend(gs);
                }
                Err(_) => bad.push(i),
            }
        }
        if !bad.is_empty() {
            return Err(bad);
        }
        match GlobSet::new(&globs) {
            Ok(set) => Ok(PatternSet { set, owners }),
            Err(_) => Err(patterns
                .iter()
                .enumerate()
                .filter(|(_, (_, text))| {
                    globs_of(text).map_or(true, |gs| GlobSet::new(&gs).is_err())
                })
                .map(|(i, _)| i)
                .collect()),
        }
    }

    /// An empty set (matches nothing).
    pub(crate) fn empty() -> Self {
        PatternSet {
            set: GlobSet::empty(),
            owners: Vec::new(),
        }
    }

    /// True when any pattern matches.
    pub(crate) fn is_match(&self, path: &Candidate<'_>) -> bool {
        !self.set.is_empty() && self.set.is_match_candidate(path)
    }

    /// Replaces `owners_out` with the owners of every matching glob, sorted, duplicates removed.
    pub(crate) fn matching_owners(
        &self,
        path: &Candidate<'_>,
        scratch: &mut Vec<usize>,
        owners_out: &mut Vec<u32>,
    ) {
        owners_out.clear();
        if self.set.is_empty() {
            return;
        }
        self.set.matches_candidate_into(path, scratch);
        owners_out.extend(scratch.iter().filter_map(|&g| self.owners.get(g).copied()));
        owners_out.sort_unstable();
        owners_out.dedup();
    }

    /// The smallest owner among the matching globs.
    pub(crate) fn first_owner(
        &self,
        path: &Candidate<'_>,
        scratch: &mut Vec<usize>,
    ) -> Option<u32> {
        if !self.is_match(path) {
            return None;
        }
        self.set.matches_candidate_into(path, scratch);
        scratch
            .iter()
            .filter_map(|&g| self.owners.get(g).copied())
            .min()
    }
}

/// True when the normalized pattern `general` certainly matches every path that `specific`
/// matches. Decided only where it is certain (lint must never claim what is not so): identical
/// patterns; `/**` and `**`, which match every path; and `X/**` with a literal `X` (no glob
/// syntax), which covers `X` and every pattern starting with `X/`. False means "not known".
pub(crate) fn covers(general: &str, specific: &str) -> bool {
    if general == specific || matches_every_path(general) {
        return true;
    }
    let Some(prefix) = general.strip_suffix("/**") else {
        return false;
    };
    is_literal(prefix)
        && (specific == prefix
            || specific
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/')))
}

/// True for the patterns that match every normalized path.
pub(crate) fn matches_every_path(normalized: &str) -> bool {
    matches!(normalized, "/**" | "**" | "**/**")
}

/// True when a pattern has no glob syntax (it matches exactly itself).
pub(crate) fn is_literal(normalized: &str) -> bool {
    !normalized.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(patterns: &[&str]) -> PatternSet {
        let owned: Vec<(u32, &str)> = patterns
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u32, *p))
            .collect();
        PatternSet::build(&owned).unwrap()
    }

    fn owners(s: &PatternSet, path: &str) -> Vec<u32> {
        let mut out = Vec::new();
        s.matching_owners(&Candidate::from_bytes(path), &mut Vec::new(), &mut out);
        out
    }

    #[test]
    fn glob_semantics_table() {
        // (pattern, path, matches)
        let table = [
            ("/checkout/**", "/checkout", true),
            ("/checkout/**", "/checkout/pay", true),
            ("/checkout/**", "/checkout/pay/confirm", true),
            ("/checkout/**", "/checkoutx", false),
            ("/**", "/", true),
            ("/**", "/a/b", true),
            ("/", "/", true),
            ("/", "/a", false),
            ("/products/*", "/products/a", true),
            ("/products/*", "/products/a/b", false),
            ("/p?", "/pa", true),
            ("/p?", "/p/", false),
            ("**/reviews", "/products/a/reviews", true),
            ("**/reviews", "/reviews", true),
            ("/{a,b}/x", "/b/x", true),
            ("/[abc]x", "/bx", true),
            ("/[!abc]x", "/bx", false),
            ("/a\\*", "/a*", true),
            ("/a\\*", "/ab", false),
            (
                "/collections/{sale,clearance}/**",
                "/collections/sale",
                true,
            ),
            (
                "/collections/{sale,clearance}/**",
                "/collections/clearance/x",
                true,
            ),
        ];
        for (pattern, path, want) in table {
            let s = set(&[pattern]);
            assert_eq!(!owners(&s, path).is_empty(), want, "{pattern} vs {path}");
        }
    }

    #[test]
    fn check_rejects_with_hints() {
        let c = |p: &str| check(p, false).map_err(|e| (e.code, e.message));
        assert_eq!(c("/Products/**").unwrap(), "/products/**");
        assert_eq!(c("**/x").unwrap(), "**/x");
        let (code, msg) = c("/products/").unwrap_err();
        assert_eq!(code, "pattern_trailing_slash");
        assert!(
            msg.contains("\"/products\"") && msg.contains("/products/**"),
            "{msg}"
        );
        assert_eq!(c("products/**").unwrap_err().0, "pattern_not_absolute");
        assert_eq!(c("").unwrap_err().0, "pattern_not_absolute");
        let (code, msg) = c("/a/{b").unwrap_err();
        assert_eq!(code, "pattern_syntax");
        assert!(msg.contains("unclosed alternate"), "{msg}");
        assert_eq!(c("/a/[").unwrap_err().0, "pattern_syntax");
        assert_eq!(c(&format!("/{}", "a".repeat(511))).map(|_| ()), Ok(()));
        assert_eq!(
            c(&format!("/{}", "a".repeat(512))).unwrap_err().0,
            "pattern_too_long"
        );
        assert_eq!(c("/").unwrap(), "/");
    }

    #[test]
    fn coverage_is_only_claimed_when_certain() {
        let table = [
            ("/products/**", "/products", true),
            ("/products/**", "/products/x", true),
            ("/products/**", "/products/*/reviews", true),
            ("/products/**", "/productsx", false),
            ("/products/**", "/products*", false),
            ("/**", "/anything/**", true),
            ("**", "/", true),
            ("/a", "/a", true),
            ("/a/*", "/a/b", false),
            ("/{a,b}/**", "/a/x", false),
        ];
        for (general, specific, want) in table {
            assert_eq!(
                covers(general, specific),
                want,
                "{general} covers {specific}"
            );
            if want {
                let s = set(&[general]);
                for path in [specific.trim_end_matches("/**"), "/products/x", "/a/b"] {
                    if !owners(&set(&[specific]), path).is_empty() {
                        assert!(!owners(&s, path).is_empty(), "{general} must match {path}");
                    }
                }
            }
        }
    }

    #[test]
    fn owners_are_sorted_and_deduplicated() {
        let s = PatternSet::build(&[(7, "/a/**"), (3, "/a"), (7, "/**")]).unwrap();
        assert_eq!(owners(&s, "/a"), vec![3, 7]);
        assert_eq!(
            s.first_owner(&Candidate::from_bytes("/a"), &mut Vec::new()),
            Some(3)
        );
    }
}
