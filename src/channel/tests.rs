//! The channel table's vectors (tests/vectors/channel.json) and a differential test of
//! [`channel`] against a direct transcription of GA4's published rules with the `regex` crate.

use std::collections::HashMap;

use proptest::prelude::*;
use regex::Regex;
use serde_json::Value;

use super::*;

#[test]
fn ids_round_trip_and_are_in_gaas_order() {
    let ids: Vec<&str> = Channel::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        ids,
        [
            "direct",
            "cross_network",
            "paid_shopping",
            "paid_search",
            "paid_social",
            "paid_video",
            "display",
            "paid_other",
            "organic_shopping",
            "organic_social",
            "organic_video",
            "organic_search",
            "referral",
            "email",
            "affiliates",
            "audio",
            "sms",
            "mobile_push",
            "unassigned",
        ]
    );
    for c in Channel::ALL {
        assert_eq!(Channel::from_wire(c.as_str()), Some(c));
        assert_eq!(c.to_string(), c.as_str());
    }
    assert!(Channel::ALL.windows(2).all(|w| w[0] < w[1]));
    for bad in [
        "",
        "Direct",
        "paid-search",
        "organic",
        " sms",
        "unassigned ",
    ] {
        assert_eq!(Channel::from_wire(bad), None, "{bad:?}");
    }
}

/// tests/vectors/channel.json, every case (format: tests/vectors/README.md).
#[test]
fn vectors() {
    let text = include_str!("../../tests/vectors/channel.json");
    let doc: Value = serde_json::from_str(text).unwrap();
    assert_eq!(doc["version"], 1);
    let cases = doc["cases"].as_array().unwrap();
    let mut per_channel: HashMap<&str, usize> = HashMap::new();
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let traffic =
            TrafficSource::from_urls(case["landing_url"].as_str(), case["referrer_url"].as_str());
        let expect = &case["expect"];
        let got = serde_json::json!({
            "source": traffic.source,
            "medium": traffic.medium,
            "campaign": traffic.campaign,
            "channel": channel(&traffic).as_str(),
        });
        if &got != expect {
            failures.push(format!("{name}: got {got}, want {expect}"));
        }
        let id = expect["channel"].as_str().unwrap();
        assert!(Channel::from_wire(id).is_some(), "{name}: {id}");
        *per_channel.entry(id).or_default() += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for c in Channel::ALL {
        let n = per_channel.get(c.as_str()).copied().unwrap_or(0);
        assert!(n >= 2, "{c}: {n} cases, the table wants two a row");
    }
}

/// GA4's rules as GA4's help page publishes them ("[GA4] Default channel group", the channels
/// for manual traffic), transcribed one for one with `regex`, on lowercased values, with the
/// lists as a map of the CSV the tables were generated from. `(?s)`: a value is one text, so
/// `.` stands for any character, a newline too (docs/CHANNELS.md, "Case and characters").
struct Ga4 {
    sites: HashMap<String, &'static str>,
    paid: Regex,
    shopping_campaign: Regex,
    display: Regex,
    social_medium: Regex,
    video_medium: Regex,
    referral_medium: Regex,
    email: Regex,
    push_end: Regex,
    push_words: Regex,
}

impl Ga4 {
    fn new() -> Ga4 {
        let csv = include_str!("../../tests/data/ga4_source_categories.csv");
        let sites = csv
            .lines()
            .skip(1)
            .map(|line| {
                let (name, category) = line.rsplit_once(',').unwrap();
                (name.to_ascii_lowercase(), category)
            })
            .collect();
        let re = |r: &str| Regex::new(&format!("(?s){r}")).unwrap();
        Ga4 {
            sites,
            paid: re(r"^(.*cp.*|ppc|retargeting|paid.*)$"),
            shopping_campaign: re(r"^(.*(([^a-df-z]|^)shop|shopping).*)$"),
            display: re(r"^(display|banner|expandable|interstitial|cpm)$"),
            social_medium: re(
                r"^(social|social-network|social-media|sm|social network|social media)$",
            ),
            video_medium: re(r"^(.*video.*)$"),
            referral_medium: re(r"^(referral|app|link)$"),
            email: re(r"email|e-mail|e_mail|e mail"),
            push_end: re(r"push$"),
            push_words: re(r"mobile|notification"),
        }
    }

