// The editor's limits before the engine answers (www/src/limits.js, the values of SPEC 2 and 5)
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
