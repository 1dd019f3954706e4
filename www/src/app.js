// The nudge-rules playground: edit a site config (as rule cards or as JSON), move a visitor
// around, and see which nudge fires and why. Every answer comes from the WASM engine, which runs
// in a Web Worker (worker.js); this file wires the engine's answers to the page's parts:
//
//   code-editor.js   the JSON view (CodeMirror 6)      rules-editor.js  the visual rule editor
//   session.js       the visitor-session controls      why.js           rule verdicts, lazily built
//   storefront.js    the mock storefront and nudge     map-panel.js     the decision map + legend
//   problems.js      errors and lint warnings          api-panel.js     request and response
//   bench.js         the URL test bench                drafts.js        autosave, confirm, diff
//   share.js         the share link (URL hash)         json-messages.js JSON syntax in plain words
//   store.js         the page's state (a reducer)      protocol.js      the worker's jobs and answers
//   rule-card.js     one rule's card                   chips-field.js   a pattern list as chips
//   card-words.js    findings in the card's words      notes.js         rule descriptions
//   colors.js        each rule's colour, by id         limits.js        the engine's limits
//   connect.js       a server: backtest (real-sessions.js), publish (publish-panel.js), history
//   storefront-relay.js  the storefront's visitor sent to a server's relay (POST /v1/events)

import { renderApi } from './api-panel.js';
import { benchUrls, renderBench } from './bench.js';
import { CodeEditor } from './code-editor.js';
import { ruleColors } from './colors.js';
import { Connection, ruleIndexOf } from './connect.js';
import { Drafts, confirmDialog, showDiff } from './drafts.js';
import { elements } from './elements.js';
import { EngineClient } from './engine-client.js';
import { HistoryDialog } from './history-panel.js';
import { DecisionMapView } from './map.js';
import { LIMITS, setLimits } from './limits.js';
import { Notice } from './notice.js';
import { RuleNotes } from './notes.js';
import { describeRegion, markLegend, renderMap } from './map-panel.js';
import { SHOWN, renderProblems } from './problems.js';
import { PublishDialog } from './publish-panel.js';
import { RealSessions } from './real-sessions.js';
import { ReplayPanel } from './replay-panel.js';
import { RulesEditor } from './rules-editor.js';
import { ScenariosPanel } from './scenarios-panel.js';
import { initialState, isCurrent, isReady, isStale, needsMarks, reduce, ruleCount, sharedText, summaryById, warningsByRule, writtenConfig } from './store.js';
import { DEFAULT_STATE, DEFAULT_VISITOR_ID, SessionControls } from './session.js';
import { buildHash, buildHashNow, parseHash } from './share.js';
import { STORE_PAGES, StorefrontView } from './storefront.js';
import { StorefrontRelay } from './storefront-relay.js';
import { NUDGE_LABELS, $, clamp, downloadText, esc, fetchExample, formatMs, nudgeIcon, onTextFileChosen } from './util.js';
import { WhyPanel, waitingFor } from './why.js';

const DEFAULT_BENCH = [
  '/products/Linen-Shirt;jsessionid=42',
  'https://shop.example/collections/sale/dresses?sort=price',
  '/Checkout//Pay',
  '/a/../cart',
  '/blog/tags/care',
  '//checkout',
  '/x%2F..%2Fcheckout',
].join('\n');
const STORE_URLS = STORE_PAGES.map((p) => p.url);
const FALLBACK_CONFIG = '{\n  "version": 1,\n  "rules": []\n}\n';

const els = elements();

/**
 * The page's one state, in one store (store.js): what the engine said and the page's own state
 * (the text on screen, the example config, the share link, the Undo on offer, the marks), each
 * change an action applied by `reduce`; what is derived is computed by the store's selectors.
 * @type {import('./store.js').State}
 */
let store = initialState;

/** @param {import('./store.js').Action} action */
function dispatch(action) {
  store = reduce(store, action);
  return store;
}

/** Measurements for the tests and the status bar, not state: boot to ready, keystroke to preview. */
const metrics = {
  bootStart: performance.now(),
  readyMs: null,
  timings: [], // { kind, ms, workerMs, compileMs } of each rendered answer: keystroke (or control) to preview
};
/** The callers waiting for the engine's check of a pattern, by pattern. */
const patternWaiters = new Map();

