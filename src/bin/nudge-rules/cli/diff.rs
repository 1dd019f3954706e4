//! `nudge-rules diff --config OLD --config NEW [SCENARIOS or SESSIONS...]` (docs/contract/as-code.md): the inputs
//! whose outcome changes, both outcomes side by side, and a count per change kind; without
//! inputs, the regions of the pages' decision maps that change owner.

use std::fmt::Write as _;

use nudge_rules::diff::{Change, Diff, Side};
use nudge_rules::scenarios::Expectation;

use super::{duration, table};

/// The diff as text; `inputs` are the names of the files given, in order.
pub(crate) fn text(d: &Diff, inputs: &[String]) -> String {
    let mut out = String::new();
    let total: usize = d.counts.iter().map(|c| c.count).sum();
    if inputs.is_empty() {
        let _ = writeln!(
            out,
            "decision maps of {} pages the two configs mention: {} pages change, {total} changes",
            d.pages.len(),
            d.map_changes.len()
        );
    } else {
        let _ = writeln!(
            out,
            "{} scenarios and {} recorded page views compared: {} {}",
            d.scenarios,
            d.page_views,
            d.changes.len(),
            if d.changes.len() == 1 {
                "change"
            } else {
                "changes"
            }
        );
    }
    if !d.counts.is_empty() {
        let rows: Vec<Vec<String>> = d
            .counts
            .iter()
            .map(|c| vec![c.kind.as_str().to_owned(), c.count.to_string()])
            .collect();
        out.push_str(&table(&["change", "count"], &rows, "lr"));
    }
    for c in &d.changes {
        out.push('\n');
        change(&mut out, c, inputs);
    }
    for page in &d.map_changes {
        let _ = write!(out, "\n{}", page.page_url);
        match (&page.old_quiet_zone, &page.new_quiet_zone) {
            (None, Some(z)) => {
                let _ = write!(out, ": now in quiet zone \"{z}\"");
            }
            (Some(z), None) => {
                let _ = write!(out, ": no longer in quiet zone \"{z}\"");
            }
            _ => {}
        }
        out.push('\n');
        let rows: Vec<Vec<String>> = page
            .regions
            .iter()
            .map(|r| {
                vec![
                    format!("{}-{}", r.min_intent_score, r.max_intent_score),
                    format!("{}-{} ms", r.min_idle_ms, r.max_idle_ms),
                    r.old_rule_id.clone().unwrap_or_else(|| "-".to_owned()),
                    "->".to_owned(),
                    r.new_rule_id.clone().unwrap_or_else(|| "-".to_owned()),
                    r.kind.as_str().to_owned(),
                ]
            })
            .collect();
        if !rows.is_empty() {
            out.push_str(&table(
                &["intent", "idle", "old", "", "new", "change"],
                &rows,
                "rrllll",
            ));
        }
    }
    if !d.reach.is_empty() {
        out.push_str("\nreach per rule over the recorded sessions (sessions / page views):\n");
        let cell = |r: Option<nudge_rules::diff::Reach>| {
            r.map_or("-".to_owned(), |r| {
                format!("{} / {}", r.sessions, r.page_views)
            })
        };
        let rows: Vec<Vec<String>> = d
            .reach
            .iter()
            .map(|r| vec![r.rule_id.clone(), cell(r.old), cell(r.new)])
            .collect();
        out.push_str(&table(&["rule", "old", "new"], &rows, "lrr"));
    }
    out
}

fn change(out: &mut String, c: &Change, inputs: &[String]) {
    let file = inputs.get(c.input).map(String::as_str).unwrap_or("");
    match (&c.scenario, &c.session_id, c.page_index) {
        (Some(name), _, _) => {
            let _ = writeln!(out, "{}  scenario {name:?} ({file})", c.kind.as_str());
        }
        (None, Some(id), Some(page)) => {
            let url = c.page_url.as_deref().unwrap_or("");
            let _ = writeln!(
                out,
                "{}  {id} page {} {url} ({file})",
                c.kind.as_str(),
                page + 1
            );
        }
        _ => {}
    }
    let _ = writeln!(out, "  old: {}", side(&c.old));
    let _ = writeln!(out, "  new: {}", side(&c.new));
}

fn side(s: &Side) -> String {
    let mut text = match (&s.outcome, &s.nudge) {
        (Expectation::Rule(id), Some(n)) => format!("{id} ({})", n.nudge_type),
        (o, _) => o.to_string(),
    };
    if let Some(at) = s.at_ms {
        let _ = write!(text, " at {}", duration(u64::from(at)));
    }
    if let Some(reason) = &s.reason {
        let _ = write!(text, ": {reason}");
    }
    text
}
