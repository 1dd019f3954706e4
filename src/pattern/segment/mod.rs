//! The segment glob matcher: a glob matcher of our own for the patterns that need no regex (docs/contract/patterns.md), segment by segment.
//!
//! Almost every real page pattern is a run of `/`-separated segments, each a literal, a wildcard
//! segment built from literals, `*`, `?` and classes (`[a-z0-9]`), or `**` (any number of
//! whole segments). For those, globset's meaning under docs/contract/patterns.md's options (`literal_separator`:
//! `*`, `?` and such classes never cross `/`) is exactly "match the path's segments in order",
//! which needs no regex: [`SegmentGlob::parse_into`] translates them and [`SegmentGlob::is_match`]
//! matches them with the linear two-level wildcard algorithm. Compiling costs microseconds where a
//! regex costs milliseconds, so a config filled to docs/contract/config.md's 1 MiB with such globs loads within
//! docs/contract/patterns.md's load-time checks' budget.
//!
//! A negated class (`[!x]`) can match `/` and so cross segments; a glob with a few of them becomes
//! a few segment globs (see [`SegmentGlob::parse_into`]). Everything else (`\` escapes, classes
//! listing `/`, alternates that cannot be expanded exactly) is left to globset:
//! [`SegmentGlob::parse_into`] returns `None` and the caller compiles a regex. globset stays the
//! reference: the tests of `pattern` and the `glob` fuzz target compare both on generated patterns
//! and paths, byte for byte (globset matches bytes: `?` is one byte, a literal `é` two, a class a
//! set of bytes).
//!
//! The translation of globset's `**` rules (`Parser::parse_star` in globset 0.4): `**/` at the
//! start and `/**/` in the middle are any number (zero or more) of segments; `/**` at the end is
//! one or more segments (globset's regex `/.*`; the prefix itself is matched by the separate
//! prefix glob of `pattern::globs_of`); consecutive `**` segments collapse into one, and a pattern
//! made only of `**/` and `**` segments matches every path.

mod index;
mod parse;

use smallvec::SmallVec;

pub(crate) use index::SegmentIndex;
pub(crate) use parse::{classes_are_valid, segment_globs};

/// One byte-level matcher inside a wildcard segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// This byte.
    Byte(u8),
    /// `?`: any one byte (never `/`: segments contain none).
    AnyByte,
    /// `[...]`: one byte of the set: the index of its 256-bit map in the glob's class table.
    Class(u16),
    /// `*`: any run of bytes within the segment, possibly empty.
    Star,
}

impl Token {
    fn matches(self, byte: u8, classes: &[[u64; 4]]) -> bool {
        match self {
            Token::Byte(b) => b == byte,
            Token::AnyByte => true,
            Token::Class(i) => classes
                .get(usize::from(i))
                .and_then(|map| map.get(usize::from(byte >> 6)))
                .is_some_and(|word| word & (1 << (byte & 63)) != 0),
            Token::Star => false,
        }
    }
}

/// One segment of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    /// A segment with no glob syntax: the path's segment must equal it.
    Literal(Box<[u8]>),
    /// A segment with `*`, `?` or classes.
    Wildcard(Box<[Token]>),
    /// `**`: any run of whole segments, at least this many (0 or 1).
    Segments { at_least: usize },
}

/// A glob compiled into segments; see the module docs for the forms it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SegmentGlob {
    /// Whether the glob starts with `/` (its items then match the path's segments after the
    /// leading empty one), rather than with `**/`.
    anchored: bool,
    items: Box<[Item]>,
    /// The byte sets of the classes of `items`, as 256-bit maps (`Token::Class` indexes it).
    classes: Box<[[u64; 4]]>,
    /// The [`byte_mask`] of the bytes every matching path contains (the glob's literal bytes).
    required_bytes: u64,
}

/// A 64-bit summary of which bytes a text contains: one bit per ASCII letter and digit, the other
/// bytes sharing the remaining 28 bits. A glob whose required bits are not all in a path's mask
/// cannot match it, which rules most globs out with one `and`.
pub(crate) fn byte_mask(text: &[u8]) -> u64 {
    text.iter().fold(0, |mask, &b| mask | 1 << byte_bit(b))
}

