// One browser test per finding of issue 24 (the editor tried as a merchant would). Each failed on
// the editor of the commit before its change and passes now (findings 1 and 4, which depend on
// wall time, are in merchant-timing.test.mjs):
//
//   node --test www/test/merchant.test.mjs www/test/merchant-timing.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT, configText, freshPage, launch, open, setConfig, setState, settled, showJson } from './helpers.mjs';

const STOREFRONT = readFileSync(path.join(ROOT, 'examples/storefront.json'), 'utf8');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const EXAMPLE_SCENARIOS = JSON.parse(readFileSync(path.join(ROOT, 'examples/scenarios.json'), 'utf8')).scenarios;

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

/** The ids of the config's rules, as the text says. */
async function ruleIds(page) {
  return JSON.parse(await configText(page)).rules.map((r) => r.id);
}

/** The card of rule `index` (0-based), built. */
async function card(page, index) {
  await page.evaluate((i) => window.nudgePlayground.rulesEditor.cards.element(i)?.scrollIntoView({ block: 'center' }), index);
  return page.locator(`.rule-card-slot[data-index="${index}"]`);
}

/** Opens the Scenarios panel (its module loads) and waits for its first check. */
async function openScenarios(page) {
  if (!(await page.locator('#scenarios-panel').evaluate((el) => el.open))) await page.locator('#scenarios-panel > summary').click();
  await page.locator('#scenarios-body .sc-summary:not(:empty)').waitFor();
  await settled(page);
}

/** The names in the Scenarios list, once it has `n` items. */
async function scenarioNames(page, n) {
  await page.waitForFunction((k) => document.querySelectorAll('#scenarios-body .sc-item').length === k, n);
  return page.locator('#scenarios-body .sc-item').evaluateAll((els) => els.map((el) => el.dataset.name));
}

/** Saves the current visitor as a scenario named `name`. */
async function saveVisitor(page, name) {
  await page.locator('#sc-name').fill(name);
  await page.locator('#scenarios-body .sc-save button[type=submit]').click();
  await page.locator(`#scenarios-body .sc-item[data-name="${name}"]`).waitFor();
  await settled(page);
}

/** The toast's Undo button, visible. */
async function clickUndo(page) {
  const undo = page.locator('#toast-action', { hasText: 'Undo' });
  await undo.waitFor({ state: 'visible', timeout: 2000 });
  await undo.click();
  await settled(page);
}

/**
 * The example config with four findings on sizing-help: an empty button text, a 25 h idle time, a
 * page pattern ending in "/" and an unknown field. `index`: sizing-help's place.
 */
function brokenSizingHelp() {
  const config = JSON.parse(STOREFRONT);
  const index = config.rules.findIndex((r) => r.id === 'sizing-help');
  const rule = config.rules[index];
  rule.nudge.cta = '';
  rule.when.min_idle_ms = 90_000_000;
  rule.when.pages.push('/products/');
  rule.colour = 'red';
  return { config, index };
}

