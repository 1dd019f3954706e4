//! A session's source, medium and campaign, from its landing and referrer URLs
//! (docs/contract/targeting.md, "Channel"; docs/CHANNELS.md, "Source and medium").

use std::borrow::Cow;

use super::category::is_search_engine;
use super::url_text::{form_decode, host, query_pairs};

/// A session's traffic source as GA4 names it: where the visitor came from (`source`), the kind
/// of traffic (`medium`) and the campaign, from which [`channel`](super::channel) derives the
/// session's channel (docs/contract/targeting.md, "Channel"; docs/CHANNELS.md).
///
/// The values are as written (decoded from the query, not lowercased): the channel rules compare
/// them without case. They borrow from the URL texts, or from static text, unless decoding
/// (`+`, `%XX`) or lowercasing a host had to build a new string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrafficSource<'a> {
    /// `utm_source`; `google` for `gclid`; the referrer's host without a leading `www.`;
    /// `(direct)`; `(not set)` for UTM parameters without `utm_source`.
    pub source: Cow<'a, str>,
    /// `utm_medium`; `cpc` for `gclid`; `organic` or `referral` for a referrer; `(none)` for
    /// direct traffic; `(not set)` for UTM parameters without `utm_medium`.
    pub medium: Cow<'a, str>,
    /// `utm_campaign`; `(not set)` for UTM parameters without it and for `gclid`; GA4's
    /// `(organic)`, `(referral)` and `(direct)` otherwise.
    pub campaign: Cow<'a, str>,
}

/// GA4's value of a field that has none.
const NOT_SET: &str = "(not set)";

/// The query parameters a traffic source reads, in the order of the slots it keeps them in.
const PARAMETERS: [&str; 4] = ["utm_source", "utm_medium", "utm_campaign", "gclid"];

