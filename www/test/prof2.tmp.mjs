import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, freshPage, launch, open, setConfig } from './helpers.mjs';
const env = await launch({ width: 1440, height: 1000 });
const page = await freshPage(env);
await open(page, env.server);
const rules = [];
for (let i = 0; i < 1000; i++) rules.push({ id: `r${i}`, nudge: { type: 'toast', message: `Message ${i}`, cta: 'Go' }, when: { min_intent_score: 101, pages: [`/c${i}/**`] }, colour: 'red' });
await page.evaluate((v) => window.nudgePlayground.setView(v), 'rules');
await setConfig(page, JSON.stringify({ version: 1, rules }));
await page.waitForTimeout(500);
const times = [];
for (let k = 0; k < 8; k++) {
  times.push(await page.evaluate(() => {
    const re = window.nudgePlayground.rulesEditor;
    re.extrasGen += 1; re.ruleKeys = []; re.parsedText = null;
    for (const s of document.querySelectorAll('.rule-card-slot')) s.card = null;
    const t0 = performance.now(); re.refresh(); void document.body.offsetHeight; return Math.round(performance.now() - t0);
  }));
  await page.waitForTimeout(100);
}
console.log(times.join(' '), 'cards built:', await page.locator('.rule-card-slot .rc-id').count());
await env.close();
