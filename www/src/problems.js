// The Problems list under the editor and the config's status pill: every error and lint warning
// with its place, a button that jumps there, and the engine's code for engineers.

import { h } from './util.js';

export function renderProblems({ list, count, pill }, { errors, warnings, valid, ruleCount, onJump }) {
  const all = [...errors, ...warnings];
  count.textContent = String(all.length);
  count.dataset.severity = errors.length ? 'error' : warnings.length ? 'warning' : 'ok';
  list.replaceChildren(
    ...all.slice(0, 500).map((d) =>
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
          h('span', { class: 'diag-msg' }, d.message),
          h('span', { class: 'diag-where' },
            d.line ? `line ${d.line}${d.column ? `, column ${d.column}` : ''}` : null,
            h('span', { class: 'eng' }, [d.path, d.code].filter(Boolean).map((x) => ` · ${x}`).join('')),
            d.detail ? h('span', { class: 'eng' }, ` · engine: ${d.detail}`) : null),
        ),
      ),
      ),
    ),
  );
  if (all.length > 500) list.append(h('li', { class: 'diag more' }, `… and ${all.length - 500} more`));
  if (!all.length) {
    list.append(h('li', { class: 'diag ok' }, h('span', { class: 'diag-icon', 'aria-hidden': 'true' }, '✓'), 'No problems: every rule can fire somewhere.'));
  }
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (!valid) {
    pill.className = 'pill pill-error';
    pill.textContent = plural(errors.length, 'error');
  } else if (warnings.length) {
    pill.className = 'pill pill-warning';
    pill.textContent = `Valid · ${plural(ruleCount, 'rule')} · ${plural(warnings.length, 'warning')}`;
  } else {
    pill.className = 'pill pill-ok';
    pill.textContent = `Valid · ${plural(ruleCount, 'rule')}`;
  }
}