describe('issue 24 findings', () => {
  // Finding 1 (Undo, and a typed word taken back by one Ctrl+Z: CodeMirror groups keystrokes less
  // than 500 ms apart) is in merchant-timing.test.mjs, which `make test` runs alone.

  test('2. loading the example scenarios and importing a file add to the merchant\'s scenarios, say so, and can be undone', async () => {
    const page = await editorPage();
    await openScenarios(page);
    const clash = EXAMPLE_SCENARIOS[0].name;
    await saveVisitor(page, 'my own shopper');
    await page.locator('#intent').evaluate((el) => {
      el.value = '10';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await settled(page);
    await saveVisitor(page, clash); // the same name as an example scenario, another visitor
    const mine = await scenarioNames(page, 2);

    await page.locator('#scenarios-body [data-act=sample]').click();
    const names = await scenarioNames(page, 2 + EXAMPLE_SCENARIOS.length);
    assert.deepEqual(names.slice(0, 2), mine, 'the merchant\'s scenarios are kept, first');
    assert.ok(names.includes(`${clash} (2)`), names.join(' | '));
    const said = await page.locator('#toast-text').textContent();
    assert.match(said, new RegExp(`Added ${EXAMPLE_SCENARIOS.length} scenarios from the example scenarios; your 2 scenarios are kept`));
    assert.match(said, /1 had a name already in use, added as “.* \(2\)”/);

    // Undo: the merchant's two again.
    await clickUndo(page);
    assert.deepEqual(await scenarioNames(page, 2), mine);

    // Loaded twice: the second time adds nothing, they are there already.
    await page.locator('#scenarios-body [data-act=sample]').click();
    await scenarioNames(page, 2 + EXAMPLE_SCENARIOS.length);
    await page.locator('#scenarios-body [data-act=sample]').click();
    await page.locator('#toast-text', { hasText: 'Added 0 scenarios' }).waitFor();
    assert.match(await page.locator('#toast-text').textContent(), new RegExp(`${EXAMPLE_SCENARIOS.length} were here already`));
    const all = await scenarioNames(page, 2 + EXAMPLE_SCENARIOS.length);

    // Import a file: added the same way; Undo takes the import back.
    const file = { scenarios: [{ ...EXAMPLE_SCENARIOS[1], name: 'imported one' }] };
    await page.locator('#scenarios-body input[type=file]').setInputFiles({ name: 'team.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) });
    assert.deepEqual(await scenarioNames(page, all.length + 1), [...all, 'imported one']);
    assert.match(await page.locator('#toast-text').textContent(), new RegExp(`Added 1 scenario from team\\.json; your ${all.length} scenarios are kept`));
    await clickUndo(page);
    assert.deepEqual(await scenarioNames(page, all.length), all);

    // Deleting a scenario offers Undo too.
    await page.getByRole('button', { name: `Delete scenario ${mine[0]}`, exact: true }).click();
    assert.deepEqual(await scenarioNames(page, all.length - 1), all.slice(1));
    await clickUndo(page);
    assert.deepEqual(await scenarioNames(page, all.length), all);
    await page.close();
  });

  test('3. a failing scenario shows in the status, in Problems (a button opens it in Scenarios) and on the card of the rule it expects', async () => {
    const page = await editorPage();
    await openScenarios(page);
    await page.locator('#scenarios-body [data-act=sample]').click();
    await scenarioNames(page, EXAMPLE_SCENARIOS.length);
    await page.locator('#scenarios-panel > summary').click(); // closed again, as the merchant leaves it
    await settled(page);
    assert.match(await page.locator('#config-status').textContent(), /^Valid · 9 rules$/);

    // Switch sizing-help off in its card: the scenarios that expect it fail.
    const expecting = EXAMPLE_SCENARIOS.filter((s) => s.expect.rule === 'sizing-help');
    assert.ok(expecting.length >= 1);
    const sizing = await card(page, (await ruleIds(page)).indexOf('sizing-help'));
    await sizing.locator('.rc-head input[type=checkbox]').uncheck();
    await settled(page);
    await page.locator('#config-status', { hasText: 'fail' }).waitFor();
    const n = expecting.length;
    assert.equal(await page.locator('#config-status').textContent(), `Valid · 9 rules · ${n} ${n === 1 ? 'scenario fails' : 'scenarios fail'}`);
    assert.match(await page.locator('#config-status').getAttribute('class'), /pill-error/);
    const problems = page.locator('#diagnostics li.scenario-fail');
    assert.equal(await problems.count(), n);
    assert.match(await problems.first().textContent(), new RegExp(`Scenario “${expecting[0].name}” fails\\. Expected: rule “sizing-help” fires; now: `));
    assert.equal(await page.locator('#diagnostics li.ok').count(), 0, 'Problems does not say "No problems"');

    // The card of sizing-help says so.
    const onCard = sizing.locator('.rc-failing li');
    assert.equal(await onCard.count(), n);
    assert.match(await onCard.first().textContent(), new RegExp(`Scenario “${expecting[0].name}” expects this rule to fire; now: `));

    // The Problems button opens the Scenarios panel at the failure.
    await problems.first().locator('button').click();
    assert.equal(await page.locator('#scenarios-panel').evaluate((el) => el.open), true);
    const item = page.locator(`#scenarios-body .sc-item[data-name="${expecting[0].name}"]`);
    assert.match(await item.getAttribute('class'), /\bfail\b/);
    await page.waitForFunction((name) => document.activeElement?.closest('.sc-item')?.dataset.name === name, expecting[0].name);
    assert.ok(await item.isVisible());
    const box = await item.boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= 1000, `the failing scenario is on screen (y ${box.y})`);

    // Back on: no failure left anywhere.
    await sizing.locator('.rc-head input[type=checkbox]').check();
    await settled(page);
    await page.locator('#config-status', { hasText: /^Valid · 9 rules$/ }).waitFor();
    assert.equal(await page.locator('#diagnostics li.scenario-fail').count(), 0);
    assert.equal(await sizing.locator('.rc-failing li').count(), 0);
    await page.close();
  });

  // Finding 4 (a 1,000-rule config with 2,000 errors: its longest task against a baseline) measures
  // the main thread's long tasks, so it is in merchant-timing.test.mjs, which `make test` runs
  // alone; the tests of this file check no wall time and run beside the server's suite.

  test('5. a damaged share link: the notice stays until dismissed and says the page shows the example, not the shared config', async () => {
    // A link cut short: the first 60 characters of the example config's deflated text.
    const page = await editorPage('#i=50&t=1000&u=%2Fblog%2Fcare&c=zrZZRb9s2EMff_SkOwoYChbU4adO1fjGyou1DgfQhBYZhCIQTeRI506RKHuOo');
    const notice = page.locator('#notice');
    await notice.waitFor();
    const text = await notice.textContent();
    assert.match(text, /This link's config could not be read/);
    assert.match(text, /The editor shows the example config, not the shared config/);
    assert.equal(await configText(page), STOREFRONT);
    assert.equal(await page.locator('#intent').inputValue(), '50', 'the link\'s visitor is kept');
    await page.waitForTimeout(4000); // the toast of before was gone after 3.2 s
    assert.ok(await notice.isVisible(), 'the notice is still there after 4 s');
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    assert.ok(await notice.isHidden());
    await page.close();
  });

  test('6. idle 7,999 ms against a rule waiting 8 s: no text reads as 8 s, the verdict says 7.999 s of the 8 s', async () => {
    const page = await editorPage();
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 7999 });
    const condition = page.locator('#explain-rules [data-rule="sizing-help"] .cond[data-condition="min_idle_ms"]');
    await condition.waitFor();
    assert.match(await condition.innerText(), /Waits 7\.999 s of the 8 s this rule needs/);
    const shown = await page.locator('#idle-out').textContent();
    assert.ok(parseFloat(shown) < 8, `the idle time control says ${shown}`);
    assert.equal(await page.locator('#idle').getAttribute('aria-valuetext'), shown);

    // At 8,000 ms it holds, and says so with the same figures.
    await setState(page, { idle: 8000 });
    await page.locator('#explain-rules [data-rule="sizing-help"] .cond.holds[data-condition="min_idle_ms"]').waitFor();
    assert.match(await condition.innerText(), /Idle 8 s, past the 8 s this rule waits for/);
    assert.equal(await page.locator('#idle-out').textContent(), '8.0 s');
    await page.close();
  });
  test('7. Open refuses a binary file and a text file that is not JSON, naming it, and replaces nothing', async () => {
    const page = await editorPage();
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs += 1;
      d.dismiss();
    });
    const edited = STOREFRONT.replace('Not sure about the fit? Ask a stylist.', 'Edited by hand');
    await setConfig(page, edited);
    const notice = page.locator('#notice');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);
    await page.locator('#file-input').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
    await notice.waitFor();
    assert.match(await notice.textContent(), /“photo\.png” is not a text file .*It was not opened: your config is unchanged/);
    assert.equal(await page.locator('dialog[open]').count(), 0, 'nothing to discard: no question asked');
    assert.equal(await configText(page), edited);

    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await page.locator('#file-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('rules: sizing-help first\n') });
    await notice.waitFor();
    assert.match(await notice.textContent(), /“notes\.txt” is not JSON \(.+\)\. It was not opened: your config is unchanged/);
    assert.equal(await page.locator('dialog[open]').count(), 0);
    assert.equal(await configText(page), edited);
    assert.equal(dialogs, 0);

    // A JSON file opens (after the usual question about the edits), and the notice goes.
    await page.locator('#file-input').setInputFiles({ name: 'mine.json', mimeType: 'application/json', buffer: Buffer.from(STOREFRONT) });
    await page.locator('dialog[open] button', { hasText: 'Discard' }).click();
    await settled(page);
    assert.equal(await configText(page), STOREFRONT);
    assert.ok(await notice.isHidden());
    await page.close();
  });


  test('8. the intent range is one control whose ends cannot cross', async () => {
    const page = await editorPage();
    const index = (await ruleIds(page)).indexOf('sizing-help');
    const range = (await card(page, index)).locator('.dual-range[role=group]');
    const lo = range.locator('input[aria-label="Lowest intent score"]');
    const hi = range.locator('input[aria-label="Highest intent score"]');
    const when = async () => JSON.parse(await configText(page)).rules[index].when;
    assert.deepEqual([(await when()).min_intent_score, (await when()).max_intent_score ?? 100], [60, 100]);
    const drag = (el, v) => el.evaluate((input, value) => {
      input.value = String(value);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }, v);

    // The upper end pulled below the lower one stops at it, and the other way round.
    await drag(hi, 40);
    await settled(page);
    assert.equal(await hi.inputValue(), '60');
    assert.equal((await when()).max_intent_score, 60);
    await drag(lo, 90);
    await settled(page);
    assert.equal(await lo.inputValue(), '60');
    assert.equal((await when()).min_intent_score, 60);
    assert.equal(await page.locator('#diagnostics li.diag.error').count(), 0, 'no "min above max" error');

    // Ends that meet can be pulled apart from the keyboard.
    await hi.focus();
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await lo.focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowLeft');
    await settled(page);
    assert.deepEqual([(await when()).min_intent_score, (await when()).max_intent_score], [57, 65]);
    assert.match(await (await card(page, index)).locator('.field-label b').first().textContent(), /^57 to 65$/);
    await page.close();
  });

  test('9. a new rule is added switched off, after the card the merchant works in, with "Move to top"', async () => {
    const page = await editorPage();
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const before = await page.locator('#preview-badge').textContent();
    const ids = await ruleIds(page);
    await (await card(page, 1)).locator('.rc-id').click();
    await page.locator('#rules-view .add-rule').click();
    await settled(page);
    const rules = JSON.parse(await configText(page)).rules;
    assert.equal(rules.length, 10);
    assert.equal(rules[2].id, 'rule-10');
    assert.equal(rules[2].enabled, false);
    assert.equal(await page.locator('#preview-badge').textContent(), before, 'the visitor\'s nudge is unchanged');
    assert.match(await page.locator('#toast-text').textContent(), new RegExp(`Added “rule-10” after “${ids[1]}”, switched off`));
    assert.equal(await page.evaluate(() => document.activeElement?.closest('.rule-card-slot')?.dataset.rule), 'rule-10');

    // The toast's "Move to top", then a card's own.
    await page.locator('#toast-action', { hasText: 'Move to top' }).click();
    await settled(page);
    assert.deepEqual(await ruleIds(page), ['rule-10', ...ids]);
    await (await card(page, 5)).getByRole('button', { name: `Move ${ids[4]} to the top` }).click();
    await settled(page);
    assert.deepEqual((await ruleIds(page)).slice(0, 2), [ids[4], 'rule-10']);
    await page.close();
  });

  test('10. a rule keeps its colour when it is moved, renamed, or rules around it come and go', async () => {
    const page = await editorPage();
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const ids = await ruleIds(page);
    /** The colour of rule `id` on its card, in the Why panel and in the map's legend (if there). */
    const colours = async (id) => {
      const index = (await ruleIds(page)).indexOf(id);
      const swatch = (await card(page, index)).locator('.rc-head .swatch');
      const why = page.locator(`#explain-rules [data-rule="${id}"] .swatch`);
      await why.scrollIntoViewIfNeeded();
      // The legend lists the rules that fire somewhere on this page (not the shadowed ones).
      const legend = page.locator(`#map-legend li[data-rule="${id}"] .swatch`);
      const bg = (l) => l.evaluate((el) => getComputedStyle(el).backgroundColor);
      const c = await bg(swatch);
      return { card: c, why: await bg(why), legend: (await legend.count()) ? await bg(legend) : c };
    };
    const all = async () => Object.fromEntries(await Promise.all(['high-intent-exit', 'sizing-help', 'free-shipping-bar'].map(async (id) => [id, await colours(id)])));
    const before = await all();
    for (const [id, c] of Object.entries(before)) assert.ok(c.card === c.why && c.why === c.legend, `${id}: ${JSON.stringify(c)}`);
    assert.equal(await page.locator('#map-legend li[data-rule="sizing-help"]').count(), 1);
    assert.notEqual(before['high-intent-exit'].card, before['sizing-help'].card);

    // Moved to the top: every rule keeps its colour (the one it pushed down too).
    await (await card(page, ids.indexOf('sizing-help'))).getByRole('button', { name: 'Move sizing-help to the top' }).click();
    await settled(page);
    assert.deepEqual((await ruleIds(page)).slice(0, 2), ['sizing-help', 'high-intent-exit']);
    assert.deepEqual(await all(), before);

    // Alt+Down from the keyboard, and a rule above deleted: still the same colours.
    await (await card(page, 0)).locator('.drag-handle').focus();
    await page.keyboard.press('Alt+ArrowDown');
    await settled(page);
    assert.deepEqual((await ruleIds(page)).slice(0, 2), ['high-intent-exit', 'sizing-help']);
    await (await card(page, 0)).getByRole('button', { name: 'Delete high-intent-exit' }).click();
    await settled(page);
    assert.ok(!(await ruleIds(page)).includes('high-intent-exit'));
    assert.deepEqual(await colours('sizing-help'), before['sizing-help']);
    assert.deepEqual(await colours('free-shipping-bar'), before['free-shipping-bar']);

    // Its name retyped letter by letter: the colour stays with the rule.
    const id = (await card(page, 0)).locator('.rc-id');
    await id.click();
    await page.keyboard.press('End');
    for (let i = 0; i < 4; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('stylist', { delay: 20 });
    await settled(page);
    assert.equal((await ruleIds(page))[0], 'sizing-stylist');
    assert.deepEqual(await colours('sizing-stylist'), before['sizing-help']);

    // A copy is a rule of its own: another colour than the rule it copies.
    await (await card(page, 0)).getByRole('button', { name: 'Duplicate sizing-stylist' }).click();
    await settled(page);
    const copy = (await ruleIds(page))[1];
    assert.notEqual((await colours(copy)).card, before['sizing-help'].card);
    await page.close();
  });

  test('11. a rule has a free-text description beside its id, kept in the browser and the share link, never in the config', async () => {
    const page = await editorPage();
    const ids = await ruleIds(page);
    const note = 'Stylist chat for shoppers who hesitate on a product page (Q3 test)';
    const sizing = await card(page, ids.indexOf('sizing-help'));
    const description = sizing.getByRole('textbox', { name: 'Description of sizing-help' });
    await description.click();
    await page.keyboard.type(note);
    await settled(page);
    // docs/contract/config.md has no such field (unknown fields are errors): the config is the same text, valid.
    assert.equal(await configText(page), STOREFRONT);
    assert.match(await page.locator('#config-status').textContent(), /^Valid/);
    // The Why panel shows it under the rule.
    const why = page.locator('#explain-rules [data-rule="sizing-help"] .rule-description');
    await why.scrollIntoViewIfNeeded();
    assert.equal(await why.textContent(), note);

    // It follows the rule when it moves (a retyped id: test 11b).
    await sizing.getByRole('button', { name: 'Move sizing-help to the top' }).click();
    await settled(page);
    const top = await card(page, 0);
    assert.equal(await top.locator('.rc-desc').inputValue(), note);
    assert.equal(await (await card(page, 1)).locator('.rc-desc').inputValue(), '', 'the rule pushed down has none');

    // Kept across a reload (this browser), and carried by the share link to another browser.
    await page.reload();
    await open(page, env.server, new URL(page.url()).hash);
    assert.equal(await (await card(page, 0)).locator('.rc-desc').inputValue(), note);
    await page.waitForFunction(() => /[#&]n=/.test(location.hash));
    const link = new URL(page.url()).hash;
    const other = await freshPage(env);
    await open(other, env.server, link);
    assert.equal((await ruleIds(other))[0], 'sizing-help');
    assert.equal(await (await card(other, 0)).locator('.rc-desc').inputValue(), note);
    assert.doesNotMatch(await configText(other), /description|Stylist chat/);
    await other.close();
    await page.close();
  });

  // Typed quickly (20 ms a key) and reloaded at once, this lost the rule's description about one
  // run in five under load: the reload's page was left by the second navigation (a second reload)
  // before it had read its draft, and its pagehide saved the empty editor over the draft, so the
  // example config came back and the retyped rule, description and all, was gone. The notes also
  // followed the ids of engine answers for older texts, and the link could pair a text with notes
  // keyed by another text's ids. And a reload opens the address the tab had when it began, so a
  // link written before the last edits brought their config back (the draft set aside): 2 runs of
  // 25 under load, and every run once the test waits for that link.
  test('11b. a rule\'s description follows its id when the id is retyped, through a reload and the share link', async () => {
    const page = await editorPage();
    const ids = await ruleIds(page);
    const note = 'Stylist chat for shoppers who hesitate on a product page (Q3 test)';
    const sizing = await card(page, ids.indexOf('sizing-help'));
    await sizing.getByRole('textbox', { name: 'Description of sizing-help' }).click();
    await page.keyboard.type(note);
    await settled(page);
    await sizing.getByRole('button', { name: 'Move sizing-help to the top' }).click();
    await settled(page);
    // The link of the moved config is in the address (written once changes pause for 500 ms);
    // the retyped id is not in a link yet when the page reloads.
    await page.waitForFunction(() => /[#&]c=/.test(location.hash));
    const top = await card(page, 0);
    await top.locator('.rc-id').click();
    await page.keyboard.press('End');
    await page.keyboard.type('-v2', { delay: 20 });
    await settled(page);
    assert.equal((await ruleIds(page))[0], 'sizing-help-v2');
    assert.equal(await top.locator('.rc-desc').inputValue(), note);

    // Reloaded at once (the address still holds the link of the moved config), and again while
    // the page loads: the edits and the description are what was on screen, and so is the link.
    await page.reload();
    await open(page, env.server, new URL(page.url()).hash);
    assert.equal((await ruleIds(page))[0], 'sizing-help-v2');
    assert.equal(await (await card(page, 0)).locator('.rc-desc').inputValue(), note);
    await page.waitForFunction(() => /[#&]n=/.test(location.hash));
    const other = await freshPage(env);
    await open(other, env.server, new URL(page.url()).hash);
    assert.equal((await ruleIds(other))[0], 'sizing-help-v2');
    assert.equal(await (await card(other, 0)).locator('.rc-desc').inputValue(), note);
    await other.close();
    await page.close();
  });

  test('12. Add refuses a pattern the engine flags invalid, and offers its "did you mean" as buttons', async () => {
    const page = await editorPage();
    const ids = await ruleIds(page);
    const index = ids.indexOf('sale-toast');
    const pagesOf = async () => JSON.parse(await configText(page)).rules[index].when.pages;
    const before = await pagesOf();
    const field = (await card(page, index)).locator('.field').filter({ has: page.locator('.field-label', { hasText: /^On pages$/ }) });
    const input = field.getByRole('textbox', { name: 'Add a page pattern' });
    const hint = field.locator('.chip-hint');

    // Typed with a trailing slash and Enter pressed at once: refused, the text kept, two fixes.
    await input.fill('/collections/new/');
    await input.press('Enter');
    await hint.filter({ hasText: 'Not added' }).waitFor();
    assert.match(await hint.textContent(), /Not added: “\/collections\/new\/” ends with “\/”, which no page address does\. Did you mean \/collections\/new or \/collections\/new\/\*\*\?/);
    assert.equal(await input.inputValue(), '/collections/new/');
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await pagesOf(), before);
    // The Add button refuses it too.
    await field.getByRole('button', { name: 'Add', exact: true }).click();
    await settled(page);
    assert.deepEqual(await pagesOf(), before);
    // One click on a "did you mean" adds it.
    await hint.getByRole('button', { name: '/collections/new/**' }).click();
    await settled(page);
    assert.deepEqual(await pagesOf(), [...before, '/collections/new/**']);
    assert.equal(await input.inputValue(), '');
    assert.equal(await input.getAttribute('aria-invalid'), null);

    // Without its leading slash, in the quiet zones: refused, "/gifts/**" offered.
    const zones = page.locator('.rules-settings');
    const zoneInput = zones.getByRole('textbox', { name: 'Add a quiet zone pattern' });
    await zoneInput.fill('gifts/**');
    await zones.getByRole('button', { name: 'Add', exact: true }).click();
    await zones.locator('.chip-hint', { hasText: 'Not added' }).waitFor();
    assert.match(await zones.locator('.chip-hint').textContent(), /must start with “\/”.*Did you mean \/gifts\/\*\*\?/);
    assert.equal(JSON.parse(await configText(page)).quiet_zones.length, 4);
    await zones.locator('.chip-hint').getByRole('button', { name: '/gifts/**' }).click();
    await settled(page);
    assert.deepEqual(JSON.parse(await configText(page)).quiet_zones.slice(-1), ['/gifts/**']);

    // A glob that does not parse: refused, nothing to offer; a pattern already there: refused.
    await input.fill('/a/{b');
    await input.press('Enter');
    await hint.filter({ hasText: 'Not added' }).waitFor();
    assert.match(await hint.textContent(), /is not a valid pattern/);
    assert.equal(await hint.getByRole('button').count(), 0);
    await input.fill(before[0]);
    await input.press('Enter');
    await hint.filter({ hasText: 'in this list already' }).waitFor();
    assert.deepEqual(await pagesOf(), [...before, '/collections/new/**']);

    // A pattern already in the config without its leading slash (written in the JSON): the
    // engine's "did you mean" replaces it in place.
    const config = JSON.parse(await configText(page));
    config.rules[index].when.pages.push('collections/outlet/**');
    await setConfig(page, JSON.stringify(config, null, 2));
    const fix = field.locator('.card-errors').getByRole('button', { name: '/collections/outlet/**' });
    await fix.waitFor();
    await fix.click();
    await settled(page);
    assert.deepEqual((await pagesOf()).slice(-1), ['/collections/outlet/**']);
    assert.equal(await page.locator('#diagnostics li.diag.error').count(), 0);
    config.rules[index].when.pages.pop();
    await setConfig(page, JSON.stringify(config, null, 2));

    // A valid pattern typed and added at once goes in.
    await input.fill('/collections/outlet/**');
    await input.press('Enter');
    await settled(page);
    assert.deepEqual(await pagesOf(), [...before, '/collections/new/**', '/collections/outlet/**']);
    assert.equal(await page.locator('#diagnostics li.diag.error').count(), 0);
    await page.close();
  });

  test('13. each rule error shows once, under its field, in the card\'s words; scenario failures and replay changes use the same words', async () => {
    const page = await editorPage();
    const { config, index } = brokenSizingHelp();
    await setConfig(page, JSON.stringify(config, null, 2));
    const sizing = await card(page, index);
    const text = await sizing.innerText();
    const findings = [
      ['The button text is empty', 'cta'],
      ['The idle time can be at most 24 h; this is 25 h', 'idle'],
      ['“/products/” ends with “/”', 'pages'],
      ['“colour” is not a setting of a rule', null],
    ];
    for (const [words, field] of findings) {
      assert.equal(text.split(words).length - 1, 1, `"${words}" shows once on the card:\n${text}`);
      const where = field ? sizing.locator(`[data-field="${field}"] .card-diag`) : sizing.locator(':scope > .card-errors .card-diag');
      assert.match(await where.innerText(), new RegExp(words.replace(/[.*+?()[\]\\/]/g, '\\$&')), `"${words}" is under its field`);
    }
    assert.equal(await sizing.locator('.card-diag').count(), findings.length);
    assert.doesNotMatch(text, /\bcta\b|idle_ms|min_idle|86,400,000|90000000|normalized/);
    await setConfig(page, STOREFRONT);

    // A scenario that fails once sizing-help waits 12 s: the card, Problems and the Scenarios panel
    // say why as the Why panel does ("Waits 9 s of the 12 s"), not as the engine does (idle_ms).
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    await openScenarios(page);
    await saveVisitor(page, 'a keen shopper');
    await (await card(page, index)).locator('input.idle-seconds').fill('12');
    await settled(page);
    await page.locator('#config-status', { hasText: 'scenario fails' }).waitFor();
    const because = /Waits 9 s of the 12 s this rule needs\./;
    for (const where of ['.rc-failing', '#diagnostics li.scenario-fail', '#scenarios-body .sc-item.fail .sc-reason']) {
      const el = where === '.rc-failing' ? (await card(page, index)).locator(where) : page.locator(where);
      const said = await el.innerText();
      assert.match(said, because, `${where}: ${said}`);
      assert.doesNotMatch(said, /idle_ms|9000/, `${where}: ${said}`);
    }

    // Replay: sizing-help at once instead of after 8 s; the changes say "at once", not "0 ms".
    await (await card(page, index)).locator('input.idle-seconds').fill('0');
    await settled(page);
    assert.match(await (await card(page, index)).locator('.rc-when').innerText(), /Shows after idle at once/);
    await page.locator('#replay-panel > summary').click();
    await page.locator('#replay-body [data-act=sample]').click();
    await page.locator('#replay-body tr[data-rule]').first().waitFor({ timeout: 20_000 });
    await page.locator('#replay-body [data-act=diff]').click();
    const changes = page.locator('#replay-body .rp-change-list');
    await changes.waitFor({ timeout: 20_000 });
    const listed = await changes.innerText();
    assert.match(listed, /rule “sizing-help” fires at once/);
    assert.doesNotMatch(listed, /after 0 ms|\b0 ms/);
    await page.close();
  });

  test('13c. the Problems list says each finding in the card\'s words, naming the rule; the engine\'s text is in the engineer details', async () => {
    const page = await editorPage();
    const { config } = brokenSizingHelp();
    config.quiet_zones.push('/account/');
    await setConfig(page, JSON.stringify(config, null, 2));
    const said = await page.locator('#diagnostics li.diag .diag-msg').allInnerTexts();
    for (const words of [
      'Rule “sizing-help”: The button text is empty: write 1 to 80 characters.',
      'Rule “sizing-help”: The idle time can be at most 24 h; this is 25 h.',
      'Rule “sizing-help”: “/products/” ends with “/”, which no page address does.',
      'Rule “sizing-help”: “colour” is not a setting of a rule. Fix it in the JSON.',
      '“/account/” ends with “/”, which no page address does.',
    ]) assert.ok(said.includes(words), `Problems says "${words}":\n${said.join('\n')}`);
    for (const text of said) assert.doesNotMatch(text, /\bcta\b|idle_ms|min_idle|86,400,000|90000000|normalized|rules\[/, text);
    // The engine's own message stays one click away, for engineers.
    await page.locator('#eng-btn').click();
    assert.match(await page.locator('#diagnostics li.diag.error').first().innerText(), /engine: /);
    await page.close();
  });

  // The sentences of a rule's conditions are the engine's (src/words.rs, engine.conditionSentences),
  // not a second copy in the page: a page excluded by a pattern names it in a failing scenario
  // (the page's copy had no pattern to name there: "excluded by ."), a quiet zone is said in the
  // engine's words, and the rule summaries say "at once" as the cards do (they said "right away").
  test('13b. the Why panel, failing scenarios and rule summaries take their sentences from the engine, in the cards\' words', async () => {
    const page = await editorPage();
    const config = JSON.parse(STOREFRONT);
    const index = config.rules.findIndex((r) => r.id === 'sizing-help');
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    const conds = page.locator('#explain-rules [data-rule="sizing-help"] .cond-text');
    await conds.first().waitFor();
    assert.deepEqual(await conds.allInnerTexts(), [
      'Intent 82 is at least the 60 this rule needs',
      'Idle 9 s, past the 8 s this rule waits for',
      'Page /products/linen-shirt is one of this rule\'s pages (/products/**)',
      'Page /products/linen-shirt is not excluded (/products/gift-card)',
    ]);
    const gift = page.locator('#explain-rules [data-rule="gift-guide"] .rule-summary');
    await gift.scrollIntoViewIfNeeded();
    assert.match(await gift.innerText(), /at any intent at once\.$/);

    await openScenarios(page);
    await saveVisitor(page, 'a shirt shopper');
    config.rules[index].when.exclude_pages.push('/products/linen-*');
    await setConfig(page, JSON.stringify(config, null, 2));
    await page.locator('#config-status', { hasText: 'scenario fails' }).waitFor();
    for (const where of ['#diagnostics li.scenario-fail', '#scenarios-body .sc-item.fail .sc-reason']) {
      assert.match(await page.locator(where).innerText(), /Page \/products\/linen-shirt is excluded by \/products\/linen-\*\./, where);
    }

    await setState(page, { url: '/checkout/pay' });
    const quiet = page.locator('#explain-rules [data-rule="sizing-help"] .verdict');
    await quiet.waitFor();
    assert.equal(await quiet.getAttribute('title'), 'This page is in the quiet zone /checkout/**: no nudge shows here, whatever the rules say.');
    await page.close();
  });

  test('14. replay\'s change list tells repeated page views apart by the time of the view', async () => {
    const page = await editorPage();
    // The sticky bar may show on every page view of a visit (docs/contract/caps.md's default cap is once per
    // session), so that turning it off changes a page viewed twice, twice.
    const config = JSON.parse(STOREFRONT);
    config.rules.find((r) => r.id === 'free-shipping-bar').cap = { per_session: 100 };
    await setConfig(page, JSON.stringify(config, null, 2));
    await settled(page);
    const ids = await ruleIds(page);
    await page.locator('#replay-panel > summary').click();
    await page.locator('#replay-body [data-act=sample]').click();
    await page.locator('#replay-body tr[data-rule]').first().waitFor({ timeout: 20_000 });
    // Compared from the config with that cap, not the file the page opened with.
    await page.locator('#replay-body [data-act=rebase]').click();
    await settled(page);
    // The sticky bar off: a shopper who views a collection twice loses it on both views.
    await (await card(page, ids.indexOf('free-shipping-bar'))).locator('.rc-head input[type=checkbox]').uncheck();
    await settled(page);
    await page.locator('#replay-body tr.changed[data-rule="free-shipping-bar"]').waitFor({ timeout: 20_000 });
    await page.locator('#replay-body [data-act=diff]').click();
    const items = page.locator('#replay-body .rp-change-list > li');
    await items.first().waitFor({ timeout: 20_000 });
    const listed = await items.evaluateAll((els) => els.map((el) => ({
      key: `${el.querySelector('code').textContent} ${el.querySelector('.muted').textContent}`,
      text: el.textContent.replace(/\s+/g, ' ').trim(),
    })));
    const byKey = new Map();
    for (const x of listed) byKey.set(x.key, [...(byKey.get(x.key) ?? []), x.text]);
    const repeated = [...byKey.values()].filter((texts) => texts.length > 1);
    assert.ok(repeated.length >= 1, 'the sample sessions view a page twice among the changes listed');
    for (const texts of repeated) assert.equal(new Set(texts).size, texts.length, `two views read the same: ${texts[0]}`);
    for (const x of listed) assert.match(x.text, /viewed at \d\d:\d\d:\d\d UTC, (first page|[\d.]+ (s|min)\b)/, x.text);
    await page.close();
  });

  test('15. phone: the page scrolls, not the rule list, and the visitor\'s verdict stays in view while a card is edited', async () => {
    const page = await editorPage('', { width: 390, height: 844 });
    await setState(page, { url: '/products/linen-shirt', intent: 82, idle: 9000 });
    // A swipe over the rule list moves the page; the list has no scroll of its own.
    const list = page.locator('#rules-view .rule-cards');
    const box = await list.boundingBox();
    await page.mouse.move(box.x + box.width / 2, Math.min(box.y + 200, 700));
    await page.mouse.wheel(0, 600);
    await page.waitForFunction(() => window.scrollY > 0);
    const scrolled = await page.evaluate(() => {
      const inner = document.querySelector('#rules-view .rules-scroll');
      return { page: window.scrollY, inner: inner.scrollTop, innerScrolls: inner.scrollHeight > inner.clientHeight + 1 };
    });
    assert.ok(scrolled.page >= 500, `the page scrolled ${scrolled.page} px`);
    assert.equal(scrolled.inner, 0);
    assert.equal(scrolled.innerScrolls, false, 'the rule list does not scroll inside the page');

    // Editing sizing-help's card far down the page: the verdict stays at the bottom of the screen.
    const index = (await ruleIds(page)).indexOf('sizing-help');
    const sizing = await card(page, index);
    const bar = page.locator('#verdict-bar');
    const onScreen = async () => {
      const b = await bar.boundingBox();
      return b && b.y >= 0 && b.y + b.height <= 844 + 0.5;
    };
    await sizing.locator('textarea').click();
    await page.keyboard.press('End');
    await page.keyboard.type(' Now.');
    await settled(page);
    assert.ok(await onScreen(), 'the verdict is on screen while the message is typed');
    assert.match(await bar.innerText(), /Chat bubble · sizing-help[\s\S]*\/products\/linen-shirt · intent 82 · idle 9\.0 s/);
    const cardBox = await sizing.boundingBox();
    const barBox = await bar.boundingBox();
    assert.ok(cardBox.y < barBox.y, 'the card being edited is above the bar, on screen');

    // Switched off in the card: the verdict follows at once, still on screen.
    await sizing.locator('.rc-head input[type=checkbox]').uncheck();
    await settled(page);
    assert.ok(await onScreen());
    assert.doesNotMatch(await bar.innerText(), /sizing-help/);
    assert.equal(await bar.locator('#vb-verdict').textContent(), await page.locator('#preview-badge').textContent() || 'No nudge');

    // "See it" goes to the storefront.
    await bar.getByRole('button', { name: 'See it' }).click();
    await page.waitForFunction(() => Math.abs(document.querySelector('.preview-panel').getBoundingClientRect().top) < 40);

    // Wide: the preview is beside the editor, no bar.
    await page.setViewportSize({ width: 1440, height: 1000 });
    assert.ok(await bar.isHidden());
    await page.close();
  });

  test('16. at 390 px every tap target is at least 24 by 24 px, in every view', async () => {
    const page = await editorPage('', { width: 390, height: 844 });
    /** The visible controls smaller than 24 px either way, described. */
    const small = () => page.evaluate(() => {
      const selector = '.cm-fold-marker, a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=tab], [role=switch], [tabindex]:not([tabindex="-1"])';
      const out = [];
      let n = 0;
      for (const el of document.querySelectorAll(selector)) {
        if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
        const r = el.getBoundingClientRect();
        if (r.width <= 1 || r.height <= 1) continue; // visually hidden (a skip link until focused)
        n += 1;
        if (r.width < 24 || r.height < 24) {
          const name = el.getAttribute('aria-label') || el.textContent.trim().slice(0, 24) || el.getAttribute('placeholder') || '';
          out.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${name}" ${Math.round(r.width)}x${Math.round(r.height)}`);
        }
      }
      return { n, out };
    });
    const check = async (view) => {
      const { n, out } = await small();
      assert.ok(n > 20, `${view}: ${n} controls measured`);
      assert.deepEqual(out, [], `${view}: ${out.length} of ${n} controls are smaller than 24 px`);
    };

    // The rules, with the Scenarios and Replay panels at work and a toast with its action.
    await openScenarios(page);
    await saveVisitor(page, 'a phone visitor');
    await page.locator('#replay-panel > summary').click();
    await page.locator('#replay-body [data-act=sample]').click();
    await page.locator('#replay-body tr[data-rule]').first().waitFor({ timeout: 20_000 });
    await (await card(page, 8)).getByRole('button', { name: /^Delete / }).click();
    await page.locator('#toast-action').waitFor();
    await check('rules');
    // Errors on the cards (did-you-mean buttons, Show in JSON) and a notice.
    await setConfig(page, STOREFRONT.replace('"cta": "Start chat"', '"cta": ""').replace('"/products/**"', '"products/**"'));
    await page.locator('#file-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not json') });
    await page.locator('#notice').waitFor();
    await check('rule errors');
    // Engineer details, with the API response open.
    await page.locator('#eng-btn').click();
    await page.locator('details.response > summary').click();
    await check('engineer details');
    // The JSON view (with an error marked) and a syntax error's banner in the rules view.
    await showJson(page);
    await settled(page);
    await check('JSON view');
    await setConfig(page, STOREFRONT.replace('"version": 1,', '"version": 1'));
    await page.evaluate(() => window.nudgePlayground.setView('rules'));
    await settled(page);
    await check('syntax error');
    await page.close();
  });

  for (const width of [1440, 390]) {
    test(`17. axe-core at ${width} px: no serious or critical violation in the rules, JSON view, error state and engineer details`, async () => {
      const page = await editorPage('', { width, height: 900 });
      await page.addScriptTag({ path: AXE });
      /** Serious and critical violations, target size (WCAG 2.2, off by default) included. */
      const violations = () => page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'], rules: { 'target-size': { enabled: true } } });
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')} ${n.any[0]?.message ?? ''}`).join(' | ')}`);
      });
      const views = {
        rules: async () => {},
        'JSON view': async () => {
          await showJson(page);
          await settled(page);
        },
        'JSON view with errors': async () => {
          await setConfig(page, STOREFRONT.replace('"cta": "Start chat"', '"cta": ""').replace('"version": 1,', '"version": 1, "quiet_zone": [],'));
        },
        'rules with errors (the preview of the last valid config)': async () => {
          await page.evaluate(() => window.nudgePlayground.setView('rules'));
          await settled(page);
        },
        'engineer details': async () => {
          await setConfig(page, STOREFRONT);
          await page.locator('#eng-btn').click();
          await page.locator('details.response > summary').click();
          await settled(page);
        },
        'engineer details, JSON view': async () => {
          await showJson(page);
          await settled(page);
        },
      };
      for (const [view, go] of Object.entries(views)) {
        await go();
        assert.deepEqual(await violations(), [], view);
      }
      await page.close();
    });
  }

  // "One store for the page": app.js kept a second, mutable state object beside the store (the
  // text, the share link, the example config, the Undo on offer, the marks, the failures' key).
  test('18. one store: the text on screen, the share link, the example config and the Undo on offer are the store\'s state', async () => {
    const page = await editorPage();
    const state = () => page.evaluate(() => {
      const p = window.nudgePlayground;
      const s = p.store;
      return { text: s.text === p.editor.value, example: s.exampleText, hash: s.hash, location: location.hash, undoAfter: s.undoAfter, second: 'app' in p };
    });
    let s = await state();
    assert.equal(s.second, false, 'no second state object');
    assert.equal(s.text, true);
    assert.equal(s.example, STOREFRONT);
    const sizing = await card(page, (await ruleIds(page)).indexOf('sizing-help'));
    await sizing.getByRole('button', { name: 'Delete sizing-help' }).click();
    await settled(page);
    s = await state();
    assert.equal(s.text, true);
    assert.equal(s.undoAfter, await configText(page), 'the Undo on offer is the store\'s');
    await page.waitForFunction(() => /[#&]c=/.test(location.hash));
    s = await state();
    assert.equal(s.hash, s.location, 'the share link written is the store\'s');
    await clickUndo(page);
    s = await state();
    assert.equal(s.undoAfter, null);
    assert.equal(await configText(page), STOREFRONT);
    await page.close();
  });
});
