//! `nudge-rules replay --config CONFIG SESSIONS` (docs/contract/as-code.md): each session's pages with the nudge
//! that would fire and when, beside the nudges really shown; then the summary per rule and per
//! nudge type against the recorded nudges and their outcomes.

use std::fmt::Write as _;

use nudge_rules::replay::{
    OutcomeCounts, PageOutcome, RecordedNudgeView, Replay, ReplaySummary, SessionReplay,
};

use super::{duration, share, table};

/// The whole replay as text: every session, then the summary.
pub(crate) fn text(replay: &Replay, summary_only: bool) -> String {
    let mut out = String::new();
    if !summary_only {
        for s in &replay.sessions {
            session(&mut out, s);
        }
    }
    out.push_str(&summary(&replay.summary));
    out
}

fn session(out: &mut String, s: &SessionReplay) {
    let converted = match s.converted {
        Some(true) => ", converted",
        Some(false) => ", not converted",
        None => "",
    };
    let recorded: usize =
        s.pages.iter().map(|p| p.recorded.len()).sum::<usize>() + s.unplaced_nudges.len();
    let start = s.pages.first().map_or("", |p| p.occurred_at.as_str());
    let _ = writeln!(
        out,
        "{}  {start}  intent {}{converted}, {} page views, {recorded} recorded nudges",
        s.id,
        s.intent_score,
        s.pages.len()
    );
    let rows: Vec<Vec<String>> = s
        .pages
        .iter()
        .map(|p| {
            let intent = if p.intent_score == s.intent_score {
                String::new()
            } else {
                format!("intent {}", p.intent_score)
            };
            vec![
                format!("+{}", duration(p.offset_ms)),
                p.event_type.clone(),
                p.page_url.clone(),
                duration(p.dwell_ms),
                intent,
                match (&p.outcome, &p.capped_rule_id) {
                    (PageOutcome::NoNudge, Some(capped)) => format!("- ({capped} capped)"),
                    (o, Some(capped)) => format!("{} ({capped} capped)", outcome(o)),
                    (o, None) => outcome(o),
                },
                p.recorded
                    .iter()
                    .map(recorded_nudge)
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "at",
            "event",
            "page",
            "dwell",
            "",
            "would fire",
            "really shown",
        ],
        &rows,
        "rllrlll",
    ));
    for n in &s.unplaced_nudges {
        let _ = writeln!(out, "  (outside the page views) {}", recorded_nudge(n));
    }
    out.push('\n');
}

fn outcome(o: &PageOutcome) -> String {
    match o {
        PageOutcome::Fired {
            rule_id,
            nudge_type,
            at_ms,
            ..
        } => format!(
            "{rule_id} ({nudge_type}) at {}",
            duration(u64::from(*at_ms))
        ),
        PageOutcome::HeldOut { rule_id, at_ms, .. } => {
            format!("held out from {rule_id} at {}", duration(u64::from(*at_ms)))
        }
        PageOutcome::QuietZone { quiet_zone } => format!("quiet zone {}", quiet_zone.pattern),
        PageOutcome::Rejected { url_error } => format!("rejected URL ({})", url_error.code),
        _ => "-".to_owned(),
    }
}

fn recorded_nudge(n: &RecordedNudgeView) -> String {
    let at = n
        .at_ms
        .map(|ms| format!(" at {}", duration(ms)))
        .unwrap_or_default();
    let influenced = if n.influenced_conversion {
        ", influenced conversion"
    } else {
        ""
    };
    format!("{}{at} {}{influenced}", n.nudge_type, n.outcome.as_str())
}

fn outcome_cells(c: &OutcomeCounts) -> [String; 6] {
    [
        c.nudges,
        c.shown,
        c.clicked,
        c.dismissed,
        c.chat_opened,
        c.influenced_conversion,
    ]
    .map(|n| n.to_string())
}

/// The summary tables.
pub(crate) fn summary(s: &ReplaySummary) -> String {
    let mut out = format!(
        "{} sessions ({} converted), {} page views: {} with a nudge, {} in a quiet zone, {} with a rejected URL; {} recorded nudges ({} outside the page views)\n\n",
        s.sessions,
        s.converted_sessions,
        s.page_views,
        share(s.page_views_with_nudge, s.page_views),
        s.page_views_quiet,
        s.page_views_rejected,
        s.recorded_nudges,
        s.unplaced_nudges
    );
    out.push_str(
        "predicted reach per rule, and the nudges of its type really shown on those page views:\n",
    );
    let rows: Vec<Vec<String>> = s
        .rules
        .iter()
        .map(|r| {
            let mut row = vec![
                r.rule_id.clone(),
                r.nudge_type.to_string(),
                if r.enabled {
                    r.sessions.to_string()
                } else {
                    "disabled".to_owned()
                },
                r.held_out_sessions.to_string(),
                r.converted_sessions.to_string(),
                r.page_views.to_string(),
                r.capped_page_views.to_string(),
                r.held_out_events.to_string(),
            ];
            row.extend(outcome_cells(&r.recorded_same_type));
            row
        })
        .collect();
    out.push_str(&table(
        &[
            "rule",
            "type",
            "sessions",
            "held-out sessions",
            "converted",
            "page views",
            "capped",
            "held-out events",
            "recorded there",
            "shown",
            "clicked",
            "dismissed",
            "chat_opened",
            "influenced",
        ],
        &rows,
        "llrrrrrrrrrrrr",
    ));
    out.push_str(
        "(sessions: where the rule would show its nudge; held-out sessions: where it would fire but the session's visitor_id is in its control group; capped: page views on which the rule would have fired but had reached its cap in the session; held-out events: recorded NUDGE_HELD_OUT events, its control group)\n",
    );
    out.push_str("\npredicted against recorded, per nudge type:\n");
    let rows: Vec<Vec<String>> = s
        .nudge_types
        .iter()
        .map(|t| {
            let mut row = vec![
                t.nudge_type.to_string(),
                t.predicted_sessions.to_string(),
                t.predicted_page_views.to_string(),
                t.recorded_sessions.to_string(),
            ];
            row.extend(outcome_cells(&t.recorded));
            row.push(t.recorded_where_predicted.nudges.to_string());
            row
        })
        .collect();
    out.push_str(&table(
        &[
            "type",
            "predicted sessions",
            "page views",
            "recorded sessions",
            "recorded",
            "shown",
            "clicked",
            "dismissed",
            "chat_opened",
            "influenced",
            "where predicted",
        ],
        &rows,
        "lrrrrrrrrrr",
    ));
    out
}
