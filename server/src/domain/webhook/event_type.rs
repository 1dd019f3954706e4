//! The webhook event types (docs/contract/webhooks.md "Event types and payloads").

use std::fmt;

/// What a webhook message tells: each endpoint subscribes to some of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// `session.converted`: a session's first PURCHASE was stored; data: the session (API
    /// document 2.1).
    SessionConverted,
    /// `nudge.shown`: a NUDGE_SHOWN was stored; data: the nudge event (API document 2.3).
    NudgeShown,
    /// `nudge.outcome`: a clicked, dismissed or chat_opened outcome was stored; data: the nudge
    /// event with its new outcome.
    NudgeOutcome,
    /// `config.published`: a version was published (docs/contract/versions.md); data: the version without the
    /// config body.
    ConfigPublished,
    /// `webhook_endpoint.disabled`: an endpoint was disabled; data: the endpoint without its
    /// secret.
    EndpointDisabled,
    /// `webhook.test`: sent by `POST /v1/webhook_endpoints/{id}/test`.
    Test,
}

/// Every event type, in the order of docs/contract/webhooks.md.
pub const ALL: [EventType; 6] = [
    EventType::SessionConverted,
    EventType::NudgeShown,
    EventType::NudgeOutcome,
    EventType::ConfigPublished,
    EventType::EndpointDisabled,
    EventType::Test,
];

impl EventType {
    /// The name on the wire (`"nudge.shown"`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::SessionConverted => "session.converted",
            EventType::NudgeShown => "nudge.shown",
            EventType::NudgeOutcome => "nudge.outcome",
            EventType::ConfigPublished => "config.published",
            EventType::EndpointDisabled => "webhook_endpoint.disabled",
            EventType::Test => "webhook.test",
        }
    }
}

/// An event type equals its name on the wire (`EventType::Test == "webhook.test"`).
impl PartialEq<&str> for EventType {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no event type, with the names that are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEventType(pub String);

impl fmt::Display for UnknownEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = ALL.iter().map(|t| format!("{:?}", t.as_str())).collect();
        write!(
            f,
            "event type {:?} is not one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownEventType {}

impl std::str::FromStr for EventType {
    type Err = UnknownEventType;

    fn from_str(name: &str) -> Result<EventType, UnknownEventType> {
        ALL.into_iter()
            .find(|t| t.as_str() == name)
            .ok_or_else(|| UnknownEventType(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_named() {
        for t in ALL {
            assert_eq!(t.as_str().parse::<EventType>(), Ok(t));
            assert_eq!(t, t.as_str());
        }
        assert!(EventType::Test != "nudge.shown");
        let err = "nudge.clicked".parse::<EventType>().unwrap_err();
        assert_eq!(err, UnknownEventType("nudge.clicked".into()));
        assert!(err.to_string().starts_with(
            r#"event type "nudge.clicked" is not one of "session.converted", "nudge.shown""#
        ));
    }
}
