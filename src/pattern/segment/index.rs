//! The index of segment globs: by the segment a matching path must have first or last, so that a
//! path is tried only against the globs that can match it.

use rustc_hash::FxHashMap;

use super::{byte_mask, path_segments, SegmentGlob};

/// Segment globs (see [`crate::glob`]) with their owners, indexed by the segment a matching path
/// must have first or last, so that a path is tried only against the globs that can match it:
/// `/c1/*/p2` is tried only on paths whose first segment is `c1`, `/c1-*/x` on those whose first
/// segment starts with `c1-`, `/*/reviews` on those whose last is `reviews`. The others are tried
/// on every path, each ruled out first by its bytes (see [`crate::glob::byte_mask`]).
#[derive(Clone, Debug)]
pub(crate) struct SegmentIndex<O> {
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
    pub(crate) fn add(&mut self, owner: O, glob: SegmentGlob) {
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

    pub(crate) fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// Calls `found` with the owner of every glob matching `path` (an owner may come more than
    /// once).
    pub(crate) fn for_each_match(&self, path: &str, mut found: impl FnMut(O)) {
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
