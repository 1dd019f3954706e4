// WASM survivability (docs/RELIABILITY.md): 1,000 adversarial configs, session states and URLs go
// through one engine instance and the module's free functions; every call either returns or
// throws an ordinary Error, and afterwards the same instance still answers a known-good request
// exactly as before. A panic or a stack overflow inside the module would trap it and fail that
// last check.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import { NudgeEngine, normalizePageUrl, rng, STOREFRONT as storefrontText, validateConfig } from './load.mjs';


function deep(depth, leaf) {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

function cyclic() {
  const o = { version: 1, rules: [] };
  o.self = o;
  o.rules.push(o);
  return o;
}

const random = rng(0xc0ffee);
const pieces = ['/', '//', '..', '.', '%', '%2F', '%25', '%zz', '\\', ';', '?', '#', 'é', '\u0000', '\u0085',
  '\uFF0F', '\u2025', 'checkout', 'http://', 'javascript:', '{', '}', '[', ']', '*', '**', '"', ' ', '\uD800'];
function junkString(maxPieces) {
  let s = '';
  const n = Math.floor(random() * maxPieces);
  for (let i = 0; i < n; i++) s += pieces[Math.floor(random() * pieces.length)];
  return s;
}

/** The adversarial inputs: fixed hard cases, fuzz corpora when present, then random junk. */
function adversarial() {
  const fixed = [
    null, undefined, 0, -1, NaN, Infinity, true, '', 'null', '[]', '{}', '{', '"', 10n ** 30n,
    Symbol('x'), () => 1, [], [[[]]], cyclic(), deep(100_000, 1), deep(200, { version: 1 }),
    '['.repeat(100_000), `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, ' '.repeat(2_000_000),
    'x'.repeat(10_000_000), { version: 1, rules: new Array(5000).fill(null) },
    { intent_score: 1e308, page_url: '/', idle_ms: -0 }, { intent_score: 50, page_url: 'x'.repeat(1_000_000) },
    { intent_score: 50, page_url: '/\uD800' }, { intent_score: 50, page_url: cyclic() },
  ];
  const corpus = [];
  for (const target of ['config', 'request', 'normalize']) {
    const dir = new URL(`../../fuzz/corpus/${target}/`, import.meta.url);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).slice(0, 150)) corpus.push(readFileSync(new URL(name, dir), 'latin1'));
  }
  const junk = [];
  while (fixed.length + corpus.length + junk.length < 1000) {
    const s = junkString(40);
    junk.push(random() < 0.5 ? s : { intent_score: Math.floor(random() * 300) - 100, page_url: s, idle_ms: random() * 1e9 });
  }
  return [...fixed, ...corpus, ...junk];
}

test('1,000 adversarial inputs leave the engine and the module working', () => {
  const engine = new NudgeEngine(storefrontText);
  const good = { intent_score: 82, page_url: '/products/linen-shirt', idle_ms: 9000 };
  const before = JSON.stringify(engine.preview(good));
  const inputs = adversarial();
  assert.ok(inputs.length >= 1000);
  let thrown = 0;
  for (const input of inputs) {
    const calls = [
      () => new NudgeEngine(input),
      () => validateConfig(input),
      () => engine.preview(input),
      () => engine.explain(input),
      () => engine.previewBody(typeof input === 'string' ? input : String(input)),
      () => engine.previewFields(Number(typeof input === 'object' ? 50 : 7), typeof input === 'string' ? input : '/x', 1),
      () => engine.decisionMap(typeof input === 'string' ? input : '/'),
      () => engine.pageReport(typeof input === 'string' ? input : '/'),
      () => normalizePageUrl(typeof input === 'string' ? input : '/', { caseSensitive: random() < 0.5 }),
    ];
    for (const call of calls) {
      try {
        const result = call();
        if (result instanceof NudgeEngine) result.free();
      } catch (e) {
        // Only ordinary errors, never a WebAssembly.RuntimeError (a trap).
        assert.ok(!(e instanceof WebAssembly.RuntimeError), `trap: ${e}`);
        assert.ok(e instanceof Error, `not an Error: ${e}`);
        thrown++;
      }
    }
  }
  assert.ok(thrown > 1000, `only ${thrown} calls were rejected`);
  assert.equal(JSON.stringify(engine.preview(good)), before);
  assert.equal(engine.previewFields(82, '/products/linen-shirt', 9000), 1);
  assert.equal(new NudgeEngine(storefrontText).previewFields(95, '/checkout/pay', 0), -2);
});
