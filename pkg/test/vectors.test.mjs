// Replays every conformance vector file in tests/vectors/ (format: tests/vectors/README.md)
// against the built WASM package, with the comparison rules of the native runner
// (tests/integration/vectors.rs), so that the platforms cannot drift apart.
//
// The "native rules" suites do exactly what tests/integration/vectors.rs does: configs compiled from text
// (`config` objects written out with JSON.stringify, as the runner does with serde_json), requests
// answered with previewBody. The "object API agrees" suites then check that the JS-only entry
// points (a config given as an object, preview, explain, previewFields, validateConfig) give the
// same answers.
//
// Caveat: JSON.parse turns 50.0 into 50 and rounds integers beyond 2^53, so a vector with such a
// number in an inline `config` or `request` would reach the engine differently than in the
// native runner (none has one today; use `config_text` / `request_text` for those).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';

import { NudgeEngine, RecordedSessions, normalizePageUrl, readRepoFile, validateConfig } from './load.mjs';

const VECTOR_DIR = 'tests/vectors/';

function load(file) {
  const doc = JSON.parse(readRepoFile(VECTOR_DIR + file));
  assert.ok(Array.isArray(doc.cases) && doc.cases.length > 0, `${file} has no cases`);
  return doc.cases;
}

/** The config text of a case: `config_file`, `config_text` or `config` (inline object). */
function configText(c) {
  if (typeof c.config_file === 'string') return readRepoFile(c.config_file);
  if (typeof c.config_text === 'string') return c.config_text;
  return JSON.stringify(c.config);
}

function requestText(c) {
  return typeof c.request_text === 'string' ? c.request_text : JSON.stringify(c.request);
}

/** Compiles, returning the engine or the thrown error (checked to be a proper one). */
function compile(config) {
  try {
    return { engine: new NudgeEngine(config) };
  } catch (e) {
    assertThrownError(e, 'InvalidConfig');
    return { error: e };
  }
}

/** Every thrown error is a real Error with kind and a non-empty diagnostics array. */
function assertThrownError(e, kind) {
  assert.ok(e instanceof Error, `thrown value is not an Error: ${e}`);
  assert.equal(e.kind, kind, `kind of: ${e.message}`);
  assert.ok(Array.isArray(e.diagnostics) && e.diagnostics.length > 0, 'diagnostics');
  assert.ok(typeof e.message === 'string' && e.message.length > 0, 'message');
}

function containsAll(text, wanted) {
  for (const w of wanted ?? []) {
    assert.ok(text.includes(w), `${JSON.stringify(text)} does not contain ${JSON.stringify(w)}`);
  }
}

function expectPaths(got, wanted) {
  for (const w of wanted ?? []) {
    assert.ok(got.includes(w), `error path ${JSON.stringify(w)} not reported; got ${JSON.stringify(got)}`);
  }
}

const paths = (e) => e.diagnostics.map((d) => d.path);

/** A response body against `expect.response`, with the reason rules of the README. */
function checkResponse(body, expect) {
  const actual = JSON.parse(body);
  const data = actual.data;
  assert.ok(data && typeof data === 'object', `no data in ${body}`);
  const fired = data.would_fire === true;
  let reason;
  if (fired) {
    assert.ok(data.nudge && 'reason' in data.nudge, `fired without data.nudge.reason: ${body}`);
    reason = data.nudge.reason;
    delete data.nudge.reason;
    assert.ok(!('reason' in data), `data.reason present although a nudge fires: ${body}`);
  } else {
    assert.ok('reason' in data, `no data.reason when nothing fires: ${body}`);
    reason = data.reason;
    delete data.reason;
  }
  assert.deepEqual(actual, expect.response);
  containsAll(typeof reason === 'string' ? reason : '', expect.reason_contains);
}

// ---------------------------------------------------------------------------------------------