const client = new EngineClient(onAnswer);
const notice = new Notice($('#notice'));
const notes = new RuleNotes();
const drafts = new Drafts();
const storefront = new StorefrontView($('#storefront'));
const map = new DecisionMapView(els.map, {
  tooltip: $('#map-tooltip'),
  onPick: (intent, idle) => session.set({ intent, idle }),
  describe: describeRegion,
});
const session = new SessionControls(els, () => {
  request();
  scheduleHash();
});
const editor = new CodeEditor($('#editor'), {
  label: 'Site config (JSON)',
  onChange: (text) => onTextChange(text),
  onSave: () => saveConfig(),
});
const rulesEditor = new RulesEditor($('#rules-view'), {
  applyEdits: (edits, options) => editor.applyEdits(edits, options),
  offerUndo: (message) => offerUndo(message),
  showScenario: (index) => scenarios.reveal(index),
  notify: (text, action) => notify(text, action),
  checkPattern,
  jumpToJson: (line, column) => jumpTo(line, column),
  notes,
  pages: STORE_PAGES,
});
const why = new WhyPanel({
  facts: els.facts,
  rules: els.rules,
  countdown: els.countdown,
  onSkip: (idle) => {
    session.set({ idle });
    session.rebase();
  },
  onEdit: (index) => {
    setView('rules');
    rulesEditor.cards.element(index)?.scrollIntoView({ block: 'nearest' });
    rulesEditor.cards.element(index)?.querySelector('.rc-id')?.focus();
  },
});

const scenarios = new ScenariosPanel($('#scenarios-body'), {
  send: (job) => request(job),
  currentState: () => session.sessionState(),
  setState: (st) => session.set(pick({
    intent: st.intent_score, idle: st.idle_ms, url: st.page_url,
    exitIntent: st.exit_intent === true, visitorId: st.visitor_id ?? '', history: st.history ?? [],
  })),
  notify: (text, action) => notify(text, action),
  onCoverage: (coverage) => rulesEditor.update({ coverage }),
  onFailures: (failures) => setScenarioFailures(failures),
  badge: $('#scenarios-badge'),
});
const replay = new ReplayPanel($('#replay-body'), {
  send: (job) => request(job),
  baseline: () => ({ text: drafts.base, label: drafts.baseLabel }),
  currentText: () => editor.value,
  notify: (text) => notify(text),
});

// A connected server (issue 22): the key stays in connect.js's client, in memory only.
const connection = new Connection($('#server-bar'), {
  text: () => editor.value,
  notify: (text, action) => notify(text, action),
  load: async (text, label) => {
    if (!(await mayDiscard(label))) return false;
    replaceText(text, label, `Opened ${label}.`);
    return true;
  },
});
const realSessions = new RealSessions(connection, replay, {
  text: () => editor.value,
  send: (job) => request(job),
  showProblem: (d) => showProblem(d),
});
new PublishDialog(connection, realSessions, {
  text: () => editor.value,
  scenarios: () => ({ text: scenarios.text(), count: scenarios.file.scenarios.length, failures: store.failures }),
  notify: (text, action) => notify(text, action),
  setBase: (text, label) => {
    drafts.setBase(text, label);
    drafts.saveNow(editor.value);
    els.dirtyDot.hidden = !drafts.isDirty(editor.value);
  },
  showProblem: (d) => showProblem(d),
});
new HistoryDialog(connection, { notify: (text, action) => notify(text, action) });
// The storefront's visitor sent to a server's relay (issue 21): the pk_ key in memory only.
const visitorRelay = new StorefrontRelay($('#visitor-relay'), { intent: () => session.state.intent, connection });

// ---------------------------------------------------------------- talking to the engine

function request(extra = {}) {
  client.send({ state: session.sessionState(), bench: benchUrls(els.benchInput.value), pages: STORE_URLS, ...extra });
}

