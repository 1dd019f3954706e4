// The page's start: its controls wired to the actions (page-actions.js), then what the editor
// opens with: the example config, a share link, this tab's text before a reload, or the draft of
// an earlier visit (drafts.js), saying so when something is set aside or restored.

import { showDiff } from './drafts.js';
import { jsonError, pick } from './page-actions.js';
import { DEFAULT_STATE } from './session.js';
import { parseHash } from './share.js';
import { $, fetchExample, onTextFileChosen } from './util.js';

const DEFAULT_BENCH = [
  '/products/Linen-Shirt;jsessionid=42',
  'https://shop.example/collections/sale/dresses?sort=price',
  '/Checkout//Pay',
  '/a/../cart',
  '/blog/tags/care',
  '//checkout',
  '/x%2F..%2Fcheckout',
].join('\n');
const FALLBACK_CONFIG = '{\n  "version": 1,\n  "rules": []\n}\n';

/**
 * @typedef {object} Page the parts app.js builds
 * @property {ReturnType<import('./elements.js').elements>} els
 * @property {() => import('./store.js').State} getState
 * @property {(action: import('./store.js').Action) => import('./store.js').State} dispatch
 * @property {ReturnType<import('./page-actions.js').pageActions>} actions
 * @property {import('./share-link.js').ShareLink} link
 * @property {() => void} request
 * @property {() => void} redrawWhy
 * @property {any} notes
 * @property {any} session
 * @property {any} editor
 * @property {any} drafts
 * @property {any} scenarios
 * @property {any} notice
 */

/** @param {Page} p */
function wire(p) {
  const { els, actions: a, link, notes, session, editor, drafts, scenarios, notice } = p;
  // A description typed: into the share link, and beside the rule in the Why panel.
  notes.onChange(() => {
    link.schedule();
    if (p.getState().evaluation?.explanation) p.redrawWhy();
  });
  els.benchInput.value = DEFAULT_BENCH;
  els.benchInput.addEventListener('input', () => p.request());

  els.tabRules.addEventListener('click', () => a.setView('rules'));
  els.tabJson.addEventListener('click', () => a.setView('json'));
  for (const tab of [els.tabRules, els.tabJson]) {
    tab.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
        e.preventDefault();
        const next = tab === els.tabRules ? els.tabJson : els.tabRules;
        next.click();
        next.focus();
      }
    });
  }
  $('#vb-show').addEventListener('click', () => {
    document.querySelector('.preview-panel').scrollIntoView({ block: 'start', behavior: 'smooth' });
  });
  els.engBtn.addEventListener('click', () => a.setEngineer(!document.body.classList.contains('engineer')));

  // Config as code loads its WASM module when one of its panels is first opened.
  $('#scenarios-panel').addEventListener('toggle', (e) => /** @type {any} */ (e.target).open && scenarios.activate());

  onTextFileChosen($('#open-btn'), els.fileInput, async (text, name) => {
    const notJson = jsonError(text);
    if (notJson) {
      a.refuseFile(`“${name}” is not JSON (${notJson})`);
      return;
    }
    notice.hide();
    if (await a.mayDiscard(name)) a.replaceText(text, name, `Loaded ${name}.`);
  }, (why) => a.refuseFile(why));
  $('#save-btn').addEventListener('click', () => a.saveConfig());
  window.addEventListener('keydown', (e) => a.onUndoKey(e));
  window.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's' && !e.defaultPrevented) {
      e.preventDefault();
      a.saveConfig();
    }
  });
  $('#share-btn').addEventListener('click', async () => {
    await link.write();
    try {
      await navigator.clipboard.writeText(location.href);
      a.notify('Link copied: it holds the config and the visitor state.');
    } catch {
      a.notify('The address bar now holds the share link; copy it from there.');
    }
  });
  $('#changes-btn').addEventListener('click', () => {
    showDiff(els.dialog, { base: drafts.base, text: editor.value, baseLabel: drafts.baseLabel });
  });
  $('#reset-btn').addEventListener('click', async () => {
    if (!(await a.mayDiscard('the example storefront config'))) return;
    session.setPlaying(false);
    session.set({ ...DEFAULT_STATE });
    a.replaceText(p.getState().exampleText, 'the example config', 'Back to the example storefront config.');
  });
  window.addEventListener('hashchange', async () => {
    if (location.hash === p.getState().hash) return;
    if (drafts.ownAddress(location.hash)) {
      // An older address of this tab (the one the address bar showed while the reload loaded):
      // not a new link; the address is put back to what is on screen.
      link.setNow();
      return;
    }
    const parsed = await parseHash(location.hash);
    p.dispatch({ type: 'hash', hash: location.hash });
    session.set(pick(parsed));
    notes.merge(parsed.notes);
    if (parsed.configError) a.damagedLink(parsed, 'the config you had');
    else if (parsed.configText !== undefined && parsed.configText !== editor.value && (await a.mayDiscard('the link\'s config'))) {
      a.replaceText(parsed.configText, 'the shared link', 'Loaded the config from the link.');
    }
  });
  // Leaving (a reload, a closed tab): the draft, its notes and the link as they are on screen.
  window.addEventListener('pagehide', () => {
    const { text } = p.getState();
    if (text === null) return; // left before the text was loaded: nothing to keep
    const address = location.hash; // what a reload opens: the address before the write below
    link.syncNotes(text);
    drafts.saveNow(text);
    link.flush();
    drafts.leave(text, [address, location.hash]);
  });
}

