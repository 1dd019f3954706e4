// One browser test per finding of issue 15 (the editor tried as a new user would, at 1440 px and
// 390 px). Each failed on the editor of main's commit 41c73c2 and passes now:
//
//   node --test www/test/findings.test.mjs
//   NUDGE_DEMO_ROOT=/tmp/old-root node --test www/test/findings.test.mjs   (an older tree: www/
//       from 41c73c2 with pkg/ and examples/ beside it; see helpers.mjs)
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  OLD_EDITOR, ROOT, configText, freshPage, launch, open, responseBody, setConfig, setInput, setState, settled, showJson,
} from './helpers.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');
const STOREFRONT = readFileSync(path.join(ROOT, 'examples/storefront.json'), 'utf8');

let env;

before(async () => {
  env = await launch({ width: 1440, height: 1000 });
});

after(async () => {
  await env?.close();
});

/** A page of the editor with the example config and empty local storage. */
async function editorPage(hash = '', viewport = { width: 1440, height: 1000 }) {
  const page = await freshPage(env);
  await page.setViewportSize(viewport);
  await open(page, env.server, hash);
  return page;
}

/** Focuses the config text (CodeMirror's content, or the old textarea) at its end. */
async function focusConfigEnd(page) {
  await showJson(page);
  const target = page.locator('#editor .cm-content, #editor textarea').first();
  await target.click();
  await page.keyboard.press('Control+End');
}

/** A config of n rules; rule `fire` (0-based) is the only one that fires on /p. */
function manyRules(n, fire) {
  const rules = [];
  for (let i = 0; i < n; i++) {
    rules.push({
      id: `r${i}`,
      nudge: { type: 'toast', message: `Message ${i}`, cta: 'Go' },
      when: { pages: [i === fire ? '/p' : `/other-${i}`] },
    });
  }
  return JSON.stringify({ version: 1, rules }, null, 2);
}

