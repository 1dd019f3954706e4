// nudge-rules/relay (docs/contract/relay.md's client): unit tests with a fake fetch, clock and timers, then tests
// against the real server binary (target/debug/nudge-rules-server, `cargo build -p
// nudge-rules-server`).
//   node --test pkg/test/relay.test.mjs
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createRelay, backoffDelay, parseRetryAfter, retryDelay, BACKOFF_CAP_MS } from '../relay.js';
import { readSession, startServer } from './server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PK = 'pk_test_nudgeRulesDemoKey0001';
const SK = 'sk_test_nudgeRulesDemoKey0001';
const START = Date.parse('2026-11-24T10:00:00.000Z');

/** A fake world: clock, timers, fetch answering from a script, and what was sent. */
function world({ answers = [], random = () => 0.5 } = {}) {
  const w = {
    t: START,
    timers: [],
    requests: [],
    errors: [],
    answers: [...answers],
    random,
  };
  w.now = () => w.t;
  w.setTimeout = (cb, ms) => {
    const timer = { cb, ms, at: w.t + ms, done: false };
    w.timers.push(timer);
    return timer;
  };
  w.clearTimeout = (timer) => {
    if (timer) timer.done = true;
  };
  w.fetch = async (url, init) => {
    const body = JSON.parse(init.body);
    w.requests.push({ url, init, body });
    const answer = w.answers.length > 0 ? w.answers.shift() : accepted;
    return answer(body);
  };
  /** Moves the clock and runs the timers that fall due. */
  w.advance = async (ms) => {
    const end = w.t + ms;
    for (;;) {
      const due = w.timers.filter((x) => !x.done && x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      w.t = due.at;
      due.done = true;
      due.cb();
      await settle();
    }
    w.t = end;
    await settle();
  };
  w.relay = (options = {}) => createRelay({
    endpoint: 'http://relay.test/v1/events',
    siteKey: PK,
    fetch: w.fetch,
    now: w.now,
    random: w.random,
    setTimeout: w.setTimeout,
    clearTimeout: w.clearTimeout,
    navigator: undefined,
    document: undefined,
    window: undefined,
    onError: (e) => w.errors.push(e),
    ...options,
  });
  /** The live (not cleared) timers of a given delay. */
  w.pendingDelays = () => w.timers.filter((x) => !x.done).map((x) => x.ms);
  return w;
}

const settle = () => new Promise((r) => setImmediate(r));
const json = (status, body, headers = {}) => new Response(JSON.stringify(body), {
  status,
  headers: { 'content-type': 'application/json', ...headers },
});
const accepted = (body) => json(202, { data: { accepted: body.events.length, duplicates: 0, rejected: [] } });
const status = (code, headers = {}) => () => json(code, { error: 'X', message: `status ${code}` }, headers);
const networkError = () => {
  throw new TypeError('fetch failed');
};

describe('relay client, unit', () => {
  test('batches events into one request with the key, JSON, sent_at and keepalive', async () => {
    const w = world();
    const relay = w.relay({ flushIntervalMs: 5000 });
    relay.pageView('/products/linen-shirt', { intentScore: 40 });
    w.t += 1000;
    relay.addToCart('/cart', { intentScore: 60 });
    relay.nudgeShown({ nudgeId: 'nudg_1', nudgeType: 'toast', ruleId: 'sale-toast', url: '/cart', intentScore: 70 });
    relay.nudgeOutcome({ nudgeId: 'nudg_1', outcome: 'clicked' });
    relay.purchase('/checkout/thank-you');
    assert.equal(w.requests.length, 0, 'nothing is sent before the interval');
    await w.advance(5000);
    assert.equal(w.requests.length, 1);
    const { url, init, body } = w.requests[0];
    assert.equal(url, 'http://relay.test/v1/events');
    assert.equal(init.method, 'POST');
    assert.equal(init.headers.Authorization, `Bearer ${PK}`);
    assert.equal(init.headers['Content-Type'], 'application/json');
    assert.equal(init.keepalive, true);
    assert.equal(body.sent_at, new Date(START + 5000).toISOString()); // the interval's tick
    assert.equal(body.site_key, undefined);
    assert.deepEqual(body.events.map((e) => e.type), ['PAGE_VIEW', 'ADD_TO_CART', 'NUDGE_SHOWN', 'NUDGE_OUTCOME', 'PURCHASE']);
    assert.deepEqual(body.events[0], {
      message_id: body.events[0].message_id,
      session_id: body.events[0].session_id,
      type: 'PAGE_VIEW',
      occurred_at: '2026-11-24T10:00:00.000Z',
      url: '/products/linen-shirt',
      intent_score: 40,
    });
    assert.deepEqual(body.events[2], {
      message_id: body.events[2].message_id,
      session_id: body.events[0].session_id,
      type: 'NUDGE_SHOWN',
      occurred_at: '2026-11-24T10:00:01.000Z',
      nudge_id: 'nudg_1',
      nudge_type: 'toast',
      rule_id: 'sale-toast',
      url: '/cart',
      intent_score: 70,
    });
    assert.deepEqual(Object.keys(body.events[3]).sort(), ['message_id', 'nudge_id', 'occurred_at', 'outcome', 'session_id', 'type']);
    assert.equal(body.events[4].intent_score, undefined);
    const result = await relay.flush();
    assert.deepEqual(result, { sent: 0, accepted: 0, duplicates: 0, rejected: [], dropped: 0, retried: 0, pending: 0 });
  });

  test('a full batch is sent at once; batches never exceed maxBatch (max 500)', async () => {
    const w = world();
    const relay = w.relay({ maxBatch: 3, flushIntervalMs: 0 });
    for (let i = 0; i < 3; i++) relay.pageView(`/p/${i}`);
    await settle();
    assert.deepEqual(w.requests.map((r) => r.body.events.length), [3], 'full: sent without waiting');
    relay.pageView('/p/3');
    relay.pageView('/p/4');
    await settle();
    assert.equal(w.requests.length, 1, 'not full: waits');
    const result = await relay.flush();
    assert.equal(result.sent, 2);
    assert.deepEqual(w.requests.map((r) => r.body.events.length), [3, 2]);
    // Events queued faster than they are sent go out in batches of maxBatch at most.
    for (let i = 0; i < 7; i++) relay.pageView(`/q/${i}`);
    await relay.flush();
    assert.deepEqual(w.requests.map((r) => r.body.events.length), [3, 2, 3, 3, 1]);
    const big = world().relay({ maxBatch: 10_000 });
    assert.ok(big, 'maxBatch past 500 is clamped, not thrown');
    const w2 = world();
    const relay2 = w2.relay({ maxBatch: 10_000, flushIntervalMs: 0 });
    for (let i = 0; i < 501; i++) relay2.pageView('/');
    await relay2.flush();
    assert.deepEqual(w2.requests.map((r) => r.body.events.length), [500, 1]);
  });

  test('flush reports accepted, duplicates and per-event rejections (not retried)', async () => {
    const w = world({
      answers: [() => json(202, { data: { accepted: 1, duplicates: 1, rejected: [{ index: 2, error: 'InvalidEvent', message: 'nudge_type must be one of ..., got "popup"' }] } })],
    });
    const relay = w.relay({ flushIntervalMs: 0 });
    relay.pageView('/a');
    relay.pageView('/b');
    relay.nudgeShown({ nudgeId: 'nudg_1', nudgeType: /** @type {any} */ ('popup') });
    const result = await relay.flush();
    assert.equal(result.sent, 3);
    assert.equal(result.accepted, 1);
    assert.equal(result.duplicates, 1);
    assert.equal(result.rejected.length, 1);
    assert.equal(result.rejected[0].index, 2);
    assert.equal(result.rejected[0].message_id, w.requests[0].body.events[2].message_id);
    assert.equal(result.pending, 0);
    assert.equal(w.errors.at(-1).code, 'rejected');
    await relay.flush();
    assert.equal(w.requests.length, 1, 'a rejected event is never resent');
  });

  test('message ids are unique and well-formed; session ids are sess_ ids', async () => {
    const w = world({ random: () => 0.25 }); // even a constant random gives unique ids
    const relay = w.relay({ flushIntervalMs: 0, maxBatch: 500 });
    for (let i = 0; i < 300; i++) relay.pageView('/');
    await relay.flush();
    const events = w.requests.flatMap((r) => r.body.events);
    const ids = new Set(events.map((e) => e.message_id));
    assert.equal(ids.size, 300);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_.:-]{1,100}$/);
    assert.match(events[0].session_id, /^sess_[A-Za-z0-9_-]{1,64}$/);
    assert.equal(new Set(events.map((e) => e.session_id)).size, 1);
    // Two relays (two tabs) with the real Math.random mint different ids and sessions.
    const a = world({ random: Math.random });
    const b = world({ random: Math.random });
    const ra = a.relay({ flushIntervalMs: 0 });
    const rb = b.relay({ flushIntervalMs: 0 });
    ra.pageView('/');
    rb.pageView('/');
    await ra.flush();
    await rb.flush();
    assert.notEqual(a.requests[0].body.events[0].message_id, b.requests[0].body.events[0].message_id);
    assert.notEqual(ra.sessionId, rb.sessionId);
  });

  test('a new session after 30 minutes without an event, kept in storage when given', async () => {
    const w = world({ random: Math.random });
    const store = new Map();
    const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
    const relay = w.relay({ flushIntervalMs: 0, storage });
    assert.equal(relay.sessionId, null);
    relay.pageView('/a');
    const first = relay.sessionId;
    w.t += 29 * 60_000;
    relay.pageView('/b'); // 29 minutes: same session
    w.t += 30 * 60_000;
    relay.pageView('/c'); // exactly 30 minutes: still the same
    assert.equal(relay.sessionId, first);
    w.t += 30 * 60_000 + 1;
    relay.pageView('/d'); // past 30 minutes: new session
    const second = relay.sessionId;
    assert.notEqual(second, first);
    await relay.flush();
    const sessions = w.requests[0].body.events.map((e) => e.session_id);
    assert.deepEqual(sessions, [first, first, first, second]);
    // A reload in the same tab: a new relay on the same storage continues the session.
    w.t += 60_000;
    const reloaded = w.relay({ flushIntervalMs: 0, storage });
    reloaded.pageView('/e');
    assert.equal(reloaded.sessionId, second);
    // A storage that throws (private mode) costs nothing: memory serves.
    const broken = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('denied'); } };
    const r3 = w.relay({ flushIntervalMs: 0, storage: broken });
    r3.pageView('/');
    r3.pageView('/');
    await r3.flush();
    const last = w.requests.at(-1).body.events;
    assert.equal(last[0].session_id, last[1].session_id);
  });

  test('429 with Retry-After: the same batch is resent after the header\'s seconds', async () => {
    for (const seconds of [7, 23]) {
      const w = world({ answers: [status(429, { 'Retry-After': String(seconds) })] });
      const relay = w.relay({ flushIntervalMs: 0 });
      relay.pageView('/a');
      relay.pageView('/b');
      const result = await relay.flush();
      assert.equal(result.retried, 2);
      assert.equal(result.pending, 2);
      assert.deepEqual(w.pendingDelays(), [seconds * 1000]);
      assert.equal(w.errors[0].status, 429);
      assert.equal(w.errors[0].retryInMs, seconds * 1000);
      // A flush before the time does not send.
      await w.advance(seconds * 1000 - 1);
      assert.equal((await relay.flush()).sent, 0);
      assert.equal(w.requests.length, 1);
      await w.advance(1);
      assert.equal(w.requests.length, 2);
      assert.deepEqual(
        w.requests[1].body.events.map((e) => e.message_id),
        w.requests[0].body.events.map((e) => e.message_id),
        'the same message ids',
      );
      assert.equal((await relay.flush()).pending, 0);
    }
  });

  test('repeated 429s back off exponentially with jitter, never below Retry-After; a success resets', async () => {
    const tooMany = (seconds) => status(429, { 'Retry-After': String(seconds) });
    const w = world({
      answers: [tooMany(1), tooMany(1), tooMany(1), tooMany(1), tooMany(20), accepted, tooMany(1)],
      random: () => 0.999,
    });
    const relay = w.relay({ flushIntervalMs: 0 });
    relay.pageView('/a');
    await relay.flush();
    // Attempt 0: jitter below 1 s, so Retry-After's 1 s.
    assert.deepEqual(w.pendingDelays(), [1000]);
    const waits = [1000];
    // Attempts 1, 2, 3: max(Retry-After, random() * min(60 s, 1 s * 2^n)).
    for (const n of [1, 2, 3]) {
      await w.advance(waits.at(-1));
      assert.equal(w.requests.length, n + 1);
      const want = Math.max(1000, Math.floor(0.999 * 1000 * 2 ** n));
      assert.deepEqual(w.pendingDelays(), [want], `attempt ${n}`);
      assert.equal(w.errors.at(-1).retryInMs, want);
      waits.push(want);
    }
    // Attempt 4 (jitter below 16 s): a longer Retry-After wins.
    await w.advance(waits.at(-1));
    assert.deepEqual(w.pendingDelays(), [20_000]);
    // Accepted: the next 429 starts from attempt 0 again.
    await w.advance(20_000);
    assert.equal(w.requests.length, 6);
    assert.equal(relay.stats().queued, 0);
    relay.pageView('/b');
    await relay.flush();
    assert.equal(w.requests.length, 7);
    assert.deepEqual(w.pendingDelays(), [1000]);
    // The rule, exported: max(Retry-After, backoff); the backoff alone without the header.
    assert.equal(retryDelay(1000, 5, () => 0.5), 16_000);
    assert.equal(retryDelay(30_000, 5, () => 0.5), 30_000);
    assert.equal(retryDelay(null, 5, () => 0.5), 16_000);
    assert.equal(retryDelay(0, 0, () => 0), 0);
    // With random() = 0, every wait is exactly Retry-After.
    const z = world({ answers: [tooMany(3), tooMany(3), tooMany(3)], random: () => 0 });
    const r = z.relay({ flushIntervalMs: 0 });
    r.pageView('/c');
    await r.flush();
    for (let n = 0; n < 3; n++) {
      assert.deepEqual(z.pendingDelays(), [3000], `attempt ${n}`);
      await z.advance(3000);
    }
  });

  test('503 with Retry-After, then backoff with full jitter inside its bounds', async () => {
    const w = world({
      answers: [status(503, { 'Retry-After': '2' }), status(503), networkError, networkError, status(502)],
      random: () => 0.999,
    });
    const relay = w.relay({ flushIntervalMs: 0 });
    relay.pageView('/a');
    await relay.flush();
    assert.deepEqual(w.pendingDelays(), [2000]);
    await w.advance(2000); // 503 without the header: backoff, attempt 1 => < 2 s
    assert.equal(w.requests.length, 2);
    assert.deepEqual(w.pendingDelays(), [Math.floor(0.999 * 2000)]);
    await w.advance(2000); // network error, attempt 2 => < 4 s
    assert.equal(w.requests.length, 3);
    assert.deepEqual(w.pendingDelays(), [Math.floor(0.999 * 4000)]);
    await w.advance(4000);
    assert.deepEqual(w.pendingDelays(), [Math.floor(0.999 * 8000)]);
    await w.advance(8000);
    assert.equal(w.requests.length, 5);
    await w.advance(16_000);
    assert.equal(w.requests.length, 6);
    assert.equal(w.pendingDelays().length, 0);
    const ids = w.requests.map((r) => r.body.events[0].message_id);
    assert.equal(new Set(ids).size, 1, 'every retry resends the same message id');
    assert.equal(relay.stats().queued, 0);

    // The formula's bounds: 0 <= delay < min(60 s, 1 s * 2^attempt), full jitter.
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(BACKOFF_CAP_MS, 1000 * 2 ** attempt);
      assert.equal(backoffDelay(attempt, () => 0), 0);
      assert.equal(backoffDelay(attempt, () => 0.5), Math.floor(ceiling / 2));
      for (let i = 0; i < 50; i++) {
        const d = backoffDelay(attempt);
        assert.ok(d >= 0 && d < ceiling + 1 && d <= 60_000, `${attempt}: ${d}`);
      }
    }
    assert.equal(backoffDelay(40, () => 0.999999), Math.floor(0.999999 * 60_000));
    assert.equal(parseRetryAfter('12', 0), 12_000);
    assert.equal(parseRetryAfter(new Date(START + 5000).toUTCString(), START), 5000);
    assert.equal(parseRetryAfter('soon', 0), null);
    assert.equal(parseRetryAfter(null, 0), null);
  });

  test('400, 401 and 413 drop the batch and report it, never retried', async () => {
    for (const code of [400, 401, 413]) {
      const w = world({ answers: [status(code)] });
      const relay = w.relay({ flushIntervalMs: 1000 });
      relay.pageView('/a');
      relay.pageView('/b');
      const result = await relay.flush();
      assert.equal(result.dropped, 2, String(code));
      assert.equal(result.pending, 0);
      assert.equal(result.retried, 0);
      assert.equal(w.errors[0].status, code);
      assert.equal(w.errors[0].code, 'http');
      await w.advance(120_000);
      assert.equal(w.requests.length, 1, `${code} is not retried`);
    }
  });

  test('the queue is bounded: the oldest are dropped and counted', async () => {
    const w = world();
    const relay = w.relay({ maxQueue: 10, maxBatch: 500, flushIntervalMs: 0 });
    for (let i = 0; i < 25; i++) relay.pageView(`/p/${i}`);
    assert.equal(relay.stats().queued, 10);
    assert.equal(w.errors.filter((e) => e.code === 'queue_full').length, 1, 'reported once per flush period');
    const result = await relay.flush();
    assert.equal(result.dropped, 15);
    assert.equal(result.sent, 10);
    assert.deepEqual(w.requests[0].body.events.map((e) => e.url), Array.from({ length: 10 }, (_, i) => `/p/${i + 15}`));
    assert.equal((await relay.flush()).dropped, 0, 'counted once');
    // A batch waiting for its retry counts too, and is the oldest.
    const w2 = world({ answers: [status(503, { 'Retry-After': '30' })] });
    const r2 = w2.relay({ maxQueue: 4, maxBatch: 3, flushIntervalMs: 0 });
    r2.pageView('/1');
    r2.pageView('/2');
    r2.pageView('/3');
    await settle();
    await settle();
    assert.equal(r2.stats().queued, 3);
    r2.pageView('/4');
    r2.pageView('/5');
    r2.pageView('/6');
    assert.equal(r2.stats().queued, 4);
    await w2.advance(30_000);
    const result2 = await r2.flush();
    const sent = w2.requests.slice(1).flatMap((r) => r.body.events.map((e) => e.url));
    assert.deepEqual(sent, ['/3', '/4', '/5', '/6']);
    assert.equal(r2.stats().dropped, 2);
    assert.equal(result2.pending, 0);
  });

  test('visitorId goes on every event; nudgeHeldOut sends NUDGE_HELD_OUT; a bad visitorId is reported and left out', async () => {
    const w = world();
    const relay = w.relay({ flushIntervalMs: 0, visitorId: 'vis_Ab-9_x' });
    assert.equal(relay.visitorId, 'vis_Ab-9_x');
    relay.pageView('/products/linen-shirt', { intentScore: 40 });
    relay.nudgeHeldOut({ ruleId: 'sizing-help', nudgeType: 'chat_bubble', url: '/products/linen-shirt', intentScore: 70 });
    await relay.flush();
    const events = w.requests[0].body.events;
    assert.deepEqual(events.map((e) => e.visitor_id), ['vis_Ab-9_x', 'vis_Ab-9_x']);
    const held = events[1];
    assert.equal(held.type, 'NUDGE_HELD_OUT');
    assert.equal(held.rule_id, 'sizing-help');
    assert.equal(held.nudge_type, 'chat_bubble');
    assert.equal(held.url, '/products/linen-shirt');
    assert.equal(held.intent_score, 70);
    assert.equal(held.nudge_id, undefined);
    assert.deepEqual(w.errors, []);

    for (const bad of ['visitor_1', 'vis_', `vis_${'x'.repeat(65)}`, 'vis_a b', 42]) {
      const w2 = world();
      const r2 = w2.relay({ flushIntervalMs: 0, visitorId: bad });
      assert.equal(r2.visitorId, null, String(bad));
      r2.pageView('/');
      await r2.flush();
      assert.equal(w2.requests.length, 1, 'the relay still sends');
      assert.equal(w2.requests[0].body.events[0].visitor_id, undefined);
      assert.equal(w2.errors.length, 1);
      assert.equal(w2.errors[0].code, 'config');
      assert.match(w2.errors[0].message, /visitorId must be vis_/);
    }
  });

  test('never throws into the page', async () => {
    const thrower = () => {
      throw new Error('onError itself fails');
    };
    // Bad options: a disabled relay, reported.
    const reported = [];
    const bad = createRelay({ endpoint: '', siteKey: 'nope', onError: (e) => reported.push(e) });
    bad.pageView('/');
    assert.deepEqual(await bad.flush(), { sent: 0, accepted: 0, duplicates: 0, rejected: [], dropped: 0, retried: 0, pending: 0 });
    assert.equal(reported[0].code, 'config');
    const secret = [];
    createRelay({ endpoint: 'http://x/v1/events', siteKey: SK, onError: (e) => secret.push(e) });
    assert.match(secret[0].message, /secret key must never be put in a page/);
    assert.doesNotThrow(() => createRelay(/** @type {any} */ (undefined)).pageView('/'));
    createRelay(/** @type {any} */ ({ onError: thrower }));
    // A fetch that throws synchronously, answers garbage, or a clock and random that misbehave.
    const w = world({ answers: [() => { throw new Error('boom'); }, () => /** @type {any} */ ({ status: 202, json: () => { throw new Error('bad json'); } })] });
    const relay = w.relay({ onError: thrower, flushIntervalMs: 0, now: () => NaN, random: () => { throw new Error('no random'); } });
    assert.doesNotThrow(() => relay.pageView('/a'));
    assert.doesNotThrow(() => relay.track(/** @type {any} */ ('PAGE_VIEW'), /** @type {any} */ (null)));
    assert.doesNotThrow(() => relay.nudgeShown(/** @type {any} */ (undefined)));
    assert.doesNotThrow(() => relay.nudgeOutcome(/** @type {any} */ (null)));
    const w2 = world({ answers: [() => { throw new Error('boom'); }, () => /** @type {any} */ ({ status: 202, json: () => { throw new Error('bad json'); } }), () => null] });
    const r2 = w2.relay({ onError: thrower, flushIntervalMs: 0 });
    r2.pageView('/a');
    const first = await r2.flush();
    assert.equal(first.retried, 1);
    await w2.advance(60_000);
    r2.pageView('/b');
    const again = await r2.flush();
    assert.equal(typeof again.pending, 'number');
    await assert.doesNotReject(r2.close());
    await assert.doesNotReject(r2.close());
    assert.doesNotThrow(() => r2.pageView('/after-close'));
    // A beacon that throws.
    const w3 = world();
    const listeners = {};
    const doc = {
      visibilityState: 'hidden',
      addEventListener: (name, fn) => { listeners[name] = fn; },
      removeEventListener: () => {},
    };
    const r3 = w3.relay({ onError: thrower, document: doc, navigator: { sendBeacon: () => { throw new Error('no'); } } });
    r3.pageView('/');
    assert.doesNotThrow(() => listeners.visibilitychange());
    assert.equal(r3.stats().queued, 1, 'kept when the beacon fails');
  });

  test('a hidden page flushes with sendBeacon, text/plain, the key in the body', async () => {
    const w = world();
    const beacons = [];
    const listeners = {};
    const target = () => ({
      visibilityState: 'visible',
      addEventListener: (name, fn) => { listeners[name] = fn; },
      removeEventListener: (name) => { delete listeners[name]; },
    });
    const doc = target();
    const win = target();
    const relay = w.relay({
      document: doc,
      window: win,
      navigator: { sendBeacon: (url, blob) => { beacons.push({ url, blob }); return true; } },
    });
    relay.pageView('/a');
    relay.nudgeOutcome({ nudgeId: 'nudg_1', outcome: 'dismissed' });
    listeners.visibilitychange();
    assert.equal(beacons.length, 0, 'visible: nothing');
    doc.visibilityState = 'hidden';
    listeners.visibilitychange();
    assert.equal(beacons.length, 1);
    assert.equal(beacons[0].url, 'http://relay.test/v1/events');
    assert.equal(beacons[0].blob.type, 'text/plain');
    const body = JSON.parse(await beacons[0].blob.text());
    assert.equal(body.site_key, PK);
    assert.equal(body.events.length, 2);
    assert.equal(relay.stats().queued, 0);
    relay.pageView('/b');
    listeners.pagehide();
    assert.equal(beacons.length, 2);
    // A refused beacon keeps its events for the next flush.
    const w2 = world();
    const r2 = w2.relay({ window: win, navigator: { sendBeacon: () => false } });
    r2.pageView('/c');
    listeners.pagehide();
    assert.equal(r2.stats().queued, 1);
    assert.equal((await r2.flush()).sent, 1);
    await relay.close();
    assert.equal(listeners.visibilitychange, undefined, 'close() removes its listeners');
  });
});

