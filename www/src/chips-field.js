// A pattern list of the rule cards and the site settings (pages, excluded pages, quiet zones) as
// chips, with an input that adds one, checked by the engine as it is typed.

import { diagList, showDiags } from './card-diags.js';
import { patternWords } from './card-words.js';
import { insertAt } from './config-edits.js';
import { h } from './util.js';

/**
 * A pattern list as chips: each chip removable, an input that adds one, checked by the engine
 * while typed, with the sample pages it matches. Add refuses a pattern the engine finds invalid
 * and offers its "did you mean" patterns as buttons. The engine's findings about the list show
 * once, under it, in the card's words. Built once; `update` redraws only the chips, so the text
 * being typed survives updates.
 */
export class ChipsField {
  constructor(editor, { what, path, owner = null }) {
    this.editor = editor;
    this.what = what;
    this.owner = owner; // () => whose list it is, in words (a rule), for the Undo toast
    this.path = path; // () => the list's JSON path (a card's index can change)
    this.values = [];
    this.hits = [];
    this.checked = null; // the engine's check of the text in the input (worker.js `checkPattern`)
    this.pendingAdd = null; // text to add once its check arrives
    this.fixes = new Map(); // pattern -> the engine's "did you mean" patterns for it
    this.lastIssues = [];
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
    this.lastIssues = issues;
    this.drawIssues();
    if (!this.input.value) this.showSummary();
  }

  /**
   * The findings about the list, under it. A pattern that is invalid as written gets the engine's
   * "did you mean" patterns (asked once per pattern): one click puts one in its place.
   */
  drawIssues() {
    showDiags(this.issues, this.lastIssues.map((w) => {
      const pattern = w.item === undefined ? null : this.values[w.item];
      if (typeof pattern !== 'string' || w.d.severity !== 'error') return w;
      if (!this.fixes.has(pattern)) {
        this.fixes.set(pattern, []);
        this.editor.host.checkPattern(pattern, (result) => {
          this.fixes.set(pattern, result.fixes);
          if (result.fixes.length) this.drawIssues();
        });
      }
      return { ...w, fixes: this.fixes.get(pattern), onFix: (f) => this.editor.setValueAt([...this.path(), w.item], f) };
    }), this.editor);
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
    const labels = result.matches.map((url) => this.editor.pages.find((p) => p.url === url)?.label ?? url);
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
