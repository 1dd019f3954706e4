//! Small text helpers for messages and reasons: thousands separators, binary sizes, quoting.

use std::fmt::{self, Write as _};

/// `86400000` as `86,400,000`, for messages.
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in bytes as a person states a limit: `1 MiB`, `64 KiB`, `512 bytes`.
pub(crate) fn binary_size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    match bytes {
        0 => "0 bytes".to_owned(),
        n if n % MIB == 0 => format!("{} MiB", n / MIB),
        n if n % KIB == 0 => format!("{} KiB", n / KIB),
        n => format!("{} bytes", group(n as u64)),
    }
}

/// Text quoted and escaped as Rust's `{:?}` does (`"/a\"b"`), without its per-character escape
/// work for the usual text (printable ASCII without `"` or `\`): reason texts quote rule ids and
/// patterns on every preview.
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_plain(self.0) {
            f.write_str("\"")?;
            f.write_str(self.0)?;
            f.write_str("\"")
        } else {
            write!(f, "{:?}", self.0)
        }
    }
}

/// Printable ASCII without `"` or `\\`: `{:?}` only adds the quotes.
pub(crate) fn is_plain(text: &str) -> bool {
    text.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

/// Appends `text` quoted as [`Quoted`] displays it.
pub(crate) fn push_quoted(out: &mut String, text: &str) {
    if is_plain(text) {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        let _ = write!(out, "{text:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_formats_thousands() {
        assert_eq!(group(86_400_000), "86,400,000");
        assert_eq!(group(100), "100");
        assert_eq!(group(1000), "1,000");
    }

    #[test]
    fn binary_sizes() {
        assert_eq!(binary_size(1 << 20), "1 MiB");
        assert_eq!(binary_size(64 * 1024), "64 KiB");
        assert_eq!(binary_size(512), "512 bytes");
        assert_eq!(binary_size(8192), "8 KiB");
        assert_eq!(binary_size(1500), "1,500 bytes");
    }

    #[test]
    fn quoted_is_debug_formatting() {
        for text in [
            "",
            "/a/**",
            "a\"b",
            "a\\b",
            "tab\t",
            "é",
            "/caf\u{e9}/*",
            "\u{7f}",
            "\u{200b}",
        ] {
            assert_eq!(Quoted(text).to_string(), format!("{text:?}"));
            let mut pushed = String::new();
            push_quoted(&mut pushed, text);
            assert_eq!(pushed, format!("{text:?}"));
        }
    }
}
