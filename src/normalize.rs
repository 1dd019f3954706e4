//! Page URL normalization (SPEC 4): one canonical path per page, or a typed rejection.
//!
//! The policy fails closed: input that could be read two ways is rejected rather than guessed at.
//!
//! **The browser's reading decides** (SPEC 4 step 6). A browser resolves dot segments before any
//! server sees the path (WHATWG URL: `%2e` is a dot, empty segments are kept, `..;` is an ordinary
//! segment), while SPEC 4's steps 3 and 4 drop empty segments and cut `;` parameters first. Both
//! readings are computed whenever the path has a dot segment in either, and a URL whose two
//! readings differ is rejected ([`UrlError::AmbiguousDotSegment`] names both):
//! `/checkout//./../pay` (a browser is on `/checkout/pay`, the steps alone give `/pay`),
//! `/checkout/..;/pay` (Tomcat-style servers resolve `..;`, browsers keep it). The
//! `browser_reading` test checks the property against the `url` crate's WHATWG parser on generated
//! URLs, and `pkg/test/browser-reading.test.mjs` against Node's `URL`.
//!
//! Beyond SPEC 4's list, Unicode normalization (NFKC) that creates a `/`, `;`, `\`, `%`, a control
//! character, or a `.`/`..` segment that was not there before (`/checkout/‥/pay`, `/a／b`) is
//! rejected too: the server sees one segment where NFKC would see several (recorded in the
//! README).

use std::borrow::Cow;

use crate::code::DiagnosticCode;
use crate::host;
use icu_normalizer::ComposingNormalizerBorrowed;
use smallvec::SmallVec;

use crate::limits::MAX_PAGE_URL_BYTES;
use crate::text::group;

