// The Results view (issue 32, docs/contract/caps.md "Measured uplift") in headless Chromium against the real
// server binary (target/debug/nudge-rules-server; `cargo build -p nudge-rules-server`, which make
// test-browser runs first).
//
// Two servers: `--demo`, whose data holds held-out sessions (server/src/demo.rs: sale-toast
// clearly lifts conversion, free-shipping-bar clearly does not, welcome-bar has too few
// sessions), and one with a sites file and an empty store (nothing to measure). The demo's CORS
// allows the editor of `make demo` only (http://127.0.0.1:8000), so the editor is opened at that
// address and its files are routed to this test's static server by the browser context: the
// browser, not the test, sends the report's requests, and the server's CORS answers them. (A page
// the context fulfils has no address of its own, so Chromium's Local Network Access would count it
// as public and refuse its requests to a loopback server: that check is off in this browser; the
// page of `make demo` is itself on the loopback address.) As a
// merchant: the view before connecting, connected (each rule's verdict, both groups in words, the
// interval drawn on the shared axis where the API puts it, the backtest's predicted reach), the 7
// days window, a server that stops answering, an empty store, disconnecting; axe-core; screenshots
// at 1440 and 390 px (docs/img/); a rule's control group set from its row with the keyboard at
// 390 px (the draft changes, "costly" over 20 % said in words, 60 refused) and published with the
// editor's publish dialog (the live config read back over the API).
//
//   node --test www/test/results.test.mjs
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { ARGS, DOC_IMAGES, launch, settled } from './helpers.mjs';
import { BINARY, api, sha, startServer } from './nudge-server.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const DEMO_SK = 'sk_test_nudgeRulesDemoKey0001';
const EMPTY_SK = 'sk_test_resultsEmptySiteKey01';
/** The origin the demo server's CORS allows (`make demo`'s editor). */
const EDITOR_ORIGIN = 'http://127.0.0.1:8000';
const DAY = 86_400_000;
const IMG = DOC_IMAGES;

let env;
let browser;
let demo;
let empty;
let dir;

before(async () => {
  env = await launch({ width: 1440, height: 1000 });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...ARGS, '--disable-features=LocalNetworkAccessChecks'] });
  dir = mkdtempSync(path.join(tmpdir(), 'nudge-results-'));
  demo = await startServer(BINARY, ['--demo', '--store', `sqlite:${path.join(dir, 'demo.db')}`]);
  const sites = path.join(dir, 'sites.toml');
  writeFileSync(sites, `
[[site]]
id = "empty"
keys = ["sha256:${sha(EMPTY_SK)}"]
allowed_origins = ["${EDITOR_ORIGIN}"]
`);
  empty = await startServer(BINARY, ['--sites', sites, '--store', `sqlite:${path.join(dir, 'empty.db')}`]);
});

after(async () => {
  await browser?.close();
  await env?.close();
  await demo?.stop();
  await empty?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * An editor at http://127.0.0.1:8000/www/ (its files from the test's static server), `width` px
 * wide, with the Results panel open.
 */
async function editorPage(width = 1440) {
  const context = await browser.newContext({ ...env.options, viewport: { width, height: 1000 } });
  await context.route(`${EDITOR_ORIGIN}/**`, async (route) => {
    const url = route.request().url().replace(EDITOR_ORIGIN, env.server.url);
    route.fulfill({ response: await route.fetch({ url }) });
  });
  const page = await context.newPage();
  page.on('close', () => context.close().catch(() => {}));
  page.on('pageerror', (e) => env.errors.push(String(e)));
  await page.goto(`${EDITOR_ORIGIN}/www/`);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30_000 });
  await settled(page);
  await page.locator('#results-panel > summary').click();
  return page;
}

/** Connects the editor to `base` with `key` through the Connect dialog. */
async function connect(page, base, key) {
  await page.locator('.sb-connect').click();
  await page.locator('#cx-address').fill(base);
  await page.locator('#cx-key').fill(key);
  await page.locator('.cx-form button[type=submit]').click();
  await page.waitForFunction(() => document.querySelector('.sb-status .sb-host') || document.querySelector('.cx-error:not([hidden])'));
  assert.equal(await page.locator('.cx-error:not([hidden])').count(), 0, await page.locator('.cx-error').textContent());
}

