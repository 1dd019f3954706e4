// Rule descriptions: a line of free text beside each rule's id, saying what the rule is for. The
// site config has no place for them (docs/contract/config.md lists a rule's fields, and any other field is an
// error), so they are the editor's notes, never written into the config: kept in this browser's
// local storage by rule id and carried by a share link (share.js `n`). They follow a rule when it
// is moved and when its id is retyped (docs/DECISIONS.md, docs/contract/config.md).
//
// The notes are keyed by the ids of one version of the text, `ids`, and follow the text forward
// only: `follow` is given the ids of the editor's current text (the rule cards' parse, or an
// engine answer for the text the editor holds now), never of an older text whose answer arrives
// late, and the share link and the page's exit take the ids of the text they write (app.js
// `syncNotes`), so a link or a reload never pairs a text with notes keyed by another's ids.

const KEY = 'nudge-rules:descriptions:v1';
/** The longest description kept, in characters. */
export const MAX_NOTE_CHARS = 300;

export class RuleNotes {
  constructor(storage = globalThis.localStorage) {
    this.storage = storage;
    this.byId = new Map();
    this.ids = [];
    this.listeners = new Set();
    try {
      const saved = JSON.parse(storage?.getItem(KEY) || '{}');
      for (const [id, text] of Object.entries(saved)) if (typeof text === 'string' && text) this.byId.set(id, text);
    } catch {
      // storage disabled or a damaged entry: no notes
    }
  }

  /** Calls `fn()` after every change of a note (the share link is written again). */
  onChange(fn) {
    this.listeners.add(fn);
  }

  get(id) {
    return this.byId.get(id) ?? '';
  }

  set(id, text) {
    const value = String(text).slice(0, MAX_NOTE_CHARS);
    if (value === this.get(id)) return;
    if (value) this.byId.set(id, value);
    else this.byId.delete(id);
    this.changed();
  }

  /**
   * Follows the rules' ids in config order after an edit of the text; `ids` must be those of the
   * editor's current text. One rule renamed (the lists have the same length and one place holds
   * a new id where the last list had an id that is gone now) takes its note along. Anything else
   * that makes ids disappear (a config opened or pasted over, several ids changed at once) moves
   * no note: the notes stay under their ids, and the notes of deleted rules are kept (an undo
   * brings the rule back with its note).
   */
  follow(ids) {
    const last = this.ids;
    if (ids.length === last.length && ids.every((id, i) => id === last[i])) return;
    this.ids = ids.slice();
    if (ids.length !== last.length) return;
    const present = new Set(ids);
    const renamed = [];
    ids.forEach((id, i) => {
      const old = last[i];
      if (id !== old && !present.has(old)) renamed.push(i);
    });
    if (renamed.length !== 1) return;
    const [i] = renamed;
    const id = ids[i];
    const old = last[i];
    if (this.byId.has(id) || !this.byId.has(old)) return;
    this.byId.set(id, this.byId.get(old));
    this.byId.delete(old);
    this.changed();
  }

  /** The notes of the rules `ids` (for a share link): `{ id: text }`, or null when none has one. */
  of(ids) {
    const out = {};
    for (const id of ids) if (this.byId.has(id)) out[id] = this.byId.get(id);
    return Object.keys(out).length ? out : null;
  }

  /** Takes the notes of a share link (they win over this browser's for the same ids). */
  merge(notes) {
    if (!notes || typeof notes !== 'object') return;
    for (const [id, text] of Object.entries(notes)) if (typeof text === 'string') this.byId.set(id, text.slice(0, MAX_NOTE_CHARS));
    this.changed();
  }

  changed() {
    try {
      this.storage?.setItem(KEY, JSON.stringify(Object.fromEntries(this.byId)));
    } catch {
      // storage full or disabled: notes last as long as the page
    }
    for (const fn of this.listeners) fn();
  }
}