/// Why a `page_url` was rejected (SPEC 4 step 2, plus two fail-closed ambiguities: `..` right
/// after an empty segment, and Unicode normalization that changes the path's structure). `Display` is a sentence a person can act on; [`UrlError::code`] is
/// a stable machine-readable name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The input is the empty string.
    #[error("page_url is empty; give a path such as \"/products/linen-shirt\" or an http(s) URL")]
    Empty,
    /// The input, or the path it normalizes to (NFKC can expand text), is longer than
    /// [`MAX_PAGE_URL_BYTES`].
    #[error(
        "page_url is {len_bytes} bytes long (or normalizes to that many); the limit is {limit} bytes",
        limit = group(MAX_PAGE_URL_BYTES as u64)
    )]
    TooLong {
        /// Length of the input in bytes.
        len_bytes: usize,
    },
    /// A raw control character (U+0000 to U+001F, U+007F to U+009F).
    #[error("page_url contains the control character U+{code_point:04X} at byte {at}; percent-encode it or remove it")]
    ControlCharacter {
        /// Byte offset in the input.
        at: usize,
        /// The character's code point.
        code_point: u32,
    },
    /// A raw space.
    #[error("page_url contains a space at byte {at}; percent-encode it as %20")]
    Space {
        /// Byte offset in the input.
        at: usize,
    },
    /// A raw backslash, which some servers read as `/`.
    #[error("page_url contains a backslash at byte {at}, which some servers read as '/'; use '/'")]
    Backslash {
        /// Byte offset in the input.
        at: usize,
    },
    /// A path starting with `//`, which reads as a host (`//evil.example/checkout`).
    #[error("page_url starts with \"//\", which reads as a host name; a path starts with exactly one '/'")]
    DoubleSlash,
    /// A scheme other than http or https (`javascript:`, `mailto:`, `ftp:`).
    #[error("page_url has the scheme \"{scheme}:\"; only http and https URLs and paths starting with '/' are accepted")]
    UnsupportedScheme {
        /// The scheme as written.
        scheme: String,
    },
    /// Neither a path starting with `/` nor an absolute URL (`products/x`, `?q=1`).
    #[error("page_url is a relative reference; give a path starting with '/' or an absolute http(s) URL")]
    Relative,
    /// An `http:`/`https:` URL that is not of the form `scheme://host/...`, or that the URL parser
    /// rejects (bad host, bad port).
    #[error("page_url is not a valid absolute URL: {reason}")]
    MalformedUrl {
        /// What is wrong with it.
        reason: String,
    },
    /// `%` not followed by two hex digits (`%`, `%zz`, `%4`).
    #[error("page_url has a malformed percent escape {escape:?} at byte {at}; '%' must be followed by two hex digits")]
    MalformedEscape {
        /// Byte offset of the `%`.
        at: usize,
        /// The escape as written (up to three characters).
        escape: String,
    },
    /// An escape that decodes to `/`, `\`, `%` (double encoding) or a control character.
    #[error("page_url has the escape {escape} at byte {at}, which decodes to {decoded}; such escapes are ambiguous and rejected")]
    ForbiddenEscape {
        /// Byte offset of the `%`.
        at: usize,
        /// The escape as written (`%2F`).
        escape: String,
        /// What it decodes to, described (`'/'`, `a control character`).
        decoded: &'static str,
    },
    /// Percent-decoded bytes that are not UTF-8 (`%FF`, `%C3%28`).
    #[error("page_url's percent escapes decode to bytes that are not UTF-8 (near byte {at})")]
    InvalidUtf8 {
        /// Byte offset in the input near the bad sequence.
        at: usize,
    },
    /// Unicode normalization (NFKC) would change the path's structure.
    #[error("page_url contains {original:?}, which Unicode normalization (NFKC) turns into {normalized:?} and so changes the path's structure; ambiguous, rejected")]
    AmbiguousUnicode {
        /// The segment as decoded.
        original: String,
        /// The same segment after NFKC.
        normalized: String,
    },
    /// The path's dot segments put a browser on another page than SPEC 4's steps do (SPEC 4 step
    /// 6): `/checkout//./../pay` (a browser resolves `..` against the empty segment; the steps
    /// drop empty segments first) or `/x/..;/checkout` (a browser keeps `..;` as a segment).
    #[error("page_url reads as {spec_path:?} by SPEC 4's steps but as {browser_path:?} in a browser, which resolves dot segments before dropping empty segments and cutting ';' parameters; ambiguous, rejected")]
    AmbiguousDotSegment {
        /// The path SPEC 4's steps 1 to 5 give.
        spec_path: String,
        /// The path as a browser reads it (WHATWG path, then steps 3 and 4 without dot
        /// resolution).
        browser_path: String,
    },
    /// A segment that is empty only because its `;` parameters are cut (SPEC 4 step 6):
    /// `/orders/;a/invoice`, `/checkout/;jsessionid=1`, `/checkout/;`. SPEC 4's steps drop it;
    /// a server that keeps path parameters routes it as a page of its own.
    #[error("page_url has the segment {segment:?} at byte {at}, which is empty once its ';' parameters are cut: servers that keep path parameters read it as a page of its own, servers that cut them drop it; ambiguous, rejected (put the parameters on a segment with a name, as in \"/checkout;jsessionid=1\", or remove them)")]
    ParameterOnlySegment {
        /// Byte offset of the segment in the input.
        at: usize,
        /// The segment as written (`;a`, `%3Bx`).
        segment: String,
    },
}

impl UrlError {
    /// A stable machine-readable name of the rejection: `empty`, `too_long`,
    /// `control_character`, `space`, `backslash`, `double_slash`, `unsupported_scheme`,
    /// `relative`, `malformed_url`, `malformed_escape`, `forbidden_escape`, `invalid_utf8`,
    /// `ambiguous_unicode`, `ambiguous_dot_segment`, `parameter_only_segment`.
    pub fn code(&self) -> DiagnosticCode {
        match self {
            UrlError::Empty => DiagnosticCode::Empty,
            UrlError::TooLong { .. } => DiagnosticCode::TooLong,
            UrlError::ControlCharacter { .. } => DiagnosticCode::ControlCharacter,
            UrlError::Space { .. } => DiagnosticCode::Space,
            UrlError::Backslash { .. } => DiagnosticCode::Backslash,
            UrlError::DoubleSlash => DiagnosticCode::DoubleSlash,
            UrlError::UnsupportedScheme { .. } => DiagnosticCode::UnsupportedScheme,
            UrlError::Relative => DiagnosticCode::Relative,
            UrlError::MalformedUrl { .. } => DiagnosticCode::MalformedUrl,
            UrlError::MalformedEscape { .. } => DiagnosticCode::MalformedEscape,
            UrlError::ForbiddenEscape { .. } => DiagnosticCode::ForbiddenEscape,
            UrlError::InvalidUtf8 { .. } => DiagnosticCode::InvalidUtf8,
            UrlError::AmbiguousUnicode { .. } => DiagnosticCode::AmbiguousUnicode,
            UrlError::AmbiguousDotSegment { .. } => DiagnosticCode::AmbiguousDotSegment,
            UrlError::ParameterOnlySegment { .. } => DiagnosticCode::ParameterOnlySegment,
        }
    }
}

