//! Translating a glob (globset's syntax under docs/contract/patterns.md's options) into segment globs.

use smallvec::SmallVec;

use super::{Item, SegmentGlob, Token, byte_bit, byte_mask};
use crate::pattern::literal::expand_braces;

/// Most negated classes a glob may have to be covered: each doubles the number of segment globs
/// it compiles to.
const MAX_NEGATED_CLASSES: usize = 4;

/// The segment globs a pattern compiles to (itself and, for `X/**`, its prefix `X`, as in
/// [`globs_of`]; `{...}` alternates expanded), or `None` when globset must match it.
pub(crate) fn segment_globs(normalized: &str) -> Option<Vec<SegmentGlob>> {
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
        if let Some(Item::Segments { at_least }) = items.last_mut()
            && !run_is_leading
        {
            *at_least = 1;
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
pub(super) mod tests {
    use super::*;

    pub(in crate::pattern) fn parse(glob: &str) -> Option<Vec<SegmentGlob>> {
        let mut out = Vec::new();
        SegmentGlob::parse_into(glob, &mut out).map(|()| out)
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
}
