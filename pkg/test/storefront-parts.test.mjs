// The storefront runtime's parts (pkg/storefront/, docs/STOREFRONT.md "The runtime's modules"),
// each alone through its own interface, in headless Chromium (real Web Storage, history, events,
// the slim engine, Playwright's clock) against the real server binary for the config: the store
// and its records, the config source (fetch, cache, revalidation, a damaged cache, a server that
// is down), the page observer, the idle clock and exit intent, the decider's next-threshold timer
// and the presenter. The whole runtime is pkg/test/storefront-shop.test.mjs's.
//
//   node --test pkg/test/storefront-parts.test.mjs   (after scripts/build-wasm.sh; needs
//                                                      target/debug/nudge-rules-server)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { serve } from '../../www/test/server.mjs';
import { freePort, startServer } from './server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PK = 'pk_test_nudgeRulesDemoKey0001';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run'];

let dir;
let files;
let server;
let browser;

before(async () => {
  server = await startServer(['--demo', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  dir = mkdtempSync(join(tmpdir(), 'nudge-parts-'));
  symlinkSync(join(ROOT, 'pkg'), join(dir, 'pkg'));
  writeFileSync(join(dir, 'page.html'), '<!doctype html><html lang="en"><meta charset="utf-8"><title>parts</title><body><main><h1>A shop page</h1><button id="b">b</button></main></body></html>');
  files = await serve(dir, 0, { compress: false });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ARGS });
});