/// Turns a `page_url` into its canonical path (SPEC 4), or says why it is rejected.
///
/// Accepted: an absolute `http`/`https` URL (scheme case-insensitive; host, port, user info,
/// query and fragment ignored) or a path starting with exactly one `/` (query and fragment
/// ignored). The path is percent-decoded once, NFKC-normalized, lowercased with full Unicode
/// lowercase unless `case_sensitive`, split on `/`, each segment cut at its first `;`, empty and
/// `.` segments dropped, `..` resolved (stopping at the root). The result starts with `/` and has
/// no trailing slash; the root is `/`.
///
/// An input that is already canonical (printable ASCII, no escapes, no dot or empty segments,
/// lowercase unless `case_sensitive`) is returned borrowed without allocating.
///
/// ```
/// use nudge_rules::normalize_page_url;
/// assert_eq!(normalize_page_url("/Checkout//Pay", false).unwrap(), "/checkout/pay");
/// assert_eq!(normalize_page_url("https://shop.example/account?next=/x#top", false).unwrap(), "/account");
/// // SPEC 4 step 6: a browser keeps `..;` as a segment; Tomcat-style servers resolve it.
/// assert!(normalize_page_url("/x/..;/checkout", false).is_err());
/// assert_eq!(normalize_page_url("/a/%2E%2e/checkout", false).unwrap(), "/checkout");
/// assert!(normalize_page_url("/x%2F..%2Fcheckout", false).is_err());
/// ```
///
/// # Errors
///
/// A [`UrlError`] for: the empty string; more than 8,192 bytes; a raw control character, space
/// or `\`; a path starting with `//`; a scheme other than http(s); a relative reference; an
/// absolute URL without `//` and a host, or that the URL parser rejects; a malformed escape
/// (`%`, `%zz`); an escape decoding to `/`, `\`, `%` or a control character; decoded bytes that
/// are not UTF-8; NFKC changing the path's structure; dot segments that put a browser on
/// another page than SPEC 4's steps (step 6: `/checkout//./../pay`, `/x/..;/checkout`).
pub fn normalize_page_url(page_url: &str, case_sensitive: bool) -> Result<Cow<'_, str>, UrlError> {
    if is_canonical(page_url, case_sensitive) {
        return Ok(Cow::Borrowed(page_url));
    }
    normalize_slow(page_url, case_sensitive).map(Cow::Owned)
}

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

/// [`normalize_page_url`] without the fast path, for the differential fuzz target (built with
/// `--cfg fuzzing` by cargo-fuzz only).
#[cfg(fuzzing)]
pub fn normalize_page_url_full(page_url: &str, case_sensitive: bool) -> Result<String, UrlError> {
    normalize_slow(page_url, case_sensitive)
}

