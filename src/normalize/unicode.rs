//! Unicode (docs/contract/urls.md step 3, docs/contract/patterns.md for patterns): NFKC with ICU4X's tables and full lowercase,
//! and the fail-closed rule that NFKC may not change the path's structure (create a `/`, `;`,
//! `\`, `%`, a control character, or a `.`/`..` segment: `/checkout/‥/pay`, `/a／b`).

use std::borrow::Cow;

#[cfg(not(all(feature = "slim", target_arch = "wasm32")))]
use icu_normalizer::ComposingNormalizerBorrowed;

use super::error::UrlError;

/// Characters whose creation by NFKC would change how the path splits or decodes.
fn is_structural(c: char) -> bool {
    matches!(c, '/' | ';' | '\\' | '%') || c.is_control()
}

/// Unicode normalization form KC (UAX #15) of `text`, borrowed when it is already in that form.
/// The data is ICU4X's (`icu_normalizer`, Unicode 18.0), which the `url` crate's IDNA already links:
/// one copy of the normalization tables in the WASM package instead of two.
#[cfg(not(all(feature = "slim", target_arch = "wasm32")))]
fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    ComposingNormalizerBorrowed::new_nfkc().normalize(text)
}

/// NFKC in the slim WASM module for storefront pages (docs/contract/storefront.md): the platform's own
/// `String.prototype.normalize('NFKC')`, registered by the facade when the module starts
/// (`use_platform_unicode`; this module has no platform code), which keeps ICU4X's tables out of
/// the `.wasm`. It agrees with ICU4X on every vector and on every character the platform's Unicode
/// knows (pkg/test/slim-nfkc.test.mjs, in Node and in Chromium), and the slim module decides as
/// the first one (pkg/test/slim-parity.test.mjs).
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    match PLATFORM.get() {
        Some(platform) => {
            let normalized = (platform.nfkc)(text);
            if normalized == text {
                Cow::Borrowed(text)
            } else {
                Cow::Owned(normalized)
            }
        }
        // Not registered (the facade always registers it): the text as it is.
        None => Cow::Borrowed(text),
    }
}

/// Full Unicode lowercase: the standard library's tables, or in the slim WASM module the
/// platform's `String.prototype.toLowerCase()` (the same Unicode default case conversion, Final
/// Sigma included; checked like NFKC by pkg/test/slim-nfkc.test.mjs).
#[cfg(not(all(feature = "slim", target_arch = "wasm32")))]
fn to_lowercase(s: &str) -> String {
    s.to_lowercase()
}

/// [`to_lowercase`] in the slim WASM module: the platform's (none registered, which the facade
/// never leaves: ASCII only).
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
fn to_lowercase(s: &str) -> String {
    match PLATFORM.get() {
        Some(platform) if !s.is_ascii() => (platform.lowercase)(s),
        _ => s.to_ascii_lowercase(),
    }
}

/// The platform's Unicode functions, for the slim WASM module.
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
pub(crate) struct PlatformUnicode {
    /// `text.normalize('NFKC')`.
    pub nfkc: fn(&str) -> String,
    /// `text.toLowerCase()`.
    pub lowercase: fn(&str) -> String,
}

#[cfg(all(feature = "slim", target_arch = "wasm32"))]
static PLATFORM: std::sync::OnceLock<PlatformUnicode> = std::sync::OnceLock::new();

/// Registers the platform's NFKC and lowercase (JS `String.prototype.normalize` and
/// `toLowerCase`) for the slim WASM module. Only the first registration counts.
#[cfg(all(feature = "slim", target_arch = "wasm32"))]
pub(crate) fn use_platform_unicode(platform: PlatformUnicode) {
    let _ = PLATFORM.set(platform);
}

/// NFKC, refusing results that change the path's structure (see the module docs).
pub(super) fn nfkc_checked(decoded: &str) -> Result<Cow<'_, str>, UrlError> {
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
    let lower = to_lowercase(s);
    match nfkc(&lower) {
        Cow::Borrowed(_) => lower,
        Cow::Owned(normalized) => normalized,
    }
}

/// [`lowercase`], borrowed when there is nothing to lowercase (ASCII without capitals: the usual
/// page URL).
pub(super) fn lowercase_cow(s: &str) -> Cow<'_, str> {
    if s.is_ascii() && !s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(lowercase(s))
    }
}

/// Normalizes a glob pattern's text the way paths are normalized (docs/contract/patterns.md): NFKC, then lowercase
/// unless `case_sensitive`. Glob syntax is left alone.
pub(crate) fn normalize_pattern_text(pattern: &str, case_sensitive: bool) -> String {
    let normalized = nfkc(pattern).into_owned();
    if case_sensitive {
        normalized
    } else {
        lowercase(&normalized)
    }
}
