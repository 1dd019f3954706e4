// The page's one store: what the engine said and the page's own state (the text on screen, the
// example config, the share link last written or read, the Undo on offer, the marks in the JSON
// view). Each reply of the worker (protocol.js: answers, one kind each) and each change of the
// page is an action applied by `reduce`, a pure function: the state before and the action in, the
// state after out, never changed in place (an action that changes nothing gives the same state
// back). Each kind of answer has its case below, and tsc checks that none is left out. A slice
// whose value did not change keeps its identity (no errors before or after, the same lint
// warnings), because the page's views (views.js) redraw when a slice they read changes by
// identity. The long lists the worker sends as deltas (the rules, their sentences, the verdicts)
// are put back together here, keeping the items that did not change (the Why panel skips
// redrawing them). What is derived from the state (sentences by rule id, lint warnings by rule,
// the rule count, whether the answers are for the text on screen, the config as written) is
// computed by the selectors below, not stored. app.js dispatches; views.js draws.

import { readConfig } from './config-edits.js';
import { plainSyntaxDiagnostic } from './json-messages.js';
import { initialWebhooks, reduceWebhooks } from './webhooks-store.js';

/** @typedef {import('./protocol.js').Answer} Answer */
/** @typedef {import('./protocol.js').Reply} Reply */
/** @typedef {import('./protocol.js').Diagnostic} Diagnostic */
/** @typedef {import('./protocol.js').Evaluation} Evaluation */
/** @typedef {import('./protocol.js').Config} Config */
/** @typedef {import('./protocol.js').Rule} Rule */
/** @typedef {import('./protocol.js').RuleSummary} RuleSummary */
/** @typedef {import('./protocol.js').RuleExplanation} RuleExplanation */
/** @typedef {import('./protocol.js').Explanation} Explanation */

/**
 * A failing scenario, as the Problems list and the rule cards show it (scenarios-panel.js).
 * @typedef {{ index: number, name: string, expected: object, got: object, because: string }} Failure
 */

/**
 * @typedef {object} State
 * @property {boolean} valid the last text compiled
 * @property {boolean} hasEngine a text compiled once: its engine previews while the text has errors
 * @property {string | null} compiledText the text the errors' places belong to
 * @property {Diagnostic[]} errors JSON syntax errors in plain words (json-messages.js)
 * @property {Diagnostic[]} warnings lint warnings of the engine in use
 * @property {(Omit<Config, 'rules'> & { rules: Rule[] }) | null} config the engine's config, defaults filled in
 * @property {RuleSummary[]} summary one sentence per rule
 * @property {(Omit<Evaluation, 'explanation'> & { explanation: (Omit<Explanation, 'rules'> & { rules: RuleExplanation[] }) | null }) | null} evaluation
 *   the visitor's preview, explanation and API response
 * @property {Failure[]} failures the scenarios that fail now
 * @property {import('./protocol.js').Limits | null} limits the engine's limits of a config
 * @property {{ rules: Rule[], summary: RuleSummary[], verdicts: RuleExplanation[] }} lists
 *   the lists as last assembled from the worker's deltas
 * @property {{ encoded: number, decoded: number, responseEnd: number } | null} wasm how the
 *   worker's module arrived (its load report)
 * @property {string | null} text the config text on screen (null until the page has loaded one)
 * @property {string} exampleText the example config (a share link leaves it out)
 * @property {string | null} hash the share link this page last wrote or read
 * @property {string | null} undoAfter the text a destructive edit left, while its toast offers Undo
 * @property {{ errors: Diagnostic[], warnings: Diagnostic[], text: string | null }} marked the
 *   problems marked in the JSON view (the lists as they were then: a list that did not change
 *   keeps its identity), and the text they were marked in
 * @property {{ fatal: boolean, message: string } | null} failure the engine did not load (`fatal`)
 *   or the worker failed
 * @property {{ url: string } | null} noEngine no config has compiled yet; the visitor's page
 * @property {import('./protocol.js').QuickPreview | null} preview the storefront's preview of the
 *   last compile, ahead of its explanation
 * @property {import('./protocol.js').MapAnswer | null} map the decision map of the visitor's page
 * @property {import('./protocol.js').BenchRow[] | null} bench the URL bench's rows
 * @property {import('./protocol.js').PageReport[] | null} pages the sample pages' reports (the cards)
 * @property {import('./protocol.js').PatternCheck[] | null} patterns the last checks of patterns
 * @property {import('./protocol.js').ScenariosAnswer | null} scenarios the scenario file's report
 * @property {import('./protocol.js').Scenario | { error: string } | null} savedScenario the visitor
 *   last saved as a scenario
 * @property {object | null} replay the recorded sessions replayed before and after
 * @property {object | null} diff the page views whose outcome changes
 * @property {Results} results the Results view: the connection, the window and the uplift report
 * @property {import('./webhooks-store.js').Webhooks} webhooks the Webhooks view: the connection,
 *   the endpoints, the open endpoint's attempts, a secret shown once (webhooks-store.js)
 */