function onTextChange(text) {
  const undoOffered = store.undoAfter !== null;
  dispatch({ type: 'text', text });
  // To the worker first: it compiles while the page does the rest and draws the keystroke.
  request({ text, sentAt: performance.now() });
  drafts.save(text);
  els.dirtyDot.hidden = !drafts.isDirty(text);
  // The Undo offered for an edit went with this change (store.js): so does its toast.
  if (undoOffered && store.undoAfter === null) els.toast.hidden = true;
  rulesEditor.update({ text });
  scheduleHash();
  connection.textChanged();
}

/** The engine's check of a pattern (worker.js `checkPattern`); every caller waiting gets it. */
function checkPattern(text, callback) {
  patternWaiters.set(text, [...(patternWaiters.get(text) ?? []), callback]);
  const caseSensitive = store.config?.case_sensitive === true;
  client.send({ patterns: [{ text, caseSensitive }], pages: STORE_URLS });
}

function onAnswer(answer, job) {
  if (answer.fatal || answer.error) {
    els.status.className = 'engine-status bad';
    els.status.textContent = answer.fatal
      ? 'The engine did not load. Build it with make wasm (or run make demo), then reload.'
      : 'The engine failed; see the console.';
    console.warn('nudge-rules:', answer.fatal || answer.error);
    if (answer.fatal) document.body.dataset.ready = 'error';
    return;
  }
  const wasReady = isReady(store);
  dispatch({ type: 'answer', answer, text: job.text });
  if (answer.wasm && !answer.seq && !answer.compile && !answer.eval) return;
  if (answer.limits) setLimits(answer.limits);
  if (answer.compile) renderCompile();
  if (answer.analysis) renderAnalysis();
  for (const checked of answer.patterns ?? []) {
    const waiting = patternWaiters.get(checked.text) ?? [];
    patternWaiters.delete(checked.text);
    for (const callback of waiting) callback(checked);
  }
  if (!store.hasEngine) {
    renderNoEngine();
  } else {
    if (answer.map) {
      renderMap({ map, legend: els.legend, path: els.mapPath, canvas: els.map }, answer.map, answer.map.url);
    }
    if (answer.preview) renderPreview(answer.preview);
    if (answer.eval) renderEval(store.evaluation);
    if (answer.bench) {
      renderBench(els.benchRows, answer.bench, { rules: store.config?.rules ?? [], onPick: (url) => session.set({ url }) });
    }
    if (answer.pages) rulesEditor.update({ pageReports: answer.pages });
    if (answer.savedScenario) scenarios.saved(answer.savedScenario);
    if (answer.scenarios) scenarios.render(answer.scenarios);
    if (answer.replay) replay.render(answer.replay);
    if (answer.diff) replay.renderDiff(answer.diff);
  }
  if (!wasReady && isReady(store)) {
    // Scenarios saved in an earlier visit are checked from the start (their module loads now).
    if (scenarios.file.scenarios.length) setTimeout(() => scenarios.activate(), 0);
    const ms = Math.round(performance.now() - metrics.bootStart);
    els.status.className = 'engine-status ok';
    els.status.textContent = 'Engine ready';
    els.status.title = `Loaded and compiled in ${ms} ms`;
    metrics.readyMs = ms;
    document.body.dataset.ready = '1';
  }
  if (job.sentAt && !job.shown && (answer.eval || answer.preview)) {
    job.shown = true; // the first answer that shows the preview (a partial one after a compile)
    const sentAt = job.sentAt;
    const kind = job.text !== undefined ? 'text' : 'state';
    requestAnimationFrame(() => {
      const ms = performance.now() - sentAt;
      metrics.timings.push({ kind, ms, workerMs: answer.workerMs, compileMs: answer.compile?.compileMs ?? null });
      document.dispatchEvent(new CustomEvent('nudge:rendered', { detail: { kind, ms } }));
    });
  }
}

/** A compile: its errors, and whether the preview shows the last valid config. */
function renderCompile() {
  renderDiagnostics();
  els.staleBanner.hidden = !isStale(store);
  document.body.classList.toggle('config-invalid', !store.valid);
  document.body.classList.toggle('config-stale', isStale(store));
}