/** The panel's state once it has one of `states` (data-state on #results-panel). */
async function waitState(page, ...states) {
  await page.waitForFunction((s) => s.includes(document.querySelector('#results-panel').dataset.state), states);
  return page.locator('#results-panel').getAttribute('data-state');
}

/** Each rule's line as drawn: verdict, both groups' words, reach, and where the bar and dot are. */
function drawnRows(page) {
  return page.locator('#results-body .up-row').evaluateAll((rows) => rows.map((row) => {
    const track = row.querySelector('.up-track').getBoundingClientRect();
    const pos = (sel) => {
      const el = row.querySelector(sel);
      if (!el) return null;
      const r = el.getBoundingClientRect();
      return { left: (r.left - track.left) / track.width, right: (r.right - track.left) / track.width, center: (r.left + r.width / 2 - track.left) / track.width };
    };
    return {
      rule: row.dataset.rule,
      verdict: row.dataset.verdict,
      title: row.querySelector('.up-verdict').textContent,
      treated: row.querySelector('[data-arm=treated]').textContent,
      control: row.querySelector('[data-arm=control]').textContent,
      words: row.querySelector('.up-words').textContent,
      reach: row.querySelector('.up-reach')?.textContent ?? null,
      label: row.querySelector('.up-track').getAttribute('aria-label'),
      bar: pos('.up-bar'),
      dot: pos('.up-dot'),
      zero: pos('.up-zero'),
    };
  }));
}

/** The report and the backtest of the editor's config as the server answers them to another program. */
async function serverSays(days, config) {
  const from = new Date(Date.now() - days * DAY).toISOString();
  const report = await api(demo.base, 'GET', `/v1/reports/uplift?from=${encodeURIComponent(from)}`, { key: DEMO_SK });
  assert.equal(report.status, 200);
  const backtest = await api(demo.base, 'POST', '/v1/nudges/backtest', { key: DEMO_SK, body: { config, from } });
  assert.equal(backtest.status, 200);
  return { report: report.json.data, backtest: backtest.json.data };
}

const pct = (rate) => `${(rate * 100).toFixed(1)} %`;

test('before connecting, Results says where its figures come from and offers to connect', async () => {
  const page = await editorPage();
  assert.equal(await waitState(page, 'not-connected'), 'not-connected');
  const text = await page.locator('#results-body').textContent();
  assert.match(text, /Results come from a nudge-rules server/);
  assert.equal(await page.locator('#results-body .up-tools button[data-days]:disabled').count(), 3);
  await page.locator('#results-body .up-status button', { hasText: 'Connect to a server' }).click();
  assert.equal(await page.locator('.cx-dialog').evaluate((d) => d.open), true);
  await page.close();
});

