// The storefront runtime (docs/contract/storefront.md) in headless Chromium, on the test shop (examples/shop, served
// with the Content-Security-Policy docs/STOREFRONT.md gives) against the real server binary
// (target/debug/nudge-rules-server) on a real SQLite store, with pkg/dist/storefront.js as a shop
// puts it in a page. A visitor walks the shop: the nudge the engine decides appears when its
// conditions hold (idle time advanced with Playwright's clock), never on a quiet-zone page, at
// most once per session, not again during a cooldown after a dismissal, only on exit intent for
// such a rule, never for a held-out visitor (NUDGE_HELD_OUT instead); outcomes come back; the
// session read back has its pages, intent, nudges, outcomes and influenced_conversion; a newly
// published version reaches an open page at its next config refresh; axe-core finds no serious or
// critical violation for each kind at 1440 and 390 px (screenshots for docs/img/); the config
// endpoint down, the relay refusing, a damaged cached config and a shop CSS hiding everything
// leave the shop working, onError told, nothing thrown.
//
//   node --test pkg/test/storefront-shop.test.mjs     (after scripts/build-wasm.sh and
//                                                       cargo build -p nudge-rules-server)
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { startShop } from '../../examples/shop/serve.mjs';
import { freePort, readSession, startServer } from './server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// Screenshots go to the ignored target/screenshots/docs/; `make screenshots` copies them to docs/img/.
const IMG = join(ROOT, 'target', 'screenshots', 'docs');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PK = 'pk_test_storefrontShopKey001';
const SK = 'sk_test_storefrontShopKey001';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run'];
const sha = (text) => createHash('sha256').update(text).digest('hex');

/** The shop's config: one rule per nudge kind, a cooldown, a holdout, the usual quiet zones. */
const CONFIG = {
  version: 1,
  quiet_zones: ['/checkout/**', '/cart', '/account/**'],
  rules: [
    { id: 'exit-offer', nudge: { type: 'exit_modal', message: 'Before you go: take 10% off your first order.', cta: 'Get my code', cta_url: '/collections/shirts' }, when: { exit_intent: true } },
    { id: 'sizing-help', nudge: { type: 'chat_bubble', message: 'Not sure about the fit? Ask a stylist.', cta: 'Start chat' }, when: { min_idle_ms: 8000, pages: ['/products/**'] }, cap: { cooldown_ms: 86_400_000 } },
    { id: 'care-toast', nudge: { type: 'toast', message: 'New: how to care for linen, in three steps.', cta: 'Read it', cta_url: '/guide/care' }, when: { pages: ['/guide/fit'] } },
    { id: 'held-toast', holdout_percent: 50, nudge: { type: 'toast', message: 'Care tips, straight to your inbox.', cta: 'Sign up' }, when: { pages: ['/guide/care'] } },
    { id: 'free-shipping', nudge: { type: 'sticky_bar', message: 'Free shipping on orders over €100.', cta: 'Shop shirts', cta_url: '/collections/shirts' }, when: { pages: ['/collections/**'], min_idle_ms: 3000 } },
  ],
};

/** A visitor id the engine holds out of `rule` (bucket below `percent` x 100), or not. */
function visitorFor(rule, percent, heldOut) {
  for (let i = 0; ; i++) {
    const id = `vis_shopTest${i}`;
    const digest = createHash('sha256').update(`${rule}:${id}`).digest();
    const bucket = Number(digest.readBigUInt64BE(0) % 10000n);
    if ((bucket < percent * 100) === heldOut) return id;
  }
}

let dir;
let server;
let shop;
let browser;
let version = 0;

