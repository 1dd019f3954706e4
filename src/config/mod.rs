//! The site config (docs/contract/config.md): its model here, and loading from JSON text with every error
//! reported in `read.rs`.

mod read;

use std::fmt;

use serde::Serialize;

pub(crate) use read::{parse, parse_value};

use crate::limits::MAX_INTENT_SCORE;
use crate::text::{self, Quoted};

/// A validated site config (docs/contract/config.md). Obtained from [`Engine::compile`](crate::Engine::compile)
/// and read through [`Engine::config`](crate::Engine::config); serializes back to docs/contract/config.md's JSON
/// shape with every default written out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Config {
    /// Always 1.
    pub version: u32,
    /// When false (the default), paths and patterns compare case-insensitively (full Unicode
    /// lowercase).
    pub case_sensitive: bool,
    /// Pages on which no nudge ever fires, in config order.
    pub quiet_zones: Vec<Pattern>,
    /// Rules, in evaluation order: the first enabled rule whose conditions all hold fires.
    pub rules: Vec<Rule>,
    /// After this many nudges shown or held out in one session (`history` entries with
    /// `this_session`), no rule fires: 1 to 100; `None` (absent, the default): no limit
    /// (docs/contract/caps.md). Serialized only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_nudges_per_session: Option<u8>,
}

/// A page pattern (docs/contract/patterns.md) as written, with its normalized form (NFKC, lowercased unless the
/// config is case-sensitive). Serializes as the text as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    written: String,
    normalized: String,
    /// True when `written` quotes as itself between `"` (reason texts quote patterns on every
    /// preview; this spares them the check).
    plain: bool,
}

impl Pattern {
    /// The pattern as written in the config.
    pub fn as_written(&self) -> &str {
        &self.written
    }

    /// The pattern after normalization, as it is matched against normalized paths.
    pub fn normalized(&self) -> &str {
        &self.normalized
    }

    /// A checked pattern: `written` as in the config, `normalized` as docs/contract/patterns.md makes it.
    pub(crate) fn new(written: String, normalized: String) -> Pattern {
        let plain = text::is_plain(&written);
        Pattern {
            written,
            normalized,
            plain,
        }
    }

    /// Appends the pattern as written, quoted as [`Quoted`] displays it.
    pub(crate) fn push_quoted(&self, out: &mut String) {
        if self.plain {
            out.push('"');
            out.push_str(&self.written);
            out.push('"');
        } else {
            text::push_quoted(out, &self.written);
        }
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.written)
    }
}

impl fmt::Display for Pattern {
    /// The pattern as written, quoted: `"/checkout/**"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Quoted(&self.written))
    }
}

/// One rule: a nudge and the conditions under which it fires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Rule {
    /// 1 to 64 characters of `A-Za-z0-9_-`, unique within the config.
    pub id: String,
    /// A disabled rule never fires and is skipped (default true).
    pub enabled: bool,
    /// What is shown when the rule fires.
    pub nudge: Nudge,
    /// All must hold for the rule to fire; absent conditions always hold.
    pub when: Conditions,
    /// How often the rule may fire for one visitor (docs/contract/caps.md): per session, and not again for a
    /// while after a dismissal. Serialized only when not the default.
    #[serde(skip_serializing_if = "Cap::is_default")]
    pub cap: Cap,
    /// The share of visitors, 0 to 50 percent, held out as the rule's control group: they get no
    /// nudge when the rule would fire (docs/contract/caps.md; the bucket is [`holdout_bucket`]). Default 0;
    /// serialized only when set.
    #[serde(skip_serializing_if = "is_zero")]
    pub holdout_percent: u8,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// A rule's cap (docs/contract/caps.md `rule.cap`), with defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Cap {
    /// The rule fires at most this many times in one session (shown or held out): 1 to 100,
    /// default 1.
    pub per_session: u8,
    /// After the visitor dismissed this rule's nudge, it does not fire for them for this many
    /// milliseconds, in later sessions too: 0 to 31,536,000,000 (365 days), default 0.
    pub cooldown_ms: u64,
}

impl Cap {
    /// The cap of a rule that sets none: once per session, no cooldown.
    pub const DEFAULT: Cap = Cap {
        per_session: 1,
        cooldown_ms: 0,
    };

    fn is_default(&self) -> bool {
        *self == Cap::DEFAULT
    }
}

impl Default for Cap {
    fn default() -> Self {
        Cap::DEFAULT
    }
}

/// The holdout bucket of a visitor for a rule (docs/contract/caps.md): the first 8 bytes of SHA-256 of the
/// UTF-8 text `RULE_ID:VISITOR_ID`, read as a big-endian unsigned integer, modulo 10,000; a
/// number from 0 to 9,999. A bucket below `holdout_percent` x 100 holds the visitor out.
///
/// ```
/// // Any outside checker computes the same: sha256("sizing-help:vis_abc")[..8] as u64 % 10000.
/// let bucket = nudge_rules::holdout_bucket("sizing-help", "vis_abc");
/// assert!(bucket < 10_000);
/// ```
pub fn holdout_bucket(rule_id: &str, visitor_id: &str) -> u16 {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(rule_id.as_bytes());
    hash.update(b":");
    hash.update(visitor_id.as_bytes());
    let digest = hash.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    // Below 10,000, so it fits.
    u16::try_from(u64::from_be_bytes(first) % 10_000).unwrap_or(0)
}

