// "Real sessions" in the Replay panel (issue 22, docs/contract/backtest.md): once the editor is connected to a
// server (connect.js), the draft is backtested on the site's stored sessions of the last 7, 30
// or 90 days (POST /v1/nudges/backtest) against the live config, and the answer is drawn with the
// same table and change list as a sessions file (replay-panel.js). The backtest follows the draft
// once typing pauses (BACKTEST_MS); a request made stale by a keystroke is cancelled
// (AbortController), and an answer is drawn only for the latest request.

import { parsedOrNull, plainError, problemList } from './connect.js';
import { esc, formatInt, h } from './util.js';

/** The pause in typing after which the backtest is asked for again (one request per pause). */
export const BACKTEST_MS = 300;
const WINDOWS = [7, 30, 90];
const DAY_MS = 86_400_000;

/** "17 Nov" (the window's ends in the summary). */
function day(iso) {
  return new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'short' });
}

/** The live config as a backtest names it: "live version 3", "the config file (a1b2c3d4e5f6)". */
export function liveWords(liveVersion) {
  if (/^\d+$/.test(liveVersion ?? '')) {
    return liveVersion === '0' ? 'the live config (nothing published yet: no rules)' : `live version ${liveVersion}`;
  }
  return `the live config file (${liveVersion})`;
}

/** A backtest's changes as the Replay panel's change list takes them (replay-panel.js renderDiff). */
export function asDiff(data) {
  const counts = Object.entries(data.changes.by_kind).filter(([, n]) => n > 0).map(([kind, count]) => ({ kind, count }))
    .sort((a, b) => b.count - a.count);
  const changes = data.changes.examples.map((c) => ({
    kind: c.kind, page_url: c.url, session_id: c.session_id, occurred_at: c.occurred_at, old: c.before, new: c.after,
  }));
  return { changes, counts, total: data.changes.page_views, page_views: data.page_views };
}

export class RealSessions {
  /**
   * @param {import('./connect.js').Connection} connection
   * @param {import('./replay-panel.js').ReplayPanel} replay
   * @param {{ text: () => string, send: (job) => void, showProblem: (d) => void }} host
   */
  constructor(connection, replay, host) {
    this.connection = connection;
    this.replay = replay;
    this.host = host;
    this.days = null; // the window shown, while the panel shows real sessions
    this.controller = null;
    this.timer = null;
    this.retryTimer = null;
    this.last = null; // { text, days, data } of the last backtest drawn
    this.stale = false;
    this.timings = []; // { ms, serverMs } from the request's start (after the pause) to the table drawn
    this.build();
    connection.onChange(() => this.sync());
    connection.onText(() => this.textChanged());
    this.sync();
  }

  build() {
    const panel = this.replay.root;
    this.buttons = WINDOWS.map((days) => h('button', {
      type: 'button', class: 'btn', 'data-days': String(days), 'aria-pressed': 'false', onclick: () => this.select(days),
    }, `Last ${days} days`));
    this.hint = h('span', { class: 'hint rs-hint' });
    this.connectBtn = h('button', { type: 'button', class: 'link-btn', onclick: () => this.connection.openDialog() }, 'Connect to a server');
    this.group = h('div', { class: 'rs-tools', role: 'group', 'aria-labelledby': 'rs-title' },
      h('span', { class: 'rs-title', id: 'rs-title' }, 'Real sessions'), ...this.buttons, this.hint);
    this.status = h('div', { class: 'rs-status', role: 'status', 'aria-live': 'polite' });
    // After the file buttons and their hint, before the summary and table both share.
    const tools = panel.querySelector('.rp-tools');
    (tools.nextElementSibling?.matches('.hint') ? tools.nextElementSibling : tools).after(this.group, this.status);
    // A file or the sample chosen: the panel shows that again.
    panel.querySelector('[data-act=sample]').addEventListener('click', () => this.leave());
    panel.querySelector('input[type=file]').addEventListener('change', () => this.leave());
    panel.closest('details')?.addEventListener('toggle', (e) => {
      if (e.target.open && this.days && this.stale) this.schedule(0);
    });
  }

