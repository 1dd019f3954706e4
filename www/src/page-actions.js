// What the merchant does to the page as a whole, outside any one panel: the toast and its Undo,
// one step of the config's history back or forward, Save, replacing the text (asking first when
// there are edits), the Rules and JSON views and jumps into them, the engineer details, and the
// notices of a damaged share link or a file Open refused. app.js builds them with the page's
// parts; the state they change goes through the store (store.js).

import { ruleIndexOf } from './connect.js';
import { confirmDialog } from './drafts.js';
import { LIMITS } from './limits.js';
import { clamp, downloadText } from './util.js';

/** The fields of a parsed share link (or a scenario's visitor) the session controls take. */
export function pick(parsed) {
  const out = {};
  if (parsed.intent !== undefined) out.intent = clamp(parsed.intent, 0, LIMITS.intent_score);
  if (parsed.idle !== undefined) out.idle = clamp(parsed.idle, 0, LIMITS.idle_ms);
  if (parsed.url !== undefined) out.url = parsed.url;
  if (parsed.exitIntent !== undefined) out.exitIntent = parsed.exitIntent;
  if (parsed.visitorId !== undefined) out.visitorId = parsed.visitorId;
  if (parsed.history !== undefined) out.history = parsed.history;
  return out;
}

/** Why `text` is not JSON (the parser's words), or null when it is. */
export function jsonError(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return err.message;
  }
}

/** Writes `value` under `key` in local storage, when the browser lets the page. */
function remember(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // storage disabled
  }
}

/**
 * @param {{ els, dispatch: (action: import('./store.js').Action) => import('./store.js').State,
 *   editor, rulesEditor, drafts, notice }} p
 */
export function pageActions({ els, dispatch, editor, rulesEditor, drafts, notice }) {
  let toastTimer = null;

  const a = {
    notify(text, action = null) {
      dispatch({ type: 'toast' });
      els.toastText.textContent = text;
      els.toastAction.hidden = !action;
      if (action) {
        els.toastAction.textContent = action.label;
        els.toastAction.onclick = () => {
          els.toast.hidden = true;
          action.run();
        };
      }
      els.toast.hidden = false;
      clearTimeout(toastTimer);
      toastTimer = setTimeout(() => {
        els.toast.hidden = true;
      }, action ? 8000 : 3200);
    },

    /**
     * Says what a destructive edit of the config did (a rule deleted, a chip removed), with an
     * Undo that takes that step back: the history's last step, as long as the text is what it left.
     */
    offerUndo(message) {
      const after = editor.value;
      a.notify(message, { label: 'Undo', run: () => editor.value === after && a.undoStep('undo') });
      dispatch({ type: 'undoOffered', text: after });
    },

    /** One step of the config's history back or forward (the Rules and JSON views share it). */
    undoStep(which) {
      const done = which === 'undo' ? editor.undo() : editor.redo();
      if (done) rulesEditor.syncFocused();
      return done;
    },

    /**
     * Ctrl+Z / Ctrl+Shift+Z (and Ctrl+Y) outside the JSON text, which handles its own: in the rule
     * cards and anywhere that is not a field of its own (the URL, the bench, a scenario's name).
     */
    onUndoKey(e) {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.defaultPrevented) return;
      const key = e.key.toLowerCase();
      const redo = key === 'y' || (key === 'z' && e.shiftKey);
      if (key !== 'z' && !redo) return;
      const t = e.target;
      const ownField = t instanceof HTMLElement && t.matches('input, textarea, select, [contenteditable]') && !els.rulesView.contains(t);
      if (ownField || els.jsonView.contains(t)) return;
      e.preventDefault();
      a.undoStep(redo ? 'redo' : 'undo');
    },

    /** Downloads the config (the Save button, Ctrl+S anywhere on the page). */
    saveConfig() {
      const text = editor.value;
      downloadText(text, 'nudge-config.json');
      drafts.setBase(text, 'your last save');
      drafts.saveNow(text);
      els.dirtyDot.hidden = true;
      a.notify('Saved as nudge-config.json (in your downloads).');
    },

    /** Asks before replacing edited text; resolves to true when it may be replaced. */
    async mayDiscard(what) {
      if (!drafts.isDirty(editor.value)) return true;
      return confirmDialog(els.dialog, {
        title: 'Discard your edits?',
        body: `Your changes since ${drafts.baseLabel} are replaced by ${what}. Undo (or Ctrl+Z) brings them back.`,
        confirm: 'Discard my edits',
      });
    },

    /** Replaces the text as one undoable step, and says so with an Undo button. */
    replaceText(text, baseLabel, message) {
      const before = editor.value;
      editor.setValue(text);
      drafts.setBase(text, baseLabel);
      drafts.saveNow(text);
      els.dirtyDot.hidden = true;
      if (message) {
        a.notify(message, before !== text ? { label: 'Undo', run: () => editor.setValue(before) } : null);
      }
    },

    /** The draft's base moved (a publish): the dirty dot follows. */
    setBase(text, label) {
      drafts.setBase(text, label);
      drafts.saveNow(editor.value);
      els.dirtyDot.hidden = !drafts.isDirty(editor.value);
    },

    setView(view) {
      const rules = view === 'rules';
      els.tabRules.setAttribute('aria-selected', String(rules));
      els.tabJson.setAttribute('aria-selected', String(!rules));
      els.tabRules.tabIndex = rules ? 0 : -1;
      els.tabJson.tabIndex = rules ? -1 : 0;
      els.rulesView.hidden = !rules;
      els.jsonView.hidden = rules;
      editor.attach(!rules);
      document.body.dataset.view = view;
      rulesEditor.show(rules);
      remember('nudge-rules:view', view);
    },

    jumpTo(line, column) {
      a.setView('json');
      editor.jumpTo(line, column);
    },

    /** A rule's card in the Rules view, its id field focused. */
    editRule(index) {
      a.setView('rules');
      rulesEditor.cards.element(index)?.scrollIntoView({ block: 'nearest' });
      rulesEditor.cards.element(index)?.querySelector('.rc-id')?.focus();
    },

    /** A problem the server found (a publish or backtest refused): its rule's card, or its line. */
    showProblem(d) {
      const index = ruleIndexOf(d.path);
      const card = index !== null && els.jsonView.hidden ? rulesEditor.cards.element(index) : null;
      if (card) {
        card.scrollIntoView({ block: 'center' });
        card.querySelector('.rc-id')?.focus();
      } else if (d.line) {
        a.jumpTo(d.line, d.column);
      }
    },

    setEngineer(on) {
      document.body.classList.toggle('engineer', on);
      els.engBtn.setAttribute('aria-pressed', String(on));
      remember('nudge-rules:engineer', on ? '1' : '0');
    },

    /** A share link whose config could not be read: said until dismissed (the page looks fine). */
    damagedLink(parsed, fallbackLabel) {
      notice.show(`This link's config could not be read (${parsed.configError}); it may have been cut short when copied. The editor shows ${fallbackLabel}, not the shared config; the page, intent and idle time from the link are kept. Ask whoever sent it for the link again.`);
    },

    /** A file Open refuses: said until dismissed; nothing is replaced. */
    refuseFile(why) {
      notice.show(`${why}. It was not opened: your config is unchanged. Open takes a site config saved as JSON, such as nudge-config.json.`);
    },
  };
  return a;
}