async function api(method, route, body, headers = {}) {
  const response = await fetch(`${server.base}${route}`, {
    method,
    headers: { Authorization: `Bearer ${SK}`, 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function publish(config) {
  const precondition = version === 0 ? { 'If-None-Match': '*' } : { 'If-Match': `"v${version}"` };
  const r = await api('POST', '/v1/config/versions', { config }, precondition);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  version = r.body.data.version;
  // Served by the runtime endpoint (the server installs it at once on this instance).
  const deadline = Date.now() + 2000;
  for (;;) {
    const got = await (await fetch(`${server.base}/v1/runtime/config?key=${PK}`)).json();
    if (got.data.version === version) return;
    assert.ok(Date.now() < deadline, `version ${version} not served within 2 s`);
    await new Promise((r2) => setTimeout(r2, 50));
  }
}

before(async () => {
  assert.ok(existsSync(join(ROOT, 'pkg', 'dist', 'storefront.js')), 'pkg/dist/storefront.js is missing: run scripts/build-wasm.sh');
  dir = mkdtempSync(join(tmpdir(), 'nudge-storefront-'));
  const sites = join(dir, 'sites.toml');
  writeFileSync(sites, `[[site]]\nid = "shop"\nrate_limit = 100000\nkeys = ["sha256:${sha(SK)}"]\nsite_keys = ["sha256:${sha(PK)}"]\n`);
  server = await startServer(['--sites', sites, '--store', `sqlite:${join(dir, 'store.db')}`,
    '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  await publish(CONFIG);
  shop = await startShop({ endpoint: server.base, siteKey: PK });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ARGS });
  mkdirSync(IMG, { recursive: true });
});

after(async () => {
  await browser?.close();
  await shop?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A visitor: a fresh context (empty storage) with Playwright's clock installed, page errors and
 * CSP violations collected. `init` runs before the page's scripts (storage set up).
 */
async function visitor({ width = 1440, height = 900, init, reducedMotion } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, reducedMotion });
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource|ERR_CONNECTION_REFUSED/.test(m.text())) page.problems.push(`console: ${m.text()}`);
  });
  if (init) await context.addInitScript(init.fn, init.arg);
  await page.clock.install();
  page.close = ((close) => async () => {
    await close.call(page);
    await context.close();
  })(page.close);
  return page;
}

/** Opens `path` of the shop and waits for the runtime to start. */
async function visit(page, path) {
  await page.goto(`${shop.url}${path}`);
  await page.waitForFunction(() => window.nudgeRules);
  await page.evaluate(() => window.nudgeRules.ready);
}

/** The nudge's card (the host itself is a zero-size box). */
const nudgeOf = (page) => page.locator('[data-nudge-rules] .nudge');
const kindShown = (page) => page.evaluate(() => document.querySelector('[data-nudge-rules]')?.getAttribute('data-nudge-rules') ?? null);
const errorsOf = (page) => page.evaluate(() => window.nudgeErrors.map((e) => e.code));

/** Sends what the relay holds and reads the visitor's session back from the server. */
async function sessionOf(page) {
  const id = await page.evaluate(async () => {
    await window.nudgeRules.flush();
    return window.nudgeRules.sessionId;
  });
  const { status, body } = await readSession(server.base, id, SK);
  assert.equal(status, 200, JSON.stringify(body));
  return body.data;
}

describe('the storefront runtime on the test shop', () => {
  test('a product page: the chat bubble after 8 s of idling, chat opened, the visit read back', async () => {
    const page = await visitor();
    await visit(page, '/');
    await page.click('a[href="/collections/shirts"] >> nth=0');
    await page.waitForURL('**/collections/shirts');
    await page.evaluate(() => window.nudgeRules.ready);
    await page.click('a[href="/products/linen-shirt"]');
    await page.waitForURL('**/products/linen-shirt');
    await page.evaluate(() => window.nudgeRules.ready);
    assert.equal(await kindShown(page), null, 'nothing before the idle time');
    await page.clock.fastForward(7000);
    assert.equal(await kindShown(page), null, '7 s is not enough');
    await page.clock.fastForward(1500);
    await nudgeOf(page).waitFor();
    assert.equal(await kindShown(page), 'chat_bubble');
    assert.equal(await page.locator('[data-nudge-rules] .msg').textContent(), CONFIG.rules[1].nudge.message);
    // The page's content did not move: the nudge is fixed, over it.
    await page.locator('[data-nudge-rules] .cta').click();
    assert.equal(await kindShown(page), null, 'the bubble closes once taken');
    assert.equal(await page.evaluate(() => window.chatOpened), 1, 'onChatOpen was called');
    // Added to cart and bought within 30 minutes: the chat influenced the conversion.
    await page.click('#add-to-cart');
    await page.goto(`${shop.url}/checkout`);
    await page.evaluate(() => window.nudgeRules.ready);
    await page.click('#place-order');
    const session = await sessionOf(page);
    // Each event with its page and the built-in score (10 per page, 30 more after the cart). The
    // order is not compared: the fake clock's jumps move the browser's clock against the server's,
    // and the relay's `sent_at` correction (docs/contract/relay.md) reorders events of different batches.
    const seen = session.events.map((e) => `${e.type} ${new URL(e.url).pathname} ${e.intent_score}`).sort();
    assert.deepEqual(seen, [
      'ADD_TO_CART /products/linen-shirt 60',
      'PAGE_VIEW / 10',
      'PAGE_VIEW /checkout 70',
      'PAGE_VIEW /collections/shirts 20',
      'PAGE_VIEW /products/linen-shirt 30',
      'PURCHASE /checkout 70',
    ]);
    assert.equal(session.page_count, 4);
    assert.equal(session.converted, true);
    assert.equal(session.nudges.length, 1);
    assert.equal(session.nudges[0].type, 'chat_bubble');
    assert.equal(session.nudges[0].outcome, 'chat_opened');
    assert.equal(session.nudges[0].influenced_conversion, true);
    assert.deepEqual(page.problems, []);
    assert.deepEqual(await errorsOf(page), []);
    await page.close();
  });

  test('never on a quiet-zone page; at most once per session; not again in a cooldown after a dismissal', async () => {
    const page = await visitor();
    for (const quiet of ['/cart', '/checkout', '/account']) {
      await visit(page, quiet);
      await page.clock.fastForward(60_000);
      assert.equal(await kindShown(page), null, `quiet zone ${quiet}`);
    }
    await visit(page, '/products/oxford-shirt');
    await page.clock.fastForward(8500);
    await nudgeOf(page).waitFor();
    await page.locator('[data-nudge-rules] .close').click();
    assert.equal(await kindShown(page), null);
    // Another product, same session: the rule's cap (once per session) holds.
    await visit(page, '/products/flannel-shirt');
    await page.clock.fastForward(60_000);
    assert.equal(await kindShown(page), null, 'at most once per session');
    // A new session (a new tab: sessionStorage empty), same visitor: the 24 h cooldown holds.
    await page.evaluate(() => sessionStorage.clear());
    await visit(page, '/products/linen-shirt');
    const newSession = await page.evaluate(() => window.nudgeRules.sessionId);
    await page.clock.fastForward(60_000);
    assert.equal(await kindShown(page), null, 'cooldown after a dismissal');
    const session = await sessionOf(page);
    assert.equal(session.id, newSession);
    assert.equal(session.nudges.length, 0);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('the exit modal only on exit intent: focus in and trapped, Escape closes it, focus returned, dismissed recorded', async () => {
    const page = await visitor();
    await visit(page, '/');
    await page.clock.fastForward(120_000);
    assert.equal(await kindShown(page), null, 'idling is not leaving');
    await page.focus('a.brand');
    await page.evaluate(() => document.documentElement.dispatchEvent(new MouseEvent('mouseout', { bubbles: true, clientX: 400, clientY: -2, relatedTarget: null })));
    await nudgeOf(page).waitFor();
    assert.equal(await kindShown(page), 'exit_modal');
    const focused = () => page.evaluate(() => {
      const host = document.querySelector('[data-nudge-rules]');
      const active = host?.shadowRoot?.activeElement;
      return active ? active.className : document.activeElement?.className ?? null;
    });
    assert.equal(await focused(), 'cta', 'focus moved into the dialog');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'close');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'cta', 'Tab stays in the dialog');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(), 'close');
    await page.keyboard.press('Escape');
    assert.equal(await kindShown(page), null);
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'brand', 'focus returned');
    const session = await sessionOf(page);
    assert.equal(session.nudges.length, 1);
    assert.equal(session.nudges[0].type, 'exit_modal');
    assert.equal(session.nudges[0].outcome, 'dismissed');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('single-page navigation: pushState is a page view and shows the toast; popstate removes it', async () => {
    const page = await visitor();
    await visit(page, '/guide');
    assert.equal(await kindShown(page), null);
    await page.click('a[data-spa][href="/guide/fit"]');
    await nudgeOf(page).waitFor();
    assert.equal(await kindShown(page), 'toast');
    assert.equal(await page.locator('[data-nudge-rules] [role="status"]').count(), 1);
    await page.goBack();
    await page.waitForFunction(() => location.pathname === '/guide');
    assert.equal(await kindShown(page), null, 'a page view closes the nudge');
    const session = await sessionOf(page);
    assert.deepEqual(session.events.map((e) => new URL(e.url).pathname).sort(), ['/guide', '/guide', '/guide/fit']);
    assert.equal(session.nudges[0].type, 'toast');
    assert.equal(session.nudges[0].outcome, 'shown');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('a CTA with cta_url: the visitor is taken there and the click is recorded', async () => {
    const page = await visitor();
    await visit(page, '/collections/shirts');
    await page.clock.fastForward(3500);
    await nudgeOf(page).waitFor();
    assert.equal(await kindShown(page), 'sticky_bar');
    const cta = page.locator('[data-nudge-rules] a.cta');
    assert.equal(await cta.getAttribute('href'), '/collections/shirts');
    const sid = await page.evaluate(() => window.nudgeRules.sessionId);
    await cta.click();
    await page.waitForLoadState('load');
    await page.evaluate(() => window.nudgeRules.ready);
    assert.equal(await page.evaluate(() => window.nudgeRules.sessionId), sid);
    const session = await sessionOf(page);
    assert.equal(session.nudges.length, 1);
    assert.equal(session.nudges[0].type, 'sticky_bar');
    assert.equal(session.nudges[0].outcome, 'clicked');
    assert.equal(session.page_count, 1, 'the CTA led to the same collection page again');
    assert.equal(session.events.length, 2);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('the page\'s own intent score (data-intent-score): used when it is an integer 0 to 100, else reported', async () => {
    const scored = await startShop({ endpoint: server.base, siteKey: PK, tag: { 'data-intent-score': 'shopScore' } });
    try {
      const page = await visitor({ init: { fn: () => {
        window.shopScore = () => (location.pathname === '/' ? 'high' : 90);
      } } });
      await page.goto(`${scored.url}/`);
      await page.waitForFunction(() => window.nudgeRules);
      await page.evaluate(() => window.nudgeRules.ready);
      assert.ok((await errorsOf(page)).includes('intent_score'), JSON.stringify(await page.evaluate(() => window.nudgeErrors)));
      await page.goto(`${scored.url}/collections/shirts`);
      await page.waitForFunction(() => window.nudgeRules);
      await page.evaluate(() => window.nudgeRules.ready);
      const session = await sessionOf(page);
      const scores = Object.fromEntries(session.events.map((e) => [new URL(e.url).pathname, e.intent_score]));
      assert.deepEqual(scores, { '/': 10, '/collections/shirts': 90 }, 'the built-in score for the bad value, the page\'s own otherwise');
      assert.deepEqual(page.problems, []);
      await page.close();
    } finally {
      await scored.close();
    }
  });

  test('a held-out visitor sees nothing and records NUDGE_HELD_OUT; another visitor sees the toast', async () => {
    const held = visitorFor('held-toast', 50, true);
    const seen = visitorFor('held-toast', 50, false);
    const seed = { fn: (id) => localStorage.setItem('nudge-rules.visitor', JSON.stringify({ id, history: [], sessions: [] })) };
    const a = await visitor({ init: { ...seed, arg: held } });
    await visit(a, '/guide/care');
    assert.equal(await a.evaluate(() => window.nudgeRules.visitorId), held);
    await a.clock.fastForward(30_000);
    assert.equal(await kindShown(a), null, 'held out');
    const sessionA = await sessionOf(a);
    assert.equal(sessionA.nudges.length, 0);
    const b = await visitor({ init: { ...seed, arg: seen } });
    await visit(b, '/guide/care');
    await nudgeOf(b).waitFor();
    assert.equal(await kindShown(b), 'toast');
    await sessionOf(b);
    // The uplift report counts the held-out visitor as the rule's control group.
    const report = await api('GET', '/v1/reports/uplift');
    const rule = report.body.data.rules.find((r) => r.rule_id === 'held-toast');
    assert.ok(rule, JSON.stringify(report.body));
    assert.equal(rule.control.sessions, 1);
    assert.equal(rule.treated.sessions, 1);
    assert.deepEqual([...a.problems, ...b.problems], []);
    await a.close();
    await b.close();
  });

  test('a newly published version reaches an open page at its next config refresh', async () => {
    const page = await visitor();
    await visit(page, '/guide');
    const changed = structuredClone(CONFIG);
    changed.rules[2].nudge.message = 'Version two: linen care in one minute.';
    await publish(changed);
    // Within the cache time the page keeps the config it has (60 s, the endpoint's max-age).
    await page.click('a[data-spa][href="/guide/care"]');
    const cached = () => page.evaluate((key) => JSON.parse(JSON.parse(sessionStorage.getItem(`nudge-rules.config.${key}`)).body).data.version, PK);
    assert.equal(await cached(), version - 1);
    // After it, the next page view revalidates (ETag) and decides with the new version.
    await page.clock.fastForward(61_000);
    await page.click('a[data-spa][href="/guide/fit"]');
    await page.waitForFunction((m) => document.querySelector('[data-nudge-rules]')?.shadowRoot?.querySelector('.msg')?.textContent === m, changed.rules[2].nudge.message);
    assert.equal(await cached(), version);
    await publish(CONFIG);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});

describe('the four nudges: accessible at 1440 and 390 px, screenshots', () => {
  const show = {
    chat_bubble: async (page) => {
      await visit(page, '/products/linen-shirt');
      await page.clock.fastForward(8500);
    },
    toast: async (page) => {
      await visit(page, '/guide');
      await page.click('a[data-spa][href="/guide/fit"]');
    },
    exit_modal: async (page) => {
      await visit(page, '/');
      await page.evaluate(() => document.documentElement.dispatchEvent(new MouseEvent('mouseout', { bubbles: true, clientX: 400, clientY: -2, relatedTarget: null })));
    },
    sticky_bar: async (page) => {
      await visit(page, '/collections/shirts');
      await page.clock.fastForward(3500);
    },
  };
  for (const width of [1440, 390]) {
    for (const [kind, open] of Object.entries(show)) {
      test(`${kind} at ${width} px: no serious or critical axe violation; keyboard only; screenshot`, async () => {
        const page = await visitor({ width, height: width > 500 ? 900 : 844, reducedMotion: 'reduce' });
        await open(page);
        await nudgeOf(page).waitFor();
        assert.equal(await kindShown(page), kind);
        // No layout shift: the shop's main content is where it was.
        const box = await page.locator('main').boundingBox();
        await page.evaluate(AXE);
        const result = await page.evaluate(async () => {
          // eslint-disable-next-line no-undef
          const r = await axe.run(document, { resultTypes: ['violations'] });
          return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
        });
        const serious = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        assert.deepEqual(serious, [], JSON.stringify(result, null, 1));
        // The dismiss control has a name, and fits in the viewport.
        const close = page.locator('[data-nudge-rules] .close');
        assert.match(await close.getAttribute('aria-label'), /Dismiss|Close/);
        const card = await page.locator('[data-nudge-rules] .nudge').boundingBox();
        assert.ok(card.x >= 0 && card.x + card.width <= width + 0.5, `${kind} fits in ${width} px: ${JSON.stringify(card)}`);
        await page.waitForTimeout(50);
        await page.screenshot({ path: join(IMG, `nudge-${kind}-${width}.png`) });
        assert.deepEqual(await page.locator('main').boundingBox(), box, 'the shop did not move');
        // Keyboard only: reach the dismiss control with Tab (the modal has focus already).
        if (kind === 'exit_modal') {
          await page.keyboard.press('Tab');
        } else {
          for (let i = 0; i < 40; i++) {
            await page.keyboard.press('Tab');
            const on = await page.evaluate(() => document.querySelector('[data-nudge-rules]')?.shadowRoot?.activeElement?.className);
            if (on === 'close') break;
          }
        }
        await page.keyboard.press('Enter');
        assert.equal(await kindShown(page), null, `${kind} dismissed with the keyboard`);
        assert.deepEqual(page.problems, []);
        await page.close();
      });
    }
  }
  test('at 320 px every kind fits', async () => {
    for (const [kind, open] of Object.entries(show)) {
      const page = await visitor({ width: 320, height: 640 });
      await open(page);
      await nudgeOf(page).waitFor();
      const card = await page.locator('[data-nudge-rules] .nudge').boundingBox();
      assert.ok(card.x >= 0 && card.x + card.width <= 320.5, `${kind}: ${JSON.stringify(card)}`);
      await page.close();
    }
  });
});

describe('failures leave the shop working, onError told, nothing thrown', () => {
  test('the config endpoint down: no nudges, the cart still works', async () => {
    const port = await freePort();
    const down = await startShop({ endpoint: `http://127.0.0.1:${port}`, siteKey: PK });
    try {
      const page = await visitor();
      await page.goto(`${down.url}/products/linen-shirt`);
      await page.waitForFunction(() => window.nudgeRules);
      await page.evaluate(() => window.nudgeRules.ready);
      await page.clock.fastForward(10_000);
      assert.equal(await kindShown(page), null);
      assert.ok((await errorsOf(page)).includes('config_fetch'), JSON.stringify(await page.evaluate(() => window.nudgeErrors)));
      await page.click('#add-to-cart');
      assert.match(await page.textContent('#status'), /Added to cart/);
      assert.deepEqual(page.problems, []);
      await page.close();
    } finally {
      await down.close();
    }
  });

  test('the relay refusing: the nudge still shows, onError hears the refusal', async () => {
    const page = await visitor();
    await page.route('**/v1/events', (route) => route.fulfill({ status: 401, contentType: 'application/json', body: '{"error":"Unauthorized","message":"the API key is not valid"}', headers: { 'access-control-allow-origin': '*' } }));
    await visit(page, '/products/linen-shirt');
    await page.clock.fastForward(8500);
    await nudgeOf(page).waitFor();
    await page.evaluate(() => window.nudgeRules.flush());
    assert.ok((await errorsOf(page)).includes('http'), JSON.stringify(await page.evaluate(() => window.nudgeErrors)));
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('a damaged cached config: reported, fetched again, the nudge shows', async () => {
    const page = await visitor({ init: { fn: (key) => sessionStorage.setItem(`nudge-rules.config.${key}`, '{"etag": "W/\\"x\\"", "at": 1, "body": "{not json'), arg: PK } });
    await visit(page, '/products/linen-shirt');
    await page.clock.fastForward(8500);
    await nudgeOf(page).waitFor();
    assert.ok((await errorsOf(page)).includes('config_cache'), JSON.stringify(await page.evaluate(() => window.nudgeErrors)));
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('a shop CSS with * { display: none }: nothing thrown, onError hears the hidden nudge', async () => {
    const page = await visitor();
    await page.route('**/shop.css', async (route) => {
      const original = readFileSync(join(ROOT, 'examples', 'shop', 'shop.css'), 'utf8');
      await route.fulfill({ status: 200, contentType: 'text/css', body: `${original}\n* { display: none !important; }\n` });
    });
    await visit(page, '/products/linen-shirt');
    await page.clock.fastForward(8500);
    await page.waitForFunction(() => document.querySelector('[data-nudge-rules]'));
    // Checked in the task after the drawing.
    await page.waitForFunction(() => window.nudgeErrors.some((e) => e.code === 'hidden'), null, { timeout: 5000 }).catch(() => {});
    assert.ok((await errorsOf(page)).includes('hidden'), JSON.stringify(await page.evaluate(() => window.nudgeErrors)));
    // The shop's own script still runs.
    await page.evaluate(() => document.getElementById('add-to-cart').click());
    assert.match(await page.evaluate(() => document.getElementById('status').textContent), /Added to cart/);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
