// The storefront runtime is a guest on the shop's page (docs/contract/storefront.md, "Never breaks
// the shop"): it writes none of the page's globals. In headless Chromium, an init script reads the
// page's globals before any script of the page runs, and again after the runtime has started,
// decided and drawn its nudge: every own property (its descriptor, values by identity) of `window`,
// `URL` (its statics, `URL.canParse` among them), `document`, `history` and the prototypes a script
// might patch. The tag (pkg/dist/storefront.js) adds one, `window.nudgeRules`, the handle
// docs/STOREFRONT.md documents; the module (`startNudges`) and the package's main module
// (pkg/index.js, the engine used by a page) add none. On a page whose browser has no
// `URL.canParse` (deleted before anything runs) the engines judge absolute page URLs as with it
// and `URL.canParse` stays missing: nothing put it back (src/host.rs reads it, never writes it).
//
// The one page object the runtime changes is `history`: its page observer wraps pushState and
// replaceState (docs/contract/storefront.md: in single-page shops each new path is a page view),
// as own properties of `history`, which this test names.
//
//   node --test pkg/test/storefront-globals.test.mjs   (after scripts/build-wasm.sh; needs
//                                                        target/debug/nudge-rules-server)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { serve } from '../../www/test/server.mjs';
import { startServer } from './server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PK = 'pk_test_nudgeRulesDemoKey0001';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run'];
/** A draft that shows a toast on every page at once. */
const CONFIG = { version: 1, rules: [{ id: 'hello', nudge: { type: 'toast', message: 'Hello from the runtime.', cta: 'Thanks' }, when: { pages: ['/**'] } }] };
/** What the runtime may change besides nothing: the page observer's history wrappers. */
const HISTORY = ['changed history: added pushState', 'changed history: added replaceState'];

let dir;
let files;
let server;
let browser;

before(async () => {
  server = await startServer(['--demo', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  dir = mkdtempSync(join(tmpdir(), 'nudge-globals-'));
  symlinkSync(join(ROOT, 'pkg'), join(dir, 'pkg'));
  const b64 = Buffer.from(JSON.stringify(CONFIG)).toString('base64url');
  // The tag as a shop puts it (with the preview attribute, so that the draft above decides).
  writeFileSync(join(dir, 'tag.html'), `<!doctype html><html lang="en"><meta charset="utf-8"><title>tag</title>
<script type="module" src="/pkg/dist/storefront.js" data-endpoint="${server.base}" data-site-key="${PK}" data-preview="fragment"></script>
<body><main><h1>A shop page</h1></main></body></html>`);
  writeFileSync(join(dir, 'blank.html'), '<!doctype html><html lang="en"><meta charset="utf-8"><title>blank</title><body><main><h1>A shop page</h1></main></body></html>');
  files = await serve(dir, 0, { compress: false });
  files.tag = `${files.url}/tag.html#nudge-preview=${b64}`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ARGS });
});

after(async () => {
  await browser?.close();
  await files?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The init script: takes the snapshot of the page's globals before anything runs (after deleting
 * `URL.canParse` when asked), and defines `__globals.changes()`, which lists what differs from it
 * now (`__globals` itself aside).
 */
function watchGlobals(deleteCanParse) {
  if (deleteCanParse) delete URL.canParse;
  const targets = () => ({
    window, document, history, URL, JSON, Math, Reflect, WebAssembly,
    'URL.prototype': URL.prototype, 'History.prototype': History.prototype, 'Storage.prototype': Storage.prototype,
    'EventTarget.prototype': EventTarget.prototype, 'Node.prototype': Node.prototype, 'Element.prototype': Element.prototype,
    'HTMLElement.prototype': HTMLElement.prototype, 'Document.prototype': Document.prototype, 'Window.prototype': Window.prototype,
    'Object.prototype': Object.prototype, 'Function.prototype': Function.prototype, 'Array.prototype': Array.prototype,
    'String.prototype': String.prototype, 'Promise.prototype': Promise.prototype, 'Error.prototype': Error.prototype,
  });
  const snapshot = () => Object.fromEntries(Object.entries(targets()).map(([name, o]) => [name,
    new Map(Reflect.ownKeys(o).filter((k) => k !== '__globals').map((k) => [k, Object.getOwnPropertyDescriptor(o, k)]))]));
  const before = snapshot();
  const same = (a, b) => ['value', 'get', 'set', 'writable', 'enumerable', 'configurable'].every((f) => Object.is(a[f], b[f]));
  Object.defineProperty(window, '__globals', {
    value: {
      changes() {
        const now = snapshot();
        const out = [];
        for (const [name, props] of Object.entries(now)) {
          const was = before[name];
          for (const [key, d] of props) {
            if (!was.has(key)) out.push(`changed ${name}: added ${String(key)}`);
            else if (!same(was.get(key), d)) out.push(`changed ${name}: ${String(key)}`);
          }
          for (const key of was.keys()) if (!props.has(key)) out.push(`changed ${name}: removed ${String(key)}`);
        }
        return out.sort();
      },
    },
  });
}

async function pageWith(deleteCanParse = false) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  await context.addInitScript(watchGlobals, deleteCanParse);
  page.done = () => context.close();
  return page;
}