/**
 * The Results view's state (results-panel.js): the server connected to (if any), the window in
 * days, and the uplift report with the backtest's predicted reach, or why there is none.
 * @typedef {object} Results
 * @property {boolean} connected
 * @property {string} host the server as the status bar names it
 * @property {'test' | 'live' | null} mode the key's
 * @property {number} days the window: the sessions of the last `days` days
 * @property {'idle' | 'loading' | 'ready' | 'error'} status
 * @property {{ from: string, to: string, rules: object[] } | null} report GET /v1/reports/uplift's `data`
 * @property {{ sessions: number, rules: Record<string, { shown: number, heldOut: number }> } | null} reach
 *   the backtest's sessions of the window, and per rule of the draft the sessions it would be
 *   shown in and those whose visitor it would hold out (docs/contract/caps.md)
 * @property {string | null} reachError why there is no predicted reach, in words
 * @property {string | null} error why there is no report, in words
 */

/** An empty list that stays the same list (no errors now and before: no redraw). */
const NONE = /** @type {any[]} */ (Object.freeze([]));

/** @type {State} */
export const initialState = Object.freeze({
  valid: false,
  hasEngine: false,
  compiledText: null,
  errors: NONE,
  warnings: NONE,
  config: null,
  summary: [],
  evaluation: null,
  failures: NONE,
  limits: null,
  lists: { rules: [], summary: [], verdicts: [] },
  wasm: null,
  text: null,
  exampleText: '',
  hash: null,
  undoAfter: null,
  marked: { errors: NONE, warnings: NONE, text: null },
  failure: null,
  noEngine: null,
  preview: null,
  map: null,
  bench: null,
  pages: null,
  patterns: null,
  scenarios: null,
  savedScenario: null,
  replay: null,
  diff: null,
  results: /** @type {Results} */ ({ connected: false, host: '', mode: null, days: 30, status: 'idle', report: null, reach: null, reachError: null, error: null }),
  webhooks: initialWebhooks,
});

/**
 * @typedef {{ type: 'reply', reply: Reply, text?: string } | { type: 'failures', failures: Failure[] }
 *   | { type: 'text', text: string } | { type: 'example', text: string } | { type: 'hash', hash: string }
 *   | { type: 'undoOffered', text: string } | { type: 'toast' } | { type: 'marked', text: string | null }
 *   | { type: 'resultsConnection', connected: boolean, host: string, mode: 'test' | 'live' | null }
 *   | { type: 'resultsRequested', days: number }
 *   | { type: 'resultsLoaded', days: number, report: Results['report'], reach: Results['reach'], reachError: string | null }
 *   | { type: 'resultsFailed', days: number, error: string }
 *   | import('./webhooks-store.js').WebhooksAction} Action
 *   `reply`: a reply of the worker, `text` the text its job compiled; `text`: the text on
 *   screen changed; `example`: the example config arrived; `hash`: the share link written or
 *   read; `undoOffered`: a destructive edit left `text`, Undo offered; `toast`: another toast
 *   replaced the Undo; `marked`: the errors and warnings of now were marked in the JSON view of `text`;
 *   `resultsConnection`: the Results view's server connected or gone (its report with it);
 *   `resultsRequested`, `resultsLoaded`, `resultsFailed`: the uplift report of `days` asked for,
 *   read, refused; `webhooks…`: the Webhooks view's (webhooks-store.js)
 */

/**
 * @param {State} state
 * @param {Action} action
 * @returns {State}
 */