/** Lint warnings, rule sentences and the config of a new engine (after its preview). */
function renderAnalysis() {
  const ids = store.config.rules.map((r) => r.id);
  ruleColors.follow(ids);
  session.setRuleIds(ids);
  // Notes follow the text forward only (notes.js): an answer for an older text is left out.
  if (isCurrent(store)) notes.follow(ids);
  renderDiagnostics();
  if (store.evaluation?.explanation) renderWhy();
}

function renderDiagnostics() {
  const all = [...store.errors, ...store.warnings];
  renderProblems({ list: els.diagnostics, count: els.problemCount, pill: els.configStatus }, {
    errors: store.errors,
    warnings: store.warnings,
    failures: store.failures,
    valid: store.valid,
    ruleCount: ruleCount(store),
    // The values the words quote: the cards' parse of that text when they have it (no second
    // parse of a 1,000-rule config per keystroke), else the store's.
    config: all.length ? rulesEditor.configOf(store.compiledText, () => writtenConfig(store)) : null,
    onJump: (line, column) => jumpTo(line, column),
    onShowScenario: (index) => scenarios.reveal(index),
  });
  // Positions belong to the compiled text: marked only if no keystroke came since, and only when
  // they changed (store.js `needsMarks`).
  const key = JSON.stringify(all);
  if (needsMarks(store, key)) {
    dispatch({ type: 'marked', key, text: store.text });
    editor.setDiagnostics(all.slice(0, SHOWN)); // the ones the Problems list shows
  }
  rulesEditor.update({ diagnostics: all });
}

/**
 * The scenarios that fail now (scenarios-panel.js): in the status pill and the Problems list where
 * the merchant edits, and on the card of each rule a failing scenario expects to fire. Redrawn
 * only when they change (most keystrokes change no scenario's result).
 */
function setScenarioFailures(failures) {
  const before = store;
  if (dispatch({ type: 'failures', failures }) === before) return;
  renderDiagnostics();
  rulesEditor.update({ failures });
}

let whyFrame = null; // the frame of the Why panel's next redraw
/**
 * Redraws the Why panel after the next paint: the storefront shows the new preview first, and the
 * verdicts of a 1,000-rule config (about 5 ms to build) follow a frame later.
 */
function renderWhy() {
  if (whyFrame) return;
  whyFrame = requestAnimationFrame(() => setTimeout(() => {
    whyFrame = null;
    const e = store.evaluation;
    if (e?.explanation) {
      why.render(e.explanation, {
        config: store.config, summary: summaryById(store), warningsByRule: warningsByRule(store), notes, visitorId: e.state?.visitor_id ?? null,
      });
    }
  }));
}

function renderNoEngine() {
  const msg = 'Fix the config errors to see the preview.';
  storefront.render(session.state.url, session.state.url, null);
  visitorRelay.observe({ url: session.state.url });
  els.previewReason.textContent = msg;
  els.previewBadge.className = 'pill';
  els.previewBadge.textContent = '';
  els.vbVerdict.className = 'pill pill-error';
  els.vbVerdict.textContent = 'No preview until the config has no errors';
  why.clear(msg);
  map.setMap({ regions: [], message: msg });
  els.legend.replaceChildren();
  els.benchRows.replaceChildren();
}

/**
 * The storefront's preview of a new compile (worker.js `quickPreview`), a few milliseconds ahead
 * of the explanation: the nudge, and the badge and reason when it fires; a silent preview's badge
 * (which may name a rule that fires later) waits for the explanation.
 */
function renderPreview(p) {
  if (!p) return;
  const nudge = p.result.would_fire ? p.result.nudge : null;
  storefront.render(p.state.page_url, p.path, nudge);
  if (nudge) showFired(nudge);
}

/** The preview's badge and reason for a nudge that fires. */
function showFired(nudge) {
  els.previewBadge.className = 'pill pill-fire';
  els.previewBadge.innerHTML = `${nudgeIcon(nudge.type, 12)} ${esc(NUDGE_LABELS[nudge.type])}`;
  els.previewReason.textContent = nudge.reason;
}