  /** Follows the connection: the window buttons work only while connected. */
  sync() {
    const on = this.connection.connected;
    for (const b of this.buttons) b.disabled = !on;
    if (on) {
      this.hint.replaceChildren(`Your draft against the live config, on ${this.connection.hostName}’s stored sessions (${this.connection.modeWords}).`);
    } else {
      this.hint.replaceChildren(this.connectBtn, ' to backtest your draft on the site’s real sessions.');
      if (this.days) this.leave(true);
    }
  }

  /** Shows the real sessions of the last `days` days (a window button). */
  select(days) {
    if (!this.connection.connected) return;
    const entering = this.days === null;
    this.days = days;
    for (const b of this.buttons) b.setAttribute('aria-pressed', String(Number(b.dataset.days) === days));
    if (entering) {
      this.replay.remote = { diff: null };
      this.replay.rebaseBtn.hidden = true;
      this.replay.showError(null);
      // The worker stops replaying a file on each edit (none loaded: nothing to tell it).
      if (this.replay.loaded) this.host.send({ sessions: null });
    }
    this.run();
  }

  /** Back to a file (or disconnected): no more backtests. */
  leave(quiet = false) {
    if (this.days === null) return;
    this.cancel();
    this.days = null;
    this.last = null;
    for (const b of this.buttons) b.setAttribute('aria-pressed', 'false');
    this.replay.remote = null;
    this.replay.rebaseBtn.hidden = false;
    this.setStatus(quiet ? null : '');
    if (quiet) this.clearTable();
  }

  cancel() {
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    this.timer = null;
    this.retryTimer = null;
    this.controller?.abort();
    this.controller = null;
  }