test('connected to the demo: each rule\'s verdict, both groups, the interval where the API puts it, and the predicted reach', async () => {
  const page = await editorPage();
  await connect(page, demo.base, DEMO_SK);
  assert.equal(await waitState(page, 'ready', 'error'), 'ready', await page.locator('#results-body .up-status').textContent());
  const config = await page.evaluate(() => window.nudgePlayground.editor.value);
  const { report, backtest } = await serverSays(30, config);
  const rows = await drawnRows(page);
  assert.deepEqual(rows.map((r) => r.rule), report.rules.map((r) => r.rule_id));
  const by = Object.fromEntries(rows.map((r) => [r.rule, r]));
  // The demo's three cases (server/src/demo.rs).
  assert.equal(by['sale-toast'].verdict, 'lifts');
  assert.equal(by['sale-toast'].title, 'Sells more');
  assert.equal(by['free-shipping-bar'].verdict, 'flat');
  assert.equal(by['free-shipping-bar'].title, 'No clear difference');
  assert.equal(by['welcome-bar'].verdict, 'too_few');
  assert.equal(by['welcome-bar'].title, 'Not enough data yet');
  const axis = Number(await page.locator('#results-body .up-axis .up-tick').last().textContent().then((t) => t.replace('+', ''))) / 100;
  for (const r of report.rules) {
    const row = by[r.rule_id];
    // Both groups in words, with the server's counts.
    assert.equal(row.treated, `${pct(r.conversion_rate.treated)} bought (${r.treated.converted.toLocaleString('en-US')} of ${r.treated.sessions.toLocaleString('en-US')} sessions)`);
    assert.equal(row.control, `${pct(r.conversion_rate.control)} bought (${r.control.converted.toLocaleString('en-US')} of ${r.control.sessions.toLocaleString('en-US')} sessions)`);
    // The bar spans the interval, the dot is the estimate, the line is zero: on the shared axis.
    // (An interval wider than the axis, of a rule with too few sessions, is cut at its ends.)
    const at = (x) => Math.min(1, Math.max(0, (x + axis) / (2 * axis)));
    assert.ok(Math.abs(row.zero.center - 0.5) < 0.01, `${r.rule_id}: zero at ${row.zero.center}`);
    assert.ok(Math.abs(row.bar.left - at(r.uplift.ci95[0])) < 0.01, `${r.rule_id}: bar from ${row.bar.left}, want ${at(r.uplift.ci95[0])}`);
    assert.ok(Math.abs(row.bar.right - at(r.uplift.ci95[1])) < 0.01, `${r.rule_id}: bar to ${row.bar.right}, want ${at(r.uplift.ci95[1])}`);
    assert.ok(Math.abs(row.dot.center - at(r.uplift.absolute)) < 0.01, `${r.rule_id}: dot at ${row.dot.center}`);
    assert.match(row.label, /^Uplift [+−]?\d+\.\d points?, 95 % interval /);
    // The backtest's predicted reach of the draft in the same window: treated and held out.
    const predicted = backtest.rules.find((x) => x.rule_id === r.rule_id);
    const heldOut = predicted.held_out_sessions
      ? ` and hold the visitor out (its control group) in ${predicted.held_out_sessions.toLocaleString('en-US')}`
      : ', holding no visitor out';
    assert.equal(row.reach, `Backtest: of ${backtest.sessions.toLocaleString('en-US')} sessions of this window, your draft would show it in ${predicted.sessions.toLocaleString('en-US')}${heldOut} (holdout and caps applied).`);
  }
  assert.ok(report.rules.find((r) => r.rule_id === 'sale-toast').uplift.ci95[0] > 0);
  assert.ok(by['sale-toast'].bar.left > 0.5, 'the lifting rule\'s interval is right of zero');
  assert.ok(by['free-shipping-bar'].bar.left < 0.5 && by['free-shipping-bar'].bar.right > 0.5, 'the flat rule\'s interval crosses zero');
  assert.match(by['sale-toast'].words, /more of every 100 sessions bought/);
  assert.match(by['free-shipping-bar'].words, /could be chance/);
  // What is missing, counted from the server's figures (60 shown of whom 3 bought, 6 held out).
  const w = report.rules.find((r) => r.rule_id === 'welcome-bar');
  assert.equal(by['welcome-bar'].words, `To tell, it needs ${100 - w.treated.sessions} more sessions shown the nudge, ${5 - w.treated.converted} more purchases among the sessions shown the nudge, ${100 - w.control.sessions} more sessions held out, ${5 - w.control.converted} more purchases among the sessions held out.`);
  assert.match(await page.locator('#results-body .up-summary').textContent(), /1 rule clearly sells more, 1 makes no clear difference, 1 needs more data/);
  // "Edit rule" opens the rule's card, where its control group is set.
  await page.locator('#results-body .up-row[data-rule="sale-toast"] .up-edit').click();
  await page.waitForFunction(() => document.activeElement?.closest('.rule-card-slot')?.dataset.rule === 'sale-toast');

  // The window: 7 days, the server's figures for that window.
  await page.locator('#results-body button[data-days="7"]').click();
  assert.equal(await waitState(page, 'ready', 'error'), 'ready');
  await page.waitForFunction(() => document.querySelector('#results-body button[data-days="7"]').getAttribute('aria-pressed') === 'true');
  const week = (await serverSays(7, config)).report;
  const weekRows = await drawnRows(page);
  for (const r of week.rules) {
    const row = weekRows.find((x) => x.rule === r.rule_id);
    assert.ok(row.treated.includes(`of ${r.treated.sessions.toLocaleString('en-US')} session`), `${row.treated} / ${r.treated.sessions}`);
  }
  await page.close();
});

