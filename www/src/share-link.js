// The share link in the address bar (share.js encodes it): the visitor, the config text (left out
// for the example config) and the rules' descriptions keyed by that text's rule ids. Written once
// changes pause, at once when the page goes away; the link last written or read is the store's.

import { DEFAULT_VISITOR_ID } from './session.js';
import { buildHash, buildHashNow } from './share.js';
import { sharedText } from './store.js';

/** The pause after which a change is written to the link. */
const PAUSE_MS = 500;

export class ShareLink {
  /**
   * @param {{ getState: () => import('./store.js').State, dispatch: (action: import('./store.js').Action) => unknown,
   *   session, notes, rulesEditor }} p
   */
  constructor(p) {
    this.p = p;
    this.timer = null;
  }

  /**
   * Writes the link once changes pause for 500 ms: compressing a 1,000-rule config takes about
   * 25 ms, which would otherwise land between keystrokes while someone types.
   */
  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.write();
    }, PAUSE_MS);
  }

  /** The notes keyed by the ids of `text` (the editor's current text), when it parses. */
  syncNotes(text) {
    const ids = this.p.rulesEditor.idsOf(text);
    if (ids) this.p.notes.follow(ids);
  }

  /** What the link holds: the visitor, the text, and the notes keyed by that text's ids. */
  fields() {
    const { session, notes, getState } = this.p;
    const s = session.state;
    const state = getState();
    this.syncNotes(state.text);
    return {
      intent: s.intent, idle: s.idle, url: s.url, configText: sharedText(state), notes: notes.of(notes.ids),
      exitIntent: s.exitIntent, visitorId: s.visitorId === DEFAULT_VISITOR_ID ? undefined : s.visitorId, history: s.history,
    };
  }

  /** Puts `hash` in the address bar (one history entry, replaced) and in the store. */
  set(hash) {
    if (hash !== location.hash) {
      this.p.dispatch({ type: 'hash', hash });
      history.replaceState(null, '', hash);
    }
    return hash;
  }

  async write() {
    return this.set(await buildHash(this.fields()));
  }

  /** The link of what is on screen now, uncompressed (a reloaded tab's address). */
  setNow() {
    return this.set(buildHashNow(this.fields()));
  }

  /** The page goes away: a change still waiting for its link is written now (uncompressed). */
  flush() {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.setNow();
  }
}
