// The "Why" panel: the facts of the current state (path, quiet zone, decision) and one card per
// rule with its verdict, its conditions as sentences, and its lint findings. Cards are built only
// when they scroll into view and rebuilt only when what they show changes (lazy-list.js), and the
// list scrolls itself (not the page) to the rule that fires.

import { LazyList } from './lazy-list.js';
import { verdictSentence } from './plain.js';
import { ruleColor } from './colors.js';
import { NUDGE_LABELS, esc, formatCountdown, h, nudgeIcon } from './util.js';

export const VERDICTS = {
  fired: 'Fires',
  shadowed: 'Shadowed',
  failed: 'No match',
  disabled: 'Disabled',
  quiet: 'Quiet zone',
  held_out: 'Control group',
};

/** The conditions a rule fails by being capped (docs/contract/caps.md), not by the visitor. */
const CAP_CONDITIONS = new Set(['cap', 'max_nudges_per_session']);

/**
 * A rule that fails only by its caps (its conditions hold, but it already showed enough this
 * visit, or the visitor closed it not long ago): the cap sentences, else null.
 */
export function cappedBy(conditions) {
  const failing = conditions.filter((c) => !c.holds);
  if (!failing.length || !failing.every((c) => CAP_CONDITIONS.has(c.condition))) return null;
  return failing.map((c) => c.text);
}

/** The countdown of a state where only idle time is missing, or null. */
export function waitingFor(ex) {
  if (!ex || ex.fired_rule_id || ex.earliest_idle_ms === null || ex.earliest_idle_ms === undefined) return null;
  const wait = ex.earliest_idle_ms - ex.idle_ms;
  if (wait <= 0) return null;
  return { rule: ex.earliest_rule_id, text: `fires in ${formatCountdown(wait)}`, wait, at: ex.earliest_idle_ms };
}

function fact(term, ...value) {
  return [h('dt', {}, term), h('dd', {}, ...value)];
}

/** "nothing fires", or, when a rule would but is capped (docs/contract/caps.md), which one. */
function nothingFires(ex) {
  const capped = ex.quiet_zone ? null : ex.rules.find((r) => r.verdict === 'failed' && cappedBy(r.conditions));
  return capped ? `nothing fires; ${capped.id} would, but it is capped` : 'nothing fires';
}

export class WhyPanel {
  /**
   * @param {{facts: HTMLElement, rules: HTMLOListElement, countdown: HTMLElement,
   *          onSkip: (idleMs: number) => void, onEdit: (ruleIndex: number) => void}} els
   */
  constructor({ facts, rules, countdown, onSkip, onEdit }) {
    this.facts = facts;
    this.rulesEl = rules;
    this.countdown = countdown;
    this.onSkip = onSkip;
    this.onEdit = onEdit;
    this.firedShown = undefined;
    this.list = new LazyList(rules, {
      root: rules,
      key: (card) => card.key,
      render: (card, slot) => this.renderCard(card, slot),
      estimate: 110,
    });
  }

  /** No engine yet: a message instead of cards. */
  clear(message) {
    this.facts.replaceChildren();
    this.list.setItems([]);
    this.countdown.hidden = true;
    this.rulesEl.dataset.empty = message;
  }

  /**
   * @param {object} ex  engine.explain()
   * @param {{config, summary: Map, warningsByRule: Map, notes?: import('./notes.js').RuleNotes,
   *          visitorId?: string | null}} model  `visitorId`: the visitor's, for the control group
   */
  render(ex, { config, summary, warningsByRule, notes = null, visitorId = null }) {
    delete this.rulesEl.dataset.empty;
    const waiting = waitingFor(ex);
    this.countdown.hidden = !waiting;
    if (waiting) {
      this.countdown.replaceChildren(
        h('span', { class: 'countdown-text' }, h('b', {}, waiting.rule), ` ${waiting.text}`),
        h('button', { type: 'button', class: 'link-btn', onclick: () => this.onSkip(waiting.at) }, 'Skip ahead'),
      );
    }
    this.renderFacts(ex, waiting);

    // A card is remade only when something it shows changed: its verdict with its sentences (the
    // same object when the worker's delta left it alone), its rule, summary or lint findings.
    this.memo ??= [];
    const cards = ex.rules.map((r) => {
      const rule = config?.rules?.[r.index];
      const isNext = Boolean(waiting && waiting.rule === r.id);
      const warnings = warningsByRule.get(r.index) ?? [];
      const context = [isNext ? waiting.text : '', r.verdict === 'shadowed' ? `${ex.fired_rule_id}/${ex.held_out_rule_id}` : '',
        r.verdict === 'held_out' ? visitorId : '',
        r.verdict === 'quiet' ? ex.quiet_words : '',
        summary.get(r.id) ?? '', warnings.length ? JSON.stringify(warnings) : '', notes?.get(r.id) ?? ''].join('\u0000');
      const memo = this.memo[r.index];
      if (memo && memo.r === r && memo.rule === rule && memo.context === context) return memo.card;
      const conditions = r.conditions.map((c, k) => ({
        holds: c.holds,
        condition: c.condition,
        detail: c.detail,
        text: r.sentences[k] ?? c.detail,
      }));
      // Capped (docs/contract/caps.md): its conditions hold but its caps do not; said as the verdict.
      const capped = r.verdict === 'failed' ? cappedBy(conditions) : null;
      const card = {
        index: r.index,
        id: r.id,
        type: r.nudge_type,
        verdict: r.verdict,
        capped: Boolean(capped),
        badge: isNext ? `in ${formatCountdown(waiting.wait)}` : capped ? 'Capped' : VERDICTS[r.verdict] || r.verdict,
        note: capped
          ? `Its conditions hold, but it is capped: ${capped.join('; ')}.`
          : verdictSentence(r.verdict, { firedId: ex.fired_rule_id, quietWords: ex.quiet_words, heldOutId: ex.held_out_rule_id, ruleId: r.id, visitorId }),
        summary: summary.get(r.id) ?? null,
        description: notes?.get(r.id) || null,
        warnings,
        conditions,
      };
      card.key = JSON.stringify(card);
      this.memo[r.index] = { r, rule, context, card };
      return card;
    });
    this.memo.length = cards.length;
    this.list.setItems(cards);
    const fired = ex.rules.find((r) => r.verdict === 'fired');
    const firedIndex = fired ? fired.index : null;
    if (firedIndex !== this.firedShown) {
      this.firedShown = firedIndex;
      if (firedIndex !== null) this.list.reveal(firedIndex, this.rulesEl);
    }
  }

