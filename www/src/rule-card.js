// One rule's card in the rules editor (rules-editor.js): its head (order, colour, id,
// description, on/off, moves), what it shows, its conditions on sliders and as chips
// (chips-field.js), the engine's findings under their fields, the failing scenarios that expect
// it and what the scenarios exercise of it. docs/contract/caps.md's settings in words: how often it may show
// (per visit, and the pause after a visitor closes it), the exit moment, the button's link and
// the control group; each left out of the JSON at its default.

import { diagList, showDiags } from './card-diags.js';
import { durationWords, idleWords, ruleDiagnostic, timesWords } from './card-words.js';
import { ChipsField } from './chips-field.js';
import { ruleColor } from './colors.js';
import { LIMITS, SPEC15_LIMITS } from './limits.js';
import { MAX_NOTE_CHARS } from './notes.js';
import { seconds } from './plain.js';
import { describeExpectation } from './scenarios-panel.js';
import { NUDGE_LABELS, h } from './util.js';

const TYPES = Object.keys(NUDGE_LABELS);
const IDLE_SLIDER_MAX_S = 120;

/** The units of the pause after a close (cap.cooldown_ms), largest first. */
const COOLDOWN_UNITS = [
  { value: 'days', ms: 86_400_000, label: 'days' },
  { value: 'hours', ms: 3_600_000, label: 'hours' },
  { value: 'minutes', ms: 60_000, label: 'minutes' },
];
const unitMs = (value) => COOLDOWN_UNITS.find((u) => u.value === value)?.ms ?? COOLDOWN_UNITS[0].ms;

/** The three answers to "when the visitor is about to leave" (when.exit_intent). */
const EXIT_CHOICES = [
  { value: 'any', label: 'Any time', set: undefined },
  { value: 'only', label: 'Only when the visitor is about to leave', set: true },
  { value: 'never', label: 'Never when the visitor is about to leave', set: false },
];

const isObject = (v) => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

const svg = (d) => `<svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round" d="${d}"/></svg>`;
const ICONS = {
  up: svg('M8 13V3M4 7l4-4 4 4'),
  top: svg('M3 2.5h10M8 14V6M4 10l4-4 4 4'),
  down: svg('M8 3v10M4 9l4 4 4-4'),
  copy: svg('M5.5 5.5h7v7h-7zM3.5 10.5v-7h7'),
  trash: svg('M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.7 8.5h5.6l.7-8.5'),
};

let fieldSeq = 0;

/** The words around a card's inline controls (their own labels say the same to a screen reader). */
const words = (text) => h('span', { class: 'unit', 'aria-hidden': 'true' }, text);

/** A card field: its label, its control, and the list of what the engine says about it. */
function field(text, control, diags, cls = 'field') {
  control.id ||= `rc-field-${++fieldSeq}`;
  return h('div', { class: cls, dataset: { field: control.dataset.field ?? '' } }, h('label', { class: 'field-label', for: control.id }, text), control, diags);
}

let forceValues = false; // RulesEditor.syncFocused: into the focused control too

/** While true, `setValue` writes into the focused control too (an undo, a redo). */
export function setForceValues(on) {
  forceValues = on;
}

/** Sets an input's value unless the person is typing in it. */
function setValue(el, value) {
  if ((forceValues || document.activeElement !== el) && el.value !== value) el.value = value;
}

/**
 * One rule's card. Built once per slot; `update` puts a new version of the rule into the same
 * elements (never into the control being used), so typing and dragging a slider go on undisturbed
 * while the JSON and the preview follow.
 */
