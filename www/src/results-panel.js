// "Results" (issue 32, docs/contract/caps.md "Measured uplift"): once the editor is connected to a server with
// a secret key (connect.js), each rule's measured uplift over the last 7, 30 or 90 days, from
// GET /v1/reports/uplift: the sessions shown its nudge against the sessions held out from it (its
// control group), how many of each bought, the difference with its 95 % interval drawn as a bar
// on one axis shared by every rule with zero marked, and in words: sells more, no clear
// difference, sells less, or not enough data yet (and what is missing). Beside it, the backtest's
// predicted reach of the draft for the same window (POST /v1/nudges/backtest, per rule: the
// sessions it would be shown in and those whose visitor it would hold out, caps and holdout
// applied), and the rule's control group set right there (0 to 50 %, the lint's "costly" over
// 20 % said in words): the draft changes as from the rule's card (rules-editor.js, then the
// store's `text`), and "Publish…" opens the connected editor's publish dialog (publish-panel.js).
//
// The report and its state (not connected, loading, an error, the answer) are the store's
// (store.js `results`); this file asks the server, dispatches what it found, and draws the
// state it is given (views.js). The key stays in the connection's client.

import { plainError } from './connect.js';
import { formatInt, h } from './util.js';

export const WINDOWS = [7, 30, 90];
const DAY_MS = 86_400_000;
/** docs/contract/caps.md: the uplift is "enough data" from 100 sessions and 5 conversions in each arm. */
const MIN_SESSIONS = 100;
const MIN_CONVERTED = 5;
/** docs/contract/caps.md: a rule's control group is 0 to 50 % of its visitors; over 20 % the lint calls it costly. */
export const MAX_HOLDOUT = 50;
export const COSTLY_HOLDOUT = 20;

/**
 * What a control group of `value` (the input's text) means, in words: `{ percent, text, costly }`,
 * `percent` null when it is not a whole number from 0 to 50 (then nothing is set).
 */
export function holdoutWords(value) {
  const n = Number(value);
  if (String(value).trim() === '' || !Number.isInteger(n) || n < 0 || n > MAX_HOLDOUT) {
    return { percent: null, costly: false, text: `A control group is a whole percentage from 0 to ${MAX_HOLDOUT}.` };
  }
  if (n === 0) return { percent: 0, costly: false, text: 'No control group: every visitor it reaches can see the nudge, and nothing measures it.' };
  if (n > COSTLY_HOLDOUT) {
    return { percent: n, costly: true, text: `Costly: ${n} % of the visitors it reaches never see the nudge. Over ${COSTLY_HOLDOUT} % the check of your config warns; 5 to 10 % is usually enough to measure it.` };
  }
  return { percent: n, costly: false, text: `${n} % of the visitors it reaches are held out and never see the nudge: they are what it is compared with.` };
}

/** "12.0 %" of a rate (0 to 1). */
export function percent(rate) {
  return `${(rate * 100).toFixed(1)} %`;
}

/** "+5.1 points" of a difference of rates. */
export function points(x) {
  const p = Math.round(x * 1000) / 10;
  return `${p > 0 ? '+' : p < 0 ? '−' : ''}${Math.abs(p).toFixed(1)} point${Math.abs(p) === 1 ? '' : 's'}`;
}

/** "17 Nov" (the window's ends). */
function day(iso) {
  return new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'short' });
}

const plural = (n, word) => `${formatInt(n)} ${word}${n === 1 ? '' : 's'}`;

/**
 * What a rule's line says: `kind` one of lifts, flat, lowers, no_control, no_treated, too_few;
 * `title` the verdict in a few words; `missing` what is still needed, for too few.
 * @param {object} r a rule of the uplift report (docs/openapi.yaml `RuleUplift`)
 */
export function verdictOf(r) {
  if (r.control.sessions === 0) return { kind: 'no_control', title: 'No control group', missing: [] };
  if (r.treated.sessions === 0) return { kind: 'no_treated', title: 'Not shown to anyone yet', missing: [] };
  if (!r.enough_data || !r.uplift.ci95) {
    const missing = [];
    for (const [arm, words] of [['treated', 'shown the nudge'], ['control', 'held out']]) {
      const a = r[arm];
      if (a.sessions < MIN_SESSIONS) missing.push(`${plural(MIN_SESSIONS - a.sessions, 'more session')} ${words}`);
      if (a.converted < MIN_CONVERTED) missing.push(`${plural(MIN_CONVERTED - a.converted, 'more purchase')} among the sessions ${words}`);
    }
    return { kind: 'too_few', title: 'Not enough data yet', missing };
  }
  const [low, high] = r.uplift.ci95;
  if (low > 0) return { kind: 'lifts', title: 'Sells more', missing: [] };
  if (high < 0) return { kind: 'lowers', title: 'Sells less', missing: [] };
  return { kind: 'flat', title: 'No clear difference', missing: [] };
}