/**
 * Wires the page, then opens what it should show.
 * @param {Page} p
 */
export async function boot(p) {
  const { els, actions: a, link, notes, session, editor, drafts } = p;
  wire(p);
  let engineer = false;
  let view = 'rules';
  try {
    engineer = localStorage.getItem('nudge-rules:engineer') === '1';
    view = localStorage.getItem('nudge-rules:view') || 'rules';
  } catch {
    // storage disabled
  }
  a.setEngineer(engineer);
  a.setView(view === 'json' ? 'json' : 'rules');
  let example = FALLBACK_CONFIG;
  try {
    example = await fetchExample('storefront.json');
  } catch (err) {
    console.warn('nudge-rules: could not fetch the example config:', err);
  }
  const { exampleText } = p.dispatch({ type: 'example', text: example });
  const parsed = await parseHash(location.hash);
  p.dispatch({ type: 'hash', hash: location.hash });
  Object.assign(session.state, pick(parsed));
  if (parsed.notes) notes.merge(parsed.notes);
  session.render();

  let text = exampleText;
  let base = { text: exampleText, label: 'the example config' };
  const draft = drafts.load();
  // This tab reloaded (its own address, maybe older than its text): what was on screen.
  const returning = parsed.configError ? null : drafts.returning(location.hash);
  if (returning) {
    text = returning.text;
    base = { text: returning.base ?? exampleText, label: returning.baseLabel ?? 'the example config' };
  } else if (parsed.configText !== undefined) {
    text = parsed.configText;
    base = { text, label: 'the shared link' };
  } else if (draft && draft.text !== exampleText) {
    text = draft.text;
    base = { text: draft.base ?? exampleText, label: draft.baseLabel ?? 'the example config' };
  }
  drafts.setBase(base.text, base.label);
  editor.setValue(text, { undoable: false });
  els.dirtyDot.hidden = !drafts.isDirty(text);
  // The address of a reloaded tab holds the text it had now (an older one, for a link written
  // before the last edits): at once, so that the link copied from the address is what is shown.
  if (returning) link.setNow();
  const draftSetAside = !returning && parsed.configText !== undefined && draft && draft.text !== text && draft.text !== exampleText;
  if (draftSetAside) drafts.stash(draft);
  if (parsed.configError) {
    a.damagedLink(parsed, draft ? 'your draft' : 'the example config');
  } else if (draftSetAside) {
    a.notify('Opened the config of the link. Your unsaved edits from before are kept aside.', {
      label: 'Open my edits',
      run: async () => {
        const earlier = drafts.takeEarlier();
        if (earlier && (await a.mayDiscard('your earlier edits'))) {
          a.replaceText(earlier.text, earlier.baseLabel ?? 'the example config', 'Back to your earlier edits.');
          a.setBase(earlier.base ?? exampleText, earlier.baseLabel ?? 'the example config');
        }
      },
    });
  } else if (!returning && parsed.configText === undefined && draft && draft.text === text && drafts.isDirty(text)) {
    const when = new Date(draft.savedAt).toLocaleString();
    a.notify(`Restored your unsaved edits (draft of ${when}).`, {
      label: 'Show changes',
      run: () => showDiff(els.dialog, { base: drafts.base, text: editor.value, baseLabel: drafts.baseLabel }),
    });
  }
}