after(async () => {
  await browser?.close();
  await files?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh page (its own storage), `init` run before its scripts; page errors collected. */
async function open({ init, clock = false } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(e.message));
  if (init) await context.addInitScript(init);
  if (clock) await page.clock.install();
  await page.goto(`${files.url}/page.html`);
  // The page's time stands still but for runFor (a loaded machine's real time does not move it).
  if (clock) await page.clock.pauseAt(await page.evaluate(() => Date.now() + 1000));
  page.done = async () => {
    assert.deepEqual(page.problems, []);
    await context.close();
  };
  return page;
}

test('store: the visitor written at once and read back; its records change only through the store', async () => {
  const page = await open();
  const got = await page.evaluate(async () => {
    const { openStore, engineHistory } = await import('/pkg/storefront/store.js');
    const a = openStore(() => 'abc');
    const written = JSON.parse(localStorage.getItem('nudge-rules.visitor'));
    const entry = a.remember({ rule_id: 'r1', at: 1000, sid: 'sess_1' });
    a.setOutcome(entry, 'dismissed');
    a.noteSession('sess_1');
    a.noteSession('sess_1');
    a.keepVisit({ ...a.visit('sess_1'), pages: ['/p'], cart: true });
    for (let i = 0; i < 250; i++) a.remember({ rule_id: `x${i}`, at: 2000 + i, sid: 'sess_2' });
    const b = openStore(() => 'other');
    return {
      written,
      id: b.visitor.id,
      kept: b.visitor.history.length,
      oldest: b.visitor.history.at(-1).rule_id,
      sessions: b.visitor.sessions,
      visit: b.visit('sess_1'),
      otherVisit: b.visit('sess_9'),
      history: engineHistory([{ rule_id: 'r1', at: 1000, sid: 'sess_1', outcome: 'dismissed' }, { rule_id: 'r2', at: 5000, sid: 's', held_out: true }], 'sess_1', 3000),
    };
  });
  assert.deepEqual(got.written, { id: 'vis_abc', history: [], sessions: [] });
  assert.equal(got.id, 'vis_abc', 'read back, not minted again');
  assert.equal(got.kept, 200, 'the last 200 nudges');
  assert.equal(got.oldest, 'x50');
  assert.deepEqual(got.sessions, ['sess_1']);
  assert.deepEqual(got.visit, { sid: 'sess_1', pages: ['/p'], cart: true });
  assert.deepEqual(got.otherVisit, { sid: 'sess_9', pages: [], cart: false });
  assert.deepEqual(got.history, [
    { rule_id: 'r1', ms_ago: 2000, this_session: true, outcome: 'dismissed' },
    { rule_id: 'r2', ms_ago: 0, this_session: false, held_out: true },
  ]);
  await page.done();
});

test('store: a damaged visitor is replaced; storage that throws leaves the memory copy, nothing thrown', async () => {
  const damaged = await open({ init: () => localStorage.setItem('nudge-rules.visitor', '{"id": "nope", "history": 3') });
  assert.equal(await damaged.evaluate(async () => (await import('/pkg/storefront/store.js')).openStore(() => 'fresh').visitor.id), 'vis_fresh');
  await damaged.done();
  const denied = await open({ init: () => {
    for (const name of ['localStorage', 'sessionStorage']) {
      Object.defineProperty(window, name, { get: () => { throw new DOMException('denied', 'SecurityError'); } });
    }
  } });
  const got = await denied.evaluate(async () => {
    const { openStore, previewDraft } = await import('/pkg/storefront/store.js');
    const store = openStore(() => 'mem');
    store.remember({ rule_id: 'r', at: 1, sid: null });
    store.config('k').write({ at: 1 });
    previewDraft('k').write('{}');
    return { id: store.visitor.id, history: store.visitor.history.length, cached: store.config('k').read(), relay: store.relayStorage.getItem('x') };
  });
  assert.deepEqual(got, { id: 'vis_mem', history: 1, cached: null, relay: null });
  await denied.done();
});

test('config source: fetched, cached with its ETag, fresh for 60 s, then revalidated (304); failures reported', async () => {
  const page = await open();
  const down = `http://127.0.0.1:${await freePort()}`;
  const got = await page.evaluate(async ({ base, down, siteKey }) => {
    const { openStore } = await import('/pkg/storefront/store.js');
    const { createEngine } = await import('/pkg/storefront/engine.js');
    const { configSource } = await import('/pkg/storefront/config.js');
    const errors = [];
    const fail = (code, message) => errors.push(`${code}: ${message}`);
    const requests = [];
    const watched = (url) => {
      requests.push(url);
      return url;
    };
    const engine = createEngine({ fail });
    engine.load();
    let t = Date.now();
    const store = openStore(() => 'cfg');
    const source = configSource({ base: watched(base), siteKey, preview: undefined, cache: store.config(siteKey), engine, fail, now: () => t });
    await source.refresh();
    const cached = JSON.parse(store.config(siteKey).read());
    const first = { compiled: engine.compiled, stale: source.stale, etag: cached.etag, version: JSON.parse(cached.body).data.version };
    await source.refresh(); // fresh: not fetched
    const entries = () => performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/runtime/config')).length;
    const fetchedOnce = entries();
    t += 61_000;
    const staleAfter = source.stale;
    await source.refresh(); // revalidated
    const revalidated = JSON.parse(store.config(siteKey).read());
    // A damaged cache on a new page view of another tab's store: reported, fetched again.
    store.config(siteKey).write('{"at": "x"');
    const again = configSource({ base, siteKey, preview: undefined, cache: store.config(siteKey), engine: createEngine({ fail }), fail, now: () => t });
    await again.refresh();
    const offline = configSource({ base: down, siteKey, preview: undefined, cache: openStore(() => 'x').config('other'), engine, fail, now: () => t });
    await offline.refresh();
    return { first, fetchedOnce, staleAfter, revalidatedAt: revalidated.at === t, sameBody: revalidated.body === cached.body, after: entries(), errors, requests };
  }, { base: server.base, down, siteKey: PK });
  assert.equal(got.first.compiled, true);
  assert.equal(got.first.stale, false);
  assert.match(got.first.etag, /^W\/"/);
  assert.equal(got.fetchedOnce, 1, 'within the cache time the config is not fetched again');
  assert.equal(got.staleAfter, true);
  assert.equal(got.revalidatedAt, true, 'the 304 renews the cache time');
  assert.equal(got.sameBody, true);
  assert.equal(got.errors.length, 2, got.errors.join('\n'));
  assert.match(got.errors[0], /^config_cache: the cached config is damaged/);
  assert.match(got.errors[1], /^config_fetch: the config could not be fetched from http:\/\/127\.0\.0\.1:\d+\/v1\/runtime\/config\?key=\.\.\. /);
  await page.done();
});

test('page observer: pushState, replaceState and popstate each a page view of a new path; none once uninstalled', async () => {
  const page = await open();
  const got = await page.evaluate(async () => {
    const { pageObserver } = await import('/pkg/storefront/page.js');
    const { reporter } = await import('/pkg/storefront/errors.js');
    const errors = [];
    const { fail, guard } = reporter((e) => errors.push(e.code));
    const views = [];
    const observer = pageObserver({ win: window, fail, guard, onView: (path) => views.push(path) });
    observer.check(); // nothing before install
    observer.install();
    observer.check();
    history.pushState(null, '', '/a');
    history.pushState(null, '', '/a?same-path');
    history.replaceState(null, '', '/b');
    history.pushState(null, '', '/c');
    await new Promise((done) => {
      addEventListener('popstate', done, { once: true });
      history.back();
    });
    const path = observer.path;
    observer.uninstall();
    history.pushState(null, '', '/d');
    return { views, path, errors };
  });
  assert.deepEqual(got, { views: ['/page.html', '/a', '/b', '/c', '/b'], path: '/b', errors: [] });
  await page.done();
});

test('idle clock and exit intent: idle time grows, activity and restart count from 0, a hidden tab pauses it', async () => {
  const page = await open({ clock: true });
  await page.evaluate(async () => {
    const { idleClock, exitIntent } = await import('/pkg/storefront/idle.js');
    const { reporter } = await import('/pkg/storefront/errors.js');
    const { guard } = reporter(() => {});
    const log = [];
    let hidden = false;
    Object.defineProperty(document, 'visibilityState', { get: () => (hidden ? 'hidden' : 'visible') });
    const idle = idleClock({ win: window, doc: document, now: () => Date.now(), guard, onHidden: () => log.push('hidden'), onVisible: () => log.push('visible') });
    const exit = exitIntent({ win: window, doc: document, guard, onExit: () => log.push('exit') });
    idle.install();
    exit.install();
    const tab = (h) => {
      hidden = h;
      document.dispatchEvent(new Event('visibilitychange'));
    };
    Object.defineProperty(window, '__parts', { value: { idle, exit, log, tab } });
  });
  const ms = () => page.evaluate(() => window.__parts.idle.ms());
  const near = async (want, what) => assert.equal(await ms(), want, what ?? 'idle time');
  await page.clock.runFor(3000);
  await near(3000);
  await page.mouse.move(10, 10);
  assert.ok(await ms() < 50, 'activity restarts the count');
  await page.clock.runFor(2000);
  await page.evaluate(() => window.__parts.tab(true));
  await page.clock.runFor(60_000);
  await near(2000, 'paused while hidden');
  await page.evaluate(() => window.__parts.tab(false));
  await page.clock.runFor(1000);
  await near(3000);
  await page.evaluate(() => window.__parts.idle.restart());
  await near(0, 'restarted');
  const leave = () => page.evaluate(() => document.documentElement.dispatchEvent(new MouseEvent('mouseout', { bubbles: true, clientX: 300, clientY: -2, relatedTarget: null })));
  await leave();
  await page.evaluate(() => document.documentElement.dispatchEvent(new MouseEvent('mouseout', { bubbles: true, clientX: 300, clientY: 40, relatedTarget: null })));
  await page.evaluate(() => {
    window.__parts.exit.uninstall();
    window.__parts.idle.uninstall();
  });
  await leave();
  await page.clock.runFor(1000);
  await page.mouse.move(50, 50);
  await near(1000, 'no activity heard once uninstalled');
  assert.deepEqual(await page.evaluate(() => window.__parts.log), ['hidden', 'visible', 'exit']);
  await page.done();
});

test('decider: one timer to the engine\'s next threshold, paused while hidden; a holdout and a fire handed on', async () => {
  // A visitor in rule `held`'s control group (its bucket, docs/contract/caps.md, below 50 %).
  let visitor = null;
  for (let i = 0; !visitor; i++) {
    const digest = createHash('sha256').update(`held:vis_parts${i}`).digest();
    if (Number(digest.readBigUInt64BE(0) % 10000n) < 5000) visitor = `vis_parts${i}`;
  }
  const page = await open({ clock: true });
  await page.evaluate(async (visitorId) => {
    const { createEngine } = await import('/pkg/storefront/engine.js');
    const { createDecider } = await import('/pkg/storefront/decider.js');
    const { reporter } = await import('/pkg/storefront/errors.js');
    const errors = [];
    const { fail, guard } = reporter((e) => errors.push(e.code));
    const engine = createEngine({ fail });
    engine.load();
    await engine.install({ version: 1, rules: [
      { id: 'held', holdout_percent: 50, nudge: { type: 'toast', message: 'm', cta: 'c' }, when: { pages: ['/held'] } },
      { id: 'idle', nudge: { type: 'chat_bubble', message: 'Need a hand?', cta: 'Chat' }, when: { min_idle_ms: 5000 } },
    ] });
    let t0 = Date.now();
    let visible = true;
    const idle = { ms: () => (visible ? Date.now() - t0 : 0), get visible() { return visible; } };
    let path = '/p';
    const log = [];
    const decider = createDecider({
      engine,
      idle,
      inputs: () => ({ t: Date.now(), sid: 'sess_1', state: { intent_score: 10, page_url: path, visitor_id: visitorId, history: [] } }),
      onHeldOut: (ruleId) => log.push(`held out ${ruleId}`),
      onFire: (decision) => log.push(`fire ${decision.rule_id} at ${decision.nudge.type}`),
      fail,
      guard,
    });
    Object.defineProperty(window, '__parts', { value: { decider, log, errors, setPath: (p) => { path = p; }, hide: (h) => { visible = !h; if (h) decider.pause(); else { t0 = Date.now() - 4000; decider.resume(); } } } });
    decider.decide(false);
  }, visitor);
  const log = () => page.evaluate(() => window.__parts.log);
  await page.clock.runFor(4000);
  assert.deepEqual(await log(), []);
  await page.evaluate(() => window.__parts.hide(true));
  await page.clock.runFor(10_000);
  assert.deepEqual(await log(), [], 'no timer while hidden');
  await page.evaluate(() => window.__parts.hide(false));
  // Back with 4 s of idle time: the rest, 1 s.
  await page.clock.runFor(999);
  assert.deepEqual(await log(), []);
  await page.clock.runFor(1);
  assert.deepEqual(await log(), ['fire idle at chat_bubble']);
  await page.evaluate(() => {
    window.__parts.setPath('/held');
    window.__parts.decider.decide(false);
    window.__parts.decider.stop();
    window.__parts.decider.decide(false);
  });
  assert.deepEqual(await log(), ['fire idle at chat_bubble', 'held out held']);
  assert.equal(await page.evaluate(() => window.__parts.decider.lastScore), 10);
  assert.deepEqual(await page.evaluate(() => window.__parts.errors), []);
  await page.done();
});

test('presenter: one nudge drawn, its outcome heard once and after its removal; a failure to draw reported', async () => {
  const page = await open();
  const got = await page.evaluate(async () => {
    const { createPresenter } = await import('/pkg/storefront/presenter.js');
    const { reporter } = await import('/pkg/storefront/errors.js');
    const errors = [];
    const { fail, guard } = reporter((e) => errors.push(e.code));
    const presenter = createPresenter({ doc: document, fail, guard });
    const outcomes = [];
    presenter.show({ type: 'chat_bubble', message: 'Need a hand?', cta: 'Chat' }, 'sizing', (o) => outcomes.push([o, document.querySelectorAll('[data-nudge-rules]').length]));
    const shown = presenter.showing;
    const cta = document.querySelector('[data-nudge-rules]').shadowRoot.querySelector('.cta');
    cta.click();
    cta.click();
    presenter.show({ type: 'toast', message: 'Hi', cta: 'OK' }, 'hi', (o) => outcomes.push([o]));
    presenter.close();
    presenter.show({ type: 'banner', message: 'x', cta: 'y' }, 'bad', () => outcomes.push(['never']));
    return { shown, outcomes, showing: presenter.showing, hosts: document.querySelectorAll('[data-nudge-rules]').length, errors };
  });
  assert.deepEqual(got, { shown: true, outcomes: [['chat_opened', 0]], showing: false, hosts: 0, errors: ['render'] });
  await page.done();
});