    fn on(&self, source: &str, category: &str) -> bool {
        self.sites.get(source).is_some_and(|c| *c == category)
    }

    fn channel(&self, source: &str, medium: &str, campaign: &str) -> Channel {
        let (s, m, c) = (
            source.to_ascii_lowercase(),
            medium.to_ascii_lowercase(),
            campaign.to_ascii_lowercase(),
        );
        let (s, m, c) = (s.as_str(), m.as_str(), c.as_str());
        let paid = self.paid.is_match(m);
        let shopping_site = self.on(s, "SOURCE_CATEGORY_SHOPPING");
        let search_site = self.on(s, "SOURCE_CATEGORY_SEARCH");
        let social_site = self.on(s, "SOURCE_CATEGORY_SOCIAL");
        let video_site = self.on(s, "SOURCE_CATEGORY_VIDEO");
        if s == "(direct)" && (m == "(not set)" || m == "(none)") {
            Channel::Direct
        } else if c.contains("cross-network") {
            Channel::CrossNetwork
        } else if (shopping_site || self.shopping_campaign.is_match(c)) && paid {
            Channel::PaidShopping
        } else if search_site && paid {
            Channel::PaidSearch
        } else if social_site && paid {
            Channel::PaidSocial
        } else if video_site && paid {
            Channel::PaidVideo
        } else if self.display.is_match(m) {
            Channel::Display
        } else if paid {
            Channel::PaidOther
        } else if shopping_site || self.shopping_campaign.is_match(c) {
            Channel::OrganicShopping
        } else if social_site || self.social_medium.is_match(m) {
            Channel::OrganicSocial
        } else if video_site || self.video_medium.is_match(m) {
            Channel::OrganicVideo
        } else if search_site || m == "organic" {
            Channel::OrganicSearch
        } else if self.referral_medium.is_match(m) {
            Channel::Referral
        } else if self.email.is_match(s) || self.email.is_match(m) {
            Channel::Email
        } else if m == "affiliate" {
            Channel::Affiliates
        } else if m == "audio" {
            Channel::Audio
        } else if s == "sms" || m == "sms" {
            Channel::Sms
        } else if self.push_end.is_match(m) || self.push_words.is_match(m) || s == "firebase" {
            Channel::MobilePush
        } else {
            Channel::Unassigned
        }
    }
}

fn ga4() -> &'static Ga4 {
    static GA4: std::sync::OnceLock<Ga4> = std::sync::OnceLock::new();
    GA4.get_or_init(Ga4::new)
}

fn classify(source: &str, medium: &str, campaign: &str) -> Channel {
    channel(&TrafficSource {
        source: source.into(),
        medium: medium.into(),
        campaign: campaign.into(),
    })
}

/// Pieces the rules look for, so that generated values hit every rule and its edges.
const WORDS: &[&str] = &[
    "(direct)",
    "(not set)",
    "(none)",
    "cross-network",
    "cp",
    "c",
    "p",
    "ppc",
    "retargeting",
    "paid",
    "shop",
    "shopping",
    "e",
    "work",
    "display",
    "banner",
    "expandable",
    "interstitial",
    "cpm",
    "social",
    "social-network",
    "social-media",
    "sm",
    "social network",
    "social media",
    "video",
    "organic",
    "referral",
    "app",
    "link",
    "email",
    "e-mail",
    "e_mail",
    "e mail",
    "mail",
    "affiliate",
    "audio",
    "sms",
    "push",
    "mobile",
    "notification",
    "firebase",
    "google",
    "facebook",
    "youtube",
    "amazon",
    ".com",
    "-",
    "_",
    " ",
    "\n",
    "é",
    "K",
    "\u{212a}",
    "İ",
];

