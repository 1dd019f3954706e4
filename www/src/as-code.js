// The worker's side of config as code (docs/contract/as-code.md, docs/JS-API.md "For an editor"): the scenario
// file checked against every new engine (test report and coverage), "save this visitor as a
// scenario", and recorded sessions replayed before and after the edit. Runs in the Web Worker
// (worker.js), on the second WASM module, which the worker loads on the first job that needs it.

import { NudgeEngine, RecordedSessions } from '../../pkg/index.js';

const state = {
  scenarios: null, // the scenario file's text, as the page last sent it
  scenariosKey: null, // the engine generation and file of the last test report
  coverageKey: null, // ... and of the last coverage
  sessions: null, // { text, label, recorded: RecordedSessions | null, error }
  base: null, // { text, engine: NudgeEngine | null, error } the config replay compares against
  beforeKey: null,
  before: null,
  afterKey: null,
};

/** True when the job asks for something that needs the config-as-code module. */
export function needsAsCode(job) {
  return job.scenarios !== undefined || job.saveScenario !== undefined || job.sessions !== undefined ||
    job.replayBase !== undefined || job.diff !== undefined || state.scenarios !== null || state.sessions !== null;
}

function message(err) {
  const d = err?.diagnostics?.[0];
  if (d) return d.line ? `line ${d.line}, column ${d.column}: ${d.message}` : d.message;
  return String(err?.message || err);
}

/**
 * The config-as-code answers of a reply: `scenarios` ({ text, report, coverage?, valid } or
 * { text, error }, for the file `text`) when the engine or the file changed and the answer is not
 * the one sent last, `savedScenario`, `replay` ({ before, after, sessions, label } or { error })
 * when the engine, the sessions or the baseline changed, `diff` when asked; and `later` when the
 * coverage or the replay of this engine is still to come (in a job with `asCode`).
 * @param {import('./protocol.js').Job} job
 * @param {{ engine: import('../../pkg/index.js').NudgeEngine, gen: number, text: string, valid: boolean }} current
 * @returns {{ answers: import('./protocol.js').Answer[], later: boolean }}
 */
export function asCodeJob(job, { engine, gen, text, valid }) {
  /** @type {import('./protocol.js').Answer[]} */
  const answers = [];
  let later = false;
  if (job.scenarios !== undefined) state.scenarios = job.scenarios;
  if (job.saveScenario) {
    let scenario;
    try {
      scenario = engine.scenario(job.saveScenario.name, job.saveScenario.state);
    } catch (err) {
      scenario = { error: message(err) };
    }
    answers.push({ kind: 'savedScenario', scenario });
  }
  // Coverage and replay cost about 15 and 30 ms at 1,000 rules (with their comparison to the last
  // answer): a keystroke gets the scenarios' pass or fail at once (`engine.test`, microseconds),
  // and `later` asks the page for a follow-up job (`asCode`), which engine-client.js sends once
  // typing pauses, for the coverage and the replay. A file, sessions or baseline the page sends
  // is answered in full at once.
  const explicit = Boolean(job.force || job.scenarios !== undefined || job.sessions !== undefined || job.replayBase !== undefined);
  const full = explicit || Boolean(job.asCode);
  if (state.scenarios !== null) {
    const key = `${gen}\u0000${state.scenarios}`;
    const checked = key === state.scenariosKey && !job.force;
    const covered = key === state.coverageKey && !job.force;
    // A file the page sends is answered even when it was checked before (an import of the same
    // file again: the page waits for its answer).
    if (job.scenarios !== undefined || !checked || (full && !covered)) {
      state.scenariosKey = key;
      let answer;
      try {
        const report = engine.test(state.scenarios);
        answer = { text: state.scenarios, report, why: whyFailing(engine, report), valid };
        if (full) {
          answer.coverage = engine.coverage(state.scenarios);
          state.coverageKey = key;
        } else {
          later = true;
        }
      } catch (err) {
        answer = { text: state.scenarios, error: message(err) };
        state.coverageKey = key;
      }
      // Most keystrokes (a message, a button text) change no result and no coverage: nothing is
      // sent then, and the page redraws neither the panel nor the rule cards' coverage.
      const scenarios = unlessSent('scenarios', answer, explicit);
      if (scenarios) answers.push({ kind: 'scenarios', scenarios });
    }
  }
  if (job.sessions !== undefined) loadSessions(job.sessions);
  if (job.replayBase !== undefined) setBase(job.replayBase);
  if (state.sessions) {
    const replayed = full ? replay(engine, gen, explicit) : undefined;
    if (replayed) answers.push({ kind: 'replay', replay: replayed });
    else if (!full && state.afterKey !== gen) later = true;
  }
  if (job.diff && state.sessions?.recorded && state.base?.engine) {
    let diff;
    try {
      diff = withViewTimes(NudgeEngine.diff(state.base.text, text, [state.sessions.text]), engine);
    } catch (err) {
      diff = { error: message(err) };
    }
    answers.push({ kind: 'diff', diff });
  }
  return { answers, later };
}

