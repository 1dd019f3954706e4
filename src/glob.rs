//! A glob matcher of our own for the patterns that need no regex (SPEC 3), segment by segment.
//!
//! Almost every real page pattern is a run of `/`-separated segments, each a literal, a wildcard
//! segment built from literals, `*`, `?` and ASCII classes (`[a-z0-9]`), or `**` (any number of
//! whole segments). For those, globset's meaning under SPEC 3's options (`literal_separator`:
//! `*`, `?` and such classes never cross `/`) is exactly "match the path's segments in order",
//! which needs no regex: [`SegmentGlob::parse`] translates them and [`SegmentGlob::is_match`]
//! matches them with the linear two-level wildcard algorithm. Compiling costs microseconds where a
//! regex costs milliseconds, so a config filled to SPEC 2's 1 MiB with such globs loads within
//! SPEC 3's load-time checks' budget.
//!
//! Everything else (`\` escapes, negated classes, which can match `/`, non-ASCII classes, `**`
//! inside a segment, alternates that cannot be expanded exactly) is left to globset:
//! [`SegmentGlob::parse`] returns `None` and the caller compiles a regex. globset stays the
//! reference: `tests` below compare both on generated patterns and paths, byte for byte (globset
//! matches bytes: `?` is one byte, a literal `é` two).
//!
//! The translation of globset's `**` rules (`Parser::parse_star` in globset 0.4): `**/` at the
//! start and `/**/` in the middle are any number (zero or more) of segments; `/**` at the end is
//! one or more segments (globset's regex `/.*`; the prefix itself is matched by the separate
//! prefix glob of `pattern::globs_of`); consecutive `**` segments collapse into one, and a pattern
//! made only of `**/` and `**` segments matches every path.

use smallvec::SmallVec;

/// One byte-level matcher inside a wildcard segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// This byte.
    Byte(u8),
    /// `?`: any one byte (never `/`: segments contain none).
    AnyByte,
    /// `[...]`: one ASCII byte of the set, as a 128-bit map.
    Class([u64; 2]),
    /// `*`: any run of bytes within the segment, possibly empty.
    Star,
}