/// A value: a few pieces of WORDS and of GA4's lists, in random case, with random characters.
fn value() -> impl Strategy<Value = String> {
    let names: Vec<String> = ga4().sites.keys().cloned().collect();
    let piece = prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(str::to_owned),
        2 => proptest::sample::select(names),
        1 => "[a-zA-Z0-9 ._()-]{1,3}",
    ];
    (proptest::collection::vec(piece, 0..4), any::<u64>()).prop_map(|(pieces, case)| {
        pieces
            .concat()
            .chars()
            .enumerate()
            .map(|(i, ch)| {
                if case >> (i % 64) & 1 == 1 {
                    ch.to_ascii_uppercase()
                } else {
                    ch
                }
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn channel_is_ga4s_rules(source in value(), medium in value(), campaign in value()) {
        let want = ga4().channel(&source, &medium, &campaign);
        prop_assert_eq!(classify(&source, &medium, &campaign), want);
    }

    /// What the landing URL's UTM parameters say, form-encoded, is read back as written.
    #[cfg(feature = "url")]
    #[test]
    fn utm_values_are_read_back(source in value(), medium in value(), campaign in value()) {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, v) in [("utm_source", &source), ("utm_medium", &medium), ("utm_campaign", &campaign)] {
            if !v.is_empty() {
                query.append_pair(name, v);
            }
        }
        query.append_pair("gclid", "x");
        let landing = format!("https://shop.example/p?{}", query.finish());
        let traffic = TrafficSource::from_urls(Some(&landing), None);
        let or_not_set = |v: &str| if v.is_empty() { "(not set)".to_owned() } else { v.to_owned() };
        if source.is_empty() && medium.is_empty() && campaign.is_empty() {
            prop_assert_eq!((&*traffic.source, &*traffic.medium), ("google", "cpc"));
        } else {
            prop_assert_eq!(&*traffic.source, or_not_set(&source));
            prop_assert_eq!(&*traffic.medium, or_not_set(&medium));
            prop_assert_eq!(&*traffic.campaign, or_not_set(&campaign));
        }
    }
}

/// Every source of every list, with each medium and campaign the rules name.
#[test]
fn channel_is_ga4s_rules_on_every_listed_source() {
    let ga4 = ga4();
    let mediums = [
        "",
        "(not set)",
        "cpc",
        "CPC",
        "display",
        "cpm",
        "social",
        "video",
        "organic",
        "referral",
        "email",
        "affiliate",
        "audio",
        "sms",
        "push",
        "none",
    ];
    let campaigns = ["(not set)", "cross-network", "shop", "workshop", "spring"];
    let mut checked = 0;
    for name in ga4.sites.keys() {
        for source in [name.clone(), name.to_ascii_uppercase()] {
            for medium in mediums {
                for campaign in campaigns {
                    assert_eq!(
                        classify(&source, medium, campaign),
                        ga4.channel(&source, medium, campaign),
                        "{source:?} {medium:?} {campaign:?}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 819 * 2 * 16 * 5);
}

#[test]
fn shopping_campaigns_at_the_regexs_edges() {
    let yes = [
        "shop",
        "Shop",
        "e-shop",
        "eshop",
        "summer_shop",
        "1shop",
        "éshop",
        "shopping",
        "workshopping",
    ];
    let no = ["workshop", "bookshop", "ashop", "zshop", "shpo", "", "sho"];
    for c in yes {
        assert!(shopping_campaign(c.as_bytes()), "{c}");
        assert!(
            ga4().shopping_campaign.is_match(&c.to_ascii_lowercase()),
            "{c}"
        );
    }
    for c in no {
        assert!(!shopping_campaign(c.as_bytes()), "{c}");
        assert!(
            !ga4().shopping_campaign.is_match(&c.to_ascii_lowercase()),
            "{c}"
        );
    }
}
