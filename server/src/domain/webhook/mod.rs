//! Webhooks (docs/contract/webhooks.md; the API document's section 6): the parts that know no HTTP framework, no
//! store and no clock (callers pass `now_ms`), so the endpoint routes, the outbox and the
//! delivery worker share one definition of every rule.
//!
//! - [`event_type`]: the six event types and their names;
//! - [`outbox`]: which stored changes make which messages, to which endpoints, and the
//!   messages' bodies;
//! - [`attempt`]: a claimed delivery, how an attempt's answer is judged, the delivery's next
//!   state, the attempts log;
//! - [`schedule`]: the retry ladder, its jitter and `Retry-After`;
//! - [`health`]: the 5-day rule and the 410 that disable an endpoint;
//! - [`signature`]: Standard Webhooks v1 secrets (as stored, and read) and signatures;
//! - [`address`]: which URLs and addresses a delivery may reach (the SSRF rules);
//! - [`endpoint`]: endpoints, their subscriptions and secrets, and their wire form.
//!
//! docs/WEBHOOKS.md ("For contributors") follows one message from the stored change to the
//! signed request, each shape with its type and file.

pub mod address;
pub mod attempt;
pub mod endpoint;
pub mod event_type;
pub mod health;
pub mod outbox;
pub mod schedule;
pub mod signature;

pub use address::{Policy, Range, Refused, Target};
pub use attempt::{Answer, AttemptResult, Due, HttpStatus, Judgement, Verdict, judge};
pub use event_type::{EventType, UnknownEventType};
pub use outbox::{Change, Message};
pub use schedule::{Schedule, ScheduleError};
pub use signature::{Secret, SecretError, StoredSecret, UnreadableSecret, signature_header};
