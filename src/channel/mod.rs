//! A session's channel: GA4's default channel group, computed from the session's landing and
//! referrer URLs (docs/contract/targeting.md, "Channel"; the table and its origin:
//! docs/CHANNELS.md). Pure, the same natively and in WASM.
//!
//! ```
//! use nudge_rules::channel::{Channel, TrafficSource, channel};
//!
//! let email = TrafficSource::from_urls(Some("/p?utm_source=news&utm_medium=Email"), None);
//! assert_eq!(channel(&email), Channel::Email);
//!
//! let social = TrafficSource::from_urls(Some("/p"), Some("https://l.facebook.com/l.php?u=x"));
//! assert_eq!((&*social.source, &*social.medium), ("l.facebook.com", "referral"));
//! assert_eq!(channel(&social), Channel::OrganicSocial);
//! assert_eq!(Channel::from_wire("organic_social"), Some(Channel::OrganicSocial));
//! ```

mod category;
mod source;
mod sources;
#[cfg(test)]
mod tests;
pub(crate) mod url_text;

use std::fmt;

use category::Category;
pub use source::TrafficSource;

/// A channel of GA4's default channel group, by its id on the wire (`paid_search`); the
/// variants are in the order of GA4's rules, which [`channel`] tries in turn
/// (docs/contract/targeting.md, "Channel"; docs/CHANNELS.md gives each rule). Below, "paid
/// medium" is GA4's `^(.*cp.*|ppc|retargeting|paid.*)$` and "shopping campaign" its
/// `^(.*(([^a-df-z]|^)shop|shopping).*)$`, on lowercased values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    /// `direct`: source `(direct)` and medium `(not set)` or `(none)`.
    Direct,
    /// `cross_network`: the campaign contains `cross-network`.
    CrossNetwork,
    /// `paid_shopping`: a shopping site or a shopping campaign, and a paid medium.
    PaidShopping,
    /// `paid_search`: a search site and a paid medium.
    PaidSearch,
    /// `paid_social`: a social site and a paid medium.
    PaidSocial,
    /// `paid_video`: a video site and a paid medium.
    PaidVideo,
    /// `display`: medium `display`, `banner`, `expandable`, `interstitial` or `cpm`.
    Display,
    /// `paid_other`: a paid medium.
    PaidOther,
    /// `organic_shopping`: a shopping site or a shopping campaign.
    OrganicShopping,
    /// `organic_social`: a social site, or medium `social`, `social-network`, `social-media`,
    /// `sm`, `social network` or `social media`.
    OrganicSocial,
    /// `organic_video`: a video site, or a medium containing `video`.
    OrganicVideo,
    /// `organic_search`: a search site, or medium `organic`.
    OrganicSearch,
    /// `referral`: medium `referral`, `app` or `link`.
    Referral,
    /// `email`: source or medium containing `email`, `e-mail`, `e_mail` or `e mail`.
    Email,
    /// `affiliates`: medium `affiliate`.
    Affiliates,
    /// `audio`: medium `audio`.
    Audio,
    /// `sms`: source or medium `sms`.
    Sms,
    /// `mobile_push` (GA4's "Mobile Push Notifications"): a medium ending with `push` or
    /// containing `mobile` or `notification`, or source `firebase`.
    MobilePush,
    /// `unassigned`: no rule above holds.
    Unassigned,
}

impl Channel {
    /// Every channel, in the order of GA4's rules (the order of [`Channel`]'s variants).
    pub const ALL: [Channel; 19] = [
        Channel::Direct,
        Channel::CrossNetwork,
        Channel::PaidShopping,
        Channel::PaidSearch,
        Channel::PaidSocial,
        Channel::PaidVideo,
        Channel::Display,
        Channel::PaidOther,
        Channel::OrganicShopping,
        Channel::OrganicSocial,
        Channel::OrganicVideo,
        Channel::OrganicSearch,
        Channel::Referral,
        Channel::Email,
        Channel::Affiliates,
        Channel::Audio,
        Channel::Sms,
        Channel::MobilePush,
        Channel::Unassigned,
    ];

    /// The channel's id on the wire and in configs: `direct`, `cross_network`, ...,
    /// `unassigned` (docs/contract/targeting.md, "Channel").
    pub const fn as_str(self) -> &'static str {
        match self {
            Channel::Direct => "direct",
            Channel::CrossNetwork => "cross_network",
            Channel::PaidShopping => "paid_shopping",
            Channel::PaidSearch => "paid_search",
            Channel::PaidSocial => "paid_social",
            Channel::PaidVideo => "paid_video",
            Channel::Display => "display",
            Channel::PaidOther => "paid_other",
            Channel::OrganicShopping => "organic_shopping",
            Channel::OrganicSocial => "organic_social",
            Channel::OrganicVideo => "organic_video",
            Channel::OrganicSearch => "organic_search",
            Channel::Referral => "referral",
            Channel::Email => "email",
            Channel::Affiliates => "affiliates",
            Channel::Audio => "audio",
            Channel::Sms => "sms",
            Channel::MobilePush => "mobile_push",
            Channel::Unassigned => "unassigned",
        }
    }

    /// The channel of an id as [`Channel::as_str`] writes it, exactly (case-sensitive); `None`
    /// for any other text (the config's error names the value, and [`Channel::ALL`] gives the
    /// ids to suggest).
    pub fn from_wire(id: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == id)
    }
}

