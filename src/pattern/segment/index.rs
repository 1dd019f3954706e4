//! The index of segment globs: by the literal text a matching path must have at a known place (a
//! start, a segment at a fixed position, an end), so that a path is tried only against the globs
//! whose literal parts it has.

use rustc_hash::FxHashMap;

use super::{SegmentGlob, byte_mask, path_segments};
use crate::pattern::segment_prefixes;

/// Glob ids (indices into [`SegmentIndex`]'s globs) by a literal key.
type ByKey = FxHashMap<Box<[u8]>, Vec<u32>>;

/// Segment globs with their owners, indexed so that a path visits only the globs whose literal
/// parts it contains, however many share a literal start:
///
/// - by their whole literal prefix (`/collections/c1` of `/collections/c1/*`): a path looks up its
///   own prefixes at segment boundaries, so 1,000 rules under `/collections/` cost a path as
///   much as ten;
/// - else by the literal start of their first segment (`c1-` of `/c1-*/x`);
/// - else by their whole literal suffix (`/reviews` of `/*/reviews`, `/a/b` of `**/a/b`);
/// - else tried on every path, each ruled out first by its bytes (see [`byte_mask`]);
///
/// and, over all of these, by a literal segment at a fixed position after a wildcard (`c1` at
/// position 2 of `/shop/*/c1/*-sale`, `b7` of `/brands/*/b7/**`; a path looks up its own segment
/// at each such position) when that key is shared by no more globs than the key above: so 1,000
/// rules `/shop/*/c{i}/*-sale` cost a path as much as ten, where their common prefix `/shop`
/// would try all of them. Of a glob's fixed literal segments, the one shared by the fewest globs
/// of the set is chosen.
#[derive(Clone, Debug)]
pub(crate) struct SegmentIndex<O> {
    globs: Vec<(SegmentGlob, O)>,
    /// Globs by their literal prefix `/s1/.../sk`.
    by_prefix: ByKey,
    /// The most segments of a key of `by_prefix`: deeper prefixes need no lookup.
    prefix_segments: usize,
    /// Globs whose first segment is a wildcard with a literal start, by that start.
    by_first_start: ByKey,
    /// The longest key of `by_first_start`, in bytes.
    longest_first_start: usize,
    /// Globs by a literal segment at a fixed position `k` (the path's segment `k` after the
    /// leading `/`): `(k, globs by that segment's text)`, positions in increasing order, each
    /// with at least one glob.
    by_segment: Vec<(usize, ByKey)>,
    /// Globs by their literal suffix `/t1/.../tm`.
    by_suffix: ByKey,
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
            by_segment: Vec::new(),
            by_suffix: FxHashMap::default(),
            suffix_segments: 0,
            unindexed: Vec::new(),
        }
    }
}

/// Where a glob goes without the fixed-position index, by the rules' order of preference.
enum Key {
    Prefix(Vec<u8>, usize),
    FirstStart(Vec<u8>),
    Suffix(Vec<u8>, usize),
    Unindexed,
}

impl Key {
    fn of(glob: &SegmentGlob) -> Key {
        if let Some((prefix, segments)) = glob.literal_prefix() {
            Key::Prefix(prefix, segments)
        } else if let Some(start) = glob.first_prefix() {
            Key::FirstStart(start)
        } else if let Some((suffix, segments)) = glob.literal_suffix() {
            Key::Suffix(suffix, segments)
        } else {
            Key::Unindexed
        }
    }

    /// The number of literal segments that every path the key admits has at the start: the
    /// fixed literals of a glob beyond these follow a wildcard.
    fn leading_literals(&self) -> usize {
        match self {
            Key::Prefix(_, segments) => *segments,
            _ => 0,
        }
    }

    /// The key as one byte string (see [`key_code`]); `None` for [`Key::Unindexed`].
    fn code(&self) -> Option<Box<[u8]>> {
        match self {
            Key::Prefix(text, _) => Some(key_code(0, 0, text)),
            Key::FirstStart(text) => Some(key_code(1, 0, text)),
            Key::Suffix(text, _) => Some(key_code(2, 0, text)),
            Key::Unindexed => None,
        }
    }
}

