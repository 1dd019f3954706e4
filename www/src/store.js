// The page's one store: what the engine said and the page's own state (the text on screen, the
// example config, the share link last written or read, the Undo on offer, the marks in the JSON
// view). Each answer of the worker (protocol.js) and each change of the page is an action applied
// by `reduce`, a pure function: the state before and the action in, the state after out, never
// changed in place (an action that changes nothing gives the same state back). The long lists the
// worker sends as deltas (the rules, their sentences, the verdicts) are put back together here,
// keeping the items that did not change (the Why panel skips redrawing them). What is derived
// from the state (sentences by rule id, lint warnings by rule, the rule count, whether the
// answers are for the text on screen, the config as written) is computed by the selectors below,
// not stored. app.js dispatches and draws.

import { readConfig } from './config-edits.js';
import { plainSyntaxDiagnostic } from './json-messages.js';

/** @typedef {import('./protocol.js').Answer} Answer */
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
 * @property {{ key: string, text: string | null }} marked the problems marked in the JSON view, and
 *   the text they were marked in
 */

/** @type {State} */
export const initialState = Object.freeze({
  valid: false,
  hasEngine: false,
  compiledText: null,
  errors: [],
  warnings: [],
  config: null,
  summary: [],
  evaluation: null,
  failures: [],
  limits: null,
  lists: { rules: [], summary: [], verdicts: [] },
  wasm: null,
  text: null,
  exampleText: '',
  hash: null,
  undoAfter: null,
  marked: { key: '[]', text: null },
});

/**
 * @typedef {{ type: 'answer', answer: Answer, text?: string } | { type: 'failures', failures: Failure[] }
 *   | { type: 'text', text: string } | { type: 'example', text: string } | { type: 'hash', hash: string }
 *   | { type: 'undoOffered', text: string } | { type: 'toast' } | { type: 'marked', key: string, text: string | null }} Action
 *   `answer`: an answer of the worker, `text` the text its job compiled; `text`: the text on
 *   screen changed; `example`: the example config arrived; `hash`: the share link written or
 *   read; `undoOffered`: a destructive edit left `text`, Undo offered; `toast`: another toast
 *   replaced the Undo; `marked`: the problems `key` were marked in the JSON view of `text`
 */

/**
 * @param {State} state
 * @param {Action} action
 * @returns {State}
 */
export function reduce(state, action) {
  switch (action.type) {
    case 'answer':
      return applyAnswer(state, action.answer, action.text);
    case 'failures':
      return JSON.stringify(action.failures) === JSON.stringify(state.failures) ? state : { ...state, failures: action.failures };
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
      return { ...state, marked: { key: action.key, text: action.text } };
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
 * @param {State} state
 * @param {Answer} a
 * @param {string | undefined} text
 * @returns {State}
 */
function applyAnswer(state, a, text) {
  let next = state;
  if (a.wasm) next = { ...next, wasm: a.wasm };
  if (a.limits) next = { ...next, limits: a.limits };
  if (a.compile) {
    const c = a.compile;
    const compiledText = text ?? state.compiledText ?? '';
    next = {
      ...next,
      valid: c.valid,
      hasEngine: c.hasEngine,
      compiledText,
      errors: c.errors.map((d) => plainSyntaxDiagnostic(compiledText, d)),
      warnings: c.valid ? next.warnings : [],
    };
  }
  if (a.analysis) {
    const rules = assemble(next.lists.rules, a.analysis.config.rules);
    const summary = assemble(next.lists.summary, a.analysis.summary);
    next = {
      ...next,
      warnings: a.analysis.warnings,
      config: { ...a.analysis.config, rules },
      summary,
      lists: { ...next.lists, rules, summary },
    };
  }
  if (a.eval) {
    const ex = a.eval.explanation;
    if (ex) {
      const verdicts = assemble(next.lists.verdicts, ex.rules);
      next = { ...next, evaluation: { ...a.eval, explanation: { ...ex, rules: verdicts } }, lists: { ...next.lists, verdicts } };
    } else {
      next = { ...next, evaluation: { ...a.eval, explanation: null } };
    }
  }
  return next;
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
 * The problems `key` still to be marked in the JSON view: their places belong to the compiled
 * text, so only when it is the text on screen, and only when they changed (an unchanged empty
 * list is no transaction for the editor).
 * @param {State} state
 * @param {string} key
 */
export const needsMarks = (state, key) => isCurrent(state)
  && !(key === state.marked.key && (key === '[]' || state.marked.text === state.text));