function get(url, headers) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('issue 15 findings', () => {
  test('Ctrl+S downloads the config, as the help text promises', async () => {
    const page = await editorPage();
    await focusConfigEnd(page);
    const download = page.waitForEvent('download', { timeout: 4000 });
    await page.keyboard.press('Control+s');
    const file = await download;
    const saved = readFileSync(await file.path(), 'utf8');
    assert.equal(saved, await configText(page));
    await page.close();
  });

  test('Reset and Open ask before discarding edits, and Ctrl+Z brings a Reset back', async () => {
    const page = await editorPage();
    let nativeDialogs = 0;
    page.on('dialog', (d) => {
      nativeDialogs += 1;
      d.dismiss();
    });
    const edited = STOREFRONT.replace('Not sure about the fit? Ask a stylist.', 'Edited by hand');
    await setConfig(page, edited);
    await page.locator('#reset-btn').click();
    const asked = await page.locator('dialog[open]').waitFor({ timeout: 2000 }).then(() => true, () => nativeDialogs > 0);
    assert.ok(asked, 'Reset replaced the edited config without asking');
    // "Keep editing": nothing changes.
    await page.locator('dialog[open] button', { hasText: 'Keep editing' }).click();
    assert.equal(await configText(page), edited);
    // Discard, then Ctrl+Z in the JSON view brings the edits back.
    await page.locator('#reset-btn').click();
    await page.locator('dialog[open] button', { hasText: 'Discard' }).click();
    await settled(page);
    assert.equal(await configText(page), STOREFRONT);
    await focusConfigEnd(page);
    await page.keyboard.press('Control+z');
    await settled(page);
    assert.equal(await configText(page), edited);
    // Open asks too.
    await page.locator('#file-input').setInputFiles({ name: 'other.json', mimeType: 'application/json', buffer: Buffer.from('{"version": 1}') });
    await page.locator('dialog[open]').waitFor({ timeout: 2000 });
    await page.locator('dialog[open] button', { hasText: 'Keep editing' }).click();
    assert.equal(await configText(page), edited);
    await page.close();
  });

  test('at 390 px: no sideways scroll, usable controls, no overlapping labels or map ticks', async () => {
    const page = await editorPage('', { width: 390, height: 844 });
    const m = await page.evaluate(() => {
      const box = (sel) => document.querySelector(sel).getBoundingClientRect();
      const items = [...document.querySelectorAll('.session label, .session output, .session .range-ends span, .session input:not([type=hidden]), .session select, .session button, .session .idle-exact span')]
        .filter((el) => el.offsetParent !== null);
      const overlaps = [];
      for (let i = 0; i < items.length; i++) {
        for (let j = i + 1; j < items.length; j++) {
          const a = items[i];
          const b = items[j];
          if (a.contains(b) || b.contains(a) || (a.tagName === 'LABEL' && a.htmlFor && (a.htmlFor === b.id))) continue;
          const ra = a.getBoundingClientRect();
          const rb = b.getBoundingClientRect();
          const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
          const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
          if (x > 1 && y > 1) overlaps.push(`${a.tagName}#${a.id || a.className} / ${b.tagName}#${b.id || b.className}`);
        }
      }
      const ticks = window.nudgePlayground?.map?.drawnTicks ?? null;
      return {
        scrollWidth: document.scrollingElement.scrollWidth,
        url: box('#page-url').width,
        idle: box('#idle').width,
        overlaps,
        ticks,
      };
    });
    assert.ok(m.scrollWidth <= 390, `the page is ${m.scrollWidth} px wide`);
    assert.ok(m.url >= 200, `page URL box ${m.url} px`);
    assert.ok(m.idle >= 150, `idle slider ${m.idle} px`);
    assert.deepEqual(m.overlaps, []);
    assert.ok(Array.isArray(m.ticks) && m.ticks.length >= 4, 'the map reports the tick labels it drew');
    for (let i = 1; i < m.ticks.length; i++) assert.ok(m.ticks[i].x0 >= m.ticks[i - 1].x1, `${m.ticks[i - 1].label} and ${m.ticks[i].label} collide`);
    await page.close();
  });

  // The finding: with 200 rules each keystroke blocked the page about 115 ms because every Why
  // card and the map were rebuilt. Blocking time depends on the machine (and on what else runs on
  // it), so this checks the cause, which does not: a keystroke that changes one rule remakes at most
  // that rule's card and does not redraw the map. (The timings are in perf.test.mjs.)
  test('with 200 rules a keystroke remakes only the card it changed, not every card and the map', async () => {
    const page = await editorPage();
    await setConfig(page, manyRules(200, 199));
    await setState(page, { url: '/p', intent: 50, idle: 0 });
    await page.evaluate(() => {
      window.mapDraws = 0;
      const clear = CanvasRenderingContext2D.prototype.clearRect;
      CanvasRenderingContext2D.prototype.clearRect = function (...args) {
        if (this.canvas.id === 'map') window.mapDraws += 1;
        return clear.apply(this, args);
      };
    });
    await focusConfigEnd(page);
    // The caret into the message of the rule that fires ("Message 199").
    const text = await configText(page);
    const at = text.indexOf('Message 199') + 'Message 199'.length;
    const line = text.slice(0, at).split('\n').length;
    const cm = await page.evaluate(() => Boolean(window.nudgePlayground?.editor?.view));
    if (cm) {
      // CodeMirror: the caret put there as a click does (walking it down ~2,400 lines with one
      // ArrowDown press each took 35 s); what is measured is the keystrokes after it.
      await page.evaluate((pos) => {
        const view = window.nudgePlayground.editor.view;
        view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
        view.focus();
      }, at);
    } else {
      await page.keyboard.press('Control+Home');
      for (let i = 1; i < line; i++) await page.keyboard.press('ArrowDown');
      await page.keyboard.press('End');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
    }
    await settled(page);
    const mark = () => page.evaluate(() => {
      window.mapDraws = 0;
      for (const li of document.querySelectorAll('#explain-rules > li')) {
        if (li.firstElementChild) li.firstElementChild.dataset.mark = '1';
      }
    });
    const remade = () => page.evaluate(() => [...document.querySelectorAll('#explain-rules > li')]
      .filter((li) => li.firstElementChild && !li.firstElementChild.dataset.mark).length);
    for (const ch of 'abc') {
      await mark();
      await page.keyboard.type(ch);
      await settled(page);
      const cards = await remade();
      const draws = await page.evaluate(() => window.mapDraws);
      assert.ok(cards <= 1, `${cards} Why cards remade for one keystroke`);
      assert.equal(draws, 0, 'the map was redrawn for a keystroke that does not change it');
    }
    assert.match(await page.locator('#storefront .msg').innerText(), /Message 199abc/);
    await page.close();
  });

  test('undo takes back a typed word at once, not one character at a time', async () => {
    const page = await editorPage();
    const before = await configText(page);
    await focusConfigEnd(page);
    await page.keyboard.type(' hello', { delay: 20 });
    await settled(page);
    assert.equal(await configText(page), `${before} hello`);
    await page.keyboard.press('Control+z');
    await settled(page);
    assert.equal(await configText(page), before);
    await page.close();
  });

  test('"Showing the last valid config" never shows when no config was ever valid', async () => {
    const config = Buffer.from('{"version": 2, "rules": []}').toString('base64url');
    const page = await editorPage(`#i=50&t=0&u=%2F&c=b${config}`);
    const labels = await page.evaluate(() => [...document.querySelectorAll('.panel')].map((el) => getComputedStyle(el, '::after').content)
      .concat([...document.querySelectorAll('#stale-banner:not([hidden])')].map((el) => el.textContent)));
    assert.ok(!labels.some((t) => /last valid/i.test(t)), labels.join(' | '));
    assert.match(await page.locator('.preview-panel, #preview-reason').first().innerText(), /Fix the config errors/);
    // Once a config was valid and the text breaks, the stale preview is said.
    await setConfig(page, STOREFRONT);
    await setConfig(page, STOREFRONT.replace('"version": 1', '"version": 2'));
    const stale = await page.evaluate(() => {
      const banner = document.querySelector('#stale-banner');
      return banner && !banner.hidden ? banner.textContent : getComputedStyle(document.querySelector('.preview-panel'), '::after').content;
    });
    assert.match(stale, /last valid/);
    await page.close();
  });

  test('the inline note of an error stays inside the editor', async () => {
    const page = await editorPage();
    await setConfig(page, STOREFRONT.replace('"quiet_zones"', '"quiet_zone"'));
    await showJson(page);
    await settled(page);
    const m = await page.evaluate(() => {
      const note = document.querySelector('#editor :is(.cm-diag-note, .lens)');
      const editor = document.querySelector('#editor').getBoundingClientRect();
      const r = note.getBoundingClientRect();
      return { text: note.textContent, left: r.left, right: r.right, editorLeft: editor.left, editorRight: editor.right };
    });
    assert.match(m.text, /did you mean "quiet_zones"/);
    assert.ok(m.right <= m.editorRight + 1 && m.left >= m.editorLeft - 1, `note ${m.left}..${m.right}, editor ${m.editorLeft}..${m.editorRight}`);
    await page.close();
  });

  test('a damaged share link says so in words and keeps its intent, URL and idle time', async () => {
    const page = await freshPage(env);
    await page.goto(`${env.server.url}/www/#i=12&t=16000&u=%2Fblog%2Fx&c=zAAAAA`);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30_000 });
    await settled(page);
    // The notice above the config (issue 24: it stays until dismissed), the toast before it.
    const toast = await page.locator('#notice:not([hidden]), #toast:not([hidden])').first().innerText();
    assert.doesNotMatch(toast, /Failed to fetch/);
    assert.match(toast, /could not be read|damaged/);
    assert.equal(await page.locator('#intent').inputValue(), '12');
    assert.equal(await page.locator('#idle-ms').inputValue(), '16000');
    assert.equal(await page.locator('#page-url').inputValue(), '/blog/x');
    await page.close();
  });

  test('JSON syntax errors say what to fix, where to fix it', async () => {
    const page = await editorPage();
    const first = async () => {
      const li = page.locator('#diagnostics li.error').first();
      await li.waitFor();
      return { text: await li.locator('.diag-msg').innerText(), line: await li.getAttribute('data-line') };
    };
    await setConfig(page, '{\n  "version": 1,\n  "rules": [],\n}');
    let d = await first();
    assert.match(d.text, /remove this comma/i);
    assert.equal(d.line, '3');
    await setConfig(page, '');
    d = await first();
    assert.match(d.text, /empty/i);
    await setConfig(page, STOREFRONT.replace('"version": 1,', '"version": 1'));
    d = await first();
    assert.match(d.text, /comma is missing/i);
    assert.equal(d.line, '2');
    await page.close();
  });

  test('typing a message updates the nudge in place, without replaying its entrance', async () => {
    const page = await editorPage();
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    await page.locator('#storefront .nudge').evaluate((el) => {
      el.dataset.marked = 'yes';
    });
    await setConfig(page, STOREFRONT.replace('Not sure about the fit? Ask a stylist.', 'Need a hand with sizing?'));
    const m = await page.locator('#storefront .nudge').evaluate((el) => ({ marked: el.dataset.marked, text: el.querySelector('.msg').textContent }));
    assert.deepEqual(m, { marked: 'yes', text: 'Need a hand with sizing?' });
    await page.close();
  });

  test('the URL bench keeps spaces (the page URL box rejects them) and names rules and outcomes', async () => {
    const page = await editorPage();
    await page.locator('#bench-input').fill(' /cart\n/products/linen-shirt\n/cart');
    await settled(page);
    const rows = page.locator('#bench-rows tr');
    assert.equal(await rows.count(), 3);
    assert.equal(await rows.nth(0).getAttribute('data-rejected'), 'space');
    await setState(page, { url: ' /cart' });
    assert.equal((await responseBody(page)).error, 'InvalidRequest');
    // Patterns by the name of their rule; what fires at this intent and idle time; quiet zones win.
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    await page.locator('#bench-input').fill('/products/linen-shirt\n/cart');
    await settled(page);
    const product = await rows.nth(0).innerText();
    assert.match(product, /sizing-help · pages/);
    assert.match(product, /sizing-help\s+Chat bubble/);
    assert.doesNotMatch(product, /rules\[\d+\]/);
    assert.match(await rows.nth(1).innerText(), /Quiet zone/);
    await page.close();
  });

  test('the Why panel scrolls to the rule that fired', async () => {
    const page = await editorPage();
    await setConfig(page, manyRules(30, 24));
    await setState(page, { url: '/p', intent: 50, idle: 0 });
    const m = await page.evaluate(() => {
      const list = document.querySelector('#explain-rules').getBoundingClientRect();
      const card = document.querySelector('#explain-rules [data-verdict="fired"]').getBoundingClientRect();
      return { list: [list.top, list.bottom], card: [card.top, card.bottom] };
    });
    assert.ok(m.card[0] >= m.list[0] - 1 && m.card[1] <= m.list[1] + 1, `card ${m.card} outside list ${m.list}`);
    await page.close();
  });

  test('lint findings show on the rule card they concern', async () => {
    const page = await editorPage();
    const catchAll = '{"id": "everyone", "nudge": {"type": "toast", "message": "Hello", "cta": "Hi"}},\n    ';
    await setConfig(page, STOREFRONT.replace('"rules": [\n    {', `"rules": [\n    ${catchAll}{`));
    const card = page.locator('#explain-rules [data-rule="sizing-help"]');
    await card.scrollIntoViewIfNeeded();
    await settled(page);
    assert.match(await card.innerText(), /never fire|shadowed|earlier rule/i);
    assert.ok(await card.locator('[data-code="shadowed_rule"]').count() >= 1);
    await page.close();
  });

  for (const width of [1440, 390]) {
    test(`axe-core: no serious or critical violation at ${width} px`, async () => {
      const page = await editorPage('', { width, height: 1000 });
      await page.addScriptTag({ path: AXE });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'] });
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
      });
      assert.deepEqual(violations, []);
      await page.close();
    });
  }

  test('the .wasm is served compressed, as application/wasm, and compiled while it streams', async () => {
    const wasmPath = path.join(ROOT, 'pkg/wasm/nudge_rules_bg.wasm');
    const raw = statSync(wasmPath).size;
    const res = await get(`${env.server.url}/pkg/wasm/nudge_rules_bg.wasm`, { 'Accept-Encoding': 'gzip, deflate, br' });
    assert.equal(res.headers['content-type'], 'application/wasm');
    assert.equal(res.headers['content-encoding'], 'br');
    assert.ok(res.body.length < raw * 0.5, `${res.body.length} bytes sent for ${raw}`);
    // In the browser: the transfer is compressed and the module instantiated from the stream.
    const page = await editorPage();
    const entry = await page.evaluate(() => {
      // The worker reports its own fetch of the module (the page's timeline does not hold it).
      const fromWorker = window.nudgePlayground?.store?.wasm ?? window.nudgePlayground?.app?.wasmResource;
      if (fromWorker) return fromWorker;
      const e = performance.getEntriesByType('resource').find((r) => r.name.endsWith('.wasm'));
      return e ? { encoded: e.encodedBodySize, decoded: e.decodedBodySize } : null;
    });
    assert.ok(entry && entry.encoded < entry.decoded * 0.5, JSON.stringify(entry));
    await page.close();
  });
});

describe('no console errors in the finding tests', () => {
  test('none', () => {
    if (OLD_EDITOR) return;
    assert.deepEqual(env.errors, []);
  });
});
