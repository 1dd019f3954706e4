//! Page patterns (SPEC 3): validation, normalization, and compilation into shared indexes.
//!
//! Every pattern of a kind (all quiet zones; all rules' `pages` and `exclude_pages`) goes into one
//! [`PatternSet`], built once, so that matching a path costs about the same however many rules
//! there are. Each pattern remembers its owner (a quiet zone, or a rule's list and pattern index).
//! A pattern is compiled by the first of three matchers that covers it:
//!
//! 1. literal and literal-prefix patterns (`/search`, `/products/**`): a [`LiteralIndex`] of hash
//!    lookups of the path and its ancestors;
//! 2. segment globs (`/products/*/reviews`, `**/p-[0-9]?`, `/a[!x]b`): our own matcher
//!    ([`crate::glob`]), indexed by a literal first or last segment ([`SegmentIndex`]);
//! 3. the rest (escapes, classes listing `/`, alternates holding `**`, classes or groups):
//!    globset regex sets, built with `GlobSet::new`, which returns errors, never with
//!    `compile_matcher`, which can panic.
//!
//! globset is also the parser of record: a pattern that the first two matchers do not cover must
//! parse as a globset glob, and the tests check both matchers against globset.

use crate::code::DiagnosticCode;
use globset::{Candidate, Glob, GlobBuilder, GlobSet};
use rustc_hash::FxHashMap;

use crate::glob::{byte_mask, classes_are_valid, path_segments, SegmentGlob};
use crate::limits::MAX_PATTERN_BYTES;
use crate::normalize::normalize_pattern_text;
use crate::text::binary_size;

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
    pub(crate) code: DiagnosticCode,
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
            DiagnosticCode::PatternTooLong,
            format!(
                "pattern is {} bytes long; the limit is {}",
                raw.len(),
                binary_size(MAX_PATTERN_BYTES)
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
            DiagnosticCode::PatternNotAbsolute,
            format!("pattern {raw:?} must start with '/' or '**'{hint}"),
        );
    }
    if raw.len() > 1 && raw.ends_with('/') {
        let trimmed = raw.trim_end_matches('/');
        let without = if trimmed.is_empty() { "/" } else { trimmed };
        return problem(
            DiagnosticCode::PatternTrailingSlash,
            format!(
                "pattern {raw:?} ends with '/', which a normalized path never does; write {without:?}, or \"{trimmed}/**\" for the page and everything below it"
            ),
        );
    }
    let normalized = normalize_pattern_text(raw, case_sensitive);
    // globset's errors are unclosed classes and groups, reversed ranges and a dangling escape:
    // without `{`, `}` or `\`, only classes can be wrong, which `classes_are_valid` checks
    // without building anything. Literal and literal-prefix patterns are valid by construction.
    // The others must parse in globset.
    if !normalized.contains(['{', '}', '\\']) && classes_are_valid(&normalized)
        || has_literal_forms(&normalized)
    {
        return Ok(normalized);
    }
    if let Err(e) = globs_of(&normalized) {
        return problem(
            DiagnosticCode::PatternSyntax,
            format!("pattern {raw:?} is not a valid glob: {}", e.kind()),
        );
    }
    // Regex size limits are checked when the whole set is built; see `PatternSet::build`.
    Ok(normalized)
}

/// The exact form of a pattern without glob syntax: `/search` matches itself only; `X/**` with a
/// literal `X` matches `X` and every path starting with `X/` (SPEC 3); `/**` and `**` match every
/// path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LiteralForm {
    Exact(String),
    Prefix(String),
    Everything,
}

/// Most brace expansions a pattern may have to be indexed as literals.
const MAX_EXPANSIONS: usize = 16;