/// The fast path: true when `path` is already its own canonical form, so normalization would
/// return it unchanged. Conservative: false only costs the slow path.
fn is_canonical(path: &str, case_sensitive: bool) -> bool {
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

fn normalize_slow(page_url: &str, case_sensitive: bool) -> Result<String, UrlError> {
    if page_url.is_empty() {
        return Err(UrlError::Empty);
    }
    if page_url.len() > MAX_PAGE_URL_BYTES {
        return Err(UrlError::TooLong {
            len_bytes: page_url.len(),
        });
    }
    for (at, c) in page_url.char_indices() {
        match c {
            ' ' => return Err(UrlError::Space { at }),
            '\\' => return Err(UrlError::Backslash { at }),
            c if c.is_control() => {
                return Err(UrlError::ControlCharacter {
                    at,
                    code_point: u32::from(c),
                })
            }
            _ => {}
        }
    }
    let (raw_path, offset) = raw_path(page_url)?;
    let Joined {
        path,
        saw_dot_segment,
        saw_parameter_only_segment,
    } = read_path(raw_path, offset, case_sensitive, Dots::Resolve)?;
    if saw_parameter_only_segment {
        // SPEC 4 step 6: servers read a `;`-only segment two ways.
        return Err(parameter_only_error(raw_path, offset));
    }
    if saw_dot_segment {
        // SPEC 4 step 6: only dot segments can make the two readings differ.
        let browser = browser_resolved(raw_path);
        let browser_path = read_path(&browser, offset, case_sensitive, Dots::Keep)?.path;
        if browser_path != path {
            return Err(UrlError::AmbiguousDotSegment {
                spec_path: path,
                browser_path,
            });
        }
    }
    // NFKC can expand text; a path longer than any accepted input is refused too, which keeps
    // normalization idempotent and its output bounded.
    if path.len() > MAX_PAGE_URL_BYTES {
        return Err(UrlError::TooLong {
            len_bytes: path.len(),
        });
    }
    Ok(path)
}

/// Splits off the path of `page_url` (without query and fragment) and its byte offset in the
/// input, validating the scheme and authority of absolute URLs.
fn raw_path(page_url: &str) -> Result<(&str, usize), UrlError> {
    let (path_and_rest, offset) = if page_url.starts_with("//") {
        return Err(UrlError::DoubleSlash);
    } else if page_url.starts_with('/') {
        (page_url, 0)
    } else {
        absolute_path(page_url)?
    };
    let end = path_and_rest
        .find(['?', '#'])
        .unwrap_or(path_and_rest.len());
    Ok((path_and_rest.get(..end).unwrap_or(""), offset))
}

/// For `http(s)://authority/path?query#fragment`, returns `/path?query#fragment` (or `""` when
/// there is no path) and its offset.
fn absolute_path(page_url: &str) -> Result<(&str, usize), UrlError> {
    let Some(colon) = page_url.find(':') else {
        return Err(UrlError::Relative);
    };
    let scheme = page_url.get(..colon).unwrap_or("");
    let is_scheme = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return Err(UrlError::Relative);
    }
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(UrlError::UnsupportedScheme {
            scheme: scheme.to_owned(),
        });
    }
    let after_scheme = page_url.get(colon + 1..).unwrap_or("");
    let Some(authority_and_path) = after_scheme.strip_prefix("//") else {
        return Err(UrlError::MalformedUrl {
            reason: format!("expected \"//\" and a host after \"{scheme}:\""),
        });
    };
    let authority_end = authority_and_path
        .find(['/', '?', '#'])
        .unwrap_or(authority_and_path.len());
    if authority_end == 0 {
        return Err(UrlError::MalformedUrl {
            reason: "the host is empty".to_owned(),
        });
    }
    // The WHATWG parser judges host and port; its path handling is not used (step 6 reads the
    // raw path both ways), the raw path is.
    let authority = authority_and_path.get(..authority_end).unwrap_or("");
    host::check_authority(page_url, authority)
        .map_err(|reason| UrlError::MalformedUrl { reason })?;
    let path_offset = colon + 3 + authority_end;
    let rest = authority_and_path.get(authority_end..).unwrap_or("");
    Ok((rest, path_offset))
}

/// Percent-decodes once (SPEC 4 step 3), rejecting malformed escapes and escapes that decode to
/// `/`, `\`, `%` or a control character, and decoded bytes that are not UTF-8.
fn percent_decode(raw: &str, offset: usize) -> Result<Cow<'_, str>, UrlError> {
    if !raw.contains('%') {
        return Ok(Cow::Borrowed(raw));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            out.push(b);
            i += 1;
            continue;
        }
        let hex = |j: usize| bytes.get(j).and_then(|&h| (h as char).to_digit(16));
        let escape_text = || {
            raw.get(i..)
                .map(|s| s.chars().take(3).collect::<String>())
                .unwrap_or_default()
        };
        let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) else {
            return Err(UrlError::MalformedEscape {
                at: offset + i,
                escape: escape_text(),
            });
        };
        let decoded = u8::try_from(hi * 16 + lo).unwrap_or(0);
        let forbidden = match decoded {
            b'/' => Some("'/'"),
            b'\\' => Some("'\\'"),
            b'%' => Some("'%' (double encoding)"),
            0x00..=0x1f | 0x7f => Some("a control character"),
            _ => None,
        };
        if let Some(what) = forbidden {
            return Err(UrlError::ForbiddenEscape {
                at: offset + i,
                escape: escape_text(),
                decoded: what,
            });
        }
        out.push(decoded);
        i += 3;
    }
    let decoded = String::from_utf8(out).map_err(|e| UrlError::InvalidUtf8 {
        at: offset + e.utf8_error().valid_up_to(),
    })?;
    // C1 controls arrive as two-byte escapes (`%C2%85`).
    if let Some(c) = decoded.chars().find(|c| c.is_control()) {
        let mut utf8 = [0u8; 4];
        let escape: String = c
            .encode_utf8(&mut utf8)
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect();
        let at = raw.find(&escape).map_or(offset, |i| offset + i);
        return Err(UrlError::ForbiddenEscape {
            at,
            escape,
            decoded: "a control character",
        });
    }
    Ok(Cow::Owned(decoded))
}