/// A key of any index as one byte string, `kind`, `position` and `text`, so that how many globs
/// share each key is counted in one map of the type the indexes already use (one hash map type
/// less in the WASM package).
fn key_code(kind: u8, position: usize, text: &[u8]) -> Box<[u8]> {
    let mut code = Vec::with_capacity(text.len() + 5);
    code.push(kind);
    code.extend_from_slice(&u32::try_from(position).unwrap_or(u32::MAX).to_le_bytes());
    code.extend_from_slice(text);
    code.into()
}

/// The [`key_code`] of a literal segment `text` at fixed position `position`.
fn fixed_code(position: usize, text: &[u8]) -> Box<[u8]> {
    key_code(3, position, text)
}

impl<O: Copy> SegmentIndex<O> {
    /// Indexes `globs` (with their owners): each goes into the one index that admits the fewest
    /// other globs (see [`SegmentIndex`]), which needs the whole set at once.
    pub(crate) fn build(globs: Vec<(SegmentGlob, O)>) -> Self {
        let mut index = SegmentIndex::default();
        let keys: Vec<Key> = globs.iter().map(|(glob, _)| Key::of(glob)).collect();
        // Each glob's fixed literal segments after a wildcard.
        let fixed: Vec<Vec<(usize, &[u8])>> = globs
            .iter()
            .zip(&keys)
            .map(|((glob, _), key)| {
                glob.fixed_literals()
                    .filter(|(k, _)| *k >= key.leading_literals())
                    .collect()
            })
            .collect();
        // The globs that have each key, fixed-position keys included.
        let mut sharing = ByKey::default();
        for (id, (key, fixed)) in (0u32..).zip(keys.iter().zip(&fixed)) {
            let codes = key.code().into_iter();
            for code in codes.chain(fixed.iter().map(|&(k, text)| fixed_code(k, text))) {
                sharing.entry(code).or_default().push(id);
            }
        }
        let shared = |code: &[u8]| sharing.get(code).map_or(usize::MAX, Vec::len);
        for (id, ((key, fixed), (glob, owner))) in (0u32..).zip(keys.iter().zip(&fixed).zip(&globs))
        {
            let best = fixed
                .iter()
                .map(|&(k, text)| (shared(&fixed_code(k, text)), k, text))
                .min_by_key(|(sharing, _, _)| *sharing);
            let key_shared = key.code().map_or(usize::MAX, |code| shared(&code));
            match best {
                Some((sharing, k, text)) if sharing <= key_shared => {
                    index.add_by_segment(id, k, text);
                }
                _ => index.add_by_key(id, key),
            }
            index.globs.push((glob.clone(), *owner));
        }
        index
    }

    /// Files glob `id` under its literal segment `text` at fixed position `k`.
    fn add_by_segment(&mut self, id: u32, k: usize, text: &[u8]) {
        let at = match self
            .by_segment
            .binary_search_by_key(&k, |(position, _)| *position)
        {
            Ok(at) => at,
            Err(at) => {
                self.by_segment.insert(at, (k, ByKey::default()));
                at
            }
        };
        if let Some((_, by_text)) = self.by_segment.get_mut(at) {
            by_text.entry(text.into()).or_default().push(id);
        }
    }

    /// Files glob `id` under `key`.
    fn add_by_key(&mut self, id: u32, key: &Key) {
        match key {
            Key::Prefix(prefix, segments) => {
                self.prefix_segments = self.prefix_segments.max(*segments);
                self.by_prefix
                    .entry(prefix.as_slice().into())
                    .or_default()
                    .push(id);
            }
            Key::FirstStart(start) => {
                self.longest_first_start = self.longest_first_start.max(start.len());
                self.by_first_start
                    .entry(start.as_slice().into())
                    .or_default()
                    .push(id);
            }
            Key::Suffix(suffix, segments) => {
                self.suffix_segments = self.suffix_segments.max(*segments);
                self.by_suffix
                    .entry(suffix.as_slice().into())
                    .or_default()
                    .push(id);
            }
            Key::Unindexed => self.unindexed.push(id),
        }
    }

