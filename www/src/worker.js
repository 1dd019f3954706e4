// The editor's Web Worker: it holds the compiled engine (the WASM package, ../../pkg/) and does
// every engine call, so compiling a 1,000-rule config never blocks the page. The page sends jobs
// (engine-client.js keeps at most one in flight and merges the rest), the worker replies to each
// with what changed, one answer per part of the work, each named by its kind: the `Job`, `Reply`
// and `Answer` of protocol.js.
//
// Scenarios, coverage and replay (docs/contract/as-code.md) need the second WASM module (config as code): it is
// fetched on the first job that asks for one of them, never before (asCode.js).

import init, * as nudge from '../../pkg/index.js';
import { asCodeJob, needsAsCode } from './as-code.js';
import { fieldsOutcome } from './protocol.js';

/** @typedef {import('./protocol.js').Job} Job */
/** @typedef {import('./protocol.js').Answer} Answer */
/** @typedef {import('./protocol.js').Reply} Reply */

const ready = init({ module_or_path: new URL('../../pkg/wasm/nudge_rules_bg.wasm', import.meta.url) });
let asCodeLoading = null;
/** Loads the config-as-code module once, on first need. */
function asCodeReady() {
  asCodeLoading ??= nudge.initConfigAsCode({
    module_or_path: new URL('../../pkg/wasm/config-as-code/nudge_rules_bg.wasm', import.meta.url),
  });
  return asCodeLoading;
}

const w = {
  engine: null, // the last engine that compiled; stays in use while the text has errors
  gen: 0, // bumped on every successful compile
  text: null,
  valid: false,
  errors: [],
  mapKey: null,
  benchKey: null,
  pagesKey: null,
  invalidResponse: null, // { text, response } of the last invalid config
  limitsSent: false,
};

/**
 * Long lists (the rules of a 1,000-rule config, their verdicts) go to the page as deltas: the
 * length and the items that changed since the last answer, so that a keystroke that changes one
 * rule moves one rule across, not a thousand (structured clone of every item cost the page about
 * 18 ms per keystroke at 1,000 rules). The page's store (store.js) puts the lists back together.
 */
/** @type {Map<string, any>} list name -> JSON of each item last sent (or of the value, `ifChanged`) */
const sent = new Map();

/**
 * @template T
 * @param {string} name
 * @param {T[]} items
 * @returns {import('./protocol.js').Delta<T>}
 */
function delta(name, items) {
  const before = sent.get(name) ?? [];
  const now = new Array(items.length);
  const changed = [];
  for (let i = 0; i < items.length; i++) {
    now[i] = JSON.stringify(items[i]);
    if (before[i] !== now[i]) changed.push([i, items[i]]);
  }
  sent.set(name, now);
  return { delta: true, n: items.length, changed };
}

/** `value`, or undefined when it is what was sent last under `name` (a map, the bench rows). */
function ifChanged(name, value) {
  const json = JSON.stringify(value);
  if (sent.get(name) === json) return undefined;
  sent.set(name, json);
  return value;
}

function asDiagnostics(err) {
  if (Array.isArray(err?.diagnostics) && err.diagnostics.length) return err.diagnostics;
  return [{ severity: 'error', code: 'error', path: '', message: String(err?.message || err), line: null, column: null }];
}

/**
 * @param {string} text
 * @returns {import('./protocol.js').Compile}
 */
function compile(text) {
  const started = performance.now();
  /** @type {{ fresh?: boolean }} */
  const out = {};
  try {
    const next = new nudge.NudgeEngine(text);
    w.engine?.free();
    w.engine = next;
    w.gen += 1;
    w.valid = true;
    w.errors = [];
    out.fresh = true;
  } catch (err) {
    w.valid = false;
    w.errors = asDiagnostics(err);
  }
  return Object.assign(out, {
    valid: w.valid,
    errors: w.errors,
    gen: w.gen,
    hasEngine: Boolean(w.engine),
    compileMs: performance.now() - started,
  });
}

/** What the page shows beside the preview: lint warnings, one sentence per rule, the config. */
function analysis() {
  const { engine } = w;
  const config = engine.config();
  return {
    gen: w.gen,
    warnings: engine.lint(),
    summary: delta('summary', engine.summary()),
    config: { ...config, rules: delta('rules', config.rules) },
  };
}

