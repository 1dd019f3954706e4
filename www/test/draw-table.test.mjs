// The editor's shell in Node, without a browser (issue 34): the store's reducer over replies of
// answers of one kind each (store.js), the identity it keeps for lists that did not change, and
// the draw table that redraws a view only when a slice it reads changed (draw-table.js).
//
//   node --test www/test/draw-table.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { drawTable } from '../src/draw-table.js';
import { initialState, needsMarks, reduce } from '../src/store.js';

const error = (path) => ({ severity: 'error', code: 'out_of_range', path, message: `${path} is out of range`, line: 3, column: 5 });
const compile = (valid, errors) => ({ kind: 'compile', compile: { valid, errors, gen: 1, hasEngine: true, compileMs: 1 } });
const reply = (text, ...answers) => ({ type: 'reply', text, reply: { seq: 1, answers } });

test('a reply\'s answers are applied in order, one case per kind', () => {
  let s = reduce(initialState, { type: 'text', text: 'A' });
  s = reduce(s, reply('A', compile(false, [error('rules[0].when.min_intent_score')]), { kind: 'noEngine', url: '/cart' }, { kind: 'limits', limits: { intent_score: 100 } }));
  assert.equal(s.valid, false);
  assert.equal(s.compiledText, 'A');
  assert.equal(s.errors.length, 1);
  assert.deepEqual(s.noEngine, { url: '/cart' });
  assert.deepEqual(s.limits, { intent_score: 100 });
  s = reduce(s, reply(undefined, { kind: 'failed', message: 'a bug' }));
  assert.deepEqual(s.failure, { fatal: false, message: 'a bug' });
  s = reduce(s, reply(undefined, { kind: 'fatal', message: 'no wasm' }));
  assert.deepEqual(s.failure, { fatal: true, message: 'no wasm' });
});

test('a compile with the same errors keeps the errors list, so nothing that reads it redraws', () => {
  const s1 = reduce(initialState, reply('A', compile(false, [error('rules[0].when.min_intent_score'), error('rules[1].when.min_intent_score')])));
  const s2 = reduce(s1, reply('A ', compile(false, [error('rules[0].when.min_intent_score'), error('rules[1].when.min_intent_score')])));
  assert.equal(s2.errors, s1.errors, 'the same list');
  assert.notEqual(s2.compiledText, s1.compiledText);
  const s3 = reduce(s2, reply('B', compile(false, [error('rules[0].when.min_intent_score')])));
  assert.notEqual(s3.errors, s2.errors, 'another list when an error went');
  const s4 = reduce(s3, reply('C', compile(true, [])));
  const s5 = reduce(s4, reply('D', compile(true, [])));
  assert.equal(s5.errors, s4.errors, 'no errors before and after: the same empty list');
  assert.equal(s5.warnings, s4.warnings);
  // Warnings of an analysis equal to the last ones keep their list too.
  const analysis = (warnings) => ({ kind: 'analysis', analysis: { gen: 1, warnings, summary: [], config: { version: 1, rules: [] } } });
  const w1 = reduce(s5, reply(undefined, analysis([{ ...error('rules[0]'), severity: 'warning' }])));
  const w2 = reduce(w1, reply(undefined, analysis([{ ...error('rules[0]'), severity: 'warning' }])));
  assert.equal(w2.warnings, w1.warnings);
  assert.notEqual(w2.config, w1.config, 'the config of each analysis is new');
});

test('the JSON view is marked again only when the problems changed or another text shows them', () => {
  let s = reduce(initialState, { type: 'text', text: 'A' });
  s = reduce(s, reply('A', compile(false, [error('rules[0]')])));
  assert.equal(needsMarks(s), true);
  s = reduce(s, { type: 'marked', text: 'A' });
  assert.equal(needsMarks(s), false);
  s = reduce(s, { type: 'text', text: 'A2' });
  assert.equal(needsMarks(s), false, 'a keystroke not compiled yet: the places belong to the old text');
  s = reduce(s, reply('A2', compile(false, [error('rules[0]')])));
  assert.equal(needsMarks(s), true, 'the same problems in another text');
  s = reduce(s, { type: 'marked', text: 'A2' });
  s = reduce(s, { type: 'text', text: 'ok' });
  s = reduce(s, reply('ok', compile(true, [])));
  assert.equal(needsMarks(s), true, 'the marks go');
  s = reduce(s, { type: 'marked', text: 'ok' });
  s = reduce(s, { type: 'text', text: 'ok2' });
  s = reduce(s, reply('ok2', compile(true, [])));
  assert.equal(needsMarks(s), false, 'no problems before and after: nothing to do');
});

test('the draw table draws a view when a slice it reads changed by identity, in the table\'s order', () => {
  const drawn = [];
  const views = [
    { name: 'errors', reads: (s) => [s.errors], draw: (s) => drawn.push(['errors', s.errors.length]) },
    { name: 'map', reads: (s) => [s.map], draw: (s) => drawn.push(['map', s.map.url]) },
    { name: 'errors and text', reads: (s) => [s.errors, s.compiledText], draw: () => drawn.push(['both']) },
  ];
  let state = initialState;
  const draw = drawTable(views, initialState);
  assert.deepEqual(draw(() => state), [], 'nothing drawn for the state before anything arrived');
  state = reduce(state, reply('A', compile(false, [error('rules[0]')])));
  assert.deepEqual(draw(() => state), ['errors', 'errors and text']);
  state = reduce(state, reply('A ', compile(false, [error('rules[0]')])));
  assert.deepEqual(draw(() => state), ['errors and text'], 'the same errors: only the view that reads the text');
  state = reduce(state, reply(undefined, { kind: 'map', map: { url: '/cart', path: '/cart', regions: [], quietZone: null, error: null } }));
  assert.deepEqual(draw(() => state), ['map']);
  assert.deepEqual(draw(() => state), [], 'nothing changed');
  assert.deepEqual(drawn, [['errors', 1], ['both'], ['both'], ['map', '/cart']]);
});

test('each view sees the state as it is at its turn (a view may dispatch while the table draws)', () => {
  let state = initialState;
  const seen = [];
  const views = [
    { name: 'first', reads: (s) => [s.compiledText], draw: () => { state = reduce(state, { type: 'hash', hash: '#x' }); } },
    { name: 'second', reads: (s) => [s.compiledText], draw: (s) => seen.push(s.hash) },
  ];
  const draw = drawTable(views, initialState);
  state = reduce(state, reply('A', compile(true, [])));
  draw(() => state);
  assert.deepEqual(seen, ['#x']);
});