/**
 * The verdict bar (one column, a phone): the preview's badge, the rule that fires and the visitor,
 * kept at the bottom of the screen while the rules are edited (style.css), with a button to the
 * storefront. `ruleId`: the rule that fires (or waits), when known.
 */
function renderVerdictBar(ruleId = null) {
  const badge = els.previewBadge;
  const s = session.state;
  els.vbVerdict.className = badge.className;
  els.vbVerdict.innerHTML = badge.innerHTML || 'No nudge';
  if (ruleId && badge.classList.contains('pill-fire')) els.vbVerdict.append(` · ${ruleId}`);
  els.vbVisitor.textContent = `${s.url} · intent ${s.intent} · idle ${formatMs(s.idle)}${s.exitIntent ? ' · about to leave' : ''}`;
}

/** The visitor's evaluation (the store's, its verdicts put together): badge, storefront, Why, API. */
function renderEval(e) {
  const ex = e.explanation;
  const badge = els.previewBadge;
  // A visitor id the engine refuses: said at the field too (the reason says why).
  if (e.requestError?.code === 'invalid_visitor_id') els.visitorId.setAttribute('aria-invalid', 'true');
  else els.visitorId.removeAttribute('aria-invalid');
  if (!ex) {
    badge.className = 'pill pill-error';
    badge.textContent = 'Rejected';
    els.previewReason.textContent = e.requestError?.message ?? '';
  } else {
    const result = ex.result;
    storefront.render(e.state.page_url, ex.path, result?.would_fire ? result.nudge : null);
    if (!result) {
      badge.className = 'pill pill-error';
      badge.textContent = 'URL rejected';
      els.previewReason.textContent = ex.url_error?.message ?? '';
    } else if (result.would_fire) {
      showFired(result.nudge);
    } else if (ex.held_out_rule_id) {
      // SPEC 15: the visitor is in the control group of the rule that would fire.
      badge.className = 'pill pill-held';
      badge.textContent = `Control group of ${ex.held_out_rule_id}`;
      els.previewReason.textContent = result.reason || '';
    } else {
      const waiting = waitingFor(ex);
      badge.className = waiting ? 'pill pill-wait' : 'pill';
      badge.textContent = waiting ? `${waiting.rule} ${waiting.text}` : 'No nudge';
      els.previewReason.textContent = result.reason || '';
    }
    renderWhy();
    markLegend(els.legend, ex.fired_rule_id);
  }
  const fired = ex?.result?.would_fire ? ex : null;
  visitorRelay.observe({ url: e.state.page_url, nudgeType: fired?.result.nudge.type, ruleId: fired?.fired_rule_id });
  map.setState(session.state.intent, session.state.idle);
  renderApi(els.api, e);
  renderVerdictBar(ex?.fired_rule_id ?? null);
}

// ---------------------------------------------------------------- views, jump, engineer details

function setView(view) {
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
  try {
    localStorage.setItem('nudge-rules:view', view);
  } catch {
    // storage disabled
  }
}

function jumpTo(line, column) {
  setView('json');
  editor.jumpTo(line, column);
}

/** A problem the server found (a publish or backtest refused): its rule's card, or its line. */
function showProblem(d) {
  const index = ruleIndexOf(d.path);
  const card = index !== null && els.jsonView.hidden ? rulesEditor.cards.element(index) : null;
  if (card) {
    card.scrollIntoView({ block: 'center' });
    card.querySelector('.rc-id')?.focus();
  } else if (d.line) {
    jumpTo(d.line, d.column);
  }
}

function setEngineer(on) {
  document.body.classList.toggle('engineer', on);
  els.engBtn.setAttribute('aria-pressed', String(on));
  try {
    localStorage.setItem('nudge-rules:engineer', on ? '1' : '0');
  } catch {
    // storage disabled
  }
}

// ---------------------------------------------------------------- share link, files, drafts

let hashTimer = null;
/**
 * Writes the share link once changes pause for 500 ms: compressing a 1,000-rule config takes
 * about 25 ms, which would otherwise land between keystrokes while someone types.
 */
function scheduleHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    hashTimer = null;
    writeHash();
  }, 500);
}

