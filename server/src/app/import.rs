//! Import of recorded sessions (docs/contract/store.md "Import"): the API document's 2.2 shape, one per line
//! (streamed: bounded memory whatever the file's size) or an array, read by the library's
//! replay reader, stored as events so that every derived
//! field is recomputed, idempotent (each event's `message_id` is derived from the session id
//! and the event's place in it, so a second import is all duplicates).
//!
//! How a 2.2 session becomes events:
//! - each of its `events` is a page event with its `url`, `occurred_at` and `intent_score`;
//! - each of its `nudges` is a NUDGE_SHOWN at `shown_at` and, unless `outcome` is `shown`, a
//!   NUDGE_OUTCOME at the same time (the document records no interaction time);
//! - the session's `intent_score` goes on its latest page event (or latest nudge when it has
//!   no page event), so the stored session keeps it;
//! - a session's `visitor_id` (docs/contract/caps.md) goes on every one of its events, as a storefront sends it;
//! - `ended_at` is derived (the latest event); a recorded `ended_at` after every event is not
//!   kept. docs/DECISIONS.md (docs/contract/store.md) lists these.

use std::io::{BufRead, Read};

use nudge_rules::NudgeType;
use nudge_rules::limits::MAX_SESSIONS_BYTES;
use nudge_rules::replay::{NudgeOutcome, SessionRecord, Sessions};

use crate::app::ingest::{SessionAge, store_events};
use crate::domain::event::{EventKind, NewEvent, Scope};
use crate::domain::ids::path_key;
use crate::store::{Store, StoreError};

/// Sessions stored per transaction.
const SESSIONS_PER_BATCH: usize = 500;

/// How an import reads its input.
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions {
    /// The site's `case_sensitive` (docs/contract/urls.md): how URLs become the page keys `page_count` counts.
    pub case_sensitive: bool,
    /// Added to every time, in milliseconds (`--demo` moves the sample into the last 30 days;
    /// `--shift-to-now` moves the latest event to now: [`latest_ms`]).
    pub shift_ms: i64,
    /// The site's retention window's start (Unix ms, [`Retention::visible_from_ms`]): sessions
    /// that start before it (after the shift) are counted in
    /// [`ImportReport::outside_retention`]. `None` counts nothing.
    ///
    /// [`Retention::visible_from_ms`]: crate::domain::retention::Retention::visible_from_ms
    pub visible_from_ms: Option<i64>,
    /// When the import runs (Unix ms, its caller's clock): every event's `received_at`, and
    /// the time of the webhook messages its events make (docs/contract/webhooks.md).
    pub received_at_ms: i64,
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
    /// Sessions stored that start before the site's retention window
    /// ([`ImportOptions::visible_from_ms`]): the read API does not show them, and the purge
    /// deletes them once they are older than the window plus the grace (docs/contract/read-api.md).
    pub outside_retention: usize,
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
            nudge_type: NudgeType::from_wire(n.nudge_type),
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
                outcome: Some(n.outcome),
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
    // The session's visitor (docs/contract/caps.md), on every event as a storefront sends it.
    if let Some(visitor) = record.visitor_id() {
        for e in &mut events {
            e.visitor_id = Some(visitor.to_owned());
        }
    }
    events
}

/// Where an import is: called after each batch of sessions stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportProgress {
    /// Sessions read and stored so far.
    pub sessions: usize,
    /// Bytes of the input read so far.
    pub bytes: u64,
}

