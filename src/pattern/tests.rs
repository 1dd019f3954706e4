//! The pattern matchers against globset, the reference (docs/contract/patterns.md): tables and a differential test
//! on generated patterns and paths.

use globset::{Candidate, GlobSet};

use super::PatternSet;
use super::check::{check, globs_of};
use super::literal::{has_literal_forms, literal_forms};
use super::segment::segment_globs;
use crate::code::DiagnosticCode;
use crate::normalize::normalize_pattern_text;

fn set(patterns: &[&str]) -> PatternSet<u32> {
    let owned: Vec<(u32, &str)> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| (i as u32, *p))
        .collect();
    PatternSet::build(&owned).unwrap()
}

fn owners(s: &PatternSet<u32>, path: &str) -> Vec<u32> {
    let mut out = Vec::new();
    s.matching_owners(path, &mut out);
    out
}

#[test]
fn glob_semantics_table() {
    // (pattern, path, matches)
    let table = [
        ("/checkout/**", "/checkout", true),
        ("/checkout/**", "/checkout/pay", true),
        ("/checkout/**", "/checkout/pay/confirm", true),
        ("/checkout/**", "/checkoutx", false),
        ("/**", "/", true),
        ("/**", "/a/b", true),
        ("/", "/", true),
        ("/", "/a", false),
        ("/products/*", "/products/a", true),
        ("/products/*", "/products/a/b", false),
        ("/p?", "/pa", true),
        ("/p?", "/p/", false),
        ("**/reviews", "/products/a/reviews", true),
        ("**/reviews", "/reviews", true),
        ("/{a,b}/x", "/b/x", true),
        ("/[abc]x", "/bx", true),
        ("/[!abc]x", "/bx", false),
        ("/a\\*", "/a*", true),
        ("/a\\*", "/ab", false),
        (
            "/collections/{sale,clearance}/**",
            "/collections/sale",
            true,
        ),
        (
            "/collections/{sale,clearance}/**",
            "/collections/clearance/x",
            true,
        ),
    ];
    for (pattern, path, want) in table {
        let s = set(&[pattern]);
        assert_eq!(!owners(&s, path).is_empty(), want, "{pattern} vs {path}");
    }
}

#[test]
fn literal_index_agrees_with_globset() {
    let patterns = [
        "/",
        "/a",
        "/a/**",
        "/a/b",
        "/a/b/**",
        "/{a,b}/**",
        "/x/{a,b}/c",
        "/{a,b}{c,d}",
        "/**",
        "**",
        "/a.b",
        "/a-b/**",
        "/{a,}",
        "/é/**",
    ];
    let paths = [
        "/", "/a", "/a/b", "/a/b/c", "/ab", "/b", "/b/x", "/x/a/c", "/x/b/c", "/x/c/c", "/ac",
        "/bd", "/a.b", "/a-b", "/a-b/c", "/é", "/é/x", "/éx",
    ];
    for pattern in patterns
        .iter()
        .chain(&["/a*", "/a/*/**", "**/a", "/a/[b]/**", "/a\\*"])
    {
        assert_eq!(
            has_literal_forms(pattern),
            literal_forms(pattern).is_some(),
            "{pattern}"
        );
    }
    for pattern in patterns {
        let ours = PatternSet::build(&[(0, pattern)]);
        let reference = globs_of(pattern).and_then(|g| GlobSet::new(&g));
        match (ours, reference) {
            (Ok(ours), Ok(reference)) => {
                for path in paths {
                    let mut out = Vec::new();
                    ours.matching_owners(path, &mut out);
                    let want = reference.is_match_candidate(&Candidate::from_bytes(path));
                    assert_eq!(!out.is_empty(), want, "{pattern} vs {path}");
                    assert_eq!(ours.first_owner(path).is_some(), want);
                }
            }
            (ours, reference) => assert_eq!(ours.is_ok(), reference.is_ok(), "{pattern}"),
        }
    }
    assert_eq!(literal_forms("/{a,b}/**").map(|f| f.len()), Some(2));
    assert_eq!(literal_forms("/*/x"), None);
    assert_eq!(literal_forms("**/x"), None);
}

/// A small deterministic generator (xorshift) for the differential test.
struct Rng(u64);

impl Rng {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        from[(self.0 % from.len() as u64) as usize]
    }
}