impl fmt::Display for Channel {
    /// The channel's id, as [`Channel::as_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The channel of a traffic source, by GA4's default channel group: the first of its rules, in
/// its order, that holds (the rules: [`Channel`]; docs/CHANNELS.md), else
/// [`Channel::Unassigned`]. Values are compared without case for ASCII letters (GA4 matches
/// lowercased values; other characters compare as written), and a newline in a value is a
/// character like any other. Sites are GA4's lists of shopping, search, social and video
/// sources, matched on the whole source. No allocation.
pub fn channel(traffic: &TrafficSource<'_>) -> Channel {
    let source = traffic.source.as_bytes();
    let medium = traffic.medium.as_bytes();
    let campaign = traffic.campaign.as_bytes();
    let site = category::category(&traffic.source);
    let paid = contains(medium, b"cp")
        || is_one_of(medium, &[b"ppc", b"retargeting"])
        || at(medium, 0, b"paid");
    let shopping = site == Some(Category::Shopping) || shopping_campaign(campaign);
    if is(source, b"(direct)") && is_one_of(medium, &[b"(not set)", b"(none)"]) {
        Channel::Direct
    } else if contains(campaign, b"cross-network") {
        Channel::CrossNetwork
    } else if paid && shopping {
        Channel::PaidShopping
    } else if paid && site == Some(Category::Search) {
        Channel::PaidSearch
    } else if paid && site == Some(Category::Social) {
        Channel::PaidSocial
    } else if paid && site == Some(Category::Video) {
        Channel::PaidVideo
    } else if is_one_of(
        medium,
        &[
            b"display",
            b"banner",
            b"expandable",
            b"interstitial",
            b"cpm",
        ],
    ) {
        Channel::Display
    } else if paid {
        Channel::PaidOther
    } else if shopping {
        Channel::OrganicShopping
    } else if site == Some(Category::Social)
        || is_one_of(
            medium,
            &[
                b"social",
                b"social-network",
                b"social-media",
                b"sm",
                b"social network",
                b"social media",
            ],
        )
    {
        Channel::OrganicSocial
    } else if site == Some(Category::Video) || contains(medium, b"video") {
        Channel::OrganicVideo
    } else if site == Some(Category::Search) || is(medium, b"organic") {
        Channel::OrganicSearch
    } else if is_one_of(medium, &[b"referral", b"app", b"link"]) {
        Channel::Referral
    } else if [source, medium].into_iter().any(|value| {
        [&b"email"[..], b"e-mail", b"e_mail", b"e mail"]
            .into_iter()
            .any(|needle| contains(value, needle))
    }) {
        Channel::Email
    } else if is(medium, b"affiliate") {
        Channel::Affiliates
    } else if is(medium, b"audio") {
        Channel::Audio
    } else if is(source, b"sms") || is(medium, b"sms") {
        Channel::Sms
    } else if medium
        .len()
        .checked_sub(4)
        .is_some_and(|last| at(medium, last, b"push"))
        || contains(medium, b"mobile")
        || contains(medium, b"notification")
        || is(source, b"firebase")
    {
        Channel::MobilePush
    } else {
        Channel::Unassigned
    }
}

/// Whether `needle` (lowercase ASCII) is in `text` at byte `start`, without case.
#[inline(never)]
fn at(text: &[u8], start: usize, needle: &[u8]) -> bool {
    text.get(start..)
        .and_then(|tail| tail.get(..needle.len()))
        .is_some_and(|window| window.eq_ignore_ascii_case(needle))
}

/// Whether `text` is `needle` (lowercase ASCII), without case.
fn is(text: &[u8], needle: &[u8]) -> bool {
    text.len() == needle.len() && at(text, 0, needle)
}

/// Whether `text` is one of `options` (lowercase ASCII), without case.
fn is_one_of(text: &[u8], options: &[&[u8]]) -> bool {
    options.iter().any(|option| is(text, option))
}

/// Whether `text` contains `needle` (lowercase ASCII), without case.
fn contains(text: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    text.iter()
        .enumerate()
        .any(|(start, b)| b.to_ascii_lowercase() == first && at(text, start, needle))
}

/// GA4's shopping campaign, `^(.*(([^a-df-z]|^)shop|shopping).*)$` on the lowercased campaign:
/// it contains `shopping`, or `shop` at its start or after a character other than the letters
/// `a` to `d` and `f` to `z` (`e-shop`, `eshop`, `summer_shop`; not `workshop`).
fn shopping_campaign(campaign: &[u8]) -> bool {
    contains(campaign, b"shopping")
        || (0..campaign.len()).any(|start| {
            campaign
                .get(start)
                .is_some_and(|b| b.eq_ignore_ascii_case(&b's'))
                && at(campaign, start, b"shop")
                && start
                    .checked_sub(1)
                    .and_then(|before| campaign.get(before))
                    .is_none_or(|b| !matches!(b.to_ascii_lowercase(), b'a'..=b'd' | b'f'..=b'z'))
        })
}
