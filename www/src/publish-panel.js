// Publish (issue 22, docs/contract/versions.md): what publishing the draft would change, then the publish itself.
// The dialog shows the line diff against the live version the draft starts from (drafts.js
// lineDiff, as "Changes" shows it), the scenarios' result (the editor's scenario file goes with
// the publish, and the server publishes nothing unless every scenario passes), the backtest on
// the site's real sessions, and a message for the history. The publish names the version it
// replaces (If-Match): when someone else published meanwhile the server answers 412, and the
// dialog says so and offers their change and a review of the draft against their version.

import { sameConfig, plainError, problemList, parsedOrNull, when } from './connect.js';
import { lineDiff } from './drafts.js';
import { backtestSentence } from './real-sessions.js';
import { KIND_LABELS } from './replay-panel.js';
import { describeExpectation } from './scenarios-panel.js';
import { formatInt, h } from './util.js';

const MAX_MESSAGE = 500; // characters, as the server allows

/** A text ending with one newline, so that a missing final newline is not a changed line. */
export function withNewline(text) {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** A config's text in one layout (2-space JSON), or null when it is not JSON. */
function layout(text) {
  try {
    return `${JSON.stringify(JSON.parse(text), null, 2)}\n`;
  } catch {
    return null;
  }
}

/**
 * The line diff of two configs with a sentence of counts: `{ sentence, pre }`. Two versions
 * written in different layouts (one published from the editor, one minified by a program) would
 * differ on every line: then both are compared in one layout, when that shows fewer changes.
 */
export function configDiff(base, text, { from, to }) {
  let diff = lineDiff(withNewline(base), withNewline(text));
  let note = '';
  const [a, b] = [layout(base), layout(text)];
  if (a !== null && b !== null && diff.added + diff.removed > 2) {
    const same = lineDiff(a, b);
    if (same.added + same.removed < diff.added + diff.removed) {
      diff = same;
      note = ' (both shown in one layout: they are written differently)';
    }
  }
  const { rows, added, removed } = diff;
  const sentence = added || removed
    ? `${formatInt(added)} line${added === 1 ? '' : 's'} added, ${formatInt(removed)} removed, from ${from} to ${to}${note}.`
    : `No line differs between ${from} and ${to}${note}.`;
  return { sentence, pre: h('pre', { class: 'diff', tabindex: '0', 'aria-label': `Line differences from ${from} to ${to}` }, ...rows) };
}

/** "version 3, published 24 Nov 2026, 19:40 by you (key ceb9af28): “message”" */
export function versionLine(connection, v) {
  const message = v.message ? `: “${v.message}”` : '';
  const restores = v.restores ? ` (restores version ${v.restores})` : '';
  return `version ${v.version}, published ${when(v.published_at)} by ${connection.who(v.published_by)}${restores}${message}`;
}

export class PublishDialog {
  /**
   * @param {import('./connect.js').Connection} connection
   * @param {import('./real-sessions.js').RealSessions} realSessions
   * @param {{ text: () => string, scenarios: () => ({ text: string, count: number, failures: object[] } | null),
   *           notify: (text, action?) => void, setBase: (text, label) => void, showProblem: (d) => void }} host
   */
  constructor(connection, realSessions, host) {
    this.connection = connection;
    this.realSessions = realSessions;
    this.host = host;
    this.dialog = h('dialog', { class: 'dialog dialog-wide pub-dialog', 'aria-labelledby': 'pub-title' });
    this.dialog.addEventListener('close', () => this.controller?.abort());
    document.body.append(this.dialog);
    connection.actions.publish = () => this.open();
  }

  /** Opens the dialog for the draft as it is now. */
  open() {
    if (!this.connection.connected) return;
    this.text = this.host.text();
    if (this.message) this.message.value = '';
    this.draw();
    if (!this.dialog.open) this.dialog.showModal();
    (this.message.disabled ? this.dialog.querySelector('[data-act=cancel]') : this.message).focus();
  }

  draw() {
    const c = this.connection;
    const live = c.live;
    const next = (live?.version ?? 0) + 1;
    const same = live ? sameConfig(this.text, live.text) : false;
    const problems = parsedOrNull(this.text) === null;

    const head = [h('h2', { id: 'pub-title' }, `Publish to ${c.hostName}`),
      h('p', { class: 'pub-live' }, live
        ? `Live now (${c.modeWords}): ${versionLine(c, live)}.`
        : `Nothing is published yet on this site (${c.modeWords}): your draft becomes version 1.`)];
    this.warning = h('p', { class: 'pub-warn', hidden: true });
    head.push(this.warning);
    this.warn();

    const changes = h('section', { class: 'pub-section' }, h('h3', {}, 'Changes to the config'));
    if (!live) {
      changes.append(h('p', { class: 'hint' }, 'All of it: there is no version to compare with.'));
    } else if (same) {
      changes.append(h('p', { class: 'pub-same' }, `Your draft is the same as version ${live.version}: there is nothing to publish.`));
    } else {
      const d = configDiff(live.text, this.text, { from: `version ${live.version}`, to: 'your draft' });
      changes.append(h('p', { class: 'hint' }, d.sentence), d.pre);
    }

    const scenarios = h('section', { class: 'pub-section pub-scenarios' }, h('h3', {}, 'Scenarios'), this.scenarioSummary());

    this.backtest = h('p', { class: 'pub-backtest', role: 'status' }, 'Backtesting your draft on the site’s real sessions…');
    const backtest = h('section', { class: 'pub-section' }, h('h3', {}, 'On real sessions'), this.backtest);

    const typed = this.message?.value ?? ''; // kept when the dialog is drawn again (a conflict reviewed)
    this.message = h('textarea', { id: 'pub-message', rows: '2', maxlength: String(MAX_MESSAGE), placeholder: 'What changed and why (shown in the history)' });
    this.message.value = typed;
    const message = h('div', { class: 'pub-message' }, h('label', { for: 'pub-message' }, 'Message'), this.message);

    this.result = h('div', { class: 'pub-result', role: 'alert' });
    this.publishBtn = h('button', { type: 'button', class: 'btn btn-primary', 'data-act': 'publish', onclick: () => this.publish() },
      `Publish as version ${next}`);
    this.publishBtn.disabled = same || problems;
    if (problems) this.result.append(h('p', {}, 'Your draft is not JSON yet, so it cannot be published: Problems says where to fix it.'));
    this.message.disabled = same;
    const cancel = h('button', { type: 'button', class: 'btn', 'data-act': 'cancel', onclick: () => this.dialog.close() }, same ? 'Close' : 'Cancel');
    this.dialog.replaceChildren(...head, changes, scenarios, backtest, message, this.result, h('div', { class: 'dialog-actions' }, cancel, this.publishBtn));
    this.runBacktest();
  }

  /** Says when a version newer than the one the draft starts from is known (the bar says it too). */
  warn() {
    const c = this.connection;
    const live = c.live;
    if (!live || !(c.latest > live.version) || !this.warning.hidden) return;
    this.warning.replaceChildren(`Version ${c.latest} was published after version ${live.version}, which your draft starts from. `,
      h('button', { type: 'button', class: 'link-btn', onclick: () => this.conflict(false) }, 'Show their change'));
    this.warning.hidden = false;
  }

  /** What the editor's scenarios say about the draft (they go with the publish). */
  scenarioSummary() {
    const s = this.host.scenarios();
    if (!s || !s.count) {
      return h('p', { class: 'hint' }, 'No scenarios: nothing checks this publish. Save visitors that must keep their nudge in the Scenarios panel, and the server refuses a publish that breaks one.');
    }
    if (!s.failures.length) {
      const all = s.count === 1 ? 'The scenario passes. It goes' : `All ${formatInt(s.count)} scenarios pass. They go`;
      return h('p', { class: 'pub-pass' }, `${all} with the publish: the server checks again and publishes only if every scenario passes.`);
    }
    return h('div', {},
      h('p', { class: 'pub-fail' }, `${formatInt(s.failures.length)} of ${formatInt(s.count)} scenarios fail with your draft, so the server will refuse this publish:`),
      h('ul', { class: 'pub-failures' }, ...s.failures.slice(0, 10).map((f) => h('li', {},
        h('b', {}, f.name), `: should get ${describeExpectation(f.expected)}, gets ${describeExpectation(f.got)}.`))));
  }

  async runBacktest() {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    try {
      const { days, data } = await this.realSessions.summaryFor(this.text, controller.signal);
      if (controller !== this.controller) return;
      this.warn(); // the backtest names the live version: it may be newer
      this.backtest.innerHTML = data.sessions
        ? `Last ${days} days: ${backtestSentence(data, KIND_LABELS)}`
        : `No sessions started in the last ${days} days: there is nothing to backtest.`;
    } catch (err) {
      if (err.kind === 'aborted' || controller !== this.controller) return;
      this.backtest.textContent = err.kind === 'invalid_config'
        ? 'Not backtested: your draft has errors (below, once you publish; or see Problems).'
        : plainError(err, { base: this.connection.client?.base, what: 'The backtest' });
    }
  }

  async publish() {
    const c = this.connection;
    const client = c.client;
    if (!client) return;
    const text = this.text;
    const scenarios = this.host.scenarios();
    const after = c.live?.version ?? 0;
    this.publishBtn.disabled = true;
    this.publishBtn.textContent = 'Publishing…';
    this.result.replaceChildren();
    try {
      const v = await client.publish({ config: text, message: this.message.value.trim(), scenarios: scenarios?.count ? scenarios.text : null }, after);
      this.dialog.close();
      c.setLive({ ...c.liveOf(v), text });
      this.host.setBase(text, `version ${v.version} as published`);
      this.host.notify(`Published version ${v.version} to ${c.hostName} (${c.modeWords}). Visitors get it within 2 seconds.`);
    } catch (err) {
      this.publishBtn.textContent = `Publish as version ${after + 1}`;
      this.publishBtn.disabled = false;
      await this.refused(err);
    }
  }

  /** Says why the server published nothing, and what to do. */
  async refused(err) {
    const c = this.connection;
    const base = c.client?.base;
    const say = (...nodes) => this.result.replaceChildren(...nodes);
    switch (err.kind) {
      case 'conflict':
        await this.conflict();
        return;
      case 'scenarios_failed': {
        const n = err.failures.length;
        say(h('p', {}, `Not published: ${formatInt(n)} scenario${n === 1 ? '' : 's'} fail${n === 1 ? 's' : ''} with your draft, and the server publishes only when every one passes. Fix the draft, or the scenario if the new outcome is what you want:`),
          h('ul', { class: 'pub-failures' }, ...err.failures.map((f) => h('li', {},
            h('b', {}, f.name), `: should get ${describeExpectation(f.expected)}, gets ${describeExpectation(f.got)}`,
            f.reason ? h('span', { class: 'muted' }, ` (${f.reason})`) : null))));
        return;
      }
      case 'invalid_config': {
        const n = err.diagnostics.filter((d) => d.severity !== 'warning').length;
        say(h('p', {}, `Not published: your draft has ${formatInt(n)} error${n === 1 ? '' : 's'}.`),
          problemList(err.diagnostics, { showProblem: (d) => { this.dialog.close(); this.host.showProblem(d); } }, parsedOrNull(this.text)));
        return;
      }
      case 'file_managed':
        c.fileManaged = true;
        c.setLive(null);
        say(h('p', {}, plainError(err, { base })));
        this.publishBtn.disabled = true;
        return;
      default:
        say(h('p', {}, `Not published. ${plainError(err, { base, what: 'Publishing' })}`));
    }
  }

  /**
   * Someone else published after the version the draft starts from: says who and when, shows
   * their change on demand, and offers to review the draft against their version (which then
   * becomes the version a publish replaces).
   */
  async conflict(attempted = true) {
    const c = this.connection;
    const mine = c.live;
    let latest;
    try {
      latest = await c.client.getConfig();
    } catch (err) {
      this.result.replaceChildren(h('p', {}, `${attempted ? 'Not published: s' : 'S'}omeone else published meanwhile, and the latest version could not be read. ${plainError(err, { base: c.client?.base })}`));
      return;
    }
    if (!latest) return;
    c.sawVersion(latest.version);
    const theirs = h('div', { class: 'pub-theirs' });
    const show = h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'theirs', onclick: () => {
      const d = configDiff(mine?.text ?? '', latest.text, { from: `version ${mine?.version ?? 0}`, to: `version ${latest.version}` });
      theirs.replaceChildren(h('h3', {}, `Their change: version ${mine?.version ?? 0} to version ${latest.version}`), h('p', { class: 'hint' }, d.sentence), d.pre);
      show.disabled = true;
    } }, 'Show their change');
    const review = h('button', { type: 'button', class: 'btn btn-small', 'data-act': 'review', onclick: () => {
      c.setLive(latest);
      this.draw();
      this.result.replaceChildren(h('p', { class: 'hint' }, `The changes above are now against version ${latest.version}: anything of theirs your draft does not have shows as removed. Publish when it is what you want.`));
    } }, `Review my draft against version ${latest.version}`);
    this.result.replaceChildren(
      h('p', { class: 'pub-conflict' }, `${attempted ? 'Not published: ' : ''}${c.who(latest.published_by, true)} published version ${latest.version} on ${when(latest.published_at)}` +
        `${latest.message ? ` (“${latest.message}”)` : ''}, after version ${mine?.version ?? 0}, which your draft starts from. ` +
        `Publishing your draft as it is would undo their change${attempted ? ', so nothing was published' : ''}.`),
      h('div', { class: 'pub-conflict-actions' }, show, review),
      theirs);
    this.publishBtn.disabled = true;
  }
}