impl Token {
    fn matches(self, byte: u8) -> bool {
        match self {
            Token::Byte(b) => b == byte,
            Token::AnyByte => true,
            Token::Class(map) => {
                byte < 128
                    && map
                        .get(usize::from(byte >> 6))
                        .is_some_and(|word| word & (1 << (byte & 63)) != 0)
            }
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

/// The segments of a normalized path (SPEC 4), as globset's regexes see them: the path split on
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
    /// Translates one glob (no `{...}` alternates: see `pattern::segment_globs`), or `None` when
    /// it is not of a form this matcher covers (globset must match it). A `Some` is always a glob
    /// that globset accepts and means the same.
    pub(crate) fn parse(glob: &str) -> Option<SegmentGlob> {
        if glob.contains(['{', '}', '\\']) {
            return None;
        }
        let (leading_segments, rest) = match glob.strip_prefix("**/") {
            Some(rest) => (true, rest),
            None => (false, glob.strip_prefix('/')?),
        };
        let mut items: Vec<Item> = Vec::new();
        // Whether the last item is a `**` run that began with the leading `**/`.
        let mut run_is_leading = leading_segments;
        if leading_segments {
            items.push(Item::Segments { at_least: 0 });
        }
        for part in rest.split('/') {
            if part == "**" {
                if !matches!(items.last(), Some(Item::Segments { .. })) {
                    items.push(Item::Segments { at_least: 0 });
                    run_is_leading = false;
                }
                continue;
            }
            if part.is_empty() || part.contains("**") {
                return None;
            }
            items.push(parse_segment(part)?);
        }
        // A `**` run at the end, except one that began with the leading `**/`, needs at least one
        // segment (globset: `/.*`).
        if let Some(Item::Segments { at_least }) = items.last_mut() {
            if !run_is_leading {
                *at_least = 1;
            }
        }
        let required_bytes = items.iter().fold(0, |mask, item| {
            mask | match item {
                Item::Literal(text) => byte_mask(text),
                Item::Wildcard(tokens) => tokens.iter().fold(0, |m, token| match token {
                    Token::Byte(b) => m | 1 << byte_bit(*b),
                    _ => m,
                }),
                Item::Segments { .. } => 0,
            }
        });
        Some(SegmentGlob {
            anchored: !leading_segments,
            items: items.into(),
            required_bytes,
        })
    }

    /// The path's first segment after the leading `/` must equal this, when the glob starts with a
    /// literal segment.
    pub(crate) fn first_literal(&self) -> Option<&[u8]> {
        match self.items.first() {
            Some(Item::Literal(text)) if self.anchored => Some(text),
            _ => None,
        }
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

    /// The path's last segment must equal this, when the glob ends with a literal segment.
    pub(crate) fn last_literal(&self) -> Option<&[u8]> {
        match self.items.last() {
            Some(Item::Literal(text)) => Some(text),
            _ => None,
        }
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
                Some(item) if segments.get(s).is_some_and(|seg| item_matches(item, seg)) => {
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

fn item_matches(item: &Item, segment: &[u8]) -> bool {
    match item {
        Item::Literal(text) => **text == *segment,
        Item::Wildcard(tokens) => wildcard_matches(tokens, segment),
        Item::Segments { .. } => false,
    }
}

/// The classic linear wildcard match: on a mismatch, the last `*` takes one more byte.
fn wildcard_matches(tokens: &[Token], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while let Some(&byte) = text.get(t) {
        match tokens.get(p) {
            Some(Token::Star) => {
                p += 1;
                resume = Some((p, t));
                continue;
            }
            Some(token) if token.matches(byte) => {
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

/// One segment without `/`, `**`, `{`, `}` or `\`.
fn parse_segment(part: &str) -> Option<Item> {
    if !part.contains(['*', '?', '[']) {
        // `]` and `,` outside a class are literals in globset.
        return Some(Item::Literal(part.as_bytes().into()));
    }
    let mut tokens = Vec::with_capacity(part.len());
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => tokens.push(Token::Star),
            '?' => tokens.push(Token::AnyByte),
            '[' => tokens.push(Token::Class(parse_class(&mut chars)?)),
            c => {
                let mut buf = [0; 4];
                tokens.extend(c.encode_utf8(&mut buf).bytes().map(Token::Byte));
            }
        }
    }
    Some(Item::Wildcard(tokens.into()))
}

/// The rest of a class after `[`, read the way globset's `Parser::parse_class` reads it (`]` or
/// `-` first is a member, `a-z` a range, a trailing `-` a member), or `None` for the forms left
/// to globset: negated (`[!...]`, `[^...]`: they can match `/`), non-ASCII members, `/` in the
/// set, an unclosed class or a reversed range (globset errors).
fn parse_class(chars: &mut std::str::Chars<'_>) -> Option<[u64; 2]> {
    let mut ranges: Vec<(char, char)> = Vec::new();
    let mut first = true;
    let mut in_range = false;
    loop {
        let c = chars.next()?;
        if first && (c == '!' || c == '^') {
            return None;
        }
        match c {
            ']' if !first => break,
            '-' if !first && !in_range => in_range = true,
            c => {
                if in_range {
                    let last = ranges.last_mut()?;
                    if c < last.0 {
                        return None;
                    }
                    last.1 = c;
                    in_range = false;
                } else {
                    ranges.push((c, c));
                }
            }
        }
        first = false;
    }
    if in_range {
        ranges.push(('-', '-'));
    }
    let mut map = [0u64; 2];
    for (low, high) in ranges {
        if !high.is_ascii() || (low..=high).contains(&'/') {
            return None;
        }
        for byte in low as u8..=high as u8 {
            *map.get_mut(usize::from(byte >> 6))? |= 1 << (byte & 63);
        }
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(glob: &str, path: &str) -> bool {
        SegmentGlob::parse(glob)
            .unwrap_or_else(|| panic!("{glob} is not covered"))
            .is_match(&path_segments(path), byte_mask(path.as_bytes()))
    }

    #[test]
    fn forms_covered_and_left_to_globset() {
        let covered = [
            "/a",
            "/a/*",
            "/*",
            "/a/**",
            "/**/a",
            "**/a",
            "**/a/**",
            "/a/**/b",
            "/a?b",
            "/[a-c]x",
            "/[]a]",
            "/[-a]",
            "/[a-]",
            "/x]",
            "/a,b",
            "/**/**",
            "/a/**/**/b",
            "/é*",
        ];
        for glob in covered {
            assert!(SegmentGlob::parse(glob).is_some(), "{glob}");
        }
        let left = [
            "/a\\*", "/[!a]", "/[^a]", "/[é]", "/[a/b]", "/a**", "/**a", "**a", "/{a,b}", "/a//b",
            "a", "/[z-a]", "/[a", "/a/",
        ];
        for glob in left {
            assert_eq!(SegmentGlob::parse(glob), None, "{glob}");
        }
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
        ];
        for (glob, path, want) in table {
            assert_eq!(matches(glob, path), want, "{glob} vs {path}");
        }
    }
}