impl<'a> TrafficSource<'a> {
    /// The traffic source of a session from its `landing_url` (its first page: an absolute
    /// http(s) URL or a path, as the engine validated it, at most 8,192 bytes) and its
    /// `referrer_url` (the document referrer at that page: an absolute http(s) URL), in GA4's
    /// order (docs/contract/targeting.md, "Channel"):
    ///
    /// 1. the landing URL's `utm_source`, `utm_medium` and `utm_campaign` when any of them is
    ///    present, `(not set)` for each one missing;
    /// 2. else its `gclid`: `google` / `cpc` (campaign `(not set)`);
    /// 3. else a referrer whose host is not the landing URL's own (only an absolute landing URL
    ///    has one; a leading `www.` of either is ignored): that host without its `www.`, with
    ///    medium `organic` (campaign `(organic)`) for a search engine and `referral` (campaign
    ///    `(referral)`) otherwise;
    /// 4. else `(direct)` / `(none)` (campaign `(direct)`): no referrer (none sent, or stripped
    ///    by the page's referrer policy), or the site's own.
    ///
    /// Query parameters are read as a form (`+` a space, `%XX` a byte, invalid escapes kept as
    /// written); names are compared exactly (`UTM_SOURCE` is another parameter); the first
    /// occurrence of a name is the one read, and one with an empty value counts as absent. A
    /// referrer that is not an absolute http(s) URL with a host counts as none. Never fails and
    /// never panics, whatever the texts.
    pub fn from_urls(landing_url: Option<&'a str>, referrer_url: Option<&'a str>) -> Self {
        let mut seen = [false; 4];
        let mut values: [Option<Cow<'a, str>>; 4] = [None, None, None, None];
        for (name, value) in query_pairs(landing_url.unwrap_or("")) {
            let Some(slot) = PARAMETERS.iter().position(|p| *p == name) else {
                continue;
            };
            if let (Some(seen), Some(kept)) = (seen.get_mut(slot), values.get_mut(slot))
                && !*seen
            {
                *seen = true;
                *kept = (!value.is_empty()).then(|| form_decode(value));
            }
            if seen.iter().all(|s| *s) {
                break;
            }
        }
        let [source, medium, campaign, gclid] = values;
        if source.is_some() || medium.is_some() || campaign.is_some() {
            let or_not_set = |v: Option<Cow<'a, str>>| v.unwrap_or(Cow::Borrowed(NOT_SET));
            return TrafficSource {
                source: or_not_set(source),
                medium: or_not_set(medium),
                campaign: or_not_set(campaign),
            };
        }
        if gclid.is_some() {
            return Self::of("google", "cpc", NOT_SET);
        }
        if let Some(referrer) = referrer_url.and_then(host).map(without_www) {
            let own = landing_url.and_then(host).map(without_www);
            if own.as_deref() != Some(&*referrer) {
                let (medium, campaign) = if is_search_engine(&referrer) {
                    ("organic", "(organic)")
                } else {
                    ("referral", "(referral)")
                };
                return TrafficSource {
                    source: referrer,
                    medium: Cow::Borrowed(medium),
                    campaign: Cow::Borrowed(campaign),
                };
            }
        }
        Self::of("(direct)", "(none)", "(direct)")
    }

    /// A traffic source of static texts.
    fn of(source: &'static str, medium: &'static str, campaign: &'static str) -> Self {
        TrafficSource {
            source: Cow::Borrowed(source),
            medium: Cow::Borrowed(medium),
            campaign: Cow::Borrowed(campaign),
        }
    }
}

/// A host without a leading `www.` (unless nothing would be left).
fn without_www(host: Cow<'_, str>) -> Cow<'_, str> {
    match host {
        Cow::Borrowed(host) => Cow::Borrowed(strip_www(host)),
        Cow::Owned(mut host) => {
            let www = host.len() - strip_www(&host).len();
            Cow::Owned(if www > 0 { host.split_off(www) } else { host })
        }
    }
}

/// `host` without a leading `www.`, unless nothing would be left.
fn strip_www(host: &str) -> &str {
    host.strip_prefix("www.")
        .filter(|rest| !rest.is_empty())
        .unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(landing: Option<&str>, referrer: Option<&str>) -> (String, String, String) {
        let t = TrafficSource::from_urls(landing, referrer);
        (
            t.source.into_owned(),
            t.medium.into_owned(),
            t.campaign.into_owned(),
        )
    }

    fn triple(s: &str, m: &str, c: &str) -> (String, String, String) {
        (s.to_owned(), m.to_owned(), c.to_owned())
    }

    #[test]
    fn in_gaas_order() {
        let google = Some("https://www.google.com/");
        let cases = [
            (
                Some("/p?utm_source=news&utm_medium=email&utm_campaign=may"),
                google,
                triple("news", "email", "may"),
            ),
            (
                Some("/p?utm_medium=email"),
                google,
                triple("(not set)", "email", "(not set)"),
            ),
            (
                Some("/p?utm_campaign=may&gclid=x"),
                None,
                triple("(not set)", "(not set)", "may"),
            ),
            (
                Some("/p?gclid=abc"),
                google,
                triple("google", "cpc", "(not set)"),
            ),
            (
                Some("/p?gclid="),
                google,
                triple("google.com", "organic", "(organic)"),
            ),
            (
                Some("/p"),
                Some("https://l.facebook.com/l.php"),
                triple("l.facebook.com", "referral", "(referral)"),
            ),
            (
                Some("/p"),
                Some("https://www.facebook.com/"),
                triple("facebook.com", "referral", "(referral)"),
            ),
            (
                Some("https://shop.example/p"),
                Some("https://shop.example/q"),
                triple("(direct)", "(none)", "(direct)"),
            ),
            (
                Some("https://www.shop.example/p"),
                Some("https://SHOP.example/q"),
                triple("(direct)", "(none)", "(direct)"),
            ),
            (
                Some("https://shop.example/p"),
                Some("https://blog.shop.example/q"),
                triple("blog.shop.example", "referral", "(referral)"),
            ),
            (
                Some("/p"),
                Some("https://shop.example/q"),
                triple("shop.example", "referral", "(referral)"),
            ),
            (Some("/p"), None, triple("(direct)", "(none)", "(direct)")),
            (None, None, triple("(direct)", "(none)", "(direct)")),
            (
                None,
                Some("https://duckduckgo.com/"),
                triple("duckduckgo.com", "organic", "(organic)"),
            ),
            (
                Some("/p"),
                Some("not a url"),
                triple("(direct)", "(none)", "(direct)"),
            ),
            (
                Some("/p?utm_source=&utm_source=late"),
                None,
                triple("(direct)", "(none)", "(direct)"),
            ),
            (
                Some("/p?utm_source=first&utm_source=late"),
                None,
                triple("first", "(not set)", "(not set)"),
            ),
            (
                Some("/p?UTM_SOURCE=x"),
                None,
                triple("(direct)", "(none)", "(direct)"),
            ),
            (
                Some("/p?utm_source=Face+Book%21"),
                None,
                triple("Face Book!", "(not set)", "(not set)"),
            ),
            (
                Some("/p#utm_source=x"),
                None,
                triple("(direct)", "(none)", "(direct)"),
            ),
        ];
        for (landing, referrer, want) in cases {
            assert_eq!(of(landing, referrer), want, "{landing:?} {referrer:?}");
        }
    }

    #[test]
    fn borrows_on_the_common_paths() {
        let t = TrafficSource::from_urls(Some("/p?utm_source=news&utm_medium=email"), None);
        assert!(matches!(t.source, Cow::Borrowed("news")));
        let t = TrafficSource::from_urls(Some("/p"), Some("https://www.facebook.com/x"));
        assert!(matches!(t.source, Cow::Borrowed("facebook.com")));
        let t = TrafficSource::from_urls(Some("/p"), Some("https://WWW.Facebook.com/x"));
        assert_eq!(t.source, "facebook.com");
    }

    #[test]
    fn www_alone_is_a_host() {
        assert_eq!(strip_www("www."), "www.");
        assert_eq!(strip_www("www.x"), "x");
        assert_eq!(strip_www("wwwx.com"), "wwwx.com");
    }
}
