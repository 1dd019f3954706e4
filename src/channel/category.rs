//! Which of GA4's source categories (shopping, search, social, video sites) a source is on, by a
//! binary search of the tables of `sources.rs` without allocating (docs/CHANNELS.md).

use super::sources;

/// One of GA4's source categories. The four lists are disjoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    /// `SOURCE_CATEGORY_SHOPPING`: shopping sites (`amazon`, `ebay.de`, `igshopping`).
    Shopping,
    /// `SOURCE_CATEGORY_SEARCH`: search sites (`google`, `bing`, `cn.bing.com`).
    Search,
    /// `SOURCE_CATEGORY_SOCIAL`: social sites (`facebook`, `m.facebook.com`, `t.co`).
    Social,
    /// `SOURCE_CATEGORY_VIDEO`: video sites (`youtube`, `m.youtube.com`, `vimeo`).
    Video,
}

impl Category {
    /// Every category with its table.
    const TABLES: [(Category, &'static str); 4] = [
        (Category::Shopping, sources::SHOPPING),
        (Category::Search, sources::SEARCH),
        (Category::Social, sources::SOCIAL),
        (Category::Video, sources::VIDEO),
    ];
}

/// The category whose list holds `source` exactly, ASCII letters compared without case (GA4
/// matches lowercased values; other characters as written), or `None` for a source on no list.
pub(crate) fn category(source: &str) -> Option<Category> {
    Category::TABLES
        .into_iter()
        .find(|&(_, table)| listed(table, source.as_bytes()))
        .map(|(category, _)| category)
}

/// Whether a referrer's host is a search engine's, for the medium `organic`
/// (docs/contract/targeting.md, "Channel"; docs/CHANNELS.md): `host` is the referrer's host,
/// lowercased, without a leading `www.`.
///
/// GA4 names a search engine's traffic by the engine (`google`, not `www.google.co.uk`), so its
/// search list holds names and a few hosts. A host is a search engine's when it is on the search
/// list (`cn.bing.com`, `yandex.ru`), or when, without a leading `search.`, it is a name of the
/// search list followed by a top-level domain, itself optionally after one label of 2 or 3
/// letters: `google.com`, `google.co.uk`, `google.com.br`, `duckduckgo.com`, `search.yahoo.com`;
/// not `mail.google.com`, not `notgoogle.com`.
pub(crate) fn is_search_engine(host: &str) -> bool {
    if category(host) == Some(Category::Search) {
        return true;
    }
    let host = host.strip_prefix("search.").unwrap_or(host);
    let Some((name, suffix)) = host.split_once('.') else {
        return false;
    };
    let letters = |label: &str, min: usize, max: usize| {
        (min..=max).contains(&label.len()) && label.bytes().all(|b| b.is_ascii_alphabetic())
    };
    let suffix_like = match suffix.split_once('.') {
        None => letters(suffix, 2, 63),
        Some((second, top)) => letters(second, 2, 3) && letters(top, 2, 63),
    };
    suffix_like && find(sources::SEARCH, name.as_bytes()).is_some()
}

/// Whether `key` is one of a table's names: an entry, or `NAME.com` of an entry `NAME;`.
fn listed(table: &str, key: &[u8]) -> bool {
    if find(table, key).is_some() {
        return true;
    }
    let stem = key
        .len()
        .checked_sub(4)
        .and_then(|n| key.split_at_checked(n))
        .filter(|(_, com)| com.eq_ignore_ascii_case(b".com"))
        .map(|(stem, _)| stem);
    stem.is_some_and(|stem| find(table, stem) == Some(b';'))
}

/// An entry's terminator: `,` (the name) or `;` (the name and the name with `.com`).
fn is_terminator(b: &u8) -> bool {
    matches!(b, b',' | b';')
}

/// The terminator of the entry of `table` equal to `key` (ASCII letters of `key` lowercased), by
/// binary search over the entries' bytes: from the middle byte of the range, back to the start
/// of its entry, then forward to its terminator.
fn find(table: &str, key: &[u8]) -> Option<u8> {
    let table = table.as_bytes();
    // `lo` and `hi` are always at entry starts (or the end of the table).
    let (mut lo, mut hi) = (0, table.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let before = table.get(lo..mid)?;
        let start = before
            .iter()
            .rposition(is_terminator)
            .map_or(lo, |p| lo + p + 1);
        let end = start + table.get(start..hi)?.iter().position(is_terminator)?;
        let entry = table.get(start..end)?;
        let ordering = entry
            .iter()
            .copied()
            .cmp(key.iter().map(u8::to_ascii_lowercase));
        match ordering {
            std::cmp::Ordering::Equal => return table.get(end).copied(),
            std::cmp::Ordering::Less => lo = end + 1,
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSV the tables were generated from (scripts/gen-channel-sources.py).
    const CSV: &str = include_str!("../../tests/data/ga4_source_categories.csv");

    fn csv_rows() -> Vec<(String, Category)> {
        CSV.lines()
            .skip(1)
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (name, category) = line.rsplit_once(',').unwrap();
                let category = match category.trim() {
                    "SOURCE_CATEGORY_SHOPPING" => Category::Shopping,
                    "SOURCE_CATEGORY_SEARCH" => Category::Search,
                    "SOURCE_CATEGORY_SOCIAL" => Category::Social,
                    "SOURCE_CATEGORY_VIDEO" => Category::Video,
                    other => panic!("unknown category {other}"),
                };
                (name.to_owned(), category)
            })
            .collect()
    }

    #[test]
    fn every_name_of_the_list_is_found_in_its_category_in_any_case() {
        let rows = csv_rows();
        assert_eq!(rows.len(), 819);
        for (name, want) in &rows {
            assert_eq!(category(name), Some(*want), "{name}");
            assert_eq!(category(&name.to_ascii_uppercase()), Some(*want), "{name}");
            assert_eq!(category(&name.to_ascii_lowercase()), Some(*want), "{name}");
        }
    }

    #[test]
    fn nothing_else_is_found() {
        let rows = csv_rows();
        let listed: std::collections::HashSet<String> =
            rows.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
        // Every name with one byte changed, dropped or added, and each table's own text pieces.
        let mut probes = vec![
            String::new(),
            ",".into(),
            ";".into(),
            ".com".into(),
            "google,".into(),
            "facebook;".into(),
            "www.facebook.com".into(),
            "facebook.co".into(),
            "zzzz".into(),
            "\u{0}".into(),
            "é".into(),
        ];
        for (name, _) in &rows {
            let name = name.to_ascii_lowercase();
            probes.push(format!("{name}x"));
            probes.push(format!("x{name}"));
            probes.push(format!("{name}.com"));
            probes.push(format!("{name}.net"));
            probes.push(name[..name.len() - 1].to_owned());
            probes.push(name[1..].to_owned());
        }
        for probe in probes {
            let want = listed.contains(&probe);
            assert_eq!(category(&probe).is_some(), want, "{probe:?}");
        }
    }

    #[test]
    fn the_tables_are_sorted_and_stay_small() {
        for (_, table) in Category::TABLES {
            let entries: Vec<&str> = table.split_terminator([',', ';']).collect();
            assert!(entries.windows(2).all(|w| w[0] < w[1]), "{entries:?}");
            assert!(table.ends_with([',', ';']));
            assert!(!table.bytes().any(|b| b.is_ascii_uppercase()));
        }
        let total: usize = Category::TABLES.iter().map(|(_, t)| t.len()).sum();
        assert_eq!(total, sources::TOTAL_BYTES);
        // The storefront's slim WASM module carries the tables (docs/CHANNELS.md, "Size").
        assert!(total <= 7_400, "{total} bytes");
    }

    #[test]
    fn search_engines_by_name_and_top_level_domain() {
        let yes = [
            "google",
            "google.com",
            "google.co.uk",
            "google.com.br",
            "google.de",
            "bing.com",
            "cn.bing.com",
            "duckduckgo.com",
            "yandex.ru",
            "search.yahoo.com",
            "fr.search.yahoo.com",
            "baidu.com",
            "ecosia.org",
        ];
        for host in yes {
            assert!(is_search_engine(host), "{host}");
        }
        let no = [
            "mail.google.com",
            "notgoogle.com",
            "facebook.com",
            "google.example.shop.com",
            "google.c",
            "google.co1.uk",
            "brave.com",
            "search.brave.com",
            "",
            ".",
            "google.",
        ];
        for host in no {
            assert!(!is_search_engine(host), "{host}");
        }
    }
}
