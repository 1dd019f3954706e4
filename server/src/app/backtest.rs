//! The backtest (docs/contract/backtest.md), with no HTTP in it: the stored sessions of a site and mode that
//! started in a window, replayed against a draft config and against the live config, with what
//! changes (`POST /v1/nudges/backtest`, `http/routes/backtest.rs`).
//!
//! The sessions stream from the store a page at a time ([`REPLAY_PAGE_SESSIONS`]) into a
//! blocking thread that replays them ([`nudge_rules::as_code::backtest::Backtest`], the replay
//! of `nudge-rules replay`), two pages read side by side and one waiting: memory holds about
//! four pages and the summaries, whatever the window.

use std::sync::Arc;

use nudge_rules::Engine;
use nudge_rules::as_code::backtest::{Backtest, BacktestReport};
use nudge_rules::replay::{EventRecord, NudgeRecord, SessionParts, Sessions};

use crate::domain::cursor::Position;
use crate::store::SessionDetail;
use crate::tasks::Tasks;

/// Sessions read from the store per page.
pub const REPLAY_PAGE_SESSIONS: u32 = 1000;

/// Pages read from the store side by side. A page's events are a lookup per session, one
/// database core's work (PostgreSQL: about 13 ms a page of 1,000), while the replay thread
/// waits; with two pages read at once both cores work.
pub const PAGES_IN_FLIGHT: usize = 2;

/// Streams the sessions of `window` from the store into a replay thread, in order.
///
/// The walk first finds where each page ends ([`crate::store::Store::replay_bound`], the
/// sessions index alone), then reads up to [`PAGES_IN_FLIGHT`] pages at once, each one
/// snapshot, and hands them to the replay in order.
///
/// # Errors
///
/// [`crate::store::StoreError`] when the store does not answer.
pub async fn replay_window(
    store: &crate::store::Store,
    scope: &crate::domain::event::Scope,
    window: &crate::store::ListWindow,
    live: Arc<Engine>,
    draft: Arc<Engine>,
    tasks: &Tasks,
) -> Result<BacktestReport, crate::store::StoreError> {
    let (pages, mut received) = tokio::sync::mpsc::channel::<Vec<SessionDetail>>(1);
    let worker = tasks.spawn_blocking(move || {
        let mut backtest = Backtest::new(&live, &draft);
        let mut sessions = Sessions::default();
        while let Some(page) = received.blocking_recv() {
            sessions.clear();
            for detail in &page {
                if let Err(e) = sessions.push(parts_of(detail)) {
                    tracing::warn!(session = %detail.summary.id, error = %e, "a stored session does not replay; skipped");
                }
            }
            backtest.add(&sessions);
        }
        backtest.finish()
    });
    let mut in_flight: std::collections::VecDeque<PageRead> = std::collections::VecDeque::new();
    let mut after: Option<Position> = None;
    let mut bounds_done = false;
    let result = 'walk: loop {
        while !bounds_done && in_flight.len() < PAGES_IN_FLIGHT {
            let upto = match store
                .replay_bound(
                    scope,
                    window,
                    after.as_ref().map(Position::as_key),
                    REPLAY_PAGE_SESSIONS,
                )
                .await
            {
                Ok(upto) => upto.map(|(at, id)| Position::new(at, id)),
                Err(e) => break 'walk Err(e),
            };
            let (store, scope, window) = (store.clone(), scope.clone(), *window);
            let range = (after.clone(), upto.clone());
            in_flight.push_back(PageRead(
                tasks.spawn(async move { read_range(&store, &scope, &window, range).await }),
            ));
            match upto {
                Some(last) => after = Some(last),
                None => bounds_done = true,
            }
        }
        let Some(mut next) = in_flight.pop_front() else {
            break Ok(());
        };
        let page = match (&mut next.0).await {
            Ok(Ok(page)) => page,
            Ok(Err(e)) => break Err(e),
            Err(e) => {
                break Err(crate::store::StoreError::new(format!(
                    "a page read stopped: {e}"
                )));
            }
        };
        if !page.is_empty() && pages.send(page).await.is_err() {
            break Ok(());
        }
    };
    drop(in_flight);
    drop(pages);
    let report = worker
        .await
        .map_err(|e| crate::store::StoreError::new(format!("the replay stopped: {e}")));
    result?;
    report
}

/// A page being read; dropping it (the walk failed, or the client left) stops the read.
struct PageRead(tokio::task::JoinHandle<Result<Vec<SessionDetail>, crate::store::StoreError>>);

impl Drop for PageRead {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The sessions in `(after, upto]` (`upto` `None`: to the window's end). The range held
/// [`REPLAY_PAGE_SESSIONS`] when its bound was read; sessions stored since (late events) make
/// it longer, and it is read on until a read comes back short.
async fn read_range(
    store: &crate::store::Store,
    scope: &crate::domain::event::Scope,
    window: &crate::store::ListWindow,
    (mut after, upto): (Option<Position>, Option<Position>),
) -> Result<Vec<SessionDetail>, crate::store::StoreError> {
    const READ_LIMIT: u32 = 2 * REPLAY_PAGE_SESSIONS;
    let mut sessions = Vec::new();
    loop {
        let page = store
            .replay_page(
                scope,
                window,
                after.as_ref().map(Position::as_key),
                upto.as_ref().map(Position::as_key),
                READ_LIMIT,
            )
            .await?;
        let full = page.len() >= usize::try_from(READ_LIMIT).unwrap_or(usize::MAX);
        after = page
            .last()
            .map(|d| Position::new(d.summary.started_at_ms, d.summary.id.clone()));
        sessions.extend(page);
        if !full {
            return Ok(sessions);
        }
    }
}

/// A stored session as replay reads it: the same session as `GET /v1/sessions/{id}` writes,
/// with its NUDGE_HELD_OUT events besides (type and `rule_id`), which count for caps, and its
/// visitor: the `visitor_id` of its earliest event that has one (a storefront sends one id on
/// every event of a visit), so the replay holds that visitor out as the storefront would
/// (docs/contract/caps.md). A malformed stored id (never, the relay checks it) replays with no visitor.
fn parts_of(detail: &SessionDetail) -> SessionParts<'_> {
    let s = &detail.summary;
    let visitor_id = detail
        .events
        .iter()
        .find_map(|e| e.visitor_id.as_deref())
        .filter(|id| crate::domain::ingest::is_visitor_id(id));
    SessionParts {
        visitor_id,
        id: &s.id,
        ended_at_ms: s.ended_at_ms,
        intent_score: u8::try_from(s.intent_score).unwrap_or(u8::MAX),
        converted: Some(s.converted),
        events: detail
            .events
            .iter()
            .map(|e| EventRecord {
                event_type: &e.event_type,
                url: &e.url,
                occurred_at_ms: e.occurred_at_ms,
                intent_score: e.intent_score.map(|n| u8::try_from(n).unwrap_or(u8::MAX)),
                // A NUDGE_HELD_OUT event names its rule: the replay counts it for that rule's
                // caps and takes it for no page view (docs/contract/caps.md).
                rule_id: e.rule_id.as_deref(),
            })
            .collect(),
        nudges: detail
            .nudges
            .iter()
            .map(|n| NudgeRecord {
                nudge_id: Some(&n.id),
                nudge_type: n.nudge_type.as_str(),
                shown_at_ms: n.shown_at_ms,
                outcome: n.outcome,
                influenced_conversion: n.influenced_conversion,
            })
            .collect(),
    }
}