/// Reads `text` (one session per line, or an array) and stores every readable session in
/// `scope`: [`import_reader`] over the text; `progress(sessions, bytes)` after each batch.
///
/// # Errors
///
/// As [`import_reader`].
pub async fn import(
    store: &Store,
    scope: &Scope,
    text: &str,
    options: &ImportOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ImportReport, StoreError> {
    let mut report = |p: ImportProgress| {
        progress(p.sessions, usize::try_from(p.bytes).unwrap_or(usize::MAX));
    };
    import_reader(store, scope, text.as_bytes(), options, &mut report).await
}

/// Reads sessions from `input` and stores every readable one in `scope`, a batch at a time;
/// `progress` is called after each batch.
///
/// JSON Lines are streamed: one line in memory at a time, and one batch of events (500
/// sessions), so a file of any size imports in bounded memory; a bad line (not UTF-8, not a
/// session) is reported (`bad_records`, with its line and column) and the others are imported.
/// An array (the input's first byte other than whitespace is `[`) is read whole, up to the
/// replay reader's 64 MiB; any error in it reports every problem and imports nothing.
///
/// # Errors
///
/// [`StoreError`]: batches committed before it stay stored (a rerun completes the import).
/// An input that cannot be read is reported as a bad record (what was read before is stored).
pub async fn import_reader<R: BufRead>(
    store: &Store,
    scope: &Scope,
    mut input: R,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport, StoreError> {
    let mut run = Run {
        store,
        scope,
        options,
        report: ImportReport::default(),
        batch: Vec::new(),
        in_batch: 0,
        bytes: 0,
        received_at: options.received_at_ms,
    };
    if starts_with_bracket(&mut input) {
        let mut text = String::new();
        let limit = u64::try_from(MAX_SESSIONS_BYTES).unwrap_or(u64::MAX) + 1;
        match input.take(limit).read_to_string(&mut text) {
            Ok(n) => run.bytes = n as u64,
            Err(e) => run
                .report
                .bad_records
                .push(format!("cannot read the input: {e}")),
        }
        match Sessions::from_text(&text) {
            Ok(sessions) => {
                for record in sessions.records() {
                    run.add(&record, progress).await?;
                }
            }
            Err(e) => run
                .report
                .bad_records
                .extend(e.diagnostics().iter().map(ToString::to_string)),
        }
    } else {
        let mut line: Vec<u8> = Vec::new();
        let mut number = 0usize;
        loop {
            line.clear();
            let read = match input.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) => {
                    run.report
                        .bad_records
                        .push(format!("line {}: cannot read the input: {e}", number + 1));
                    break;
                }
            };
            number += 1;
            run.bytes += read as u64;
            let text = match std::str::from_utf8(&line) {
                Ok(text) => text,
                Err(e) => {
                    run.report.bad_records.push(format!(
                        "line {number}, column {}: not UTF-8",
                        e.valid_up_to() + 1
                    ));
                    continue;
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            match Sessions::from_text(text) {
                Ok(sessions) => {
                    for record in sessions.records() {
                        run.add(&record, progress).await?;
                    }
                }
                Err(e) => run
                    .report
                    .bad_records
                    .extend(e.diagnostics().iter().map(|d| line_diagnostic(number, d))),
            }
        }
    }
    run.flush(progress).await?;
    // A bulk load changes the tables' shape: fresh statistics keep the reads on their indexes.
    store.analyze().await?;
    Ok(run.report)
}

/// `imported N sessions, X of Y MB (P%) (T s)` (`X MB read` without `total_bytes`): the
/// import command's progress line, `elapsed` after its start.
pub fn progress_line(
    p: ImportProgress,
    total_bytes: Option<u64>,
    elapsed: std::time::Duration,
) -> String {
    let mb = |bytes: u64| bytes as f64 / 1e6;
    let read = match total_bytes {
        Some(total) if total > 0 => format!(
            "{:.1} of {:.1} MB ({:.0}%)",
            mb(p.bytes),
            mb(total),
            100.0 * p.bytes as f64 / total as f64
        ),
        _ => format!("{:.1} MB read", mb(p.bytes)),
    };
    format!(
        "imported {} sessions, {read} ({:.1} s)",
        p.sessions,
        elapsed.as_secs_f64()
    )
}

/// The latest time (Unix ms) of any event or nudge in `input` (JSONL or an array, read as
/// [`import_reader`] reads it, lines that cannot be read skipped), or `None` when it has none:
/// what `--shift-to-now` moves to now. Reads the input once, in bounded memory for JSONL.
///
/// # Errors
///
/// The input cannot be read.
pub fn latest_ms<R: BufRead>(mut input: R) -> std::io::Result<Option<i64>> {
    let mut latest: Option<i64> = None;
    let mut see = |sessions: &Sessions| {
        for record in sessions.records() {
            let times = record
                .events()
                .map(|e| e.occurred_at_ms)
                .chain(record.nudges().map(|n| n.shown_at_ms));
            latest = latest.max(times.max());
        }
    };
    if starts_with_bracket(&mut input) {
        let mut text = String::new();
        let limit = u64::try_from(MAX_SESSIONS_BYTES).unwrap_or(u64::MAX) + 1;
        input.take(limit).read_to_string(&mut text)?;
        if let Ok(sessions) = Sessions::from_text(&text) {
            see(&sessions);
        }
    } else {
        let mut line: Vec<u8> = Vec::new();
        while input.read_until(b'\n', &mut line)? > 0 {
            if let Ok(sessions) = std::str::from_utf8(&line)
                .map_err(drop)
                .and_then(|text| Sessions::from_text(text).map_err(drop))
            {
                see(&sessions);
            }
            line.clear();
        }
    }
    Ok(latest)
}

/// Whether the input's first byte other than ASCII whitespace is `[` (an array); consumes the
/// whitespace before it only.
fn starts_with_bracket<R: BufRead>(input: &mut R) -> bool {
    loop {
        let (skip, found) = match input.fill_buf() {
            Ok([]) | Err(_) => return false,
            Ok(buf) => match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => (i, buf.get(i).copied()),
                None => (buf.len(), None),
            },
        };
        input.consume(skip);
        if let Some(byte) = found {
            return byte == b'[';
        }
    }
}

/// `line N, column C: path: message` for a diagnostic of line `number` of a JSONL input.
fn line_diagnostic(number: usize, d: &nudge_rules::Diagnostic) -> String {
    let column = d
        .column
        .map(|c| format!(", column {c}"))
        .unwrap_or_default();
    let path = if d.path.is_empty() {
        String::new()
    } else {
        format!("{}: ", d.path)
    };
    format!("line {number}{column}: {path}{}", d.message)
}

/// An import under way: the batch being filled and what was done.
struct Run<'a> {
    store: &'a Store,
    scope: &'a Scope,
    options: &'a ImportOptions,
    report: ImportReport,
    batch: Vec<NewEvent>,
    in_batch: usize,
    bytes: u64,
    received_at: i64,
}

