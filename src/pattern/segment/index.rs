//! The index of segment globs: by the literal text a matching path must start or end with, so that
//! a path is tried only against the globs whose literal parts it has.

use rustc_hash::FxHashMap;

use super::{byte_mask, path_segments, SegmentGlob};
use crate::pattern::segment_prefixes;

/// Segment globs with their owners, indexed so that a path visits only the globs whose literal
/// parts it contains, however many share a literal start:
///
/// - by their whole literal prefix (`/collections/c1` of `/collections/c1/*`): a path looks up its
///   own prefixes at segment boundaries, so 1,000 rules under `/collections/` cost a path as
///   much as ten;
/// - else by the literal start of their first segment (`c1-` of `/c1-*/x`);
/// - else by their whole literal suffix (`/reviews` of `/*/reviews`, `/a/b` of `**/a/b`);
/// - else tried on every path, each ruled out first by its bytes (see [`byte_mask`]).
#[derive(Clone, Debug)]
pub(crate) struct SegmentIndex<O> {
    globs: Vec<(SegmentGlob, O)>,
    /// Globs by their literal prefix `/s1/.../sk`.
    by_prefix: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// The most segments of a key of `by_prefix`: deeper prefixes need no lookup.
    prefix_segments: usize,
    /// Globs whose first segment is a wildcard with a literal start, by that start.
    by_first_start: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// The longest key of `by_first_start`, in bytes.
    longest_first_start: usize,
    /// Globs by their literal suffix `/t1/.../tm`.
    by_suffix: FxHashMap<Box<[u8]>, Vec<u32>>,
    /// The most segments of a key of `by_suffix`.
    suffix_segments: usize,
    /// Every other glob: tried on every path.
    unindexed: Vec<u32>,
}

impl<O> Default for SegmentIndex<O> {
    fn default() -> Self {
        SegmentIndex {
            globs: Vec::new(),
            by_prefix: FxHashMap::default(),
            prefix_segments: 0,
            by_first_start: FxHashMap::default(),
            longest_first_start: 0,
            by_suffix: FxHashMap::default(),
            suffix_segments: 0,
            unindexed: Vec::new(),
        }
    }
}

impl<O: Copy> SegmentIndex<O> {
    pub(crate) fn add(&mut self, owner: O, glob: SegmentGlob) {
        let Ok(id) = u32::try_from(self.globs.len()) else {
            return;
        };
        if let Some((prefix, segments)) = glob.literal_prefix() {
            self.prefix_segments = self.prefix_segments.max(segments);
            self.by_prefix.entry(prefix.into()).or_default().push(id);
        } else if let Some(start) = glob.first_prefix() {
            self.longest_first_start = self.longest_first_start.max(start.len());
            self.by_first_start
                .entry(start.into())
                .or_default()
                .push(id);
        } else if let Some((suffix, segments)) = glob.literal_suffix() {
            self.suffix_segments = self.suffix_segments.max(segments);
            self.by_suffix.entry(suffix.into()).or_default().push(id);
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
        let bytes = path.as_bytes();
        let segments = path_segments(path);
        let mask = byte_mask(bytes);
        let mut try_each = |ids: &[u32]| {
            for id in ids {
                if let Some((glob, owner)) = self.globs.get(*id as usize) {
                    if glob.is_match(&segments, mask) {
                        found(*owner);
                    }
                }
            }
        };
        // The path's prefixes `/s1`, `/s1/s2`, ... (segment boundaries are its `/` after the first
        // byte, and its end), up to the deepest key.
        for prefix in segment_prefixes(bytes, self.prefix_segments) {
            if let Some(ids) = self.by_prefix.get(prefix) {
                try_each(ids);
            }
        }
        if let Some(first) = segments.get(1).filter(|_| self.longest_first_start > 0) {
            for len in 1..=first.len().min(self.longest_first_start) {
                if let Some(ids) = first.get(..len).and_then(|p| self.by_first_start.get(p)) {
                    try_each(ids);
                }
            }
        }
        // The path's suffixes `/tm`, `/t(m-1)/tm`, ..., up to the deepest key.
        if self.suffix_segments > 0 {
            for start in memchr::memrchr_iter(b'/', bytes).take(self.suffix_segments) {
                if let Some(ids) = bytes.get(start..).and_then(|s| self.by_suffix.get(s)) {
                    try_each(ids);
                }
            }
        }
        try_each(&self.unindexed);
    }
}