// ---------------------------------------------------------------------------------------------
// Against the real server.

describe('relay client against the server', () => {
  let server;
  before(async () => {
    server = await startServer(['--demo', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  });
  after(async () => {
    await server?.stop();
  });

  test('events sent with the client appear in GET /v1/sessions/{id}', async () => {
    const errors = [];
    const relay = createRelay({ endpoint: `${server.base}/v1/events`, siteKey: PK, flushIntervalMs: 0, onError: (e) => errors.push(e) });
    relay.pageView('/products/linen-shirt', { intentScore: 40 });
    relay.nudgeShown({ nudgeId: 'nudg_relay1', nudgeType: 'toast', ruleId: 'sale-toast', url: '/products/linen-shirt', intentScore: 70 });
    relay.nudgeOutcome({ nudgeId: 'nudg_relay1', outcome: 'clicked' });
    relay.addToCart('/cart', { intentScore: 80 });
    relay.purchase('/checkout/thank-you', { intentScore: 95 });
    const result = await relay.flush();
    assert.deepEqual(result, { sent: 5, accepted: 5, duplicates: 0, rejected: [], dropped: 0, retried: 0, pending: 0 }, errors.join('\n'));
    const { status, body } = await readSession(server.base, relay.sessionId);
    assert.equal(status, 200, JSON.stringify(body));
    const data = body.data;
    assert.equal(data.id, relay.sessionId);
    assert.equal(data.converted, true);
    assert.equal(data.nudge_count, 1);
    assert.deepEqual(data.events.map((e) => e.type), ['PAGE_VIEW', 'ADD_TO_CART', 'PURCHASE']);
    assert.equal(data.nudges[0].outcome, 'clicked');
    assert.equal(data.nudges[0].influenced_conversion, true);
    // A rejected event is reported with the server's message, the rest stored.
    relay.nudgeShown({ nudgeId: 'nudg_relay2', nudgeType: /** @type {any} */ ('popup') });
    relay.pageView('/about');
    const second = await relay.flush();
    assert.equal(second.accepted, 1);
    assert.equal(second.rejected.length, 1);
    assert.match(second.rejected[0].message, /nudge_type/);
    assert.equal(errors.at(-1).code, 'rejected');
    await relay.close();
  });

  test('visitor ids and held-out events reach the store; held-out events are no shown nudge', async () => {
    const errors = [];
    const relay = createRelay({ endpoint: `${server.base}/v1/events`, siteKey: PK, flushIntervalMs: 0, visitorId: 'vis_relayTest1', onError: (e) => errors.push(e) });
    relay.pageView('/products/linen-shirt', { intentScore: 40 });
    relay.nudgeHeldOut({ ruleId: 'sizing-help', nudgeType: 'chat_bubble', url: '/products/linen-shirt', intentScore: 70 });
    relay.nudgeShown({ nudgeId: 'nudg_relayHeld1', nudgeType: 'toast', ruleId: 'sale-toast', url: '/products/linen-shirt', intentScore: 70 });
    const result = await relay.flush();
    assert.deepEqual(result, { sent: 3, accepted: 3, duplicates: 0, rejected: [], dropped: 0, retried: 0, pending: 0 }, errors.join('\n'));
    const { status, body } = await readSession(server.base, relay.sessionId);
    assert.equal(status, 200, JSON.stringify(body));
    // The held-out rule is in no nudge list: only the toast was shown.
    assert.equal(body.data.nudge_count, 1);
    assert.deepEqual(body.data.nudges.map((n) => n.type), ['toast']);
    await relay.close();
  });

  test('a batch resent after a retry is counted as duplicates', async () => {
    // The first answer is lost on the way back (the server stored the batch): the client retries.
    let calls = 0;
    const lossy = async (url, init) => {
      calls += 1;
      const response = await fetch(url, init);
      if (calls === 1) throw new TypeError('connection reset after the request was stored');
      return response;
    };
    const timers = [];
    const relay = createRelay({
      endpoint: `${server.base}/v1/events`,
      siteKey: PK,
      flushIntervalMs: 0,
      fetch: lossy,
      setTimeout: (cb, ms) => { timers.push({ cb, ms }); return timers.length; },
      clearTimeout: () => {},
      onError: () => {},
    });
    relay.pageView('/a');
    relay.pageView('/b');
    relay.pageView('/c');
    const first = await relay.flush();
    assert.equal(first.retried, 3);
    assert.equal(timers.length, 1);
    assert.ok(timers[0].ms >= 0 && timers[0].ms < 1000, `the first backoff is under 1 s: ${timers[0].ms}`);
    await new Promise((r) => setTimeout(r, timers[0].ms + 5));
    const second = await relay.flush();
    assert.deepEqual(second, { sent: 3, accepted: 0, duplicates: 3, rejected: [], dropped: 0, retried: 0, pending: 0 });
    const { body } = await readSession(server.base, relay.sessionId);
    assert.equal(body.data.page_count, 3);
    assert.equal(body.data.events.length, 3, 'each event stored once');
  });

  test('an unknown key is refused with 401 and the batch dropped, reported', async () => {
    const errors = [];
    const relay = createRelay({ endpoint: `${server.base}/v1/events`, siteKey: 'pk_test_unknownKey0000000000', flushIntervalMs: 0, onError: (e) => errors.push(e) });
    relay.pageView('/a');
    const result = await relay.flush();
    assert.equal(result.dropped, 1);
    assert.equal(errors[0].status, 401);
  });
});

describe('relay client against the server\'s event limit', () => {
  let server;
  before(async () => {
    server = await startServer(['--demo', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  });
  after(async () => {
    await server?.stop();
  });

  test('a 429 is retried after the Retry-After the server sent', async () => {
    // Fill the key's 10,000 events per minute with 20 batches of 500.
    const at = new Date().toISOString();
    for (let b = 0; b < 20; b++) {
      const events = Array.from({ length: 500 }, (_, i) => ({
        message_id: `fill_${b}_${i}`, session_id: `sess_fill${b}`, type: 'PAGE_VIEW', occurred_at: at, url: `/fill/${i}`,
      }));
      const response = await fetch(`${server.base}/v1/events`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${PK}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ events }),
      });
      assert.equal(response.status, 202, await response.text());
    }
    const answers = [];
    const watching = async (url, init) => {
      const response = await fetch(url, init);
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
      return response;
    };
    const timers = [];
    const errors = [];
    const relay = createRelay({
      endpoint: `${server.base}/v1/events`,
      siteKey: PK,
      flushIntervalMs: 0,
      fetch: watching,
      setTimeout: (cb, ms) => { timers.push({ cb, ms }); return timers.length; },
      clearTimeout: () => {},
      onError: (e) => errors.push(e),
    });
    relay.pageView('/over-the-limit');
    const result = await relay.flush();
    assert.equal(answers[0].status, 429);
    const seconds = Number(answers[0].retryAfter);
    assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 61, `Retry-After: ${answers[0].retryAfter}`);
    assert.equal(result.retried, 1);
    assert.equal(result.pending, 1);
    assert.deepEqual(timers.map((t) => t.ms), [seconds * 1000], 'the retry waits exactly the server\'s Retry-After');
    assert.equal(errors[0].status, 429);
    assert.equal(errors[0].retryInMs, seconds * 1000);
  });
});