/// The nudge a rule shows (API document section 2.4: `type`, `message`, `cta`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Nudge {
    /// Which kind of nudge.
    #[serde(rename = "type")]
    pub nudge_type: NudgeType,
    /// The text, 1 to 500 characters.
    pub message: String,
    /// The call-to-action label, 1 to 80 characters.
    pub cta: String,
    /// Where the CTA takes the visitor (docs/contract/caps.md): a path starting with one `/`, or an absolute
    /// `https:` URL, at most 2,048 bytes. Absent by default; serialized only when set. The
    /// preview's wire answer (API document 2.4) does not carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cta_url: Option<String>,
}

/// The four kinds of nudge (API document section 2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NudgeType {
    /// `chat_bubble`
    ChatBubble,
    /// `toast`
    Toast,
    /// `exit_modal`
    ExitModal,
    /// `sticky_bar`
    StickyBar,
}

impl NudgeType {
    /// Every kind, in the API document's order.
    pub const ALL: [NudgeType; 4] = [
        NudgeType::ChatBubble,
        NudgeType::Toast,
        NudgeType::ExitModal,
        NudgeType::StickyBar,
    ];

    /// The wire name: `chat_bubble`, `toast`, `exit_modal` or `sticky_bar`.
    pub fn as_str(self) -> &'static str {
        match self {
            NudgeType::ChatBubble => "chat_bubble",
            NudgeType::Toast => "toast",
            NudgeType::ExitModal => "exit_modal",
            NudgeType::StickyBar => "sticky_bar",
        }
    }

    /// The nudge type of a wire name (`chat_bubble`, `toast`, `exit_modal`, `sticky_bar`), or
    /// `None` for any other text.
    pub fn from_wire(s: &str) -> Option<Self> {
        NudgeType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl fmt::Display for NudgeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule's conditions (docs/contract/config.md `when`), with defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Conditions {
    /// `intent_score >= min_intent_score`; 0 to 100, default 0.
    pub min_intent_score: u8,
    /// `intent_score <= max_intent_score`; 0 to 100, default 100; never below the minimum.
    pub max_intent_score: u8,
    /// `idle_ms >= min_idle_ms`; 0 to 86,400,000 ms, default 0.
    pub min_idle_ms: u32,
    /// The page must match at least one; `None` (absent) means every page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<Pattern>>,
    /// The page must match none; default empty.
    pub exclude_pages: Vec<Pattern>,
    /// `Some(true)`: only on exit intent; `Some(false)`: never on exit intent; `None` (absent,
    /// the default): either (docs/contract/caps.md `when.exit_intent`). Serialized only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_intent: Option<bool>,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions {
            min_intent_score: 0,
            max_intent_score: MAX_INTENT_SCORE,
            min_idle_ms: 0,
            pages: None,
            exclude_pages: Vec::new(),
            exit_intent: None,
        }
    }
}

/// The per-condition rules of docs/contract/config.md `when`, written once and used by evaluation, reasons,
/// explain and the decision map alike. A condition at its default always holds.
impl Conditions {
    /// `intent_score >= min_intent_score`.
    pub fn min_intent_holds(&self, intent_score: u8) -> bool {
        intent_score >= self.min_intent_score
    }

    /// `intent_score <= max_intent_score`.
    pub fn max_intent_holds(&self, intent_score: u8) -> bool {
        intent_score <= self.max_intent_score
    }

    /// `idle_ms >= min_idle_ms` (idle time in ms).
    pub fn min_idle_holds(&self, idle_ms: u32) -> bool {
        idle_ms >= self.min_idle_ms
    }

    /// `pages` holds when it is absent or some pattern of it matches the page;
    /// `some_pattern_matches` is asked only when `pages` is present.
    pub fn pages_hold(&self, some_pattern_matches: impl FnOnce() -> bool) -> bool {
        self.pages.is_none() || some_pattern_matches()
    }

    /// `exclude_pages` holds when no pattern of it matches the page; `some_pattern_matches` is
    /// asked only when the list is not empty.
    pub fn exclude_pages_hold(&self, some_pattern_matches: impl FnOnce() -> bool) -> bool {
        self.exclude_pages.is_empty() || !some_pattern_matches()
    }

    /// `exit_intent` holds when it is absent or equals the state's exit intent (docs/contract/caps.md).
    pub fn exit_intent_holds(&self, exit_intent: bool) -> bool {
        self.exit_intent.is_none_or(|want| want == exit_intent)
    }

    /// Whether `min_intent_score` is set above its default, 0 (else it always holds).
    pub fn has_min_intent(&self) -> bool {
        self.min_intent_score > 0
    }

    /// Whether `max_intent_score` is set below its default, 100 (else it always holds).
    pub fn has_max_intent(&self) -> bool {
        self.max_intent_score < MAX_INTENT_SCORE
    }

    /// Whether `min_idle_ms` is set above its default, 0 (else it always holds).
    pub fn has_min_idle(&self) -> bool {
        self.min_idle_ms > 0
    }
}
