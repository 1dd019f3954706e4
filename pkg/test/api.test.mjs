// The contract of docs/JS-API.md, function by function.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { NudgeEngine, STOREFRONT, normalizePageUrl, pkg, pkgDir, previewResponse, validateConfig } from './load.mjs';

/** The error normalizePageUrl throws for a rejected URL. */
function normalizeError(url) {
  try {
    normalizePageUrl(url);
  } catch (err) {
    return err;
  }
  throw new Error(`${url} was accepted`);
}

const storefront = () => new NudgeEngine(STOREFRONT);
const isPlainObject = (v) => v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

/** Asserts the contract of every thrown error, and returns it. */
function thrown(fn, kind) {
  let error;
  assert.throws(fn, (e) => {
    error = e;
    return true;
  });
  assert.ok(error instanceof Error, 'a real Error');
  assert.equal(error.kind, kind);
  assert.ok(Array.isArray(error.diagnostics) && error.diagnostics.length > 0);
  for (const d of error.diagnostics) assertDiagnostic(d, 'error');
  return error;
}

function assertDiagnostic(d, severity) {
  assert.ok(isPlainObject(d));
  assert.deepEqual(Object.keys(d).sort(), ['code', 'column', 'line', 'message', 'path', 'severity']);
  assert.equal(d.severity, severity);
  assert.equal(typeof d.code, 'string');
  assert.equal(typeof d.path, 'string');
  assert.equal(typeof d.message, 'string');
  assert.ok(d.line === null || Number.isInteger(d.line));
  assert.ok(d.column === null || Number.isInteger(d.column));
}

const CONFIG = {
  version: 1,
  quiet_zones: ['/checkout/**'],
  rules: [
    {
      id: 'sizing-help',
      nudge: { type: 'chat_bubble', message: 'Not sure about the fit?', cta: 'Start chat' },
      when: { min_intent_score: 60, min_idle_ms: 8000, pages: ['/products/**'] },
    },
    { id: 'welcome', nudge: { type: 'toast', message: 'Hi', cta: 'Ok' }, when: { max_intent_score: 20 } },
  ],
};

describe('package', () => {
  test('index.js re-exports the generated glue under the contract names', async () => {
    const glue = await import('../wasm/nudge_rules.js');
    // Config as code (RecordedSessions, initConfigAsCode*) is index.js's own, over the second module.
    const asCodeNames = ['RecordedSessions', 'initConfigAsCode', 'initConfigAsCodeSync'];
    assert.deepEqual(Object.keys(pkg).sort(), ['NudgeEngine', 'RecordedSessions', 'default', 'initConfigAsCode', 'initConfigAsCodeSync', 'initSync', 'normalizePageUrl', 'previewResponse', 'validateConfig']);
    for (const name of Object.keys(pkg).filter((n) => !asCodeNames.includes(n))) {
      // NudgeEngine is the generated class with a faster `preview` (see index.js).
      if (name === 'NudgeEngine') assert.equal(Object.getPrototypeOf(pkg[name]), glue[name]);
      else assert.equal(pkg[name], glue[name], name);
    }
    // `start` is the module's start function, which wasm-bindgen runs on instantiation (it hands
    // the platform's URL parser to the engine, src/wasm.rs); it is not part of the API.
    const unexported = Object.keys(glue).filter((k) => !(k in pkg) && k !== 'start');
    assert.deepEqual(unexported, [], 'glue exports missing from index.js');
  });

  test('package.json: name, version, exports, files', () => {
    const meta = JSON.parse(readFileSync(new URL('package.json', pkgDir), 'utf8'));
    assert.equal(meta.name, 'nudge-rules');
    assert.equal(meta.type, 'module');
    assert.equal(meta.sideEffects, false);
    assert.deepEqual(meta.exports['.'], { types: './index.d.ts', default: './index.js' });
    const cargo = readFileSync(new URL('../Cargo.toml', pkgDir), 'utf8');
    assert.equal(meta.version, /^version = "(.*)"$/m.exec(cargo)[1], 'npm version = crate version');
  });
});

