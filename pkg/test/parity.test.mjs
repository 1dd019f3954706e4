// Native/WASM parity (docs/RELIABILITY.md): 100,000 generated (config, request) pairs answered by
// the native crate (tools/src/bin/parity.rs) and by the WASM package's previewBody give identical
// response bodies, byte for byte: 200 bodies, InvalidRequest and InvalidConfig error bodies. The
// object API (`preview`, whose result object src/wasm/result.rs makes, from three primitives for a
// plain state) must give the same result, or throw the same error, as `previewBody` for every
// request that has a session_state.
// docs/contract/caps.md's fields are generated too: caps, cooldowns, exit intent, holdouts, cta_url and
// max_nudges_per_session in configs; exit intent, visitor ids and histories in states.
// PARITY_CONFIGS=N changes the number of configs (100 requests each; default 1,000).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { NudgeEngine, repoRoot, rng } from './load.mjs';

const random = rng(20261121);
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const SEGMENTS = ['products', 'collections', 'cart', 'checkout', 'blog', 'a', 'Café', 'sale'];
const INTENTS = [0, 1, 29, 30, 50, 59, 60, 99, 100];
const IDLES = [0, 1, 999, 1000, 5000, 8000, 86_400_000];
const TYPES = ['chat_bubble', 'toast', 'exit_modal', 'sticky_bar'];

function pattern() {
  const s = pick(SEGMENTS);
  const t = pick(SEGMENTS);
  // One pattern in 200 ends with '/', an error that makes its config invalid.
  if (random() < 0.005) return `/${s}/`;
  return pick([`/${s}`, `/${s}/**`, `/${s}/**`, `/${s}/*`, `/${s}/${t}`, '/**', `**/${t}`, `/{${s},${t}}/**`, `/${s}?`, `/[a-c]*/${t}`]);
}

function config() {
  const rules = [];
  const count = Math.floor(random() * 8);
  for (let i = 0; i < count; i++) {
    const [x, y] = [pick(INTENTS), pick(INTENTS)];
    const when = { min_intent_score: Math.min(x, y), max_intent_score: Math.max(x, y), min_idle_ms: pick(IDLES) };
    if (random() < 0.7) when.pages = Array.from({ length: Math.floor(random() * 3) }, pattern);
    if (random() < 0.4) when.exclude_pages = [pattern()];
    if (random() < 0.005) when.min_idle = 5; // an unknown field: InvalidConfig
    if (random() < 0.3) when.exit_intent = random() < 0.5;
    const rule = { id: `r${i}`, enabled: random() < 0.9, nudge: { type: pick(TYPES), message: `Message ${i} é`, cta: 'Go' }, when };
    if (random() < 0.3) rule.cap = { per_session: pick([1, 2, 3]), cooldown_ms: pick([0, 1000, 86_400_000]) };
    if (random() < 0.3) rule.holdout_percent = pick([10, 25, 50]);
    // One link in 20 is refused (javascript:, http:, //host): InvalidConfig.
    if (random() < 0.2) rule.nudge.cta_url = random() < 0.05 ? pick(['javascript:x', 'http://a.b/', '//a.b']) : pick(['/cart', 'https://shop.example/x?y=1']);
    rules.push(rule);
  }
  const site = {
    version: 1,
    case_sensitive: random() < 0.2,
    quiet_zones: Array.from({ length: Math.floor(random() * 3) }, pattern),
    rules,
  };
  if (random() < 0.3) site.max_nudges_per_session = pick([1, 2, 3]);
  return JSON.stringify(site);
}

/** docs/contract/caps.md's state fields: exit intent, a visitor id, a history over the rule ids above. */
function visit(state) {
  if (random() < 0.3) state.exit_intent = random() < 0.5;
  if (random() < 0.4) state.visitor_id = random() < 0.02 ? pick(['vis_', 'vis_a/b', 'abc']) : `vis_${Math.floor(random() * 1000)}`;
  if (random() < 0.4) {
    state.history = Array.from({ length: Math.floor(random() * 5) }, () => {
      const entry = { rule_id: `r${Math.floor(random() * 8)}`, ms_ago: random() < 0.01 ? -1 : pick([0, 999, 1000, 86_399_999, 86_400_000]), this_session: random() < 0.5 };
      const how = Math.floor(random() * 6);
      if (how < 4) entry.outcome = ['shown', 'clicked', 'dismissed', 'chat_opened'][how];
      if (how === 5) entry.held_out = true;
      return entry;
    });
    // Newest first (docs/contract/caps.md), except now and then: an order error.
    if (random() < 0.95) state.history.sort((a, b) => Number(b.this_session) - Number(a.this_session) || a.ms_ago - b.ms_ago);
  }
}