impl Run<'_> {
    /// Adds a session's events to the batch, storing the batch once it holds
    /// [`SESSIONS_PER_BATCH`] sessions.
    async fn add(
        &mut self,
        record: &SessionRecord<'_>,
        progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<(), StoreError> {
        let events = events_of(record, self.options);
        let started_at = events.iter().map(|e| e.occurred_at_ms).min();
        if let (Some(from), Some(started_at)) = (self.options.visible_from_ms, started_at)
            && started_at < from
        {
            self.report.outside_retention += 1;
        }
        self.batch.extend(events);
        self.in_batch += 1;
        if self.in_batch >= SESSIONS_PER_BATCH {
            self.flush(progress).await?;
        }
        Ok(())
    }

    async fn flush(&mut self, progress: &mut dyn FnMut(ImportProgress)) -> Result<(), StoreError> {
        flush(
            self.store,
            self.scope,
            &mut self.batch,
            self.received_at,
            &mut self.report,
        )
        .await?;
        self.report.sessions += self.in_batch;
        self.in_batch = 0;
        progress(ImportProgress {
            sessions: self.report.sessions,
            bytes: self.bytes,
        });
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = r#"{"id":"sess_a","ended_at":"2026-03-01T12:00:20Z","intent_score":1,"events":[{"type":"PAGE_VIEW","url":"/","occurred_at":"2026-03-01T12:00:00Z"}]}"#;
    const B: &str = r#"{"id":"sess_b","ended_at":"2026-03-02T12:00:00Z","intent_score":1,"events":[],"nudges":[{"type":"toast","shown_at":"2026-03-02T11:00:00Z","outcome":"shown","influenced_conversion":false}]}"#;

    #[test]
    fn latest_ms_reads_lines_arrays_and_skips_what_it_cannot_read() {
        let at = |text: &str| crate::domain::time::parse_rfc3339_ms(text, 3).unwrap();
        let lines = format!("{A}\n\nnot json\n\u{0}\n{B}\n");
        let mut bytes = lines.into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        assert_eq!(
            latest_ms(bytes.as_slice()).unwrap(),
            Some(at("2026-03-02T11:00:00Z")),
            "the shown nudge of b is the latest time"
        );
        let array = format!("  \n [{A}, {B}]");
        assert_eq!(
            latest_ms(array.as_bytes()).unwrap(),
            Some(at("2026-03-02T11:00:00Z"))
        );
        assert_eq!(latest_ms(&b""[..]).unwrap(), None);
        assert_eq!(latest_ms(&b"\n \n"[..]).unwrap(), None);
    }

    #[test]
    fn an_array_is_told_from_lines_by_its_first_byte() {
        let mut input: &[u8] = b" \n\t[1]";
        assert!(starts_with_bracket(&mut input));
        assert_eq!(input, b"[1]");
        let mut input: &[u8] = b"  {\"id\": 1}";
        assert!(!starts_with_bracket(&mut input));
        let mut input: &[u8] = b"   ";
        assert!(!starts_with_bracket(&mut input));
    }
}
