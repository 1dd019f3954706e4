//! Import of recorded sessions (SPEC 11 "Import"): the API document's 2.2 shape, one per line
//! or an array, read by the library's replay reader, stored as events so that every derived
//! field is recomputed, idempotent (each event's `message_id` is derived from the session id
//! and the event's place in it, so a second import is all duplicates).
//!
//! How a 2.2 session becomes events:
//! - each of its `events` is a page event with its `url`, `occurred_at` and `intent_score`;
//! - each of its `nudges` is a NUDGE_SHOWN at `shown_at` and, unless `outcome` is `shown`, a
//!   NUDGE_OUTCOME at the same time (the document records no interaction time);
//! - the session's `intent_score` goes on its latest page event (or latest nudge when it has
//!   no page event), so the stored session keeps it;
//! - a session's `visitor_id` (SPEC 15) goes on every one of its events, as a storefront sends it;
//! - `ended_at` is derived (the latest event); a recorded `ended_at` after every event is not
//!   kept. docs/DECISIONS.md (SPEC 11) lists these.

use nudge_rules::replay::{NudgeOutcome, SessionRecord, Sessions};

use crate::app::ingest::{SessionAge, store_events};
use crate::domain::event::{EventKind, NewEvent, Scope};
use crate::domain::ids::path_key;
use crate::store::{Store, StoreError};

/// Sessions stored per transaction.
const SESSIONS_PER_BATCH: usize = 500;

/// How an import reads its input.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportOptions {
    /// The site's `case_sensitive` (SPEC 4): how URLs become the page keys `page_count` counts.
    pub case_sensitive: bool,
    /// Added to every time, in milliseconds (`--demo` moves the sample into the last 30 days).
    pub shift_ms: i64,
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Sessions read and stored (or already stored).
    pub sessions: usize,
    /// Events newly stored.
    pub events: usize,
    /// Events already stored by an earlier import.
    pub duplicates: usize,
    /// Each record that could not be read: `line N: path: message`.
    pub bad_records: Vec<String>,
}

/// The events of one recorded session (module docs).
pub fn events_of(record: &SessionRecord<'_>, options: &ImportOptions) -> Vec<NewEvent> {
    let session_id = record.id().to_owned();
    let mut events: Vec<NewEvent> = Vec::new();
    for (i, e) in record.events().enumerate() {
        let kind = EventKind::parse(e.event_type).filter(|k| k.is_page_event());
        events.push(NewEvent {
            url: Some(e.url.to_owned()),
            path_key: Some(path_key(e.url, options.case_sensitive)),
            intent_score: e.intent_score,
            ..NewEvent::new(
                format!("import:{session_id}:e{i}"),
                session_id.clone(),
                kind.unwrap_or(EventKind::PageView),
                e.occurred_at_ms.saturating_add(options.shift_ms),
            )
        });
    }
    let page_events = events.len();
    for (j, n) in record.nudges().enumerate() {
        let nudge_id = match n.nudge_id {
            Some(id) => id.to_owned(),
            None => format!("nudg_{}{j}", session_id.trim_start_matches("sess_")),
        };
        let at = n.shown_at_ms.saturating_add(options.shift_ms);
        let shown = NewEvent {
            nudge_id: Some(nudge_id.clone()),
            nudge_type: Some(n.nudge_type.to_owned()),
            ..NewEvent::new(
                format!("import:{session_id}:n{j}"),
                session_id.clone(),
                EventKind::NudgeShown,
                at,
            )
        };
        events.push(shown);
        if n.outcome != NudgeOutcome::Shown {
            events.push(NewEvent {
                nudge_id: Some(nudge_id),
                outcome: Some(n.outcome.as_str().to_owned()),
                ..NewEvent::new(
                    format!("import:{session_id}:n{j}:outcome"),
                    session_id.clone(),
                    EventKind::NudgeOutcome,
                    at,
                )
            });
        }
    }
    // The session's intent score on its latest page event (the reader sorted them), else on
    // its latest nudge.
    let carrier = if page_events > 0 {
        page_events.checked_sub(1)
    } else {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == EventKind::NudgeShown)
            .max_by_key(|(_, e)| e.occurred_at_ms)
            .map(|(i, _)| i)
    };
    if let Some(event) = carrier.and_then(|i| events.get_mut(i)) {
        event.intent_score = Some(record.intent_score());
    }
    // The session's visitor (SPEC 15), on every event as a storefront sends it.
    if let Some(visitor) = record.visitor_id() {
        for e in &mut events {
            e.visitor_id = Some(visitor.to_owned());
        }
    }
    events
}

/// Reads `text` (one session per line, or an array) and stores every readable session in
/// `scope`; `progress(done, total)` is called after each batch.
///
/// A JSONL input is read line by line: a bad line is reported (`bad_records`) and the others
/// are imported. An array is read whole: any error reports every problem and imports nothing.
///
/// # Errors
///
/// [`StoreError`]: batches committed before it stay stored (a rerun completes the import).
pub async fn import(
    store: &Store,
    scope: &Scope,
    text: &str,
    options: &ImportOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport, StoreError> {
    let mut report = ImportReport::default();
    let mut parsed: Vec<Sessions> = Vec::new();
    if text.trim_start().starts_with('[') {
        match Sessions::from_text(text) {
            Ok(sessions) => parsed.push(sessions),
            Err(e) => report
                .bad_records
                .extend(e.diagnostics().iter().map(ToString::to_string)),
        }
    } else {
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match Sessions::from_text(line) {
                Ok(sessions) => parsed.push(sessions),
                Err(e) => report.bad_records.extend(e.diagnostics().iter().map(|d| {
                    let column = d
                        .column
                        .map(|c| format!(", column {c}"))
                        .unwrap_or_default();
                    let path = if d.path.is_empty() {
                        String::new()
                    } else {
                        format!("{}: ", d.path)
                    };
                    format!("line {}{column}: {path}{}", index + 1, d.message)
                })),
            }
        }
    }
    let total: usize = parsed.iter().map(Sessions::len).sum();
    let mut batch: Vec<NewEvent> = Vec::new();
    let mut in_batch = 0;
    let received_at = crate::domain::time::now_ms();
    for record in parsed.iter().flat_map(Sessions::records) {
        batch.extend(events_of(&record, options));
        in_batch += 1;
        if in_batch == SESSIONS_PER_BATCH {
            flush(store, scope, &mut batch, received_at, &mut report).await?;
            report.sessions += in_batch;
            in_batch = 0;
            progress(report.sessions, total);
        }
    }
    flush(store, scope, &mut batch, received_at, &mut report).await?;
    report.sessions += in_batch;
    progress(report.sessions, total);
    // A bulk load changes the tables' shape: fresh statistics keep the reads on their indexes.
    store.analyze().await?;
    Ok(report)
}

async fn flush(
    store: &Store,
    scope: &Scope,
    batch: &mut Vec<NewEvent>,
    received_at: i64,
    report: &mut ImportReport,
) -> Result<(), StoreError> {
    if batch.is_empty() {
        return Ok(());
    }
    let outcome = store_events(store, scope, batch, received_at, SessionAge::Any).await?;
    report.events += outcome.accepted;
    report.duplicates += outcome.duplicates.len();
    batch.clear();
    Ok(())
}
