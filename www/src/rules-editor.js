// The visual rule editor: the same config as the JSON view, as cards a merchant edits without
// writing JSON. Add, duplicate, delete, enable and disable rules; reorder them by dragging the
// handle or with Alt+Arrow keys; thresholds on sliders, idle time in seconds, pages and quiet
// zones as chips that are checked by the engine as they are typed, with the sample pages each
// one matches. Every edit is a small text edit of the JSON (config-edits.js), so both views stay
// one document with one undo history; errors the engine reports show on the card they concern.

import { patternFixes, patternWords, ruleDiagnostic, settingsDiagnostic, idleWords } from './card-words.js';
import { ruleColor, ruleColors } from './colors.js';
import { ConfigIndex, freshId, insertAt, moveItem, readConfig, setAt } from './config-edits.js';
import { LazyList } from './lazy-list.js';
import { MAX_NOTE_CHARS } from './notes.js';
import { seconds } from './plain.js';
import { describeExpectation } from './scenarios-panel.js';
import { STORE_PAGES } from './storefront.js';
import { NUDGE_LABELS, h } from './util.js';

const TYPES = Object.keys(NUDGE_LABELS);
const IDLE_SLIDER_MAX_S = 120;

const svg = (d) => `<svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round" d="${d}"/></svg>`;
const ICONS = {
  up: svg('M8 13V3M4 7l4-4 4 4'),
  top: svg('M3 2.5h10M8 14V6M4 10l4-4 4 4'),
  down: svg('M8 3v10M4 9l4 4 4-4'),
  copy: svg('M5.5 5.5h7v7h-7zM3.5 10.5v-7h7'),
  trash: svg('M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.7 8.5h5.6l.7-8.5'),
};

/** Errors and warnings by the rule index their path starts with (`rules[3]...`); -1: the rest. */
export function diagnosticsByRule(diagnostics) {
  const map = new Map();
  for (const d of diagnostics) {
    const m = /^rules\[(\d+)\]/.exec(d.path || '');
    const key = m ? Number(m[1]) : -1;
    if (!map.has(key)) map.set(key, []);
    map.get(key).push(d);
  }
  return map;
}

let fieldSeq = 0;

/** A card field: its label, its control, and the list of what the engine says about it. */
function field(text, control, diags, cls = 'field') {
  control.id ||= `rc-field-${++fieldSeq}`;
  return h('div', { class: cls, dataset: { field: control.dataset.field ?? '' } }, h('label', { class: 'field-label', for: control.id }, text), control, diags);
}

/** An empty list for the engine's findings about one field (filled by `showDiags`). */
function diagList() {
  return h('ul', { class: 'card-errors', hidden: true });
}