  renderFacts(ex, waiting) {
    const facts = [];
    facts.push(...fact('Path', ex.url_error
      ? h('span', { class: 'bad' }, `rejected: ${ex.url_error.message}`, ' ', h('code', { class: 'eng' }, ex.url_error.code))
      : h('code', { class: 'path', id: 'explain-path' }, ex.path ?? '')));
    facts.push(...fact('Quiet zone', ex.quiet_zone
      ? h('span', { class: 'quiet' }, h('code', {}, ex.quiet_zone.pattern), ': no nudge on this page', h('span', { class: 'eng' }, ` (quiet_zones[${ex.quiet_zone.index}])`))
      : h('span', { class: 'muted' }, 'none matches')));
    facts.push(...fact('Decision', ex.fired_rule_id
      ? h('span', {}, h('b', {}, ex.fired_rule_id), ' fires')
      : ex.held_out_rule_id
        ? h('span', { class: 'held-out' }, 'no nudge: this visitor is in the control group of ', h('b', {}, ex.held_out_rule_id))
        : h('span', { class: 'muted' }, waiting ? `nothing yet; ${waiting.rule} ${waiting.text} of idling` : nothingFires(ex))));
    this.facts.replaceChildren(...facts);
  }

  renderCard(card, slot) {
    const look = card.capped ? 'capped' : card.verdict;
    slot.className = `lazy-slot rule verdict-${look}`;
    slot.dataset.rule = card.id;
    slot.dataset.verdict = card.verdict;
    if (card.capped) slot.dataset.capped = 'true';
    else delete slot.dataset.capped;
    slot.replaceChildren(...[
      h('div', { class: 'rule-head' },
        h('span', { class: 'swatch', style: `background:${ruleColor(card.id)}`, 'aria-hidden': 'true' }),
        h('span', { class: 'rule-id' }, card.id),
        h('span', { class: 'rule-type', html: `${nudgeIcon(card.type, 12)}<span>${esc(NUDGE_LABELS[card.type] || card.type)}</span>` }),
        h('span', { class: `verdict v-${look}`, title: card.note || null }, card.badge),
      ),
      card.description ? h('p', { class: 'rule-description' }, card.description) : null,
      card.summary ? h('p', { class: 'rule-summary' }, card.summary) : null,
      card.note && (card.verdict !== 'failed' || card.capped) ? h('p', { class: `rule-note note-${look}` }, card.note) : null,
      card.warnings.length
        ? h('ul', { class: 'rule-warnings' }, ...card.warnings.map((w) =>
          h('li', { class: 'rule-warning', dataset: { code: w.code } },
            h('span', { class: 'diag-icon', 'aria-hidden': 'true' }, '▲'), w.message)))
        : null,
      card.conditions.length
        ? h('ul', { class: 'conds' },
          ...card.conditions.map((c) =>
            h('li', { class: `cond ${c.holds ? 'holds' : 'fails'}`, dataset: { condition: c.condition } },
              h('span', { class: 'cond-mark', 'aria-label': c.holds ? 'holds' : 'fails' }, c.holds ? '✓' : '✗'),
              h('span', { class: 'cond-text' }, c.text),
              h('code', { class: 'eng cond-detail' }, c.detail))))
        : null,
      h('button', { type: 'button', class: 'link-btn rule-edit', onclick: () => this.onEdit(card.index) }, `Edit ${card.id}`),
    ].filter(Boolean));
  }
}