export function reduce(state, action) {
  switch (action.type) {
    case 'reply':
      return action.reply.answers.reduce((next, answer) => applyAnswer(next, answer, action.text), state);
    case 'failures': {
      const failures = same(state.failures, action.failures);
      return failures === state.failures ? state : { ...state, failures };
    }
    case 'text':
      if (action.text === state.text) return state;
      // An Undo offered for an edit goes once the text changes again (Ctrl+Z still takes it back).
      return { ...state, text: action.text, undoAfter: state.undoAfter === action.text ? state.undoAfter : null };
    case 'example':
      return { ...state, exampleText: action.text };
    case 'hash':
      return action.hash === state.hash ? state : { ...state, hash: action.hash };
    case 'undoOffered':
      return { ...state, undoAfter: action.text };
    case 'toast':
      return state.undoAfter === null ? state : { ...state, undoAfter: null };
    case 'marked':
      return { ...state, marked: { errors: state.errors, warnings: state.warnings, text: action.text } };
    case 'resultsConnection':
      return {
        ...state,
        results: { ...initialState.results, days: state.results.days, connected: action.connected, host: action.host, mode: action.mode },
      };
    case 'resultsRequested':
      return { ...state, results: { ...state.results, days: action.days, status: 'loading', error: null } };
    case 'resultsLoaded': {
      const { days, report, reach, reachError } = action;
      return { ...state, results: { ...state.results, days, status: 'ready', report, reach, reachError, error: null } };
    }
    case 'resultsFailed':
      return { ...state, results: { ...state.results, days: action.days, status: 'error', report: null, reach: null, error: action.error } };
    case 'webhooksConnection':
    case 'webhooksRequested':
    case 'webhooksLoaded':
    case 'webhooksFailed':
    case 'webhooksBusy':
    case 'webhooksNotice':
    case 'webhooksSaved':
    case 'webhooksDeleted':
    case 'webhooksSecret':
    case 'webhooksSecretClosed':
    case 'webhooksOpen':
    case 'webhooksAttemptsRequested':
    case 'webhooksAttemptsLoaded':
    case 'webhooksAttemptsFailed': {
      const webhooks = reduceWebhooks(state.webhooks, action);
      return webhooks === state.webhooks ? state : { ...state, webhooks };
    }
    default:
      return state;
  }
}

/**
 * A list as the worker sent it: whole, or as a delta of the `before` list (worker.js `delta`).
 * @template T
 * @param {T[]} before
 * @param {T[] | import('./protocol.js').Delta<T>} sent
 * @returns {T[]}
 */
function assemble(before, sent) {
  if (Array.isArray(sent)) return sent;
  const out = before.slice(0, sent.n);
  out.length = sent.n;
  for (const [i, item] of sent.changed) out[i] = item;
  return out;
}

/**
 * `before` when `after` holds the same items (compared as JSON), else `after`: a list that did
 * not change keeps its identity, so that the views reading it do not redraw.
 * @template T
 * @param {T[]} before
 * @param {T[]} after
 * @returns {T[]}
 */
function same(before, after) {
  if (before === after) return before;
  if (!after.length) return before.length ? NONE : before;
  return before.length === after.length && JSON.stringify(before) === JSON.stringify(after) ? before : after;
}

/**
 * One answer of the worker applied to the state: one case per kind (protocol.js `Answer`).
 * @param {State} state
 * @param {Answer} a
 * @param {string | undefined} text the text the job compiled
 * @returns {State}
 */
function applyAnswer(state, a, text) {
  switch (a.kind) {
    case 'fatal':
    case 'failed':
      return { ...state, failure: { fatal: a.kind === 'fatal', message: a.message } };
    case 'wasm':
      return { ...state, wasm: a.load };
    case 'limits':
      return { ...state, limits: a.limits };
    case 'compile': {
      const c = a.compile;
      const compiledText = text ?? state.compiledText ?? '';
      return {
        ...state,
        valid: c.valid,
        hasEngine: c.hasEngine,
        compiledText,
        errors: same(state.errors, c.errors.map((d) => plainSyntaxDiagnostic(compiledText, d))),
        warnings: c.valid ? state.warnings : NONE,
      };
    }
    case 'analysis': {
      const rules = assemble(state.lists.rules, a.analysis.config.rules);
      const summary = assemble(state.lists.summary, a.analysis.summary);
      return {
        ...state,
        warnings: same(state.warnings, a.analysis.warnings),
        config: { ...a.analysis.config, rules },
        summary,
        lists: { ...state.lists, rules, summary },
      };
    }
    case 'eval': {
      const e = a.evaluation;
      const ex = e.explanation;
      if (!ex) return { ...state, evaluation: { ...e, explanation: null } };
      const verdicts = assemble(state.lists.verdicts, ex.rules);
      return { ...state, evaluation: { ...e, explanation: { ...ex, rules: verdicts } }, lists: { ...state.lists, verdicts } };
    }
    case 'noEngine':
      return { ...state, noEngine: { url: a.url } };
    case 'preview':
      return { ...state, preview: a.preview };
    case 'map':
      return { ...state, map: a.map };
    case 'bench':
      return { ...state, bench: a.rows };
    case 'pages':
      return { ...state, pages: a.reports };
    case 'patterns':
      return { ...state, patterns: a.checks };
    case 'scenarios':
      return { ...state, scenarios: a.scenarios };
    case 'savedScenario':
      return { ...state, savedScenario: a.scenario };
    case 'replay':
      return { ...state, replay: a.replay };
    case 'diff':
      return { ...state, diff: a.diff };
    default: {
      // Every kind has its case: tsc says so here when a kind is added to protocol.js and not here.
      /** @type {never} */
      const unknown = a;
      return unknown;
    }
  }
}