function previewNative(c) {
  const expect = c.expect;
  const { engine, error } = compile(configText(c));
  if (expect.error === 'InvalidConfig') {
    assert.ok(error, 'config compiled, want InvalidConfig');
    expectPaths(paths(error), expect.paths);
    return;
  }
  assert.ok(engine, `config rejected: ${error?.message}`);
  const body = engine.previewBody(requestText(c));
  const parsed = JSON.parse(body);
  if (expect.error === 'InvalidRequest') {
    assert.ok(!('data' in parsed), `got ${body}, want InvalidRequest`);
    assert.equal(parsed.error, 'InvalidRequest', `wrong error body ${body}`);
    assert.deepEqual(Object.keys(parsed), ['error', 'message']);
    containsAll(parsed.message, expect.message_contains);
  } else {
    assert.ok(!('error' in parsed), `unexpected error ${body}`);
    checkResponse(body, expect);
  }
}

/** Only `session_state` with the three known fields, typed so that previewFields can take them. */
function fieldsOf(ss) {
  if (!ss || typeof ss !== 'object' || Array.isArray(ss)) return null;
  const known = ['intent_score', 'page_url', 'idle_ms'];
  if (Object.keys(ss).some((k) => !known.includes(k))) return null;
  if (typeof ss.intent_score !== 'number' || typeof ss.page_url !== 'string') return null;
  if (ss.idle_ms !== undefined && typeof ss.idle_ms !== 'number') return null;
  return [ss.intent_score, ss.page_url, ss.idle_ms ?? 0];
}

function previewObjectApi(c) {
  const expect = c.expect;
  const text = compile(configText(c));
  if (c.config !== undefined) {
    const obj = compile(c.config);
    assert.equal(!!obj.engine, !!text.engine, 'object and text configs disagree on validity');
    if (obj.error) {
      assert.deepEqual([...paths(obj.error)].sort(), [...paths(text.error)].sort());
      for (const d of obj.error.diagnostics) {
        assert.equal(d.line, null);
        assert.equal(d.column, null);
      }
    }
  }
  if (expect.error === 'InvalidConfig' || !text.engine) return;
  const engine = c.config !== undefined ? new NudgeEngine(c.config) : text.engine;
  const rules = engine.config().rules;
  const body = JSON.parse(text.engine.previewBody(requestText(c)));

  // preview / explain / previewFields on the session_state object.
  if (c.request === undefined || Object.keys(c.request).join() !== 'session_state') return;
  const ss = c.request.session_state;
  const fields = fieldsOf(ss);
  if (body.error) {
    assert.throws(() => engine.preview(ss), (e) => {
      assertThrownError(e, body.error);
      assert.equal(e.message, body.message, 'preview and previewBody messages differ');
      return true;
    });
    // A string page_url that docs/contract/urls.md rejects: explain reports it instead of throwing.
    const urlRejected =
      typeof ss?.page_url === 'string' && body.message.startsWith('session_state.page_url: ');
    let thrown = null;
    try {
      const ex = engine.explain(ss);
      assert.ok(urlRejected, 'explain accepted a state preview rejects');
      assert.equal(ex.result, null);
      assert.equal(ex.path, null);
      assert.ok(ex.url_error && typeof ex.url_error.code === 'string');
    } catch (e) {
      thrown = e;
    }
    if (thrown && thrown.code === 'ERR_ASSERTION') throw thrown;
    if (thrown) {
      assertThrownError(thrown, body.error);
      assert.equal(thrown.message, body.message, 'explain and previewBody messages differ');
    }
    if (fields) assert.equal(engine.previewFields(...fields), -3, 'previewFields of a rejected state');
    return;
  }
  const result = engine.preview(ss);
  assert.deepEqual(result, body.data);
  const ex = engine.explain(ss);
  assert.deepEqual(ex.result, body.data, 'explain().result differs from previewBody');
  // The structured decision (docs/contract/storefront.md, docs/contract/caps.md) says what the body says, with the whole nudge.
  const decision = engine.decide(ss);
  assert.equal(decision.would_fire, body.data.would_fire);
  assert.equal(decision.rule_id, ex.fired_rule_id);
  assert.equal(decision.held_out_rule_id, ex.held_out_rule_id ?? null);
  assert.equal(decision.quiet_zone, ex.quiet_zone?.pattern ?? null);
  if (body.data.would_fire) {
    const { reason: _reason, ...nudge } = body.data.nudge;
    const { cta_url: _link, ...configured } = decision.nudge;
    assert.deepEqual(configured, nudge);
  } else {
    assert.equal(decision.nudge, null);
  }
  if (fields) {
    const code = engine.previewFields(...fields);
    if (body.data.would_fire) {
      assert.ok(code >= 0, `previewFields ${code} for a firing state`);
      assert.equal(rules[code].id, ex.fired_rule_id);
      const { reason: _reason, ...nudge } = body.data.nudge;
      assert.deepEqual(rules[code].nudge, nudge);
    } else {
      assert.equal(code, ex.quiet_zone ? -2 : -1);
    }
  }
}