/** The notes keyed by the ids of `text` (the editor's current text), when it parses. */
function syncNotes(text) {
  const ids = rulesEditor.idsOf(text);
  if (ids) notes.follow(ids);
}

/** What the share link holds: the visitor, the text, and the notes keyed by that text's ids. */
function hashFields() {
  const s = session.state;
  syncNotes(store.text);
  return {
    intent: s.intent, idle: s.idle, url: s.url, configText: sharedText(store), notes: notes.of(notes.ids),
    exitIntent: s.exitIntent, visitorId: s.visitorId === DEFAULT_VISITOR_ID ? undefined : s.visitorId, history: s.history,
  };
}

function setHash(hash) {
  if (hash !== location.hash) {
    dispatch({ type: 'hash', hash });
    history.replaceState(null, '', hash);
  }
  return hash;
}

async function writeHash() {
  return setHash(await buildHash(hashFields()));
}

/** The page goes away: a change still waiting for its link is written now (uncompressed). */
function writeHashNow() {
  if (hashTimer === null) return;
  clearTimeout(hashTimer);
  hashTimer = null;
  setHash(buildHashNow(hashFields()));
}

function notify(text, action = null) {
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
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => {
    els.toast.hidden = true;
  }, action ? 8000 : 3200);
}

/**
 * Says what a destructive edit of the config did (a rule deleted, a chip removed), with an Undo
 * that takes that step back: the history's last step, as long as the text is what it left.
 */
function offerUndo(message) {
  const after = editor.value;
  notify(message, { label: 'Undo', run: () => editor.value === after && undoStep('undo') });
  dispatch({ type: 'undoOffered', text: after });
}

/** One step of the config's history back or forward (the Rules and JSON views share it). */
function undoStep(which) {
  const done = which === 'undo' ? editor.undo() : editor.redo();
  if (done) rulesEditor.syncFocused();
  return done;
}

/**
 * Ctrl+Z / Ctrl+Shift+Z (and Ctrl+Y) outside the JSON text, which handles its own: in the rule
 * cards and anywhere that is not a field of its own (the URL, the bench, a scenario's name).
 */
function onUndoKey(e) {
  if (!(e.ctrlKey || e.metaKey) || e.altKey || e.defaultPrevented) return;
  const key = e.key.toLowerCase();
  const redo = key === 'y' || (key === 'z' && e.shiftKey);
  if (key !== 'z' && !redo) return;
  const t = e.target;
  const ownField = t instanceof HTMLElement && t.matches('input, textarea, select, [contenteditable]') && !els.rulesView.contains(t);
  if (ownField || els.jsonView.contains(t)) return;
  e.preventDefault();
  undoStep(redo ? 'redo' : 'undo');
}

/** Downloads the config (the Save button, Ctrl+S anywhere on the page). */
function saveConfig() {
  const text = editor.value;
  downloadText(text, 'nudge-config.json');
  drafts.setBase(text, 'your last save');
  drafts.saveNow(text);
  els.dirtyDot.hidden = true;
  notify('Saved as nudge-config.json (in your downloads).');
}

/** Asks before replacing edited text; resolves to true when it may be replaced. */
async function mayDiscard(what) {
  if (!drafts.isDirty(editor.value)) return true;
  return confirmDialog(els.dialog, {
    title: 'Discard your edits?',
    body: `Your changes since ${drafts.baseLabel} are replaced by ${what}. Undo (or Ctrl+Z) brings them back.`,
    confirm: 'Discard my edits',
  });
}

/** Replaces the text as one undoable step, and says so with an Undo button. */
function replaceText(text, baseLabel, message) {
  const before = editor.value;
  editor.setValue(text);
  drafts.setBase(text, baseLabel);
  drafts.saveNow(text);
  els.dirtyDot.hidden = true;
  if (message) {
    notify(message, before !== text ? { label: 'Undo', run: () => editor.setValue(before) } : null);
  }
}