/// Our matchers (literal index, segment globs, globset fallback) against globset itself on
/// generated patterns and paths: the same verdict on every pair, and every pattern that our
/// matchers take without globset is one that globset accepts.
#[test]
fn segment_globs_agree_with_globset() {
    let pieces = [
        "a",
        "b",
        "ab",
        "é",
        "*",
        "?",
        "a*",
        "*a",
        "a*b",
        "?b",
        "[ab]",
        "[a-c]",
        "[!a]",
        "[]a]",
        "[-a]",
        "[a-]",
        "[--a]",
        "**",
        "a**",
        "[é]",
        "\\*",
        "{a,b}",
        "{a,b*}",
        "{ab,é}",
        "x,y",
        "]",
        "[a",
        "*{a,b}",
        "{a,b}*",
        "{a,}",
        "{,a}",
        "{,}",
        "{a,,b*}",
        "{,/}",
        "}",
        "{a/b,c}",
        "[^b]",
        "{*a,b?}",
        "{a*/b,**}",
        "{a,/*}",
        "[!]a]",
        "[!-]",
        "x[!b]?",
        "[a-é]",
        "[é-ü]",
    ];
    let starts = ["/", "/", "/", "**/", "**"];
    let path_segments = [
        "a", "b", "ab", "ba", "aab", "é", "x", "-", "]", "a,b", "*", "bb",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut covered, mut automata, mut compared) = (0, 0, 0);
    // Patterns that the segment index files by a literal segment at a fixed position.
    let mut by_fixed_position = 0;
    let mut all = Vec::new();
    // GLOB_PATTERNS=N for a longer run.
    let count: usize = std::env::var("GLOB_PATTERNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    for _ in 0..count {
        let mut pattern = rng.pick(&starts).to_owned();
        let segments = 1 + rng.pick(&["0", "1", "2", "3"]).parse::<usize>().unwrap();
        for k in 0..segments {
            if k > 0 {
                pattern.push('/');
            }
            let count = 1 + rng.pick(&["0", "0", "1", "2"]).parse::<usize>().unwrap();
            for _ in 0..count {
                pattern.push_str(rng.pick(&pieces));
            }
        }
        let normalized = match check(&pattern, true) {
            Ok(normalized) => normalized,
            Err(e) => {
                // Refused as a glob only when globset refuses it.
                let text = normalize_pattern_text(&pattern, true);
                if e.code == DiagnosticCode::PatternSyntax {
                    assert!(globs_of(&text).is_err(), "{text}");
                }
                continue;
            }
        };
        assert!(globs_of(&normalized).is_ok(), "{normalized} passed check");
        let reference = globs_of(&normalized).and_then(|g| GlobSet::new(&g));
        let ours = PatternSet::build(&[(0, &normalized)]);
        if segment_globs(&normalized).is_some() {
            covered += 1;
            assert!(reference.is_ok(), "{normalized} is not a globset glob");
        } else if literal_forms(&normalized).is_none() {
            automata += 1;
        }
        // Every pattern check() accepts compiles: no regex, so no size limit can refuse it.
        let ours = ours.unwrap_or_else(|_| panic!("{normalized} accepted by check, not compiled"));
        let [_, _, fixed, _, _] = ours.segment.index_sizes();
        by_fixed_position += usize::from(fixed > 0);
        let Ok(reference) = reference else {
            continue;
        };
        if all.len() < 2000 {
            all.push((normalized.clone(), reference.clone()));
        }
        for _ in 0..40 {
            let mut path = String::new();
            let depth = rng
                .pick(&["0", "1", "1", "2", "3", "4"])
                .parse::<usize>()
                .unwrap();
            for _ in 0..depth {
                path.push('/');
                path.push_str(rng.pick(&path_segments));
            }
            if path.is_empty() {
                path.push('/');
            }
            let want = reference.is_match_candidate(&Candidate::from_bytes(&path));
            assert_eq!(
                !owners(&ours, &path).is_empty(),
                want,
                "{normalized} vs {path}"
            );
            assert_eq!(ours.first_owner(&path).is_some(), want);
            compared += 1;
        }
    }
    assert!(
        covered > 1000 && automata > 1000 && compared > 200_000 && by_fixed_position > 100,
        "{covered} segment globs ({by_fixed_position} by a fixed-position segment), {automata} automata, {compared} comparisons"
    );
    // All of them in one set: each path gets exactly the owners whose pattern matches it.
    let texts: Vec<(u32, &str)> = (0..).zip(all.iter().map(|(p, _)| p.as_str())).collect();
    let set = PatternSet::build(&texts).unwrap();
    for _ in 0..2000 {
        let mut path = String::new();
        for _ in 0..rng
            .pick(&["1", "1", "2", "3", "4"])
            .parse::<usize>()
            .unwrap()
        {
            path.push('/');
            path.push_str(rng.pick(&path_segments));
        }
        let want: Vec<u32> = (0..)
            .zip(&all)
            .filter(|(_, (_, r))| r.is_match_candidate(&Candidate::from_bytes(&path)))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(owners(&set, &path), want, "{path}");
        assert_eq!(set.first_owner(&path), want.first().copied());
    }
}

