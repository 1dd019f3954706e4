// The slim module for storefront pages (pkg/wasm/slim/, src/wasm_slim.rs; docs/contract/storefront.md) decides
// exactly as the package's first module: 100,000 generated session states (docs/contract/caps.md's history,
// visitor ids and exit intent included, bad ones too) against four configs (the storefront's,
// examples/caps.json with holdouts, caps, cooldowns and exit intent, and two generated ones give
// the same `decide` result, or throw the same error, from both. The slim module's errors carry
// codes, not message texts (docs/DECISIONS.md, docs/contract/storefront.md): the same kind and the same diagnostics
// (severity, code, path) as the full module's, each `message` its code, and the error's message
// `path: code` per diagnostic (no line and column either: the runtime hands configs as objects).
//
//   node --test pkg/test/slim-parity.test.mjs      (after scripts/build-wasm.sh)
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as full from '../wasm/nudge_rules.js';
import * as slim from '../wasm/slim/nudge_rules.js';
import { readRepoFile, rng } from './load.mjs';

const wasm = (path) => {
  const url = new URL(path, import.meta.url);
  assert.ok(existsSync(url), `${url.pathname} is missing: build it with \`make wasm\``);
  return readFileSync(url);
};
full.initSync({ module: wasm('../wasm/nudge_rules_bg.wasm') });
slim.initSync({ module: wasm('../wasm/slim/nudge_rules_bg.wasm') });

const random = rng(20261127);
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const STATES = 100_000;
const RULES = ['exit-offer', 'sizing-help', 'cart-toast', 'sale-bar', 'free-shipping', 'unknown-rule', 'r0', 'r1', 'r2'];
const URLS = ['/', '/products/linen-shirt', '/products/gift-card', '/collections/shirts', '/cart', '/checkout/pay',
  '/account', '/blog/a', 'https://shop.example/products/x?y=1#z', '/Products/LINEN', '/caf%C3%A9', '/%zz', '//x',
  'javascript:alert(1)', '/a/../cart', '/guide/fit'];
const OUTCOMES = [undefined, 'shown', 'clicked', 'dismissed', 'chat_opened', 'bought'];

function history() {
  const n = random() < 0.3 ? 0 : Math.floor(random() * 8);
  const out = [];
  for (let i = 0; i < n; i++) {
    const entry = { rule_id: pick(RULES), ms_ago: pick([0, 1000, 60_000, 3_600_000, 86_400_000, 604_800_000, 31_536_000_000]), this_session: random() < 0.5 };
    const outcome = pick(OUTCOMES);
    if (outcome !== undefined) entry.outcome = outcome;
    if (random() < 0.15) entry.held_out = true;
    out.push(entry);
  }
  return out;
}

function state() {
  const s = {
    intent_score: random() < 0.01 ? pick([-1, 101, 50.5, '50']) : Math.floor(random() * 101),
    page_url: pick(URLS),
  };
  if (random() < 0.9) s.idle_ms = pick([0, 500, 999, 1000, 3000, 8000, 12_000, 60_000, 86_400_000]);
  if (random() < 0.5) s.exit_intent = random() < 0.5;
  if (random() < 0.7) s.visitor_id = random() < 0.01 ? 'visitor-1' : `vis_${Math.floor(random() * 5000).toString(36)}`;
  if (random() < 0.7) s.history = history();
  if (random() < 0.002) s.unknown_field = 1;
  return s;
}

function generated(seed) {
  const r = rng(seed);
  const rules = [];
  for (let i = 0; i < 6; i++) {
    const rule = {
      id: `r${i}`,
      nudge: { type: ['chat_bubble', 'toast', 'exit_modal', 'sticky_bar'][i % 4], message: `m${i}`, cta: `c${i}` },
      when: { min_intent_score: Math.floor(r() * 60), min_idle_ms: Math.floor(r() * 10) * 1000 },
    };
    if (r() < 0.5) rule.when.pages = [['/products/**', '/collections/**', '/**', '/guide/*'][i % 4]];
    if (r() < 0.4) rule.when.exit_intent = r() < 0.5;
    if (r() < 0.4) rule.holdout_percent = Math.floor(r() * 51);
    if (r() < 0.5) rule.cap = { per_session: 1 + Math.floor(r() * 3), cooldown_ms: Math.floor(r() * 3) * 3_600_000 };
    if (r() < 0.3) rule.nudge.cta_url = '/go';
    rules.push(rule);
  }
  return { version: 1, max_nudges_per_session: 3, quiet_zones: ['/checkout/**', '/cart'], rules };
}