test('a server that stops answering, an empty store and a disconnect are said in words', async () => {
  const page = await editorPage();
  await connect(page, demo.base, DEMO_SK);
  assert.equal(await waitState(page, 'ready', 'error'), 'ready');
  // The server stops answering the report: the view says so, and names the server.
  await page.route(`${demo.base}/v1/reports/uplift**`, (route) => route.abort('connectionrefused'));
  await page.locator('#results-body [data-act=refresh]').click();
  assert.equal(await waitState(page, 'error'), 'error');
  assert.match(await page.locator('#results-body .up-status').textContent(), new RegExp(`Could not reach the server at ${demo.base.replace(/[.]/g, '\\.')}`));
  assert.equal(await page.locator('#results-body .up-row').count(), 0);
  await page.unroute(`${demo.base}/v1/reports/uplift**`);
  await page.locator('#results-body [data-act=refresh]').click();
  assert.equal(await waitState(page, 'ready'), 'ready');
  // Disconnected: back to the first state, no figures left on screen.
  await page.locator('.sb-disconnect').click();
  assert.equal(await waitState(page, 'not-connected'), 'not-connected');
  assert.equal(await page.locator('#results-body .up-row').count(), 0);
  // A site with no held-out visitor: nothing to measure, and how to start.
  await connect(page, empty.base, EMPTY_SK);
  assert.equal(await waitState(page, 'ready', 'error'), 'ready');
  const said = await page.locator('#results-body .up-status').textContent();
  assert.match(said, /No visitor was shown a nudge or held out from one in the last 30 days/);
  assert.match(said, /Give a rule a control group on its card/);
  await page.close();
});

for (const width of [1440, 390]) {
  test(`at ${width} px: no serious axe-core violation in the view, keyboard reachable, screenshot`, async () => {
    const page = await editorPage(width);
    await connect(page, demo.base, DEMO_SK);
    assert.equal(await waitState(page, 'ready'), 'ready');
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async () => {
      const result = await window.axe.run('#results-panel', { resultTypes: ['violations'], rules: { 'target-size': { enabled: true } } });
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    });
    assert.deepEqual(violations, []);
    // Keyboard: the window buttons take focus and work with Enter.
    await page.locator('#results-body button[data-days="90"]').focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#results-body button[data-days="90"]').getAttribute('aria-pressed') === 'true');
    assert.equal(await waitState(page, 'ready'), 'ready');
    // No part of the view is wider than the screen.
    const overflow = await page.locator('#results-panel').evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(overflow <= 1, `the panel overflows by ${overflow} px`);
    await page.locator('#results-body button[data-days="30"]').click();
    assert.equal(await waitState(page, 'ready'), 'ready');
    await page.waitForFunction(() => document.querySelector('#results-body button[data-days="30"]').getAttribute('aria-pressed') === 'true');
    // The whole panel in the viewport (no sticky bar over it), and the connection's toast gone.
    await page.setViewportSize({ width, height: 2000 });
    await page.evaluate(() => { document.querySelector('#toast').hidden = true; });
    await page.locator('#results-panel').scrollIntoViewIfNeeded();
    mkdirSync(IMG, { recursive: true });
    await page.locator('#results-panel').screenshot({ path: path.join(IMG, `results-${width}.png`), animations: 'disabled' });
    await page.close();
  });
}