fn byte_bit(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => b - b'a',
        b'0'..=b'9' => 26 + (b - b'0'),
        _ => 36 + b % 28,
    }
}

/// The segments of a normalized path (docs/contract/urls.md), as globset's regexes see them: the path split on
/// `/`, starting with the empty segment before the leading `/`; the root `/` is two empty
/// segments. A glob starting with `/` matches from the second segment; one starting with `**/`
/// from the first (globset's `(?:/?|.*/)` lets `**/*/x` match `/x`, `*` taking the empty text
/// before the first `/`).
pub(crate) type PathSegments<'a> = SmallVec<[&'a [u8]; 16]>;

/// Splits a normalized path into [`PathSegments`].
pub(crate) fn path_segments(path: &str) -> PathSegments<'_> {
    path.as_bytes().split(|&b| b == b'/').collect()
}

impl SegmentGlob {
    /// The text every matching path starts with, `/s1/.../sk`, when the glob starts with `k >= 1`
    /// literal segments (not empty ones); with how many segments that is.
    pub(crate) fn literal_prefix(&self) -> Option<(Vec<u8>, usize)> {
        if !self.anchored {
            return None;
        }
        literal_run(self.items.iter())
    }

    /// The text every matching path ends with, `/t1/.../tm`, when the glob ends with `m >= 1`
    /// literal segments (not empty ones); with how many segments that is.
    pub(crate) fn literal_suffix(&self) -> Option<(Vec<u8>, usize)> {
        let (reversed, count) = literal_run(self.items.iter().rev())?;
        // Built last segment first: reverse the segments back into order.
        let segments: Vec<&[u8]> = reversed.split(|&b| b == b'/').skip(1).collect();
        let mut text = Vec::with_capacity(reversed.len());
        for segment in segments.iter().rev() {
            text.push(b'/');
            text.extend_from_slice(segment);
        }
        Some((text, count))
    }

    /// The literal segments at fixed positions: `(k, text)` when every matching path's segment `k`
    /// after the leading `/` is `text` (a non-empty literal item `k` of an anchored glob, before
    /// its first `**`: each item before it matches exactly one segment). `/shop/*/c1/*-sale` gives
    /// `(0, shop)` and `(2, c1)`.
    pub(crate) fn fixed_literals(&self) -> impl Iterator<Item = (usize, &[u8])> {
        let items: &[Item] = if self.anchored { &self.items } else { &[] };
        items
            .iter()
            .take_while(|item| !matches!(item, Item::Segments { .. }))
            .enumerate()
            .filter_map(|(k, item)| match item {
                Item::Literal(text) if !text.is_empty() => Some((k, &**text)),
                _ => None,
            })
    }

    /// The path's first segment after the leading `/` must start with these bytes (at least one),
    /// when the glob's first segment is a wildcard that starts with a literal (`/product-*/x`).
    pub(crate) fn first_prefix(&self) -> Option<Vec<u8>> {
        let Some(Item::Wildcard(tokens)) = self.items.first().filter(|_| self.anchored) else {
            return None;
        };
        let prefix: Vec<u8> = tokens
            .iter()
            .map_while(|token| match token {
                Token::Byte(b) => Some(*b),
                _ => None,
            })
            .collect();
        (!prefix.is_empty()).then_some(prefix)
    }

    /// Whether the path with these segments (from [`path_segments`]) and this [`byte_mask`]
    /// matches. Linear in the path's length times the number of `**` runs (the classic wildcard
    /// algorithm, one level per segment and one per byte).
    pub(crate) fn is_match(&self, segments: &[&[u8]], path_mask: u64) -> bool {
        if self.required_bytes & !path_mask != 0 {
            return false;
        }
        let segments = if self.anchored {
            segments.get(1..).unwrap_or_default()
        } else {
            segments
        };
        let items = &self.items;
        let (mut i, mut s) = (0, 0);
        // After the last `**` seen: the item after it and the first segment left to the rest.
        let mut resume: Option<(usize, usize)> = None;
        loop {
            match items.get(i) {
                Some(Item::Segments { at_least }) => {
                    s += at_least;
                    if s > segments.len() {
                        return false;
                    }
                    i += 1;
                    resume = Some((i, s));
                    continue;
                }
                Some(item)
                    if segments
                        .get(s)
                        .is_some_and(|seg| item_matches(item, seg, &self.classes)) =>
                {
                    i += 1;
                    s += 1;
                    continue;
                }
                Some(_) => {}
                None if s == segments.len() => return true,
                None => {}
            }
            match resume {
                Some((after, from)) if from < segments.len() => {
                    resume = Some((after, from + 1));
                    i = after;
                    s = from + 1;
                }
                _ => return false,
            }
        }
    }
}

