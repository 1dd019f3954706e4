// The Problems list under the editor and the config's status pill: every error and lint warning
// in the rule cards' words (card-words.js: "Button", "8 s"), with its place, a button that jumps
// there, and the engine's own message and code for engineers; and the scenarios that fail
// (scenarios-panel.js), each a button that shows it in the Scenarios panel.

import { diagnosticWords } from './card-words.js';
import { describeExpectation } from './scenarios-panel.js';
import { formatInt, h } from './util.js';

/**
 * Problems shown (and marked in the JSON) at most: a one-line config can have thousands of
 * errors, and the first ones are the ones to fix first; the rest are counted.
 */
export const SHOWN = 100;

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The failing scenarios as Problems items: what each should get and gets now. */
function failureItems(failures, onShowScenario) {
  return failures.map((f) =>
    h('li', { class: 'diag error scenario-fail', dataset: { scenario: f.name } },
      h('button', { type: 'button', class: 'diag-btn', onclick: () => onShowScenario(f.index), title: 'Show it in the Scenarios panel' },
        h('span', { class: 'diag-icon', 'aria-label': 'failing scenario' }, '✗'),
        h('span', { class: 'diag-body' },
          h('span', { class: 'diag-msg' }, `Scenario “${f.name}” fails. Expected: ${describeExpectation(f.expected)}; now: ${describeExpectation(f.got)}.${f.because ? ` ${f.because}` : ''}`),
          h('span', { class: 'diag-where' }, 'Show it in Scenarios')))));
}

/**
 * @param {{ list: HTMLElement, count: HTMLElement, pill: HTMLElement }} els
 * @param {{ errors, warnings, failures?, valid: boolean, ruleCount: number, config: object | null,
 *           onJump: (line: number, column: number) => void, onShowScenario: (index: number) => void }} model
 *   `config`: the config as written, whose values the words quote (store.js `writtenConfig`)
 */
export function renderProblems({ list, count, pill }, { errors, warnings, failures = [], valid, ruleCount, config, onJump, onShowScenario }) {
  const all = [...errors, ...warnings];
  count.textContent = String(all.length + failures.length);
  count.dataset.severity = errors.length || failures.length ? 'error' : warnings.length ? 'warning' : 'ok';
  list.replaceChildren(
    ...failureItems(failures.slice(0, SHOWN), onShowScenario),
    ...all.slice(0, Math.max(0, SHOWN - failures.length)).map((d) =>
      h('li', { class: `diag ${d.severity}`, dataset: { code: d.code, line: d.line ?? '' } },
        h('button', {
          type: 'button',
          class: 'diag-btn',
          disabled: !d.line,
          onclick: () => d.line && onJump(d.line, d.column || 1),
          title: d.line ? 'Go to this place in the config' : null,
        },
        h('span', { class: 'diag-icon', 'aria-label': d.severity }, d.severity === 'error' ? '!' : '▲'),
        h('span', { class: 'diag-body' },
          h('span', { class: 'diag-msg' }, diagnosticWords(d, config)),
          h('span', { class: 'diag-where' },
            d.line ? `line ${d.line}${d.column ? `, column ${d.column}` : ''}` : null,
            h('span', { class: 'eng' }, [d.path, d.code].filter(Boolean).map((x) => ` · ${x}`).join('')),
            h('span', { class: 'eng' }, ` · engine: ${d.message}${d.detail ? ` (${d.detail})` : ''}`)),
        ),
      ),
      ),
    ),
  );
  const rest = all.length + failures.length - SHOWN;
  if (rest > 0) list.append(h('li', { class: 'diag more' }, `and ${formatInt(rest)} more`));
  if (!all.length && !failures.length) {
    list.append(h('li', { class: 'diag ok' }, h('span', { class: 'diag-icon', 'aria-hidden': 'true' }, '✓'), 'No problems: every rule can fire somewhere.'));
  }
  const failing = failures.length ? ` · ${failures.length} ${failures.length === 1 ? 'scenario fails' : 'scenarios fail'}` : '';
  if (!valid) {
    pill.className = 'pill pill-error';
    pill.textContent = plural(errors.length, 'error') + failing;
  } else if (failures.length) {
    pill.className = 'pill pill-error';
    pill.textContent = `Valid · ${plural(ruleCount, 'rule')}${failing}`;
  } else if (warnings.length) {
    pill.className = 'pill pill-warning';
    pill.textContent = `Valid · ${plural(ruleCount, 'rule')} · ${plural(warnings.length, 'warning')}`;
  } else {
    pill.className = 'pill pill-ok';
    pill.textContent = `Valid · ${plural(ruleCount, 'rule')}`;
  }
}
