//! One stored event (docs/contract/relay.md "Body", docs/contract/caps.md "Relay"; API document 2.2): a page event
//! (PAGE_VIEW, ADD_TO_CART, PURCHASE) or a nudge event (NUDGE_SHOWN, NUDGE_OUTCOME,
//! NUDGE_HELD_OUT), with its site and mode.

use std::fmt;

use nudge_rules::{NudgeOutcome, NudgeType};

/// Which records a key reads and writes (docs/contract/read-api.md "Modes"): `sk_live_`/`pk_live_` keys live
/// records, `sk_test_`/`pk_test_` keys test records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Real traffic.
    Live,
    /// Test traffic.
    Test,
}

impl Mode {
    /// `live` or `test`: the stored and written form.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Live => "live",
            Mode::Test => "test",
        }
    }

    /// The mode of a well-formed key: `sk_live_`/`pk_live_` is live, anything else test.
    pub fn of_key(key: &str) -> Mode {
        if key.get(2..8) == Some("_live_") {
            Mode::Live
        } else {
            Mode::Test
        }
    }

    /// Reads `live` or `test`.
    ///
    /// # Errors
    ///
    /// A message naming the value when it is neither.
    pub fn parse(text: &str) -> Result<Mode, String> {
        match text {
            "live" => Ok(Mode::Live),
            "test" => Ok(Mode::Test),
            other => Err(format!("mode must be \"live\" or \"test\", got {other:?}")),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The records one caller may see: one site, one mode (docs/contract/read-api.md "Modes").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The site id.
    pub site: String,
    /// The mode.
    pub mode: Mode,
}

/// An event's type (docs/contract/relay.md "Body").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A page was viewed.
    PageView,
    /// A product was added to the cart.
    AddToCart,
    /// A purchase was completed: the session converted.
    Purchase,
    /// A nudge was displayed.
    NudgeShown,
    /// The visitor acted on a nudge (clicked, dismissed, opened a chat).
    NudgeOutcome,
    /// A rule fired but the visitor is in its control group: nothing was shown (docs/contract/caps.md).
    NudgeHeldOut,
}

impl EventKind {
    /// Every kind, page events first.
    pub const ALL: [EventKind; 6] = [
        EventKind::PageView,
        EventKind::AddToCart,
        EventKind::Purchase,
        EventKind::NudgeShown,
        EventKind::NudgeOutcome,
        EventKind::NudgeHeldOut,
    ];

    /// The wire and stored name: `PAGE_VIEW`, `ADD_TO_CART`, `PURCHASE`, `NUDGE_SHOWN`,
    /// `NUDGE_OUTCOME`, `NUDGE_HELD_OUT`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::PageView => "PAGE_VIEW",
            EventKind::AddToCart => "ADD_TO_CART",
            EventKind::Purchase => "PURCHASE",
            EventKind::NudgeShown => "NUDGE_SHOWN",
            EventKind::NudgeOutcome => "NUDGE_OUTCOME",
            EventKind::NudgeHeldOut => "NUDGE_HELD_OUT",
        }
    }

    /// The kind named `text` (exact, upper case).
    pub fn parse(text: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// PAGE_VIEW, ADD_TO_CART and PURCHASE: the events of a session's `events` list (API
    /// document 2.2).
    pub fn is_page_event(self) -> bool {
        matches!(
            self,
            EventKind::PageView | EventKind::AddToCart | EventKind::Purchase
        )
    }
}

/// One event, checked, ready to store. Times are Unix milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// Unique per site and mode (docs/contract/relay.md "Exactly once").
    pub message_id: String,
    /// `sess_...`.
    pub session_id: String,
    /// `vis_...`, the visitor (any event, optional; docs/contract/caps.md).
    pub visitor_id: Option<String>,
    /// The type.
    pub kind: EventKind,
    /// When it happened (after the clock correction of docs/contract/relay.md).
    pub occurred_at_ms: i64,
    /// The page's URL as sent (page events and NUDGE_HELD_OUT, optionally NUDGE_SHOWN).
    pub url: Option<String>,
    /// The URL's canonical path (docs/contract/urls.md with the site's `case_sensitive`), or the URL's exact
    /// text when docs/contract/urls.md rejects it: what `page_count` counts distinct (docs/contract/read-api.md).
    pub path_key: Option<String>,
    /// The SDK's intent score at that moment, 0 to 100.
    pub intent_score: Option<u8>,
    /// `nudg_...` (nudge events).
    pub nudge_id: Option<String>,
    /// The nudge's type (NUDGE_SHOWN, NUDGE_HELD_OUT), the core's enum from the relay's text
    /// to the store's `TEXT` column ([`NudgeType::as_str`]).
    pub nudge_type: Option<NudgeType>,
    /// The rule that fired it (NUDGE_SHOWN, optional; NUDGE_HELD_OUT, required).
    pub rule_id: Option<String>,
    /// `clicked`, `dismissed` or `chat_opened` (NUDGE_OUTCOME; never `shown`), the core's enum
    /// as [`nudge_type`](Self::nudge_type).
    pub outcome: Option<NudgeOutcome>,
}

impl NewEvent {
    /// An event of `kind` with its identity and time, every optional field absent: the one
    /// constructor of the relay, the import and the demo, which then set the fields their
    /// events carry (`NewEvent { url: ..., ..NewEvent::new(...) }`).
    pub fn new(
        message_id: impl Into<String>,
        session_id: impl Into<String>,
        kind: EventKind,
        occurred_at_ms: i64,
    ) -> NewEvent {
        NewEvent {
            message_id: message_id.into(),
            session_id: session_id.into(),
            visitor_id: None,
            kind,
            occurred_at_ms,
            url: None,
            path_key: None,
            intent_score: None,
            nudge_id: None,
            nudge_type: None,
            rule_id: None,
            outcome: None,
        }
    }
}

/// A stored event as the session model reads it back: the event and its arrival order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// Arrival order within the store (ties of `occurred_at` are broken by it).
    pub seq: i64,
    /// The event.
    pub event: NewEvent,
}
