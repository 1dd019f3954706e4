// "See it in the test shop" (issue 36): the editor opens the test shop (examples/shop, as `make
// shop` serves it) with its draft config, not the published one, and the real storefront runtime
// (pkg/dist/storefront.js) draws a nudge of a rule that only the draft has. In headless Chromium
// against the server binary (`--demo`, whose published config has no such rule; the runtime's
// events go to its relay as on any shop page).
//
//   node --test www/test/shop-preview.test.mjs   (after make wasm and cargo build -p nudge-rules-server)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { startShop } from '../../examples/shop/serve.mjs';
import { SHOTS, freshPage, launch, open, setConfig, setState } from './helpers.mjs';
import { BINARY, startServer } from './nudge-server.mjs';

const DEMO_PK = 'pk_test_nudgeRulesDemoKey0001';
const MESSAGE = 'Draft only: 15% off linen today';
const DRAFT = {
  version: 1,
  quiet_zones: ['/checkout/**'],
  rules: [{ id: 'draft-linen-toast', nudge: { type: 'toast', message: MESSAGE, cta: 'Show me' }, when: { pages: ['/products/**'] } }],
};

let env;
let demo;
let shop;
let dir;
before(async () => {
  env = await launch({ width: 1440, height: 1000 });
  dir = mkdtempSync(path.join(tmpdir(), 'nudge-shop-preview-'));
  demo = await startServer(BINARY, ['--demo', '--store', `sqlite:${path.join(dir, 'demo.db')}`]);
  shop = await startShop({ endpoint: demo.base, siteKey: DEMO_PK });
});
after(async () => {
  await shop?.close();
  await demo?.stop();
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the editor opens the test shop with its draft, and the runtime shows the draft rule\'s nudge', async () => {
  const { page, context } = env;
  await open(page, env.server);
  await setConfig(page, JSON.stringify(DRAFT, null, 2));
  await setState(page, { url: '/products/linen-shirt?ref=editor', intent: 40, idle: 0 });
  await page.locator('#shop-preview summary').click();
  await page.locator('#sp-address').fill(shop.url);
  const [shopPage] = await Promise.all([context.waitForEvent('page'), page.locator('#shop-preview .sp-open').click()]);
  const errors = [];
  shopPage.on('pageerror', (e) => errors.push(String(e)));
  await shopPage.waitForLoadState('load');
  // The visitor's page, with the draft: the nudge of the rule only the draft has.
  const nudge = shopPage.getByText(MESSAGE);
  await nudge.waitFor({ state: 'visible', timeout: 20_000 });
  const url = new URL(shopPage.url());
  assert.equal(url.pathname, '/products/linen-shirt');
  assert.equal(url.search, '?ref=editor');
  assert.equal(url.hash, '', 'the fragment with the draft is removed from the address');
  // The tab keeps the draft for its later pages; nothing went wrong on the way.
  const kept = await shopPage.evaluate((key) => sessionStorage.getItem(`nudge-rules.preview.${key}`), DEMO_PK);
  assert.deepEqual(JSON.parse(kept), DRAFT);
  assert.deepEqual(await shopPage.evaluate(() => window.nudgeErrors), []);
  assert.deepEqual(errors, []);
  // `#nudge-preview=off` goes back to the published config: no draft nudge on a product page.
  await shopPage.goto(`${shop.url}/products/oxford-shirt#nudge-preview=off`);
  await shopPage.evaluate(() => window.nudgeRules?.ready);
  assert.equal(await shopPage.evaluate((key) => sessionStorage.getItem(`nudge-rules.preview.${key}`), DEMO_PK), null);
  assert.equal(await shopPage.getByText(MESSAGE).count(), 0);
  await shopPage.close();
});

test('a draft that is not JSON opens nothing and says why', async () => {
  const { page } = env;
  await setConfig(page, '{ "version": 1, "rules": [');
  const pages = env.context.pages().length;
  await page.locator('#shop-preview .sp-open').click();
  await page.locator('#shop-preview [role="alert"]').waitFor({ state: 'visible' });
  assert.match(await page.locator('#shop-preview [role="alert"]').textContent(), /not valid JSON/);
  await page.waitForTimeout(300);
  assert.equal(env.context.pages().length, pages, 'no tab opened');
});

test('the panel at 390 px: it fits, and its screenshot for docs/EDITOR.md', async () => {
  const page = await freshPage(env);
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, env.server);
  await setConfig(page, JSON.stringify(DRAFT, null, 2));
  await page.locator('#shop-preview summary').click();
  const panel = page.locator('#shop-preview');
  await panel.scrollIntoViewIfNeeded();
  const box = await panel.boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
  const link = await page.locator('#shop-preview .sp-open').boundingBox();
  assert.ok(link && link.x + link.width <= 390 && link.height >= 24, JSON.stringify(link));
  mkdirSync(SHOTS, { recursive: true });
  await panel.screenshot({ path: path.join(SHOTS, 'shop-preview.png'), animations: 'disabled' });
  await page.close();
});
