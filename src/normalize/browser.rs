//! The browser's reading (docs/contract/urls.md step 6): resolves a raw path's dot segments as WHATWG URL does
//! (`.` and `%2e` dropped, `..` and its escaped forms removing the segment before them, empty
//! ones included; `..;` kept), so that the caller can compare that reading with docs/contract/urls.md's steps;
//! and names the segment that is empty only because of its `;` parameters (`/orders/;a/invoice`),
//! which servers read two ways.

use super::error::UrlError;

/// The [`UrlError::ParameterOnlySegment`] of a raw path that has a segment empty once cut at its
/// first `;`: the first segment, as written, that starts with `;` or `%3B` (any case; decoding
/// precedes the cut, so `%3B` cuts as `;` does). `offset` is the raw path's byte offset in the
/// input.
pub(super) fn parameter_only_error(raw_path: &str, offset: usize) -> UrlError {
    let mut start = 0;
    for segment in raw_path.split('/') {
        let cut_to_nothing = segment.starts_with(';')
            || segment
                .get(..3)
                .is_some_and(|head| head.eq_ignore_ascii_case("%3b"));
        if cut_to_nothing {
            return UrlError::ParameterOnlySegment {
                at: offset + start,
                segment: segment.to_owned(),
            };
        }
        start += segment.len() + 1;
    }
    // Unreachable when called as intended (NFKC never creates a `;`: that is rejected first);
    // the whole path is named rather than nothing.
    UrlError::ParameterOnlySegment {
        at: offset,
        segment: raw_path.to_owned(),
    }
}

/// A raw path as a browser leaves it (WHATWG URL's path state for http(s)): split on `/`, a
/// single-dot segment (`.`, `%2e`) dropped, a double-dot segment (`..`, `.%2e`, `%2e.`, `%2e%2e`,
/// any case) removing the segment before it, whatever it is (an empty one included); empty
/// segments and everything else (`..;`) kept as they are. The result still needs decoding; a
/// trailing slash that WHATWG would add is irrelevant once empty segments are dropped.
pub(super) fn browser_resolved(raw_path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    // The text before the leading `/` is not a segment.
    for segment in raw_path.split('/').skip(1) {
        if is_double_dot(segment) {
            kept.pop();
        } else if !is_single_dot(segment) {
            kept.push(segment);
        }
    }
    let mut out = String::with_capacity(raw_path.len() + 1);
    for segment in &kept {
        out.push('/');
        out.push_str(segment);
    }
    out
}

/// WHATWG URL's single-dot segment: `.` or `%2e` (any case).
fn is_single_dot(segment: &str) -> bool {
    segment == "." || segment.eq_ignore_ascii_case("%2e")
}

/// WHATWG URL's double-dot segment: `..`, `.%2e`, `%2e.` or `%2e%2e` (any case).
fn is_double_dot(segment: &str) -> bool {
    matches!(segment.len(), 2 | 4 | 6)
        && match segment.strip_prefix('.') {
            Some(rest) => is_single_dot(rest),
            None => {
                segment
                    .get(..3)
                    .is_some_and(|head| head.eq_ignore_ascii_case("%2e"))
                    && segment.get(3..).is_some_and(is_single_dot)
            }
        }
}