  /** The draft changed: the backtest follows once typing pauses. */
  textChanged() {
    if (this.days === null) return;
    this.controller?.abort(); // its answer would be stale
    this.controller = null;
    this.schedule(BACKTEST_MS);
  }

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, ms);
  }

  /** The panel is open: a backtest now is seen. */
  get visible() {
    return this.replay.root.closest('details')?.open !== false;
  }

  async run() {
    this.cancel();
    const client = this.connection.client;
    if (!client || this.days === null) return;
    if (!this.visible) {
      this.stale = true;
      return;
    }
    this.stale = false;
    const days = this.days;
    const text = this.host.text();
    const from = new Date(Date.now() - days * DAY_MS).toISOString();
    const controller = new AbortController();
    this.controller = controller;
    this.setStatus(this.last ? 'Updating the backtest…' : `Backtesting your draft on the sessions of the last ${days} days…`, 'busy');
    const started = performance.now();
    let data;
    try {
      data = await client.backtest({ config: text, from }, controller.signal);
    } catch (err) {
      if (err.kind === 'aborted' || controller !== this.controller) return;
      this.controller = null;
      this.failed(err, text);
      return;
    }
    if (controller !== this.controller) return; // a later request took over
    this.controller = null;
    const serverMs = performance.now() - started;
    this.draw({ text, days, from, data });
    requestAnimationFrame(() => {
      const detail = { ms: performance.now() - started, serverMs, sessions: data.sessions };
      this.timings.push(detail);
      document.dispatchEvent(new CustomEvent('nudge:backtest', { detail }));
    });
  }

  failed(err, text) {
    const base = this.connection.client?.base;
    if (err.kind === 'invalid_config') {
      const n = err.diagnostics.filter((d) => d.severity !== 'warning').length;
      this.setStatus([
        h('p', {}, `Your draft has ${formatInt(n)} error${n === 1 ? '' : 's'}, so the server did not backtest it. Fix ${n === 1 ? 'it' : 'them'} and the backtest follows:`),
        problemList(err.diagnostics, this.host, parsedOrNull(text)),
      ], 'error');
      return;
    }
    if (err.kind === 'rate_limited') {
      this.setStatus(`${plainError(err, { base, what: 'The backtest' })} It runs again by itself then.`, 'error');
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.run(), err.retryAfter * 1000);
      return;
    }
    this.setStatus(plainError(err, { base, what: 'The backtest' }), 'error');
  }

  /** Draws a backtest with the Replay panel's table and change list. */
  draw({ text, days, from, data }) {
    this.last = { text, days, data };
    if (/^\d+$/.test(data.live_version)) this.connection.sawVersion(Number(data.live_version));
    const shortened = Date.parse(data.from) - Date.parse(from) > DAY_MS / 2;
    const window = shortened
      ? `The server keeps ${Math.round((Date.parse(data.to) - Date.parse(data.from)) / DAY_MS)} days of sessions on this site’s plan, so the window starts on ${day(data.from)}.`
      : null;
    if (data.sessions === 0) {
      this.clearTable();
      this.setStatus([
        h('p', { class: 'rs-empty' }, `No sessions started in the last ${days} days (${day(data.from)} to ${day(data.to)}), so there is nothing to backtest. ` +
          (days < 90 ? 'Choose a longer window. ' : '') +
          'If every window is empty, the storefront is not sending its events to this server yet (the relay, POST /v1/events), or they go to the other mode: this key reads ' +
          `${this.connection.modeWords}.`),
        window && h('p', { class: 'hint' }, window),
      ], 'error');
      return;
    }
    const openList = this.replay.changes.childElementCount > 0;
    const label = `real sessions of the last ${days} days (${day(data.from)} to ${day(data.to)})`;
    this.replay.baseLabel = liveWords(data.live_version);
    this.replay.remote = { diff: asDiff(data) };
    this.replay.render({ remote: true, label, sessions: data.sessions, before: data.live, after: data, baseError: null });
    this.replay.rebaseBtn.hidden = true;
    if (openList) this.replay.renderDiff(this.replay.remote.diff);
    const changed = data.changes.page_views;
    this.setStatus([
      h('p', { class: 'rs-changed' }, changed
        ? `${formatInt(changed)} of ${formatInt(data.page_views)} page views get another outcome with your draft than with ${liveWords(data.live_version)}.`
        : `No page view gets another outcome with your draft than with ${liveWords(data.live_version)}.`),
      window && h('p', { class: 'hint' }, window),
    ]);
  }

  clearTable() {
    this.replay.summary.textContent = '';
    this.replay.tableWrap.hidden = true;
    this.replay.diffBtn.hidden = true;
    this.replay.moreBtn.hidden = true;
    this.replay.changes.replaceChildren();
  }

  /** The status line under the window buttons: text or nodes; `kind` busy or error. */
  setStatus(content, kind = '') {
    this.status.className = `rs-status ${kind}`;
    if (content === null || content === '') this.status.replaceChildren();
    else if (typeof content === 'string') this.status.replaceChildren(h('p', {}, content));
    else this.status.replaceChildren(...content.filter(Boolean));
  }

  /**
   * The backtest of `text` for the publish dialog: the one drawn when it is of this text, else a
   * new request over the window in use (30 days when none is). Resolves to `{ days, data }`.
   */
  async summaryFor(text, signal) {
    const days = this.days ?? 30;
    if (this.last && this.last.text === text && this.last.days === days) return { days, data: this.last.data };
    const from = new Date(Date.now() - days * DAY_MS).toISOString();
    const data = await this.connection.client.backtest({ config: text, from }, signal);
    if (/^\d+$/.test(data.live_version)) this.connection.sawVersion(Number(data.live_version));
    return { days, data };
  }
}

/** One line of a backtest for the publish dialog: nudges before and after, and what changes. */
export function backtestSentence(data, kindLabels) {
  const live = liveWords(data.live_version);
  const parts = [`${formatInt(data.sessions)} sessions, ${formatInt(data.page_views)} page views. Page views with a nudge: ` +
    `<b>${esc(formatInt(data.live.page_views_with_nudge))}</b> with ${esc(live)}, <b>${esc(formatInt(data.page_views_with_nudge))}</b> with your draft.`];
  const changed = data.changes.page_views;
  if (!changed) {
    parts.push('No page view gets another outcome.');
  } else {
    const kinds = Object.entries(data.changes.by_kind).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${formatInt(n)}: ${esc(kindLabels[k] ?? k)}`);
    parts.push(`<b>${esc(formatInt(changed))}</b> page views change (${kinds.join('; ')}).`);
  }
  return parts.join(' ');
}
