// Drafts: the config being edited is saved to this browser's local storage as it changes, so a
// closed tab, a Reset or an Open loses nothing; discarding edits asks first; and "Changes" shows
// a line diff against the last saved or loaded version (the base).

import { diffLines } from 'diff';

import { h } from './util.js';

const KEY = 'nudge-rules:draft:v1';
const EARLIER = 'nudge-rules:draft:earlier:v1';
// In this tab's session storage (it survives a reload of the tab, no other tab sees it): the text
// the tab left with, and the addresses a reload of it opens.
const LEFT = 'nudge-rules:left:v1';

export class Drafts {
  constructor(storage = globalThis.localStorage, session = globalThis.sessionStorage) {
    this.storage = storage;
    this.session = session;
    this.base = '';
    this.baseLabel = 'the example config';
    this.timer = null;
    // Nothing is written before the saved draft was read: a page left while it loads (a second
    // reload) has an empty editor, and writing it would erase the draft it was about to restore.
    this.loaded = false;
    this.returned = null; // the left tab state this page came back with (`returning`)
  }

  /** The saved draft `{ text, base, baseLabel, savedAt }`, or null. */
  load() {
    this.loaded = true;
    try {
      const d = JSON.parse(this.storage.getItem(KEY) || 'null');
      return d && typeof d.text === 'string' ? d : null;
    } catch {
      return null;
    }
  }

  /**
   * Keeps a draft aside (a share link opened over unsaved edits must not erase them): one earlier
   * draft is kept, and `takeEarlier` gives it back.
   */
  stash(draft) {
    try {
      this.storage.setItem(EARLIER, JSON.stringify(draft));
    } catch {
      // storage full or disabled
    }
  }

  takeEarlier() {
    try {
      const d = JSON.parse(this.storage.getItem(EARLIER) || 'null');
      this.storage.removeItem(EARLIER);
      return d && typeof d.text === 'string' ? d : null;
    } catch {
      return null;
    }
  }

  /**
   * This tab goes away (pagehide) with `text` on screen; `hashes`: the addresses a reload of it
   * may open (a reload takes the address it had when it began, before the page wrote its last
   * link as it left).
   */
  leave(text, hashes) {
    try {
      // A tab that came back with its text (`returning`) keeps the addresses it came back from:
      // reloaded twice in a row, the second load may open the first one's address again.
      const before = this.returned?.hashes ?? [];
      const all = [...new Set([...before, ...hashes])].slice(-8);
      this.session?.setItem(LEFT, JSON.stringify({ text, hashes: all, base: this.base, baseLabel: this.baseLabel }));
    } catch {
      // storage full or disabled: a reload opens the link's config and keeps the draft aside
    }
  }

  /**
   * `{ text, base, baseLabel }` the tab left with when `hash` is one of its own addresses (the tab
   * reloaded: what was on screen, not the older config of its link), else null.
   */
  returning(hash) {
    try {
      const left = JSON.parse(this.session?.getItem(LEFT) || 'null');
      this.returned = left && typeof left.text === 'string' && Array.isArray(left.hashes) && left.hashes.includes(hash) ? left : null;
      return this.returned;
    } catch {
      return null;
    }
  }

  /** True when `hash` is an address this tab came back from (`returning`): an older link of its own. */
  ownAddress(hash) {
    return Boolean(this.returned?.hashes.includes(hash));
  }

  /** The version the edits are measured against: a file opened or saved, a link, the example. */
  setBase(text, label) {
    this.base = text;
    this.baseLabel = label;
  }

  isDirty(text) {
    return text !== this.base;
  }

  /** Saves the text soon (a burst of keystrokes is one write). */
  save(text) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.saveNow(text), 300);
  }

  saveNow(text) {
    clearTimeout(this.timer);
    if (!this.loaded) return;
    try {
      if (text === this.base) this.storage.removeItem(KEY);
      else this.storage.setItem(KEY, JSON.stringify({ text, base: this.base, baseLabel: this.baseLabel, savedAt: Date.now() }));
    } catch {
      // storage full or disabled: drafts are a convenience
    }
  }
}

/** Asks in a modal dialog; resolves to true for the confirming button. */
export function confirmDialog(dialog, { title, body, confirm, cancel = 'Keep editing' }) {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'button', class: 'btn btn-danger', value: 'yes' }, confirm);
    const no = h('button', { type: 'button', class: 'btn', value: 'no' }, cancel);
    dialog.replaceChildren(
      h('h2', { id: 'dialog-title' }, title),
      h('p', {}, body),
      h('div', { class: 'dialog-actions' }, no, yes),
    );
    dialog.setAttribute('aria-labelledby', 'dialog-title');
    const done = (answer) => {
      dialog.close();
      resolve(answer);
    };
    yes.addEventListener('click', () => done(true));
    no.addEventListener('click', () => done(false));
    dialog.addEventListener('cancel', () => resolve(false), { once: true });
    dialog.showModal();
    no.focus();
  });
}

/**
 * The line diff from `base` to `text` as rows for a `pre.diff` (long unchanged runs cut to their
 * first and last two lines), with the counts of lines added and removed.
 */
export function lineDiff(base, text) {
  const parts = diffLines(base, text);
  let added = 0;
  let removed = 0;
  const rows = [];
  for (const part of parts) {
    const lines = part.value.replace(/\n$/, '').split('\n');
    if (part.added) added += lines.length;
    if (part.removed) removed += lines.length;
    if (!part.added && !part.removed && lines.length > 6) {
      rows.push(...lines.slice(0, 2).map((l) => h('div', { class: 'd-line' }, `  ${l}`)));
      rows.push(h('div', { class: 'd-skip' }, `… ${lines.length - 4} unchanged lines …`));
      rows.push(...lines.slice(-2).map((l) => h('div', { class: 'd-line' }, `  ${l}`)));
      continue;
    }
    const cls = part.added ? 'd-add' : part.removed ? 'd-del' : 'd-line';
    const mark = part.added ? '+ ' : part.removed ? '- ' : '  ';
    rows.push(...lines.map((l) => h('div', { class: cls }, mark + l)));
  }
  return { rows, added, removed };
}

/** Shows the line diff from `base` to `text` in a modal dialog. */
export function showDiff(dialog, { base, text, baseLabel }) {
  const { rows, added, removed } = lineDiff(base, text);
  const close = h('button', { type: 'button', class: 'btn', onclick: () => dialog.close() }, 'Close');
  dialog.replaceChildren(
    h('h2', { id: 'dialog-title' }, 'Changes'),
    h('p', { class: 'hint' }, added || removed
      ? `${added} line${added === 1 ? '' : 's'} added, ${removed} removed, since ${baseLabel}.`
      : `No changes since ${baseLabel}.`),
    h('pre', { class: 'diff', tabindex: '0', 'aria-label': 'Line differences' }, ...rows),
    h('div', { class: 'dialog-actions' }, close),
  );
  dialog.setAttribute('aria-labelledby', 'dialog-title');
  dialog.showModal();
  close.focus();
  return { added, removed };
}
