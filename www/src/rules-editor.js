// The visual rule editor: the same config as the JSON view, as cards a merchant edits without
// writing JSON. Add, duplicate, delete, enable and disable rules; reorder them by dragging the
// handle or with Alt+Arrow keys; thresholds on sliders, idle time in seconds, pages and quiet
// zones as chips that are checked by the engine as they are typed, with the sample pages each
// one matches. Every edit is a small text edit of the JSON (config-edits.js), so both views stay
// one document with one undo history; errors the engine reports show on the card they concern.
// The card is rule-card.js, its pattern lists chips-field.js.

import { showDiags } from './card-diags.js';
import { settingsDiagnostic } from './card-words.js';
import { ChipsField } from './chips-field.js';
import { ruleColors } from './colors.js';
import { ConfigIndex, freshId, insertAt, moveItem, readConfig, setAt } from './config-edits.js';
import { LazyList } from './lazy-list.js';
import { RuleCard, setForceValues } from './rule-card.js';
import { diagnosticsByRule } from './store.js';
import { SPEC15_LIMITS } from './limits.js';
import { h } from './util.js';

export class RulesEditor {
  /**
   * @param {HTMLElement} root
   * @param {{applyEdits: (edits, options?: {typing?: boolean}) => void, checkPattern: (text, cb) => void,
   *          jumpToJson: (line, column) => void, offerUndo: (message: string) => void,
   *          showScenario: (index: number) => void, notify: (text, action?) => void,
   *          notes: import('./notes.js').RuleNotes, pages: {url: string, label: string}[]}} host
   *   `pages`: the sample pages the chips report matches on (the storefront's)
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.pages = host.pages;
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

  /**
   * The config as written in `text` (the cards' parse when it is that text's, else `parse(text)`),
   * or null when the text is not a JSON object.
   */
  configOf(text, parse = (t) => readConfig(t ?? '').value) {
    const value = this.parsedText === text ? this.parsed.value : parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  }

  /** The ids of the rules of `text`, in order, or null when the text is not a JSON object. */
  idsOf(text) {
    const value = this.configOf(text);
    return value ? (Array.isArray(value.rules) ? value.rules : []).map((r) => r?.id) : null;
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
          this.pageHits.get(m.json_path).push(this.pages[i].label);
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
    setForceValues(Boolean(this.forceSync));
    this.forceSync = false;
    try {
      this.cards.setItems(items);
    } finally {
      setForceValues(false);
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
      // docs/contract/caps.md: at most this many nudges in one visit, all rules together (empty: no limit).
      const maxNudges = h('input', {
        type: 'number', min: '1', max: String(SPEC15_LIMITS.nudges_per_session), step: '1', class: 'num-small', id: 'max-nudges',
        placeholder: 'any', 'aria-label': 'At most this many nudges per visit, all rules together (empty: no limit)',
        oninput: (e) => {
          const n = Number(e.target.value);
          if (e.target.value === '') this.setValueAt(['max_nudges_per_session'], undefined, { typing: true });
          else if (Number.isFinite(n)) this.setValueAt(['max_nudges_per_session'], n, { typing: true });
        },
      });
      const maxText = h('b', {});
      const maxErrors = h('ul', { class: 'card-errors', hidden: true });
      this.settings.append(
        h('div', { class: 'settings-head' },
          h('h3', {}, 'Quiet zones'),
          h('label', { class: 'switch-label' }, caseBox, 'Letter case matters')),
        h('p', { class: 'hint' }, 'No nudge ever shows on these pages, whatever the rules say (checkout, cart, account).'),
        zones.el,
        errors,
        h('div', { class: 'settings-row', dataset: { field: 'max_nudges_per_session' } },
          h('h3', {}, 'Per visit'),
          h('span', { class: 'unit', 'aria-hidden': 'true' }, 'at most'), maxNudges,
          h('span', { class: 'unit', 'aria-hidden': 'true' }, 'nudges, all rules together:'), maxText),
        maxErrors,
      );
      this.settingsUi = { caseBox, zones, errors, maxNudges, maxText, maxErrors };
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
    const isMax = (w) => w.d.path === 'max_nudges_per_session';
    showDiags(ui.errors, words.filter((w) => !w.d.path.startsWith('quiet_zones') && !isMax(w)), this);
    showDiags(ui.maxErrors, words.filter(isMax), this);
    const max = v.max_nudges_per_session;
    if (document.activeElement !== ui.maxNudges || this.forceSync) ui.maxNudges.value = max === undefined ? '' : String(max);
    ui.maxText.textContent = max === undefined ? 'no limit' : Number.isInteger(max) ? `At most ${max} ${max === 1 ? 'nudge' : 'nudges'} per visit` : '';
    if (words.some((w) => isMax(w) && w.d.severity === 'error')) ui.maxNudges.setAttribute('aria-invalid', 'true');
    else ui.maxNudges.removeAttribute('aria-invalid');
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