export class RulesEditor {
  /**
   * @param {HTMLElement} root
   * @param {{applyEdits: (edits, options?: {typing?: boolean}) => void, checkPattern: (text, cb) => void,
   *          jumpToJson: (line, column) => void, offerUndo: (message: string) => void,
   *          showScenario: (index: number) => void, notify: (text, action?) => void,
   *          notes: import('./notes.js').RuleNotes}} host
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.index = new ConfigIndex();
    this.ruleKeys = []; // JSON of each rule as parsed, made again only for a rule that changed
    this.text = null;
    this.value = null;
    this.diagnostics = [];
    this.pageHits = new Map(); // json_path -> sample page labels it matches
    this.extrasGen = 0; // bumped when diagnostics, page hits or coverage change
    this.items = []; // the last card items, reused while their rule and the extras are unchanged
    this.visible = false;
    this.stale = true;

    this.banner = h('div', { class: 'rules-banner', hidden: true, role: 'alert' });
    this.settings = h('section', { class: 'rules-settings', 'aria-label': 'Site settings' });
    this.list = h('ol', { class: 'rule-cards', 'aria-label': 'Rules, in the order they are checked' });
    this.addBtn = h('button', { type: 'button', class: 'btn btn-primary add-rule', onclick: () => this.addRule() }, '+ Add a rule');
    this.scroller = h('div', { class: 'rules-scroll', tabindex: '-1' }, this.banner, this.settings, this.list, this.addBtn);
    root.append(this.scroller);
    this.cards = new LazyList(this.list, {
      root: this.scroller,
      key: (item) => item.key,
      render: (item, slot) => this.renderCard(item, slot),
      slotClass: 'lazy-slot rule-card-slot',
      estimate: 260,
    });
    // One column (a phone, a narrow window): the list is part of the page, which scrolls; the
    // page's view then decides which cards are built (style.css, the same width).
    const oneColumn = globalThis.matchMedia?.('(max-width: 1180px)');
    if (oneColumn) {
      const follow = () => this.cards.setRoot(oneColumn.matches ? null : this.scroller);
      oneColumn.addEventListener('change', follow);
      if (oneColumn.matches) follow();
    }
    this.dragFrom = null;
    // Where the merchant is: the card last worked in (a new rule goes after it).
    this.lastIndex = null;
    this.list.addEventListener('focusin', (e) => {
      const slot = e.target.closest?.('.rule-card-slot');
      if (slot?.dataset.index) this.lastIndex = Number(slot.dataset.index);
    });
  }

  show(on) {
    this.visible = on;
    if (on && this.stale) this.refresh();
  }

  /** New text, diagnostics (errors then warnings) and sample-page reports from the engine. */
  /**
   * Sets the value at a JSON path. An existing scalar is replaced in place (ConfigIndex: a
   * keystroke in a card of a 1,000-rule config touches one string); anything else goes through
   * jsonc-parser's `modify`.
   */
  setValueAt(path, value, options) {
    const edit = value === undefined ? null : this.index.replaceScalar(this.text, path, value);
    if (edit && this.parsed?.syntaxOk && this.parsedText === this.text) {
      // The parsed config follows the edit too, so the refresh parses nothing; only the edited
      // rule's key is made again.
      let target = this.parsed.value;
      for (const seg of path.slice(0, -1)) target = target?.[seg];
      if (target && typeof target === 'object') {
        target[path[path.length - 1]] = value;
        this.parsedText = this.index.text;
        if (path[0] === 'rules' && typeof path[1] === 'number') this.ruleKeys[path[1]] = undefined;
      }
    }
    this.edit(edit ? [edit] : setAt(this.text, path, value), options);
  }