/** One arm in words: "12.0 % bought (144 of 1,200 sessions)". */
function armWords(arm, rate) {
  if (!arm.sessions) return 'no sessions';
  return `${percent(rate)} bought (${formatInt(arm.converted)} of ${plural(arm.sessions, 'session')})`;
}

/** The sentence under a rule's verdict. */
export function explanation(r, v) {
  if (v.kind === 'no_control') {
    return 'Every visitor it reached was shown the nudge, so there is nothing to compare with. Give the rule a control group on its card (“Control group”, under “How often, exit intent, link, control group”) and publish; the visitors held out become its control group.';
  }
  if (v.kind === 'no_treated') return 'Visitors were held out from it, but none was shown the nudge in this window.';
  if (v.kind === 'too_few') return `To tell, it needs ${v.missing.join(', ')}.`;
  const [low, high] = r.uplift.ci95;
  const range = `between ${points(low)} and ${points(high)}`;
  const relative = r.uplift.relative === null ? '' : ` (${r.uplift.relative >= 0 ? '+' : '−'}${Math.abs(Math.round(r.uplift.relative * 100))} % against the held-out rate)`;
  if (v.kind === 'lifts') return `Shown the nudge, ${points(r.uplift.absolute).replace('+', '')} more of every 100 sessions bought${relative}. The true difference is ${range} with 95 % confidence: above zero, so the nudge itself sells.`;
  if (v.kind === 'lowers') return `Shown the nudge, ${points(-r.uplift.absolute).replace('+', '')} fewer of every 100 sessions bought${relative}. The true difference is ${range} with 95 % confidence: below zero, so the nudge costs sales.`;
  return `The difference measured, ${points(r.uplift.absolute)}, could be chance: the true difference is ${range} with 95 % confidence, which includes zero. Those who bought after the nudge would mostly have bought anyway.`;
}

/**
 * The plot's axis: ± the largest bound of the rules measured well enough (of all rules when none
 * is), rounded up to a round number of points. The wide interval of a rule with too few sessions
 * would otherwise squeeze the others into the middle; it is drawn cut at the axis' ends.
 */
export function axisOf(rules) {
  const measured = rules.filter((r) => ['lifts', 'flat', 'lowers'].includes(verdictOf(r).kind));
  let max = 0.02;
  for (const r of measured.length ? measured : rules) {
    for (const x of r.uplift.ci95 ?? []) max = Math.max(max, Math.abs(x));
  }
  const steps = [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1];
  return steps.find((step) => step >= max - 1e-9) ?? 1;
}