describe('new NudgeEngine(config)', () => {
  test('compiles text and objects to the same config', () => {
    const fromText = new NudgeEngine(JSON.stringify(CONFIG));
    const fromObject = new NudgeEngine(CONFIG);
    assert.deepEqual(fromObject.config(), fromText.config());
  });

  test('invalid text: InvalidConfig, every diagnostic in message and diagnostics, with line and column', () => {
    const text = '{\n  "version": 1,\n  "quiet_zone": ["/checkout/**"],\n  "rules": [{"id": "bad id", "nudge": {"type": "popup", "message": "m", "cta": "c"}}]\n}';
    const e = thrown(() => new NudgeEngine(text), 'InvalidConfig');
    assert.ok(e.diagnostics.length >= 3, e.message);
    const codes = e.diagnostics.map((d) => d.code);
    assert.ok(codes.includes('unknown_field'), codes.join());
    for (const d of e.diagnostics) {
      assert.ok(e.message.includes(d.message), `message lists ${d.message}`);
      assert.ok(Number.isInteger(d.line) && d.line >= 1, 'line');
      assert.ok(Number.isInteger(d.column) && d.column >= 1, 'column');
    }
    const unknown = e.diagnostics.find((d) => d.code === 'unknown_field');
    assert.equal(unknown.path, 'quiet_zone');
    assert.equal(unknown.line, 3);
    assert.match(unknown.message, /quiet_zones/);
  });

  test('invalid object: the same diagnostics without line and column', () => {
    const bad = { version: 1, quiet_zone: [], rules: [{ id: 'a', nudge: { type: 'popup', message: 'm', cta: 'c' } }] };
    const e = thrown(() => new NudgeEngine(bad), 'InvalidConfig');
    const fromText = thrown(() => new NudgeEngine(JSON.stringify(bad)), 'InvalidConfig');
    assert.deepEqual(e.diagnostics.map((d) => d.path).sort(), fromText.diagnostics.map((d) => d.path).sort());
    for (const d of e.diagnostics) assert.deepEqual([d.line, d.column], [null, null]);
    assert.doesNotMatch(e.message, /line \d/);
  });

  test('JSON syntax error: path "" with line and column', () => {
    const e = thrown(() => new NudgeEngine('{"version": 1,}'), 'InvalidConfig');
    assert.equal(e.diagnostics[0].path, '');
    assert.equal(e.diagnostics[0].line, 1);
  });

  test('a value without a JSON form is an InvalidConfig, not a crash', () => {
    const e = thrown(() => new NudgeEngine({ version: 1n }), 'InvalidConfig');
    assert.equal(e.diagnostics[0].code, 'not_json');
    assert.match(e.message, /^invalid config: the config cannot be read as JSON: .*BigInt/);
    const cycle = { version: 1 };
    cycle.self = cycle;
    assert.equal(thrown(() => new NudgeEngine(cycle), 'InvalidConfig').diagnostics[0].code, 'not_json');
    // As in JSON, functions and symbols in arrays become null.
    const fn = thrown(() => new NudgeEngine({ version: 1, rules: [() => 1] }), 'InvalidConfig');
    assert.equal(fn.diagnostics[0].path, 'rules[0]');
    thrown(() => new NudgeEngine({ version: 1, rules: [Symbol('x')] }), 'InvalidConfig');
    thrown(() => new NudgeEngine(42), 'InvalidConfig');
    thrown(() => new NudgeEngine(null), 'InvalidConfig');
    thrown(() => new NudgeEngine([]), 'InvalidConfig');
  });
});