  update({ text, diagnostics, pageReports, coverage, failures }) {
    if (text !== undefined) this.text = text;
    if (diagnostics) {
      const key = JSON.stringify(diagnostics);
      if (key !== this.diagnosticsKey) {
        this.diagnosticsKey = key;
        this.diagnostics = diagnostics;
        this.extrasGen += 1;
      }
    }
    // Failing scenarios (scenarios-panel.js), by the id of the rule each expects to fire.
    if (failures) {
      this.failures = new Map();
      for (const f of failures) {
        const id = f.expected?.rule;
        if (id === undefined) continue;
        if (!this.failures.has(id)) this.failures.set(id, []);
        this.failures.get(id).push(f);
      }
      this.extrasGen += 1;
    }
    // Scenario coverage (scenarios-panel.js): per rule index, or null without scenarios.
    if (coverage !== undefined) {
      this.coverage = coverage ? coverageByRule(coverage) : null;
      this.extrasGen += 1;
    }
    if (pageReports) {
      this.extrasGen += 1;
      this.pageHits = new Map();
      pageReports.forEach((report, i) => {
        for (const m of report.matches ?? []) {
          if (!this.pageHits.has(m.json_path)) this.pageHits.set(m.json_path, []);
          this.pageHits.get(m.json_path).push(STORE_PAGES[i].label);
        }
      });
    }
    this.stale = true;
    // One refresh a frame, whatever arrived meanwhile (text, errors, warnings, page reports).
    if (this.visible && !this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = null;
        if (this.visible && this.stale) this.refresh();
      });
    }
  }

  refresh() {
    this.stale = false;
    if (this.parsedText !== this.text) {
      this.parsedText = this.text;
      this.parsed = readConfig(this.text ?? '');
      this.ruleKeys = [];
    }
    const { parsed } = this;
    const syntax = this.diagnostics.filter((d) => d.code === 'json_syntax');
    if (!parsed.syntaxOk || !parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
      this.value = null;
      this.banner.hidden = false;
      const first = syntax[0];
      this.banner.replaceChildren(
        h('b', {}, 'The rules cannot be shown while the JSON has a syntax error.'),
        ' ', first ? first.message : 'The config must be a JSON object.',
        first?.line ? h('button', { type: 'button', class: 'link-btn', onclick: () => this.host.jumpToJson(first.line, first.column) }, ` Show it in the JSON (line ${first.line})`) : null,
      );
      this.settings.hidden = true;
      this.list.hidden = true;
      this.addBtn.hidden = true;
      return;
    }
    this.value = parsed.value;
    this.banner.hidden = true;
    this.settings.hidden = false;
    this.list.hidden = false;
    this.addBtn.hidden = false;
    const byRule = diagnosticsByRule(this.diagnostics);
    this.renderSettings(byRule.get(-1) ?? []);
    const rules = Array.isArray(this.value.rules) ? this.value.rules : [];
    const ids = rules.map((r) => r?.id);
    ruleColors.follow(ids);
    this.host.notes.follow(ids);
    const items = rules.map((rule, index) => {
      // A keystroke in one card of 1,000 changes one rule: the others keep their item (and key).
      const cached = this.items[index];
      if (cached && cached.gen === this.extrasGen && cached.count === rules.length && this.ruleKeys[index] === cached.ruleKey) {
        cached.rule = rule;
        return cached;
      }
      const diags = byRule.get(index) ?? [];
      const hits = {};
      for (const key of ['pages', 'exclude_pages']) {
        const list = Array.isArray(rule?.when?.[key]) ? rule.when[key] : [];
        hits[key] = list.map((_, k) => this.pageHits.get(`rules[${index}].when.${key}[${k}]`) ?? []);
      }
      this.ruleKeys[index] ??= JSON.stringify(rule);
      const coverage = this.coverage?.get(index) ?? null;
      const failing = this.failures?.get(rule?.id) ?? null;
      const extra = diags.length || hits.pages.length || hits.exclude_pages.length || coverage || failing ? JSON.stringify([diags, hits, coverage, failing]) : '';
      const ruleKey = this.ruleKeys[index];
      return { index, count: rules.length, rule, diags, hits, coverage, failing, gen: this.extrasGen, ruleKey, key: `${index}/${rules.length}\u0000${ruleKey}\u0000${extra}` };
    });
    this.items = items;
    forceValues = Boolean(this.forceSync);
    this.forceSync = false;
    try {
      this.cards.setItems(items);
    } finally {
      forceValues = false;
    }
    this.prepareIndex();
  }

  /**
   * Parses new text for card edits while the page is idle, so that the first keystroke in a card
   * of a 1,000-rule config does not parse 400 KB (about 30 ms) before its preview.
   */
  prepareIndex() {
    if (this.indexPending) return;
    this.indexPending = true;
    const idle = globalThis.requestIdleCallback ?? ((f) => setTimeout(f, 50));
    idle(() => {
      this.indexPending = false;
      if (this.visible && this.text !== null) this.index.treeFor(this.text);
    });
  }

  edit(edits, options) {
    if (edits.length) this.host.applyEdits(edits, options);
  }

  /** A destructive edit: made, then said with an Undo (app.js `offerUndo`). */
  remove(path, message) {
    this.edit(setAt(this.text, path, undefined));
    this.host.offerUndo(message);
  }

  /**
   * After an undo or redo: the next refresh puts the text's values into the focused control too
   * (otherwise left alone while the person types in it), so the field shows what was undone.
   */
  syncFocused() {
    this.forceSync = true;
  }

  // ------------------------------------------------------------------ site settings

  renderSettings(diags) {
    const v = this.value;
    if (!this.settingsUi) {
      const caseBox = h('input', {
        type: 'checkbox', class: 'switch',
        onchange: (e) => this.setValueAt(['case_sensitive'], e.target.checked),
      });
      const zones = new ChipsField(this, { what: 'quiet zone', path: () => ['quiet_zones'] });
      const errors = h('ul', { class: 'card-errors' });
      this.settings.append(
        h('div', { class: 'settings-head' },
          h('h3', {}, 'Quiet zones'),
          h('label', { class: 'switch-label' }, caseBox, 'Letter case matters')),
        h('p', { class: 'hint' }, 'No nudge ever shows on these pages, whatever the rules say (checkout, cart, account).'),
        zones.el,
        errors,
      );
      this.settingsUi = { caseBox, zones, errors };
    }
    const ui = this.settingsUi;
    const zones = Array.isArray(v.quiet_zones) ? v.quiet_zones : [];
    ui.caseBox.checked = v.case_sensitive === true;
    const words = diags.map((d) => ({ d, ...settingsDiagnostic(d, v) }));
    ui.zones.update({
      values: zones,
      hits: zones.map((_, k) => this.pageHits.get(`quiet_zones[${k}]`) ?? []),
      issues: words.filter((w) => w.d.path.startsWith('quiet_zones')),
    });
    showDiags(ui.errors, words.filter((w) => !w.d.path.startsWith('quiet_zones')), this);
  }

  /**
   * One finding of the engine on a card, in the card's words (card-words.js), the engine's own
   * text in the engineer details, "did you mean" buttons (`fixes`, each calling `onFix`) and a
   * button to its place in the JSON.
   */
  diagItem({ d, text, fixes = [], onFix = null }) {
    return h('li', { class: `card-diag ${d.severity}`, dataset: { code: d.code } },
      h('span', { class: 'diag-icon', 'aria-hidden': 'true' }, d.severity === 'error' ? '!' : '▲'),
      h('span', { class: 'card-diag-text' }, text,
        fixes.length && onFix ? h('span', { class: 'fixes' }, ' Did you mean ',
          ...fixes.flatMap((f, i) => [i ? ' or ' : '', h('button', { type: 'button', class: 'fix-btn', onclick: () => onFix(f) }, f)]), '?') : null,
        h('span', { class: 'eng' }, ` · engine: ${d.message} (${d.code})`)),
      d.line ? h('button', { type: 'button', class: 'link-btn', onclick: () => this.host.jumpToJson(d.line, d.column) }, 'Show in JSON') : null);
  }

  // ------------------------------------------------------------------ rule cards

  renderCard(item, slot) {
    if (!slot.card) slot.card = new RuleCard(this, slot);
    slot.card.update(item);
  }

  move(from, to, keepFocus) {
    const rules = this.value?.rules;
    if (!Array.isArray(rules) || to < 0 || to >= rules.length || from === to) return;
    this.edit(moveItem(this.text, ['rules'], from, to));
    if (keepFocus) {
      requestAnimationFrame(() => this.cards.element(to)?.querySelector('.drag-handle')?.focus());
    }
  }

  duplicate(index) {
    const rules = this.value?.rules;
    if (!Array.isArray(rules)) return;
    const copy = structuredClone(rules[index]);
    copy.id = freshId(copy?.id, new Set(rules.map((r) => r?.id)));
    const note = this.host.notes.get(rules[index]?.id);
    if (note) this.host.notes.set(copy.id, note);
    this.edit(insertAt(this.text, ['rules'], index + 1, copy));
  }

  /**
   * Adds a rule switched off (it changes no visitor's nudge until the merchant switches it on),
   * after the card the merchant last worked in (the end of the list if none), and says where it
   * went, offering "Move to top": rules are checked in order.
   */
  addRule() {
    const rules = Array.isArray(this.value?.rules) ? this.value.rules : [];
    const used = new Set(rules.map((r) => r?.id));
    let n = rules.length + 1;
    while (used.has(`rule-${n}`)) n += 1;
    const rule = {
      id: `rule-${n}`,
      enabled: false,
      nudge: { type: 'toast', message: 'Free shipping on orders over $50.', cta: 'Shop now' },
      when: { min_intent_score: 50, min_idle_ms: 5000, pages: ['/products/**'] },
    };
    const at = this.lastIndex !== null && this.lastIndex < rules.length ? this.lastIndex + 1 : rules.length;
    const after = at > 0 ? ` after “${rules[at - 1]?.id ?? `rule ${at}`}”` : '';
    this.edit(insertAt(this.text, ['rules'], at, rule));
    this.lastIndex = at;
    this.host.notify(`Added “${rule.id}”${after}, switched off: no visitor sees it until you switch it on.`, at > 0 ? {
      label: 'Move to top',
      run: () => this.move(at, 0, false),
    } : null);
    requestAnimationFrame(() => {
      const el = this.cards.element(at);
      el?.scrollIntoView({ block: 'nearest' });
      el?.querySelector('.rc-id')?.focus();
    });
  }
}

