// The URL test bench: one URL per line, each with the path the rules compare (or why the URL is
// rejected), what fires there at the current intent and idle time, and every pattern that matches,
// named by its rule. Lines are taken exactly as typed (a leading space is rejected, as the page
// URL box rejects it); only empty lines are skipped.

import { NUDGE_LABELS, h } from './util.js';

export const MAX_BENCH_LINES = 200;

export function benchUrls(text) {
  return text.split('\n').filter((line) => line !== '').slice(0, MAX_BENCH_LINES);
}

/** `rules[3].when.exclude_pages[0]` → { rule: 3, list: 'exclude_pages' }; quiet zones → { rule: null }. */
function owner(jsonPath) {
  const m = /^rules\[(\d+)\]\.when\.(pages|exclude_pages)\[\d+\]$/.exec(jsonPath);
  return m ? { rule: Number(m[1]), list: m[2] } : { rule: null, list: 'quiet_zones' };
}

/** What fires on the row's page (protocol.js `BenchOutcome`). */
function outcomeCell(row, rules) {
  const { outcome, report } = row;
  if (outcome.kind === 'rejected') return h('td', { class: 'bench-outcome' }, h('span', { class: 'muted' }, 'rejected: no rule sees it'));
  if (outcome.kind === 'quiet_zone') {
    const zone = report.matches.find((m) => m.json_path.startsWith('quiet_zones'));
    const overridden = [...new Set(report.matches.filter((m) => owner(m.json_path).list === 'pages').map((m) => rules[owner(m.json_path).rule]?.id))].filter(Boolean);
    return h('td', { class: 'bench-outcome' },
      h('span', { class: 'tag tag-quiet' }, 'Quiet zone'), ' no nudge',
      h('span', { class: 'muted' }, ` (${zone ? zone.pattern : 'quiet zone'}${overridden.length ? `; overrides ${overridden.join(', ')}` : ''})`));
  }
  if (outcome.kind === 'fired') {
    const rule = rules[outcome.rule];
    return h('td', { class: 'bench-outcome' }, h('b', {}, rule?.id ?? `rule ${outcome.rule + 1}`), ' ',
      h('span', { class: 'muted' }, NUDGE_LABELS[rule?.nudge.type] ?? ''));
  }
  return h('td', { class: 'bench-outcome' }, h('span', { class: 'muted' }, 'no nudge at this intent and idle time'));
}

export function renderBench(tbody, rows, { rules, onPick }) {
  tbody.replaceChildren(...rows.map((row) => {
    const { url, report } = row;
    const pathCell = report.url_error
      ? h('td', { class: 'bench-rejected' }, h('span', { class: 'tag tag-bad' }, report.url_error.code), ' ', report.url_error.message)
      : h('td', {}, h('code', { class: 'path' }, report.path));
    const matches = report.matches || [];
    const matchCell = h('td', {},
      report.url_error ? h('span', { class: 'muted' }, '—')
        : matches.length
          ? h('ul', { class: 'match-list' }, ...matches.map((m) => {
            const o = owner(m.json_path);
            const who = o.rule === null ? 'quiet zone' : `${rules[o.rule]?.id ?? `rule ${o.rule + 1}`} · ${o.list === 'pages' ? 'pages' : 'except'}`;
            return h('li', { class: o.list === 'quiet_zones' ? 'quiet' : o.list === 'exclude_pages' ? 'exclude' : '' },
              h('code', {}, m.pattern), ' ', h('span', { class: 'muted' }, who), h('span', { class: 'eng muted' }, ` ${m.json_path}`));
          }))
          : h('span', { class: 'muted' }, 'no pattern matches'));
    return h('tr', { dataset: { url, rejected: report.url_error ? report.url_error.code : '', outcome: row.outcome.kind } },
      h('td', {}, h('button', { type: 'button', class: 'link-btn url-btn', title: 'Preview this page', onclick: () => onPick(url) },
        url.replace(/ /g, '␠'))),
      pathCell,
      outcomeCell(row, rules),
      matchCell);
  }));
}
