//! Differential: our matchers (literal index, segment globs, globset fallback) and globset itself
//! give the same verdict for every pattern on every normalized path, and accept the same patterns.
//!
//! The input is read as choices: the pattern is built from glob pieces (or, when the first byte
//! says so, taken as raw text up to a 0xFF byte), the path from normalized segments. A glob with a
//! literal segment after a wildcard (`/a/*/b`) goes, alone in its set, into the segment index's
//! fixed-position tier (its key is then shared by no more globs than its prefix), so the target
//! covers that index as well as the prefix, first-start and suffix ones.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nudge_rules::glob_verdicts;

const PIECES: &[&str] = &[
    "a", "b", "ab", "é", "*", "?", "a*", "*a", "a*b", "?b", "[ab]", "[a-c]", "[!a]", "[]a]", "[-a]",
    "[a-]", "[--a]", "**", "a**", "[é]", "\\*", "{a,b}", "{a,b*}", "{ab,é}", "x,y", "]", "[a", "*{a,b}",
    "{a,b}*", "{a,}", "}", "{a/b,c}", "[^b]", "/", "[0-9]", "-", "[a-z]?", "{b,ab}/**", "{*a,b?}",
    "{a*/b,**}", "{a,/*}", "[!]a]", "[!-]", "x[!b]?", "[a-é]", "[é-ü]",
];
const SEGMENTS: &[&str] = &["a", "b", "ab", "ba", "aab", "é", "x", "-", "]", "a,b", "*", "bb", "0"];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> usize {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        self.0 = rest;
        usize::from(first)
    }
    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[self.next() % from.len()]
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let pattern = if b.next() % 4 == 0 {
        let raw = b.0.split(|&x| x == 0xFF).next().unwrap_or_default();
        b.0 = &b.0[raw.len().min(b.0.len())..];
        let Ok(text) = std::str::from_utf8(raw) else {
            return;
        };
        text.to_owned()
    } else {
        let mut p = ["/", "/", "**/", "**"][b.next() % 4].to_owned();
        for k in 0..1 + b.next() % 5 {
            if k > 0 {
                p.push('/');
            }
            for _ in 0..1 + b.next() % 3 {
                p.push_str(b.pick(PIECES));
            }
        }
        p
    };
    for _ in 0..8 {
        let mut path = String::new();
        for _ in 0..b.next() % 6 {
            path.push('/');
            path.push_str(b.pick(SEGMENTS));
        }
        if path.is_empty() {
            path.push('/');
        }
        if let Some((ours, reference)) = glob_verdicts(&pattern, &path) {
            assert_eq!(ours, reference, "{pattern:?} on {path:?}");
        }
    }
});
