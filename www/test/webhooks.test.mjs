// The Webhooks view (issue 33, docs/contract/webhooks.md) in headless Chromium against the real server binary
// (target/debug/nudge-rules-server; `cargo build -p nudge-rules-server`, which make test-browser
// runs first), delivering to a real receiver: a node:http server on 127.0.0.1 in this test,
// scripted per path (200 with a JSON body, or 500).
//
// The server runs with the flags that let it deliver to the loopback (`--webhook-allow-http
// --webhook-allow-private 127.0.0.0/8`) and a compressed retry ladder (`--webhook-schedule
// 200ms,200ms`: three attempts), on a sites file whose site lists the editor's origin (the test's
// static server) in allowed_origins: the browser sends every request of the view cross-origin,
// and the server's CORS answers the preflights (PATCH and DELETE included; no request is routed
// by Playwright, whose routing answers preflights itself). As a merchant:
// the view before connecting; an endpoint added (its secret shown once, then gone for good, the
// secret the one that signs the deliveries), a test sent and its attempt read with status 200 and
// the receiver's body; a receiver answering 500 (the failure and its retries, resend); disabled
// and enabled again with the failed messages recovered; the secret rotated; deleted after a
// confirmation; refusals and a server that does not answer said in words; axe-core, the keyboard,
// screenshots at 1440 and 390 px (www/screenshots/).
//
//   node --test www/test/webhooks.test.mjs
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { ARGS, SHOTS, launch, settled } from './helpers.mjs';
import { BINARY, api, sha, startServer } from './nudge-server.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const DEMO_SK = 'sk_test_webhooksShopKey000001';

let env;
let browser;
let shop;
let dir;
let receiver;

/**
 * A receiver on 127.0.0.1: each path answers as `answers` says (200 with a JSON body naming the
 * message, or a status with a text body), and every request is kept.
 */
function startReceiver() {
  const got = [];
  const answers = new Map();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      got.push({ path: req.url, headers: req.headers, body });
      const answer = answers.get(req.url) ?? { status: 404, body: 'no such hook' };
      if (answer.status === 200) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ received: req.headers['webhook-id'], by: 'test receiver' }));
      } else {
        res.writeHead(answer.status, { 'Content-Type': 'text/plain' });
        res.end(answer.body);
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: (p) => `http://127.0.0.1:${server.address().port}${p}`,
    on: (p, answer) => answers.set(p, answer),
    got: (p) => got.filter((g) => g.path === p),
    close: () => new Promise((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  })));
}

before(async () => {
  env = await launch({ width: 1440, height: 1000 });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...ARGS, '--disable-features=LocalNetworkAccessChecks'] });
  dir = mkdtempSync(path.join(tmpdir(), 'nudge-webhooks-'));
  // A site whose CORS allows the editor's origin (this test's static server): the browser's
  // preflights, PATCH and DELETE included, are the server's to answer.
  const sites = path.join(dir, 'sites.toml');
  writeFileSync(sites, `
[[site]]
id = "shop"
keys = ["sha256:${sha(DEMO_SK)}"]
allowed_origins = ["${env.server.url}"]
`);
  shop = await startServer(BINARY, ['--sites', sites, '--store', `sqlite:${path.join(dir, 'shop.db')}`,
    '--webhook-allow-http', '--webhook-allow-private', '127.0.0.0/8', '--webhook-schedule', '200ms,200ms']);
  receiver = await startReceiver();
  receiver.on('/ok', { status: 200 });
  receiver.on('/fail', { status: 500, body: 'receiver broke: database down' });
});

