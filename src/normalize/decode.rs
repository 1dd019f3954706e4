//! Percent-decoding (docs/contract/urls.md step 3): decodes the path's escapes once, and decides which escapes
//! are refused: malformed ones (`%`, `%zz`), those that decode to `/`, `\`, `%` (double encoding)
//! or a control character (C1 included), and decoded bytes that are not UTF-8.

use std::borrow::Cow;

use super::error::UrlError;

/// Percent-decodes once (docs/contract/urls.md step 3), rejecting malformed escapes and escapes that decode to
/// `/`, `\`, `%` or a control character, and decoded bytes that are not UTF-8.
pub(super) fn percent_decode(raw: &str, offset: usize) -> Result<Cow<'_, str>, UrlError> {
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
