// The nudge-rules playground: edit a site config (as rule cards or as JSON), move a visitor
// around, and see which nudge fires and why. Every answer comes from the WASM engine, which runs
// in a Web Worker (worker.js). This file is the composition root: it builds the page's parts,
// holds the one store, sends the engine its jobs and puts each reply through the store; what is
// drawn, and when, is views.js's table (each view redraws when the state it reads changed).
//
//   store.js         the page's state (a reducer)      protocol.js      jobs, replies, answers
//   views.js         the draw table of the page        draw-table.js    how a table is drawn
//   page-actions.js  toast, undo, save, views, jumps   share-link.js    the share link (URL hash)
//   boot.js          wiring and what the page opens    engine-client.js the worker, one job at a time
//   code-editor.js   the JSON view (CodeMirror 6)      rules-editor.js  the visual rule editor
//   session.js       the visitor-session controls      why.js           rule verdicts, lazily built
//   storefront.js    the mock storefront and nudge     map-panel.js     the decision map + legend
//   problems.js      errors and lint warnings          api-panel.js     request and response
//   bench.js         the URL test bench                drafts.js        autosave, confirm, diff
//   share.js         the share link's encoding         json-messages.js JSON syntax in plain words
//   rule-card.js     one rule's card                   chips-field.js   a pattern list as chips
//   card-words.js    findings in the card's words      notes.js         rule descriptions
//   colors.js        each rule's colour, by id         limits.js        the engine's limits
//   connect.js       a server: backtest (real-sessions.js), publish (publish-panel.js), history,
//                    results (results-panel.js: measured uplift), webhooks (webhooks-panel.js)
//   storefront-relay.js  the storefront's visitor sent to a server's relay (POST /v1/events)
//   shop-preview.js      the draft opened in the test shop (examples/shop) by the real runtime

import { benchUrls } from './bench.js';
import { boot } from './boot.js';
import { CodeEditor } from './code-editor.js';
import { Connection } from './connect.js';
import { drawTable } from './draw-table.js';
import { Drafts, confirmDialog } from './drafts.js';
import { elements } from './elements.js';
import { EngineClient } from './engine-client.js';
import { HistoryDialog } from './history-panel.js';
import { DecisionMapView } from './map.js';
import { describeRegion } from './map-panel.js';
import { Notice } from './notice.js';
import { RuleNotes } from './notes.js';
import { pageActions, pick } from './page-actions.js';
import { PublishDialog } from './publish-panel.js';
import { RealSessions } from './real-sessions.js';
import { ReplayPanel } from './replay-panel.js';
import { ResultsPanel } from './results-panel.js';
import { RulesEditor } from './rules-editor.js';
import { ScenariosPanel } from './scenarios-panel.js';
import { SessionControls } from './session.js';
import { ShareLink } from './share-link.js';
import { initialState, reduce } from './store.js';
import { WebhooksPanel } from './webhooks-panel.js';
import { STORE_PAGES, StorefrontView } from './storefront.js';
import { StorefrontRelay } from './storefront-relay.js';
import { ShopPreview } from './shop-preview.js';
import { $ } from './util.js';
import { pageViews } from './views.js';
import { WhyPanel } from './why.js';

const STORE_URLS = STORE_PAGES.map((p) => p.url);
const els = elements();

/**
 * The page's one state, in one store (store.js): what the engine said and the page's own state
 * (the text on screen, the example config, the share link, the Undo on offer, the marks), each
 * change an action applied by `reduce`; what is derived is computed by the store's selectors.
 * @type {import('./store.js').State}
 */
let store = initialState;
let draw = null; // views.js's table, once the parts exist
let drawing = false;
let drawAgain = false;

/**
 * Applies an action, then draws what changed. An action dispatched while the table draws (the
 * marks in the JSON view) is drawn by another pass once this one ends.
 * @param {import('./store.js').Action} action
 */
function dispatch(action) {
  store = reduce(store, action);
  if (!draw) return store;
  if (drawing) {
    drawAgain = true;
    return store;
  }
  drawing = true;
  try {
    do {
      drawAgain = false;
      draw(() => store);
    } while (drawAgain);
  } finally {
    drawing = false;
  }
  return store;
}
const getState = () => store;

/** Measurements for the tests and the status bar, not state: boot to ready, keystroke to preview. */
const metrics = {
  bootStart: performance.now(),
  readyMs: null,
  timings: [], // { kind, ms, workerMs, compileMs } of each rendered reply: keystroke (or control) to preview
};
/** The callers waiting for the engine's check of a pattern, by pattern. */
const patternWaiters = new Map();

const client = new EngineClient(onReply);
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
  link.schedule();
});
const editor = new CodeEditor($('#editor'), {
  label: 'Site config (JSON)',
  onChange: (text) => onTextChange(text),
  onSave: () => actions.saveConfig(),
});
const notify = (text, action) => actions.notify(text, action);
const rulesEditor = new RulesEditor($('#rules-view'), {
  applyEdits: (edits, options) => editor.applyEdits(edits, options),
  offerUndo: (message) => actions.offerUndo(message),
  showScenario: (index) => scenarios.reveal(index),
  notify,
  checkPattern,
  jumpToJson: (line, column) => actions.jumpTo(line, column),
  notes,
  pages: STORE_PAGES,
});
const actions = pageActions({ els, dispatch, editor, rulesEditor, drafts, notice });
const link = new ShareLink({ getState, dispatch, session, notes, rulesEditor });
const why = new WhyPanel({
  facts: els.facts,
  rules: els.rules,
  countdown: els.countdown,
  onSkip: (idle) => {
    session.set({ idle });
    session.rebase();
  },
  onEdit: (index) => actions.editRule(index),
});