// ---------------------------------------------------------------------------------------------

function normalizeNative(c) {
  const options = { caseSensitive: c.case_sensitive === true };
  if (typeof c.expect === 'string') {
    assert.equal(normalizePageUrl(c.input, options), c.expect);
    return;
  }
  assert.throws(
    () => normalizePageUrl(c.input, options),
    (e) => {
      assertThrownError(e, 'InvalidRequest');
      assert.ok(typeof e.code === 'string' && e.code.length > 0, 'code');
      assert.equal(e.code, e.diagnostics[0].code);
      if (c.expect_code !== undefined) assert.equal(e.code, c.expect_code);
      containsAll(e.diagnostics[0].message, c.message_contains);
      return true;
    },
    'accepted, want rejected',
  );
}

// ---------------------------------------------------------------------------------------------

function configNative(c) {
  const wanted = c.expect_paths;
  const { error } = compile(configText(c));
  if (wanted.length === 0) {
    assert.ok(!error, `want valid, got ${error?.message}`);
    return;
  }
  assert.ok(error, `compiled, want errors at ${JSON.stringify(wanted)}`);
  expectPaths(paths(error), wanted);
  if (typeof c.expect_line === 'number') {
    const d = error.diagnostics[0];
    assert.deepEqual([d.line, d.column], [c.expect_line, c.expect_column ?? null], JSON.stringify(d));
  }
}

function configObjectApi(c) {
  const text = configText(c);
  const compiled = compile(text);
  const validation = validateConfig(text);
  assert.equal(validation.valid, !compiled.error);
  assert.deepEqual(validation.errors, compiled.error ? compiled.error.diagnostics : []);
  if (c.config === undefined) return;
  const obj = compile(c.config);
  const objValidation = validateConfig(c.config);
  assert.equal(!obj.error, !compiled.error, 'object and text configs disagree on validity');
  assert.equal(objValidation.valid, !obj.error);
  if (obj.error) {
    assert.deepEqual([...paths(obj.error)].sort(), [...paths(compiled.error)].sort());
    assert.deepEqual(objValidation.errors, obj.error.diagnostics);
    for (const d of obj.error.diagnostics) assert.deepEqual([d.line, d.column], [null, null]);
  } else {
    assert.deepEqual(obj.engine.config(), compiled.engine.config());
    assert.deepEqual(
      objValidation.warnings.map(({ line: _l, column: _c, ...d }) => d),
      validation.warnings.map(({ line: _l, column: _c, ...d }) => d),
    );
  }
}

/** explain.json: the explanation compared as tests/integration/vectors.rs does. */
function explainNative(c) {
  const { engine, error } = compile(configText(c));
  assert.ok(engine, error?.message);
  const got = engine.explain(c.state);
  const want = c.expect;
  const check = (key, actual) => {
    if (key in want) assert.deepEqual(actual, want[key], key);
  };
  check('path', got.path);
  check('url_error', got.url_error?.code ?? null);
  check('quiet_zone', got.quiet_zone?.pattern ?? null);
  check('fired_rule_id', got.fired_rule_id);
  check('earliest_idle_ms', got.earliest_idle_ms);
  check('earliest_rule_id', got.earliest_rule_id);
  check('rules', got.rules.length);
  const rule = (id) => {
    const r = got.rules.find((x) => x.id === id);
    assert.ok(r, `no rule ${id}`);
    return r;
  };
  for (const [id, verdict] of Object.entries(want.verdicts ?? {})) assert.equal(rule(id).verdict, verdict, id);
  for (const [id, failing] of Object.entries(want.failing ?? {})) {
    assert.deepEqual(rule(id).conditions.filter((x) => !x.holds).map((x) => x.condition), failing, id);
  }
  // The explanation's result is exactly the preview's.
  if (got.path !== null) assert.deepEqual(got.result, engine.preview(c.state));
}

