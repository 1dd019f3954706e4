// Shared by the editor's browser tests: builds the bundle (www/build.mjs), serves the repository
// with www/test/server.mjs, and drives headless Debian Chromium through playwright-core with the
// project's flags and a fresh profile.
//
// NUDGE_DEMO_ROOT=/path serves another tree instead (a checkout of an older editor, with pkg/ and
// examples/ beside it): the finding tests are run that way against the editor of main's commit
// 41c73c2 to show that they fail there. The helpers below work with both editors.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { build } from '../build.mjs';
import { REPO_ROOT, serve as serveHere } from './server.mjs';

// Screenshots go to the ignored target/screenshots/ (a test run leaves the tree clean): www/ for the
// editor's (docs/EDITOR.md shows them from www/screenshots/), docs/ for docs/img/'s; `make
// screenshots` takes them and copies them into those tracked folders.
export const SHOTS = join(REPO_ROOT, 'target', 'screenshots', 'www');
export const DOC_IMAGES = join(REPO_ROOT, 'target', 'screenshots', 'docs');
mkdirSync(SHOTS, { recursive: true });
mkdirSync(DOC_IMAGES, { recursive: true });
export const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];
export const ROOT = process.env.NUDGE_DEMO_ROOT || REPO_ROOT;
export const OLD_EDITOR = ROOT !== REPO_ROOT;

/** The static server of the tree under test (an older tree brings its own server.mjs). */
async function serve(root, port, options) {
  if (!OLD_EDITOR) return serveHere(root, port, options);
  const old = await import(join(ROOT, 'www/test/server.mjs'));
  return old.serve(root, port, options);
}

/**
 * Starts the server and a browser; resolves to `{ server, browser, context, page, errors, close }`.
 * Each context has its own storage (freshPage makes one per page), in a profile Playwright makes
 * fresh for this run.
 */
export async function launch({ width = 1440, height = 1100, compress = true } = {}) {
  if (!OLD_EDITOR) await build();
  const server = await serve(ROOT, 0, { compress });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ARGS });
  const options = { viewport: { width, height }, acceptDownloads: true };
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors = [];
  watch(page, errors);
  return {
    server,
    browser,
    context,
    page,
    errors,
    options,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

/** A page in a context of its own: empty local storage, no draft carried over from another test. */
export async function freshPage(env) {
  const context = await env.browser.newContext(env.options);
  const page = await context.newPage();
  page.on('close', () => context.close().catch(() => {}));
  watch(page, env.errors);
  return page;
}

/** Collects console errors and uncaught exceptions of a page into `errors`. */
export function watch(page, errors) {
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
}

/** Opens the editor (optionally with a hash) and waits until the engine has answered. */
export async function open(page, server, hash = '') {
  await page.goto(`${server.url}/www/${hash}`);
  await page.waitForFunction(() => document.body.dataset.ready === '1' || document.body.dataset.ready === 'error', null, { timeout: 30_000 });
  await settled(page);
}

/** Waits until every change is computed and drawn (the old editor is synchronous: two frames). */
export async function settled(page) {
  await page.evaluate(async () => {
    const p = window.nudgePlayground;
    if (p?.settled) await p.settled();
    else await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
}

/** The config text in the editor. */
export function configText(page) {
  return page.evaluate(() => window.nudgePlayground?.editor?.value ?? document.querySelector('#editor textarea').value);
}

/** Replaces the config text as a paste does, then waits for the preview. */
export async function setConfig(page, text) {
  const isNew = await page.evaluate(() => typeof window.nudgePlayground?.setText === 'function');
  if (isNew) await page.evaluate((t) => window.nudgePlayground.setText(t), text);
  else await page.locator('#editor textarea').fill(text);
  await settled(page);
}

/** Sets a range or text input the way a person does, firing `input`. */
export async function setInput(page, selector, value) {
  await page.locator(selector).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

/** Moves the visitor: page URL, intent score, idle time (ms). */
export async function setState(page, { url, intent, idle }) {
  if (url !== undefined) await setInput(page, '#page-url', url);
  if (intent !== undefined) await setInput(page, '#intent', intent);
  if (idle !== undefined) {
    await setInput(page, '#idle-ms', idle);
    await page.locator('#idle-ms').evaluate((el) => el.blur());
  }
  await settled(page);
}

/** The API panel's response body, parsed. */
export async function responseBody(page) {
  return JSON.parse(await page.locator('#response-body').getAttribute('data-raw'));
}

/** Shows the JSON view (the new editor opens on the rule cards). */
export async function showJson(page) {
  await page.evaluate(() => window.nudgePlayground?.setView?.('json'));
}

export async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
}

/** The storefront config grown to n rules with collection rules (a catalog's shape). */
export function bigConfig(storefrontText, n) {
  const base = JSON.parse(storefrontText);
  const types = ['chat_bubble', 'toast', 'exit_modal', 'sticky_bar'];
  const rules = base.rules.slice(0, Math.min(n, base.rules.length));
  for (let i = rules.length; i < n; i++) {
    rules.push({
      id: `collection-${i}`,
      nudge: { type: types[i % 4], message: `Spotlight on collection ${i}: new arrivals this week.`, cta: 'Take a look' },
      when: {
        min_intent_score: 20 + (i % 60),
        min_idle_ms: 1000 * (i % 30),
        pages: [`/collections/c${i}/**`],
        exclude_pages: [`/collections/c${i}/gift-card`],
      },
    });
  }
  return JSON.stringify({ ...base, rules }, null, 2);
}
