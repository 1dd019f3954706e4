// The Scenarios panel (docs/contract/as-code.md, issue 14): visitors saved with the outcome they should get, every
// one re-checked against each edit with a pass or fail badge; import and export of the scenario
// file; coverage (which rules and conditions the scenarios exercise) for the rule cards. The
// checks run in the worker (as-code.js); this file keeps the file and draws the answers.

import { LIMITS } from './limits.js';
import { seconds, whyNot } from './plain.js';
import { downloadText, esc, fetchExample, formatInt, onTextFileChosen } from './util.js';

const STORAGE_KEY = 'nudge-rules:scenarios';
const GAPS_SHOWN = 100;

/** An expectation in plain words: `{ rule }`, `{ held_out }` (docs/contract/caps.md), `{ quiet_zone }`, `{ no_nudge }`, `{ error }`. */
export function describeExpectation(e) {
  if (!e || typeof e !== 'object') return 'nothing';
  if (e.rule !== undefined) return `rule “${e.rule}” fires`;
  if (e.held_out !== undefined) return `held out from rule “${e.held_out}” (its control group)`;
  if (e.quiet_zone) return 'a quiet zone (no nudge)';
  if (e.no_nudge) return 'no nudge';
  if (e.error) return 'the request is refused';
  return JSON.stringify(e);
}