describe('relay client across a server restart', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nudge-relay-'));
    const hash = (key) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
    copyFileSync(join(ROOT, 'examples', 'storefront.json'), join(dir, 'storefront.json'));
    writeFileSync(join(dir, 'sites.toml'), [
      '[[site]]',
      'id = "shop"',
      'config = "storefront.json"',
      'rate_limit = 1000',
      `keys = ["${hash(SK)}"]`,
      `site_keys = ["${hash(PK)}"]`,
      '',
    ].join('\n'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('server killed, then started again on the same port: nothing lost once flushed', async () => {
    const args = (listen) => ['--sites', join(dir, 'sites.toml'), '--store', `sqlite:${join(dir, 'events.db')}`, '--listen', listen, '--admin-listen', '127.0.0.1:0'];
    let server = await startServer(args('127.0.0.1:0'));
    const address = server.address;
    const errors = [];
    const relay = createRelay({ endpoint: `${server.base}/v1/events`, siteKey: PK, flushIntervalMs: 0, maxBatch: 10, onError: (e) => errors.push(e) });
    try {
      for (let i = 0; i < 15; i++) relay.pageView(`/before/${i}`);
      await relay.flush(); // the tenth event started a flush already: the totals count both
      assert.equal(relay.stats().accepted, 15, errors.join('\n'));
      await server.stop(); // SIGKILL: no drain
      for (let i = 0; i < 12; i++) relay.pageView(`/during/${i}`);
      const down = await relay.flush();
      assert.equal(down.sent, 0);
      assert.equal(relay.stats().retried, 10, 'the first batch waits for its retry');
      assert.equal(down.pending, 12);
      assert.equal(relay.stats().accepted, 15);
      assert.equal(errors.at(-1).code, 'network');
      server = await startServer(args(address));
      assert.equal(server.address, address);
      // Wait for the scheduled retries (backoff under 1 s, 2 s, ...), then flush what is left.
      const deadline = Date.now() + 20_000;
      // Until every event is answered 202: `queued` does not count a batch in flight, so it
      // reaches 0 before the last batch's answer (and commit) is in.
      while ((relay.stats().queued > 0 || relay.stats().accepted < 27) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        if (relay.stats().queued > 0) await relay.flush();
      }
      assert.equal(relay.stats().queued, 0, errors.join('\n'));
      assert.equal(relay.stats().accepted, 27, errors.join('\n'));
      const { status, body } = await readSession(server.base, relay.sessionId);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.data.page_count, 27, 'every event flushed before and after the crash is stored');
      assert.equal(body.data.events.length, 27);
      assert.equal(relay.stats().dropped, 0);
    } finally {
      await relay.close();
      await server.stop();
    }
  });
});