/** What the slim module's error says for these diagnostics: `path: code`, joined by `; `. */
const codesMessage = (diagnostics) => diagnostics.map((d) => (d.path ? `${d.path}: ${d.code}` : d.code)).join('; ');
/** A refusal as both modules must agree on it: the kind and the diagnostics but their texts. */
const refusal = (e) => ({
  kind: e.kind,
  diagnostics: e.diagnostics.map(({ severity, code, path }) => ({ severity, code, path })),
});

const outcome = (engine, s, isSlim) => {
  try {
    return JSON.stringify(engine.decide(s));
  } catch (e) {
    if (isSlim) {
      assert.equal(e.message, codesMessage(e.diagnostics));
      for (const d of e.diagnostics) assert.equal(d.message, d.code);
    }
    return `throws ${JSON.stringify(refusal(e))}`;
  }
};

test('the slim module decides as the full one on 100,000 states', () => {
  const configs = [readRepoFile('examples/storefront.json'), readRepoFile('examples/caps.json'), generated(1), generated(2)];
  const pairs = configs.map((c) => [new full.NudgeEngine(c), new slim.NudgeEngine(c)]);
  const seen = { fired: 0, held: 0, quiet: 0, timer: 0, errors: 0 };
  for (let i = 0; i < STATES; i++) {
    const [a, b] = pairs[i % pairs.length];
    const s = state();
    const x = outcome(a, s, false);
    const y = outcome(b, s, true);
    if (x !== y) assert.fail(`state ${i} differs:\n${JSON.stringify(s)}\nfull: ${x}\nslim: ${y}`);
    if (x.startsWith('throws')) seen.errors++;
    else {
      const d = JSON.parse(x);
      if (d.would_fire) seen.fired++;
      if (d.held_out_rule_id) seen.held++;
      if (d.quiet_zone) seen.quiet++;
      if (d.next_idle_ms !== null) seen.timer++;
    }
  }
  // Every kind of answer was compared, not only one.
  for (const [kind, n] of Object.entries(seen)) assert.ok(n > 500, `${kind}: only ${n} of ${STATES}`);
  // A config the engine refuses is refused alike, with the same diagnostics.
  const bad = { version: 1, rules: [{ id: 'x', nudge: { type: 'popup', message: 'm', cta: 'c' } }] };
  const refused = (Engine, config) => {
    try {
      new Engine(config);
      return null;
    } catch (e) {
      return e;
    }
  };
  const badConfigs = [
    bad,
    JSON.stringify(bad),
    '{"version": 1, "rules": [',
    { version: 1, rules: [{ id: 'x', id2: 1, nudge: { type: 'toast', message: '', cta: 'c' }, when: { pages: ['products/*'], min_intent_score: 101 } }] },
    { version: 2, quiet_zones: ['/a/'], rules: [] },
  ];
  for (const config of badConfigs) {
    const [a, b] = [refused(full.NudgeEngine, config), refused(slim.NudgeEngine, config)];
    assert.notEqual(a, null, JSON.stringify(config));
    assert.notEqual(b, null, JSON.stringify(config));
    assert.deepEqual(refusal(b), refusal(a), JSON.stringify(config));
    assert.equal(b.message, codesMessage(b.diagnostics));
  }
});

test('the slim module exports only what a page needs', () => {
  assert.deepEqual(Object.getOwnPropertyNames(slim.NudgeEngine.prototype).filter((n) => n !== 'constructor' && !n.startsWith('__')).sort(), ['decide', 'free']);
  assert.equal(typeof slim.normalizePageUrl, 'undefined');
  assert.equal(typeof slim.NudgeEngine.prototype.explain, 'undefined');
});
