// The rule cards' text edits (www/src/config-edits.js) in Node, no browser: ConfigIndex keeps the
// JSON tree of a 1,000-rule config across scalar edits with lazily shifted offsets; after every
// edit, the offsets it gives must be those of a fresh parse of the edited text.
//
//   node --test www/test/config-edits.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { findNodeAtLocation, parseTree } from 'jsonc-parser';

import { ConfigIndex } from '../src/config-edits.js';
import { ROOT, bigConfig } from './helpers.mjs';

/** A small deterministic generator (LCG), so that a failure repeats. */
function generator(seed) {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
}

test('scalar edits keep every offset equal to a fresh parse (1,000 rules, 300 edits)', () => {
  let text = bigConfig(readFileSync(path.join(ROOT, 'examples/storefront.json'), 'utf8'), 1000);
  const index = new ConfigIndex();
  const rnd = generator(7);
  const someScalar = (i) => [
    ['rules', i, 'nudge', 'message'],
    ['rules', i, 'when', 'min_intent_score'],
    ['rules', i, 'when', 'pages', 0],
    ['rules', i, 'enabled'],
  ][rnd(4)];
  for (let step = 0; step < 300; step++) {
    const at = someScalar(9 + rnd(991)); // the catalog rules (the storefront's nine vary in shape)
    const value = at[3] === 'min_intent_score' ? rnd(101) : at[2] === 'enabled' ? undefined : `${'é'.repeat(rnd(30))}${step}`;
    if (value === undefined) {
      // No `enabled` in these rules: nothing to replace in place.
      assert.equal(index.replaceScalar(text, at, true), null);
      continue;
    }
    const edit = index.replaceScalar(text, at, value);
    assert.ok(edit, `no edit for ${at.join('.')}`);
    text = text.slice(0, edit.offset) + edit.content + text.slice(edit.offset + edit.length);
    assert.equal(index.text, text);
    if (step % 30 === 29) {
      const fresh = parseTree(text);
      for (let k = 0; k < 40; k++) {
        const probe = someScalar(rnd(1000));
        const want = findNodeAtLocation(fresh, probe);
        const got = want ? index.replaceScalar(text, probe, want.value) : null; // the same value: no change
        assert.deepEqual(got && { offset: got.offset, length: got.length }, want && { offset: want.offset, length: want.length }, probe.join('.'));
      }
    }
  }
  assert.equal(JSON.parse(text).rules.length, 1000);
});

test('a path that is not a scalar gives no edit', () => {
  const text = '{"rules": [{"id": "a", "when": {"pages": ["/x"]}}]}';
  const index = new ConfigIndex();
  assert.equal(index.replaceScalar(text, ['rules', 0, 'when'], 'x'), null);
  assert.equal(index.replaceScalar(text, ['rules', 3, 'id'], 'x'), null);
  assert.equal(index.replaceScalar(text, ['rules', 'id'], 'x'), null);
  assert.equal(index.replaceScalar('{"a": ', ['a'], 1), null);
  assert.deepEqual(index.replaceScalar(text, ['rules', 0, 'id'], 'bb'), { offset: 18, length: 3, content: '"bb"' });
});

test('a setting added then taken back to its default gives the text it had, in its layout', async () => {
  const { setAt } = await import('../src/config-edits.js');
  const { applyEdits } = await import('jsonc-parser');
  const original = readFileSync(path.join(ROOT, 'examples/storefront.json'), 'utf8');
  let text = original;
  const set = (at, value) => {
    text = applyEdits(text, setAt(text, at, value));
    return text;
  };
  // docs/contract/caps.md's fields, each added (one property, the rest of the text as it was) and removed.
  set(['rules', 0, 'cap', 'per_session'], 3);
  assert.match(text, /"pages": \["\/products\/\*\*", "\/collections\/\*\*"\]\n {6}\},\n {6}"cap": \{\n {8}"per_session": 3\n {6}\}/);
  set(['rules', 0, 'cap', 'cooldown_ms'], 604_800_000);
  assert.deepEqual(JSON.parse(text).rules[0].cap, { per_session: 3, cooldown_ms: 604_800_000 });
  set(['rules', 0, 'cap', 'per_session'], undefined);
  set(['rules', 0, 'cap'], undefined);
  set(['rules', 0, 'when', 'exit_intent'], true);
  set(['rules', 0, 'nudge', 'cta_url'], '/collections/sale');
  set(['rules', 0, 'holdout_percent'], 10);
  set(['max_nudges_per_session'], 2);
  assert.ok(text.indexOf('"max_nudges_per_session": 2') < text.indexOf('"rules"'));
  assert.equal(text.split('\n').length, original.split('\n').length + 4);
  for (const at of [['rules', 0, 'when', 'exit_intent'], ['rules', 0, 'nudge', 'cta_url'], ['rules', 0, 'holdout_percent'], ['max_nudges_per_session']]) set(at, undefined);
  assert.equal(text, original);
  // Removing what is not there (its parent missing too) is no edit; a one-line object stays on one line.
  assert.deepEqual(setAt('{"version": 1, "rules": [{"id": "a"}]}', ['rules', 0, 'when', 'exit_intent'], undefined), []);
  assert.equal(applyEdits('{"version": 1, "rules": [{"id": "a"}]}', setAt('{"version": 1, "rules": [{"id": "a"}]}', ['rules', 0, 'when', 'exit_intent'], true)),
    '{"version": 1, "rules": [{"id": "a", "when": {"exit_intent":true}}]}');
});