export class RuleCard {
  constructor(editor, slot) {
    this.editor = editor;
    this.slot = slot;
    this.item = null;
    const set = (sub, value) => editor.setValueAt(['rules', this.item.index, ...sub], value);
    // Typed text and sliders: one undo step per word or drag, as typing in the JSON view.
    const type = (sub, value) => editor.setValueAt(['rules', this.item.index, ...sub], value, { typing: true });
    const owner = () => `rule “${this.item.rule?.id ?? this.item.index + 1}”`;

    // The handle starts the drag (a <button> would not: Chromium starts no drag from one), and
    // takes Alt+Up and Alt+Down from the keyboard.
    this.handle = h('span', {
      class: 'drag-handle', role: 'button', tabindex: '0', draggable: 'true', title: 'Drag to reorder (or Alt+↑ / Alt+↓)',
      onkeydown: (e) => {
        if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
          e.preventDefault();
          editor.move(this.item.index, this.item.index + (e.key === 'ArrowUp' ? -1 : 1), true);
        }
      },
    }, '⋮⋮');
    // The rule is taken where the pointer went down (the drag may start after it moved on).
    this.handle.addEventListener('pointerdown', () => {
      editor.dragFrom = this.item.index;
    });
    this.handle.addEventListener('pointerup', () => {
      editor.dragFrom = null;
    });
    this.handle.addEventListener('dragstart', (e) => {
      editor.dragFrom ??= this.item.index;
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('text/plain', String(editor.dragFrom));
      e.dataTransfer.setDragImage(slot, 20, 20);
      slot.classList.add('dragging');
    });
    this.handle.addEventListener('dragend', () => {
      editor.dragFrom = null;
      slot.classList.remove('dragging');
    });
    slot.addEventListener('dragover', (e) => {
      if (editor.dragFrom === null) return;
      e.preventDefault();
      slot.classList.add('drop-target');
    });
    slot.addEventListener('dragleave', () => slot.classList.remove('drop-target'));
    slot.addEventListener('drop', (e) => {
      e.preventDefault();
      slot.classList.remove('drop-target');
      const data = e.dataTransfer.getData('text/plain');
      const from = editor.dragFrom ?? (/^\d+$/.test(data) ? Number(data) : null);
      editor.dragFrom = null;
      if (from !== null) editor.move(from, this.item.index, false);
    });

