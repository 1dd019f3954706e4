// The storefront mock's visitor sent to a server (issue 21, docs/contract/relay.md), in headless Chromium
// against the real server binary (target/debug/nudge-rules-server; `cargo build -p
// nudge-rules-server`, which make test-browser runs first).
//
// Two servers: `--demo` (publishable key pk_test_nudgeRulesDemoKey0001, secret key
// sk_test_nudgeRulesDemoKey0001; its CORS allows the editor of `make demo` only, and the relay
// answers any origin, so the editor here, on another port, sends to it as a storefront page
// would), and one with a sites file whose allowed_origins name this editor, so that the editor
// connected with the secret key reads the session back itself. As a merchant: type the address
// and the key in "Send this visitor to a server", move the visitor over a few pages, click the
// nudge, add to cart, buy; then read the session back over HTTP from Node (GET /v1/sessions/{id},
// GET /v1/sessions) and find the pages and the intent scores; a refused key, a secret key and an
// unreachable server in words; the key in no storage and not in the address; screenshots at 1440
// and 390 px.
//
//   node --test www/test/storefront-relay.test.mjs
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { freshPage, launch, open, setState, shot } from './helpers.mjs';
import { BINARY, api, sha, startServer } from './nudge-server.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const DEMO_PK = 'pk_test_nudgeRulesDemoKey0001';
const DEMO_SK = 'sk_test_nudgeRulesDemoKey0001';
// The second server's site "shop": its publishable and secret test keys.
const SHOP_PK = 'pk_test_relayShopSiteKey0001';
const SHOP_SK = 'sk_test_relayShopSecretKey001';
// A site whose publishable key has used its 10,000 events of the minute before the editor sends.
const BUSY_PK = 'pk_test_relayBusySiteKey0001';
const BUSY_SK = 'sk_test_relayBusySecretKey001';

let env;
let demo;
let shop;
let dir;

before(async () => {
  env = await launch({ width: 1440, height: 1000 });
  dir = mkdtempSync(path.join(tmpdir(), 'nudge-sf-relay-'));
  demo = await startServer(BINARY, ['--demo', '--store', `sqlite:${path.join(dir, 'demo.db')}`]);
  const sites = path.join(dir, 'sites.toml');
  writeFileSync(sites, `
[[site]]
id = "shop"
keys = ["sha256:${sha(SHOP_SK)}"]
site_keys = ["sha256:${sha(SHOP_PK)}"]
allowed_origins = ["${env.server.url}"]

[[site]]
id = "busy"
keys = ["sha256:${sha(BUSY_SK)}"]
site_keys = ["sha256:${sha(BUSY_PK)}"]
`);
  shop = await startServer(BINARY, ['--sites', sites, '--store', `sqlite:${path.join(dir, 'shop.db')}`]);
});