/// `/a/b` for the literal segments `a`, `b` at the start of `items`, up to the first item that is
/// not a literal or is an empty one; `None` when there is none.
fn literal_run<'a>(items: impl Iterator<Item = &'a Item>) -> Option<(Vec<u8>, usize)> {
    let mut text = Vec::new();
    let mut count = 0;
    for item in items {
        match item {
            Item::Literal(segment) if !segment.is_empty() => {
                text.push(b'/');
                text.extend_from_slice(segment);
                count += 1;
            }
            _ => break,
        }
    }
    (count > 0).then_some((text, count))
}

fn item_matches(item: &Item, segment: &[u8], classes: &[[u64; 4]]) -> bool {
    match item {
        Item::Literal(text) => **text == *segment,
        Item::Wildcard(tokens) => wildcard_matches(tokens, classes, segment),
        Item::Segments { .. } => false,
    }
}

/// The classic linear wildcard match: on a mismatch, the last `*` takes one more byte.
fn wildcard_matches(tokens: &[Token], classes: &[[u64; 4]], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while let Some(&byte) = text.get(t) {
        match tokens.get(p) {
            Some(Token::Star) => {
                p += 1;
                resume = Some((p, t));
                continue;
            }
            Some(token) if token.matches(byte, classes) => {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match resume {
            Some((after, from)) => {
                resume = Some((after, from + 1));
                p = after;
                t = from + 1;
            }
            None => return false,
        }
    }
    tokens
        .get(p..)
        .unwrap_or_default()
        .iter()
        .all(|&tok| tok == Token::Star)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(glob: &str, path: &str) -> bool {
        let globs = parse::tests::parse(glob).unwrap_or_else(|| panic!("{glob} is not covered"));
        let segments = path_segments(path);
        let mask = byte_mask(path.as_bytes());
        globs.iter().any(|g| g.is_match(&segments, mask))
    }

    #[test]
    fn segment_semantics_table() {
        let table = [
            ("/*", "/", true),
            ("/*", "/a", true),
            ("/*", "/a/b", false),
            ("/a/**", "/a", false),
            ("/a/**", "/a/b/c", true),
            ("/a/**/b", "/a/b", true),
            ("/a/**/b", "/a/x/y/b", true),
            ("/a/**/b", "/a/x/y/c", false),
            ("**/b", "/b", true),
            ("**/b", "/x/b", true),
            ("**/*", "/", true),
            ("**/**", "/", true),
            ("/**/**", "/", true),
            ("/a*b*c", "/abxbc", true),
            ("/a*b*c", "/abxbcd", false),
            ("/p?", "/pé", false),
            ("/p??", "/pé", true),
            ("/[a-c]?", "/bz", true),
            ("/[a-c]?", "/dz", false),
            ("**/*/x", "/x", true),
            ("**/*/*/x", "/x", false),
            ("**/*", "/a/b", true),
            ("/*/x", "/x", false),
            // A negated class matches any other byte, `/` and each byte of `é` included.
            ("/a[!x]b", "/a/b", true),
            ("/a[!x]b", "/ayb", true),
            ("/a[!x]b", "/axb", false),
            ("/a[!x]", "/a", false),
            ("/p[!x][!x]", "/pé", true),
            ("**/[!x]", "/", true),
            ("**/[!x]b", "/b", true),
            // `**` inside a segment is two `*`.
            ("/a**", "/abc", true),
            ("/a**", "/a/b", false),
            ("/a/***/b", "/a/x/b", true),
            ("/a/***/b", "/a/x/y/b", false),
            // A non-ASCII class member is its bytes, each a member (globset's byte regex).
            ("/[é]", "/é", false),
            ("/[é][é]", "/é", true),
        ];
        for (glob, path, want) in table {
            assert_eq!(matches(glob, path), want, "{glob} vs {path}");
        }
    }
}