/// Characters whose creation by NFKC would change how the path splits or decodes.
fn is_structural(c: char) -> bool {
    matches!(c, '/' | ';' | '\\' | '%') || c.is_control()
}

/// Unicode normalization form KC (UAX #15) of `text`, borrowed when it is already in that form.
/// The data is ICU4X's (`icu_normalizer`, Unicode 18.0), which the `url` crate's IDNA already links:
/// one copy of the normalization tables in the WASM package instead of two.
pub(crate) fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    ComposingNormalizerBorrowed::new_nfkc().normalize(text)
}

/// NFKC, refusing results that change the path's structure (see the module docs).
fn nfkc_checked(decoded: &str) -> Result<Cow<'_, str>, UrlError> {
    if matches!(nfkc(decoded), Cow::Borrowed(_)) {
        return Ok(Cow::Borrowed(decoded));
    }
    // Per segment, so that the structure before and after can be compared.
    let mut out = String::with_capacity(decoded.len());
    for (i, segment) in decoded.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let normalized = nfkc(segment).into_owned();
        let created = normalized.chars().filter(|&c| is_structural(c)).count()
            != segment.chars().filter(|&c| is_structural(c)).count();
        let head = |s: &str| s.split(';').next().unwrap_or("").to_owned();
        let new_dot_segment =
            matches!(head(&normalized).as_str(), "." | "..") && head(&normalized) != head(segment);
        if created || new_dot_segment {
            return Err(UrlError::AmbiguousUnicode {
                original: segment.to_owned(),
                normalized,
            });
        }
        out.push_str(&normalized);
    }
    Ok(Cow::Owned(out))
}

/// Full Unicode lowercase; lowercasing can produce text that is not NFKC (rarely), which is then
/// normalized again so that normalization stays idempotent.
fn lowercase(s: &str) -> String {
    let lower = s.to_lowercase();
    match nfkc(&lower) {
        Cow::Borrowed(_) => lower,
        Cow::Owned(normalized) => normalized,
    }
}

/// [`lowercase`], borrowed when there is nothing to lowercase (ASCII without capitals: the usual
/// page URL).
fn lowercase_cow(s: &str) -> Cow<'_, str> {
    if s.is_ascii() && !s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(lowercase(s))
    }
}

/// What [`read_path`] does with `.` and `..` segments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dots {
    /// SPEC 4 step 4: drop `.`, resolve `..`.
    Resolve,
    /// Keep them as ordinary segments: the browser's reading, whose dot segments were resolved
    /// before decoding (SPEC 4 step 6).
    Keep,
}

