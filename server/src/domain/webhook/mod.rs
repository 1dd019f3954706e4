//! Webhooks (docs/contract/webhooks.md; the API document's section 6): the parts that know no HTTP framework and
//! no store, so the endpoint routes, the outbox and the delivery worker share one definition.
//!
//! - [`event_type`]: the six event types and their names;
//! - [`signature`]: Standard Webhooks v1 secrets and signatures;
//! - [`address`]: which URLs and addresses a delivery may reach (the SSRF rules);
//! - [`schedule`]: the retry ladder, its jitter and `Retry-After`;
//! - [`endpoint`]: endpoints, messages and attempts, and their wire forms.

pub mod address;
pub mod endpoint;
pub mod event_type;
pub mod schedule;
pub mod signature;

pub use address::{Policy, Range, Refused, Target};
pub use event_type::{EventType, UnknownEventType};
pub use schedule::{Schedule, ScheduleError};
pub use signature::{Secret, SecretError, signature_header};