    this.swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    this.order = h('span', { class: 'rc-order', title: 'Checked in this order; the first rule that matches fires' });
    this.id = h('input', {
      type: 'text', class: 'rc-id', 'aria-label': 'Rule name (id)', spellcheck: 'false', maxlength: String(LIMITS.rule_id_chars),
      oninput: (e) => type(['id'], e.target.value),
    });
    // What the rule is for, in the merchant's words: a note of this browser, not in the config.
    this.description = h('input', {
      type: 'text', class: 'rc-desc', maxlength: String(MAX_NOTE_CHARS), spellcheck: 'true',
      placeholder: 'Add a description (not part of the config)',
      title: 'A note for your team: kept in this browser and in share links, never in the config file',
      oninput: (e) => editor.host.notes.set(this.item.rule?.id, e.target.value),
    });
    this.enabled = h('input', {
      type: 'checkbox', class: 'switch', onchange: (e) => set(['enabled'], e.target.checked ? undefined : false),
    });
    this.enabledText = h('span', {});
    this.up = h('button', { type: 'button', class: 'icon-btn small', title: 'Move up', html: ICONS.up, onclick: () => editor.move(this.item.index, this.item.index - 1, true) });
    this.top = h('button', { type: 'button', class: 'icon-btn small', title: 'Move to top (checked first)', html: ICONS.top, onclick: () => editor.move(this.item.index, 0, true) });
    this.down = h('button', { type: 'button', class: 'icon-btn small', title: 'Move down', html: ICONS.down, onclick: () => editor.move(this.item.index, this.item.index + 1, true) });
    this.dup = h('button', { type: 'button', class: 'icon-btn small', title: 'Duplicate', html: ICONS.copy, onclick: () => editor.duplicate(this.item.index) });
    this.del = h('button', {
      type: 'button', class: 'icon-btn small danger', title: 'Delete (Undo or Ctrl+Z brings it back)', html: ICONS.trash,
      onclick: () => editor.remove(['rules', this.item.index], `Deleted ${owner()}.`),
    });
    // What the engine says about the rule, under the field it concerns (the rule as a whole and
    // its id under the head).
    this.diags = {
      rule: diagList(), type: diagList(), cta: diagList(), message: diagList(), intent: diagList(), idle: diagList(),
      cta_url: diagList(), per_session: diagList(), cooldown: diagList(), exit_intent: diagList(), holdout: diagList(),
    };
    this.failing = h('ul', { class: 'rc-failing', hidden: true });
    this.coverage = h('p', { class: 'rc-coverage', hidden: true });
    this.type = h('select', { dataset: { field: 'type' }, onchange: (e) => set(['nudge', 'type'], e.target.value) });
    this.cta = h('input', { type: 'text', maxlength: String(LIMITS.cta_chars), dataset: { field: 'cta' }, oninput: (e) => type(['nudge', 'cta'], e.target.value) });
    this.message = h('textarea', { rows: '2', maxlength: String(LIMITS.message_chars), dataset: { field: 'message' }, oninput: (e) => type(['nudge', 'message'], e.target.value) });
    this.intentText = h('b', {});
    // One track with two ends that cannot cross: each stops at the other.
    const end = (which, label) => h('input', {
      type: 'range', min: '0', max: '100', step: '1', 'aria-label': label,
      oninput: (e) => {
        const other = Number((which === 'min' ? this.intentMax : this.intentMin).value);
        const v = which === 'min' ? Math.min(Number(e.target.value), other) : Math.max(Number(e.target.value), other);
        e.target.value = String(v);
        this.drawIntentFill();
        type(['when', `${which}_intent_score`], v);
      },
    });
    this.intentMin = end('min', 'Lowest intent score');
    this.intentMax = end('max', 'Highest intent score');
    this.intentFill = h('span', { class: 'dr-fill' });
    this.idleText = h('b', {});
    this.idleRange = h('input', {
      type: 'range', min: '0', max: String(IDLE_SLIDER_MAX_S), step: '1', 'aria-label': 'Idle time before it shows, in seconds',
      oninput: (e) => type(['when', 'min_idle_ms'], Number(e.target.value) * 1000),
    });
    this.idleSeconds = h('input', {
      type: 'number', min: '0', max: String(LIMITS.idle_ms / 1000), step: '0.5', class: 'idle-seconds', 'aria-label': 'Idle time in seconds',
      oninput: (e) => {
        const s = Number(e.target.value);
        if (e.target.value !== '' && Number.isFinite(s)) type(['when', 'min_idle_ms'], Math.round(s * 1000));
      },
    });
    // docs/contract/caps.md. The button's link: empty removes it.
    this.ctaUrl = h('input', {
      type: 'text', inputmode: 'url', spellcheck: 'false', autocomplete: 'off', dataset: { field: 'cta_url' },
      placeholder: '/collections/sale or https://…',
      oninput: (e) => type(['nudge', 'cta_url'], e.target.value === '' ? undefined : e.target.value),
    });
    // A cap field at its default leaves the JSON; the last one gone takes `cap` with it.
    const setCap = (key, value) => {
      const cap = this.item.rule?.cap;
      const others = isObject(cap) ? Object.keys(cap).filter((k) => k !== key) : [];
      if (value === undefined && !others.length) {
        if (cap !== undefined) type(['cap'], undefined);
      } else {
        type(['cap', key], value);
      }
    };
    const whole = (el) => {
      if (el.value === '') return null;
      const n = Number(el.value);
      return Number.isFinite(n) ? n : null;
    };
    this.perSession = h('input', {
      type: 'number', min: '1', max: String(SPEC15_LIMITS.cap_per_session), step: '1', class: 'num-small', dataset: { field: 'per_session' },
      'aria-label': 'Shows at most this many times per visit',
      oninput: (e) => {
        const n = whole(e.target);
        if (n !== null) setCap('per_session', n === 1 ? undefined : n);
      },
    });
    this.perSessionUnit = h('span', { class: 'unit', 'aria-hidden': 'true' });
    this.cooldownText = h('span', { class: 'says' });
    this.cooldownUnit = 'days'; // kept while the pause is 0 (off)
    this.cooldownNum = h('input', {
      type: 'number', min: '0', step: '1', class: 'num-small', dataset: { field: 'cooldown' },
      'aria-label': 'Not again for this long after a visitor closes it (0: no pause)',
      oninput: (e) => {
        const n = whole(e.target);
        if (n !== null) setCap('cooldown_ms', n === 0 ? undefined : Math.round(n * unitMs(this.cooldownSelect.value)));
      },
    });
    this.cooldownSelect = h('select', {
      'aria-label': 'Unit of the pause after a close',
      onchange: (e) => {
        this.cooldownUnit = e.target.value;
        this.cooldownNum.max = String(Math.floor(SPEC15_LIMITS.cooldown_ms / unitMs(e.target.value)));
        const n = whole(this.cooldownNum);
        if (n) setCap('cooldown_ms', Math.round(n * unitMs(e.target.value)));
      },
    }, ...COOLDOWN_UNITS.map((u) => h('option', { value: u.value }, u.label)));
    this.exitIntent = h('select', {
      dataset: { field: 'exit_intent' },
      onchange: (e) => set(['when', 'exit_intent'], EXIT_CHOICES.find((c) => c.value === e.target.value)?.set),
    }, ...EXIT_CHOICES.map((c) => h('option', { value: c.value }, c.label)));
    this.holdoutText = h('span', { class: 'says' });
    // docs/contract/caps.md's settings fold away while all are at their defaults (the card stays short); they
    // open by themselves when one is set or has a problem, unless the merchant closed them.
    this.moreSummary = h('span', { class: 'rc-more-summary' });
    this.moreClosedByHand = false;
    this.holdout = h('input', {
      type: 'number', min: '0', max: String(SPEC15_LIMITS.holdout_percent), step: '1', class: 'num-small', dataset: { field: 'holdout' },
      'aria-label': 'Percent of visitors kept as a control group (0 to 50)',
      oninput: (e) => {
        const n = whole(e.target);
        if (n !== null) type(['holdout_percent'], n === 0 ? undefined : n);
      },
    });
    this.pages = new ChipsField(editor, { what: 'page', path: () => ['rules', this.item.index, 'when', 'pages'], owner });
    this.exclude = new ChipsField(editor, { what: 'excluded page', path: () => ['rules', this.item.index, 'when', 'exclude_pages'], owner });

