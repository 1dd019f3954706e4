//! Unicode (SPEC 4 step 3, SPEC 3 for patterns): NFKC with ICU4X's tables and full lowercase,
//! and the fail-closed rule that NFKC may not change the path's structure (create a `/`, `;`,
//! `\`, `%`, a control character, or a `.`/`..` segment: `/checkout/‥/pay`, `/a／b`).

use std::borrow::Cow;

use icu_normalizer::ComposingNormalizerBorrowed;

use super::error::UrlError;

/// Characters whose creation by NFKC would change how the path splits or decodes.
fn is_structural(c: char) -> bool {
    matches!(c, '/' | ';' | '\\' | '%') || c.is_control()
}

/// Unicode normalization form KC (UAX #15) of `text`, borrowed when it is already in that form.
/// The data is ICU4X's (`icu_normalizer`, Unicode 18.0), which the `url` crate's IDNA already links:
/// one copy of the normalization tables in the WASM package instead of two.
fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    ComposingNormalizerBorrowed::new_nfkc().normalize(text)
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
    let lower = s.to_lowercase();
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
