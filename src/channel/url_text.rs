//! Two small readers of URL texts, for builds without the `url` crate (the WASM modules have
//! none): the query parameters of a URL and the host of an absolute http(s) URL
//! (docs/CHANNELS.md, "Reading the URLs"). Natively a differential test holds them to the `url`
//! crate on generated inputs.

use std::borrow::Cow;

/// The query parameters of a URL text (an absolute URL or a path, docs/contract/urls.md), in
/// order, as `application/x-www-form-urlencoded` pairs, each as its decoded name and its value
/// as written (decode it with [`form_decode`] when it is wanted, so that the parameters nobody
/// asked for cost no allocation). The query is the text after the first `?` up to the next `#`
/// (a `#` before any `?` leaves no query); pairs are split at `&` (empty ones skipped) and a
/// pair at its first `=` (none: the value is empty).
pub(crate) fn query_pairs(url: &str) -> impl Iterator<Item = (Cow<'_, str>, &str)> {
    let bytes = url.as_bytes();
    let start = match bytes.iter().position(|&b| b == b'?' || b == b'#') {
        Some(at) if bytes.get(at) == Some(&b'?') => at + 1,
        _ => bytes.len(),
    };
    let query = url.get(start..).unwrap_or("");
    let end = query.bytes().position(|b| b == b'#').unwrap_or(query.len());
    let query = query.get(..end).unwrap_or("");
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (form_decode(name), value)
        })
}