    slot.replaceChildren(
      h('div', { class: 'rc-head' },
        this.handle, this.swatch, this.order, this.id,
        h('label', { class: 'switch-label' }, this.enabled, this.enabledText),
        h('div', { class: 'rc-actions' }, this.top, this.up, this.down, this.dup, this.del)),
      this.description,
      this.diags.rule,
      this.failing,
      this.coverage,
      h('div', { class: 'rc-grid' },
        field('Shows a', this.type, this.diags.type),
        field('Button', this.cta, this.diags.cta),
        field('Message', this.message, this.diags.message, 'field field-wide')),
      h('div', { class: 'rc-when' },
        h('div', { class: 'field', dataset: { field: 'intent' } },
          h('span', { class: 'field-label' }, 'Intent score ', this.intentText),
          h('div', { class: 'dual-range', role: 'group', 'aria-label': 'Intent score, lowest to highest' },
            h('span', { class: 'dr-track', 'aria-hidden': 'true' }, this.intentFill), this.intentMin, this.intentMax),
          this.diags.intent),
        h('div', { class: 'field', dataset: { field: 'idle' } },
          h('span', { class: 'field-label' }, 'Shows after idle ', this.idleText),
          h('div', { class: 'idle-edit' }, this.idleRange, this.idleSeconds, h('span', { class: 'unit', 'aria-hidden': 'true' }, 's')),
          this.diags.idle)),
      h('div', { class: 'field', dataset: { field: 'pages' } }, h('span', { class: 'field-label' }, 'On pages'), this.pages.el),
      h('div', { class: 'field', dataset: { field: 'exclude_pages' } }, h('span', { class: 'field-label' }, 'Except on'), this.exclude.el),
      // Each a sentence with its controls in it: "Show at most [1] time per visit".
      this.more = h('details', { class: 'rc-more' },
        h('summary', {}, h('span', { class: 'rc-more-title' }, 'How often, exit intent, link, control group'), ' ', this.moreSummary),
        field('Button link', this.ctaUrl, this.diags.cta_url, 'field limit-row'),
        h('div', { class: 'field limit-row', dataset: { field: 'per_session' } },
          h('span', { class: 'field-label' }, 'How often'),
          h('div', { class: 'inline-edit' }, words('Show at most'), this.perSession, this.perSessionUnit),
          this.diags.per_session),
        h('div', { class: 'field limit-row', dataset: { field: 'cooldown' } },
          h('span', { class: 'field-label' }, 'After a close'),
          h('div', { class: 'inline-edit' }, words('Not again for'), this.cooldownNum, this.cooldownSelect,
            words('after a visitor closes it'), this.cooldownText),
          this.diags.cooldown),
        field('Exit intent', this.exitIntent, this.diags.exit_intent, 'field limit-row'),
        h('div', { class: 'field limit-row', dataset: { field: 'holdout' } },
          h('span', { class: 'field-label' }, 'Control group'),
          h('div', { class: 'inline-edit' }, words('Keep'), this.holdout, words('% of visitors as a control group'), this.holdoutText),
          this.diags.holdout)),
    );
    this.more.addEventListener('toggle', () => {
      this.moreClosedByHand = !this.more.open;
    });
  }

  /**
   * The docs/contract/caps.md section's line when folded, and whether it opens by itself: when a setting is
   * not at its default or has a problem (and the merchant did not fold it).
   */
  updateMore(r, nudge, when, diags) {
    const cap = isObject(r.cap) ? r.cap : {};
    const parts = [];
    if (cap.per_session !== undefined) parts.push(Number.isInteger(cap.per_session) ? `at most ${timesWords(cap.per_session)} per visit` : 'times per visit');
    if (cap.cooldown_ms) parts.push(Number.isInteger(cap.cooldown_ms) ? `not again for ${durationWords(cap.cooldown_ms)} after a close` : 'a pause after a close');
    if (when.exit_intent === true) parts.push('only when leaving');
    if (when.exit_intent === false) parts.push('never when leaving');
    if (nudge.cta_url !== undefined) parts.push(`link ${String(nudge.cta_url)}`);
    if (r.holdout_percent) parts.push(`${r.holdout_percent} % control group`);
    this.moreSummary.textContent = parts.length ? parts.join(' · ') : 'once per visit, any time, no link, no control group';
    const fields = new Set(['cta_url', 'per_session', 'cooldown', 'exit_intent', 'holdout']);
    const troubled = diags.some((w) => fields.has(w.field));
    if ((parts.length || troubled) && !this.more.open && !this.moreClosedByHand) this.more.open = true;
  }

  /**
   * The stretch between the two ends; the lower end on top when both sit high, so that ends
   * that meet at 100 can still be pulled apart.
   */
  drawIntentFill() {
    const lo = Number(this.intentMin.value);
    const hi = Number(this.intentMax.value);
    this.intentFill.style.left = `${Math.min(lo, hi)}%`;
    this.intentFill.style.right = `${100 - Math.max(lo, hi)}%`;
    this.intentMin.classList.toggle('on-top', lo > 50);
  }

  update(item) {
    this.item = item;
    const { index, count, rule, diags, hits } = item;
    const r = rule && typeof rule === 'object' ? rule : {};
    const nudge = r.nudge && typeof r.nudge === 'object' ? r.nudge : {};
    const when = r.when && typeof r.when === 'object' ? r.when : {};
    const enabled = r.enabled !== false;
    const name = String(r.id ?? `rule ${index + 1}`);
    const fieldInvalid = (el, sub) => {
      const bad = diags.some((d) => d.severity === 'error' && d.path === `rules[${index}]${sub}`);
      if (bad) el.setAttribute('aria-invalid', 'true');
      else el.removeAttribute('aria-invalid');
    };
    const slot = this.slot;
    slot.classList.toggle('is-disabled', !enabled);
    slot.dataset.rule = String(r.id ?? '');
    slot.dataset.index = String(index);

    this.handle.setAttribute('aria-label', `Move rule ${name}: drag, or Alt+Up and Alt+Down`);
    this.swatch.style.background = ruleColor(r.id ?? null);
    this.order.textContent = `${index + 1}.`;
    setValue(this.id, String(r.id ?? ''));
    fieldInvalid(this.id, '.id');
    setValue(this.description, this.editor.host.notes.get(r.id));
    this.description.setAttribute('aria-label', `Description of ${name}`);
    this.enabled.checked = enabled;
    this.enabled.setAttribute('aria-label', `${name} is ${enabled ? 'on' : 'off'}`);
    this.enabledText.textContent = enabled ? 'On' : 'Off';
    this.up.disabled = index === 0;
    this.top.disabled = index === 0;
    this.top.setAttribute('aria-label', `Move ${name} to the top`);
    this.down.disabled = index === count - 1;
    this.up.setAttribute('aria-label', `Move ${name} up`);
    this.down.setAttribute('aria-label', `Move ${name} down`);
    this.dup.setAttribute('aria-label', `Duplicate ${name}`);
    this.del.setAttribute('aria-label', `Delete ${name}`);

    renderCoverage(this.coverage, item.coverage);
    this.failing.hidden = !item.failing;
    this.failing.replaceChildren(...(item.failing ?? []).map((f) => h('li', { class: 'card-diag error' },
      h('span', { class: 'diag-icon', 'aria-hidden': 'true' }, '✗'),
      h('span', { class: 'card-diag-text' }, `Scenario “${f.name}” expects this rule to fire; now: ${describeExpectation(f.got)}.${f.because ? ` ${f.because}` : ''}`),
      h('button', { type: 'button', class: 'link-btn', onclick: () => this.editor.host.showScenario(f.index) }, 'Show scenario'))));

    // Each finding once, under its field, in the card's words.
    const prefix = `rules[${index}]`;
    const words = diags.map((d) => ({ d, ...ruleDiagnostic(d, r, d.path.slice(prefix.length)) }));
    for (const [key, list] of Object.entries(this.diags)) {
      showDiags(list, words.filter((w) => (w.field === 'id' ? 'rule' : w.field) === key), this.editor);
    }

    const typeKnown = TYPES.includes(nudge.type);
    if (this.type.dataset.value !== String(nudge.type)) {
      this.type.replaceChildren(
        ...TYPES.map((t) => h('option', { value: t }, NUDGE_LABELS[t])),
        typeKnown ? null : h('option', { value: String(nudge.type ?? '') }, `${nudge.type ?? '(none)'}: not a nudge type`),
      );
      this.type.value = String(nudge.type ?? '');
      this.type.dataset.value = String(nudge.type);
    }
    fieldInvalid(this.type, '.nudge.type');
    setValue(this.cta, String(nudge.cta ?? ''));
    fieldInvalid(this.cta, '.nudge.cta');
    setValue(this.message, String(nudge.message ?? ''));
    fieldInvalid(this.message, '.nudge.message');

    const minIntent = Number.isInteger(when.min_intent_score) ? when.min_intent_score : 0;
    const maxIntent = Number.isInteger(when.max_intent_score) ? when.max_intent_score : 100;
    const idleMs = Number.isInteger(when.min_idle_ms) ? when.min_idle_ms : 0;
    this.intentText.textContent = minIntent === 0 && maxIntent === 100 ? 'any' : `${minIntent} to ${maxIntent}`;
    setValue(this.intentMin, String(minIntent));
    setValue(this.intentMax, String(maxIntent));
    this.drawIntentFill();
    fieldInvalid(this.intentMin, '.when.min_intent_score');
    fieldInvalid(this.intentMax, '.when.max_intent_score');
    this.idleText.textContent = idleWords(idleMs);
    setValue(this.idleRange, String(Math.min(IDLE_SLIDER_MAX_S, idleMs / 1000)));
    this.idleRange.setAttribute('aria-valuetext', seconds(idleMs));
    setValue(this.idleSeconds, String(idleMs / 1000));
    fieldInvalid(this.idleSeconds, '.when.min_idle_ms');

    updateLimits(this, r, nudge, when, fieldInvalid);
    this.updateMore(r, nudge, when, words);

    const pagesAbsent = !Array.isArray(when.pages);
    this.pages.update({
      values: pagesAbsent ? [] : when.pages, hits: hits.pages, issues: words.filter((w) => w.field === 'pages'),
      absentText: pagesAbsent ? 'every page' : 'no page',
    });
    this.exclude.update({
      values: Array.isArray(when.exclude_pages) ? when.exclude_pages : [], hits: hits.exclude_pages,
      issues: words.filter((w) => w.field === 'exclude_pages'), absentText: 'no exception',
    });
  }
}

