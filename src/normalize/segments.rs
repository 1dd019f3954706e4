//! Segments (docs/contract/urls.md steps 4 and 5): splits a decoded path on `/`, cuts each segment at its first
//! `;`, drops empty segments, handles `.` and `..` (resolved, or kept for the browser's reading),
//! and joins the rest into a path that starts with `/` and has no trailing slash. Also reports
//! what step 6 needs: whether a dot segment, or a segment empty only because of its `;`
//! parameters, was seen.

use smallvec::SmallVec;

/// What [`join_segments`] does with `.` and `..` segments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Dots {
    /// docs/contract/urls.md step 4: drop `.`, resolve `..`.
    Resolve,
    /// Keep them as ordinary segments: the browser's reading, whose dot segments were resolved
    /// before decoding (docs/contract/urls.md step 6).
    Keep,
}

/// A path joined by [`join_segments`], with what step 6 needs to know about its segments.
pub(super) struct Joined {
    /// The canonical path.
    pub(super) path: String,
    /// A `.` or `..` segment was seen (dot segments resolved): the browser's reading may differ.
    pub(super) saw_dot_segment: bool,
    /// A segment was empty only because of its `;` parameters (`;a`, `;`).
    pub(super) saw_parameter_only_segment: bool,
}

/// docs/contract/urls.md steps 4 and 5: split on `/`, cut each segment at `;`, drop empty segments, handle dot
/// segments as `dots` says (`..` stops at the root), join with a leading `/`. Also says whether a
/// `.` or `..` segment, and a segment empty only because of its `;` parameters, were seen.
pub(super) fn join_segments(path: &str, dots: Dots) -> Joined {
    let mut kept: SmallVec<[&str; 16]> = SmallVec::new();
    let mut saw_dot_segment = false;
    let mut saw_parameter_only_segment = false;
    for raw_segment in path.split('/') {
        match raw_segment.split(';').next().unwrap_or("") {
            "" => saw_parameter_only_segment |= !raw_segment.is_empty(),
            segment @ ("." | "..") if dots == Dots::Resolve => {
                saw_dot_segment = true;
                if segment == ".." {
                    kept.pop();
                }
            }
            segment => kept.push(segment),
        }
    }
    let mut out = String::with_capacity(path.len() + 1);
    for segment in &kept {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() {
        out.push('/');
    }
    Joined {
        path: out,
        saw_dot_segment,
        saw_parameter_only_segment,
    }
}
