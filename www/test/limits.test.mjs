// The editor's limits before the engine answers (www/src/limits.js, the values of docs/contract/config.md and docs/contract/preview.md)
// are the engine's own (`NudgeEngine.limits()`), which replace them once the worker has loaded:
// a limit changed in src/limits.rs without the editor fails here. Node only, no browser.
//
//   node --test www/test/limits.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { NudgeEngine } from '../../pkg/test/load.mjs';
import { SPEC_LIMITS } from '../src/limits.js';

test('the editor\'s limits before the engine answers are the engine\'s', () => {
  assert.deepEqual({ ...SPEC_LIMITS }, NudgeEngine.limits());
});

test('the cards\' idle words are the engine\'s (src/words.rs), on every kind of value', async () => {
  const { idleWords } = await import('../src/card-words.js');
  const values = [0, 1, 999, 1000, 1001, 7999, 8000, 8050, 12_345, 59_999, 60_000, 61_500, 90_000, 599_999,
    3_599_999, 3_600_000, 3_660_000, 86_399_999, 86_400_000];
  for (let ms = 0; ms < 200_000; ms += 997) values.push(ms);
  for (const ms of values) assert.equal(idleWords(ms), NudgeEngine.idleWords(ms), `${ms} ms`);
});
