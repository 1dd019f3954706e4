// The Webhooks view's slice of the store (www/src/webhooks-store.js, issue 33) through the page's
// reducer (store.js), and the words of an attempt (webhooks-panel.js): pure functions, in Node.
//
//   node --test www/test/webhooks-store.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { initialState, reduce } from '../src/store.js';
import { attemptWords } from '../src/webhooks-panel.js';

const endpoint = (id, extra = {}) => ({
  id, url: `https://example.com/${id}`, event_types: ['nudge.shown'], description: null, status: 'enabled',
  created_at: '2026-11-27T06:00:00Z', updated_at: '2026-11-27T06:00:00Z', ...extra,
});
const attempt = (n, message, extra = {}) => ({
  id: `att_${n}`, message_id: message, event_type: 'webhook.test', attempt: 1, attempted_at: '2026-11-27T06:00:01Z',
  response_status: 200, error: null, duration_ms: 12, response_body: 'ok', next_attempt_at: null, ...extra,
});
const run = (...actions) => actions.reduce((s, a) => reduce(s, a), initialState);
const connected = { type: 'webhooksConnection', connected: true, host: '127.0.0.1:8080', mode: 'test' };

test('a connection starts empty; another connection forgets the endpoints and the secret on show', () => {
  const s = run(connected, { type: 'webhooksRequested' }, { type: 'webhooksLoaded', endpoints: [endpoint('we_a')] },
    { type: 'webhooksSecret', id: 'we_a', url: 'https://example.com/we_a', secret: 'whsec_x', why: 'created' });
  assert.equal(s.webhooks.status, 'ready');
  assert.equal(s.webhooks.secret.secret, 'whsec_x');
  const after = reduce(s, { type: 'webhooksConnection', connected: false, host: '', mode: null });
  assert.deepEqual({ ...after.webhooks }, { ...initialState.webhooks });
  assert.equal(JSON.stringify(after).includes('whsec_x'), false);
});

test('saved puts a new endpoint first and replaces a known one; deleted closes its attempts and its secret', () => {
  let s = run(connected, { type: 'webhooksLoaded', endpoints: [endpoint('we_a')] });
  s = reduce(s, { type: 'webhooksSaved', endpoint: endpoint('we_b'), text: 'Added.' });
  assert.deepEqual(s.webhooks.endpoints.map((e) => e.id), ['we_b', 'we_a']);
  s = reduce(s, { type: 'webhooksSaved', endpoint: endpoint('we_a', { status: 'disabled' }), text: 'Disabled.' });
  assert.deepEqual(s.webhooks.endpoints.map((e) => [e.id, e.status]), [['we_b', 'enabled'], ['we_a', 'disabled']]);
  assert.deepEqual(s.webhooks.notice, { ok: true, text: 'Disabled.' });
  s = run(connected, { type: 'webhooksLoaded', endpoints: [endpoint('we_a')] },
    { type: 'webhooksSecret', id: 'we_a', url: 'u', secret: 'whsec_y', why: 'rotated' },
    { type: 'webhooksAttemptsRequested', id: 'we_a' }, { type: 'webhooksAttemptsLoaded', id: 'we_a', items: [attempt(1, 'msg_1')], hasMore: false },
    { type: 'webhooksDeleted', id: 'we_a', text: 'Deleted.' });
  assert.deepEqual(s.webhooks.endpoints, []);
  assert.equal(s.webhooks.open, null);
  assert.equal(s.webhooks.secret, null);
  assert.deepEqual(s.webhooks.attempts.items, []);
});

test('attempts: a late answer for another endpoint is dropped; the message waited for is found', () => {
  let s = run(connected, { type: 'webhooksLoaded', endpoints: [endpoint('we_a'), endpoint('we_b')] },
    { type: 'webhooksAttemptsRequested', id: 'we_a', waitingFor: 'msg_2' });
  assert.equal(s.webhooks.attempts.status, 'loading');
  assert.equal(s.webhooks.attempts.waitingFor, 'msg_2');
  const before = s;
  s = reduce(s, { type: 'webhooksAttemptsLoaded', id: 'we_b', items: [attempt(9, 'msg_9')], hasMore: false });
  assert.equal(s, before, 'nothing changes for an endpoint not open');
  s = reduce(s, { type: 'webhooksAttemptsLoaded', id: 'we_a', items: [attempt(1, 'msg_1')], hasMore: false });
  assert.equal(s.webhooks.attempts.waitingFor, 'msg_2', 'still waiting');
  s = reduce(s, { type: 'webhooksAttemptsRequested', id: 'we_a' });
  assert.equal(s.webhooks.attempts.waitingFor, 'msg_2', 'a reload keeps waiting');
  s = reduce(s, { type: 'webhooksAttemptsLoaded', id: 'we_a', items: [attempt(2, 'msg_2'), attempt(1, 'msg_1')], hasMore: true });
  assert.equal(s.webhooks.attempts.waitingFor, null);
  assert.equal(s.webhooks.attempts.hasMore, true);
  // The older page is added after the newest.
  const older = reduce(s, { type: 'webhooksAttemptsLoaded', id: 'we_a', items: [attempt(0, 'msg_0')], hasMore: false, cursor: null, older: true });
  assert.deepEqual(older.webhooks.attempts.items.map((a) => a.id), ['att_2', 'att_1', 'att_0']);
  assert.equal(older.webhooks.attempts.hasMore, false);
  // Closing them, and a list that no longer has the open endpoint, closes the attempts.
  assert.equal(reduce(s, { type: 'webhooksOpen', id: null }).webhooks.attempts.items.length, 0);
  const gone = reduce(s, { type: 'webhooksLoaded', endpoints: [endpoint('we_b')] });
  assert.equal(gone.webhooks.open, null);
  // A refused list leaves nothing of the old one.
  const failed = reduce(s, { type: 'webhooksFailed', error: 'Could not reach the server.' });
  assert.deepEqual([failed.webhooks.status, failed.webhooks.endpoints, failed.webhooks.open], ['error', [], null]);
});

test('an action that changes nothing keeps the state', () => {
  const s = run(connected);
  assert.equal(reduce(s, { type: 'webhooksSecretClosed' }), s);
  assert.equal(reduce(s, { type: 'webhooksOpen', id: null }), s);
});

test('an attempt in words: delivered, failed with a status, failed with no answer, the next try', () => {
  assert.deepEqual(attemptWords(attempt(1, 'm')), { ok: true, title: 'Delivered: 200', detail: '' });
  const failed = attemptWords(attempt(2, 'm', { response_status: 500, next_attempt_at: null }));
  assert.deepEqual(failed, { ok: false, title: 'Failed: 500', detail: 'No more tries: resend it to try again.' });
  const timeout = attemptWords(attempt(3, 'm', { response_status: null, error: 'no answer within 15 s', next_attempt_at: '2026-11-27T07:00:00Z' }));
  assert.equal(timeout.title, 'Failed: no answer');
  assert.match(timeout.detail, /^no answer within 15 s Next try 27 Nov 2026, \d\d:\d\d:\d\d\.$/);
  assert.equal(attemptWords(attempt(4, 'm', { response_status: 302 })).title, 'Failed: 302');
});