after(async () => {
  await env?.close();
  await demo?.stop();
  await shop?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh editor (empty storage) at `width`, with its console kept in `page.logs`. */
async function editorPage(width = 1440, height = 1000) {
  const page = await freshPage(env);
  await page.setViewportSize({ width, height });
  page.logs = [];
  page.on('console', (m) => page.logs.push(m.text()));
  await open(page, env.server);
  return page;
}

/** Opens "Send this visitor to a server", types the address and the key, and starts. */
async function startSending(page, { address, key }) {
  const details = page.locator('#visitor-relay details');
  if (!(await details.evaluate((d) => d.open))) await page.locator('#visitor-relay summary').click();
  await page.locator('#vr-address').fill(address);
  await page.locator('#vr-key').fill(key);
  await page.locator('.vr-start').click();
}

/** Waits until the page view of `url` has been made (a typed URL waits for a pause). */
function viewed(page, url) {
  return page.waitForFunction((u) => window.nudgePlayground.visitorRelay.viewUrl === u, url, { timeout: 10_000 });
}

/** Sends what waits and waits until the server has answered every event. */
async function sent(page) {
  await page.evaluate(() => window.nudgePlayground.visitorRelay.flush());
  await page.waitForFunction(() => window.nudgePlayground.visitorRelay.totals.queued === 0, null, { timeout: 15_000 });
}

/** The panel's words. */
function panelText(page) {
  return page.locator('#visitor-relay .vr-body').innerText();
}

/** Fails when the key is in a storage, the address (share link), a cookie, the page's HTML or the console. */
async function assertKeyNowhere(page, key) {
  const found = await page.evaluate((k) => {
    const places = [];
    for (const [name, storage] of [['localStorage', localStorage], ['sessionStorage', sessionStorage]]) {
      for (let i = 0; i < storage.length; i++) {
        const item = storage.key(i);
        if (item.includes(k) || storage.getItem(item).includes(k)) places.push(`${name}[${item}]`);
      }
    }
    if (location.href.includes(k)) places.push('the address (share link)');
    if (document.cookie.includes(k)) places.push('a cookie');
    if (document.documentElement.outerHTML.includes(k)) places.push('the page’s HTML');
    return places;
  }, key);
  assert.deepEqual(found, [], `the key was found in ${found.join(', ')}`);
  assert.ok(!page.logs.some((l) => l.includes(key)), 'the key was logged to the console');
}

/** axe-core's serious and critical violations inside the panel. */
async function axeViolations(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const result = await window.axe.run({ include: [['#visitor-relay']] }, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

/** The events of a stored session as [type, url, intent_score]. */
const eventRows = (s) => s.events.map((e) => [e.type, e.url, e.intent_score]);

/** Scrolls `selector` to the top of the viewport, under the sticky top bar. */
function scrollUnderTopBar(page, selector) {
  return page.locator(selector).evaluate((el) => {
    const bar = document.querySelector('.topbar').getBoundingClientRect().height;
    window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - bar - 12);
  });
}

/** Hides the toast (it would cover the panel in a screenshot). */
function hideToast(page) {
  return page.evaluate(() => { document.querySelector('#toast').hidden = true; });
}

describe('the storefront’s visitor sent to a server', () => {
  test('a visitor over three pages, a nudge clicked, add to cart, purchase: read back over HTTP with the pages and intent scores', async () => {
    const page = await editorPage();
    // On a collection at intent 40, the sticky bar shows (free-shipping-bar: intent 30 to 59).
    await setState(page, { url: '/collections/summer', intent: 40, idle: 0 });
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'sticky_bar');
    await startSending(page, { address: demo.base, key: DEMO_PK });
    await viewed(page, '/collections/summer');
    await sent(page);
    assert.match(await panelText(page), /Sending to 127\.0\.0\.1:\d+ as a test visitor\. 2 events sent, 2 accepted\./);
    assert.equal(await page.locator('.vr-pill').textContent(), 'sending');

    // The product page at intent 82, idle 9 s: the chat bubble (sizing-help). The intent moves
    // first (no event: it goes with the next one), then the page, whose view waits for a pause in
    // typing and carries the intent of that moment.
    await setState(page, { intent: 82, idle: 9000 });
    await setState(page, { url: '/products/linen-shirt' });
    await viewed(page, '/products/linen-shirt');
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'chat_bubble');
    assert.equal(await page.locator('.vr-click').isEnabled(), true);
    await page.locator('.vr-click').click();
    assert.equal(await page.locator('.vr-click').isEnabled(), false, 'one outcome per nudge');
    await page.locator('.vr-cart').click();
    await sent(page);
    // A screenshot of the storefront and the panel (the key field masked) with the nudge clicked.
    await hideToast(page);
    await page.setViewportSize({ width: 1440, height: 1250 });
    await scrollUnderTopBar(page, '.preview-panel');
    await shot(page, 'storefront-relay');
    await page.setViewportSize({ width: 1440, height: 1000 });
    // The cart (a quiet zone) at intent 95, and the purchase.
    await setState(page, { intent: 95 });
    await setState(page, { url: '/cart' });
    await viewed(page, '/cart');
    await page.locator('.vr-purchase').click();
    await sent(page);

    const text = await panelText(page);
    assert.match(text, /8 events sent, 8 accepted\./, text);
    const sessionId = await page.locator('.vr-session').textContent();
    assert.match(sessionId, /^sess_[A-Za-z0-9_-]+$/);
    assert.match(await page.locator('.vr-curl').textContent(), new RegExp(`curl -s -H 'Authorization: Bearer sk_test_…' \\\\\n${demo.base}/v1/sessions/${sessionId}$`));
    assert.match(text, /GET \/v1\/sessions\/sess_/);
    // The log, newest first.
    const log = await page.locator('#visitor-relay .vr-log li').allInnerTexts();
    assert.deepEqual(log.map((l) => l.replace(/\s+/g, ' ').trim()), [
      'Purchase /cart · intent 95',
      'Page view /cart · intent 95',
      'Add to cart /products/linen-shirt · intent 82',
      'Nudge clicked: chat bubble (sizing-help)',
      'Nudge shown: chat bubble (sizing-help) /products/linen-shirt · intent 82',
      'Page view /products/linen-shirt · intent 82',
      'Nudge shown: sticky bar (free-shipping-bar) /collections/summer · intent 40',
      'Page view /collections/summer · intent 40',
    ]);

    // Read back as a merchant's program does, with the site's secret key.
    const one = await api(demo.base, 'GET', `/v1/sessions/${sessionId}`, { key: DEMO_SK });
    assert.equal(one.status, 200, JSON.stringify(one.json));
    const s = one.json.data;
    assert.deepEqual(eventRows(s), [
      ['PAGE_VIEW', '/collections/summer', 40],
      ['PAGE_VIEW', '/products/linen-shirt', 82],
      ['ADD_TO_CART', '/products/linen-shirt', 82],
      ['PAGE_VIEW', '/cart', 95],
      ['PURCHASE', '/cart', 95],
    ]);
    assert.equal(s.page_count, 3);
    assert.equal(s.intent_score, 95);
    assert.equal(s.converted, true);
    assert.equal(s.nudge_count, 2);
    // A purchase within 30 minutes of the visitor acting on a nudge (a click, a chat opened)
    // counts; a nudge only shown never does (docs/contract/read-api.md, amended 2026-11-26).
    assert.deepEqual(s.nudges.map((n) => [n.type, n.outcome, n.influenced_conversion]), [
      ['sticky_bar', 'shown', false],
      ['chat_bubble', 'clicked', true],
    ]);
    // The list shows it first (the newest session of the site's test data).
    const list = await api(demo.base, 'GET', '/v1/sessions?limit=5', { key: DEMO_SK });
    assert.equal(list.status, 200);
    assert.equal(list.json.data[0].id, sessionId);
    assert.equal(list.json.data[0].page_count, 3);

    assert.deepEqual(await axeViolations(page), []);
    await assertKeyNowhere(page, DEMO_PK);
    await page.locator('#share-btn').click();
    await page.waitForFunction(() => location.hash.length > 10);
    await page.evaluate(() => window.dispatchEvent(new Event('pagehide'))); // the draft is saved now
    await assertKeyNowhere(page, DEMO_PK);


    // Stop: nothing more is sent; a new visitor is a new session.
    await page.locator('.vr-new').click();
    await page.waitForFunction((old) => {
      const r = window.nudgePlayground.visitorRelay;
      return r.sending && r.sessionId && r.sessionId !== old;
    }, sessionId);
    await sent(page);
    await page.locator('.vr-stop').click();
    await page.waitForFunction(() => document.querySelector('.vr-pill').textContent === 'stopped');
    assert.match(await panelText(page), /Stopped sending to 127\.0\.0\.1:\d+\. 1 event sent, 1 accepted\./);
    assert.equal(await page.locator('#vr-key').isEnabled(), true);
    await page.close();
  });

  test('a refused key, a secret key, a key of another form and an unreachable server, in words', async () => {
    const page = await editorPage();
    // Checked before anything is sent.
    await startSending(page, { address: demo.base, key: DEMO_SK });
    assert.match(await page.locator('#visitor-relay .vr-error').first().textContent(), /secret key \(sk_…\): a secret key must never be put in a page/);
    await startSending(page, { address: demo.base, key: 'pk_test_short' });
    assert.match(await page.locator('#visitor-relay .vr-error').first().textContent(), /pk_test_ or pk_live_ followed by at least 16 letters or digits/);
    assert.equal(await page.evaluate(() => window.nudgePlayground.visitorRelay.sending), false);

    // A publishable key the server does not know: 401, said in words, nothing stored.
    await startSending(page, { address: demo.base, key: 'pk_test_noSiteHasThisKey001' });
    await page.waitForFunction(() => !document.querySelector('.vr-problem').hidden, null, { timeout: 10_000 });
    const refused = await page.locator('.vr-problem').textContent();
    assert.match(refused, new RegExp(`The server at ${demo.base.replace(/\./g, '\\.')} refused this key: it is not a publishable key of a site there`));
    assert.match(refused, /2 events not stored\..*Sending stopped: correct the key and start again\./);
    assert.equal(await page.locator('.vr-pill').textContent(), 'refused');
    await page.waitForFunction(() => !window.nudgePlayground.visitorRelay.sending);
    assert.match(await panelText(page), /0 accepted, 2 not stored/);
    assert.equal(await page.locator('#vr-key').isEditable(), true, 'the key can be corrected');
    assert.equal(await page.locator('.vr-curl').count(), 0, 'no way to read back a session nothing of which was stored');
    await page.locator('#visitor-relay').evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await shot(page, 'storefront-relay-refused');

    // An address where nothing listens: retried, said so.
    await startSending(page, { address: 'http://127.0.0.1:9', key: DEMO_PK });
    await page.waitForFunction(() => !document.querySelector('.vr-problem').hidden, null, { timeout: 10_000 });
    assert.match(await page.locator('.vr-problem').textContent(), /No answer from http:\/\/127\.0\.0\.1:9: the server may not be running.*sent again in about/);
    assert.equal(await page.locator('.vr-pill').textContent(), 'retrying');
    await page.locator('.vr-stop').click();
    await page.waitForFunction(() => !window.nudgePlayground.visitorRelay.sending);
    assert.match(await page.locator('.vr-problem').textContent(), /Stopped before the server took them: 2 events not sent\./);
    await page.close();
  });

  test('rate limited: the wait in words, the events kept for the retry', async () => {
    // The key's 10,000 events of the minute, sent from Node in batches of 500.
    const now = new Date().toISOString();
    for (let b = 0; b < 20; b++) {
      const events = Array.from({ length: 500 }, (_, i) => ({
        message_id: `m_busy_${b}_${i}`, session_id: `sess_busy${b}`, type: 'PAGE_VIEW', occurred_at: now, url: `/p/${i}`,
      }));
      const r = await api(shop.base, 'POST', '/v1/events', { key: BUSY_PK, body: { events } });
      assert.equal(r.status, 202, JSON.stringify(r.json));
    }
    const page = await editorPage();
    await startSending(page, { address: shop.base, key: BUSY_PK });
    await page.waitForFunction(() => !document.querySelector('.vr-problem').hidden, null, { timeout: 10_000 });
    const text = await page.locator('.vr-problem').textContent();
    assert.match(text, /Rate limited: this key sent more events in the last minute than the server takes\. The 2 events are sent again in about \d+ seconds?, when the server said they fit\./);
    assert.equal(await page.locator('.vr-pill').textContent(), 'retrying');
    assert.match(await panelText(page), /0 events sent, 0 accepted, 2 waiting\./);
    await page.locator('.vr-stop').click();
    await page.waitForFunction(() => !window.nudgePlayground.visitorRelay.sending);
    assert.match(await page.locator('.vr-problem').textContent(), /Stopped before the server took them: 2 events not sent\./);
    await page.close();
  });

  test('connected to the same server with the secret key, the editor reads the session back itself', async () => {
    const page = await editorPage();
    await page.locator('.sb-connect').click();
    await page.locator('#cx-address').fill(shop.base);
    await page.locator('#cx-key').fill(SHOP_SK);
    await page.locator('.cx-dialog button[type=submit]').click();
    await page.waitForFunction(() => document.querySelector('#server-bar').classList.contains('connected'), null, { timeout: 15_000 });

    await setState(page, { url: '/search?q=linen', intent: 25, idle: 7000 });
    await startSending(page, { address: shop.base, key: SHOP_PK });
    await viewed(page, '/search?q=linen');
    await page.locator('.vr-dismiss').click();
    await setState(page, { intent: 30 });
    await setState(page, { url: '/blog/how-to-wash-linen' });
    await viewed(page, '/blog/how-to-wash-linen');
    await sent(page);
    await page.locator('.vr-read').click();
    await page.waitForFunction(() => /Stored:/.test(document.querySelector('.vr-stored')?.textContent ?? ''), null, { timeout: 10_000 });
    const stored = (await page.locator('.vr-stored').innerText()).replace(/\s+/g, ' ');
    assert.match(stored, /Stored: 2 page views of 2 pages, intent 30 at the end, 1 nudge shown, no purchase/);
    assert.match(stored, /Page view \/search\?q=linen · intent 25/);
    assert.match(stored, /Page view \/blog\/how-to-wash-linen · intent 30/);
    assert.match(stored, /Chat bubble dismissed/);
    // The same from Node.
    const sessionId = await page.locator('.vr-session').textContent();
    const s = (await api(shop.base, 'GET', `/v1/sessions/${sessionId}`, { key: SHOP_SK })).json.data;
    assert.deepEqual(eventRows(s), [['PAGE_VIEW', '/search?q=linen', 25], ['PAGE_VIEW', '/blog/how-to-wash-linen', 30]]);
    assert.deepEqual(s.nudges.map((n) => [n.type, n.outcome]), [['chat_bubble', 'dismissed']]);
    await assertKeyNowhere(page, SHOP_PK);
    await assertKeyNowhere(page, SHOP_SK);
    await hideToast(page);
    await scrollUnderTopBar(page, '#visitor-relay');
    await shot(page, 'storefront-relay-read-back');
    await page.close();
  });

  test('at 390 px: the panel fits the phone, no sideways scroll, no serious axe-core violation', async () => {
    const page = await editorPage(390, 844);
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    await startSending(page, { address: demo.base, key: DEMO_PK });
    await viewed(page, '/products/linen-shirt');
    await page.locator('.vr-cart').click();
    await sent(page);
    assert.match(await panelText(page), /3 events sent, 3 accepted\./);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0, `the page scrolls sideways by ${overflow} px`);
    assert.deepEqual(await axeViolations(page), []);
    await hideToast(page);
    await scrollUnderTopBar(page, '#visitor-relay');
    await shot(page, 'phone-storefront-relay');
    await page.close();
  });

  test('no console error', () => {
    assert.deepEqual(env.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });
});
