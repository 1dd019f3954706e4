//! Helpers shared by the integration suites.

use unicode_normalization::UnicodeNormalization;

/// docs/contract/urls.md step 6's browser reading of a WHATWG pathname (dot segments already resolved by the URL
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

/// splitmix64: a small deterministic generator, enough for test inputs.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// One of `from` (not empty).
    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}
