// The slim module (pkg/wasm/slim/, docs/contract/storefront.md) normalizes Unicode with the platform's
// `String.prototype.normalize('NFKC')` instead of ICU4X's tables (src/normalize/unicode.rs), which
// the issue allows where both agree on the vectors. This proves it, in Node and in headless
// Chromium: every page URL of tests/vectors/normalize.json gives the slim module the vector's
// path (or its error, as the first module words it), and every pattern config of
// tests/vectors/config.json compiles alike. Over every code point, a path that differs between
// the two can only hold a character the platform's Unicode does not know yet (`\p{Cn}` there):
// NFKC is stable for assigned characters, so the two can differ only where one Unicode version
// is older than the other. The lowercase is the platform's `toLowerCase()` there too (Rust's
// tables in the first module), checked the same way.
//
//   node --test pkg/test/slim-nfkc.test.mjs      (after scripts/build-wasm.sh)
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import { chromium } from 'playwright-core';

import * as full from '../wasm/nudge_rules.js';
import * as slim from '../wasm/slim/nudge_rules.js';
import { serve } from '../../www/test/server.mjs';
import { readRepoFile } from './load.mjs';

const wasm = (path) => {
  const url = new URL(path, import.meta.url);
  assert.ok(existsSync(url), `${url.pathname} is missing: build it with \`make wasm\``);
  return readFileSync(url);
};
full.initSync({ module: wasm('../wasm/nudge_rules_bg.wasm') });
slim.initSync({ module: wasm('../wasm/slim/nudge_rules_bg.wasm') });

const NORMALIZE = JSON.parse(readRepoFile('tests/vectors/normalize.json')).cases;
const CONFIGS = JSON.parse(readRepoFile('tests/vectors/config.json')).cases;

/**
 * What a module makes of the vectors, as plain data; runs in Node and, as text, in Chromium (it
 * names nothing outside its arguments).
 */
function readVectors(Engine, normalize, configs) {
  const rule = { id: 'r', nudge: { type: 'toast', message: 'm', cta: 'c' }, when: {} };
  const engines = new Map();
  const engineFor = (caseSensitive) => {
    if (!engines.has(caseSensitive)) engines.set(caseSensitive, new Engine({ version: 1, case_sensitive: caseSensitive, rules: [rule] }));
    return engines.get(caseSensitive);
  };
  const paths = normalize.map((c) => {
    try {
      return { path: engineFor(c.case_sensitive === true).decide({ intent_score: 0, page_url: c.input }).path };
    } catch (e) {
      // The slim module's errors carry codes, not message texts (docs/DECISIONS.md, docs/contract/storefront.md).
      return { error: `${e.kind} ${JSON.stringify(e.diagnostics.map((d) => [d.severity, d.code, d.path]))}` };
    }
  });
  const compiled = configs.map((c) => {
    try {
      const engine = new Engine(c.config ?? c.config_text);
      return { ok: true, path: engine.decide({ intent_score: 100, page_url: '/caf\u00e9/\uFF21', idle_ms: 86_400_000 }).rule_id ?? null };
    } catch (e) {
      // The slim module words config diagnostics without "did you mean" and line/column
      // (src/json/mod.rs, findings.rs): what is refused, and where, is compared.
      return { ok: false, kind: e.kind, diagnostics: JSON.stringify(e.diagnostics.map((d) => [d.severity, d.code, d.path])) };
    }
  });
  return { paths, compiled };
}

