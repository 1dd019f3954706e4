// The worker's side of config as code (SPEC 8, docs/JS-API.md "For an editor"): the scenario
// file checked against every new engine (test report and coverage), "save this visitor as a
// scenario", and recorded sessions replayed before and after the edit. Runs in the Web Worker
// (worker.js), on the second WASM module, which the worker loads on the first job that needs it.

import { NudgeEngine, RecordedSessions } from '../../pkg/index.js';

const state = {
  scenarios: null, // the scenario file's text, as the page last sent it
  scenariosKey: null,
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
 * The config-as-code part of an answer: `scenarios` ({ text, report, coverage } or { text, error },
 * for the file `text`) when the
 * engine or the file changed, `savedScenario`, `replay` ({ before, after, sessions, label } or
 * { error }) when the engine, the sessions or the baseline changed, `diff` when asked.
 */
export function asCodeJob(job, { engine, gen, text, valid }) {
  const out = {};
  if (job.scenarios !== undefined) state.scenarios = job.scenarios;
  if (job.saveScenario) {
    try {
      out.savedScenario = engine.scenario(job.saveScenario.name, job.saveScenario.state);
    } catch (err) {
      out.savedScenario = { error: message(err) };
    }
  }
  if (state.scenarios !== null) {
    const key = `${gen}\u0000${state.scenarios}`;
    if (key !== state.scenariosKey || job.force) {
      state.scenariosKey = key;
      try {
        out.scenarios = { text: state.scenarios, report: engine.test(state.scenarios), coverage: engine.coverage(state.scenarios), valid };
      } catch (err) {
        out.scenarios = { text: state.scenarios, error: message(err) };
      }
    }
  }
  if (job.sessions !== undefined) loadSessions(job.sessions);
  if (job.replayBase !== undefined) setBase(job.replayBase);
  if (state.sessions) out.replay = replay(engine, gen, job.force);
  if (job.diff && state.sessions?.recorded && state.base?.engine) {
    try {
      out.diff = NudgeEngine.diff(state.base.text, text, [state.sessions.text]);
    } catch (err) {
      out.diff = { error: message(err) };
    }
  }
  return out;
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
    return {
      label: sessions.label,
      sessions: sessions.recorded.length,
      before: state.before,
      baseError: base?.error ?? null,
      after: engine.replaySummary(sessions.recorded),
    };
  } catch (err) {
    return { error: message(err), label: sessions.label };
  }
}