function pick(parsed) {
  const out = {};
  if (parsed.intent !== undefined) out.intent = clamp(parsed.intent, 0, LIMITS.intent_score);
  if (parsed.idle !== undefined) out.idle = clamp(parsed.idle, 0, LIMITS.idle_ms);
  if (parsed.url !== undefined) out.url = parsed.url;
  if (parsed.exitIntent !== undefined) out.exitIntent = parsed.exitIntent;
  if (parsed.visitorId !== undefined) out.visitorId = parsed.visitorId;
  if (parsed.history !== undefined) out.history = parsed.history;
  return out;
}

/** A share link whose config could not be read: said until dismissed (the page looks fine). */
function damagedLink(parsed, fallbackLabel) {
  notice.show(`This link's config could not be read (${parsed.configError}); it may have been cut short when copied. The editor shows ${fallbackLabel}, not the shared config; the page, intent and idle time from the link are kept. Ask whoever sent it for the link again.`);
}

/** A file Open refuses: said until dismissed; nothing is replaced. */
function refuseFile(why) {
  notice.show(`${why}. It was not opened: your config is unchanged. Open takes a site config saved as JSON, such as nudge-config.json.`);
}

/** Why `text` is not JSON (the parser's words), or null when it is. */
function jsonError(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return err.message;
  }
}

// ---------------------------------------------------------------- wiring

function wire() {
  // A description typed: into the share link, and beside the rule in the Why panel.
  notes.onChange(() => {
    scheduleHash();
    if (store.evaluation?.explanation) renderWhy();
  });
  els.benchInput.value = DEFAULT_BENCH;
  els.benchInput.addEventListener('input', () => request());

  els.tabRules.addEventListener('click', () => setView('rules'));
  els.tabJson.addEventListener('click', () => setView('json'));
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
  els.engBtn.addEventListener('click', () => setEngineer(!document.body.classList.contains('engineer')));

  // Config as code loads its WASM module when one of its panels is first opened.
  $('#scenarios-panel').addEventListener('toggle', (e) => e.target.open && scenarios.activate());

  onTextFileChosen($('#open-btn'), els.fileInput, async (text, name) => {
    const notJson = jsonError(text);
    if (notJson) {
      refuseFile(`“${name}” is not JSON (${notJson})`);
      return;
    }
    notice.hide();
    if (await mayDiscard(name)) replaceText(text, name, `Loaded ${name}.`);
  }, (why) => refuseFile(why));
  $('#save-btn').addEventListener('click', () => saveConfig());
  window.addEventListener('keydown', onUndoKey);
  window.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's' && !e.defaultPrevented) {
      e.preventDefault();
      saveConfig();
    }
  });
  $('#share-btn').addEventListener('click', async () => {
    await writeHash();
    try {
      await navigator.clipboard.writeText(location.href);
      notify('Link copied: it holds the config and the visitor state.');
    } catch {
      notify('The address bar now holds the share link; copy it from there.');
    }
  });
  $('#changes-btn').addEventListener('click', () => {
    showDiff(els.dialog, { base: drafts.base, text: editor.value, baseLabel: drafts.baseLabel });
  });
  $('#reset-btn').addEventListener('click', async () => {
    if (!(await mayDiscard('the example storefront config'))) return;
    session.setPlaying(false);
    session.set({ ...DEFAULT_STATE });
    replaceText(store.exampleText, 'the example config', 'Back to the example storefront config.');
  });
  window.addEventListener('hashchange', async () => {
    if (location.hash === store.hash) return;
    if (drafts.ownAddress(location.hash)) {
      // An older address of this tab (the one the address bar showed while the reload loaded):
      // not a new link; the address is put back to what is on screen.
      setHash(buildHashNow(hashFields()));
      return;
    }
    const parsed = await parseHash(location.hash);
    dispatch({ type: 'hash', hash: location.hash });
    session.set(pick(parsed));
    notes.merge(parsed.notes);
    if (parsed.configError) damagedLink(parsed, 'the config you had');
    else if (parsed.configText !== undefined && parsed.configText !== editor.value && (await mayDiscard('the link\'s config'))) {
      replaceText(parsed.configText, 'the shared link', 'Loaded the config from the link.');
    }
  });
  // Leaving (a reload, a closed tab): the draft, its notes and the link as they are on screen.
  window.addEventListener('pagehide', () => {
    if (store.text === null) return; // left before the text was loaded: nothing to keep
    const address = location.hash; // what a reload opens: the address before the write below
    syncNotes(store.text);
    drafts.saveNow(store.text);
    writeHashNow();
    drafts.leave(store.text, [address, location.hash]);
  });
}