/**
 * What a server holding this config answers for a request body: `{ status, body }`, from the
 * engine (`previewResponse`, docs/JS-API.md): 200 with the result, 400 with the InvalidRequest
 * body, or, for an invalid config, 500 with the engine's own InvalidConfig body (docs/contract/preview.md). That
 * 500 does not depend on the request, so it is computed once per text.
 */
function apiResponse(requestBody) {
  if (w.valid) return w.engine.previewResponse(requestBody);
  if (w.invalidResponse?.text !== w.text) {
    w.invalidResponse = { text: w.text, response: nudge.previewResponse(w.text, requestBody) };
  }
  return w.invalidResponse.response;
}

function evaluate(state) {
  const { engine } = w;
  let explanation = null;
  let requestError = null;
  try {
    explanation = engine.explain(state);
  } catch (err) {
    requestError = { message: err.message, code: err.diagnostics?.[0]?.code ?? null };
  }
  const requestBody = JSON.stringify({ session_state: state });
  let report = null;
  try {
    report = engine.pageReport(state.page_url);
  } catch {
    report = null;
  }
  if (explanation) {
    // Each condition as a sentence for a merchant, beside it (the engine's words: crate::words).
    const words = engine.conditionSentences(state);
    explanation.rules.forEach((r, i) => {
      r.sentences = words.rules[i] ?? [];
    });
    explanation.quiet_words = words.quiet_zone;
    explanation.rules = delta('verdicts', explanation.rules);
  }
  return { state, explanation, requestError, requestBody, response: apiResponse(requestBody), report };
}

/**
 * The storefront's preview alone (`{ state, path, result }`, microseconds): posted right after a
 * compile, ahead of the explanation (about 6 ms for 1,000 verdicts, and as long again to compare
 * them with the last ones sent). Null for a state the engine rejects: the full evaluation says why.
 */
function quickPreview(state) {
  try {
    const report = w.engine.pageReport(state.page_url);
    if (report.url_error) return null;
    return { state, path: report.path, result: w.engine.preview(state) };
  } catch {
    return null;
  }
}

function decisionMap(url) {
  try {
    const dm = w.engine.decisionMap(url);
    if (dm.url_error) return { url, path: null, regions: [], quietZone: null, error: dm.url_error.message };
    return { url, path: dm.path, regions: dm.regions, quietZone: dm.quiet_zone, error: null };
  } catch (err) {
    return { url, path: null, regions: [], quietZone: null, error: err.message }; // a bug, shown rather than thrown
  }
}

/** The URL bench: each line's report and what fires there at the current intent and idle time. */
function bench(urls, state) {
  const { engine } = w;
  return urls.map((url) => {
    const report = engine.pageReport(url);
    const outcome = report.url_error ? { kind: 'rejected' } : fieldsOutcome(engine.previewFields(state.intent_score, url, state.idle_ms));
    return { url, report, outcome };
  });
}

/**
 * A pattern typed into a chip: `{ text, error: { code, message } | null, fixes, matches }`: the
 * engine's check of the pattern alone (`NudgeEngine.checkPattern`: why it is invalid, and the
 * valid patterns to offer instead), else which of `pages` it matches (the reports of an engine
 * whose only quiet zone it is).
 * @param {import('./protocol.js').PatternQuery} query
 * @param {string[]} pages
 * @returns {import('./protocol.js').PatternCheck}
 */
function checkPattern({ text, caseSensitive }, pages) {
  const finding = nudge.NudgeEngine.checkPattern(text, caseSensitive);
  if (finding) return { text, error: { code: finding.code, message: finding.message }, fixes: finding.fixes, matches: [] };
  let probe;
  try {
    probe = new nudge.NudgeEngine(JSON.stringify({ version: 1, case_sensitive: caseSensitive, quiet_zones: [text] }));
  } catch (err) {
    // Valid alone, refused in a config (a glob too large for the pattern set): the config's words.
    const d = asDiagnostics(err)[0];
    return { text, error: { code: d.code, message: d.message }, fixes: [], matches: [] };
  }
  try {
    const matches = pages.filter((url) => probe.pageReport(url).matches.length > 0);
    return { text, error: null, fixes: [], matches };
  } finally {
    probe.free();
  }
}

/**
 * Answers a job. After a new engine compiled, the preview goes first (`post` of a partial reply:
 * the compile and the storefront's preview), then the rest (the evaluation with every rule's
 * verdict, lint, summary, config, map, bench, scenarios and replay).
 * @param {Job} job
 * @param {(reply: Reply) => void} post
 * @returns {Reply}
 */