/**
 * docs/contract/caps.md's fields of a rule into their controls, each with its value in words: "Show at most
 * once per visit", "Not again for 7 days after a visitor closes it", "Keep 10 % of visitors as a
 * control group".
 */
function updateLimits(card, r, nudge, when, fieldInvalid) {
  const name = String(r.id ?? `rule ${card.item.index + 1}`);
  setValue(card.ctaUrl, typeof nudge.cta_url === 'string' ? nudge.cta_url : '');
  card.ctaUrl.setAttribute('aria-label', `Button link of ${name}: where the button takes the visitor (a page such as /collections/sale, or an https:// address; empty: none)`);
  fieldInvalid(card.ctaUrl, '.nudge.cta_url');

  const cap = isObject(r.cap) ? r.cap : {};
  const perSession = cap.per_session ?? 1;
  setValue(card.perSession, String(perSession));
  card.perSessionUnit.textContent = perSession === 1 ? 'time per visit' : 'times per visit';
  card.perSession.setAttribute('aria-valuetext', Number.isInteger(perSession) ? `Show at most ${timesWords(perSession)} per visit` : String(perSession));
  fieldInvalid(card.perSession, '.cap.per_session');

  const cooldown = cap.cooldown_ms ?? 0;
  const shownMs = Number(card.cooldownNum.value) * unitMs(card.cooldownSelect.value);
  if (card.cooldownNum.value === '' || shownMs !== cooldown || (forceValues && document.activeElement === card.cooldownNum)) {
    // The unit that writes it as a whole number (the largest), else minutes; 0 keeps the unit.
    if (Number.isInteger(cooldown) && cooldown > 0) {
      card.cooldownUnit = (COOLDOWN_UNITS.find((u) => cooldown % u.ms === 0) ?? COOLDOWN_UNITS[COOLDOWN_UNITS.length - 1]).value;
    }
    if (document.activeElement !== card.cooldownSelect) card.cooldownSelect.value = card.cooldownUnit;
    setValue(card.cooldownNum, typeof cooldown === 'number' ? String(cooldown / unitMs(card.cooldownSelect.value)) : '');
  }
  card.cooldownNum.max = String(Math.floor(SPEC15_LIMITS.cooldown_ms / unitMs(card.cooldownSelect.value)));
  card.cooldownText.textContent = cooldown === 0 ? '(0: off)' : '';
  card.cooldownNum.setAttribute('aria-valuetext', !Number.isInteger(cooldown) ? String(cooldown)
    : cooldown === 0 ? 'Off: it may show again in a later visit' : `Not again for ${durationWords(cooldown)} after a visitor closes it`);
  fieldInvalid(card.cooldownNum, '.cap.cooldown_ms');

  const exit = when.exit_intent === true ? 'only' : when.exit_intent === false ? 'never' : 'any';
  if (document.activeElement !== card.exitIntent || forceValues) card.exitIntent.value = exit;
  fieldInvalid(card.exitIntent, '.when.exit_intent');

  const holdout = r.holdout_percent ?? 0;
  setValue(card.holdout, String(holdout));
  card.holdoutText.textContent = holdout === 0 ? '(0: none)' : '';
  card.holdout.setAttribute('aria-valuetext', !Number.isInteger(holdout) ? String(holdout)
    : holdout === 0 ? 'No control group: every visitor can see it' : `Keep ${holdout} % of visitors as a control group`);
  fieldInvalid(card.holdout, '.holdout_percent');
}

