//! Page URL normalization (docs/contract/urls.md): one canonical path per page, or a typed rejection.
//!
//! The policy fails closed: input that could be read two ways is rejected rather than guessed at.
//!
//! **The browser's reading decides** (docs/contract/urls.md step 6). A browser resolves dot segments before any
//! server sees the path (WHATWG URL: `%2e` is a dot, empty segments are kept, `..;` is an ordinary
//! segment), while docs/contract/urls.md's steps 3 and 4 drop empty segments and cut `;` parameters first. Both
//! readings are computed whenever the path has a dot segment in either, and a URL whose two
//! readings differ is rejected ([`UrlError::AmbiguousDotSegment`] names both):
//! `/checkout//./../pay` (a browser is on `/checkout/pay`, the steps alone give `/pay`),
//! `/checkout/..;/pay` (Tomcat-style servers resolve `..;`, browsers keep it). A segment that is
//! empty only because its `;` parameters are cut (`/orders/;a/invoice`) is rejected too
//! ([`UrlError::ParameterOnlySegment`]): servers that keep path parameters route it. The
//! `browser_reading` test checks the property against the `url` crate's WHATWG parser on generated
//! URLs, and `pkg/test/browser-reading.test.mjs` against Node's `URL`.
//!
//! Beyond docs/contract/urls.md's list, Unicode normalization (NFKC) that creates a `/`, `;`, `\`, `%`, a control
//! character, or a `.`/`..` segment that was not there before (`/checkout/‥/pay`, `/a／b`) is
//! rejected too: the server sees one segment where NFKC would see several (recorded in the
//! README).
//!
//! One concern per file, in the order a URL meets them:
//!
//! - `canonical.rs`: the fast path (an input that is already canonical is returned borrowed);
//! - `form.rs`: accepted forms, characters refused anywhere, the raw path (steps 1 and 2);
//! - `decode.rs`: percent-decoding and the escapes refused (step 3);
//! - `unicode.rs`: NFKC and lowercase, refusing NFKC that changes the structure (step 3);
//! - `segments.rs`: splitting, `;` cut, empty and dot segments, joining (steps 4 and 5);
//! - `browser.rs`: the browser's reading and the `;`-only segment (step 6);
//! - `error.rs`: [`UrlError`], what a rejection says.
//!
//! This file decides the order: the fast path, then steps 1 to 5, then step 6's comparison and
//! the output length limit.

mod browser;
mod canonical;
mod decode;
mod error;
mod form;
mod segments;
#[cfg(test)]
mod tests;
mod unicode;

use std::borrow::Cow;

use crate::limits::MAX_PAGE_URL_BYTES;

pub use error::UrlError;
pub(crate) use unicode::normalize_pattern_text;
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
pub(crate) use unicode::{PlatformUnicode, use_platform_unicode};

use browser::{browser_resolved, parameter_only_error};
use canonical::is_canonical;
use decode::percent_decode;
use form::{check_input, raw_path};
use segments::{Dots, Joined, join_segments};
use unicode::{lowercase_cow, nfkc_checked};

/// Turns a `page_url` into its canonical path (docs/contract/urls.md), or says why it is rejected.
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
/// // docs/contract/urls.md step 6: a browser keeps `..;` as a segment; Tomcat-style servers resolve it.
/// assert!(normalize_page_url("/x/..;/checkout", false).is_err());
/// assert_eq!(normalize_page_url("/a/%2E%2e/checkout", false).unwrap(), "/checkout");
/// assert!(normalize_page_url("/x%2F..%2Fcheckout", false).is_err());
/// ```
///
/// # Errors
///
/// A [`UrlError`] (its variant in parentheses) for:
///
/// - the empty string (`Empty`); more than 8,192 bytes (`TooLong`);
/// - a raw control character, space or `\` (`ControlCharacter`, `Space`, `Backslash`);
/// - a path starting with `//` (`DoubleSlash`); a scheme other than http(s)
///   (`UnsupportedScheme`); a relative reference (`Relative`);
/// - an absolute URL without `//` and a host, or that the URL parser rejects (`MalformedUrl`);
/// - a malformed escape, `%` or `%zz` (`MalformedEscape`); an escape decoding to `/`, `\`, `%`
///   or a control character (`ForbiddenEscape`); decoded bytes that are not UTF-8
///   (`InvalidUtf8`);
/// - NFKC changing the path's structure (`AmbiguousUnicode`);
/// - dot segments that put a browser on another page than docs/contract/urls.md's steps (step 6:
///   `/checkout//./../pay`, `/x/..;/checkout`; `AmbiguousDotSegment`), and segments that are
///   empty once their `;` parameters are cut (`ParameterOnlySegment`).
pub fn normalize_page_url(page_url: &str, case_sensitive: bool) -> Result<Cow<'_, str>, UrlError> {
    if is_canonical(page_url, case_sensitive) {
        return Ok(Cow::Borrowed(page_url));
    }
    normalize_slow(page_url, case_sensitive).map(Cow::Owned)
}

/// [`normalize_page_url`] without the fast path, for the differential fuzz target (built with
/// `--cfg fuzzing` by cargo-fuzz only).
#[cfg(fuzzing)]
pub fn normalize_page_url_full(page_url: &str, case_sensitive: bool) -> Result<String, UrlError> {
    normalize_slow(page_url, case_sensitive)
}

fn normalize_slow(page_url: &str, case_sensitive: bool) -> Result<String, UrlError> {
    check_input(page_url)?;
    let (raw_path, offset) = raw_path(page_url)?;
    let Joined {
        path,
        saw_dot_segment,
        saw_parameter_only_segment,
    } = read_path(raw_path, offset, case_sensitive, Dots::Resolve)?;
    if saw_parameter_only_segment {
        // docs/contract/urls.md step 6: servers read a `;`-only segment two ways.
        return Err(parameter_only_error(raw_path, offset));
    }
    if saw_dot_segment {
        // docs/contract/urls.md step 6: only dot segments can make the two readings differ.
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

/// docs/contract/urls.md steps 3 to 5 on a raw path (without query and fragment; `offset` is its byte offset in
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
