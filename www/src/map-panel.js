// The decision-map panel: the canvas view (map.js) and its legend, from engine.decisionMap().

import { ruleColor } from './colors.js';
import { NUDGE_LABELS, esc, h, nudgeIcon } from './util.js';

export function describeRegion(r) {
  return r.rule_id
    ? `<span class="swatch" style="background:${ruleColor(r.rule_id)}"></span>${esc(r.rule_id)} · ${esc(NUDGE_LABELS[r.nudge_type] || r.nudge_type)}`
    : 'no nudge';
}

/** Draws a new map (a new config or page) and its legend. */
export function renderMap({ map, legend, path, canvas }, dm, url) {
  path.textContent = dm.path ? `for ${dm.path}` : '';
  map.setMap({ regions: dm.regions, quietZone: dm.quietZone, message: dm.error ? `No map: ${dm.error}` : null });
  const seen = new Map();
  let none = false;
  for (const r of dm.regions) {
    if (r.rule_index === null || r.rule_index === undefined) none = true;
    else if (!seen.has(r.rule_index)) seen.set(r.rule_index, r);
  }
  const items = [...seen.values()]
    .sort((a, b) => a.rule_index - b.rule_index)
    .map((r) =>
      h('li', { dataset: { rule: r.rule_id } },
        h('span', { class: 'swatch', style: `background:${ruleColor(r.rule_id)}`, 'aria-hidden': 'true' }),
        h('span', { class: 'legend-id' }, r.rule_id),
        h('span', { class: 'legend-type', html: `${nudgeIcon(r.nudge_type, 11)}${esc(NUDGE_LABELS[r.nudge_type] || '')}` }),
      ));
  if (none || !dm.regions.length) {
    items.push(h('li', { dataset: { rule: '' } },
      h('span', { class: 'swatch swatch-none', 'aria-hidden': 'true' }),
      h('span', { class: 'legend-id' }, dm.quietZone ? `No nudge (quiet zone ${dm.quietZone.pattern})` : 'No nudge')));
  }
  legend.replaceChildren(...items);
  const ids = [...seen.values()].map((r) => r.rule_id);
  canvas.setAttribute('aria-label',
    `Decision map for ${url}: ${dm.regions.length} regions; ${ids.length ? `rules ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ` and ${ids.length - 20} more` : ''} can fire here` : 'no rule can fire here'}. Arrow keys move the visitor.`);
}

export function markLegend(legend, firedId) {
  for (const li of legend.children) li.classList.toggle('active', li.dataset.rule === (firedId || ''));
}
