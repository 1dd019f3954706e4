//! A glob matcher of our own for the patterns that need no regex (SPEC 3), segment by segment.
//!
//! Almost every real page pattern is a run of `/`-separated segments, each a literal, a wildcard
//! segment built from literals, `*`, `?` and classes (`[a-z0-9]`), or `**` (any number of
//! whole segments). For those, globset's meaning under SPEC 3's options (`literal_separator`:
//! `*`, `?` and such classes never cross `/`) is exactly "match the path's segments in order",
//! which needs no regex: [`SegmentGlob::parse_into`] translates them and [`SegmentGlob::is_match`]
//! matches them with the linear two-level wildcard algorithm. Compiling costs microseconds where a
//! regex costs milliseconds, so a config filled to SPEC 2's 1 MiB with such globs loads within
//! SPEC 3's load-time checks' budget.
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

use smallvec::SmallVec;

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

/// Most negated classes a glob may have to be covered: each doubles the number of segment globs
/// it compiles to.
const MAX_NEGATED_CLASSES: usize = 4;

impl SegmentGlob {
    /// Translates one glob (no `{...}` alternates: see `pattern::segment_globs`) into segment
    /// globs whose union means what globset means by it, appended to `out`; `None` when it is not
    /// of a form this matcher covers (globset must match it). Covered globs are always globs that
    /// globset accepts.
    ///
    /// A negated class (`[!x]`) matches any byte not listed, `/` included, so it cannot stay
    /// within a segment: a glob with `n` of them (at most 4) becomes `2^n` segment globs, each
    /// class either a class of the other bytes but `/`, or a literal `/`. A negated class next to
    /// `**` is left to globset, since globset reads `**` by the characters around it.
    pub(crate) fn parse_into(glob: &str, out: &mut Vec<SegmentGlob>) -> Option<()> {
        let negated = negated_classes(glob)?;
        if negated.len() > MAX_NEGATED_CLASSES {
            return None;
        }
        for &(start, end) in &negated {
            if glob.get(..start)?.ends_with("**") || glob.get(end..)?.starts_with("**") {
                return None;
            }
        }
        for choice in 0..1u32 << negated.len() {
            if choice == 0 {
                out.push(SegmentGlob::parse(glob)?);
                continue;
            }
            let mut text = String::with_capacity(glob.len());
            let mut copied = 0;
            for (k, &(start, end)) in negated.iter().enumerate() {
                if choice & (1 << k) != 0 {
                    text.push_str(glob.get(copied..start)?);
                    text.push('/');
                    copied = end;
                }
            }
            text.push_str(glob.get(copied..)?);
            out.push(SegmentGlob::parse(&text)?);
        }
        Some(())
    }

    /// Translates one glob without alternates; a negated class in it stands for the bytes it
    /// matches other than `/` (see [`SegmentGlob::parse_into`]).
    fn parse(glob: &str) -> Option<SegmentGlob> {
        if glob.contains(['{', '}', '\\']) {
            return None;
        }
        let (leading_segments, rest) = match glob.strip_prefix("**/") {
            Some(rest) => (true, rest),
            None => (false, glob.strip_prefix('/')?),
        };
        if leading_segments && only_globstars(rest) {
            // globset: `**` alone, and `**/`, `**/**/` and the like, which its parser reduces
            // to `**`, match every path.
            return Some(SegmentGlob {
                anchored: false,
                items: [Item::Segments { at_least: 0 }].into(),
                classes: Box::default(),
                required_bytes: 0,
            });
        }
        let mut items: SmallVec<[Item; 8]> = SmallVec::new();
        let mut classes: Vec<[u64; 4]> = Vec::new();
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
            // An empty part is an empty segment, which only `//` or a trailing `/` in the path
            // can have (never a normalized path, but exactly what globset's regex means). A `**`
            // inside a part (`a**`, `**b`) is two `*` to globset's parser: stars all the same.
            items.push(parse_segment(part, &mut classes)?);
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
            items: items.into_iter().collect(),
            classes: classes.into(),
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

/// Whether the text after a leading `**/` is only `**` segments, perhaps with a trailing `/`.
fn only_globstars(rest: &str) -> bool {
    if rest.is_empty() {
        return true;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    !rest.is_empty() && rest.split('/').all(|part| part == "**")
}

/// The byte ranges of the negated classes of a glob (`[!...]`, `[^...]`), read the way globset
/// reads classes (a `]` first is a member); `None` for an unclosed class.
fn negated_classes(glob: &str) -> Option<Vec<(usize, usize)>> {
    let bytes = glob.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        if b != b'[' {
            continue;
        }
        let start = i - 1;
        let negated = matches!(bytes.get(i), Some(b'!' | b'^'));
        if negated {
            i += 1;
        }
        let mut first = true;
        loop {
            let c = *bytes.get(i)?;
            i += 1;
            if c == b']' && !first {
                break;
            }
            first = false;
        }
        if negated {
            out.push((start, i));
        }
    }
    Some(out)
}

/// One segment without `/`, `**`, `{`, `}` or `\`.
fn parse_segment(part: &str, classes: &mut Vec<[u64; 4]>) -> Option<Item> {
    if !part.contains(['*', '?', '[']) {
        // `]` and `,` outside a class are literals in globset.
        return Some(Item::Literal(part.as_bytes().into()));
    }
    let mut tokens: SmallVec<[Token; 32]> = SmallVec::new();
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => tokens.push(Token::Star),
            '?' => tokens.push(Token::AnyByte),
            '[' => {
                let index = u16::try_from(classes.len()).ok()?;
                classes.push(parse_class(&mut chars)?);
                tokens.push(Token::Class(index));
            }
            c => {
                let mut buf = [0; 4];
                tokens.extend(c.encode_utf8(&mut buf).bytes().map(Token::Byte));
            }
        }
    }
    Some(Item::Wildcard(tokens.as_slice().into()))
}