let forceValues = false; // RulesEditor.syncFocused: into the focused control too

/** Sets an input's value unless the person is typing in it. */
function setValue(el, value) {
  if ((forceValues || document.activeElement !== el) && el.value !== value) el.value = value;
}

/** Fills a field's list with its findings (in card words), hidden when there are none. */
function showDiags(list, words, editor) {
  list.hidden = !words.length;
  list.replaceChildren(...words.map((w) => editor.diagItem(w)));
}

/**
 * A pattern list as chips: each chip removable, an input that adds one, checked by the engine
 * while typed, with the sample pages it matches. Add refuses a pattern the engine finds invalid
 * and offers its "did you mean" patterns as buttons. The engine's findings about the list show
 * once, under it, in the card's words. Built once; `update` redraws only the chips, so the text
 * being typed survives updates.
 */
class ChipsField {
  constructor(editor, { what, path, owner = null }) {
    this.editor = editor;
    this.what = what;
    this.owner = owner; // () => whose list it is, in words (a rule), for the Undo toast
    this.path = path; // () => the list's JSON path (a card's index can change)
    this.values = [];
    this.hits = [];
    this.checked = null; // the engine's check of the text in the input (worker.js `checkPattern`)
    this.pendingAdd = null; // text to add once its check arrives
    this.chips = h('ul', { class: 'chips' });
    this.input = h('input', {
      type: 'text', class: 'chip-input', placeholder: 'Add a pattern, e.g. /products/**',
      spellcheck: 'false', autocomplete: 'off', 'aria-label': `Add a ${what} pattern`,
    });
    this.hint = h('p', { class: 'chip-hint', 'aria-live': 'polite' });
    this.issues = diagList();
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.add();
      }
    });
    this.input.addEventListener('input', () => {
      this.input.removeAttribute('aria-invalid');
      this.check();
    });
    this.el = h('div', { class: 'chips-field' },
      this.chips,
      this.issues,
      h('div', { class: 'chip-add' }, this.input, h('button', { type: 'button', class: 'btn btn-small', onclick: () => this.add() }, 'Add')),
      this.hint);
  }

  /**
   * @param {{values: string[], hits: string[][], issues: {d, text, item?: number}[], absentText?: string}} state
   *   `issues`: the engine's findings about this list and its patterns, in card words
   */
  update({ values, hits, issues, absentText = null }) {
    this.values = values;
    this.hits = hits;
    const chips = values.map((pattern, k) => {
      const mine = issues.filter((w) => w.item === k);
      const severity = mine.some((w) => w.d.severity === 'error') ? ' chip-error' : mine.length ? ' chip-warning' : '';
      const pageHits = hits[k] ?? [];
      return h('li', {
        class: `chip${severity}`,
        title: mine.length ? mine.map((w) => w.text).join('\n') : (pageHits.length ? `Matches ${pageHits.join(', ')}` : 'Matches none of the sample pages'),
      },
      h('code', {}, String(pattern)),
      h('button', {
        type: 'button', class: 'chip-x', 'aria-label': `Remove ${this.what} ${pattern}`,
        onclick: () => this.editor.remove([...this.path(), k], `Removed ${this.what} ${pattern}${this.owner ? ` from ${this.owner()}` : ''}.`),
      }, '×'));
    });
    if (!values.length && absentText) chips.push(h('li', { class: 'chip-empty' }, absentText));
    this.chips.replaceChildren(...chips);
    // A pattern that is invalid as written gets its "did you mean" patterns: one click puts one
    // in its place.
    showDiags(this.issues, issues.map((w) => {
      const pattern = w.item === undefined ? null : values[w.item];
      const fixes = typeof pattern === 'string' && w.d.severity === 'error' ? patternFixes(w.d.code, pattern) : [];
      return { ...w, fixes, onFix: (f) => this.editor.setValueAt([...this.path(), w.item], f) };
    }), this.editor);
    if (!this.input.value) this.showSummary();
  }

  showSummary() {
    const all = new Set(this.hits.flat());
    this.hint.className = 'chip-hint';
    this.hint.replaceChildren(this.values.length ? `Sample pages these match: ${all.size ? [...all].join(', ') : 'none'}` : '');
  }

  /**
   * Adds the typed pattern, unless the engine finds it invalid (then it says why and offers its
   * "did you mean" patterns) or the list has it already. A pattern typed and added at once waits
   * for its check (a few milliseconds).
   */
  add() {
    const text = this.input.value;
    if (!text) return;
    if (this.values.includes(text)) {
      this.refuse(`“${text}” is in this list already.`);
      return;
    }
    if (this.checked?.text !== text) {
      this.pendingAdd = text;
      this.check();
      return;
    }
    if (this.checked.error) {
      this.showCheck(this.checked, true);
      return;
    }
    this.commit(text);
  }

  commit(text) {
    this.input.value = '';
    this.checked = null;
    this.input.removeAttribute('aria-invalid');
    this.editor.edit(insertAt(this.editor.text, this.path(), this.values.length, text));
  }

  refuse(text, ...more) {
    this.input.setAttribute('aria-invalid', 'true');
    this.hint.className = 'chip-hint bad';
    this.hint.replaceChildren(h('b', {}, 'Not added: '), text, ...more);
  }

  check() {
    const text = this.input.value;
    if (!text) {
      this.showSummary();
      return;
    }
    this.editor.host.checkPattern(text, (result) => {
      if (this.input.value !== text) return;
      this.checked = result;
      const adding = this.pendingAdd === text;
      this.pendingAdd = null;
      if (adding && !result.error && !this.values.includes(text)) this.commit(text);
      else if (adding && !result.error) this.refuse(`“${text}” is in this list already.`);
      else this.showCheck(result, adding);
    });
  }

  /** The engine's check of the typed pattern; `refused`: Add was pressed and refused it. */
  showCheck(result, refused) {
    if (result.error) {
      const words = patternWords(result.error.code, result.text) ?? result.error.message;
      const fixes = result.fixes.length
        ? h('span', { class: 'fixes' }, ' Did you mean ',
          ...result.fixes.flatMap((f, i) => [i ? ' or ' : '', h('button', { type: 'button', class: 'fix-btn', onclick: () => this.commitFix(f) }, f)]), '?')
        : null;
      if (refused) this.refuse(words, fixes);
      else {
        this.hint.className = 'chip-hint bad';
        this.hint.replaceChildren(words, fixes);
      }
      return;
    }
    this.hint.className = 'chip-hint good';
    const labels = result.matches.map((url) => STORE_PAGES.find((p) => p.url === url)?.label ?? url);
    this.hint.replaceChildren(labels.length
      ? `Matches ${labels.length} sample page${labels.length === 1 ? '' : 's'}: ${labels.join(', ')}`
      : 'Valid; matches none of the sample pages');
  }

  /** A "did you mean" pattern chosen: added (the engine checked it), the input emptied and focused. */
  commitFix(pattern) {
    this.input.focus();
    if (this.values.includes(pattern)) {
      this.refuse(`“${pattern}” is in this list already.`);
      return;
    }
    this.commit(pattern);
    this.showSummary();
  }
}

