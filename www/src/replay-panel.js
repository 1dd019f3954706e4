// The Replay panel (docs/contract/as-code.md, issue 14): recorded sessions (API document 2.2) replayed against the
// config before the edit (the baseline) and after it, as reach per rule; the page views whose
// outcome changes on demand. The replays run in the worker (as-code.js): the file is read once,
// then each edit costs one replay.

import { describeExpectation } from './scenarios-panel.js';
import { firesWhen } from './card-words.js';
import { seconds } from './plain.js';
import { esc, fetchExample, formatInt, onTextFileChosen } from './util.js';

export const KIND_LABELS = {
  nudge_added: 'a nudge now fires',
  nudge_removed: 'no nudge any more',
  rule_changed: 'another rule fires',
  nudge_changed: 'the same rule shows another nudge',
  timing_changed: 'the nudge fires at another time',
  quiet_zone_added: 'now in a quiet zone',
  quiet_zone_removed: 'no longer in a quiet zone',
  error_changed: 'the page is judged differently',
  holdout_changed: 'the visitor is held out differently',
};
const SHOWN_CHANGES = 50;
const ROWS_SHOWN = 40;

export class ReplayPanel {
  /**
   * @param {HTMLElement} root  the panel's body (index.html `#replay-body`)
   * @param {{ send: (job) => void, baseline: () => { text: string, label: string },
   *           currentText: () => string, notify: (text) => void }} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.loaded = false;
    root.innerHTML = `
      <div class="rp-tools">
        <button type="button" class="btn btn-primary" data-act="sample">Replay the sample sessions</button>
        <button type="button" class="btn" data-act="open">Load a sessions file</button>
        <input type="file" accept=".jsonl,.json,.ndjson,application/json" hidden>
        <button type="button" class="btn btn-quiet" data-act="rebase" disabled>Compare from the current config</button>
      </div>
      <p class="hint">Recorded sessions (what <code>GET /v1/sessions/{id}</code> returns, one per line or an array): each page view is replayed with its real dwell time, before and after your edits.</p>
      <p class="rp-error" role="alert" hidden></p>
      <p class="rp-summary" role="status"></p>
      <div class="table-scroll" tabindex="0" role="region" aria-label="Reach per rule, before and after the edit" hidden>
        <table class="rp-table">
          <thead><tr><th scope="col">Rule</th><th scope="col">Sessions reached</th><th scope="col">Page views with its nudge</th></tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <button type="button" class="btn btn-quiet" data-act="more" hidden></button>
      <div class="rp-diff">
        <button type="button" class="btn" data-act="diff" hidden>Show the page views that change</button>
        <div class="rp-changes"></div>
      </div>`;
    this.summary = root.querySelector('.rp-summary');
    this.error = root.querySelector('.rp-error');
    this.tableWrap = root.querySelector('.table-scroll');
    this.rows = root.querySelector('tbody');
    this.diffBtn = root.querySelector('[data-act=diff]');
    this.rebaseBtn = root.querySelector('[data-act=rebase]');
    this.changes = root.querySelector('.rp-changes');
    this.moreBtn = root.querySelector('[data-act=more]');
    this.showAll = false;
    // Real sessions of a connected server (real-sessions.js): `{ diff }` while the panel shows a
    // backtest, whose changed page views come with its answer; null while it shows a file.
    this.remote = null;
    this.moreBtn.addEventListener('click', () => {
      this.showAll = true;
      this.drawRows();
    });
    root.querySelector('[data-act=sample]').addEventListener('click', () => this.loadSample());
    onTextFileChosen(root.querySelector('[data-act=open]'), root.querySelector('input[type=file]'), (text, name) =>
      this.load(text, name), (why) => this.showError(`${why}: it was not replayed.`),
    );
    this.rebaseBtn.addEventListener('click', () => {
      this.baseLabel = 'the config when you pressed “Compare from the current config”';
      this.host.send({ replayBase: this.host.currentText() });
      this.changes.replaceChildren();
    });
    this.diffBtn.addEventListener('click', () => {
      if (this.remote) {
        this.renderDiff(this.remote.diff);
        return;
      }
      this.changes.textContent = 'Comparing every page view…';
      this.host.send({ diff: true });
    });
  }

  async loadSample() {
    try {
      this.load(await fetchExample('sessions.jsonl'), 'the sample sessions (examples/sessions.jsonl)');
    } catch (err) {
      this.showError(`The sample sessions could not be fetched: ${err.message}`);
    }
  }

  load(text, label) {
    const base = this.host.baseline();
    this.baseLabel = base.label;
    this.summary.textContent = `Reading ${label}…`;
    this.changes.replaceChildren();
    this.host.send({ sessions: { text, label }, replayBase: base.text });
  }

  showError(text) {
    this.error.hidden = !text;
    this.error.textContent = text ?? '';
  }

  /** The worker's replay: `{ label, sessions, before, after, baseError }` or `{ error, label }`. */
  render(r) {
    if (this.remote && !r.remote) return; // a file's replay still on its way after a switch to real sessions
    if (r.error) {
      this.showError(`${r.label} could not be replayed: ${r.error}`);
      this.summary.textContent = '';
      this.tableWrap.hidden = true;
      this.diffBtn.hidden = true;
      return;
    }
    this.showError(r.baseError ? `The baseline (${this.baseLabel}) has errors, so there is no “before”: ${r.baseError}` : null);
    this.loaded = true;
    this.rebaseBtn.disabled = false;
    const { before, after } = r;
    const views = (s) => (s ? formatInt(s.page_views_with_nudge) : '–');
    this.summary.innerHTML = `${esc(formatInt(after.sessions))} sessions and ${esc(formatInt(after.page_views))} page views from ${esc(r.label)}.` +
      ` Page views with a nudge: <b>${views(before)}</b> with ${esc(this.baseLabel)}, <b>${views(after)}</b> now.`;
    this.last = r;
    this.drawRows();
    this.tableWrap.hidden = false;
    this.diffBtn.hidden = before === null;
    if (this.changes.childElementCount) this.changes.replaceChildren();
  }