function url() {
  const path = Array.from({ length: Math.floor(random() * 4) }, () => pick([...SEGMENTS, '..', '.', '', 'X%41', 'caf%C3%A9', ';p=1'])).join('/');
  const prefix = random() < 0.05 ? pick(['//', '', 'javascript:']) : pick(['/', '/', '/', 'https://shop.example/', 'HTTP://h:8080/']);
  return prefix + path + pick(['', '/', '?q=1', '#f']);
}

function body() {
  const r = random();
  if (r < 0.03) return pick(['', '{', '[]', 'null', '{"session_state":{}}']);
  const intent = random() < 0.05 ? pick([-1, 101, 50.5, '50']) : pick(INTENTS);
  const state = { intent_score: intent, page_url: url() };
  if (random() < 0.8) state.idle_ms = random() < 0.03 ? pick([-1, 86_400_001]) : pick(IDLES);
  if (random() < 0.02) state.extra = 1;
  visit(state);
  return JSON.stringify({ session_state: state });
}

/** The session_state of a request body that is an object with only that field, else undefined. */
function sessionState(body) {
  try {
    const parsed = JSON.parse(body);
    const only = parsed !== null && typeof parsed === 'object' && Object.keys(parsed).join() === 'session_state';
    return only ? parsed.session_state : undefined;
  } catch {
    return undefined;
  }
}

test('native and WASM give identical response bodies on 100,000 generated pairs', () => {
  const configs = Number(process.env.PARITY_CONFIGS ?? 1000);
  const cases = Array.from({ length: configs }, () => ({ config: config(), bodies: Array.from({ length: 100 }, body) }));
  const input = cases.map((c) => JSON.stringify(c)).join('\n');
  const native = execFileSync('cargo', ['run', '-q', '--release', '-p', 'nudge-rules-tools', '--bin', 'parity'], {
    cwd: fileURLToPath(repoRoot),
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  })
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(native.length, cases.length);
  let compared = 0;
  let fired = 0;
  let errors = 0;
  let objects = 0;
  cases.forEach((c, i) => {
    let wasm;
    try {
      const engine = new NudgeEngine(c.config);
      wasm = c.bodies.map((b) => engine.previewBody(b));
      c.bodies.forEach((b, k) => {
        const state = sessionState(b);
        if (state === undefined) return;
        let got;
        try {
          got = { data: engine.preview(state) };
        } catch (e) {
          got = { error: e.kind, message: e.message };
        }
        assert.deepEqual(got, JSON.parse(wasm[k]), `object API, config ${c.config}\nbody ${b}`);
        objects++;
      });
      engine.free();
    } catch (e) {
      // An invalid config: the native side answered with its InvalidConfig body.
      wasm = c.bodies.map(() => JSON.stringify({ error: e.kind, message: e.message }));
    }
    for (let k = 0; k < c.bodies.length; k++) {
      assert.equal(wasm[k], native[i][k], `config ${c.config}\nbody ${c.bodies[k]}`);
      compared++;
      if (wasm[k].includes('"would_fire":true')) fired++;
      if (wasm[k].startsWith('{"error"')) errors++;
    }
  });
  assert.equal(compared, configs * 100);
  // The generator must exercise every outcome.
  assert.ok(fired > compared / 20 && errors > compared / 20, `fired ${fired}, errors ${errors} of ${compared}`);
  assert.ok(objects > compared / 2, `object API compared on ${objects} of ${compared}`);
  console.log(`parity: ${compared} pairs identical (${fired} fired, ${errors} error bodies); object API identical on ${objects}`);
});