function handle(job, post) {
  const started = performance.now();
  /** @type {Answer[]} */
  let answers = [];
  let fresh = false;
  if (job.text !== undefined && job.text !== w.text) {
    w.text = job.text;
    const compiled = compile(job.text);
    answers.push({ kind: 'compile', compile: compiled });
    fresh = Boolean(compiled.fresh);
  }
  if (!w.limitsSent) {
    // The limits of a config, once: from then on the page's are the engine's (limits.js).
    w.limitsSent = true;
    answers.push({ kind: 'limits', limits: nudge.NudgeEngine.limits() });
  }
  if (job.patterns) answers.push({ kind: 'patterns', checks: job.patterns.map((query) => checkPattern(query, job.pages || [])) });
  const state = job.state;
  if (!w.engine) {
    if (state) answers.push({ kind: 'noEngine', url: state.page_url });
    return { seq: job.seq, answers };
  }
  if (fresh && state) {
    // The new preview first; the explanation, lint, rule sentences and the rest follow.
    answers.push({ kind: 'preview', preview: quickPreview(state) });
    post({ seq: job.seq, partial: true, answers, workerMs: performance.now() - started });
    answers = [];
  }
  if (state) answers.push({ kind: 'eval', evaluation: evaluate(state) });
  if (fresh) answers.push({ kind: 'analysis', analysis: analysis() });
  if (state) {
    const mapKey = `${w.gen}\u0000${state.page_url}`;
    if (mapKey !== w.mapKey || job.force) {
      w.mapKey = mapKey;
      const map = job.force ? decisionMap(state.page_url) : ifChanged('map', decisionMap(state.page_url));
      if (map) answers.push({ kind: 'map', map });
    }
  }
  if (job.bench && state) {
    const key = `${w.gen}\u0000${state.intent_score}\u0000${state.idle_ms}\u0000${job.bench.join('\n')}`;
    if (key !== w.benchKey || job.force) {
      w.benchKey = key;
      const rows = ifChanged('bench', bench(job.bench, state));
      if (rows) answers.push({ kind: 'bench', rows });
    }
  }
  if (job.pages) {
    const key = `${w.gen}\u0000${job.pages.join('\n')}`;
    if (key !== w.pagesKey || job.force) {
      w.pagesKey = key;
      const reports = ifChanged('pages', job.pages.map((url) => w.engine.pageReport(url)));
      if (reports) answers.push({ kind: 'pages', reports });
    }
  }
  const asCode = asCodeJob(job, { engine: w.engine, gen: w.gen, text: w.text, valid: w.valid });
  return { seq: job.seq, answers: [...answers, ...asCode.answers], later: asCode.later || undefined };
}

self.onmessage = async ({ data }) => {
  try {
    await ready;
  } catch (err) {
    self.postMessage({ seq: data.seq, answers: [{ kind: 'fatal', message: `The engine did not load: ${err.message}` }] });
    return;
  }
  if (needsAsCode(data)) {
    // A failure is reported by each config-as-code answer (asCodeJob), the rest still runs.
    await asCodeReady().catch((err) => console.warn('nudge-rules: config as code did not load:', err));
  }
  const started = performance.now();
  /** @type {Reply} */
  let out;
  try {
    out = handle(data, (partial) => self.postMessage(partial));
  } catch (err) {
    out = { seq: data.seq, answers: [{ kind: 'failed', message: String(err?.stack || err) }] };
  }
  out.workerMs = performance.now() - started;
  if (!w.reportedLoad) {
    // How the module arrived (the page cannot see the worker's fetches): bytes on the wire and
    // decoded, and when the download ended. The entry may be recorded a little after the module
    // is ready; then it is posted on its own (`aside`) when it is.
    w.reportedLoad = true;
    /** @returns {import('./protocol.js').Answer} */
    const report = (entry) => ({ kind: 'wasm', load: { encoded: entry.encodedBodySize, decoded: entry.decodedBodySize, responseEnd: entry.responseEnd } });
    const entry = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'));
    if (entry) {
      out.answers.push(report(entry));
    } else {
      const observer = new PerformanceObserver((list) => {
        const found = list.getEntries().find((e) => e.name.endsWith('.wasm'));
        if (found) {
          observer.disconnect();
          /** @type {Reply} */
          const aside = { aside: true, answers: [report(found)] };
          self.postMessage(aside);
        }
      });
      observer.observe({ type: 'resource', buffered: true });
    }
  }
  self.postMessage(out);
};
