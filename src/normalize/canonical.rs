//! The fast path: decides whether a `page_url` is already its own canonical path (printable ASCII
//! without escapes, `;`, query or fragment, no empty or dot segments, lowercase unless case
//! matters), so that normalization returns it borrowed without doing anything else. Conservative:
//! a false answer only costs the full normalization.

use crate::limits::MAX_PAGE_URL_BYTES;

/// Byte classes of the fast path.
const REJECT: u8 = 0;
const PLAIN: u8 = 1;
const SLASH: u8 = 2;
const DOT: u8 = 3;
const UPPER: u8 = 4;

/// The class of each byte for [`is_canonical`]: lowercase letters, digits and the printable ASCII
/// characters without special meaning in a path are `PLAIN`; everything that may need work
/// (`%`, `;`, `?`, `#`, `\`, space, controls, non-ASCII) is `REJECT`.
// Evaluated at compile time: an index out of range fails the build, never a run.
#[allow(clippy::indexing_slicing)]
static BYTE_CLASS: [u8; 256] = {
    let mut table = [REJECT; 256];
    let plain = b"abcdefghijklmnopqrstuvwxyz0123456789-_~!$&'()*+,=:@";
    let mut i = 0;
    while i < plain.len() {
        table[plain[i] as usize] = PLAIN;
        i += 1;
    }
    let mut c = b'A';
    while c <= b'Z' {
        table[c as usize] = UPPER;
        c += 1;
    }
    table[b'/' as usize] = SLASH;
    table[b'.' as usize] = DOT;
    table
};

/// The fast path: true when `path` is already its own canonical form, so normalization would
/// return it unchanged. Conservative: false only costs the slow path.
pub(super) fn is_canonical(path: &str, case_sensitive: bool) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [b'/'] => return true,
        [b'/', .., last] if *last != b'/' && bytes.len() <= MAX_PAGE_URL_BYTES => {}
        _ => return false,
    }
    let upper = if case_sensitive { PLAIN } else { REJECT };
    // `seg_len` and `dots` track the segment being read, to spot empty, `.` and `..` segments.
    let mut seg_len = 0usize;
    let mut dots = 0usize;
    for &b in bytes.iter().skip(1) {
        let class = match BYTE_CLASS.get(usize::from(b)).copied().unwrap_or(REJECT) {
            UPPER => upper,
            class => class,
        };
        match class {
            PLAIN => {}
            DOT => dots += 1,
            SLASH => {
                if seg_len == 0 || is_dot_segment(seg_len, dots) {
                    return false;
                }
                seg_len = 0;
                dots = 0;
                continue;
            }
            _ => return false,
        }
        seg_len += 1;
    }
    !is_dot_segment(seg_len, dots)
}

/// A segment of `len` bytes of which `dots` are dots is `.` or `..`.
fn is_dot_segment(len: usize, dots: usize) -> bool {
    dots == len && len <= 2
}