/** The nudge drawn on the page. */
const nudgeShown = (page) => page.waitForFunction(() => document.querySelector('[data-nudge-rules]')?.shadowRoot?.querySelector('.msg')?.textContent === 'Hello from the runtime.');

/** Starts the runtime through its module in the page (no global of the test's own: only `__globals`). */
const startModule = (page) => page.evaluate(async ({ endpoint, siteKey, config }) => {
  const { startNudges } = await import('/pkg/storefront.js');
  const codes = [];
  const handle = startNudges({ endpoint, siteKey, previewConfig: config, flushIntervalMs: 600_000, onError: (e) => codes.push(e.code) });
  await handle.ready;
  Object.defineProperty(window.__globals, 'handle', { value: handle });
  return codes;
}, { endpoint: server.base, siteKey: PK, config: CONFIG });

/**
 * The engines' verdicts on absolute page URLs (hosts judged by the platform's URL parser): the
 * slim module the runtime uses, and the package's main module.
 */
const verdicts = (page) => page.evaluate(async (config) => {
  const urls = ['https://shop.example/products/linen-shirt', 'http://a<b/x', 'http://h:99999/x', 'http://[::1/x', 'https://xn--bcher-kva.example/x'];
  const slim = await import('/pkg/wasm/slim/nudge_rules.js');
  await slim.default();
  const engine = new slim.NudgeEngine(config);
  const main = await import('/pkg/index.js');
  await main.default();
  const full = new main.NudgeEngine(config);
  const tryIt = (fn) => {
    try {
      return JSON.stringify(fn());
    } catch (e) {
      return `error: ${e.message}`;
    }
  };
  const out = urls.map((url) => [url,
    tryIt(() => engine.decide({ intent_score: 50, page_url: url, idle_ms: 0 }).would_fire),
    tryIt(() => full.preview({ intent_score: 50, page_url: url }).would_fire),
    tryIt(() => main.normalizePageUrl(url))]);
  engine.free();
  full.free();
  return out;
}, CONFIG);

test('the tag adds window.nudgeRules, its documented handle, and writes nothing else', async () => {
  const page = await pageWith();
  await page.goto(files.tag);
  await nudgeShown(page);
  await page.evaluate(() => window.nudgeRules.ready);
  assert.deepEqual(await page.evaluate(() => window.__globals.changes()), [...HISTORY, 'changed window: added nudgeRules'].sort());
  assert.deepEqual(page.problems, []);
  await page.done();
});

test('the module (startNudges) and the package\'s main module write none of the page\'s globals', async () => {
  const page = await pageWith();
  await page.goto(`${files.url}/blank.html`);
  assert.deepEqual(await startModule(page), []);
  await nudgeShown(page);
  await verdicts(page);
  assert.deepEqual(await page.evaluate(() => window.__globals.changes()), HISTORY);
  assert.deepEqual(page.problems, []);
  await page.done();
});

test('without URL.canParse: the same verdicts on absolute URLs, nothing written, URL.canParse still missing', async () => {
  const withIt = await pageWith();
  await withIt.goto(`${files.url}/blank.html`);
  const expected = await verdicts(withIt);
  await withIt.done();
  // The verdicts are the engine's: a rejected host is an error, a valid one decides.
  assert.match(expected[1][1], /^error: /);
  assert.equal(expected[0][1], 'true');

  const page = await pageWith(true);
  await page.goto(`${files.url}/blank.html`);
  assert.equal(await page.evaluate(() => typeof URL.canParse), 'undefined');
  assert.deepEqual(await startModule(page), []);
  await nudgeShown(page);
  assert.deepEqual(await verdicts(page), expected);
  assert.equal(await page.evaluate(() => typeof URL.canParse), 'undefined');
  assert.deepEqual(await page.evaluate(() => window.__globals.changes()), HISTORY);
  assert.deepEqual(page.problems, []);
  await page.done();
});
