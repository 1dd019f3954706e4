//! What a rejected `page_url` is: [`UrlError`], one variant per reason of docs/contract/urls.md (and the
//! fail-closed readings beyond it), each with a sentence a person can act on and a stable code.

use crate::code::DiagnosticCode;
use crate::limits::MAX_PAGE_URL_BYTES;
use crate::text::group;

/// Why a `page_url` was rejected (docs/contract/urls.md step 2; step 6: dot segments that a browser reads
/// otherwise, and segments that are only `;` parameters; and, beyond docs/contract/urls.md, Unicode
/// normalization that changes the path's structure). `Display` is a sentence a person can act
/// on; [`UrlError::code`] is a stable machine-readable name.
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
    #[error(
        "page_url contains the control character U+{code_point:04X} at byte {at}; percent-encode it or remove it"
    )]
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
    #[error(
        "page_url starts with \"//\", which reads as a host name; a path starts with exactly one '/'"
    )]
    DoubleSlash,
    /// A scheme other than http or https (`javascript:`, `mailto:`, `ftp:`).
    #[error(
        "page_url has the scheme \"{scheme}:\"; only http and https URLs and paths starting with '/' are accepted"
    )]
    UnsupportedScheme {
        /// The scheme as written.
        scheme: String,
    },
    /// Neither a path starting with `/` nor an absolute URL (`products/x`, `?q=1`).
    #[error(
        "page_url is a relative reference; give a path starting with '/' or an absolute http(s) URL"
    )]
    Relative,
    /// An `http:`/`https:` URL that is not of the form `scheme://host/...`, or that the URL parser
    /// rejects (bad host, bad port).
    #[error("page_url is not a valid absolute URL: {reason}")]
    MalformedUrl {
        /// What is wrong with it.
        reason: String,
    },
    /// `%` not followed by two hex digits (`%`, `%zz`, `%4`).
    #[error(
        "page_url has a malformed percent escape {escape:?} at byte {at}; '%' must be followed by two hex digits"
    )]
    MalformedEscape {
        /// Byte offset of the `%`.
        at: usize,
        /// The escape as written (up to three characters).
        escape: String,
    },
    /// An escape that decodes to `/`, `\`, `%` (double encoding) or a control character.
    #[error(
        "page_url has the escape {escape} at byte {at}, which decodes to {decoded}; such escapes are ambiguous and rejected"
    )]
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
    #[error(
        "page_url contains {original:?}, which Unicode normalization (NFKC) turns into {normalized:?} and so changes the path's structure; ambiguous, rejected"
    )]
    AmbiguousUnicode {
        /// The segment as decoded.
        original: String,
        /// The same segment after NFKC.
        normalized: String,
    },
    /// The path's dot segments put a browser on another page than docs/contract/urls.md's steps do (docs/contract/urls.md step
    /// 6): `/checkout//./../pay` (a browser resolves `..` against the empty segment; the steps
    /// drop empty segments first) or `/x/..;/checkout` (a browser keeps `..;` as a segment).
    #[error(
        "page_url reads as {spec_path:?} by the normalization steps (docs/contract/urls.md) but as {browser_path:?} in a browser, which resolves dot segments before dropping empty segments and cutting ';' parameters; ambiguous, rejected"
    )]
    AmbiguousDotSegment {
        /// The path docs/contract/urls.md's steps 1 to 5 give.
        spec_path: String,
        /// The path as a browser reads it (WHATWG path, then steps 3 and 4 without dot
        /// resolution).
        browser_path: String,
    },
    /// A segment that is empty only because its `;` parameters are cut (docs/contract/urls.md step 6):
    /// `/orders/;a/invoice`, `/checkout/;jsessionid=1`, `/checkout/;`. docs/contract/urls.md's steps drop it;
    /// a server that keeps path parameters routes it as a page of its own.
    #[error(
        "page_url has the segment {segment:?} at byte {at}, which is empty once its ';' parameters are cut: servers that keep path parameters read it as a page of its own, servers that cut them drop it; ambiguous, rejected (put the parameters on a segment with a name, as in \"/checkout;jsessionid=1\", or remove them)"
    )]
    ParameterOnlySegment {
        /// Byte offset of the segment in the input.
        at: usize,
        /// The segment as written (`;a`, `%3Bx`).
        segment: String,
    },
}

crate::code::impl_url_error_code!();