/** `name`, or `name (2)`, `name (3)`, ...: the first not in `taken` (at most the engine's 200 characters). */
export function uniqueName(name, taken) {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const candidate = Array.from(name).slice(0, LIMITS.scenario_name_chars - suffix.length).join('') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

const plural = (n, one, many) => `${formatInt(n)} ${n === 1 ? one : many}`;

/**
 * Adds the scenarios of `incoming` to the merchant's `file` and keeps all of theirs: a scenario
 * already there (the same visitor and expectation under the same name, or that name with the
 * ` (2)` of an earlier merge) is skipped; another one with a name in use is added as `name (2)`.
 * Returns the merged file and a sentence saying what happened.
 */
export function mergeScenarios(file, incoming, label) {
  const mine = file.scenarios;
  // A scenario's name without the ` (2)` a merge may have added, and what it checks.
  const key = (s) => `${s.name.replace(/ \(\d+\)$/, '')}\u0000${JSON.stringify([s.session_state, s.expect])}`;
  const here = new Set(mine.map(key));
  const taken = new Set(mine.map((s) => s.name));
  const added = [];
  const renamed = [];
  let already = 0;
  for (const s of incoming.scenarios) {
    if (here.has(key(s))) {
      already += 1;
      continue;
    }
    const name = uniqueName(s.name, taken);
    taken.add(name);
    if (name !== s.name) renamed.push(name);
    added.push({ ...s, name });
  }
  const parts = [`Added ${plural(added.length, 'scenario', 'scenarios')} from ${label}`];
  if (mine.length) parts[0] += `; your ${plural(mine.length, 'scenario is', 'scenarios are')} kept`;
  if (renamed.length) {
    const shown = renamed.slice(0, 3).map((n) => `“${n}”`).join(', ');
    parts.push(`${plural(renamed.length, 'had a name', 'had names')} already in use, added as ${shown}${renamed.length > 3 ? ` and ${formatInt(renamed.length - 3)} more` : ''}`);
  }
  if (already) parts.push(`${plural(already, 'was', 'were')} here already`);
  return { file: { ...file, scenarios: [...mine, ...added] }, message: `${parts.join('. ')}.` };
}

export class ScenariosPanel {
  /**
   * @param {HTMLElement} root  the panel's body (index.html `#scenarios-body`)
   * @param {{ send: (job) => void, currentState: () => object, setState: (s) => void,
   *           notify: (text, action?) => void, onCoverage: (coverage) => void, badge: HTMLElement,
   *           onFailures: (failures: {index, name, expected, got, because}[]) => void }} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.file = { scenarios: [] };
    this.active = false;
    this.lastAnswer = null;
    try {
      const saved = localStorage.getItem(STORAGE_KEY);
      if (saved) this.file = JSON.parse(saved);
    } catch {
      // storage disabled or a damaged entry: start empty
    }
    root.innerHTML = `
      <form class="sc-save">
        <label for="sc-name">Save the current visitor as a scenario</label>
        <div class="sc-save-row">
          <input id="sc-name" type="text" maxlength="120" placeholder="e.g. a keen shopper on a shirt" autocomplete="off">
          <button type="submit" class="btn btn-primary">Save visitor</button>
        </div>
        <p class="hint">The outcome it gets now becomes what it should get: an edit that changes it turns the badge red.</p>
      </form>
      <div class="sc-tools">
        <button type="button" class="btn" data-act="import">Import file</button>
        <button type="button" class="btn" data-act="export">Export file</button>
        <button type="button" class="btn btn-quiet" data-act="sample">Load the example scenarios</button>
        <input type="file" accept=".json,application/json" hidden>
      </div>
      <p class="sc-error" role="alert" hidden></p>
      <p class="sc-summary" role="status"></p>
      <ul class="sc-list" aria-label="Scenarios"></ul>
      <details class="sc-gaps" hidden><summary></summary><ul></ul></details>`;
    this.name = root.querySelector('#sc-name');
    this.list = root.querySelector('.sc-list');
    this.summary = root.querySelector('.sc-summary');
    this.error = root.querySelector('.sc-error');
    this.gaps = root.querySelector('.sc-gaps');
    root.querySelector('.sc-save').addEventListener('submit', (e) => {
      e.preventDefault();
      this.saveVisitor();
    });
    onTextFileChosen(root.querySelector('[data-act=import]'), root.querySelector('input[type=file]'), (text, name) =>
      this.importText(text, name), (why) => this.showError(`${why}: it was not imported; your scenarios are unchanged.`),
    );
    root.querySelector('[data-act=export]').addEventListener('click', () => this.exportFile());
    root.querySelector('[data-act=sample]').addEventListener('click', () => this.loadSample());
    this.list.addEventListener('click', (e) => {
      const button = e.target.closest('button[data-i]');
      if (!button) return;
      const i = Number(button.dataset.i);
      if (button.dataset.act === 'delete') this.remove(i);
      else if (button.dataset.act === 'visit') this.host.setState(this.file.scenarios[i]?.session_state ?? {});
    });
  }

  /** Starts checking (the panel was opened): loads the second module in the worker. */
  activate() {
    if (this.active) return;
    this.active = true;
    this.sendFile();
  }

  text() {
    return `${JSON.stringify(this.file, null, 2)}\n`;
  }

  sendFile(extra = {}) {
    if (!this.active) return;
    this.host.send({ scenarios: this.text(), ...extra });
  }

  persist() {
    try {
      localStorage.setItem(STORAGE_KEY, this.text());
    } catch {
      // storage disabled
    }
  }

  saveVisitor() {
    this.showError(null);
    const state = this.host.currentState();
    const name = this.name.value.trim() || this.defaultName(state);
    const unique = uniqueName(name, new Set(this.file.scenarios.map((s) => s.name)));
    this.host.send({ saveScenario: { name: unique, state } });
    this.name.value = '';
  }

  defaultName(state) {
    return `intent ${state.intent_score} on ${state.page_url}, idle ${seconds(state.idle_ms)}`;
  }

  /** The worker's answer to `saveScenario`. */
  saved(scenario) {
    if (scenario.error) {
      this.showError(`This visitor cannot be saved: ${scenario.error}`);
      return;
    }
    this.file.scenarios.push(scenario);
    this.persist();
    this.sendFile();
    this.host.notify(`Saved “${scenario.name}”: it expects ${describeExpectation(scenario.expect)}.`);
  }

  remove(i) {
    const gone = this.file.scenarios[i];
    if (!gone) return;
    this.change({ ...this.file, scenarios: this.file.scenarios.filter((_, k) => k !== i) }, `Deleted “${gone.name}”.`);
  }

  /** Replaces the file (kept and checked), says what changed, and offers to undo it. */
  change(file, message) {
    const before = this.file;
    this.file = file;
    this.persist();
    this.sendFile();
    this.host.notify(message, {
      label: 'Undo',
      run: () => {
        this.file = before;
        this.persist();
        this.sendFile();
      },
    });
  }

  /** Checks a scenario file's text in the worker; if it is valid, its scenarios are added. */
  importText(text, label) {
    this.showError(null);
    this.pendingImport = { label, text };
    this.host.send({ scenarios: text });
  }

  async loadSample() {
    try {
      this.importText(await fetchExample('scenarios.json'), 'the example scenarios');
    } catch (err) {
      this.showError(`The example scenarios could not be fetched: ${err.message}`);
    }
  }

  exportFile() {
    downloadText(this.text(), 'scenarios.json');
    this.host.notify('Exported as scenarios.json (in your downloads).');
  }

  showError(text) {
    this.error.hidden = !text;
    this.error.textContent = text ?? '';
  }

  /** The worker's check of the file against the current engine. */
  render(answer) {
    const importing = this.pendingImport?.text === answer.text ? this.pendingImport : null;
    if (!importing && answer.text !== this.text()) return; // the check of a file since replaced
    if (importing) this.pendingImport = null;
    if (answer.error) {
      // A bad file: an import is refused (the panel keeps the scenarios it had).
      this.showError(`${importing?.label ?? 'The scenario file'} was not imported: ${answer.error}`);
      if (importing) this.sendFile();
      return;
    }
    if (importing) {
      // Merged into the merchant's scenarios, never replacing them; the merged file's check
      // draws the list.
      const { file, message } = mergeScenarios(this.file, JSON.parse(importing.text), importing.label);
      this.change(file, message);
      return;
    }
    // A keystroke's answer has the test report; the coverage follows once typing pauses
    // (as-code.js `later`): until then the last one stays.
    const coverage = answer.coverage ?? this.lastAnswer?.coverage ?? null;
    const fresh = Boolean(answer.coverage);
    this.lastAnswer = { ...answer, coverage };
    const { report, valid } = answer;
    const n = report.results.length;
    // Why each failing visitor misses the rule it expects, in the Why panel's words.
    this.because = report.results.map((r, i) => {
      const why = answer.why?.[i];
      return why ? whyNot(why, r.expected?.rule) : '';
    });
    this.host.badge.hidden = n === 0;
    this.host.badge.className = `pill ${report.failed ? 'pill-error' : 'pill-fire'}`;
    this.host.badge.textContent = report.failed ? `${report.failed} failing` : `${n} passing`;
    const fired = coverage ? ` Rules the scenarios make fire: ${coverage.totals.rules_fired} of ${coverage.totals.rules}.` : '';
    this.summary.textContent = n === 0
      ? 'No scenarios yet. Move the visitor, then save it here.'
      : `${report.passed} of ${n} pass${valid ? '' : ' (checked against the last valid config)'}.${fired}`;
    this.list.replaceChildren(...report.results.map((r, i) => this.item(r, i)));
    this.host.onFailures(report.results.flatMap((r, index) => (r.passed ? [] : [{ index, name: r.name, expected: r.expected, got: r.got, because: this.because[index] }])));
    if (!fresh) return;
    const gaps = coverage.unexercised;
    this.gaps.hidden = n === 0 || gaps.length === 0;
    this.gaps.querySelector('summary').textContent = `Not exercised by any scenario (${formatInt(gaps.length)})`;
    // A 1,000-rule config has thousands of conditions and patterns: the first ones are listed.
    const items = gaps.slice(0, GAPS_SHOWN).map((g) => Object.assign(document.createElement('li'), { textContent: g }));
    if (gaps.length > GAPS_SHOWN) items.push(Object.assign(document.createElement('li'), { className: 'muted', textContent: `and ${formatInt(gaps.length - GAPS_SHOWN)} more` }));
    this.gaps.querySelector('ul').replaceChildren(...items);
    this.host.onCoverage(n ? coverage : null);
  }

  /** Opens the panel at scenario `i`: scrolled into view, its name focused, marked a moment. */
  reveal(i) {
    const panel = this.root.closest('details');
    if (panel && !panel.open) panel.open = true;
    const item = this.list.children[i];
    if (!item) return;
    item.scrollIntoView({ block: 'center' });
    item.querySelector('.sc-name')?.focus({ preventScroll: true });
    item.classList.remove('flash');
    requestAnimationFrame(() => item.classList.add('flash'));
  }

  item(result, i) {
    const s = this.file.scenarios[i] ?? {};
    const st = s.session_state ?? {};
    const li = document.createElement('li');
    li.className = `sc-item ${result.passed ? 'pass' : 'fail'}`;
    li.dataset.name = result.name;
    const where = `${esc(String(st.page_url ?? ''))} · intent ${esc(String(st.intent_score ?? ''))} · idle ${esc(seconds(st.idle_ms ?? 0))}`;
    li.innerHTML = `
      <span class="pill ${result.passed ? 'pill-fire' : 'pill-error'} sc-badge">${result.passed ? 'Pass' : 'Fail'}</span>
      <div class="sc-main">
        <button type="button" class="link-btn sc-name" data-act="visit" data-i="${i}" title="Move the visitor to this scenario">${esc(result.name)}</button>
        <span class="sc-where">${where}</span>
        ${result.passed
          ? `<span class="sc-expect">Gets ${esc(describeExpectation(result.expected))}.</span>`
          : `<span class="sc-expect"><b>Should get ${esc(describeExpectation(result.expected))}, now gets ${esc(describeExpectation(result.got))}.</b></span>
             <span class="sc-reason">${esc(this.because?.[i] ?? '')}<span class="eng"> engine: ${esc(result.reason)}</span></span>`}
      </div>
      <button type="button" class="icon-btn small danger" data-act="delete" data-i="${i}" aria-label="Delete scenario ${esc(result.name)}" title="Delete">×</button>`;
    return li;
  }
}
