//! The fallback for the patterns that neither the literal index nor the segment matcher covers:
//! globset regex sets, built with `GlobSet::new` (which returns errors; `compile_matcher` can
//! panic).

use globset::{Candidate, Glob, GlobSet};

use super::check::globs_of;

/// Most regex source (in bytes, as globset writes it) in one [`GlobSet`]: larger sets are split,
/// so that no config within SPEC 2's limits exceeds the regex size limits as a whole.
const MAX_REGEX_BYTES_PER_SET: usize = 64 * 1024;

/// Globs compiled into one [`GlobSet`], with each glob's owner.
#[derive(Clone, Debug)]
struct GlobChunk<O> {
    set: GlobSet,
    owners: Vec<O>,
}

/// Patterns compiled into globset regex sets, in chunks of bounded regex size.
#[derive(Clone, Debug)]
pub(super) struct RegexSets<O> {
    chunks: Vec<GlobChunk<O>>,
    /// Per pattern before `build`: its index in the caller's list, its globs, its owner.
    pending: Vec<(usize, Vec<Glob>, O)>,
}

impl<O> Default for RegexSets<O> {
    fn default() -> Self {
        RegexSets {
            chunks: Vec::new(),
            pending: Vec::new(),
        }
    }
}

impl<O: Copy> RegexSets<O> {
    /// Adds the normalized pattern `text` (the `index`-th of the caller's list) owned by `owner`.
    ///
    /// # Errors
    ///
    /// When globset does not parse it.
    pub(super) fn add(&mut self, index: usize, owner: O, text: &str) -> Result<(), ()> {
        let globs = globs_of(text).map_err(|_| ())?;
        self.pending.push((index, globs, owner));
        Ok(())
    }

    /// Compiles the added patterns into sets.
    ///
    /// # Errors
    ///
    /// When globset refuses a set (a regex over its size limits), the indices of the patterns
    /// that fail on their own; empty when only a combination is too large.
    pub(super) fn build(&mut self) -> Result<(), Vec<usize>> {
        let pending = std::mem::take(&mut self.pending);
        let mut bad = Vec::new();
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
                Ok(set) => self.chunks.push(GlobChunk { set, owners }),
                Err(_) => bad.extend(
                    part.iter()
                        .filter(|(_, g, _)| GlobSet::new(g).is_err())
                        .map(|(i, _, _)| *i),
                ),
            }
            start = end;
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Calls `found` with the owner of every glob matching `path`; `scratch` is reused between
    /// calls. With `only_if_any`, a chunk's matches are listed only when it matches at all (its
    /// cheaper yes-or-no test first).
    pub(super) fn for_each_match(
        &self,
        path: &str,
        scratch: &mut Vec<usize>,
        only_if_any: bool,
        mut found: impl FnMut(O),
    ) {
        let candidate = Candidate::from_bytes(path);
        for chunk in &self.chunks {
            if only_if_any && !chunk.set.is_match_candidate(&candidate) {
                continue;
            }
            chunk.set.matches_candidate_into(&candidate, scratch);
            scratch
                .iter()
                .filter_map(|&g| chunk.owners.get(g).copied())
                .for_each(&mut found);
        }
    }
}
