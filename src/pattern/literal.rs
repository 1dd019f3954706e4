//! Literal and literal-prefix patterns (`/search`, `/products/**`, `/collections/{sale,clearance}/**`),
//! with `{a,b}` alternates of literals expanded, matched by hash lookups of the path and its
//! ancestors: the cost depends on the path's depth, not on the number of patterns.

use rustc_hash::FxHashMap;

use super::{is_literal, matches_every_path};

/// The exact form of a pattern without glob syntax: `/search` matches itself only; `X/**` with a
/// literal `X` matches `X` and every path starting with `X/` (docs/contract/patterns.md); `/**` and `**` match every
/// path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum LiteralForm {
    Exact(String),
    Prefix(String),
    Everything,
}

/// Most brace expansions a pattern may have to be indexed as literals.
const MAX_EXPANSIONS: usize = 16;

/// The literal forms of a normalized pattern, when it has no glob syntax other than a trailing
/// `/**` and `{...}` alternates of literals (expanded); `None` when globset must match it.
pub(super) fn literal_forms(normalized: &str) -> Option<Vec<LiteralForm>> {
    if matches_every_path(normalized) {
        return Some(vec![LiteralForm::Everything]);
    }
    let expansions = if normalized.contains('{') {
        expand_braces(normalized)?
    } else {
        vec![normalized.to_owned()]
    };
    let mut out = Vec::with_capacity(expansions.len());
    for expanded in expansions {
        let (base, prefix) = match expanded.strip_suffix("/**") {
            Some(base) if !base.is_empty() => {
                let len = base.len();
                let mut base = expanded;
                base.truncate(len);
                (base, true)
            }
            _ => (expanded, false),
        };
        if !is_literal(&base) || !base.starts_with('/') {
            return None;
        }
        out.push(if prefix {
            LiteralForm::Prefix(base)
        } else {
            LiteralForm::Exact(base)
        });
    }
    Some(out)
}

/// Whether [`literal_forms`] is `Some`, without allocating for a pattern without alternates
/// (the common case; this runs for every pattern of a config being checked).
pub(super) fn has_literal_forms(normalized: &str) -> bool {
    if normalized.contains('{') {
        return literal_forms(normalized).is_some();
    }
    let base = match normalized.strip_suffix("/**") {
        Some(base) if !base.is_empty() => base,
        _ => normalized,
    };
    matches_every_path(normalized) || (is_literal(base) && base.starts_with('/'))
}

/// Expands `{a,b}` groups whose alternatives hold no nested group, class, escape or `**` (literals,
/// `*` and `?`), up to [`MAX_EXPANSIONS`] results; `None` when a group cannot be expanded that way.
///
/// The expansion means what globset means by the group: globset reads `**` by the characters
/// around it, so a group with `*` right before or after it is not expanded (the expansion could
/// make a `**`), and neither is a group after a `[` (a `{` inside a class is a class member). An
/// expansion made only of `**` and `/` (`**/` from `**/{a,}`) is refused too: globset reads such a
/// whole glob as "every path", which the group did not mean.
pub(super) fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    let out = expand_groups(pattern)?;
    if out.len() > 1 && out.iter().any(|text| only_globstars(text)) {
        return None;
    }
    Some(out)
}

/// Whether `text` is made only of `**` segments and `/`, with at least one `**`.
fn only_globstars(text: &str) -> bool {
    text.contains("**") && text.split('/').all(|part| part.is_empty() || part == "**")
}

fn expand_groups(pattern: &str) -> Option<Vec<String>> {
    let Some(open) = pattern.find('{') else {
        return Some(vec![pattern.to_owned()]);
    };
    let close = open + pattern.get(open..)?.find('}')?;
    let (head, inner, tail) = (
        pattern.get(..open)?,
        pattern.get(open + 1..close)?,
        pattern.get(close + 1..)?,
    );
    if head.contains(['[', ']', '\\'])
        || head.ends_with('*')
        || tail.starts_with('*')
        || inner.contains(['{', '[', ']', '\\'])
        || inner.contains("**")
    {
        return None;
    }
    let rests = expand_groups(tail)?;
    let mut out = Vec::new();
    // An alternative may be empty (docs/contract/patterns.md: `/guide{,s}`).
    for alternative in inner.split(',') {
        for rest in &rests {
            out.push(format!("{head}{alternative}{rest}"));
            if out.len() > MAX_EXPANSIONS {
                return None;
            }
        }
    }
    Some(out)
}

/// Literal and literal-prefix patterns, matched by hash lookups of the path and its ancestors:
/// the cost depends on the path's depth, not on the number of patterns.
#[derive(Clone, Debug)]
pub(super) struct LiteralIndex<O> {
    /// Owners of patterns matching exactly this path (`/search`; `X` of `X/**`).
    exact: FxHashMap<Box<str>, Vec<O>>,
    /// Owners of `X/**` patterns, keyed by `X`: they match every path starting with `X/`.
    prefix: FxHashMap<Box<str>, Vec<O>>,
    /// Owners of patterns matching every path.
    everything: Vec<O>,
    /// The longest key of `prefix`, in bytes: longer ancestors need no lookup.
    longest_prefix: usize,
}

impl<O> Default for LiteralIndex<O> {
    fn default() -> Self {
        LiteralIndex {
            exact: FxHashMap::default(),
            prefix: FxHashMap::default(),
            everything: Vec::new(),
            longest_prefix: 0,
        }
    }
}

impl<O: Copy> LiteralIndex<O> {
    pub(super) fn add(&mut self, owner: O, form: LiteralForm) {
        match form {
            LiteralForm::Everything => self.everything.push(owner),
            LiteralForm::Exact(path) => self.exact.entry(path.into()).or_default().push(owner),
            LiteralForm::Prefix(base) => {
                self.longest_prefix = self.longest_prefix.max(base.len());
                self.exact
                    .entry(base.as_str().into())
                    .or_default()
                    .push(owner);
                self.prefix.entry(base.into()).or_default().push(owner);
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefix.is_empty() && self.everything.is_empty()
    }

    /// Calls `found` with the owners of every pattern matching `path`.
    pub(super) fn for_each_match(&self, path: &str, mut found: impl FnMut(&[O])) {
        found(&self.everything);
        if let Some(owners) = self.exact.get(path) {
            found(owners);
        }
        if self.prefix.is_empty() {
            return;
        }
        // Every proper ancestor up to the longest key: `/a` and `/a/b` of `/a/b/c`.
        let bytes = path.as_bytes();
        let end = bytes.len().min(self.longest_prefix + 1);
        for i in memchr::memchr_iter(b'/', bytes.get(1..end).unwrap_or_default()) {
            if let Some(owners) = path.get(..=i).and_then(|a| self.prefix.get(a)) {
                found(owners);
            }
        }
    }
}
