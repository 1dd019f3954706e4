//! Helpers shared by integration tests.

use unicode_normalization::UnicodeNormalization;

/// SPEC 4 step 6's browser reading of a WHATWG pathname (dot segments already resolved by the URL
/// parser): decoded once, NFKC, lowercased unless `case_sensitive`, `;` parameters cut, empty
/// segments dropped. `None` when the decoded bytes are not UTF-8.
pub fn browser_reading(pathname: &str, case_sensitive: bool) -> Option<String> {
    let bytes = pathname.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |j: usize| bytes.get(j).and_then(|&b| (b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                decoded.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    let text: String = String::from_utf8(decoded).ok()?.nfkc().collect();
    let text = if case_sensitive {
        text
    } else {
        text.to_lowercase().nfkc().collect()
    };
    let mut out = String::new();
    for segment in text.split('/') {
        let segment = segment.split(';').next().unwrap_or("");
        if !segment.is_empty() {
            out.push('/');
            out.push_str(segment);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Some(out)
}