describe('engine.preview(sessionState)', () => {
  test('a nudge fires: { would_fire: true, nudge: { type, message, cta, reason } }, plain objects', () => {
    const r = storefront().preview({ intent_score: 82, page_url: '/Products/Linen-Shirt', idle_ms: 9000 });
    assert.ok(isPlainObject(r) && isPlainObject(r.nudge));
    assert.deepEqual(Object.keys(r), ['would_fire', 'nudge']);
    assert.deepEqual(Object.keys(r.nudge), ['type', 'message', 'cta', 'reason']);
    assert.equal(r.would_fire, true);
    assert.equal(r.nudge.type, 'chat_bubble');
    assert.match(r.nudge.reason, /sizing-help/);
  });

  test('a field that is undefined counts as absent (idle_ms defaults to 0); null is an error', () => {
    const e = storefront();
    const r = e.preview({ intent_score: 40, page_url: '/collections/summer', idle_ms: undefined });
    assert.equal(r.nudge.type, 'sticky_bar');
    const err = thrown(() => e.preview({ intent_score: 40, page_url: '/', idle_ms: null }), 'InvalidRequest');
    assert.equal(err.diagnostics[0].path, 'session_state.idle_ms');
  });

  test('none fires: { would_fire: false, nudge: null, reason }', () => {
    const r = storefront().preview({ intent_score: 95, page_url: '/checkout/pay', idle_ms: 99999 });
    assert.deepEqual(Object.keys(r), ['would_fire', 'nudge', 'reason']);
    assert.equal(r.would_fire, false);
    assert.equal(r.nudge, null);
    assert.match(r.reason, /\/checkout\/\*\*/);
  });

  test('idle_ms defaults to 0', () => {
    const e = storefront();
    assert.deepEqual(
      e.preview({ intent_score: 40, page_url: '/products/gift-card' }),
      e.preview({ intent_score: 40, page_url: '/products/gift-card', idle_ms: 0 }),
    );
  });

  test('equals the data of previewBody for the same state', () => {
    const e = storefront();
    const state = { intent_score: 45, page_url: '/collections/sale', idle_ms: 2500 };
    assert.deepEqual(e.preview(state), JSON.parse(e.previewBody(JSON.stringify({ session_state: state }))).data);
  });

  test('states of every JS shape get the result or error of their JSON form', () => {
    const e = storefront();
    class State {
      constructor() {
        this.intent_score = 82;
        this.page_url = '/products/linen-shirt';
      }
      toJSON() {
        return { intent_score: 10, page_url: '/cart' };
      }
    }
    const nullProto = Object.assign(Object.create(null), { intent_score: 82, page_url: '/products/a', idle_ms: 9000 });
    const inherited = Object.assign(Object.create({ idle_ms: 9000 }), { intent_score: 82, page_url: '/products/a' });
    const getter = { intent_score: 82, get page_url() { return '/products/a'; }, idle_ms: 9000 };
    const states = [
      new State(),
      nullProto,
      inherited,
      getter,
      { intent_score: -0, page_url: '/', idle_ms: 3000 },
      { intent_score: 82, page_url: '/products/a', idle_ms: NaN },
      { intent_score: 1e21, page_url: '/' },
      { intent_score: 82, page_url: new String('/products/a') },
      { intent_score: 90, page_url: 'https://shop.example/Products/A/', idle_ms: 86_400_000 },
    ];
    for (const state of states) {
      const body = JSON.parse(e.previewBody(JSON.stringify({ session_state: state })));
      let got;
      try {
        got = { data: e.preview(state) };
      } catch (err) {
        got = { error: err.kind, message: err.message };
      }
      assert.deepEqual(got, body, JSON.stringify(state));
    }
    // A lone surrogate has no UTF-8 form: an InvalidRequest either way (the messages differ, as
    // the body's names the JSON position and the object's the field).
    const lone = { intent_score: 82, page_url: '/products/\ud800', idle_ms: 9000 };
    thrown(() => e.preview(lone), 'InvalidRequest');
    assert.equal(JSON.parse(e.previewBody(JSON.stringify({ session_state: lone }))).error, 'InvalidRequest');
  });

  test('a bad state throws InvalidRequest with the message of the native error body', () => {
    const e = storefront();
    const cases = [
      { intent_score: 101, page_url: '/' },
      { intent_score: 50.5, page_url: '/' },
      { intent_score: '50', page_url: '/' },
      { intent_score: 50, page_url: '//checkout' },
      { intent_score: 50, page_url: '/', idle_ms: -1 },
      { intent_score: 50, page_url: '/', idle: 5 },
      { page_url: 7 },
      {},
    ];
    for (const state of cases) {
      const err = thrown(() => e.preview(state), 'InvalidRequest');
      const body = JSON.parse(e.previewBody(JSON.stringify({ session_state: state })));
      assert.equal(body.error, 'InvalidRequest');
      assert.equal(err.message, body.message, JSON.stringify(state));
      for (const d of err.diagnostics) assert.ok(d.path.startsWith('session_state'), d.path);
    }
    for (const notObject of [null, undefined, 5, 'x', []]) thrown(() => e.preview(notObject), 'InvalidRequest');
    const big = thrown(() => e.preview({ intent_score: 5, page_url: '/', idle_ms: 10n }), 'InvalidRequest');
    assert.equal(big.diagnostics[0].code, 'not_json');
  });
});

