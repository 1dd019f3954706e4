//! Storing events: one path for the relay (`POST /v1/events`), the import and `--demo`. The relay
//! judges each event alone ([`read_events`]), then every path stores through [`store_events`];
//! the relay's 24-hour rule (docs/contract/relay.md "Clocks": an event more than 24 hours after its session's
//! start is refused) is checked by the store inside the write transaction, so no concurrent
//! batch can move a session's start between the check and the write.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::domain::event::{NewEvent, Scope};
use crate::domain::ingest::{Batch, Clocks, MAX_AGE_MS, read_event};
use crate::metrics::{Metrics, RelayEventLabels};
use crate::sites::registry::{Served, Site};
use crate::store::{InsertOutcome, Store, StoreError};

/// Which events a write refuses for their session's age.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionAge {
    /// None: recorded sessions (the import, the demo) are stored as they were.
    Any,
    /// Those more than 24 hours after their session's start (the relay).
    Relay,
}

/// One refused event of a relay batch: its index in the batch and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// The event's index in the batch.
    pub index: usize,
    /// The error's name (`InvalidEvent`).
    pub error: &'static str,
    /// What was wrong, naming the field and the value.
    pub message: String,
}

/// What a relay batch came to (docs/contract/relay.md "Answer").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ingested {
    /// Events stored.
    pub accepted: usize,
    /// Events stored before (the same `message_id`).
    pub duplicates: usize,
    /// Events refused, by index.
    pub rejected: Vec<Rejected>,
}

/// Stores `events` of `scope`, received at `received_at_ms`, refusing by `age`.
///
/// # Errors
///
/// [`StoreError`]; then nothing of the batch is stored.
pub async fn store_events(
    store: &Store,
    scope: &Scope,
    events: &[NewEvent],
    received_at_ms: i64,
    age: SessionAge,
) -> Result<InsertOutcome, StoreError> {
    let max_session_age_ms = match age {
        SessionAge::Any => None,
        SessionAge::Relay => Some(MAX_AGE_MS),
    };
    store
        .insert_events_within(scope, events, received_at_ms, max_session_age_ms)
        .await
}

/// Reads each event of a relay batch alone: the valid ones, with their index, and the
/// refusals.
pub fn read_events(
    raws: &[&RawValue],
    clocks: &Clocks,
    case_sensitive: bool,
) -> (Vec<(usize, NewEvent)>, Vec<Rejected>) {
    let mut rejected = Vec::new();
    let mut events = Vec::new();
    for (index, raw) in raws.iter().enumerate() {
        match read_event(raw, clocks, case_sensitive) {
            Ok(event) => events.push((index, event)),
            Err(message) => rejected.push(Rejected {
                index,
                error: "InvalidEvent",
                message,
            }),
        }
    }
    (events, rejected)
}

/// A relay batch of `site` in `scope`'s mode, received at `received_at_ms` (Unix ms): each
/// event judged alone (its time corrected by the batch's `sent_at`, docs/contract/relay.md "Clocks"; paths
/// compared as the site's config says, `case_sensitive`), the valid ones stored under the
/// 24-hour rule, and once committed counted in `nudge_relay_events_total` (never for a batch
/// the store did not take).
///
/// # Errors
///
/// [`StoreError`]; then nothing of the batch is stored.
pub async fn relay(
    (store, metrics): (&Store, &Metrics),
    (site, scope): (&Site, &Scope),
    batch: &Batch<'_>,
    received_at_ms: i64,
) -> Result<Ingested, StoreError> {
    let clocks = &Clocks {
        received_at_ms,
        sent_at_ms: batch.sent_at_ms,
    };
    let raws = &batch.events;
    let case_sensitive = match &**site.served(scope.mode) {
        Served::Valid { engine, .. } => engine.config().case_sensitive,
        _ => false,
    };
    let (read, mut rejected) = read_events(raws, clocks, case_sensitive);
    let (indexes, events): (Vec<usize>, Vec<NewEvent>) = read.into_iter().unzip();
    let outcome = store_events(
        store,
        scope,
        &events,
        clocks.received_at_ms,
        SessionAge::Relay,
    )
    .await?;
    for i in outcome.too_late {
        if let (Some(&index), Some(event)) = (indexes.get(i), events.get(i)) {
            rejected.push(Rejected {
                index,
                error: "InvalidEvent",
                message: format!(
                    "occurred_at is more than 24 hours after its session {} started; start a new session",
                    event.session_id
                ),
            });
        }
    }
    for i in outcome.wrong_outcome {
        if let (Some(&index), Some(event)) = (indexes.get(i), events.get(i)) {
            rejected.push(Rejected {
                index,
                error: "InvalidEvent",
                message: format!(
                    "outcome chat_opened is for chat bubbles only; nudge {} is not one",
                    event.nudge_id.as_deref().unwrap_or("")
                ),
            });
        }
    }
    rejected.sort_by_key(|r| r.index);
    let count = |labels: &RelayEventLabels, n: usize| {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        metrics.relay_events.get_or_create(labels).inc_by(n);
    };
    count(&RelayEventLabels::ACCEPTED, outcome.accepted);
    count(&RelayEventLabels::DUPLICATE, outcome.duplicates.len());
    count(&RelayEventLabels::REJECTED, rejected.len());
    Ok(Ingested {
        accepted: outcome.accepted,
        duplicates: outcome.duplicates.len(),
        rejected,
    })
}