  /**
   * One row per rule, the rules whose reach changed first (most changed page views first), then
   * the others in config order; a long list (a 1,000-rule config) shows its first rows and a
   * button for the rest.
   */
  drawRows() {
    const { before, after } = this.last;
    const hasBefore = before !== null;
    const beforeById = new Map((before?.rules ?? []).map((x) => [x.rule_id, x]));
    const afterIds = new Set(after.rules.map((x) => x.rule_id));
    const pairs = after.rules.map((x) => [x.rule_id, beforeById.get(x.rule_id), x]);
    for (const x of before?.rules ?? []) if (!afterIds.has(x.rule_id)) pairs.push([x.rule_id, x, null]);
    const change = ([, b, a]) => (hasBefore ? Math.abs((a?.page_views ?? 0) - (b?.page_views ?? 0)) + (changed(b, a) ? 1 : 0) : 0);
    const order = pairs.map((p, i) => [change(p), i]).sort((x, y) => y[0] - x[0] || x[1] - y[1]);
    const shown = this.showAll ? order : order.slice(0, ROWS_SHOWN);
    this.rows.innerHTML = shown.map(([, i]) => row(pairs[i][0], pairs[i][1], pairs[i][2], hasBefore)).join('');
    const hidden = order.length - shown.length;
    this.moreBtn.hidden = hidden === 0;
    this.moreBtn.textContent = `Show the other ${formatInt(hidden)} rules`;
  }

  /** The worker's diff of every recorded page view between the baseline and the current config. */
  renderDiff(d) {
    if (d.error) {
      this.changes.textContent = `The comparison failed: ${d.error}`;
      return;
    }
    if (!d.changes.length) {
      this.changes.innerHTML = `<p>No recorded page view changes outcome against ${esc(this.baseLabel)}.</p>`;
      return;
    }
    const counts = d.counts.map((c) => `<li>${esc(formatInt(c.count))}: ${esc(KIND_LABELS[c.kind] ?? c.kind)}</li>`).join('');
    const items = d.changes.slice(0, SHOWN_CHANGES).map((c) => `
      <li><span class="rp-kind">${esc(KIND_LABELS[c.kind] ?? c.kind)}</span>
        <code>${esc(c.page_url ?? c.scenario ?? '')}</code>${viewTime(c)} <span class="muted">session ${esc(c.session_id ?? '')}</span><br>
        before: ${esc(side(c.old))}; now: ${esc(side(c.new))}</li>`).join('');
    const total = d.total ?? d.changes.length; // a backtest sends the count and its first 100 changes
    const shown = Math.min(SHOWN_CHANGES, d.changes.length);
    const more = total > shown ? `<p class="hint">The first ${shown} of ${formatInt(total)} are shown.</p>` : '';
    this.changes.innerHTML = `<p><b>${esc(formatInt(total))} of ${esc(formatInt(d.page_views))} page views change</b>:</p>
      <ul class="rp-counts">${counts}</ul><ol class="rp-change-list">${items}</ol>${more}`;
  }
}

/**
 * When the page view was: its clock time (UTC, as recorded) and how far into the session, so
 * that two views of one page in a session read apart: " viewed at 08:05:43 UTC, 8.6 s in".
 */
function viewTime(c) {
  if (!c.occurred_at) return '';
  const clock = /T(\d\d:\d\d:\d\d)/.exec(c.occurred_at)?.[1] ?? c.occurred_at;
  const into = c.offset_ms ? `, ${seconds(c.offset_ms)} in` : ', first page';
  return ` <span class="rp-when">viewed at <time datetime="${esc(c.occurred_at)}">${esc(clock)} UTC</time>${esc(into)}</span>`;
}

/** One side of a change, as the rule cards say it: "rule “x” fires at once", "... after 8 s". */
function side(s) {
  const what = describeExpectation(s.outcome);
  return s.at_ms === null || s.at_ms === undefined ? what : `${what} ${firesWhen(s.at_ms)}`;
}

function delta(before, after, hasBefore) {
  if (!hasBefore) return `${esc(formatInt(after ?? 0))}`;
  const b = before ?? 0;
  const a = after ?? 0;
  const d = a - b;
  const sign = d > 0 ? `+${formatInt(d)}` : d < 0 ? `−${formatInt(-d)}` : '';
  return `${esc(formatInt(b))} → <b>${esc(formatInt(a))}</b>${sign ? ` <span class="rp-delta ${d > 0 ? 'up' : 'down'}">${sign}</span>` : ''}`;
}

function changed(before, after) {
  return before?.sessions !== after?.sessions || before?.page_views !== after?.page_views;
}

function row(id, before, after, hasBefore) {
  const marked = hasBefore && changed(before, after);
  const note = !after ? ' <span class="muted">(removed)</span>' : hasBefore && !before ? ' <span class="muted">(new)</span>' : '';
  return `<tr class="${marked ? 'changed' : ''}" data-rule="${esc(id)}"><th scope="row">${esc(id)}${note}</th>` +
    `<td>${delta(before?.sessions, after?.sessions, hasBefore)}</td><td>${delta(before?.page_views, after?.page_views, hasBefore)}</td></tr>`;
}