test('at 390 px, a rule\'s control group is set from its row with the keyboard, said in words, and published', async () => {
  const page = await editorPage(390);
  await connect(page, demo.base, DEMO_SK);
  assert.equal(await waitState(page, 'ready'), 'ready');
  const draftHoldout = () => page.evaluate(() => JSON.parse(window.nudgePlayground.editor.value).rules.find((r) => r.id === 'sale-toast').holdout_percent ?? 0);
  const row = page.locator('#results-body .up-row[data-rule="sale-toast"]');
  // Named for a screen reader, and described by its words.
  const input = row.getByRole('spinbutton', { name: 'Control group' });
  assert.equal(await input.inputValue(), String(await draftHoldout()));
  const words = row.locator('.up-hold-words');
  assert.equal(await input.getAttribute('aria-describedby'), await words.getAttribute('id'));
  const typeIn = async (value) => {
    await input.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(value);
    await page.keyboard.press('Tab');
  };
  // 30 %: set in the draft (as from the card), and called costly in words.
  await typeIn('30');
  await page.waitForFunction(() => JSON.parse(window.nudgePlayground.editor.value).rules.find((r) => r.id === 'sale-toast').holdout_percent === 30);
  assert.equal(await page.evaluate(() => JSON.parse(window.nudgePlayground.store.text).rules.find((r) => r.id === 'sale-toast').holdout_percent), 30, 'the store has the draft');
  assert.match(await words.textContent(), /^Costly: 30 % of the visitors it reaches never see the nudge\. Over 20 % /);
  assert.equal(await words.evaluate((el) => el.classList.contains('up-hold-costly')), true);
  // Over 50 %: refused in words, the draft keeps 30.
  await typeIn('60');
  assert.match(await words.textContent(), /whole percentage from 0 to 50/);
  assert.equal(await input.getAttribute('aria-invalid'), 'true');
  assert.equal(await draftHoldout(), 30);
  // 10 %: no warning.
  await typeIn('10');
  await page.waitForFunction(() => JSON.parse(window.nudgePlayground.editor.value).rules.find((r) => r.id === 'sale-toast').holdout_percent === 10);
  assert.match(await words.textContent(), /^10 % of the visitors it reaches are held out/);
  assert.equal(await input.getAttribute('aria-invalid'), 'false');
  // Nothing in the row is wider than the screen.
  const overflow = await page.locator('#results-panel').evaluate((el) => el.scrollWidth - el.clientWidth);
  assert.ok(overflow <= 1, `the panel overflows by ${overflow} px`);
  // Tab went on to Publish….
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.act), 'publish');
  // Refresh: the backtest of the draft now holds sale-toast's control group out of its reach
  // (the demo's sessions carry visitor ids), as the server says for the same draft.
  await page.locator('#results-body [data-act=refresh]').click();
  assert.equal(await waitState(page, 'ready'), 'ready');
  const config = await page.evaluate(() => window.nudgePlayground.editor.value);
  const { backtest } = await serverSays(30, config);
  const predicted = backtest.rules.find((x) => x.rule_id === 'sale-toast');
  assert.ok(predicted.held_out_sessions > 0, `held out ${predicted.held_out_sessions}`);
  assert.equal(await row.locator('.up-reach').textContent(), `Backtest: of ${backtest.sessions.toLocaleString('en-US')} sessions of this window, your draft would show it in ${predicted.sessions.toLocaleString('en-US')} and hold the visitor out (its control group) in ${predicted.held_out_sessions.toLocaleString('en-US')} (holdout and caps applied).`);
  assert.equal(await input.inputValue(), '10', 'the redrawn row shows the draft\'s control group');
  // Publish… with the keyboard opens the editor's publish dialog; publishing makes it live.
  await row.locator('[data-act=publish]').focus();
  await page.keyboard.press('Enter');
  const dialog = page.locator('.pub-dialog');
  await dialog.waitFor();
  await page.waitForFunction(() => !/Backtesting/.test(document.querySelector('.pub-backtest')?.textContent ?? ''), null, { timeout: 30_000 });
  await page.locator('#pub-message').fill('sale-toast: 10 % control group');
  await dialog.locator('[data-act=publish]').click();
  await dialog.waitFor({ state: 'hidden', timeout: 15_000 });
  const live = await api(demo.base, 'GET', '/v1/config', { key: DEMO_SK });
  assert.equal(live.status, 200);
  assert.equal(live.json.data.message, 'sale-toast: 10 % control group');
  assert.equal(live.json.data.config.rules.find((r) => r.id === 'sale-toast').holdout_percent, 10);
  await page.close();
});