/**
 * One rule's card. Built once per slot; `update` puts a new version of the rule into the same
 * elements (never into the control being used), so typing and dragging a slider go on undisturbed
 * while the JSON and the preview follow.
 */
class RuleCard {
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
      type: 'text', class: 'rc-id', 'aria-label': 'Rule name (id)', spellcheck: 'false', maxlength: '64',
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
    this.diags = { rule: diagList(), type: diagList(), cta: diagList(), message: diagList(), intent: diagList(), idle: diagList() };
    this.failing = h('ul', { class: 'rc-failing', hidden: true });
    this.coverage = h('p', { class: 'rc-coverage', hidden: true });
    this.type = h('select', { dataset: { field: 'type' }, onchange: (e) => set(['nudge', 'type'], e.target.value) });
    this.cta = h('input', { type: 'text', maxlength: '80', dataset: { field: 'cta' }, oninput: (e) => type(['nudge', 'cta'], e.target.value) });
    this.message = h('textarea', { rows: '2', maxlength: '500', dataset: { field: 'message' }, oninput: (e) => type(['nudge', 'message'], e.target.value) });
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
      type: 'number', min: '0', max: '86400', step: '0.5', class: 'idle-seconds', 'aria-label': 'Idle time in seconds',
      oninput: (e) => {
        const s = Number(e.target.value);
        if (e.target.value !== '' && Number.isFinite(s)) type(['when', 'min_idle_ms'], Math.round(s * 1000));
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
    );
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
 * The engine's coverage by rule index: each rule's entry with `unmatched`, its `pages` and
 * `exclude_pages` patterns that no scenario's page matches.
 */
function coverageByRule(coverage) {
  const unmatched = new Map();
  for (const p of coverage.patterns) {
    const m = /^rules\[(\d+)\]\.when\./.exec(p.json_path);
    if (!m || p.matched) continue;
    const i = Number(m[1]);
    if (!unmatched.has(i)) unmatched.set(i, []);
    unmatched.get(i).push(p.pattern);
  }
  return new Map(coverage.rules.map((c) => [c.index, { ...c, unmatched: unmatched.get(c.index) ?? [] }]));
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
 * What the scenarios exercise of one rule (the engine's coverage, SPEC 8), for a merchant: how
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