describe('engine.previewBody(text)', () => {
  test('the 200 body', () => {
    const body = storefront().previewBody('{"session_state":{"intent_score":82,"page_url":"/products/linen-shirt","idle_ms":9000}}');
    assert.match(body, /^\{"data":\{"would_fire":true,"nudge":\{"type":"chat_bubble","message":"Not sure about the fit\? Ask a stylist.","cta":"Start chat","reason":"/);
  });

  test('never throws for a bad request: the InvalidRequest error body', () => {
    const e = storefront();
    for (const text of ['', '{', 'null', '[]', '{"session_state":{}}', '{"x":1}', ' '.repeat(70000), '\u0000', '{"session_state":{"intent_score":5,"page_url":"/a b"}}']) {
      const body = JSON.parse(e.previewBody(text));
      assert.deepEqual(Object.keys(body), ['error', 'message']);
      assert.equal(body.error, 'InvalidRequest');
      assert.ok(body.message.length > 0);
    }
  });
});

describe('engine.previewFields(intentScore, pageUrl, idleMs)', () => {
  const e = storefront();
  const ids = e.config().rules.map((r) => r.id);

  test('>= 0: the index of the rule that fires', () => {
    assert.equal(ids[e.previewFields(82, '/products/linen-shirt', 9000)], 'sizing-help');
    assert.equal(ids[e.previewFields(90, '/products/linen-shirt', 25000)], 'high-intent-exit');
    assert.equal(ids[e.previewFields(10, '/', 3000)], 'welcome-bar');
  });

  test('-1: no rule fires; -2: quiet zone', () => {
    assert.equal(e.previewFields(82, '/products/gift-card', 9000), -1);
    assert.equal(e.previewFields(95, '/checkout/pay', 99999), -2);
    assert.equal(e.previewFields(95, '/CHECKOUT/', 0), -2);
  });

  test('-3: out-of-range or non-integer numbers, rejected URLs', () => {
    for (const [i, u, t] of [
      [101, '/', 0], [-1, '/', 0], [50.5, '/', 0], [NaN, '/', 0], [Infinity, '/', 0],
      [50, '/', -1], [50, '/', 1.5], [50, '/', 86_400_001], [50, '/', NaN], [50, '/', 2 ** 32],
      [50, '//checkout', 0], [50, '', 0], [50, 'javascript:alert(1)', 0], [50, '/x%2F..%2Fcheckout', 0],
    ]) {
      assert.equal(e.previewFields(i, u, t), -3, `${i} ${u} ${t}`);
    }
  });

  test('accepts the boundaries 0, 100 and 86,400,000', () => {
    assert.ok(e.previewFields(0, '/', 0) >= -2);
    assert.ok(e.previewFields(100, '/', 86_400_000) >= -2);
    assert.ok(e.previewFields(-0, '/', -0) >= -2);
  });

  test('agrees with preview', () => {
    for (const intent of [0, 30, 60, 85, 100]) {
      for (const idle of [0, 2500, 9000, 45000]) {
        for (const url of ['/products/x', '/collections/sale/y', '/search', '/', '/blog/post', '/cart']) {
          const code = e.previewFields(intent, url, idle);
          const r = e.preview({ intent_score: intent, page_url: url, idle_ms: idle });
          if (r.would_fire) assert.equal(e.config().rules[code].nudge.message, r.nudge.message);
          else assert.ok(code === -1 || code === -2);
        }
      }
    }
  });

  // A URL previewed again is named by its index in the module (src/wasm/page_urls.rs, looked up by
  // pkg/index.js); the answers must be those of a URL copied afresh, whatever the module keeps.
  // The generated `previewFields` copies the URL in on every call: the reference.
  test('a URL seen before, past the kept-URL bound, too long to keep, or not well-formed: the same answers as a fresh copy', () => {
    const fresh = (intent, url, idle) => Object.getPrototypeOf(NudgeEngine.prototype).previewFields.call(e, intent, url, idle);
    const other = storefront();
    const urls = [];
    for (let i = 0; i < 2600; i++) urls.push(['/products/p', '/collections/sale/', '/blog/', '/checkout/'][i % 4] + i);
    urls.push(`/products/${'x'.repeat(300)}`, '/products/\uD800', '/products/\uDC00x', '/PRODUCTS/Linen-Shirt?x=1', '//checkout');
    for (let round = 0; round < 2; round++) {
      for (const [n, url] of urls.entries()) {
        const [intent, idle] = [(n * 7) % 101, (n * 997) % 60000];
        const want = fresh(intent, url, idle);
        assert.equal(other.previewFields(intent, url, idle), want, url);
        if (want === -3 || !url.isWellFormed()) continue;
        const r = other.preview({ intent_score: intent, page_url: url, idle_ms: idle });
        assert.equal(r.would_fire, want >= 0, url);
        if (want >= 0) assert.equal(r.nudge.message, other.config().rules[want].nudge.message, url);
      }
    }
    assert.equal(other.previewFields(50, '/products/\uD800', 0), fresh(50, '/products/\uFFFD', 0));
    other.free();
  });
});

describe('engine.explain(sessionState)', () => {
  const e = storefront();

  test('every rule with a verdict; result is exactly what preview returns', () => {
    const state = { intent_score: 90, page_url: '/products/linen-shirt', idle_ms: 25000 };
    const x = e.explain(state);
    assert.equal(x.page_url, state.page_url);
    assert.equal(x.path, '/products/linen-shirt');
    assert.equal(x.url_error, null);
    assert.equal(x.quiet_zone, null);
    assert.equal(x.rules.length, e.config().rules.length);
    assert.deepEqual(x.rules.map((r) => r.index), x.rules.map((_, i) => i));
    assert.equal(x.fired_rule_id, 'high-intent-exit');
    assert.equal(x.rules.find((r) => r.id === 'sizing-help').verdict, 'shadowed');
    assert.deepEqual(x.result, e.preview(state));
    assert.equal(x.earliest_idle_ms, 25000);
    for (const r of x.rules) {
      assert.ok(['fired', 'shadowed', 'failed', 'disabled', 'quiet'].includes(r.verdict));
      for (const c of r.conditions) assert.deepEqual(Object.keys(c), ['condition', 'holds', 'detail']);
    }
  });

  test('quiet zone', () => {
    const x = e.explain({ intent_score: 95, page_url: '/checkout/pay', idle_ms: 0 });
    assert.deepEqual(x.quiet_zone, { index: 0, pattern: '/checkout/**' });
    assert.ok(x.rules.every((r) => r.verdict === 'quiet' || r.verdict === 'disabled'));
  });

  test('earliest idle time', () => {
    const x = e.explain({ intent_score: 82, page_url: '/products/linen-shirt', idle_ms: 1000 });
    assert.equal(x.fired_rule_id, null);
    assert.equal(x.earliest_rule_id, 'sizing-help');
    assert.equal(x.earliest_idle_ms, 8000);
  });

  test('a rejected page_url is reported inside, not thrown', () => {
    const x = e.explain({ intent_score: 50, page_url: '//checkout', idle_ms: 0 });
    assert.equal(x.path, null);
    assert.equal(x.result, null);
    assert.equal(x.url_error.code, 'double_slash');
    assert.equal(typeof x.url_error.message, 'string');
  });

  test('a bad state throws like preview', () => {
    for (const state of [{ intent_score: 101, page_url: '/' }, { page_url: '/' }, { intent_score: 5, page_url: '/', x: 1 }]) {
      const a = thrown(() => e.explain(state), 'InvalidRequest');
      const b = thrown(() => e.preview(state), 'InvalidRequest');
      assert.equal(a.message, b.message);
    }
  });
});

describe('engine.decisionMap(pageUrl)', () => {
  const e = storefront();
  const MAX_IDLE = 86_400_000;

  test('an exact partition of intent 0..=100 x idle 0..=86,400,000 that agrees with preview', () => {
    const map = e.decisionMap('/Products/Linen-Shirt');
    assert.equal(map.path, '/products/linen-shirt');
    assert.equal(map.quiet_zone, null);
    let area = 0n;
    for (const r of map.regions) {
      assert.deepEqual(Object.keys(r).sort(), ['max_idle_ms', 'max_intent_score', 'min_idle_ms', 'min_intent_score', 'nudge_type', 'rule_id', 'rule_index'].sort());
      assert.ok(r.min_intent_score <= r.max_intent_score && r.min_idle_ms <= r.max_idle_ms);
      area += BigInt(r.max_intent_score - r.min_intent_score + 1) * BigInt(r.max_idle_ms - r.min_idle_ms + 1);
      for (const [i, t] of [[r.min_intent_score, r.min_idle_ms], [r.max_intent_score, r.max_idle_ms]]) {
        const code = e.previewFields(i, '/products/linen-shirt', t);
        assert.equal(r.rule_index ?? -1, code, `${i} ${t}`);
      }
    }
    // Regions cover the plane and (the area being exact) do not overlap.
    assert.equal(area, 101n * BigInt(MAX_IDLE + 1));
  });

  test('a quiet page: one region where nothing fires', () => {
    const map = e.decisionMap('/checkout');
    assert.deepEqual(map.quiet_zone, { index: 0, pattern: '/checkout/**' });
    assert.deepEqual(map.regions, [
      { min_intent_score: 0, max_intent_score: 100, min_idle_ms: 0, max_idle_ms: MAX_IDLE, rule_id: null, rule_index: null, nudge_type: null },
    ]);
  });

  test('a rejected URL is reported inside the map, as explain and pageReport do', () => {
    const map = e.decisionMap('//checkout');
    assert.equal(map.page_url, '//checkout');
    assert.equal(map.path, null);
    assert.equal(map.url_error.code, 'double_slash');
    assert.equal(map.url_error.message, normalizeError('//checkout').message);
    assert.equal(map.quiet_zone, null);
    assert.deepEqual(map.regions, []);
    assert.equal(e.explain({ intent_score: 1, page_url: '//checkout' }).url_error.code, 'double_slash');
  });

  test('an accepted URL: page_url as given, url_error null', () => {
    const map = e.decisionMap('/Products/X');
    assert.equal(map.page_url, '/Products/X');
    assert.equal(map.url_error, null);
  });
});

describe('previewResponse: the status and body a server answers with', () => {
  const body = (s) => JSON.stringify({ session_state: s });
  const fires = body({ intent_score: 82, page_url: '/products/linen-shirt', idle_ms: 9000 });

  test('engine.previewResponse: 200 with previewBody, or 400 with the InvalidRequest body', () => {
    const e = storefront();
    assert.deepEqual(e.previewResponse(fires), { status: 200, body: e.previewBody(fires) });
    const bad = body({ intent_score: 101, page_url: '/' });
    const answer = e.previewResponse(bad);
    assert.equal(answer.status, 400);
    assert.equal(answer.body, e.previewBody(bad));
    assert.equal(JSON.parse(answer.body).error, 'InvalidRequest');
  });

  test('previewResponse(config, body): 500 with the engine\'s InvalidConfig body for a bad config', () => {
    const answer = previewResponse('{"version": 2, "quiet_zone": []}', fires);
    assert.equal(answer.status, 500);
    const parsed = JSON.parse(answer.body);
    assert.equal(parsed.error, 'InvalidConfig');
    let thrownMessage = '';
    try {
      new NudgeEngine('{"version": 2, "quiet_zone": []}');
    } catch (err) {
      thrownMessage = err.message;
    }
    assert.equal(parsed.message, thrownMessage);
    assert.deepEqual(previewResponse(STOREFRONT, fires), storefront().previewResponse(fires));
    assert.equal(previewResponse({ version: 1 }, fires).status, 200);
    assert.equal(previewResponse(STOREFRONT, '{').status, 400);
  });
});

describe('engine.lint(), summary(), pageReport(), config()', () => {
  test('lint: warnings', () => {
    const e = new NudgeEngine({
      version: 1,
      rules: [
        { id: 'all', nudge: { type: 'toast', message: 'm', cta: 'c' } },
        { id: 'never', nudge: { type: 'toast', message: 'm', cta: 'c' }, when: { pages: ['/products/**'] } },
      ],
    });
    const warnings = e.lint();
    assert.ok(warnings.length > 0);
    for (const d of warnings) assertDiagnostic(d, 'warning');
    assert.ok(warnings.some((d) => d.code === 'shadowed_rule' && d.path.startsWith('rules[1]')), JSON.stringify(warnings));
  });

  test('summary: one { rule_id, text } per rule, in config order', () => {
    const e = storefront();
    const s = e.summary();
    assert.deepEqual(s.map((x) => x.rule_id), e.config().rules.map((r) => r.id));
    for (const x of s) {
      assert.deepEqual(Object.keys(x), ['rule_id', 'text']);
      assert.ok(x.text.length > 0);
    }
  });

  test('pageReport: every matching pattern; a rejected URL inside', () => {
    const e = storefront();
    const ok = e.pageReport('/Checkout/Pay');
    assert.equal(ok.path, '/checkout/pay');
    assert.equal(ok.url_error, null);
    assert.deepEqual(ok.matches[0], { json_path: 'quiet_zones[0]', pattern: '/checkout/**' });
    const bad = e.pageReport('//checkout');
    assert.deepEqual(bad, { page_url: '//checkout', path: null, url_error: bad.url_error, matches: [] });
    assert.equal(bad.url_error.code, 'double_slash');
  });

  test('config: defaults filled in, patterns as written', () => {
    const c = new NudgeEngine({ version: 1, quiet_zones: ['/CHECKOUT/**'], rules: [CONFIG.rules[0]] }).config();
    assert.ok(isPlainObject(c));
    assert.deepEqual(c, {
      version: 1,
      case_sensitive: false,
      quiet_zones: ['/CHECKOUT/**'],
      rules: [
        {
          id: 'sizing-help',
          enabled: true,
          nudge: CONFIG.rules[0].nudge,
          when: { min_intent_score: 60, max_intent_score: 100, min_idle_ms: 8000, pages: ['/products/**'], exclude_pages: [] },
        },
      ],
    });
    assert.ok(!('pages' in new NudgeEngine({ version: 1, rules: [CONFIG.rules[1]] }).config().rules[0].when));
  });
});

describe('normalizePageUrl(url, options?)', () => {
  test('canonical paths', () => {
    assert.equal(normalizePageUrl('/Checkout//Pay'), '/checkout/pay');
    assert.equal(normalizePageUrl('https://shop.example/account?next=/x#top'), '/account');
    assert.equal(normalizePageUrl('/Checkout//Pay', { caseSensitive: true }), '/Checkout/Pay');
    assert.equal(normalizePageUrl('/Checkout', {}), '/checkout');
    assert.equal(normalizePageUrl('/Checkout', { caseSensitive: false }), '/checkout');
  });

  test('rejected: an Error with code, kind and diagnostics', () => {
    for (const [url, code] of [['//checkout', 'double_slash'], ['/x%2F..%2Fcheckout', 'forbidden_escape'], ['', 'empty'], ['javascript:alert(1)', 'unsupported_scheme']]) {
      const e = thrown(() => normalizePageUrl(url), 'InvalidRequest');
      assert.equal(e.code, code, url);
      assert.equal(e.diagnostics[0].code, code);
      assert.equal(e.message, e.diagnostics[0].message);
    }
  });

  test('options.caseSensitive must be a boolean', () => {
    assert.throws(() => normalizePageUrl('/x', { caseSensitive: 'yes' }), TypeError);
  });
});

describe('validateConfig(config)', () => {
  test('valid, with lint warnings', () => {
    const v = validateConfig({ version: 1, quiet_zones: ['/**'] });
    assert.deepEqual(Object.keys(v), ['valid', 'errors', 'warnings']);
    assert.equal(v.valid, true);
    assert.deepEqual(v.errors, []);
    assert.ok(v.warnings.some((d) => d.code === 'quiet_zone_covers_every_page'));
    for (const d of v.warnings) assertDiagnostic(d, 'warning');
  });

  test('text warnings carry line and column; object warnings do not', () => {
    const config = { version: 1, quiet_zones: ['/**'] };
    const fromText = validateConfig(JSON.stringify(config, null, 2)).warnings;
    const fromObject = validateConfig(config).warnings;
    assert.ok(fromText.every((d) => Number.isInteger(d.line)));
    assert.ok(fromObject.every((d) => d.line === null && d.column === null));
  });

  test('invalid: the errors the constructor throws, no warnings', () => {
    const bad = '{"version": 2, "rules": [{}]}';
    const v = validateConfig(bad);
    assert.equal(v.valid, false);
    assert.deepEqual(v.warnings, []);
    assert.deepEqual(v.errors, thrown(() => new NudgeEngine(bad), 'InvalidConfig').diagnostics);
  });

  test('never throws', () => {
    for (const input of ['', '{', 'null', '[]', null, undefined, 42, true, [], {}, { version: 1, rules: [() => 1] }, Symbol('x'), 10n, { version: 1, rules: 'x' }]) {
      const v = validateConfig(input);
      assert.equal(v.valid, false, String(typeof input));
      assert.ok(v.errors.length > 0);
      for (const d of v.errors) assertDiagnostic(d, 'error');
    }
  });
});

describe('engine.conditionSentences(sessionState) and NudgeEngine.idleWords(ms)', () => {
  test('one sentence per condition of explain, in its order, in the cards\' words', () => {
    const e = storefront();
    const state = { intent_score: 82, page_url: '/products/linen-shirt', idle_ms: 7999 };
    const x = e.explain(state);
    const words = e.conditionSentences(state);
    assert.equal(words.rules.length, x.rules.length);
    x.rules.forEach((r, i) => assert.equal(words.rules[i].length, r.conditions.length, r.id));
    const sizing = x.rules.findIndex((r) => r.id === 'sizing-help');
    assert.deepEqual(words.rules[sizing], [
      'Intent 82 is at least the 60 this rule needs',
      'Waits 7.999 s of the 8 s this rule needs',
      'Page /products/linen-shirt is one of this rule\'s pages (/products/**)',
      'Page /products/linen-shirt is not excluded (/products/gift-card)',
    ]);
    assert.equal(words.quiet_zone, null);
    const quiet = e.conditionSentences({ intent_score: 82, page_url: '/checkout/pay', idle_ms: 0 });
    assert.match(quiet.quiet_zone, /^This page is in the quiet zone \/checkout\/\*\*: no nudge shows here/);
    assert.deepEqual(e.conditionSentences({ intent_score: 1, page_url: '//checkout', idle_ms: 0 }).rules, []);
    thrown(() => e.conditionSentences({ intent_score: 101, page_url: '/', idle_ms: 0 }), 'InvalidRequest');
    e.free();
  });

  test('idle times as the cards say them: at once, cut and never rounded up', () => {
    assert.equal(NudgeEngine.idleWords(0), 'at once');
    assert.equal(NudgeEngine.idleWords(8000), '8 s');
    assert.equal(NudgeEngine.idleWords(7999), '7.9 s');
    assert.equal(NudgeEngine.idleWords(90_000), '1 min 30 s');
    assert.equal(NudgeEngine.idleWords(86_400_000), '24 h');
  });
});

describe('NudgeEngine.checkPattern(pattern, caseSensitive) and NudgeEngine.limits()', () => {
  test('a valid pattern: null; an invalid one: the code and message a config gets, and the valid fixes it suggests', () => {
    assert.equal(NudgeEngine.checkPattern('/products/**', false), null);
    assert.equal(NudgeEngine.checkPattern('/**', true), null);
    const slash = NudgeEngine.checkPattern('/products/', false);
    assert.ok(isPlainObject(slash));
    assert.equal(slash.code, 'pattern_trailing_slash');
    assert.deepEqual(slash.fixes, ['/products', '/products/**']);
    // The message is the one a config with this pattern gets.
    let config;
    try {
      new NudgeEngine('{"version": 1, "quiet_zones": ["/products/"]}');
    } catch (err) {
      config = err.diagnostics[0];
    }
    assert.equal(slash.message, config.message);
    assert.deepEqual(NudgeEngine.checkPattern('products/**', false).fixes, ['/products/**']);
    assert.deepEqual(NudgeEngine.checkPattern('', false).fixes, ['/**']);
    assert.deepEqual(NudgeEngine.checkPattern('https://shop.example/sale/**', false).fixes, ['/sale/**']);
    // A suggestion that is invalid itself is not offered.
    assert.deepEqual(NudgeEngine.checkPattern('https://shop.example/sale/', false).fixes, []);
    const glob = NudgeEngine.checkPattern('/a/{b', false);
    assert.equal(glob.code, 'pattern_syntax');
    assert.deepEqual(glob.fixes, []);
    assert.equal(NudgeEngine.checkPattern(`/${'a'.repeat(600)}`, false).code, 'pattern_too_long');
  });

  test('limits: the numbers of docs/contract/config.md and docs/contract/preview.md', () => {
    assert.deepEqual(NudgeEngine.limits(), {
      config_bytes: 1_048_576, rules: 1000, quiet_zones: 1000, patterns_per_list: 100, pattern_bytes: 512,
      rule_id_chars: 64, message_chars: 500, cta_chars: 80, intent_score: 100, idle_ms: 86_400_000,
      page_url_bytes: 8192, request_bytes: 65_536, scenario_name_chars: 200,
    });
  });
});