/// The [`UrlError::ParameterOnlySegment`] of a raw path that has a segment empty once cut at its
/// first `;`: the first segment, as written, that starts with `;` or `%3B` (any case; decoding
/// precedes the cut, so `%3B` cuts as `;` does). `offset` is the raw path's byte offset in the
/// input.
fn parameter_only_error(raw_path: &str, offset: usize) -> UrlError {
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

/// A path read by [`read_path`], with what step 6 needs to know about its segments.
struct Joined {
    /// The canonical path.
    path: String,
    /// A `.` or `..` segment was seen (dot segments resolved): the browser's reading may differ.
    saw_dot_segment: bool,
    /// A segment was empty only because of its `;` parameters (`;a`, `;`).
    saw_parameter_only_segment: bool,
}

/// SPEC 4 steps 3 to 5 on a raw path (without query and fragment; `offset` is its byte offset in
/// the input, for messages): decoded once, NFKC, lowercased unless `case_sensitive`, split on `/`,
/// each segment cut at `;`, empty segments dropped, dot segments handled as `dots` says. Returns
/// the path and what step 6 needs to know about its segments.
fn read_path(
    raw_path: &str,
    offset: usize,
    case_sensitive: bool,
    dots: Dots,
) -> Result<Joined, UrlError> {
    let decoded = percent_decode(raw_path, offset)?;
    let normalized = nfkc_checked(&decoded)?;
    Ok(if case_sensitive {
        join_segments(&normalized, dots)
    } else {
        join_segments(&lowercase_cow(&normalized), dots)
    })
}

/// SPEC 4 steps 4 and 5: split on `/`, cut each segment at `;`, drop empty segments, handle dot
/// segments as `dots` says (`..` stops at the root), join with a leading `/`. Also says whether a
/// `.` or `..` segment, and a segment empty only because of its `;` parameters, were seen.
fn join_segments(path: &str, dots: Dots) -> Joined {
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

/// A raw path as a browser leaves it (WHATWG URL's path state for http(s)): split on `/`, a
/// single-dot segment (`.`, `%2e`) dropped, a double-dot segment (`..`, `.%2e`, `%2e.`, `%2e%2e`,
/// any case) removing the segment before it, whatever it is (an empty one included); empty
/// segments and everything else (`..;`) kept as they are. The result still needs decoding; a
/// trailing slash that WHATWG would add is irrelevant once empty segments are dropped.
fn browser_resolved(raw_path: &str) -> String {
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

/// Normalizes a glob pattern's text the way paths are normalized (SPEC 3): NFKC, then lowercase
/// unless `case_sensitive`. Glob syntax is left alone.
pub(crate) fn normalize_pattern_text(pattern: &str, case_sensitive: bool) -> String {
    let normalized = nfkc(pattern).into_owned();
    if case_sensitive {
        normalized
    } else {
        lowercase(&normalized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> Result<String, DiagnosticCode> {
        normalize_page_url(s, false)
            .map(Cow::into_owned)
            .map_err(|e| e.code())
    }

    #[test]
    fn spec_4_table() {
        let ok = [
            ("/checkout/", "/checkout"),
            ("/CHECKOUT", "/checkout"),
            ("/checkout;jsessionid=1", "/checkout"),
            ("/a/../checkout", "/checkout"),
            ("/%2e%2e/checkout", "/checkout"),
            ("/Checkout//Pay", "/checkout/pay"),
            ("/checkout/./pay", "/checkout/pay"),
            ("https://shop.example/account?next=/x#top", "/account"),
            ("/checkout/../cart", "/cart"),
        ];
        for (input, want) in ok {
            assert_eq!(norm(input), Ok(want.to_owned()), "{input}");
        }
        for input in [
            "//checkout",
            "\\checkout",
            "/x%2F..%2Fcheckout",
            "/x/%252e%252e/checkout",
        ] {
            assert!(norm(input).is_err(), "{input} should be rejected");
        }
    }

    #[test]
    fn rejections_have_their_codes() {
        let cases = [
            ("", DiagnosticCode::Empty),
            ("/a b", DiagnosticCode::Space),
            ("/a\u{1}", DiagnosticCode::ControlCharacter),
            ("/a\u{85}", DiagnosticCode::ControlCharacter),
            ("javascript:alert(1)", DiagnosticCode::UnsupportedScheme),
            ("products/x", DiagnosticCode::Relative),
            ("/%", DiagnosticCode::MalformedEscape),
            ("/%zz", DiagnosticCode::MalformedEscape),
            ("/%4", DiagnosticCode::MalformedEscape),
            ("/%5C", DiagnosticCode::ForbiddenEscape),
            ("/%00", DiagnosticCode::ForbiddenEscape),
            ("/%FF", DiagnosticCode::InvalidUtf8),
            ("/%C3%28", DiagnosticCode::InvalidUtf8),
            ("/%C2%85", DiagnosticCode::ForbiddenEscape),
            ("http:/x", DiagnosticCode::MalformedUrl),
            ("https:///checkout", DiagnosticCode::MalformedUrl),
            ("http://h:99999/", DiagnosticCode::MalformedUrl),
            ("/checkout//../pay", DiagnosticCode::AmbiguousDotSegment),
            ("/checkout//./../pay", DiagnosticCode::AmbiguousDotSegment),
            ("/checkout/..;/pay", DiagnosticCode::AmbiguousDotSegment),
            ("/x/..;/checkout", DiagnosticCode::AmbiguousDotSegment),
            ("/account//x/../%2e%2e", DiagnosticCode::AmbiguousDotSegment),
            ("/cart//%2e/..", DiagnosticCode::AmbiguousDotSegment),
            ("/checkout/\u{2025}/pay", DiagnosticCode::AmbiguousUnicode),
            ("/a\u{ff0f}b", DiagnosticCode::AmbiguousUnicode),
            ("/orders/;a/invoice", DiagnosticCode::ParameterOnlySegment),
            (
                "/checkout/;jsessionid=1",
                DiagnosticCode::ParameterOnlySegment,
            ),
            ("/checkout/;", DiagnosticCode::ParameterOnlySegment),
            ("/;a/", DiagnosticCode::ParameterOnlySegment),
            ("/x/%3Bjsessionid=1/y", DiagnosticCode::ParameterOnlySegment),
            ("/checkout/;a/../pay", DiagnosticCode::ParameterOnlySegment),
            ("/\u{ff05}2e", DiagnosticCode::AmbiguousUnicode),
        ];
        for (input, code) in cases {
            assert_eq!(norm(input), Err(code), "{input:?}");
        }
        assert_eq!(
            norm(&format!("/{}", "a".repeat(8192))),
            Err(DiagnosticCode::TooLong)
        );
        // U+FDFA expands to 18 characters (33 bytes) under NFKC: 300 of them fit the input limit
        // (900 bytes) but not the output limit.
        assert_eq!(
            norm(&format!("/{}", "\u{FDFA}".repeat(300))),
            Err(DiagnosticCode::TooLong)
        );
        assert!(norm(&format!("/{}", "a".repeat(8191))).is_ok());
    }

    /// SPEC 4 step 6: a segment cut to nothing by its `;` parameters is named as written, with
    /// its byte offset; a segment that keeps a name before its `;` is accepted.
    #[test]
    fn parameter_only_segments() {
        let err = normalize_page_url("https://h.example/Orders/;A=1/invoice", false).unwrap_err();
        assert_eq!(
            err,
            UrlError::ParameterOnlySegment {
                at: 25,
                segment: ";A=1".to_owned()
            }
        );
        assert!(err.to_string().contains("\";A=1\" at byte 25"), "{err}");
        assert_eq!(
            normalize_page_url("/x/%3bjsessionid=1", false).unwrap_err(),
            UrlError::ParameterOnlySegment {
                at: 3,
                segment: "%3bjsessionid=1".to_owned()
            }
        );
        for (input, want) in [
            ("/checkout;jsessionid=1", "/checkout"),
            ("/checkout%3Bjsessionid=1", "/checkout"),
            ("/checkout;", "/checkout"),
            ("/checkout/a;b;c", "/checkout/a"),
            ("/checkout?x=/;a/", "/checkout"),
        ] {
            assert_eq!(norm(input), Ok(want.to_owned()), "{input}");
        }
    }

    #[test]
    fn unicode_and_case() {
        assert_eq!(norm("/\u{ff43}\u{ff48}eckout"), Ok("/checkout".to_owned()));
        assert_eq!(norm("/CAF%C3%89"), Ok("/café".to_owned()));
        assert_eq!(norm("/\u{fb01}le"), Ok("/file".to_owned()));
        assert_eq!(norm("/ÜBER"), Ok("/über".to_owned()));
        assert_eq!(
            normalize_page_url("/Products/X", true).unwrap(),
            "/Products/X"
        );
    }

    #[test]
    fn absolute_urls() {
        assert_eq!(
            norm("HTTPS://Shop.Example/Products"),
            Ok("/products".to_owned())
        );
        assert_eq!(norm("https://shop.example"), Ok("/".to_owned()));
        assert_eq!(norm("https://shop.example?x=1"), Ok("/".to_owned()));
        assert_eq!(norm("http://u:p@h:8080/a/b/"), Ok("/a/b".to_owned()));
        assert_eq!(norm("/.."), Ok("/".to_owned()));
        assert_eq!(norm("/a/../../b"), Ok("/b".to_owned()));
    }

    #[test]
    fn fast_path_agrees() {
        for p in ["/", "/a", "/a.b", "/a/b-c_d~e", "/a/...", "/a/.x"] {
            assert!(is_canonical(p, false), "{p}");
            assert_eq!(normalize_slow(p, false).unwrap(), p);
        }
        for p in [
            "/a/", "/a//b", "/a/./b", "/a/..", "/.", "/A", "/a;b", "/a%41", "/a?b",
        ] {
            assert!(!is_canonical(p, false), "{p}");
        }
    }
}