/** Each condition's two cases, as said of a visitor: [the condition holds, it fails]. */
const CONDITION_CASES = {
  min_intent_score: ['with intent high enough', 'with intent too low'],
  max_intent_score: ['with intent low enough', 'with intent too high'],
  min_idle_ms: ['idle long enough', 'not idle long enough yet'],
  pages: ['on one of its pages', 'on another page'],
  exclude_pages: ['not on an excluded page', 'on an excluded page'],
};

/**
 * What the scenarios exercise of one rule (the engine's coverage, docs/contract/as-code.md), for a merchant: how
 * many scenarios make it fire, the visitors no scenario has tried (a condition never seen
 * holding or never seen failing), and the page patterns no scenario's page matches.
 */
function renderCoverage(el, c) {
  el.hidden = !c;
  if (!c) return;
  const untested = [];
  for (const k of c.conditions) {
    const [holds, fails] = CONDITION_CASES[k.condition] ?? [`${k.condition} holds`, `${k.condition} fails`];
    if (!k.seen_true) untested.push(holds);
    else if (!k.seen_false) untested.push(fails);
  }
  el.classList.toggle('uncovered', c.fired === 0);
  const fired = c.fired === 0
    ? 'Not covered: no scenario makes it fire.'
    : `Covered: fires in ${c.fired} ${c.fired === 1 ? 'scenario' : 'scenarios'}.`;
  const pages = c.unmatched?.length ? ` No scenario on a page of ${c.unmatched.join(', ')}.` : '';
  el.textContent = `${fired}${untested.length ? ` Untested: a visitor ${untested.join(', or ')}.` : ''}${pages}`;
}