/// The literal forms of a normalized pattern, when it has no glob syntax other than a trailing
/// `/**` and `{...}` alternates of literals (expanded); `None` when globset must match it.
fn literal_forms(normalized: &str) -> Option<Vec<LiteralForm>> {
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
fn has_literal_forms(normalized: &str) -> bool {
    if normalized.contains('{') {
        return literal_forms(normalized).is_some();
    }
    let base = match normalized.strip_suffix("/**") {
        Some(base) if !base.is_empty() => base,
        _ => normalized,
    };
    matches_every_path(normalized) || (is_literal(base) && base.starts_with('/'))
}

/// The segment globs a pattern compiles to (itself and, for `X/**`, its prefix `X`, as in
/// [`globs_of`]; `{...}` alternates expanded), or `None` when globset must match it.
fn segment_globs(normalized: &str) -> Option<Vec<SegmentGlob>> {
    let mut out = Vec::new();
    let mut add = |text: &str| -> Option<()> {
        SegmentGlob::parse_into(text, &mut out)?;
        if let Some(prefix) = text.strip_suffix("/**").filter(|p| !p.is_empty()) {
            SegmentGlob::parse_into(prefix, &mut out)?;
        }
        Some(())
    };
    if normalized.contains('{') {
        for expanded in expand_braces(normalized)? {
            add(&expanded)?;
        }
    } else {
        add(normalized)?;
    }
    Some(out)
}

/// Expands `{a,b}` groups whose alternatives hold no nested group, class, escape or `**` (literals,
/// `*` and `?`), up to [`MAX_EXPANSIONS`] results; `None` when a group cannot be expanded that way.
///
/// The expansion means what globset means by the group: globset reads `**` by the characters
/// around it, so a group with `*` right before or after it is not expanded (the expansion could
/// make a `**`), and neither is a group after a `[` (a `{` inside a class is a class member).
fn expand_braces(pattern: &str) -> Option<Vec<String>> {
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
    let rests = expand_braces(tail)?;
    let mut out = Vec::new();
    for alternative in inner.split(',') {
        if alternative.is_empty() {
            return None;
        }
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
struct LiteralIndex<O> {
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
    fn add(&mut self, owner: O, form: LiteralForm) {
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

    fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefix.is_empty() && self.everything.is_empty()
    }

    /// Calls `found` with the owners of every pattern matching `path`.
    fn for_each_match(&self, path: &str, mut found: impl FnMut(&[O])) {
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

/// Segment globs (see [`crate::glob`]) with their owners, indexed by the segment a matching path
/// must have first or last, so that a path is tried only against the globs that can match it:
/// `/c1/*/p2` is tried only on paths whose first segment is `c1`, `/c1-*/x` on those whose first
/// segment starts with `c1-`, `/*/reviews` on those whose last is `reviews`. The others are tried
/// on every path, each ruled out first by its bytes (see [`crate::glob::byte_mask`]).
#[derive(Clone, Debug)]
struct SegmentIndex<O> {
    globs: Vec<(SegmentGlob, O)>,
    /// Globs starting with a literal segment, by that segment.
    by_first: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// Globs whose first segment is a wildcard with a literal start, by that start.
    by_first_prefix: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// The longest key of `by_first_prefix`, in bytes: longer starts need no lookup.
    longest_first_prefix: usize,
    /// Globs ending with a literal segment (and not starting with one), by that segment.
    by_last: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// Every other glob: tried on every path.
    unindexed: Vec<u32>,
}

impl<O> Default for SegmentIndex<O> {
    fn default() -> Self {
        SegmentIndex {
            globs: Vec::new(),
            by_first: FxHashMap::default(),
            by_first_prefix: FxHashMap::default(),
            longest_first_prefix: 0,
            by_last: FxHashMap::default(),
            unindexed: Vec::new(),
        }
    }
}

impl<O: Copy> SegmentIndex<O> {
    fn add(&mut self, owner: O, glob: SegmentGlob) {
        let Ok(id) = u32::try_from(self.globs.len()) else {
            return;
        };
        if let Some(first) = glob.first_literal() {
            self.by_first.entry(first.into()).or_default().push(id);
        } else if let Some(prefix) = glob.first_prefix() {
            self.longest_first_prefix = self.longest_first_prefix.max(prefix.len());
            self.by_first_prefix
                .entry(prefix.into())
                .or_default()
                .push(id);
        } else if let Some(last) = glob.last_literal() {
            self.by_last.entry(last.into()).or_default().push(id);
        } else {
            self.unindexed.push(id);
        }
        self.globs.push((glob, owner));
    }

    fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// Calls `found` with the owner of every glob matching `path` (an owner may come more than
    /// once).
    fn for_each_match(&self, path: &str, mut found: impl FnMut(O)) {
        let segments = path_segments(path);
        let mask = byte_mask(path.as_bytes());
        let candidates = [
            segments.get(1).and_then(|s| self.by_first.get(*s)),
            segments.last().and_then(|s| self.by_last.get(*s)),
            Some(&self.unindexed),
        ];
        let mut try_each = |ids: &[u32]| {
            for id in ids {
                if let Some((glob, owner)) = self.globs.get(*id as usize) {
                    if glob.is_match(&segments, mask) {
                        found(*owner);
                    }
                }
            }
        };
        candidates
            .into_iter()
            .flatten()
            .for_each(|ids| try_each(ids));
        if let Some(first) = segments.get(1).filter(|_| self.longest_first_prefix > 0) {
            for len in 1..=first.len().min(self.longest_first_prefix) {
                if let Some(ids) = first.get(..len).and_then(|p| self.by_first_prefix.get(p)) {
                    try_each(ids);
                }
            }
        }
    }
}

/// Most regex source (in bytes, as globset writes it) in one [`GlobSet`]: larger sets are split,
/// so that no config within SPEC 2's limits exceeds the regex size limits as a whole.
const MAX_REGEX_BYTES_PER_SET: usize = 64 * 1024;

/// Globs compiled into one [`GlobSet`], with each glob's owner.
#[derive(Clone, Debug)]
struct GlobChunk<O> {
    set: GlobSet,
    owners: Vec<O>,
}

/// Many patterns compiled once; each match reports its owner. Literal and literal-prefix
/// patterns (the common case: `/search`, `/products/**`, `/collections/{sale,clearance}/**`) go
/// into a [`LiteralIndex`], segment globs (`/products/*/reviews`) into a [`SegmentIndex`], every
/// other pattern into globset regex sets (usually none).
#[derive(Clone, Debug)]
pub(crate) struct PatternSet<O> {
    literal: LiteralIndex<O>,
    segment: SegmentIndex<O>,
    chunks: Vec<GlobChunk<O>>,
}

impl<O> Default for PatternSet<O> {
    fn default() -> Self {
        PatternSet {
            literal: LiteralIndex::default(),
            segment: SegmentIndex::default(),
            chunks: Vec::new(),
        }
    }
}

impl<O: Copy + Ord> PatternSet<O> {
    /// Builds a set from `(owner, normalized pattern)` pairs.
    ///
    /// # Errors
    ///
    /// When globset refuses a set (a regex over its size limits), the indices (into `patterns`)
    /// of the patterns that fail on their own; empty when only a combination is too large.
    pub(crate) fn build(patterns: &[(O, &str)]) -> Result<Self, Vec<usize>> {
        let mut literal = LiteralIndex::default();
        let mut segment = SegmentIndex::default();
        // Per glob pattern: its index in `patterns`, its globs, its owner.
        let mut pending: Vec<(usize, Vec<Glob>, O)> = Vec::new();
        let mut bad = Vec::new();
        for (i, (owner, text)) in patterns.iter().enumerate() {
            if let Some(forms) = literal_forms(text) {
                for form in forms {
                    literal.add(*owner, form);
                }
                continue;
            }
            if let Some(globs) = segment_globs(text) {
                for glob in globs {
                    segment.add(*owner, glob);
                }
                continue;
            }
            match globs_of(text) {
                Ok(globs) => pending.push((i, globs, *owner)),
                Err(_) => bad.push(i),
            }
        }
        if !bad.is_empty() {
            return Err(bad);
        }
        let mut chunks = Vec::new();
        let mut start = 0;
        while start < pending.len() {
            let mut end = start;
            let mut size = 0;
            while let Some((_, globs, _)) = pending.get(end) {
                let more: usize = globs.iter().map(|g| g.regex().len()).sum();
                if end > start && size + more > MAX_REGEX_BYTES_PER_SET {
                    break;
                }
                size += more;
                end += 1;
            }
            let part = pending.get(start..end).unwrap_or_default();
            let globs: Vec<&Glob> = part.iter().flat_map(|(_, g, _)| g).collect();
            let owners = part
                .iter()
                .flat_map(|(_, g, owner)| std::iter::repeat_n(*owner, g.len()))
                .collect();
            match GlobSet::new(globs) {
                Ok(set) => chunks.push(GlobChunk { set, owners }),
                Err(_) => bad.extend(
                    part.iter()
                        .filter(|(_, g, _)| GlobSet::new(g).is_err())
                        .map(|(i, _, _)| *i),
                ),
            }
            start = end;
        }
        if bad.is_empty() {
            Ok(PatternSet {
                literal,
                segment,
                chunks,
            })
        } else {
            Err(bad)
        }
    }

    /// Replaces `owners_out` with the owners of every matching pattern, sorted, duplicates
    /// removed. `scratch` is reused between calls to avoid allocating.
    pub(crate) fn matching_owners(
        &self,
        path: &str,
        scratch: &mut Vec<usize>,
        owners_out: &mut Vec<O>,
    ) {
        owners_out.clear();
        if !self.literal.is_empty() {
            self.literal
                .for_each_match(path, |owners| owners_out.extend_from_slice(owners));
        }
        if !self.segment.is_empty() {
            self.segment
                .for_each_match(path, |owner| owners_out.push(owner));
        }
        if !self.chunks.is_empty() {
            let candidate = Candidate::from_bytes(path);
            for chunk in &self.chunks {
                chunk.set.matches_candidate_into(&candidate, scratch);
                owners_out.extend(scratch.iter().filter_map(|&g| chunk.owners.get(g).copied()));
            }
        }
        if owners_out.len() > 1 {
            owners_out.sort_unstable();
            owners_out.dedup();
        }
    }

    /// The smallest owner among the matching patterns.
    pub(crate) fn first_owner(&self, path: &str, scratch: &mut Vec<usize>) -> Option<O> {
        let mut first: Option<O> = None;
        let mut keep = |o: O| first = Some(first.map_or(o, |f| f.min(o)));
        if !self.literal.is_empty() {
            self.literal
                .for_each_match(path, |owners| owners.iter().for_each(|&o| keep(o)));
        }
        if !self.segment.is_empty() {
            self.segment.for_each_match(path, &mut keep);
        }
        if !self.chunks.is_empty() {
            let candidate = Candidate::from_bytes(path);
            for chunk in &self.chunks {
                if chunk.set.is_match_candidate(&candidate) {
                    chunk.set.matches_candidate_into(&candidate, scratch);
                    scratch
                        .iter()
                        .filter_map(|&g| chunk.owners.get(g).copied())
                        .for_each(&mut keep);
                }
            }
        }
        first
    }
}

/// The verdicts on a normalized `path` of a pattern, as a config loads it (case-sensitive):
/// `(ours, globset's)`, each `None` when that side rejects the pattern; `None` when the pattern
/// fails SPEC 3's checks before any glob is built. For the differential fuzz target (`fuzz/`,
/// built with `--cfg fuzzing` by cargo-fuzz only).
#[cfg(fuzzing)]
pub fn glob_verdicts(pattern: &str, path: &str) -> Option<(Option<bool>, Option<bool>)> {
    let normalized = check(pattern, true).ok()?;
    let ours = PatternSet::build(&[(0, &normalized)]).ok().map(|set| {
        let mut owners = Vec::new();
        set.matching_owners(path, &mut Vec::new(), &mut owners);
        !owners.is_empty()
    });
    let reference = globs_of(&normalized)
        .and_then(|globs| GlobSet::new(&globs))
        .ok()
        .map(|set| set.is_match_candidate(&Candidate::from_bytes(path)));
    Some((ours, reference))
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
            if let Some(base) = text.strip_suffix("/**") {
                if !base.is_empty() && is_literal(base) {
                    index.prefix.entry(base).or_default().push(id);
                }
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

    fn set(patterns: &[&str]) -> PatternSet<u32> {
        let owned: Vec<(u32, &str)> = patterns
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u32, *p))
            .collect();
        PatternSet::build(&owned).unwrap()
    }

    fn owners(s: &PatternSet<u32>, path: &str) -> Vec<u32> {
        let mut out = Vec::new();
        s.matching_owners(path, &mut Vec::new(), &mut out);
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
        assert_eq!(code, DiagnosticCode::PatternTrailingSlash);
        assert!(
            msg.contains("\"/products\"") && msg.contains("/products/**"),
            "{msg}"
        );
        assert_eq!(
            c("products/**").unwrap_err().0,
            DiagnosticCode::PatternNotAbsolute
        );
        assert_eq!(c("").unwrap_err().0, DiagnosticCode::PatternNotAbsolute);
        let (code, msg) = c("/a/{b").unwrap_err();
        assert_eq!(code, DiagnosticCode::PatternSyntax);
        assert!(msg.contains("unclosed alternate"), "{msg}");
        assert_eq!(c("/a/[").unwrap_err().0, DiagnosticCode::PatternSyntax);
        assert_eq!(c(&format!("/{}", "a".repeat(511))).map(|_| ()), Ok(()));
        assert_eq!(
            c(&format!("/{}", "a".repeat(512))).unwrap_err().0,
            DiagnosticCode::PatternTooLong
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
    fn literal_index_agrees_with_globset() {
        let patterns = [
            "/",
            "/a",
            "/a/**",
            "/a/b",
            "/a/b/**",
            "/{a,b}/**",
            "/x/{a,b}/c",
            "/{a,b}{c,d}",
            "/**",
            "**",
            "/a.b",
            "/a-b/**",
            "/{a,}",
            "/é/**",
        ];
        let paths = [
            "/", "/a", "/a/b", "/a/b/c", "/ab", "/b", "/b/x", "/x/a/c", "/x/b/c", "/x/c/c", "/ac",
            "/bd", "/a.b", "/a-b", "/a-b/c", "/é", "/é/x", "/éx",
        ];
        for pattern in patterns
            .iter()
            .chain(&["/a*", "/a/*/**", "**/a", "/a/[b]/**", "/a\\*"])
        {
            assert_eq!(
                has_literal_forms(pattern),
                literal_forms(pattern).is_some(),
                "{pattern}"
            );
        }
        for pattern in patterns {
            let ours = PatternSet::build(&[(0, pattern)]);
            let reference = globs_of(pattern).and_then(|g| GlobSet::new(&g));
            match (ours, reference) {
                (Ok(ours), Ok(reference)) => {
                    for path in paths {
                        let mut out = Vec::new();
                        ours.matching_owners(path, &mut Vec::new(), &mut out);
                        let want = reference.is_match_candidate(&Candidate::from_bytes(path));
                        assert_eq!(!out.is_empty(), want, "{pattern} vs {path}");
                        assert_eq!(ours.first_owner(path, &mut Vec::new()).is_some(), want);
                    }
                }
                (ours, reference) => assert_eq!(ours.is_ok(), reference.is_ok(), "{pattern}"),
            }
        }
        assert_eq!(literal_forms("/{a,b}/**").map(|f| f.len()), Some(2));
        assert_eq!(literal_forms("/*/x"), None);
        assert_eq!(literal_forms("**/x"), None);
    }

    /// A small deterministic generator (xorshift) for the differential test.
    struct Rng(u64);

    impl Rng {
        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            from[(self.0 % from.len() as u64) as usize]
        }
    }

    /// Our matchers (literal index, segment globs, globset fallback) against globset itself on
    /// generated patterns and paths: the same verdict on every pair, and every pattern that our
    /// matchers take without globset is one that globset accepts.
    #[test]
    fn segment_globs_agree_with_globset() {
        let pieces = [
            "a",
            "b",
            "ab",
            "é",
            "*",
            "?",
            "a*",
            "*a",
            "a*b",
            "?b",
            "[ab]",
            "[a-c]",
            "[!a]",
            "[]a]",
            "[-a]",
            "[a-]",
            "[--a]",
            "**",
            "a**",
            "[é]",
            "\\*",
            "{a,b}",
            "{a,b*}",
            "{ab,é}",
            "x,y",
            "]",
            "[a",
            "*{a,b}",
            "{a,b}*",
            "{a,}",
            "}",
            "{a/b,c}",
            "[^b]",
            "{*a,b?}",
            "{a*/b,**}",
            "{a,/*}",
            "[!]a]",
            "[!-]",
            "x[!b]?",
            "[a-é]",
            "[é-ü]",
        ];
        let starts = ["/", "/", "/", "**/", "**"];
        let path_segments = [
            "a", "b", "ab", "ba", "aab", "é", "x", "-", "]", "a,b", "*", "bb",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut covered, mut compared) = (0, 0);
        let mut all = Vec::new();
        for _ in 0..10_000 {
            let mut pattern = rng.pick(&starts).to_owned();
            let segments = 1 + rng.pick(&["0", "1", "2", "3"]).parse::<usize>().unwrap();
            for k in 0..segments {
                if k > 0 {
                    pattern.push('/');
                }
                let count = 1 + rng.pick(&["0", "0", "1", "2"]).parse::<usize>().unwrap();
                for _ in 0..count {
                    pattern.push_str(rng.pick(&pieces));
                }
            }
            let normalized = match check(&pattern, true) {
                Ok(normalized) => normalized,
                Err(e) => {
                    // Refused as a glob only when globset refuses it.
                    let text = normalize_pattern_text(&pattern, true);
                    if e.code == DiagnosticCode::PatternSyntax {
                        assert!(globs_of(&text).is_err(), "{text}");
                    }
                    continue;
                }
            };
            assert!(globs_of(&normalized).is_ok(), "{normalized} passed check");
            let reference = globs_of(&normalized).and_then(|g| GlobSet::new(&g));
            let ours = PatternSet::build(&[(0, &normalized)]);
            if segment_globs(&normalized).is_some() {
                covered += 1;
                assert!(reference.is_ok(), "{normalized} is not a globset glob");
            }
            let (Ok(ours), Ok(reference)) = (ours, reference) else {
                continue;
            };
            if all.len() < 2000 {
                all.push((normalized.clone(), reference.clone()));
            }
            for _ in 0..40 {
                let mut path = String::new();
                let depth = rng
                    .pick(&["0", "1", "1", "2", "3", "4"])
                    .parse::<usize>()
                    .unwrap();
                for _ in 0..depth {
                    path.push('/');
                    path.push_str(rng.pick(&path_segments));
                }
                if path.is_empty() {
                    path.push('/');
                }
                let want = reference.is_match_candidate(&Candidate::from_bytes(&path));
                assert_eq!(
                    !owners(&ours, &path).is_empty(),
                    want,
                    "{normalized} vs {path}"
                );
                assert_eq!(ours.first_owner(&path, &mut Vec::new()).is_some(), want);
                compared += 1;
            }
        }
        assert!(covered > 1000 && compared > 200_000, "{covered} {compared}");
        // All of them in one set: each path gets exactly the owners whose pattern matches it.
        let texts: Vec<(u32, &str)> = (0..).zip(all.iter().map(|(p, _)| p.as_str())).collect();
        let set = PatternSet::build(&texts).unwrap();
        for _ in 0..2000 {
            let mut path = String::new();
            for _ in 0..rng
                .pick(&["1", "1", "2", "3", "4"])
                .parse::<usize>()
                .unwrap()
            {
                path.push('/');
                path.push_str(rng.pick(&path_segments));
            }
            let want: Vec<u32> = (0..)
                .zip(&all)
                .filter(|(_, (_, r))| r.is_match_candidate(&Candidate::from_bytes(&path)))
                .map(|(i, _)| i)
                .collect();
            assert_eq!(owners(&set, &path), want, "{path}");
            assert_eq!(
                set.first_owner(&path, &mut Vec::new()),
                want.first().copied()
            );
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

    #[test]
    fn owners_are_sorted_and_deduplicated() {
        let s = PatternSet::build(&[(7, "/a/**"), (3, "/a"), (7, "/**")]).unwrap();
        assert_eq!(owners(&s, "/a"), vec![3, 7]);
        assert_eq!(s.first_owner("/a", &mut Vec::new()), Some(3));
    }
}
