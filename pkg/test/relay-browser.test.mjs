// nudge-rules/relay in headless Chromium, from a storefront page on another origin than the
// server (issue "The SDK relay"): the batch goes through CORS (a preflight for the JSON request
// with the key in a header), and when the page is hidden the queue leaves with sendBeacon
// (text/plain, the key in the body), on `visibilitychange` and on leaving the page. The events
// are read back from the server with a secret key.
//   node --test pkg/test/relay-browser.test.mjs   (needs target/debug/nudge-rules-server)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { serve } from '../../www/test/server.mjs';
import { readSession, startServer } from './server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PK = 'pk_test_nudgeRulesDemoKey0001';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];

/** The storefront page: the relay created with a long timer, sendBeacon counted. */
function page(endpoint) {
  return `<!doctype html><meta charset="utf-8"><title>shop</title>
<script type="module">
  const beacon = navigator.sendBeacon.bind(navigator);
  window.beacons = [];
  navigator.sendBeacon = (url, data) => { window.beacons.push(url); return beacon(url, data); };
  const { createRelay } = await import('/pkg/relay.js');
  window.errors = [];
  window.relay = createRelay({ endpoint: ${JSON.stringify(endpoint)}, siteKey: ${JSON.stringify(PK)},
    flushIntervalMs: 600000, onError: (e) => window.errors.push(String(e.message)) });
  window.ready = true;
</script>`;
}

async function waitFor(check, what, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('from another origin: CORS for the batch, sendBeacon when hidden and on leaving', async () => {
  const server = await startServer(['--demo', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  // The storefront: another origin (localhost and another port), a folder with its page and
  // the client, served from the loopback like the server (Chromium refuses a page from a public
  // address, which a routed page counts as, access to the loopback).
  const shopDir = mkdtempSync(join(tmpdir(), 'nudge-shop-'));
  mkdirSync(join(shopDir, 'products'));
  mkdirSync(join(shopDir, 'pkg'));
  copyFileSync(join(ROOT, 'pkg', 'relay.js'), join(shopDir, 'pkg', 'relay.js'));
  writeFileSync(join(shopDir, 'products', 'linen-shirt.html'), page(`${server.base}/v1/events`));
  const files = await serve(shopDir, 0);
  const SHOP = files.url.replace('127.0.0.1', 'localhost');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ARGS });
  try {
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(`${SHOP}/products/linen-shirt.html`);
    await tab.waitForFunction(() => window.ready === true);

    // 1. A flush: fetch with JSON and the key in a header, across origins.
    const flushed = await tab.evaluate(async () => {
      window.relay.pageView(location.href);
      window.relay.addToCart(location.href);
      return window.relay.flush();
    });
    const sessionId = await tab.evaluate(() => window.relay.sessionId);
    assert.equal(await tab.evaluate(() => window.relay.stats().accepted), 2, JSON.stringify({ flushed, errors: await tab.evaluate(() => window.errors) }));
    let read = await readSession(server.base, sessionId);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.events.length, 2);

    // 2. Hidden: the queue leaves with sendBeacon.
    await tab.evaluate(() => {
      window.relay.pageView(`${location.origin}/collections/sale`);
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    assert.deepEqual(await tab.evaluate(() => window.beacons.length), 1, 'one beacon');
    read = await waitFor(async () => {
      const r = await readSession(server.base, sessionId);
      return r.body.data?.events?.length === 3 && r;
    }, 'the beaconed event');
    assert.equal(read.body.data.events[2].url, `${SHOP}/collections/sale`);

    // 3. Leaving the page (pagehide): the last event leaves with a beacon too.
    await tab.evaluate(() => window.relay.pageView(`${location.origin}/cart`));
    await tab.goto('about:blank');
    read = await waitFor(async () => {
      const r = await readSession(server.base, sessionId);
      return r.body.data?.events?.length === 4 && r;
    }, 'the event sent when leaving');
    assert.equal(read.body.data.events[3].url, `${SHOP}/cart`);
    // The JSON request (key in a header) was preflighted: the server counted its 204.
    const metrics = await (await fetch(`${server.admin}/metrics`)).text();
    assert.match(metrics, /nudge_http_requests_total\{route="\/v1\/events",status="204"\} [1-9]/);
  } finally {
    await browser.close();
    await files.close();
    rmSync(shopDir, { recursive: true, force: true });
    await server.stop();
  }
});
