// The editor in a real browser (headless Debian Chromium driven by playwright-core): loads the
// page with the embedded storefront config, moves the sliders, edits and breaks the config, and
// checks that the preview, explain, decision map, warnings and URL bench change as the engine
// says, with no console error. Screenshots of the main states go to www/screenshots/.
//
//   node --test www/test/*.test.mjs        (make test-browser; needs pkg/wasm/: make wasm)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  configText, launch, open, responseBody as body, setConfig as setText, setState, settled, shot as snap, showJson, watch,
} from './helpers.mjs';

let env;
let page;
let consoleErrors;

const state = (s) => setState(page, s);
const responseBody = () => body(page);
const setConfig = (text) => setText(page, text);
const shot = (name) => snap(page, name);

let storefrontText;

before(async () => {
  env = await launch({ width: 1440, height: 1100 });
  page = env.page;
  consoleErrors = env.errors;
  await open(page, env.server);
  storefrontText = await configText(page);
});

after(async () => {
  await env?.close();
});

describe('the editor', () => {
  test('loads the embedded storefront config and previews a product page', async () => {
    assert.match(storefrontText, /"sizing-help"/);
    await state({ url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const body = await responseBody();
    assert.equal(body.data.would_fire, true);
    assert.equal(body.data.nudge.type, 'chat_bubble');
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'chat_bubble');
    await assert.doesNotReject(page.locator('#storefront .msg', { hasText: 'Not sure about the fit?' }).waitFor());
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
    await settled(page);
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
    // Remove the comma after "version": 1 (line 2): the comma is missing at the end of line 2,
    // and the editor says so there (serde_json reports line 3, where it stopped).
    const broken = storefrontText.replace('"version": 1,', '"version": 1');
    await setConfig(broken);
    await assert.doesNotReject(page.locator('#config-status', { hasText: 'error' }).waitFor());
    const diag = page.locator('#diagnostics li.error').first();
    assert.equal(await diag.getAttribute('data-line'), '2');
    assert.match(await diag.innerText(), /comma is missing[\s\S]*line 2/);
    // The JSON view marks that line: a lint marker in the gutter and the note under line 2.
    await showJson(page);
    const marked = await page.evaluate(() => {
      const note = document.querySelector('#editor .cm-diag-note.error');
      const line = note?.previousElementSibling?.textContent ?? '';
      return { notes: document.querySelectorAll('#editor .cm-diag-note.error').length, line, underline: document.querySelectorAll('#editor :is(.cm-lintRange-error, .cm-lintPoint-error)').length };
    });
    assert.equal(marked.notes, 1);
    assert.match(marked.line, /"version": 1$/);
    assert.equal(marked.underline, 1);
    // Clicking the diagnostic puts the caret there.
    await diag.locator('button').click();
    const caretLine = await page.evaluate(() => {
      const { state } = window.nudgePlayground.editor.view;
      return state.doc.lineAt(state.selection.main.head).number;
    });
    assert.equal(caretLine, 2);
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
    await settled(page);
    const rows = page.locator('#bench-rows tr');
    await assert.doesNotReject(page.locator('#bench-rows tr[data-rejected="double_slash"]').waitFor());
    assert.equal(await rows.count(), 4);
    assert.match(await rows.nth(0).innerText(), /\/products\/linen-shirt[\s\S]*\/products\/\*\*/);
    assert.equal(await rows.nth(2).getAttribute('data-rejected'), 'forbidden_escape');
    // /cart is in the quiet zone /cart/** (quiet_zones[1]): no nudge, whatever the rules say.
    assert.equal(await rows.nth(3).getAttribute('data-outcome'), 'quiet_zone');
    assert.match(await rows.nth(3).innerText(), /Quiet zone[\s\S]*\/cart\/\*\*/);
    await page.locator('#bench-rows').scrollIntoViewIfNeeded();
    await shot('08-url-bench');
  });

  test('the state is shared in the URL hash and restored on load', async () => {
    await state({ url: '/blog/how-to-linen', intent: 12, idle: 16000 });
    await page.waitForFunction(() => location.hash.includes('how-to-linen') && location.hash.includes('i=12'), null, { timeout: 5000 });
    const shared = page.url();
    const again = await env.context.newPage();
    watch(again, consoleErrors);
    await again.goto(shared);
    await again.waitForFunction(() => document.body.dataset.ready === '1');
    await settled(again);
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
    assert.equal((await responseBody()).data.nudge.type, 'chat_bubble');
    await state({ url: '/checkout/pay', intent: 95, idle: 0 });
    assert.match((await responseBody()).data.reason, /quiet zone "\/checkout\/\*\*"/);
  });

  test('no console errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
