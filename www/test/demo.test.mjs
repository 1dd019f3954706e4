// The editor in a real browser (headless Debian Chromium driven by playwright-core): loads the
// page with the embedded storefront config, moves the sliders, edits and breaks the config, and
// checks that the preview, explain, decision map, warnings and URL bench change as the engine
// says, with no console error. Screenshots of the main states go to www/screenshots/.
//
//   node --test www/test/*.test.mjs        (make test-browser; needs pkg/wasm/: make wasm)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { serve } from './server.mjs';

const SHOTS = fileURLToPath(new URL('../screenshots/', import.meta.url));
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];

let server;
let context;
let page;
let profile;
const consoleErrors = [];

/** Sets a range or text input the way a person does, firing `input`. */
async function setInput(selector, value) {
  await page.locator(selector).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

async function state({ url, intent, idle }) {
  if (url !== undefined) await setInput('#page-url', url);
  if (intent !== undefined) await setInput('#intent', intent);
  if (idle !== undefined) {
    await setInput('#idle-ms', idle);
    await page.locator('#idle-ms').evaluate((el) => el.blur());
  }
}

async function responseBody() {
  return JSON.parse(await page.locator('#response-body').getAttribute('data-raw'));
}

async function setConfig(text) {
  await page.locator('#editor textarea').fill(text);
}

async function shot(name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
}

let storefrontText;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await serve();
  profile = mkdtempSync(join(tmpdir(), 'nudge-demo-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 1100 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(`${server.url}/www/`);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30_000 });
  storefrontText = await page.locator('#editor textarea').inputValue();
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('the editor', () => {
  test('loads the embedded storefront config and previews a product page', async () => {
    assert.match(storefrontText, /"sizing-help"/);
    await state({ url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const body = await responseBody();
    assert.equal(body.data.would_fire, true);
    assert.equal(body.data.nudge.type, 'chat_bubble');
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'chat_bubble');
    await assert.doesNotReject(page.locator('#storefront .nudge-message', { hasText: 'Not sure about the fit?' }).waitFor());
    await assert.doesNotReject(page.locator('#config-status', { hasText: 'Valid' }).waitFor());
    await shot('01-chat-bubble');
  });

  test('the sliders change the preview and the explanation as the engine says', async () => {
    await state({ intent: 40 });
    let body = await responseBody();
    assert.equal(body.data.nudge.type, 'sticky_bar');
    assert.match(await page.locator('#explain-rules').innerText(), /free-shipping-bar/);
    await shot('02-sticky-bar');
    // Idle time is all that is missing: the explanation counts down to 8 s.
    await state({ intent: 82, idle: 2000 });
    body = await responseBody();
    assert.equal(body.data.would_fire, false);
    assert.match(body.data.reason, /6000 more ms/);
    await assert.doesNotReject(page.locator('#countdown:not([hidden])').waitFor());
    assert.match(await page.locator('#countdown').innerText(), /6(\.0)? ?s/);
    await shot('09-fires-in');
    // The exit modal at high intent after 20 s.
    await state({ intent: 95, idle: 25000 });
    assert.equal((await responseBody()).data.nudge.type, 'exit_modal');
    await shot('03-exit-modal');
    // A toast on the sale collection.
    await state({ url: '/collections/sale', intent: 45, idle: 3000 });
    assert.equal((await responseBody()).data.nudge.type, 'toast');
    await shot('04-toast');
  });

  test('a quiet zone: no nudge, the quiet zone named, whatever the URL looks like', async () => {
    await state({ url: 'https://shop.example/CHECKOUT//payment/?step=2', intent: 99, idle: 90000 });
    const body = await responseBody();
    assert.equal(body.data.would_fire, false);
    assert.match(body.data.reason, /\/checkout\/\*\*/);
    assert.match(await page.locator('#explain-facts').innerText(), /\/checkout\/\*\*/);
    await shot('05-quiet-zone');
  });

  test('the play button advances idle time in real time', async () => {
    await state({ url: '/search', intent: 35, idle: 0 });
    await page.locator('#play-btn').click();
    await page.waitForTimeout(1200);
    await page.locator('#play-btn').click();
    const idle = Number(await page.locator('#idle-ms').inputValue());
    assert.ok(idle >= 800 && idle < 5000, `idle ${idle}`);
  });

  test('the decision map: a legend per rule, redrawn on edits, click to move there', async () => {
    await state({ url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const legend = await page.locator('#map-legend').innerText();
    for (const id of ['high-intent-exit', 'sizing-help', 'free-shipping-bar']) assert.match(legend, new RegExp(id));
    // Click the top right of the plot: high intent, long idle time.
    await page.locator('#map').scrollIntoViewIfNeeded();
    const box = await page.locator('#map').boundingBox();
    await page.mouse.click(box.x + box.width * 0.9, box.y + box.height * 0.12);
    const intent = Number(await page.locator('#intent').inputValue());
    const idle = Number(await page.locator('#idle-ms').inputValue());
    assert.ok(intent >= 85 && idle >= 20000, `moved to ${intent}, ${idle}`);
    assert.equal((await responseBody()).data.nudge.type, 'exit_modal');
    await page.locator('#map').scrollIntoViewIfNeeded();
    await shot('06-decision-map');
    await page.mouse.move(0, 0);
    // Edit the config: drop high-intent-exit's pages, and it covers every page, so it is in the
    // legend of a search page too.
    const edited = storefrontText.replace('"pages": ["/products/**", "/collections/**"]', '"pages": ["/**"]');
    assert.notEqual(edited, storefrontText);
    await setConfig(edited);
    await state({ url: '/search' });
    assert.match(await page.locator('#map-legend').innerText(), /high-intent-exit/);
  });

  test('edits preview immediately; a broken config shows its error at the right line', async () => {
    await setConfig(storefrontText.replace('Not sure about the fit? Ask a stylist.', 'Need a hand with sizing?'));
    await state({ url: '/products/linen-shirt', intent: 82, idle: 9000 });
    assert.equal((await responseBody()).data.nudge.message, 'Need a hand with sizing?');
    // Remove the comma after "version": 1 (line 2): serde_json stops at line 3.
    const broken = storefrontText.replace('"version": 1,', '"version": 1');
    await setConfig(broken);
    await assert.doesNotReject(page.locator('#config-status', { hasText: 'error' }).waitFor());
    const diag = page.locator('#diagnostics li.error').first();
    assert.equal(await diag.getAttribute('data-line'), '3');
    assert.match(await diag.innerText(), /line 3/);
    // The editor marks that line: a gutter marker and an underline, at line 3 of the text.
    const marked = await page.evaluate(() => {
      const ta = document.querySelector('#editor textarea');
      const style = getComputedStyle(ta);
      const lineOf = (el) => Math.round((parseFloat(el.style.top) - parseFloat(style.paddingTop)) / parseFloat(style.lineHeight)) + 1;
      return {
        gutter: [...document.querySelectorAll('#editor .gutter-mark.error')].map(lineOf),
        squiggles: document.querySelectorAll('#editor .squiggle.error').length,
      };
    });
    assert.deepEqual(marked.gutter, [3]);
    assert.equal(marked.squiggles, 1);
    // Clicking the diagnostic puts the caret there.
    await diag.locator('button').click();
    const caretLine = await page.locator('#editor textarea').evaluate((ta) => ta.value.slice(0, ta.selectionStart).split('\n').length);
    assert.equal(caretLine, 3);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('07-broken-config');
    // A mistake the engine reports with its path and line, not a syntax error.
    await setConfig(storefrontText.replace('"quiet_zones"', '"quiet_zone"'));
    const unknown = page.locator('#diagnostics li.error', { hasText: 'did you mean "quiet_zones"' });
    await assert.doesNotReject(unknown.waitFor());
    assert.equal(await unknown.getAttribute('data-line'), '4');
  });

  test('lint warnings and the plain-language summary', async () => {
    // A catch-all rule first: every later rule is shadowed.
    const catchAll = '{"id": "everyone", "nudge": {"type": "toast", "message": "Hello", "cta": "Hi"}},\n    ';
    await setConfig(storefrontText.replace('"rules": [\n    {', `"rules": [\n    ${catchAll}{`));
    await assert.doesNotReject(page.locator('#diagnostics li.warning[data-code="shadowed_rule"]').first().waitFor());
    await assert.doesNotReject(page.locator('#diagnostics li.warning[data-code="catch_all_rule"]').waitFor());
    await setConfig(storefrontText);
    await assert.doesNotReject(page.locator('#config-status', { hasText: 'Valid' }).waitFor());
    assert.equal(await page.locator('#diagnostics li.warning').count(), 0);
    assert.match(await page.locator('#explain-rules').innerText(), /Shows a chat bubble on pages under \/products/);
  });

  test('the URL test bench: normalized paths, rejections and matching patterns', async () => {
    await page.locator('#bench-input').fill('/Products/Linen-Shirt;jsessionid=1\n//checkout\n/x%2F..%2Fcheckout\n/cart');
    const rows = page.locator('#bench-rows tr');
    await assert.doesNotReject(page.locator('#bench-rows tr[data-rejected="double_slash"]').waitFor());
    assert.equal(await rows.count(), 4);
    assert.match(await rows.nth(0).innerText(), /\/products\/linen-shirt[\s\S]*\/products\/\*\*/);
    assert.equal(await rows.nth(2).getAttribute('data-rejected'), 'forbidden_escape');
    assert.match(await rows.nth(3).innerText(), /quiet_zones\[1\]/);
    await page.locator('#bench-rows').scrollIntoViewIfNeeded();
    await shot('08-url-bench');
  });

  test('the state is shared in the URL hash and restored on load', async () => {
    await state({ url: '/blog/how-to-linen', intent: 12, idle: 16000 });
    await page.waitForFunction(() => location.hash.includes('how-to-linen') && location.hash.includes('i=12'), null, { timeout: 5000 });
    const shared = page.url();
    const again = await context.newPage();
    again.on('pageerror', (e) => consoleErrors.push(String(e)));
    await again.goto(shared);
    await again.waitForFunction(() => document.body.dataset.ready === '1');
    assert.equal(await again.locator('#page-url').inputValue(), '/blog/how-to-linen');
    assert.equal(await again.locator('#intent').inputValue(), '12');
    const body = JSON.parse(await again.locator('#response-body').getAttribute('data-raw'));
    assert.equal(body.data.nudge.type, 'toast');
    await again.close();
  });

  test('adversarial configs and URLs through the editor leave the engine working', async () => {
    const configs = [
      '', '{', 'null', '[]', '"x"', '{"version": 1, "rules": [null]}', `${'['.repeat(5000)}${']'.repeat(5000)}`,
      `{"version": 1, "quiet_zones": ["/${'{a,'.repeat(200)}"]}`, '{"version": 1, "rules": [{"id": "x", "nudge": {"type": "toast", "message": "m", "cta": "c"}, "when": {"pages": ["/[z-a]", "/**/", "/a/**/**/**/**/**/**/**/**"]}}]}',
      '{"version": 1, "a": 1, "a": 2}', `{"version": 1, "rules": [${'{"id":"r","nudge":{}},'.repeat(300)}{}]}`, '\u0000\ud800',
    ];
    for (const text of configs) await setConfig(text);
    const urls = ['//checkout', '', ' ', '\\', 'javascript:alert(1)', '/%', '/%zz', '/%C3%28', '/\u2025/x', `/${'a'.repeat(9000)}`, 'http://[::1', '/a//../b'];
    for (const url of urls) await state({ url });
    await page.locator('#bench-input').fill(urls.join('\n'));
    await setConfig(storefrontText);
    await state({ url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const body = await responseBody();
    assert.equal(body.data.nudge.type, 'chat_bubble');
    assert.equal(await page.evaluate(() => window.nudgePlayground.engine.previewFields(95, '/checkout/pay', 0)), -2);
  });

  test('no console errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