async function boot() {
  wire();
  let engineer = false;
  let view = 'rules';
  try {
    engineer = localStorage.getItem('nudge-rules:engineer') === '1';
    view = localStorage.getItem('nudge-rules:view') || 'rules';
  } catch {
    // storage disabled
  }
  setEngineer(engineer);
  setView(view === 'json' ? 'json' : 'rules');
  let example = FALLBACK_CONFIG;
  try {
    example = await fetchExample('storefront.json');
  } catch (err) {
    console.warn('nudge-rules: could not fetch the example config:', err);
  }
  dispatch({ type: 'example', text: example });
  const parsed = await parseHash(location.hash);
  dispatch({ type: 'hash', hash: location.hash });
  Object.assign(session.state, pick(parsed));
  if (parsed.notes) notes.merge(parsed.notes);
  session.render();

  let text = store.exampleText;
  let base = { text: store.exampleText, label: 'the example config' };
  const draft = drafts.load();
  // This tab reloaded (its own address, maybe older than its text): what was on screen.
  const returning = parsed.configError ? null : drafts.returning(location.hash);
  if (returning) {
    text = returning.text;
    base = { text: returning.base ?? store.exampleText, label: returning.baseLabel ?? 'the example config' };
  } else if (parsed.configText !== undefined) {
    text = parsed.configText;
    base = { text, label: 'the shared link' };
  } else if (draft && draft.text !== store.exampleText) {
    text = draft.text;
    base = { text: draft.base ?? store.exampleText, label: draft.baseLabel ?? 'the example config' };
  }
  drafts.setBase(base.text, base.label);
  editor.setValue(text, { undoable: false });
  els.dirtyDot.hidden = !drafts.isDirty(text);
  // The address of a reloaded tab holds the text it had now (an older one, for a link written
  // before the last edits): at once, so that the link copied from the address is what is shown.
  if (returning) setHash(buildHashNow(hashFields()));
  const draftSetAside = !returning && parsed.configText !== undefined && draft && draft.text !== text && draft.text !== store.exampleText;
  if (draftSetAside) drafts.stash(draft);
  if (parsed.configError) {
    damagedLink(parsed, draft ? 'your draft' : 'the example config');
  } else if (draftSetAside) {
    notify('Opened the config of the link. Your unsaved edits from before are kept aside.', {
      label: 'Open my edits',
      run: async () => {
        const earlier = drafts.takeEarlier();
        if (earlier && (await mayDiscard('your earlier edits'))) {
          replaceText(earlier.text, earlier.baseLabel ?? 'the example config', 'Back to your earlier edits.');
          drafts.setBase(earlier.base ?? store.exampleText, earlier.baseLabel ?? 'the example config');
          drafts.saveNow(editor.value);
          els.dirtyDot.hidden = !drafts.isDirty(editor.value);
        }
      },
    });
  } else if (!returning && parsed.configText === undefined && draft && draft.text === text && drafts.isDirty(text)) {
    const when = new Date(draft.savedAt).toLocaleString();
    notify(`Restored your unsaved edits (draft of ${when}).`, {
      label: 'Show changes',
      run: () => showDiff(els.dialog, { base: drafts.base, text: editor.value, baseLabel: drafts.baseLabel }),
    });
  }
}

boot();

// For the console and the browser tests: the page's state, its measurements, the editor and the parts.
window.nudgePlayground = {
  metrics,
  /** The page's state (store.js). */
  get store() {
    return store;
  },
  client,
  editor,
  map,
  rulesEditor,
  scenarios,
  replay,
  connection,
  realSessions,
  visitorRelay,
  session,
  setText: (text) => editor.setValue(text),
  setView,
  /** Resolves when every change so far is computed and drawn (the Why panel a frame later). */
  settled: () => client.idle().then(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))),
};