test('the platform NFKC gives the vectors\' paths in Node, as the first module (ICU4X) does', () => {
  const a = readVectors(full.NudgeEngine, NORMALIZE, CONFIGS);
  const b = readVectors(slim.NudgeEngine, NORMALIZE, CONFIGS);
  let nonAscii = 0;
  NORMALIZE.forEach((c, i) => {
    assert.deepEqual(b.paths[i], a.paths[i], `${c.name}: ${JSON.stringify(c.input)}`);
    if ('expect' in c) assert.equal(b.paths[i].path, c.expect, c.name);
    else assert.ok(b.paths[i].error, `${c.name}: no error`);
    if (/[^\x00-\x7f]|%[89a-f]/i.test(c.input)) nonAscii++;
  });
  assert.ok(nonAscii >= 20, `only ${nonAscii} vectors with non-ASCII text`);
  CONFIGS.forEach((c, i) => assert.deepEqual(b.compiled[i], a.compiled[i], c.name));
});

test('over every code point, NFKC and lowercase differ only on characters the platform does not know', () => {
  const rule = { id: 'r', nudge: { type: 'toast', message: 'm', cta: 'c' }, when: {} };
  const config = { version: 1, rules: [rule] }; // lowercased: NFKC and the lowercase both
  const a = new full.NudgeEngine(config);
  const b = new slim.NudgeEngine(config);
  const differing = [];
  for (let cp = 0xa0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    const same = (c) => c.normalize('NFKC') === c && c.toLowerCase() === c;
    if (same(ch)) continue; // unchanged by the platform: cheap first filter
    const state = { intent_score: 0, page_url: `/x${encodeURIComponent(ch)}` };
    const read = (engine) => {
      try {
        return engine.decide(state).path;
      } catch (e) {
        return `error ${e.kind} ${JSON.stringify(e.diagnostics.map((d) => [d.code, d.path]))}`;
      }
    };
    if (read(a) !== read(b)) differing.push(cp);
  }
  // Characters the platform knows and leaves alone could still be changed by ICU4X or Rust's
  // tables: every other assigned code point is compared too (those the platform does not know,
  // `\p{Cn}`, and private-use ones, which no Unicode version maps, are not).
  for (let cp = 0xa0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (ch.normalize('NFKC') !== ch || ch.toLowerCase() !== ch || /[\p{Cn}\p{Co}]/u.test(ch)) continue;
    const state = { intent_score: 0, page_url: `/x${encodeURIComponent(ch)}` };
    const read = (engine) => {
      try {
        return engine.decide(state).path;
      } catch (e) {
        return `error ${e.kind} ${JSON.stringify(e.diagnostics.map((d) => [d.code, d.path]))}`;
      }
    };
    if (read(a) !== read(b)) differing.push(cp);
  }
  const known = differing.filter((cp) => !/\p{Cn}/u.test(String.fromCodePoint(cp)));
  assert.deepEqual(known.map((cp) => `U+${cp.toString(16).toUpperCase()}`), [], 'assigned characters normalized differently');
  // For the record: how many characters are new to the platform (Node's Unicode is older).
  if (differing.length > 0) console.log(`# ${differing.length} code points differ, all unassigned in Node's Unicode ${process.versions.unicode ?? process.version}`);
});

test('the platform NFKC gives the vectors\' paths in Chromium, as in Node', async () => {
  const files = await serve(undefined, 0);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${files.url}/pkg/README.md`);
    const inBrowser = await page.evaluate(async ({ source, normalize, configs }) => {
      const m = await import('/pkg/wasm/slim/nudge_rules.js');
      await m.default();
      // eslint-disable-next-line no-new-func
      const read = new Function(`return (${source})`)();
      return read(m.NudgeEngine, normalize, configs);
    }, { source: readVectors.toString(), normalize: NORMALIZE, configs: CONFIGS });
    const inNode = readVectors(full.NudgeEngine, NORMALIZE, CONFIGS);
    NORMALIZE.forEach((c, i) => assert.deepEqual(inBrowser.paths[i], inNode.paths[i], `${c.name}: ${JSON.stringify(c.input)}`));
    CONFIGS.forEach((c, i) => assert.deepEqual(inBrowser.compiled[i], inNode.compiled[i], c.name));
  } finally {
    await browser.close();
    await files.close();
  }
});
