//! Accepted forms (docs/contract/urls.md steps 1 and 2): decides whether the input is a path starting with
//! exactly one `/` or an absolute http(s) URL with a valid host, rejects raw spaces, `\` and
//! control characters, and splits off the raw path (without query and fragment) with its byte
//! offset in the input.

use super::error::UrlError;
use crate::host;
use crate::limits::MAX_PAGE_URL_BYTES;

/// docs/contract/urls.md step 2 on the whole input, before its form is read: not empty, at most
/// [`MAX_PAGE_URL_BYTES`], no raw space, `\` or control character anywhere (query included).
pub(super) fn check_input(page_url: &str) -> Result<(), UrlError> {
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
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Splits off the path of `page_url` (without query and fragment) and its byte offset in the
/// input, validating the scheme and authority of absolute URLs.
pub(super) fn raw_path(page_url: &str) -> Result<(&str, usize), UrlError> {
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
            reason: msg!("expected \"//\" and a host after \"{scheme}:\""),
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