    /// How many globs each index holds: by prefix, by first-segment start, by fixed-position
    /// segment, by suffix, unindexed (tests: that generated sets reach each of them).
    #[cfg(test)]
    pub(crate) fn index_sizes(&self) -> [usize; 5] {
        let count = |m: &ByKey| m.values().map(Vec::len).sum::<usize>();
        [
            count(&self.by_prefix),
            count(&self.by_first_start),
            self.by_segment.iter().map(|(_, m)| count(m)).sum(),
            count(&self.by_suffix),
            self.unindexed.len(),
        ]
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
                if let Some((glob, owner)) = self.globs.get(*id as usize)
                    && glob.is_match(&segments, mask)
                {
                    found(*owner);
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
        // The path's segment at each position that has globs (segment `k` after the leading
        // `/` is `segments[k + 1]`).
        for (k, by_text) in &self.by_segment {
            if let Some(ids) = segments.get(k + 1).and_then(|s| by_text.get(*s)) {
                try_each(ids);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn index(patterns: &[String]) -> SegmentIndex<u32> {
        let globs = (0..)
            .zip(patterns)
            .flat_map(|(owner, p)| {
                let globs = super::super::segment_globs(p).unwrap_or_else(|| panic!("{p}"));
                globs.into_iter().map(move |g| (g, owner))
            })
            .collect();
        SegmentIndex::build(globs)
    }

    /// How many globs a path is tried against, and the owners found.
    fn tried(index: &SegmentIndex<u32>, path: &str) -> (usize, Vec<u32>) {
        let segments = path_segments(path);
        let mut ids: Vec<u32> = segment_prefixes(path.as_bytes(), index.prefix_segments)
            .filter_map(|p| index.by_prefix.get(p))
            .chain(
                index
                    .by_segment
                    .iter()
                    .filter_map(|(k, m)| segments.get(k + 1).and_then(|s| m.get(*s))),
            )
            .flatten()
            .copied()
            .collect();
        ids.extend(&index.unindexed);
        let mut owners = Vec::new();
        index.for_each_match(path, |o| owners.push(o));
        (ids.len(), owners)
    }

    /// Globs whose distinguishing literal follows a wildcard are found by that literal: a path
    /// tries the globs of one pattern of 1,000 (`/brands/*/b7/**` is two: with and without the
    /// last segments), where the shared prefix `/shop` would try all of them.
    #[test]
    fn a_fixed_literal_after_a_wildcard_is_the_key() {
        for shape in ["/shop/*/c{i}/*-sale", "/brands/*/b{i}/**", "/*/x/p{i}"] {
            let patterns: Vec<String> = (0..1000)
                .map(|i| shape.replace("{i}", &i.to_string()))
                .collect();
            let index = index(&patterns);
            let path = shape
                .replace("{i}", "999")
                .replace("/**", "/a/b")
                .replace('*', "q");
            let per_pattern = usize::from(shape.ends_with("/**")) + 1;
            assert_eq!(
                tried(&index, &path),
                (per_pattern, vec![999]),
                "{shape}: {path}"
            );
            assert!(
                index.by_prefix.is_empty() && index.unindexed.is_empty(),
                "{shape}"
            );
        }
    }

    /// A shared fixed literal is no better than a distinct prefix: `/p{i}/*/reviews` stays under
    /// its prefix, and `/collections/c{i}/*` (no literal after a wildcard) too.
    #[test]
    fn a_distinct_prefix_stays_the_key() {
        for shape in ["/p{i}/*/reviews", "/collections/c{i}/*"] {
            let patterns: Vec<String> = (0..100)
                .map(|i| shape.replace("{i}", &i.to_string()))
                .collect();
            let index = index(&patterns);
            assert_eq!(index.by_prefix.len(), 100, "{shape}");
            assert!(index.by_segment.is_empty(), "{shape}");
            let path = shape.replace("{i}", "42").replace('*', "q");
            assert_eq!(tried(&index, &path), (1, vec![42]), "{shape}");
        }
    }
}