after(async () => {
  await browser?.close();
  await env?.close();
  await shop?.stop();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Deletes every endpoint of the site's test mode (each test starts from none). */
async function noEndpoints() {
  const list = await api(shop.base, 'GET', '/v1/webhook_endpoints?limit=100', { key: DEMO_SK });
  for (const e of list.json.data) await api(shop.base, 'DELETE', `/v1/webhook_endpoints/${e.id}`, { key: DEMO_SK });
}

/**
 * The editor of the test's static server, `width` px wide, with the Webhooks panel open. No
 * request of the page is routed by Playwright (which would answer CORS preflights itself).
 */
async function editorPage(width = 1440) {
  const context = await browser.newContext({ ...env.options, viewport: { width, height: 1000 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
  const page = await context.newPage();
  page.on('close', () => context.close().catch(() => {}));
  page.on('pageerror', (e) => env.errors.push(String(e)));
  await page.goto(`${env.server.url}/www/`);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30_000 });
  await settled(page);
  await page.locator('#webhooks-panel > summary').click();
  return page;
}

/** Connects the editor to the server through the Connect dialog; waits for the list. */
async function connect(page) {
  await page.locator('.sb-connect').click();
  await page.locator('#cx-address').fill(shop.base);
  await page.locator('#cx-key').fill(DEMO_SK);
  await page.locator('.cx-form button[type=submit]').click();
  await page.waitForFunction(() => document.querySelector('.sb-status .sb-host') || document.querySelector('.cx-error:not([hidden])'));
  assert.equal(await page.locator('.cx-error:not([hidden])').count(), 0, await page.locator('.cx-error').textContent());
  assert.equal(await waitState(page, 'ready', 'error'), 'ready', await page.locator('#webhooks-body .wh-status').textContent());
}

/** The panel's state once it is one of `states` (data-state on #webhooks-panel). */
async function waitState(page, ...states) {
  await page.waitForFunction((s) => s.includes(document.querySelector('#webhooks-panel').dataset.state), states);
  return page.locator('#webhooks-panel').getAttribute('data-state');
}

/** The view's notice once it says something other than the action under way. */
async function noticeText(page) {
  await page.waitForFunction(() => {
    const n = document.querySelector('#webhooks-body .wh-notice');
    return n.textContent && !n.classList.contains('busy');
  });
  return page.locator('#webhooks-body .wh-notice').textContent();
}

/** Adds an endpoint through the form; resolves to the secret the view shows. */
async function addEndpoint(page, url, { types = ['nudge.shown'], description = '' } = {}) {
  await page.locator('#webhooks-body').getByLabel('Address of your receiver').fill(url);
  for (const box of await page.locator('#webhooks-body .wh-types input[type=checkbox]').all()) {
    await box.setChecked(types.includes(await box.getAttribute('value')));
  }
  await page.locator('#webhooks-body').getByLabel('Description').fill(description);
  await page.locator('#webhooks-body [data-act=add]').click();
  await page.locator('#webhooks-body .wh-secret').waitFor();
  return page.locator('#wh-secret').inputValue();
}

/** An endpoint's row in the list, by address. */
const rowOf = (page, url) => page.locator('#webhooks-body .wh-row', { has: page.locator('.wh-url', { hasText: url }) });

/** Standard Webhooks v1, as a check that the secret shown is the one that signs. */
function signs(secret, { headers, body }) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
  return headers['webhook-signature'].split(' ').includes(`v1,${mac}`);
}

test('before connecting, Webhooks says where they come from and offers to connect', async () => {
  const page = await editorPage();
  assert.equal(await waitState(page, 'not-connected'), 'not-connected');
  assert.match(await page.locator('#webhooks-body .wh-status').textContent(), /Webhooks are sent by a nudge-rules server/);
  assert.equal(await page.locator('#webhooks-body .wh-form').isHidden(), true);
  await page.locator('#webhooks-body .wh-status button', { hasText: 'Connect to a server' }).click();
  assert.equal(await page.locator('.cx-dialog').evaluate((d) => d.open), true);
  await page.close();
});

test('an endpoint added shows its secret once; a test arrives signed with it, its attempt read with status 200 and the body', async () => {
  await noEndpoints();
  const page = await editorPage();
  await connect(page);
  assert.match(await page.locator('#webhooks-body .wh-empty').textContent(), /No endpoint yet/);
  const url = receiver.url('/ok');
  const secret = await addEndpoint(page, url, { types: ['nudge.shown', 'config.published'], description: 'order system' });
  assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
  assert.match(await page.locator('#webhooks-body .wh-secret').textContent(), /it will not be shown again/);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.act), 'copy-secret', 'the Copy button has the focus');
  await page.locator('#webhooks-body [data-act=copy-secret]').click();
  await page.locator('#webhooks-body .wh-copied', { hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  // The server has it as the view says, without the secret.
  const listed = (await api(shop.base, 'GET', '/v1/webhook_endpoints', { key: DEMO_SK })).json.data;
  assert.equal(listed.length, 1);
  assert.deepEqual({ url: listed[0].url, types: listed[0].event_types, description: listed[0].description, status: listed[0].status },
    { url, types: ['nudge.shown', 'config.published'], description: 'order system', status: 'enabled' });
  assert.equal(listed[0].secret, undefined);
  const row = rowOf(page, url);
  assert.equal(await row.locator('.pill').textContent(), 'Enabled');
  assert.match(await row.locator('.wh-types-line').textContent(), /nudge\.shown, config\.published/);
  assert.equal(await row.locator('.wh-desc').textContent(), 'order system');

  // A test message: its attempt appears with 200 and the receiver's body.
  await row.locator('[data-act=test]').click();
  assert.match(await noticeText(page), /^Test message msg_\w+ sent to /);
  const attempt = page.locator('#webhooks-body .wh-attempt').first();
  await attempt.waitFor({ timeout: 20_000 });
  assert.equal(await attempt.getAttribute('data-status'), '200');
  assert.equal(await attempt.locator('.wh-outcome').textContent(), 'Delivered: 200');
  assert.equal(await attempt.locator('.wh-type-name').textContent(), 'webhook.test');
  assert.match(await attempt.locator('.wh-when').textContent(), /\d+ ms · message msg_/);
  const [got] = receiver.got('/ok');
  assert.equal(got.headers['webhook-id'], await attempt.getAttribute('data-message'));
  assert.ok(signs(secret, got), 'the secret shown signs the delivery');
  assert.equal(JSON.parse(got.body).type, 'webhook.test');
  // The body, collapsed until opened.
  const body = attempt.locator('.wh-body');
  assert.equal(await body.evaluate((d) => d.open), false);
  await body.locator('summary').click();
  assert.deepEqual(JSON.parse(await body.locator('pre').textContent()), { received: got.headers['webhook-id'], by: 'test receiver' });
  assert.equal(await row.locator('[data-act=attempts]').getAttribute('aria-expanded'), 'true');

  // Screenshot with the secret still shown (what a person sees after adding).
  await page.evaluate(() => { document.querySelector('#toast').hidden = true; });
  mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize({ width: 1440, height: 2200 });
  await page.locator('#webhooks-panel').screenshot({ path: path.join(SHOTS, 'connected-webhooks.png'), animations: 'disabled' });

  // "I have saved it": the secret is gone from the page, and no redraw or refresh brings it back.
  await page.locator('#webhooks-body [data-act=close-secret]').click();
  assert.equal(await page.locator('#webhooks-body .wh-secret').count(), 0);
  await page.locator('#webhooks-body [data-act=refresh]').click();
  assert.equal(await waitState(page, 'ready'), 'ready');
  assert.equal(await page.evaluate((s) => document.documentElement.outerHTML.includes(s) || JSON.stringify(window.nudgePlayground.store).includes(s), secret), false);
  await page.close();
});

test('a receiver answering 500: the failure, its retries and its body; resend; disable, re-enable and recover', async () => {
  await noEndpoints();
  const page = await editorPage();
  await connect(page);
  const url = receiver.url('/fail');
  await addEndpoint(page, url);
  await page.locator('#webhooks-body [data-act=close-secret]').click();
  const row = rowOf(page, url);
  await row.locator('[data-act=test]').click();
  const attempt = page.locator('#webhooks-body .wh-attempt').first();
  await attempt.waitFor({ timeout: 20_000 });
  assert.equal(await attempt.locator('.wh-outcome').textContent(), 'Failed: 500');
  const opened = await attempt.getAttribute('data-id');
  await attempt.locator('.wh-body summary').click();
  assert.equal(await attempt.locator('.wh-body pre').textContent(), 'receiver broke: database down');
  // The ladder (200 ms, 200 ms) tries twice more; Refresh attempts shows all three, the last
  // with no more tries.
  await page.waitForTimeout(1500);
  await page.locator('#webhooks-body [data-act=refresh-attempts]').click();
  await page.waitForFunction(() => document.querySelectorAll('#webhooks-body .wh-attempt').length === 3);
  assert.equal(await page.locator('#webhooks-body .wh-attempt.wh-failed').count(), 3);
  assert.match(await page.locator('#webhooks-body .wh-attempt').first().locator('.wh-detail').textContent(), /No more tries: resend it to try again\./);
  assert.match(await page.locator('#webhooks-body .wh-attempt').last().locator('.wh-detail').textContent(), /Next try /);
  // The body opened stays open across the redraw; the others are closed.
  assert.deepEqual(await page.locator('#webhooks-body .wh-attempt').evaluateAll((els) => els.filter((a) => a.querySelector('.wh-body').open).map((a) => a.dataset.id)), [opened]);
  const message = await page.locator('#webhooks-body .wh-attempt').first().getAttribute('data-message');

  // The receiver is fixed; resend from the attempt: a new attempt of the same message, 200.
  receiver.on('/fail', { status: 200 });
  await page.locator('#webhooks-body .wh-attempt').first().getByRole('button', { name: `Resend message ${message}` }).click();
  assert.match(await noticeText(page), new RegExp(`^Message ${message} sent again \\(to 1 enabled endpoint\\)\\.`));
  await page.waitForFunction(() => document.querySelector('#webhooks-body .wh-attempt')?.dataset.status === '200', null, { timeout: 20_000 });
  assert.equal(await page.locator('#webhooks-body .wh-attempt').first().getAttribute('data-message'), message);
  assert.equal(receiver.got('/fail').at(-1).headers['webhook-id'], message, 'the same webhook-id');

  // Disable: said on the row, the server has it, no test from a disabled endpoint.
  await row.locator('[data-act=disable]').click();
  await row.locator('.pill', { hasText: 'Disabled' }).waitFor();
  assert.match(await noticeText(page), /is disabled: nothing is sent to it/);
  const id = await row.getAttribute('data-id');
  assert.equal((await api(shop.base, 'GET', `/v1/webhook_endpoints/${id}`, { key: DEMO_SK })).json.data.status, 'disabled');
  assert.equal(await row.locator('[data-act=test]').count(), 0);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.act), 'enable', 'the focus stays on the row, on Re-enable');

  // Re-enabled with "also send again what failed since": a message that failed every attempt
  // while the receiver was down (a test sent over the API) is sent again and arrives.
  await row.locator('[data-act=enable]').click();
  await row.locator('.pill', { hasText: 'Enabled' }).waitFor();
  receiver.on('/fail', { status: 500, body: 'down again' });
  const sent = await api(shop.base, 'POST', `/v1/webhook_endpoints/${id}/test`, { key: DEMO_SK });
  assert.equal(sent.status, 202);
  const deadline = Date.now() + 15_000;
  while (receiver.got('/fail').filter((g) => g.headers['webhook-id'] === sent.json.data.id).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await page.waitForTimeout(300);
  await row.locator('[data-act=disable]').click();
  await row.locator('.pill', { hasText: 'Disabled' }).waitFor();
  receiver.on('/fail', { status: 200 });
  const since = new Date(Date.now() - 3_600_000);
  const local = `${since.getFullYear()}-${String(since.getMonth() + 1).padStart(2, '0')}-${String(since.getDate()).padStart(2, '0')}T${String(since.getHours()).padStart(2, '0')}:${String(since.getMinutes()).padStart(2, '0')}`;
  await row.getByLabel('On Re-enable, also send again what failed since').check();
  await row.getByLabel('Failed since', { exact: true }).fill(local);
  await row.locator('[data-act=enable]').click();
  const said = await noticeText(page);
  assert.match(said, /is enabled again: new messages go to it\. 1 message that failed to reach it since .* will be sent again\./);
  assert.equal((await api(shop.base, 'GET', `/v1/webhook_endpoints/${id}`, { key: DEMO_SK })).json.data.status, 'enabled');
  await page.waitForFunction((m) => [...document.querySelectorAll('#webhooks-body .wh-attempt')].some((a) => a.dataset.message === m && a.dataset.status === '200'),
    sent.json.data.id, { timeout: 20_000 }).catch(async () => {
    await page.locator('#webhooks-body [data-act=refresh-attempts]').click();
    await page.waitForFunction((m) => [...document.querySelectorAll('#webhooks-body .wh-attempt')].some((a) => a.dataset.message === m && a.dataset.status === '200'), sent.json.data.id, { timeout: 20_000 });
  });

  // More than a page of attempts: the 20 newest, then "Show older attempts" adds the rest.
  receiver.on('/fail', { status: 500, body: 'down' });
  for (let i = 0; i < 7; i++) assert.equal((await api(shop.base, 'POST', `/v1/webhook_endpoints/${id}/test`, { key: DEMO_SK })).status, 202);
  const all = async () => (await api(shop.base, 'GET', `/v1/webhook_endpoints/${id}/attempts?limit=200`, { key: DEMO_SK })).json.data;
  // Every retry made (3 attempts per message), so that the list stands still.
  const until = Date.now() + 20_000;
  let total = await all();
  for (let last = -1; (total.length !== last || total.length < 28) && Date.now() < until; total = await all()) {
    last = total.length;
    await new Promise((r) => setTimeout(r, 800));
  }
  assert.ok(total.length >= 28 && total.length <= 40, `${total.length} attempts`);
  await page.locator('#webhooks-body [data-act=refresh-attempts]').click();
  await page.waitForFunction(() => document.querySelectorAll('#webhooks-body .wh-attempt').length === 20 && document.querySelector('#webhooks-body [data-act=older-attempts]'));
  await page.locator('#webhooks-body [data-act=older-attempts]').click();
  await page.waitForFunction((n) => document.querySelectorAll('#webhooks-body .wh-attempt').length === n, total.length);
  const shown = await page.locator('#webhooks-body .wh-attempt').evaluateAll((els) => els.map((a) => a.dataset.id));
  assert.deepEqual(shown, total.map((a) => a.id), 'the older page follows the newest, in the server\'s order');
  assert.equal(await page.locator('#webhooks-body [data-act=older-attempts]').count(), 0, 'no more to show');
  assert.equal(new Set(shown).size, shown.length, 'no attempt twice');
  await page.close();
});

test('rotate shows the new secret once; delete asks first; refusals and a silent server are said in words', async () => {
  await noEndpoints();
  const page = await editorPage();
  await connect(page);
  const url = receiver.url('/ok');
  const first = await addEndpoint(page, url);
  await page.locator('#webhooks-body [data-act=close-secret]').click();
  const row = rowOf(page, url);
  // Rotate: a new secret, said to be shown once, with the 24 hours of both signatures.
  await row.locator('[data-act=rotate]').click();
  await page.locator('#webhooks-body .wh-secret[data-why=rotated]').waitFor();
  const second = await page.locator('#wh-secret').inputValue();
  assert.notEqual(second, first);
  assert.match(await page.locator('#webhooks-body .wh-secret').textContent(), /will not be shown again.*24 hours/);
  await page.locator('#webhooks-body [data-act=close-secret]').click();
  // A test now carries both signatures, each verifying with its secret.
  await row.locator('[data-act=test]').click();
  await page.locator('#webhooks-body .wh-attempt[data-status="200"]').first().waitFor({ timeout: 20_000 });
  const got = receiver.got('/ok').at(-1);
  assert.ok(signs(first, got) && signs(second, got));

  // Refused by the server: its words, at the form.
  await page.locator('#webhooks-body').getByLabel('Address of your receiver').fill('http://10.1.2.3/hook');
  await page.locator('#webhooks-body [data-act=add]').click();
  await page.locator('#webhooks-body .wh-form-error:not([hidden])').waitFor();
  assert.match(await page.locator('#webhooks-body .wh-form-error').textContent(), /^Adding the endpoint was refused by the server: url: .*10\.1\.2\.3.*private/);
  // Nothing checked: said before asking.
  await page.locator('#webhooks-body').getByLabel('Address of your receiver').fill(url);
  for (const box of await page.locator('#webhooks-body .wh-types input[type=checkbox]').all()) await box.uncheck();
  await page.locator('#webhooks-body [data-act=add]').click();
  assert.equal(await page.locator('#webhooks-body .wh-form-error').textContent(), 'Choose at least one event to send.');

  // Delete: asked first; "Keep it" keeps it, "Delete endpoint" deletes it.
  await row.locator('[data-act=delete]').click();
  const dialog = page.locator('#dialog');
  await dialog.getByRole('heading', { name: 'Delete this endpoint?' }).waitFor();
  assert.match(await dialog.textContent(), /This cannot be undone/);
  await dialog.getByRole('button', { name: 'Keep it' }).click();
  assert.equal(await row.count(), 1);
  const id = await row.getAttribute('data-id');
  await row.locator('[data-act=delete]').click();
  await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
  await page.locator('#webhooks-body .wh-empty').waitFor();
  assert.match(await noticeText(page), /^Deleted /);
  assert.equal((await api(shop.base, 'GET', `/v1/webhook_endpoints/${id}`, { key: DEMO_SK })).status, 404);
  // The server does not answer: named. (Routed last: Playwright's routing answers preflights.)
  await page.route(`${shop.base}/v1/webhook_endpoints?**`, (route) => route.abort('connectionrefused'));
  await page.locator('#webhooks-body [data-act=refresh]').click();
  assert.equal(await waitState(page, 'error'), 'error');
  assert.match(await page.locator('#webhooks-body .wh-status').textContent(), new RegExp(`^Could not reach the server at ${shop.base.replace(/[.]/g, '\\.')}`));
  await page.unroute(`${shop.base}/v1/webhook_endpoints?**`);
  // Disconnected: back to the first state.
  await page.locator('.sb-disconnect').click();
  assert.equal(await waitState(page, 'not-connected'), 'not-connected');
  assert.equal(await page.locator('#webhooks-body .wh-row').count(), 0);
  await page.close();
});

for (const width of [1440, 390]) {
  test(`at ${width} px: no serious axe-core violation, worked with the keyboard, screenshot`, async () => {
    await noEndpoints();
    const page = await editorPage(width);
    await connect(page);
    // With the keyboard: the address typed, Enter adds.
    await page.locator('#webhooks-body').getByLabel('Address of your receiver').focus();
    await page.keyboard.type(receiver.url('/ok'));
    await page.keyboard.press('Enter');
    await page.locator('#webhooks-body .wh-secret').waitFor();
    await page.keyboard.press('Tab'); // from Copy secret to I have saved it
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#webhooks-body .wh-secret').count(), 0);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.act), 'test', 'the focus goes on to the new endpoint\'s Send test');
    await page.keyboard.press('Enter');
    await page.locator('#webhooks-body .wh-attempt[data-status="200"]').first().waitFor({ timeout: 20_000 });
    // A failing endpoint beside it, disabled, so that every state is on screen.
    await api(shop.base, 'POST', '/v1/webhook_endpoints', { key: DEMO_SK, body: { url: receiver.url('/fail'), event_types: ['session.converted', 'nudge.outcome'], description: 'CRM sync' } })
      .then((r) => api(shop.base, 'PATCH', `/v1/webhook_endpoints/${r.json.data.id}`, { key: DEMO_SK, body: { status: 'disabled' } }));
    await page.locator('#webhooks-body [data-act=refresh]').click();
    await page.waitForFunction(() => document.querySelectorAll('#webhooks-body .wh-row').length === 2);
    await page.locator('#webhooks-body .wh-attempt').first().waitFor();
    await page.locator('#webhooks-body .wh-attempt .wh-body summary').first().click();
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async () => {
      const result = await window.axe.run('#webhooks-panel', { resultTypes: ['violations'], rules: { 'target-size': { enabled: true } } });
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    });
    assert.deepEqual(violations, []);
    const overflow = await page.locator('#webhooks-panel').evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(overflow <= 1, `the panel overflows by ${overflow} px`);
    await page.setViewportSize({ width, height: 2600 });
    await page.evaluate(() => { document.querySelector('#toast').hidden = true; });
    await page.locator('#webhooks-panel').scrollIntoViewIfNeeded();
    mkdirSync(SHOTS, { recursive: true });
    await page.locator('#webhooks-panel').screenshot({ path: path.join(SHOTS, width === 390 ? 'phone-connected-webhooks.png' : 'connected-webhooks-attempts.png'), animations: 'disabled' });
    await page.close();
  });
}