/** lint.json: codes and paths of the warnings, from engine.lint() and validateConfig alike. */
function lintNative(c) {
  const text = configText(c);
  const { engine, error } = compile(text);
  assert.ok(engine, error?.message);
  const got = engine.lint().map((d) => [d.code, d.path]);
  for (const d of engine.lint()) assert.equal(d.severity, 'warning');
  assert.deepEqual(validateConfig(text).warnings.map((d) => [d.code, d.path]), got);
  for (const w of c.expect) {
    assert.ok(got.some(([code, path]) => code === w.code && path === w.path), `${w.code} at ${w.path} not in ${JSON.stringify(got)}`);
  }
  if (c.exact) assert.equal(got.length, c.expect.length, JSON.stringify(got));
}

// ---------------------------------------------------------------------------------------------
// Config as code (docs/contract/as-code.md): scenarios.json, coverage.json, replay.json, diff.json, compared as
// tests/integration/vectors.rs compares them (`subset`), on what the package returns.

/** `expected` matches `actual` as in tests/integration/vectors.rs: object keys given must match, arrays
 * element by element with the same length, other values equal. Throws where they differ. */
function subset(expected, actual, at = 'result') {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${at}: got ${JSON.stringify(actual)}`);
    for (const [k, w] of Object.entries(expected)) {
      assert.ok(k in actual, `${at}.${k}: missing in ${JSON.stringify(actual)}`);
      subset(w, actual[k], `${at}.${k}`);
    }
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${at}: got ${JSON.stringify(actual)}, want ${JSON.stringify(expected)}`);
    expected.forEach((w, i) => subset(w, actual[i], `${at}[${i}]`));
  } else {
    assert.deepEqual(actual, expected, at);
  }
}

const matches = (expected, actual) => {
  try {
    subset(expected, actual);
    return true;
  } catch {
    return false;
  }
};

/** An input of a case: `{key}_text` and `{key}_file` as text, `{key}` as the JS value. */
function input(c, key) {
  if (typeof c[`${key}_text`] === 'string') return c[`${key}_text`];
  if (typeof c[`${key}_file`] === 'string') return readRepoFile(c[`${key}_file`]);
  return c[key];
}

/** Runs `call`, then checks its result against `expect`, or its thrown error against `expect_error`. */
function checkResult(c, call) {
  let result;
  let error;
  try {
    result = call();
  } catch (e) {
    error = e;
  }
  if (!c.expect_error) {
    assert.equal(error, undefined, `unexpected error: ${error?.message}`);
    subset(c.expect, result);
    return result;
  }
  assert.ok(error, `accepted, want ${c.expect_error.kind}`);
  assertThrownError(error, c.expect_error.kind);
  for (const w of c.expect_error.diagnostics) {
    assert.ok(error.diagnostics.some((d) => matches(w, d)), `diagnostic ${JSON.stringify(w)} not reported; got ${JSON.stringify(error.diagnostics)}`);
  }
  if (typeof c.expect_error.count === 'number') assert.equal(error.diagnostics.length, c.expect_error.count, JSON.stringify(error.diagnostics));
  containsAll(error.diagnostics[0].message, c.expect_error.message_contains);
  return undefined;
}

function scenariosNative(c) {
  const engine = new NudgeEngine(configText(c));
  const report = checkResult(c, () => engine.test(input(c, 'scenarios')));
  for (const [name, wanted] of Object.entries(c.reason_contains ?? {})) {
    const r = report.results.find((x) => x.name === name);
    assert.ok(r, `no result ${name}`);
    containsAll(r.reason, wanted);
  }
  if (report) {
    // What a scenario got, saved by engine.scenario as its expectation, passes.
    for (const r of report.results) {
      const scenarios = input(c, 'scenarios');
      const source = typeof scenarios === 'string' ? JSON.parse(scenarios) : scenarios;
      const state = source.scenarios.find((x) => x.name === r.name).session_state;
      assert.deepEqual(engine.scenario(r.name, state).expect, r.got, r.name);
    }
  }
}