/// One name or value of a form-encoded query (`application/x-www-form-urlencoded`): `+` is a
/// space and `%XX` the byte XX; an escape that is not `%` and two hexadecimal digits is kept as
/// written, and bytes that are not UTF-8 become U+FFFD. Borrowed unless a `+` or a `%` had to be
/// decoded.
pub(crate) fn form_decode(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !bytes.iter().any(|&b| b == b'+' || b == b'%') {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        let escaped = match (
            b,
            bytes.get(i).and_then(hex),
            bytes.get(i + 1).and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => Some(hi << 4 | lo),
            _ => None,
        };
        out.push(match (b, escaped) {
            (_, Some(byte)) => {
                i += 2;
                byte
            }
            (b'+', None) => b' ',
            (b, None) => b,
        });
    }
    match String::from_utf8(out) {
        Ok(text) => Cow::Owned(text),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// The value of one hexadecimal digit.
fn hex(digit: &u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// The host of an absolute `http:` or `https:` URL (scheme in any case), lowercased (ASCII
/// letters), without user info or port; an IPv6 address keeps its brackets (`[::1]`). As the
/// WHATWG URL parser reads it: leading and trailing spaces and control characters are ignored,
/// and so are tabs and newlines after the scheme and in the host, the slashes after the scheme
/// may be any number of `/` and `\`, the authority ends at `/`, `\`, `?` or `#`, and the user
/// info at its last `@`. The text is not validated (the engine validated it) and not
/// normalized beyond that: no percent-decoding, no IDNA (a browser's `document.referrer` is
/// punycode already), no IPv4 number forms (`0x7f.1`). `None` for another scheme or an empty
/// host. Borrowed from `url` unless the host had to be lowercased or tidied.
pub(crate) fn host(url: &str) -> Option<Cow<'_, str>> {
    let bytes = url.as_bytes();
    let start = bytes.iter().position(|&b| b > b' ')?;
    let end = bytes.iter().rposition(|&b| b > b' ')? + 1;
    let colon = start + bytes.get(start..end)?.iter().position(|&b| b == b':')?;
    let scheme = bytes.get(start..colon)?;
    if !scheme.eq_ignore_ascii_case(b"http") && !scheme.eq_ignore_ascii_case(b"https") {
        return None;
    }
    let mut at = colon + 1;
    while at < end && matches!(bytes.get(at), Some(b'/' | b'\\' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    let mut authority_end = at;
    while authority_end < end
        && !matches!(bytes.get(authority_end), Some(b'/' | b'\\' | b'?' | b'#'))
    {
        authority_end += 1;
    }
    let authority = bytes.get(at..authority_end)?;
    let host_start = at
        + authority
            .iter()
            .rposition(|&b| b == b'@')
            .map_or(0, |p| p + 1);
    let host_and_port = bytes.get(host_start..authority_end)?;
    let host_end = host_start
        + if host_and_port.first() == Some(&b'[') {
            host_and_port.iter().position(|&b| b == b']')? + 1
        } else {
            host_and_port
                .iter()
                .position(|&b| b == b':')
                .unwrap_or(host_and_port.len())
        };
    // Every boundary above is an ASCII byte, so a character boundary.
    let host = url.get(host_start..host_end)?;
    let untidy = |b: &u8| b.is_ascii_uppercase() || matches!(b, b'\t' | b'\n' | b'\r');
    if !host.as_bytes().iter().any(untidy) {
        return (!host.is_empty()).then_some(Cow::Borrowed(host));
    }
    let tidy: Vec<u8> = host
        .bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r'))
        .map(|b| b.to_ascii_lowercase())
        .collect();
    String::from_utf8(tidy)
        .ok()
        .filter(|host| !host.is_empty())
        .map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(url: &str) -> Vec<(String, String)> {
        query_pairs(url)
            .map(|(n, v)| (n.into_owned(), form_decode(v).into_owned()))
            .collect()
    }

    fn owned(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn query_pairs_as_a_form_reads_them() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("/p", &[]),
            ("/p?", &[]),
            ("/p#x?a=1", &[]),
            ("/p?a=1&b=2", &[("a", "1"), ("b", "2")]),
            ("/p?a=1#b=2", &[("a", "1")]),
            ("/p?a=1?b=2", &[("a", "1?b=2")]),
            ("/p?&&a&=&b=", &[("a", ""), ("", ""), ("b", "")]),
            ("/p?a==1", &[("a", "=1")]),
            ("/p?a+b=c+d", &[("a b", "c d")]),
            ("/p?a=%2B%20%41", &[("a", "+ A")]),
            ("/p?a=%4", &[("a", "%4")]),
            ("/p?a=%zz%", &[("a", "%zz%")]),
            ("/p?a=%%41", &[("a", "%A")]),
            ("/p?a=%FF", &[("a", "\u{FFFD}")]),
            ("/p?a=%C3%A9", &[("a", "é")]),
            ("/p?utm%5Fsource=x", &[("utm_source", "x")]),
            ("https://u:p@h.example:8/p?a=1", &[("a", "1")]),
            ("https://h.example?a=1", &[("a", "1")]),
        ];
        for (url, want) in cases {
            assert_eq!(pairs(url), owned(want), "{url}");
        }
    }

    #[test]
    fn query_pairs_borrow_when_nothing_is_decoded() {
        let url = "/p?utm_source=news&utm_medium=email";
        assert!(query_pairs(url).all(|(n, _)| matches!(n, Cow::Borrowed(_))));
        assert!(matches!(form_decode("email"), Cow::Borrowed("email")));
        assert!(matches!(form_decode("e+mail"), Cow::Owned(_)));
    }

    #[test]
    fn hosts() {
        let cases = [
            ("https://www.google.com/search?q=x", Some("www.google.com")),
            ("HTTP://Example.COM:8080/x", Some("example.com")),
            ("https://user:pw@h.example/", Some("h.example")),
            ("https://a@b@h.example/", Some("h.example")),
            ("https://h.example?x=@y", Some("h.example")),
            ("https://h.example#@y", Some("h.example")),
            ("https://[2001:DB8::1]:443/", Some("[2001:db8::1]")),
            ("http:\\\\h.example\\x", Some("h.example")),
            ("http:h.example/x", Some("h.example")),
            ("https:///h.example", Some("h.example")),
            ("  https://h.example/ ", Some("h.example")),
            ("https://h.ex\tample/", Some("h.example")),
            ("https://h.example.", Some("h.example.")),
            ("ftp://h.example/", None),
            ("/a/path", None),
            ("https://", None),
            ("https://u@:80/", None),
            ("https://[::1", None),
            ("android-app://com.google.android.gm/", None),
        ];
        for (url, want) in cases {
            assert_eq!(host(url).as_deref(), want, "{url}");
        }
        assert!(matches!(
            host("https://h.example/"),
            Some(Cow::Borrowed("h.example"))
        ));
    }

    /// Differential tests against the `url` crate (natively; the WASM builds have no `url`).
    #[cfg(feature = "url")]
    mod against_the_url_crate {
        use super::super::*;
        use proptest::prelude::*;

        /// A host the WHATWG parser keeps as written once lowercased: labels of letters, digits
        /// and hyphens, the last one starting with a letter (no IPv4 forms); a dotted quad in
        /// decimal; or an IPv6 address in its canonical text.
        fn host_text() -> impl Strategy<Value = String> {
            let label = "[a-zA-Z0-9][a-zA-Z0-9-]{0,8}";
            let last = "[a-zA-Z][a-zA-Z0-9]{0,5}";
            prop_oneof![
                6 => (proptest::collection::vec(label, 0..4), last, any::<bool>()).prop_map(
                    |(labels, last, dot)| {
                        let mut host = labels.join(".");
                        if !host.is_empty() {
                            host.push('.');
                        }
                        host.push_str(&last);
                        if dot {
                            host.push('.');
                        }
                        host
                    }
                ),
                1 => any::<[u8; 4]>().prop_map(|o| std::net::Ipv4Addr::from(o).to_string()),
                1 => any::<[u16; 8]>().prop_map(|s| format!("[{}]", std::net::Ipv6Addr::from(s))),
            ]
        }

        /// Text of a query or a user info: any characters but the ones that end them, with
        /// escapes, pluses, equals signs and ampersands likely; never a tab or a newline (the
        /// WHATWG parser drops them) nor ending in a space (it trims the URL).
        fn query_text() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                "[a-zA-Z0-9_.~-]{1,6}",
                Just("&".to_owned()),
                Just("=".to_owned()),
                Just("+".to_owned()),
                Just("?".to_owned()),
                Just("/".to_owned()),
                Just(" ".to_owned()),
                "%[0-9a-fA-F]{2}",
                "%[0-9a-zA-Z%]{0,2}",
                Just("utm_source".to_owned()),
                Just("gclid".to_owned()),
                "[\u{0}-\u{8}\u{b}\u{c}\u{e}-\u{1f}\"'<>`^{}|\\[\\]@:;,!$*()]",
                "[\u{80}-\u{10ffff}]",
            ];
            proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
        }

        fn authority() -> impl Strategy<Value = String> {
            (
                proptest::option::of("[a-zA-Z0-9%:;=.!$-]{0,6}"),
                host_text(),
                proptest::option::of(0..=65_535u32),
            )
                .prop_map(|(user, host, port)| {
                    let user = user.map(|u| format!("{u}@")).unwrap_or_default();
                    let port = port.map(|p| format!(":{p}")).unwrap_or_default();
                    format!("{user}{host}{port}")
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4_000))]

            #[test]
            fn host_is_the_url_crates_host(
                scheme in "(?i:https?)",
                slashes in "[/\\\\]{0,3}",
                authority in authority(),
                tail in "([/\\\\?#][a-z0-9/?#=&@:.-]{0,8})?",
            ) {
                let text = format!("{scheme}:{slashes}{authority}{tail}");
                if let Ok(parsed) = url::Url::parse(&text) {
                    let want = parsed.host_str().map(str::to_owned);
                    prop_assert_eq!(host(&text).map(Cow::into_owned), want, "{}", text);
                }
            }

            #[test]
            fn query_pairs_are_the_url_crates_query_pairs(
                query in query_text(),
                fragment in proptest::option::of("[a-z0-9?&=]{0,6}"),
            ) {
                let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
                let absolute = format!("https://shop.example/p?{query}{fragment}x");
                let Ok(parsed) = url::Url::parse(&absolute) else {
                    return Err(TestCaseError::fail(format!("unparsable {absolute}")));
                };
                let want: Vec<(String, String)> = parsed
                    .query_pairs()
                    .map(|(n, v)| (n.into_owned(), v.into_owned()))
                    .collect();
                let got: Vec<(String, String)> = query_pairs(&absolute)
                    .map(|(n, v)| (n.into_owned(), form_decode(v).into_owned()))
                    .collect();
                prop_assert_eq!(&got, &want, "{}", absolute);
                // A path reads alike.
                let path = format!("/p?{query}{fragment}x");
                let from_path: Vec<(String, String)> = query_pairs(&path)
                    .map(|(n, v)| (n.into_owned(), form_decode(v).into_owned()))
                    .collect();
                prop_assert_eq!(&from_path, &want, "{}", path);
            }
        }
    }
}