// ---------------------------------------------------------------- selectors

/**
 * The last result of `f`, computed again only for another argument (by identity).
 * @template A, R
 * @param {(arg: A) => R} f
 * @returns {(arg: A) => R}
 */
function memo(f) {
  /** @type {A | undefined} */
  let last;
  /** @type {R | undefined} */
  let value;
  let has = false;
  return (arg) => {
    if (!has || arg !== last) {
      last = arg;
      value = f(arg);
      has = true;
    }
    return /** @type {R} */ (value);
  };
}

/**
 * Errors and warnings by the rule index their path starts with (`rules[3]...`); -1: the rest.
 * @param {Diagnostic[]} diagnostics
 * @returns {Map<number, Diagnostic[]>}
 */
export function diagnosticsByRule(diagnostics) {
  /** @type {Map<number, Diagnostic[]>} */
  const map = new Map();
  for (const d of diagnostics) {
    const m = /^rules\[(\d+)\]/.exec(d.path || '');
    const key = m ? Number(m[1]) : -1;
    const list = map.get(key) ?? [];
    list.push(d);
    map.set(key, list);
  }
  return map;
}

const summaryMap = memo((/** @type {RuleSummary[]} */ summary) => new Map(summary.map((s) => [s.rule_id, s.text])));
const warningsMap = memo(diagnosticsByRule);

/** The sentence of each rule, by id. @param {State} state */
export const summaryById = (state) => summaryMap(state.summary);

/** The lint warnings of each rule, by index. @param {State} state */
export const warningsByRule = (state) => warningsMap(state.warnings);

const writtenMap = memo((/** @type {string | null} */ text) => {
  const { value } = readConfig(text ?? '');
  return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
});

/**
 * The config as written in the text the errors belong to (the values the cards' words quote:
 * an empty button text, 90,000,000 ms), or null when it is not a JSON object; parsed once per text.
 * @param {State} state
 */
export const writtenConfig = (state) => writtenMap(state.compiledText);

/** @param {State} state */
export const ruleCount = (state) => state.config?.rules.length ?? 0;

/** The preview shows the last valid config: the text has errors, an earlier one compiled. @param {State} state */
export const isStale = (state) => !state.valid && state.hasEngine;

/** The engine has compiled a text once (the page is ready). @param {State} state */
export const isReady = (state) => state.compiledText !== null;

/** The engine's answers are for the text on screen (no keystroke since). @param {State} state */
export const isCurrent = (state) => state.text !== null && state.compiledText === state.text;

/** The config a share link holds: null for the example config (left out of the link). @param {State} state */
export const sharedText = (state) => (state.text === state.exampleText ? null : state.text);

/**
 * The problems still to be marked in the JSON view: their places belong to the compiled text, so
 * only when it is the text on screen, and only when they changed (an unchanged empty list is no
 * transaction for the editor). The lists keep their identity while their items are the same
 * (`same`), so no list of 2,000 errors is compared item by item here.
 * @param {State} state
 */
export const needsMarks = (state) => {
  if (!isCurrent(state)) return false;
  const { marked } = state;
  if (marked.errors !== state.errors || marked.warnings !== state.warnings) return true;
  return state.errors.length + state.warnings.length > 0 && marked.text !== state.text;
};