function coverageNative(c) {
  const engine = new NudgeEngine(configText(c));
  checkResult(c, () => engine.coverage(input(c, 'scenarios')));
}

function replayNative(c) {
  const engine = new NudgeEngine(configText(c));
  const sessions = input(c, 'sessions');
  const replay = checkResult(c, () => engine.replay(sessions));
  if (replay) {
    // Sessions read once give the same replay, and the summary alone is the replay's summary.
    const recorded = new RecordedSessions(sessions);
    assert.equal(recorded.length, replay.sessions.length);
    assert.deepEqual(engine.replay(recorded), replay);
    assert.deepEqual(engine.replaySummary(recorded), replay.summary);
    assert.deepEqual(engine.replaySummary(sessions), replay.summary);
    recorded.free();
  } else {
    assert.throws(() => new RecordedSessions(sessions), (e) => e.kind === c.expect_error.kind);
  }
}

function diffNative(c) {
  const side = (name) => (typeof c[`${name}_file`] === 'string' ? readRepoFile(c[`${name}_file`]) : c[name]);
  const inputs = [...(c.inputs_files ?? []).map((f) => readRepoFile(f)), ...(c.inputs ?? [])];
  const d = checkResult(c, () => NudgeEngine.diff(side('old'), side('new'), inputs.length ? inputs : undefined));
  for (const [id, want] of Object.entries(c.reach ?? {})) {
    const r = d.reach.find((x) => x.rule_id === id);
    assert.ok(r, `no reach for ${id}`);
    const pair = (x) => (x === null ? null : [x.sessions, x.page_views]);
    assert.deepEqual([pair(r.old), pair(r.new)], want, `reach of ${id}`);
  }
  // Swapping the configs swaps every pair of outcomes.
  const back = NudgeEngine.diff(side('new'), side('old'), inputs.length ? inputs : undefined);
  assert.equal(back.changes.length, d.changes.length);
  back.changes.forEach((b, i) => {
    assert.deepEqual([b.old, b.new], [d.changes[i].new, d.changes[i].old]);
  });
}

// ---------------------------------------------------------------------------------------------

const RUNNERS = {
  'scenarios.json': [['native rules (engine.test, engine.scenario)', scenariosNative]],
  'coverage.json': [['native rules (engine.coverage)', coverageNative]],
  'replay.json': [['native rules (engine.replay, RecordedSessions, replaySummary)', replayNative]],
  'diff.json': [['native rules (NudgeEngine.diff, both ways)', diffNative]],
  'explain.json': [['native rules (explain)', explainNative]],
  'lint.json': [['native rules (lint, validateConfig)', lintNative]],
  'preview.json': [
    ['native rules (previewBody, text configs)', previewNative],
    ['object API agrees (object configs, preview, explain, previewFields)', previewObjectApi],
  ],
  'normalize.json': [['native rules (normalizePageUrl)', normalizeNative]],
  'config.json': [
    ['native rules (text configs)', configNative],
    ['object API agrees (object configs, validateConfig)', configObjectApi],
  ],
};

const files = readdirSync(new URL(`../../${VECTOR_DIR}`, import.meta.url))
  .filter((f) => f.endsWith('.json'))
  .sort();

test('the vector directory holds every file the native runner replays', () => {
  for (const f of Object.keys(RUNNERS)) assert.ok(files.includes(f), `${VECTOR_DIR}${f} missing`);
});

for (const file of files) {
  const runners = RUNNERS[file];
  if (!runners) {
    test.skip(`${VECTOR_DIR}${file}: no Node runner for this vector file yet (add one to pkg/test/vectors.test.mjs)`);
    continue;
  }
  const cases = load(file);
  for (const [suite, run] of runners) {
    describe(`${file}: ${suite}`, () => {
      for (const c of cases) test(c.name, () => run(c));
    });
  }
}