#[test]
fn owners_are_sorted_and_deduplicated() {
    let s = PatternSet::build(&[(7, "/a/**"), (3, "/a"), (7, "/**")]).unwrap();
    assert_eq!(owners(&s, "/a"), vec![3, 7]);
    assert_eq!(s.first_owner("/a"), Some(3));
}

/// Sets of globs whose distinguishing literal follows a wildcard (`/shop/*/c1/*-sale`,
/// `/brands/*/b2/**`), the shapes that the segment index files by a literal segment at a fixed
/// position, mixed with globs that share those literals at other places: every owner that
/// globset finds, and no other, on generated paths. The literals come from a small pool, so that
/// keys are shared by few or many globs and each index gets some.
#[test]
fn fixed_position_index_agrees_with_globset() {
    let literals = ["a", "b", "c1", "c2", "shop", "x"];
    let wilds = ["*", "?", "*-sale", "c*", "[ab]", "**"];
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut compared = 0;
    let mut sizes = [0; 5];
    for round in 0..200 {
        let mut patterns = Vec::new();
        for _ in 0..1 + round % 40 {
            let mut pattern = String::new();
            for _ in 0..1 + rng.pick(&["1", "2", "3", "4"]).parse::<usize>().unwrap() {
                pattern.push('/');
                // Literals and wildcards half and half: most patterns have a literal after a
                // wildcard, some start with one (prefix index) or end with one (suffix index).
                let from: &[&str] = if rng.pick(&["l", "w"]) == "l" {
                    &literals
                } else {
                    &wilds
                };
                pattern.push_str(rng.pick(from));
            }
            if rng.pick(&["", "", "/**"]) == "/**" {
                pattern.push_str("/**");
            }
            patterns.push(pattern);
        }
        let texts: Vec<(u32, &str)> = (0..).zip(patterns.iter().map(String::as_str)).collect();
        let ours = PatternSet::build(&texts).unwrap();
        for (total, n) in sizes.iter_mut().zip(ours.segment.index_sizes()) {
            *total += n;
        }
        let reference: Vec<GlobSet> = patterns
            .iter()
            .map(|p| GlobSet::new(globs_of(p).unwrap()).unwrap())
            .collect();
        for _ in 0..50 {
            let mut path = String::new();
            for _ in 0..rng
                .pick(&["1", "2", "3", "4", "5"])
                .parse::<usize>()
                .unwrap()
            {
                path.push('/');
                path.push_str(rng.pick(&["a", "b", "c1", "c2", "shop", "x", "q-sale", "cz"]));
            }
            let want: Vec<u32> = (0..)
                .zip(&reference)
                .filter(|(_, r)| r.is_match_candidate(&Candidate::from_bytes(&path)))
                .map(|(i, _)| i)
                .collect();
            assert_eq!(owners(&ours, &path), want, "{path} in {patterns:?}");
            assert_eq!(ours.first_owner(&path), want.first().copied());
            compared += 1;
        }
    }
    assert_eq!(compared, 10_000);
    // The fixed-position index and the others each get a good share.
    let [prefix, first_start, fixed, suffix, _] = sizes;
    assert!(
        prefix > 500 && first_start > 50 && fixed > 500 && suffix > 200,
        "globs by index (prefix, first start, fixed position, suffix, none): {sizes:?}"
    );
}