export class ResultsPanel {
  /**
   * @param {HTMLElement} root `#results-body`
   * @param {{ connection: import('./connect.js').Connection, dispatch: (action: import('./store.js').Action) => unknown,
   *   getState: () => import('./store.js').State, text: () => string, editRule: (index: number) => void,
   *   setHoldout: (index: number, percent: number) => void }} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.controller = null;
    this.build();
    this.draw(host.getState().results);
    host.connection.onChange(() => this.connectionChanged());
    root.closest('details')?.addEventListener('toggle', (e) => {
      if (/** @type {HTMLDetailsElement} */ (e.target).open) this.refreshIfStale();
    });
  }

  build() {
    this.buttons = WINDOWS.map((days) => h('button', {
      type: 'button', class: 'btn', 'data-days': String(days), 'aria-pressed': 'false', onclick: () => this.load(days),
    }, `Last ${days} days`));
    this.refreshBtn = h('button', { type: 'button', class: 'btn btn-quiet', 'data-act': 'refresh', onclick: () => this.load() }, 'Refresh');
    this.tools = h('div', { class: 'up-tools', role: 'group', 'aria-label': 'Window of the results' }, ...this.buttons, this.refreshBtn);
    this.status = h('div', { class: 'up-status', role: 'status', 'aria-live': 'polite' });
    this.summary = h('p', { class: 'up-summary' });
    this.list = h('ul', { class: 'up-list', 'aria-label': 'Measured uplift per rule' });
    this.root.replaceChildren(
      h('p', { class: 'hint' }, 'Did each nudge make visitors buy, or would they have bought anyway? A rule with a holdout shows its nudge to most visitors and holds a few out (its control group); the difference in how many bought is what the nudge did.'),
      this.tools, this.status, this.summary, this.list);
  }

  /**
   * The connection changed: another server or key (or none) is the store's, its report not read
   * yet; a new connection loads the report if the panel is open. (A new live version on the same
   * connection changes nothing here.)
   */
  connectionChanged() {
    const c = this.host.connection;
    const now = { connected: c.connected, host: c.connected ? c.hostName : '', mode: c.connected ? c.client.mode : null };
    const r = this.host.getState().results;
    if (r.connected === now.connected && r.host === now.host && r.mode === now.mode) return;
    this.controller?.abort();
    this.controller = null;
    this.host.dispatch({ type: 'resultsConnection', ...now });
    if (c.connected) this.refreshIfStale();
  }

  get open() {
    return this.root.closest('details')?.open !== false;
  }

  /** Loads the report when the panel is open and nothing (or another connection's) is shown. */
  refreshIfStale() {
    const r = this.host.getState().results;
    if (this.open && r.connected && r.status === 'idle') this.load(r.days);
  }

  /**
   * Asks the server for the uplift report of the last `days` days, and the backtest of the draft
   * over the same window for the predicted reach (its failure leaves the report shown).
   */
  async load(days = this.host.getState().results.days) {
    const client = this.host.connection.client;
    if (!client) return;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const from = new Date(Date.now() - days * DAY_MS).toISOString();
    this.host.dispatch({ type: 'resultsRequested', days });
    const [report, backtest] = await Promise.allSettled([
      client.uplift({ from }, controller.signal),
      client.backtest({ config: this.host.text(), from }, controller.signal),
    ]);
    if (controller !== this.controller) return; // a later request (or a disconnect) took over
    this.controller = null;
    if (report.status === 'rejected') {
      if (report.reason?.kind === 'aborted') return;
      this.host.dispatch({ type: 'resultsFailed', days, error: plainError(report.reason, { base: client.base, what: 'Reading the results' }) });
      return;
    }
    let reach = null;
    let reachError = null;
    if (backtest.status === 'fulfilled') {
      const data = backtest.value;
      reach = {
        sessions: data.sessions,
        rules: Object.fromEntries((data.rules ?? []).map((r) => [r.rule_id, { shown: r.sessions, heldOut: r.held_out_sessions ?? 0 }])),
      };
    } else {
      const err = backtest.reason;
      reachError = err?.kind === 'invalid_config'
        ? 'Your draft has errors, so the backtest could not predict its reach; fix them and refresh.'
        : plainError(err, { base: client.base, what: 'The backtest' });
    }
    this.host.dispatch({ type: 'resultsLoaded', days, report: report.value, reach, reachError });
  }

  /**
   * Draws the store's `results`.
   * @param {import('./store.js').State['results']} r
   */
  draw(r) {
    for (const b of this.buttons) {
      b.disabled = !r.connected;
      b.setAttribute('aria-pressed', String(r.connected && Number(b.dataset.days) === r.days));
    }
    this.refreshBtn.hidden = !r.connected;
    this.root.closest('details')?.setAttribute('data-state', r.connected ? r.status : 'not-connected');
    if (!r.connected) {
      this.setStatus([h('p', {}, 'Results come from a nudge-rules server that records your storefront’s visitors. ',
        h('button', { type: 'button', class: 'link-btn', onclick: () => this.host.connection.openDialog() }, 'Connect to a server'),
        ' with the site’s secret key to see them.')]);
      this.summary.textContent = '';
      this.list.replaceChildren();
      return;
    }
    if (r.status === 'loading') {
      this.setStatus([h('p', {}, `Reading the results of the last ${r.days} days from ${r.host}…`)], 'busy');
      if (!r.report) this.list.replaceChildren();
      return;
    }
    if (r.status === 'error') {
      this.setStatus([h('p', {}, r.error)], 'error');
      this.summary.textContent = '';
      this.list.replaceChildren();
      return;
    }
    if (r.status !== 'ready') {
      this.setStatus([h('p', {}, 'Open a window above to read the results.')]);
      return;
    }
    const report = r.report;
    const window = `${day(report.from)} to ${day(report.to)}`;
    if (!report.rules.length) {
      this.setStatus([h('p', { class: 'up-empty' }, `No visitor was shown a nudge or held out from one in the last ${r.days} days (${window}), so there is nothing to measure yet. ` +
        'Give a rule a control group on its card (“Control group”), publish, and the storefront’s events (the relay, POST /v1/events) fill this in. ' +
        `This key reads ${r.mode === 'live' ? 'live' : 'test'} data.`)], 'empty');
      this.summary.textContent = '';
      this.list.replaceChildren();
      return;
    }
    this.setStatus(r.reachError ? [h('p', { class: 'hint' }, r.reachError)] : []);
    const verdicts = report.rules.map((rule) => ({ rule, verdict: verdictOf(rule) }));
    const counts = (kind) => verdicts.filter((x) => x.verdict.kind === kind).length;
    const said = [
      counts('lifts') && `${plural(counts('lifts'), 'rule')} clearly ${counts('lifts') === 1 ? 'sells' : 'sell'} more`,
      counts('flat') && `${counts('flat')} ${counts('flat') === 1 ? 'makes' : 'make'} no clear difference`,
      counts('lowers') && `${counts('lowers')} ${counts('lowers') === 1 ? 'sells' : 'sell'} less`,
      counts('too_few') && `${counts('too_few')} ${counts('too_few') === 1 ? 'needs' : 'need'} more data`,
      counts('no_control') && `${counts('no_control')} ${counts('no_control') === 1 ? 'has' : 'have'} no control group`,
    ].filter(Boolean);
    this.summary.textContent = `${r.mode === 'live' ? 'Live' : 'Test'} data of ${r.host}, sessions that started ${window}: ${said.join(', ')}.`;
    const axis = axisOf(report.rules);
    this.list.replaceChildren(this.axisRow(axis), ...verdicts.map(({ rule, verdict }) => this.row(rule, verdict, axis, r.reach)));
  }

  setStatus(nodes, kind = '') {
    this.status.className = `up-status ${kind}`;
    this.status.replaceChildren(...nodes);
  }

  /** Position of `x` (a difference of rates) on the axis ±`axis`, in percent of the track. */
  static at(x, axis) {
    return `${(((Math.max(-axis, Math.min(axis, x)) + axis) / (2 * axis)) * 100).toFixed(2)}%`;
  }

  /** The shared axis above the rows: its ends, zero in the middle. */
  axisRow(axis) {
    const ticks = [-axis, -axis / 2, 0, axis / 2, axis].map((x) =>
      h('span', { class: `up-tick${x === 0 ? ' up-zero-tick' : ''}`, style: `left:${ResultsPanel.at(x, axis)}` }, x === 0 ? '0' : points(x).replace(/ points?$/, '')));
    return h('li', { class: 'up-axis-row', 'aria-hidden': 'true' },
      h('span', { class: 'up-axis-label' }, 'Difference in how many bought, in points (of every 100 sessions), with its 95 % interval'),
      h('div', { class: 'up-axis' }, ...ticks));
  }

  /** The interval bar of a rule: the interval, the estimate as a dot, zero as a line. */
  plot(rule, verdict, axis) {
    const zero = h('span', { class: 'up-zero', style: `left:${ResultsPanel.at(0, axis)}` });
    if (!rule.uplift.ci95) {
      return h('div', { class: 'up-track up-none', role: 'img', 'aria-label': 'No interval: one group has no sessions' }, zero);
    }
    const [low, high] = rule.uplift.ci95;
    const left = ResultsPanel.at(low, axis);
    const width = `calc(${ResultsPanel.at(high, axis)} - ${left})`;
    const label = `Uplift ${points(rule.uplift.absolute)}, 95 % interval ${points(low)} to ${points(high)}; zero means no difference.`;
    // An interval wider than the axis is cut at its end, the cut end drawn open.
    const cut = `${low < -axis ? ' up-cut-low' : ''}${high > axis ? ' up-cut-high' : ''}`;
    return h('div', { class: `up-track up-${verdict.kind}${cut}`, role: 'img', 'aria-label': label, title: label },
      zero,
      h('span', { class: 'up-bar', style: `left:${left};width:${width}` }),
      h('span', { class: 'up-dot', style: `left:${ResultsPanel.at(rule.uplift.absolute, axis)}` }));
  }

  /**
   * The draft's control group of the rule at `index`, set from the row: a number field (0 to 50),
   * what it means in words (the lint's "costly" over 20 %), and Publish (the publish dialog).
   */
  holdoutControl(rule, index) {
    const draft = this.host.getState().config?.rules?.[index];
    const id = `up-hold-${index}`;
    const words = h('p', { class: 'up-hold-words', id: `${id}-words`, 'aria-live': 'polite' });
    const input = h('input', {
      type: 'number', id, min: '0', max: String(MAX_HOLDOUT), step: '1', inputmode: 'numeric', class: 'num-small up-hold-input',
      dataset: { rule: rule.rule_id }, 'aria-describedby': `${id}-words`,
    });
    input.value = String(draft?.holdout_percent ?? 0);
    const say = (set) => {
      const w = holdoutWords(input.value);
      words.textContent = set && w.percent !== null ? `${w.text} Set in your draft: publish it for the storefront to use it; Refresh shows the backtest of the draft.` : w.text;
      words.classList.toggle('up-hold-costly', w.costly);
      input.setAttribute('aria-invalid', String(w.percent === null));
      return w;
    };
    say(false);
    input.addEventListener('change', () => {
      const w = say(true);
      if (w.percent !== null) this.host.setHoldout(index, w.percent);
    });
    input.addEventListener('input', () => say(false));
    const publish = h('button', {
      type: 'button', class: 'btn up-publish', 'data-act': 'publish',
      onclick: () => this.host.connection.actions.publish?.(),
    }, 'Publish…');
    return h('div', { class: 'up-hold', role: 'group', 'aria-label': `Control group of ${rule.rule_id}` },
      h('label', { for: id }, 'Control group'), input, h('span', { class: 'up-hold-unit', 'aria-hidden': 'true' }, '% of its visitors'),
      publish, words);
  }

  /**
   * The draft changed (views.js): each row's control group shows the draft's, unless the
   * merchant is typing in it.
   */
  syncHoldouts(config) {
    for (const input of this.list.querySelectorAll('.up-hold-input')) {
      if (input === document.activeElement) continue;
      const index = (config?.rules ?? []).findIndex((x) => x.id === input.dataset.rule);
      if (index < 0) continue;
      const value = String(config.rules[index].holdout_percent ?? 0);
      if (input.value !== value) {
        input.value = value;
        input.dispatchEvent(new Event('input'));
      }
    }
  }

  row(rule, verdict, axis, reach) {
    const rate = rule.conversion_rate;
    const index = (this.host.getState().config?.rules ?? []).findIndex((x) => x.id === rule.rule_id);
    const predicted = reach ? reach.rules[rule.rule_id] : undefined;
    const reachText = reach
      ? predicted === undefined
        ? 'Your draft has no rule with this id.'
        : `Backtest: of ${plural(reach.sessions, 'session')} of this window, your draft would show it in ${formatInt(predicted.shown)}${predicted.heldOut
          ? ` and hold the visitor out (its control group) in ${formatInt(predicted.heldOut)}`
          : ', holding no visitor out'} (holdout and caps applied).`
      : null;
    return h('li', { class: `up-row up-${verdict.kind}`, dataset: { rule: rule.rule_id, verdict: verdict.kind } },
      h('div', { class: 'up-head' },
        h('h3', { class: 'up-rule' }, rule.rule_id),
        h('span', { class: `pill up-verdict up-verdict-${verdict.kind}` }, verdict.title),
        index >= 0 ? h('button', { type: 'button', class: 'link-btn up-edit', onclick: () => this.host.editRule(index), title: `Open ${rule.rule_id}’s card (its control group is set there)` }, 'Edit rule') : null),
      h('dl', { class: 'up-arms' },
        h('div', { class: 'up-arm' }, h('dt', {}, 'Shown the nudge'), h('dd', { 'data-arm': 'treated' }, armWords(rule.treated, rate.treated))),
        h('div', { class: 'up-arm' }, h('dt', {}, 'Held out (control group)'), h('dd', { 'data-arm': 'control' }, armWords(rule.control, rate.control)))),
      this.plot(rule, verdict, axis),
      h('p', { class: 'up-words' }, explanation(rule, verdict)),
      rule.p_value !== null ? h('p', { class: 'up-eng eng' }, `absolute ${rule.uplift.absolute}, ci95 [${rule.uplift.ci95?.join(', ')}], relative ${rule.uplift.relative}, p = ${rule.p_value}`) : null,
      reachText ? h('p', { class: 'hint up-reach' }, reachText) : null,
      index >= 0 ? this.holdoutControl(rule, index) : null);
  }
}
