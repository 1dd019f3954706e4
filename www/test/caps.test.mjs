// The editor's half of issue 31 (docs/contract/caps.md): a rule card sets how often a nudge may show, the pause
// after a visitor closes it, the exit moment, the button's link and the control group, in words;
// the site settings set the nudges a visit may have; the visitor simulator has exit intent, a
// visitor id and earlier nudges; the Why panel says when a rule is capped or the visitor is held
// out. Every setting goes into the JSON through the cards' edit path (one undo history) and
// leaves the JSON at its default.
//
//   node --test www/test/caps.test.mjs
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT, SHOTS, configText, freshPage, launch, open, setConfig, settled } from './helpers.mjs';

const STOREFRONT = readFileSync(path.join(ROOT, 'examples/storefront.json'), 'utf8');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** Two rules on product pages: an exit modal for visitors about to leave, then a chat bubble. */
const EXIT_CONFIG = `{
  "version": 1,
  "rules": [
    {
      "id": "leave-offer",
      "nudge": { "type": "exit_modal", "message": "Before you go: 10% off with STAY10.", "cta": "Get 10% off" },
      "when": { "pages": ["/products/**"], "exit_intent": true }
    },
    {
      "id": "sizing-help",
      "nudge": { "type": "chat_bubble", "message": "Not sure about the fit? Ask a stylist.", "cta": "Start chat" },
      "when": { "min_intent_score": 60, "pages": ["/products/**"] }
    }
  ]
}
`;

/** docs/contract/caps.md's bucket: SHA-256 of RULE_ID:VISITOR_ID, first 8 bytes big-endian, modulo 10,000. */
function bucket(ruleId, visitorId) {
  return Number(createHash('sha256').update(`${ruleId}:${visitorId}`).digest().readBigUInt64BE(0) % 10_000n);
}

/** The first visitor id `vis_t0`, `vis_t1`, ... whose bucket for `ruleId` is (or is not) held out at `percent`. */
function visitorFor(ruleId, percent, heldOut) {
  for (let i = 0; ; i++) {
    const id = `vis_t${i}`;
    if ((bucket(ruleId, id) < percent * 100) === heldOut) return id;
  }
}

let env;

before(async () => {
  env = await launch({ width: 1440, height: 1000 });
});

after(async () => {
  await env?.close();
});

async function editorPage(viewport = { width: 1440, height: 1000 }) {
  const page = await freshPage(env);
  await page.setViewportSize(viewport);
  await open(page, env.server);
  return page;
}

/** The config the editor holds, parsed. */
async function config(page) {
  return JSON.parse(await configText(page));
}

/** The card of rule `index` (0-based), built and in view. */
async function card(page, index) {
  await page.evaluate((i) => window.nudgePlayground.rulesEditor.cards.element(i)?.scrollIntoView({ block: 'start' }), index);
  return page.locator(`.rule-card-slot[data-index="${index}"]`);
}

/** Opens a card's docs/contract/caps.md section (folded while every setting is at its default). */
async function unfold(c) {
  if (!(await c.locator('details.rc-more').evaluate((el) => el.open))) await c.locator('details.rc-more > summary').click();
}

/** Types `value` into a card control (as a person: `fill` fires input) and waits for the engine. */
async function fill(locator, value) {
  await locator.fill(String(value));
  await settled(locator.page());
}

/** The Why panel's card of rule `id`. */
function whyCard(page, id) {
  return page.locator(`#explain-rules [data-rule="${id}"]`);
}

