//! Unit tests of normalization: docs/contract/urls.md's table, every rejection with its code, the `;`-only
//! segments, Unicode and case, absolute URLs, and the fast path against the full normalizer.

use super::*;
use crate::code::DiagnosticCode;

fn norm(s: &str) -> Result<String, DiagnosticCode> {
    normalize_page_url(s, false)
        .map(Cow::into_owned)
        .map_err(|e| e.code())
}

#[test]
fn spec_4_table() {
    let ok = [
        ("/checkout/", "/checkout"),
        ("/CHECKOUT", "/checkout"),
        ("/checkout;jsessionid=1", "/checkout"),
        ("/a/../checkout", "/checkout"),
        ("/%2e%2e/checkout", "/checkout"),
        ("/Checkout//Pay", "/checkout/pay"),
        ("/checkout/./pay", "/checkout/pay"),
        ("https://shop.example/account?next=/x#top", "/account"),
        ("/checkout/../cart", "/cart"),
    ];
    for (input, want) in ok {
        assert_eq!(norm(input), Ok(want.to_owned()), "{input}");
    }
    for input in [
        "//checkout",
        "\\checkout",
        "/x%2F..%2Fcheckout",
        "/x/%252e%252e/checkout",
    ] {
        assert!(norm(input).is_err(), "{input} should be rejected");
    }
}

#[test]
fn rejections_have_their_codes() {
    let cases = [
        ("", DiagnosticCode::Empty),
        ("/a b", DiagnosticCode::Space),
        ("/a\u{1}", DiagnosticCode::ControlCharacter),
        ("/a\u{85}", DiagnosticCode::ControlCharacter),
        ("javascript:alert(1)", DiagnosticCode::UnsupportedScheme),
        ("products/x", DiagnosticCode::Relative),
        ("/%", DiagnosticCode::MalformedEscape),
        ("/%zz", DiagnosticCode::MalformedEscape),
        ("/%4", DiagnosticCode::MalformedEscape),
        ("/%5C", DiagnosticCode::ForbiddenEscape),
        ("/%00", DiagnosticCode::ForbiddenEscape),
        ("/%FF", DiagnosticCode::InvalidUtf8),
        ("/%C3%28", DiagnosticCode::InvalidUtf8),
        ("/%C2%85", DiagnosticCode::ForbiddenEscape),
        ("http:/x", DiagnosticCode::MalformedUrl),
        ("https:///checkout", DiagnosticCode::MalformedUrl),
        ("http://h:99999/", DiagnosticCode::MalformedUrl),
        ("/checkout//../pay", DiagnosticCode::AmbiguousDotSegment),
        ("/checkout//./../pay", DiagnosticCode::AmbiguousDotSegment),
        ("/checkout/..;/pay", DiagnosticCode::AmbiguousDotSegment),
        ("/x/..;/checkout", DiagnosticCode::AmbiguousDotSegment),
        ("/account//x/../%2e%2e", DiagnosticCode::AmbiguousDotSegment),
        ("/cart//%2e/..", DiagnosticCode::AmbiguousDotSegment),
        ("/checkout/\u{2025}/pay", DiagnosticCode::AmbiguousUnicode),
        ("/a\u{ff0f}b", DiagnosticCode::AmbiguousUnicode),
        ("/orders/;a/invoice", DiagnosticCode::ParameterOnlySegment),
        (
            "/checkout/;jsessionid=1",
            DiagnosticCode::ParameterOnlySegment,
        ),
        ("/checkout/;", DiagnosticCode::ParameterOnlySegment),
        ("/;a/", DiagnosticCode::ParameterOnlySegment),
        ("/x/%3Bjsessionid=1/y", DiagnosticCode::ParameterOnlySegment),
        ("/checkout/;a/../pay", DiagnosticCode::ParameterOnlySegment),
        ("/\u{ff05}2e", DiagnosticCode::AmbiguousUnicode),
    ];
    for (input, code) in cases {
        assert_eq!(norm(input), Err(code), "{input:?}");
    }
    assert_eq!(
        norm(&format!("/{}", "a".repeat(8192))),
        Err(DiagnosticCode::TooLong)
    );
    // U+FDFA expands to 18 characters (33 bytes) under NFKC: 300 of them fit the input limit
    // (900 bytes) but not the output limit.
    assert_eq!(
        norm(&format!("/{}", "\u{FDFA}".repeat(300))),
        Err(DiagnosticCode::TooLong)
    );
    assert!(norm(&format!("/{}", "a".repeat(8191))).is_ok());
}

/// docs/contract/urls.md step 6: a segment cut to nothing by its `;` parameters is named as written, with
/// its byte offset; a segment that keeps a name before its `;` is accepted.
#[test]
fn parameter_only_segments() {
    let err = normalize_page_url("https://h.example/Orders/;A=1/invoice", false).unwrap_err();
    assert_eq!(
        err,
        UrlError::ParameterOnlySegment {
            at: 25,
            segment: ";A=1".to_owned()
        }
    );
    assert!(err.to_string().contains("\";A=1\" at byte 25"), "{err}");
    assert_eq!(
        normalize_page_url("/x/%3bjsessionid=1", false).unwrap_err(),
        UrlError::ParameterOnlySegment {
            at: 3,
            segment: "%3bjsessionid=1".to_owned()
        }
    );
    for (input, want) in [
        ("/checkout;jsessionid=1", "/checkout"),
        ("/checkout%3Bjsessionid=1", "/checkout"),
        ("/checkout;", "/checkout"),
        ("/checkout/a;b;c", "/checkout/a"),
        ("/checkout?x=/;a/", "/checkout"),
    ] {
        assert_eq!(norm(input), Ok(want.to_owned()), "{input}");
    }
}

#[test]
fn unicode_and_case() {
    assert_eq!(norm("/\u{ff43}\u{ff48}eckout"), Ok("/checkout".to_owned()));
    assert_eq!(norm("/CAF%C3%89"), Ok("/café".to_owned()));
    assert_eq!(norm("/\u{fb01}le"), Ok("/file".to_owned()));
    assert_eq!(norm("/ÜBER"), Ok("/über".to_owned()));
    assert_eq!(
        normalize_page_url("/Products/X", true).unwrap(),
        "/Products/X"
    );
}

#[test]
fn absolute_urls() {
    assert_eq!(
        norm("HTTPS://Shop.Example/Products"),
        Ok("/products".to_owned())
    );
    assert_eq!(norm("https://shop.example"), Ok("/".to_owned()));
    assert_eq!(norm("https://shop.example?x=1"), Ok("/".to_owned()));
    assert_eq!(norm("http://u:p@h:8080/a/b/"), Ok("/a/b".to_owned()));
    assert_eq!(norm("/.."), Ok("/".to_owned()));
    assert_eq!(norm("/a/../../b"), Ok("/b".to_owned()));
}

#[test]
fn fast_path_agrees() {
    for p in ["/", "/a", "/a.b", "/a/b-c_d~e", "/a/...", "/a/.x"] {
        assert!(is_canonical(p, false), "{p}");
        assert_eq!(normalize_slow(p, false).unwrap(), p);
    }
    for p in [
        "/a/", "/a//b", "/a/./b", "/a/..", "/.", "/A", "/a;b", "/a%41", "/a?b",
    ] {
        assert!(!is_canonical(p, false), "{p}");
    }
}
