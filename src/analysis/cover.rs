//! Which patterns certainly cover others, for lint (docs/contract/analysis.md): claims are made only where certain.

use rustc_hash::FxHashMap;

use crate::pattern::{is_literal, matches_every_path};

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

/// The patterns of a list indexed for [`covers`]: which of them certainly cover a given pattern,
/// by hash lookups of the pattern and its ancestors instead of a comparison with each (lint on
/// 1,000 rules and 1,000 quiet zones stays linear).
pub(crate) struct CoverIndex<'a> {
    universal: Vec<usize>,
    exact: FxHashMap<&'a str, Vec<usize>>,
    /// `X` of each `X/**` with a literal `X`.
    prefix: FxHashMap<&'a str, Vec<usize>>,
}

impl<'a> CoverIndex<'a> {
    /// Indexes `(id, normalized pattern)` pairs; ids need not be distinct.
    pub(crate) fn new(patterns: impl IntoIterator<Item = (usize, &'a str)>) -> Self {
        let mut index = CoverIndex {
            universal: Vec::new(),
            exact: FxHashMap::default(),
            prefix: FxHashMap::default(),
        };
        for (id, text) in patterns {
            if matches_every_path(text) {
                index.universal.push(id);
            }
            index.exact.entry(text).or_default().push(id);
            if let Some(base) = text.strip_suffix("/**")
                && !base.is_empty()
                && is_literal(base)
            {
                index.prefix.entry(base).or_default().push(id);
            }
        }
        index
    }

    /// Calls `found` with the id of every indexed pattern `g` for which `covers(g, specific)`
    /// (an id may come more than once).
    pub(crate) fn covering(&self, specific: &str, mut found: impl FnMut(usize)) {
        let mut all = |ids: Option<&Vec<usize>>| ids.into_iter().flatten().for_each(|&i| found(i));
        all(Some(&self.universal));
        all(self.exact.get(specific));
        all(self.prefix.get(specific));
        for (i, _) in specific.match_indices('/').filter(|(i, _)| *i > 0) {
            all(specific.get(..i).and_then(|a| self.prefix.get(a)));
        }
    }

    /// The ids of the patterns identical to `specific`.
    pub(crate) fn identical(&self, specific: &str) -> &[usize] {
        self.exact.get(specific).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::PatternSet;

    fn matches(pattern: &str, path: &str) -> bool {
        let set = PatternSet::build(&[(0u32, pattern)]).unwrap();
        set.first_owner(path).is_some()
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
                for path in [specific.trim_end_matches("/**"), "/products/x", "/a/b"] {
                    if matches(specific, path) {
                        assert!(matches(general, path), "{general} must match {path}");
                    }
                }
            }
        }
    }

    #[test]
    fn cover_index_agrees_with_covers() {
        let patterns = [
            "/**",
            "**",
            "/a",
            "/a/**",
            "/a/b",
            "/a/b/**",
            "/a/*",
            "/{a,b}/**",
            "**/b",
            "/ab/**",
            "/a.b/**",
        ];
        let index = CoverIndex::new(patterns.iter().enumerate().map(|(i, p)| (i, *p)));
        for specific in patterns.iter().chain(&["/a/b/c", "/ab", "/a.b/c", "/x"]) {
            let mut got = Vec::new();
            index.covering(specific, |i| got.push(i));
            got.sort_unstable();
            got.dedup();
            let want: Vec<usize> = (0..patterns.len())
                .filter(|&i| covers(patterns[i], specific))
                .collect();
            assert_eq!(got, want, "covering {specific}");
        }
    }
}
