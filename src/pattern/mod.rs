//! Page patterns (docs/contract/patterns.md): checking, normalization, and compilation into shared indexes.
//!
//! Every pattern of a kind (all quiet zones; all rules' `pages` and `exclude_pages`) goes into one
//! [`PatternSet`], built once, so that matching a path costs about the same however many rules
//! there are. Each pattern remembers its owner (a quiet zone, or a rule's list and pattern index).
//! Parsing is apart from matching, as in globset: [`check`] validates a pattern as written (globset
//! is the parser of record), and a set compiles each pattern with the first of three matchers
//! that covers it:
//!
//! 1. literal and literal-prefix patterns (`/search`, `/products/**`): the literal index of hash
//!    lookups of the path and its ancestors (`literal.rs`, with brace expansion);
//! 2. segment globs (`/products/*/reviews`, `**/p-[0-9]?`, `/a[!x]b`): our own matcher and its
//!    index (`segment/`: by literal prefix, by a literal segment at a fixed position such as `c1`
//!    of `/shop/*/c1/*-sale`, by literal suffix);
//! 3. the rest (escapes, classes listing `/`, alternates holding `**`, classes or groups):
//!    position automata compiled from globset's own translation of each glob (`automaton.rs`),
//!    tried on every path after a literal-prefix check. No regex engine is compiled or linked.
//!
//! The tests (`tests.rs`) check every matcher against globset.

mod automaton;
mod check;
mod literal;
mod segment;
#[cfg(test)]
mod tests;

pub(crate) use check::check;
#[cfg(fuzzing)]
use globset::{Candidate, GlobSet};

use automaton::{AutomatonIndex, GlobAutomaton};
use check::globs_of;
use literal::{LiteralIndex, literal_forms};
use segment::{SegmentIndex, segment_globs};

/// Many patterns compiled once; each match reports its owner. Literal and literal-prefix
/// patterns (the common case: `/search`, `/products/**`, `/collections/{sale,clearance}/**`) go
/// into the literal index, segment globs (`/products/*/reviews`) into the segment index, every
/// other pattern into automata (usually none).
#[derive(Clone, Debug)]
pub(crate) struct PatternSet<O> {
    literal: LiteralIndex<O>,
    segment: SegmentIndex<O>,
    automata: AutomatonIndex<O>,
}

impl<O> Default for PatternSet<O> {
    fn default() -> Self {
        PatternSet {
            literal: LiteralIndex::default(),
            segment: SegmentIndex::default(),
            automata: AutomatonIndex::default(),
        }
    }
}

impl<O: Copy + Ord> PatternSet<O> {
    /// Builds a set from `(owner, normalized pattern)` pairs.
    ///
    /// # Errors
    ///
    /// - The indices (into `patterns`) of the patterns that globset does not parse (which
    ///   [`check`] refuses first) or whose translation this crate cannot read (never seen: the tests
    ///   and a fuzz target look for one).
    pub(crate) fn build(patterns: &[(O, &str)]) -> Result<Self, Vec<usize>> {
        let mut set = PatternSet::default();
        let mut bad = Vec::new();
        // The segment index chooses each glob's key knowing every glob of the set.
        let mut segment = Vec::new();
        for (i, (owner, text)) in patterns.iter().enumerate() {
            if let Some(forms) = literal_forms(text) {
                for form in forms {
                    set.literal.add(*owner, form);
                }
            } else if let Some(globs) = segment_globs(text) {
                segment.extend(globs.into_iter().map(|glob| (glob, *owner)));
            } else {
                let automata = globs_of(text).ok().and_then(|globs| {
                    globs
                        .iter()
                        .map(|g| GlobAutomaton::from_globset_regex(g.regex()))
                        .collect::<Option<Vec<_>>>()
                });
                match automata {
                    Some(automata) => automata
                        .into_iter()
                        .for_each(|automaton| set.automata.add(*owner, automaton)),
                    None => bad.push(i),
                }
            }
        }
        set.segment = SegmentIndex::build(segment);
        if bad.is_empty() { Ok(set) } else { Err(bad) }
    }

    /// Replaces `owners_out` with the owners of every matching pattern, sorted, duplicates
    /// removed.
    pub(crate) fn matching_owners(&self, path: &str, owners_out: &mut Vec<O>) {
        owners_out.clear();
        if !self.literal.is_empty() {
            self.literal
                .for_each_match(path, |owners| owners_out.extend_from_slice(owners));
        }
        if !self.segment.is_empty() {
            self.segment
                .for_each_match(path, |owner| owners_out.push(owner));
        }
        self.automata
            .for_each_match(path, |owner| owners_out.push(owner));
        if owners_out.len() > 1 {
            owners_out.sort_unstable();
            owners_out.dedup();
        }
    }

    /// The smallest owner among the matching patterns (tests: an early-exit search, compared with
    /// `matching_owners`).
    #[cfg(test)]
    pub(crate) fn first_owner(&self, path: &str) -> Option<O> {
        let mut first: Option<O> = None;
        let mut keep = |o: O| first = Some(first.map_or(o, |f| f.min(o)));
        if !self.literal.is_empty() {
            self.literal
                .for_each_match(path, |owners| owners.iter().for_each(|&o| keep(o)));
        }
        if !self.segment.is_empty() {
            self.segment.for_each_match(path, &mut keep);
        }
        self.automata.for_each_match(path, &mut keep);
        first
    }
}

/// The verdicts on a normalized `path` of a pattern, as a config loads it (case-sensitive):
/// `(ours, globset's)`, each `None` when that side rejects the pattern; `None` when the pattern
/// fails docs/contract/patterns.md's checks before any glob is built. For the differential fuzz target (`fuzz/`,
/// built with `--cfg fuzzing` by cargo-fuzz only).
#[cfg(fuzzing)]
pub fn glob_verdicts(pattern: &str, path: &str) -> Option<(Option<bool>, Option<bool>)> {
    let normalized = check(pattern, true).ok()?;
    let ours = PatternSet::build(&[(0, &normalized)]).ok().map(|set| {
        let mut owners = Vec::new();
        set.matching_owners(path, &mut owners);
        !owners.is_empty()
    });
    let reference = globs_of(&normalized)
        .and_then(|globs| GlobSet::new(&globs))
        .ok()
        .map(|set| set.is_match_candidate(&Candidate::from_bytes(path)));
    Some((ours, reference))
}

/// The prefixes of a normalized path at segment boundaries, shortest first: `/a`, `/a/b`, `/a/b/c`
/// for `/a/b/c`, at most `max` of them (the index keys of globs with a literal start).
pub(crate) fn segment_prefixes(path: &[u8], max: usize) -> impl Iterator<Item = &[u8]> {
    memchr::memchr_iter(b'/', path)
        .skip(1)
        .chain(std::iter::once(path.len()))
        .take(max)
        .filter_map(move |end| path.get(..end))
}

/// True for the patterns that match every normalized path.
pub(crate) fn matches_every_path(normalized: &str) -> bool {
    matches!(normalized, "/**" | "**" | "**/**")
}

/// True when a pattern has no glob syntax (it matches exactly itself).
pub(crate) fn is_literal(normalized: &str) -> bool {
    !normalized.contains(['*', '?', '[', ']', '{', '}', '\\'])
}