describe('caps, exit intent, CTA link and control group on the rule card (issue 31)', () => {
  test('each new card field writes the config JSON, and a default leaves it', async () => {
    const page = await editorPage();
    const c = await card(page, 0);
    const perSession = c.locator('input[data-field="per_session"]');
    const cooldown = c.locator('input[data-field="cooldown"]');
    const unit = c.locator('[data-field="cooldown"] select');
    const exit = c.locator('select[data-field="exit_intent"]');
    const ctaUrl = c.locator('input[data-field="cta_url"]');
    const holdout = c.locator('input[data-field="holdout"]');

    // Nothing set: the section is folded and says the defaults; the JSON has none of the fields.
    assert.equal(await c.locator('details.rc-more').evaluate((el) => el.open), false);
    assert.equal(await c.locator('.rc-more-summary').innerText(), 'once per visit, any time, no link, no control group');
    await unfold(c);
    assert.equal(await perSession.inputValue(), '1');
    assert.equal(await perSession.getAttribute('aria-valuetext'), 'Show at most once per visit');
    assert.match(await c.locator('[data-field="per_session"] .inline-edit').innerText(), /^Show at most\s+time per visit$/);
    assert.equal(await exit.inputValue(), 'any');
    let rule = (await config(page)).rules[0];
    assert.equal(rule.cap, undefined);
    assert.equal(rule.holdout_percent, undefined);

    // At most 3 times per visit, then back to once: `cap` goes again.
    await fill(perSession, 3);
    assert.deepEqual((await config(page)).rules[0].cap, { per_session: 3 });
    assert.equal(await perSession.getAttribute('aria-valuetext'), 'Show at most 3 times per visit');
    assert.match(await c.locator('[data-field="per_session"] .inline-edit').innerText(), /times per visit/);
    await fill(perSession, 1);
    assert.equal((await config(page)).rules[0].cap, undefined);
    // Folded by hand, it says what is set.
    await fill(perSession, 3);
    await c.locator('details.rc-more > summary').click();
    assert.equal(await c.locator('.rc-more-summary').innerText(), 'at most 3 times per visit');
    await unfold(c);
    await fill(perSession, 1);

    // Not again for 7 days after a visitor closes it; in hours; off.
    await fill(cooldown, 7);
    assert.deepEqual((await config(page)).rules[0].cap, { cooldown_ms: 7 * 86_400_000 });
    assert.equal(await cooldown.getAttribute('aria-valuetext'), 'Not again for 7 days after a visitor closes it');
    assert.equal(await unit.inputValue(), 'days');
    await unit.selectOption('hours');
    await settled(page);
    assert.deepEqual((await config(page)).rules[0].cap, { cooldown_ms: 7 * 3_600_000 });
    await fill(perSession, 2);
    assert.deepEqual((await config(page)).rules[0].cap, { cooldown_ms: 7 * 3_600_000, per_session: 2 });
    await fill(cooldown, 0);
    assert.deepEqual((await config(page)).rules[0].cap, { per_session: 2 });
    await fill(perSession, 1);
    assert.equal((await config(page)).rules[0].cap, undefined);

    // Only when about to leave, never then, any time.
    await exit.selectOption('only');
    await settled(page);
    assert.equal((await config(page)).rules[0].when.exit_intent, true);
    await exit.selectOption('never');
    await settled(page);
    assert.equal((await config(page)).rules[0].when.exit_intent, false);
    await exit.selectOption('any');
    await settled(page);
    assert.equal('exit_intent' in (await config(page)).rules[0].when, false);

    // A link that would run a script: written (the JSON is the merchant's), refused by the engine
    // under the field in words, the engine's text in the engineer details.
    await fill(ctaUrl, 'javascript:alert(1)');
    assert.equal((await config(page)).rules[0].nudge.cta_url, 'javascript:alert(1)');
    const error = c.locator('[data-field="cta_url"] .card-diag[data-code="invalid_cta_url"]');
    await error.waitFor();
    assert.match(await error.innerText(), /“javascript:” link is not allowed/);
    assert.equal(await ctaUrl.getAttribute('aria-invalid'), 'true');
    await fill(ctaUrl, 'http://shop.example/sale');
    assert.match(await error.innerText(), /not secure: write “https:\/\/”/);
    await fill(ctaUrl, '/collections/sale');
    assert.equal((await config(page)).rules[0].nudge.cta_url, '/collections/sale');
    assert.equal(await error.count(), 0);
    assert.equal(await ctaUrl.getAttribute('aria-invalid'), null);
    await fill(ctaUrl, '');
    assert.equal('cta_url' in (await config(page)).rules[0].nudge, false);

    // Keep 10 % of visitors as a control group; 0 removes it; 60 is refused in words.
    await fill(holdout, 10);
    assert.equal((await config(page)).rules[0].holdout_percent, 10);
    assert.equal(await holdout.getAttribute('aria-valuetext'), 'Keep 10 % of visitors as a control group');
    await fill(holdout, 60);
    const tooMany = c.locator('[data-field="holdout"] .card-diag[data-code="out_of_range"]');
    await tooMany.waitFor();
    assert.match(await tooMany.innerText(), /whole percentage from 0 to 50, not 60/);
    await fill(holdout, 0);
    assert.equal('holdout_percent' in (await config(page)).rules[0], false);

    // At most 2 nudges per visit, all rules together: a site setting, written before the rules.
    const max = page.locator('#max-nudges');
    await max.scrollIntoViewIfNeeded();
    await fill(max, 2);
    assert.equal((await config(page)).max_nudges_per_session, 2);
    const text = await configText(page);
    assert.ok(text.indexOf('"max_nudges_per_session"') < text.indexOf('"rules"'), text.slice(0, 300));
    assert.match(await page.locator('[data-field="max_nudges_per_session"]').innerText(), /At most 2 nudges per visit/);
    await fill(max, 0);
    const maxError = page.locator('.rules-settings .card-diag[data-code="out_of_range"]');
    await maxError.waitFor();
    assert.match(await maxError.innerText(), /from 1 to 100/);
    await fill(max, '');
    assert.equal('max_nudges_per_session' in (await config(page)), false);

    // One undo history: Ctrl+Z in the card takes the last edit back, the field follows.
    await fill(holdout, 20);
    await holdout.press('Tab');
    await page.keyboard.press('Control+z');
    await settled(page);
    assert.equal('holdout_percent' in (await config(page)).rules[0], false);
    assert.equal(await holdout.inputValue(), '0');
    // With everything back at its default, the text is the example's again.
    assert.equal(await configText(page), STOREFRONT);
    await page.close();
  });

  test('the simulator’s exit intent makes an exit-intent rule fire, and the request carries it', async () => {
    const page = await editorPage();
    await setConfig(page, EXIT_CONFIG);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'fired');
    const exitCond = whyCard(page, 'leave-offer').locator('[data-condition="exit_intent"]');
    assert.match(await exitCond.innerText(), /Shows only when the visitor is about to leave/);
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'chat_bubble');

    await page.locator('#exit-intent').check();
    await settled(page);
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'exit_modal');
    assert.equal(await whyCard(page, 'leave-offer').getAttribute('data-verdict'), 'fired');
    assert.match(await exitCond.innerText(), /about to leave, the moment this rule waits for/);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'shadowed');
    const request = JSON.parse(await page.locator('#request-body').innerText());
    assert.equal(request.session_state.exit_intent, true);
    assert.match(await page.locator('#vb-visitor').innerText(), /about to leave/);

    // "Never when about to leave" on the chat bubble, set on its card: it stops too.
    await page.locator('#exit-intent').uncheck();
    await settled(page);
    const c = await card(page, 1);
    await unfold(c);
    await c.locator('select[data-field="exit_intent"]').selectOption('never');
    await settled(page);
    assert.equal((await config(page)).rules[1].when.exit_intent, false);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'fired');
    await page.locator('#exit-intent').check();
    await settled(page);
    assert.equal(await whyCard(page, 'leave-offer').getAttribute('data-verdict'), 'fired');
    // The visit's exit intent is in the share link, and a page opened from it has it.
    await page.evaluate(() => window.dispatchEvent(new Event('pagehide')));
    const hash = new URL(page.url()).hash;
    assert.match(hash, /[#&]x=1(&|$)/);
    const again = await freshPage(env);
    await open(again, env.server, hash);
    assert.equal(await again.locator('#exit-intent').isChecked(), true);
    assert.equal(await again.locator('#storefront').getAttribute('data-nudge'), 'exit_modal');
    await again.close();
    await page.close();
  });

  test('an earlier nudge caps the rule, and the Why panel says so in words', async () => {
    const page = await editorPage();
    await setConfig(page, EXIT_CONFIG);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'fired');

    // "sizing-help shown earlier this visit": at most once per visit, so capped.
    await page.locator('#history-rule').selectOption('sizing-help');
    await page.locator('#history-kind').selectOption('shown');
    await page.locator('#history-add').click();
    await settled(page);
    const why = whyCard(page, 'sizing-help');
    assert.equal(await why.getAttribute('data-capped'), 'true');
    assert.equal(await why.locator('.verdict').innerText(), 'Capped');
    assert.match(await why.locator('.rule-note').innerText(), /it is capped: Already fired once this visit \(at most once per visit\)/);
    assert.match(await why.locator('[data-condition="cap"]').innerText(), /Already fired once this visit/);
    assert.match(await page.locator('#explain-facts').innerText(), /nothing fires; sizing-help would, but it is capped/);
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'none');
    assert.equal(await page.locator('#preview-badge').innerText(), 'No nudge');
    assert.match(await page.locator('#history-list').innerText(), /sizing-help shown earlier this visit/);
    const request = JSON.parse(await page.locator('#request-body').innerText());
    assert.deepEqual(request.session_state.history, [{ rule_id: 'sizing-help', ms_ago: 60_000, this_session: true, outcome: 'shown' }]);

    // Twice per visit on its card: it fires again.
    const c = await card(page, 1);
    await unfold(c);
    await fill(c.locator('input[data-field="per_session"]'), 2);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'fired');
    await fill(c.locator('input[data-field="per_session"]'), 1);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-capped'), 'true');

    // Removed: it fires again.
    await page.locator('#history-list button').click();
    await settled(page);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'fired');
    assert.equal(await page.locator('#history-list li').count(), 0);

    // Closed in a visit 2 days ago, with a 5-day pause after a close.
    await fill(c.locator('input[data-field="cooldown"]'), 5);
    await page.locator('#history-rule').selectOption('sizing-help');
    await page.locator('#history-kind').selectOption('closed-days');
    await page.locator('#history-days').fill('2');
    await page.locator('#history-add').click();
    await settled(page);
    assert.match(await page.locator('#history-list').innerText(), /sizing-help closed in a visit 2 days ago/);
    assert.match(await whyCard(page, 'sizing-help').locator('[data-condition="cap"]').innerText(),
      /Closed by this visitor 2 days ago: not again for 3 days more/);
    await page.locator('#history-list button').click();
    await settled(page);

    // At most 1 nudge per visit, all rules: an earlier leave-offer caps sizing-help too.
    await page.locator('#history-rule').selectOption('leave-offer');
    await page.locator('#history-kind').selectOption('shown');
    await page.locator('#history-add').click();
    await settled(page);
    assert.equal(await whyCard(page, 'sizing-help').getAttribute('data-verdict'), 'fired');
    await fill(page.locator('#max-nudges'), 1);
    const capped = whyCard(page, 'sizing-help');
    assert.equal(await capped.getAttribute('data-capped'), 'true');
    assert.match(await capped.locator('[data-condition="max_nudges_per_session"]').innerText(), /This visit has had 1 nudge, the most a visit may have \(1\)/);

    // The earlier nudges and the visitor id are in the share link; a page opened from it has them.
    await fill(page.locator('#visitor-id'), 'vis_shared');
    await page.evaluate(() => window.dispatchEvent(new Event('pagehide')));
    const hash = new URL(page.url()).hash;
    assert.match(hash, /[#&]v=vis_shared(&|$)/);
    assert.match(hash, /[#&]h=/);
    const again = await freshPage(env);
    await open(again, env.server, hash);
    assert.equal(await again.locator('#visitor-id').inputValue(), 'vis_shared');
    assert.match(await again.locator('#history-list').innerText(), /leave-offer shown earlier this visit/);
    assert.equal(await whyCard(again, 'sizing-help').getAttribute('data-capped'), 'true');
    await again.close();
    await page.close();
  });

  test('a visitor in the control group: no nudge, and the Why panel names the rule', async () => {
    const page = await editorPage();
    await setConfig(page, EXIT_CONFIG);
    const held = visitorFor('sizing-help', 50, true);
    const treated = visitorFor('sizing-help', 50, false);
    const c = await card(page, 1);
    await unfold(c);
    await fill(c.locator('input[data-field="holdout"]'), 50);
    assert.equal((await config(page)).rules[1].holdout_percent, 50);

    await fill(page.locator('#visitor-id'), held);
    const why = whyCard(page, 'sizing-help');
    assert.equal(await why.getAttribute('data-verdict'), 'held_out');
    assert.equal(await why.locator('.verdict').innerText(), 'Control group');
    assert.match(await why.locator('.rule-note').innerText(),
      new RegExp(`This visitor \\(${held}\\) is in the control group of rule sizing-help: no nudge is shown`));
    assert.match(await page.locator('#explain-facts').innerText(), /no nudge: this visitor is in the control group of sizing-help/);
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'none');
    assert.equal(await page.locator('#preview-badge').innerText(), 'Control group of sizing-help');
    assert.match(await page.locator('#preview-reason').innerText(), /control group/);

    await fill(page.locator('#visitor-id'), treated);
    assert.equal(await why.getAttribute('data-verdict'), 'fired');
    assert.equal(await page.locator('#storefront').getAttribute('data-nudge'), 'chat_bubble');

    // No visitor id: no one is held out. A bad one is refused, said at the field.
    await fill(page.locator('#visitor-id'), '');
    assert.equal(await why.getAttribute('data-verdict'), 'fired');
    assert.equal('visitor_id' in JSON.parse(await page.locator('#request-body').innerText()).session_state, false);
    await fill(page.locator('#visitor-id'), 'vis_a/b');
    assert.equal(await page.locator('#visitor-id').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#preview-badge').innerText(), 'Rejected');
    await fill(page.locator('#visitor-id'), held);
    assert.equal(await page.locator('#visitor-id').getAttribute('aria-invalid'), null);
    assert.equal(await why.getAttribute('data-verdict'), 'held_out');
    await page.close();
  });

  test('the new controls are reached with the keyboard, each with a label', async () => {
    const page = await editorPage();
    const c = await card(page, 0);
    // The section opens from the keyboard (its summary is in the tab order).
    await c.locator('details.rc-more > summary').focus();
    await page.keyboard.press('Enter');
    assert.equal(await c.locator('details.rc-more').evaluate((el) => el.open), true);
    const names = await c.locator('.rc-more :is(input, select)').evaluateAll((els) => els.map((el) => ({
      field: el.dataset.field ?? el.closest('[data-field]')?.dataset.field,
      name: el.getAttribute('aria-label') || (el.id && document.querySelector(`label[for="${el.id}"]`)?.textContent) || '',
      tabIndex: el.tabIndex,
    })));
    assert.equal(names.length, 6);
    for (const n of names) {
      assert.ok(n.name.trim().length > 3, `${n.field} has no label`);
      assert.ok(n.tabIndex >= 0, `${n.field} is out of the tab order`);
    }
    // Tab goes through them in reading order, and the keyboard sets them.
    const perSession = c.locator('input[data-field="per_session"]');
    await perSession.focus();
    const order = [];
    for (let i = 0; i < 5; i++) {
      order.push(await page.evaluate(() => {
        const el = document.activeElement;
        return el.dataset.field ?? el.closest('[data-field]')?.dataset.field;
      }));
      await page.keyboard.press('Tab');
    }
    assert.deepEqual(order, ['per_session', 'cooldown', 'cooldown', 'exit_intent', 'holdout']);
    await perSession.focus();
    await page.keyboard.press('ArrowUp');
    await settled(page);
    assert.deepEqual((await config(page)).rules[0].cap, { per_session: 2 });

    // The visitor's controls: Space toggles exit intent, Enter adds an earlier nudge.
    for (const id of ['#exit-intent', '#visitor-id', '#history-rule', '#history-kind', '#history-add']) {
      const name = await page.locator(id).evaluate((el) => el.getAttribute('aria-label') || el.labels?.[0]?.textContent || el.textContent);
      assert.ok(name.trim().length > 2, `${id} has no label`);
    }
    await page.locator('#exit-intent').focus();
    await page.keyboard.press('Space');
    await settled(page);
    assert.equal(await page.locator('#exit-intent').isChecked(), true);
    await page.locator('#history-add').focus();
    await page.keyboard.press('Enter');
    await settled(page);
    assert.equal(await page.locator('#history-list li').count(), 1);
    await page.locator('#history-list button').focus();
    await page.keyboard.press('Enter');
    await settled(page);
    assert.equal(await page.locator('#history-list li').count(), 0);
    await page.close();
  });

  for (const width of [1440, 390]) {
    test(`at ${width} px: no serious or critical axe-core violation, no sideways scroll; the card's screenshot`, async () => {
      // Tall enough at 1,440 px for the whole card in the rules column (it scrolls on its own).
      const page = await editorPage({ width, height: width === 1440 ? 1700 : 1000 });
      await setConfig(page, EXIT_CONFIG.replace('"when": { "min_intent_score": 60,', '"cap": { "cooldown_ms": 604800000 }, "holdout_percent": 10, "when": { "min_intent_score": 60,')
        .replace('"cta": "Start chat" }', '"cta": "Start chat", "cta_url": "/pages/size-guide" }'));
      await page.locator('#history-rule').selectOption('leave-offer');
      await page.locator('#history-add').click();
      await settled(page);
      await page.addScriptTag({ path: AXE });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'], rules: { 'target-size': { enabled: true } } });
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')} ${n.any[0]?.message ?? ''}`).join(' | ')}`);
      });
      assert.deepEqual(violations, []);
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(sideways <= 0, `${sideways} px of sideways scroll`);
      const c = await card(page, 1);
      // Set in the config: the section opened by itself.
      assert.equal(await c.locator('details.rc-more').evaluate((el) => el.open), true);
      const name = width === 1440 ? '17-caps-rule-card' : 'phone-caps-rule-card';
      // The card alone: the phone's verdict bar (fixed at the bottom) is left out of the picture.
      await page.addStyleTag({ content: '.verdict-bar { visibility: hidden !important; }' });
      await c.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled' });
      if (width === 1440) {
        // The visitor with an earlier nudge of sizing-help, and the Why panel saying it is capped.
        await page.locator('#history-rule').selectOption('sizing-help');
        await page.locator('#history-add').click();
        await settled(page);
        await page.locator('.session').evaluate((el) => {
          el.scrollIntoView({ block: 'start' });
          window.scrollBy(0, -(document.querySelector('.topbar')?.getBoundingClientRect().height ?? 0) - 8);
        });
        const top = await page.locator('.session').boundingBox();
        const bottom = await page.locator('.preview-panel').boundingBox();
        const why = await whyCard(page, 'sizing-help').boundingBox();
        const clip = { x: top.x, y: top.y, width: top.width, height: Math.max(bottom.y + bottom.height, why.y + why.height) - top.y };
        await page.screenshot({ path: path.join(SHOTS, '18-caps-visitor-why.png'), clip, animations: 'disabled' });
      }
      await page.close();
    });
  }
});