const scenarios = new ScenariosPanel($('#scenarios-body'), {
  send: (job) => request(job),
  currentState: () => session.sessionState(),
  setState: (st) => session.set(pick({
    intent: st.intent_score, idle: st.idle_ms, url: st.page_url,
    exitIntent: st.exit_intent === true, visitorId: st.visitor_id ?? '', history: st.history ?? [],
  })),
  notify,
  onCoverage: (coverage) => rulesEditor.update({ coverage }),
  // The scenarios that fail now: in the status pill, the Problems list and the cards (views.js),
  // redrawn only when they change (most keystrokes change no scenario's result).
  onFailures: (failures) => dispatch({ type: 'failures', failures }),
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
  notify,
  load: async (text, label) => {
    if (!(await actions.mayDiscard(label))) return false;
    actions.replaceText(text, label, `Opened ${label}.`);
    return true;
  },
});
const realSessions = new RealSessions(connection, replay, {
  text: () => editor.value,
  send: (job) => request(job),
  showProblem: (d) => actions.showProblem(d),
});
new PublishDialog(connection, realSessions, {
  text: () => editor.value,
  scenarios: () => ({ text: scenarios.text(), count: scenarios.file.scenarios.length, failures: store.failures }),
  notify,
  setBase: (text, label) => actions.setBase(text, label),
  showProblem: (d) => actions.showProblem(d),
});
new HistoryDialog(connection, { notify });
// Results (issue 32): the measured uplift per rule, from the connected server.
const results = new ResultsPanel($('#results-body'), {
  connection, dispatch, getState, text: () => editor.value, editRule: (index) => actions.editRule(index),
  // As the rule card sets it (rule-card.js): an edit of the draft's text, 0 removing the field.
  setHoldout: (index, percent) => rulesEditor.setValueAt(['rules', index, 'holdout_percent'], percent === 0 ? undefined : percent),
});
// Webhooks (issue 33): the site's endpoints on the connected server, their attempts.
const webhooks = new WebhooksPanel($('#webhooks-body'), {
  connection, dispatch, getState, confirm: (options) => confirmDialog(els.dialog, options),
});
// The storefront's visitor sent to a server's relay (issue 21): the pk_ key in memory only.
const visitorRelay = new StorefrontRelay($('#visitor-relay'), { intent: () => session.state.intent, connection });
// The draft in the test shop, drawn by the real storefront runtime (issue 36).
new ShopPreview($('#shop-preview'), { text: () => editor.value, pageUrl: () => session.state.url });

const { views, redrawWhy } = pageViews({
  els, session, storefront, visitorRelay, why, map, editor, rulesEditor, scenarios, replay, results, webhooks, notes, metrics,
  patternWaiters, getState, dispatch, jumpTo: (line, column) => actions.jumpTo(line, column),
});
draw = drawTable(views, initialState);

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
  link.schedule();
  connection.textChanged();
}

/** The engine's check of a pattern (worker.js `checkPattern`); every caller waiting gets it. */
function checkPattern(text, callback) {
  patternWaiters.set(text, [...(patternWaiters.get(text) ?? []), callback]);
  const caseSensitive = store.config?.case_sensitive === true;
  client.send({ patterns: [{ text, caseSensitive }], pages: STORE_URLS });
}

/**
 * A reply of the worker: its answers go through the store, which the views draw from; then the
 * keystroke's time to the preview is recorded (the first reply that shows it: a partial one after
 * a compile).
 * @param {import('./protocol.js').Reply} reply
 * @param {import('./protocol.js').Job & { shown?: boolean }} job
 */
function onReply(reply, job) {
  dispatch({ type: 'reply', reply, text: job.text });
  const shows = reply.answers.some((a) => a.kind === 'eval' || a.kind === 'preview');
  if (job.sentAt && !job.shown && shows) {
    job.shown = true;
    const sentAt = job.sentAt;
    const kind = job.text !== undefined ? 'text' : 'state';
    const compile = reply.answers.find((a) => a.kind === 'compile');
    requestAnimationFrame(() => {
      const ms = performance.now() - sentAt;
      metrics.timings.push({ kind, ms, workerMs: reply.workerMs, compileMs: compile?.kind === 'compile' ? compile.compile.compileMs : null });
      document.dispatchEvent(new CustomEvent('nudge:rendered', { detail: { kind, ms } }));
    });
  }
}

boot({ els, getState, dispatch, actions, link, request, redrawWhy, notes, session, editor, drafts, scenarios, notice });

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
  results,
  webhooks,
  visitorRelay,
  session,
  setText: (text) => editor.setValue(text),
  setView: (view) => actions.setView(view),
  /** Resolves when every change so far is computed and drawn (the Why panel a frame later). */
  settled: () => client.idle().then(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))),
};