/** The most failing scenarios whose "why" is worked out per answer (each is one explain). */
const WHY_MAX = 10;
let parsedFile = { text: null, scenarios: [] };

/**
 * Why each failing scenario that expects a rule does not get it, by result index (the first
 * `WHY_MAX`): that rule's verdict and conditions for the scenario's visitor, which the page words
 * as the Why panel does (plain.js `whyNot`). A rule the config does not have: `{ missing: true }`.
 */
function whyFailing(engine, report) {
  if (report.failed === 0) return {};
  if (parsedFile.text !== state.scenarios) parsedFile = { text: state.scenarios, scenarios: JSON.parse(state.scenarios).scenarios };
  const out = {};
  let n = 0;
  report.results.forEach((r, i) => {
    if (r.passed || r.expected?.rule === undefined || n >= WHY_MAX) return;
    n += 1;
    let ex;
    try {
      ex = engine.explain(parsedFile.scenarios[i].session_state);
    } catch {
      return; // a visitor the engine refuses: the reason says so
    }
    const v = ex.rules.find((x) => x.id === r.expected.rule);
    const words = v ? engine.conditionSentences(parsedFile.scenarios[i].session_state).rules[v.index] ?? [] : [];
    out[i] = v
      ? {
        verdict: v.verdict, index: v.index,
        conditions: v.conditions.map(({ condition, holds }, k) => ({ condition, holds, sentence: words[k] ?? '' })),
        intent_score: ex.intent_score, idle_ms: ex.idle_ms, path: ex.path, page_url: ex.page_url,
        fired_rule_id: ex.fired_rule_id, quiet_zone: ex.quiet_zone?.pattern ?? null,
      }
      : { missing: true };
  });
  return out;
}

/**
 * The diff's changes with the time of each page view (`occurred_at`, and `offset_ms` from the
 * session's first event), so that a page viewed twice in a session reads as two views: the
 * replay's pages of the changed sessions, by session id and page index.
 */
function withViewTimes(diff, engine) {
  const wanted = new Set(diff.changes.map((c) => c.session_id).filter((id) => id !== null));
  if (!wanted.size) return diff;
  const pages = new Map();
  for (const session of engine.replay(state.sessions.recorded).sessions) {
    if (wanted.has(session.id)) pages.set(session.id, session.pages);
  }
  for (const c of diff.changes) {
    const page = c.page_index === null ? null : pages.get(c.session_id)?.[c.page_index];
    if (page) Object.assign(c, { occurred_at: page.occurred_at, offset_ms: page.offset_ms });
  }
  return diff;
}

const lastSent = new Map(); // answer name -> JSON of the answer last sent

/** `answer`, or undefined when it is what was last sent under `name` (and `force` is not set). */
function unlessSent(name, answer, force) {
  const json = JSON.stringify(answer);
  if (!force && lastSent.get(name) === json) return undefined;
  lastSent.set(name, json);
  return answer;
}

function loadSessions(sessions) {
  state.sessions?.recorded?.free();
  state.beforeKey = null;
  state.afterKey = null;
  if (sessions === null) {
    state.sessions = null;
    return;
  }
  try {
    state.sessions = { ...sessions, recorded: new RecordedSessions(sessions.text), error: null };
  } catch (err) {
    state.sessions = { ...sessions, recorded: null, error: message(err) };
  }
}

function setBase(text) {
  state.base?.engine?.free();
  state.beforeKey = null;
  try {
    state.base = { text, engine: new NudgeEngine(text), error: null };
  } catch (err) {
    state.base = { text, engine: null, error: message(err) };
  }
}

function replay(engine, gen, force) {
  const { sessions, base } = state;
  if (sessions.error) return { error: sessions.error, label: sessions.label };
  const beforeKey = base?.text ?? null;
  const afterKey = gen;
  if (!force && beforeKey === state.beforeKey && afterKey === state.afterKey) return undefined;
  try {
    if (beforeKey !== state.beforeKey) {
      state.beforeKey = beforeKey;
      state.before = base?.engine ? base.engine.replaySummary(sessions.recorded) : null;
    }
    state.afterKey = afterKey;
    return unlessSent('replay', {
      label: sessions.label,
      sessions: sessions.recorded.length,
      before: state.before,
      baseError: base?.error ?? null,
      after: engine.replaySummary(sessions.recorded),
    }, force);
  } catch (err) {
    return { error: message(err), label: sessions.label };
  }
}