/// The rest of a class after `[`, read the way globset's `Parser::parse_class` reads it (`!` or
/// `^` first negates, then `]` or `-` first is a member, `a-z` a range, a trailing `-` a member):
/// each member or range goes to `range`, and the result says whether the class is negated. `None`
/// for globset's errors (an unclosed class, a reversed range) or when `range` refuses one.
fn read_class(
    chars: &mut std::str::Chars<'_>,
    mut range: impl FnMut((char, char)) -> Option<()>,
) -> Option<bool> {
    let negated = matches!(chars.clone().next(), Some('!' | '^'));
    if negated {
        chars.next();
    }
    // The last member or range, still open to become (or end) a range.
    let mut last: Option<(char, char)> = None;
    let mut first = true;
    let mut in_range = false;
    loop {
        let c = chars.next()?;
        match c {
            ']' if !first => break,
            '-' if !first && !in_range => in_range = true,
            c if in_range => {
                let (low, _) = last?;
                if c < low {
                    return None;
                }
                last = Some((low, c));
                in_range = false;
            }
            c => {
                if let Some(done) = last.replace((c, c)) {
                    range(done)?;
                }
            }
        }
        first = false;
    }
    if let Some(done) = last {
        range(done)?;
    }
    if in_range {
        range(('-', '-'))?;
    }
    Some(negated)
}

/// The rest of a class after `[` (see [`read_class`]) as the set of bytes it matches; a negated
/// class matches every byte not listed but `/` (the `/` is a separate segment glob: see
/// [`SegmentGlob::parse_into`]). A non-ASCII member is its UTF-8 bytes, each a member, as
/// globset's byte regex has it. `None` for the forms left to globset: `/` listed, and globset's
/// errors.
fn parse_class(chars: &mut std::str::Chars<'_>) -> Option<[u64; 4]> {
    let mut map = [0u64; 4];
    let negated = read_class(chars, |(low, high)| {
        // globset writes a member as its UTF-8 bytes and a range `low-high` as the bytes of
        // `low`, `-`, the bytes of `high`, in a byte regex: the class is a set of bytes, and a
        // range spans only from the last byte of `low` to the first byte of `high`.
        let (mut low_buf, mut high_buf) = ([0; 4], [0; 4]);
        let low = low.encode_utf8(&mut low_buf).as_bytes();
        let high = high.encode_utf8(&mut high_buf).as_bytes();
        let mut add = |from: u8, to: u8| -> Option<()> {
            for byte in from..=to {
                *map.get_mut(usize::from(byte >> 6))? |= 1 << (byte & 63);
            }
            Some(())
        };
        if low == high {
            return low.iter().try_for_each(|&b| add(b, b));
        }
        let ((&low_last, low_rest), (&high_first, high_rest)) =
            (low.split_last()?, high.split_first()?);
        low_rest.iter().try_for_each(|&b| add(b, b))?;
        if low_last > high_first {
            return None;
        }
        add(low_last, high_first)?;
        high_rest.iter().try_for_each(|&b| add(b, b))
    })?;
    // A class listing `/` is left to globset.
    if map.first()? & (1 << b'/') != 0 {
        return None;
    }
    if negated {
        for word in &mut map {
            *word = !*word;
        }
        // `/`: byte 47, in the first word.
        *map.first_mut()? &= !(1 << b'/');
    }
    Some(map)
}

/// Whether a glob without `{`, `}` or `\` parses in globset: every class is closed and its
/// ranges are in order (globset's other errors concern groups and escapes). Checks without
/// building anything, for the patterns that are compiled later anyway.
pub(crate) fn classes_are_valid(glob: &str) -> bool {
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        if c == '[' && read_class(&mut chars, |_| Some(())).is_none() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(glob: &str) -> Option<Vec<SegmentGlob>> {
        let mut out = Vec::new();
        SegmentGlob::parse_into(glob, &mut out).map(|()| out)
    }

    fn matches(glob: &str, path: &str) -> bool {
        let globs = parse(glob).unwrap_or_else(|| panic!("{glob} is not covered"));
        let segments = path_segments(path);
        let mask = byte_mask(path.as_bytes());
        globs.iter().any(|g| g.is_match(&segments, mask))
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
            "/[!a]",
            "/[^a]",
            "/a//b",
            "/a/",
            "/[!a]/[!b]/[!c]/[!d]",
            "/a**",
            "/**a",
            "/a/***/b",
            "/[é]",
            "/[!é]",
            "/[a-é]",
        ];
        for glob in covered {
            assert!(parse(glob).is_some(), "{glob}");
        }
        assert_eq!(parse("/x/[!a]").map(|g| g.len()), Some(2));
        let left = [
            "/a\\*",
            "/[a/b]",
            "/[!/]",
            "**a",
            "/{a,b}",
            "a",
            "/[z-a]",
            "/[a",
            "/[!a]**",
            "/**[!a]",
            "/[!a]/[!b]/[!c]/[!d]/[!e]",
        ];
        for glob in left {
            assert_eq!(parse(glob), None, "{glob}");
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
