// nudge-rules/relay against the server on PostgreSQL (issue "The SDK relay"): PostgreSQL stopped
// in the middle of the load and started again. Meanwhile the server answers 503 with
// Retry-After (never 500), nothing is half written, and the client's own retries complete the
// data: every event sent is stored exactly once.
//   node --test pkg/test/relay-postgres.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createRelay } from '../relay.js';
import { readSession, startPostgres, startServer } from './server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PK = 'pk_test_relayPostgresKey0001';
const SK = 'sk_test_relayPostgresKey0001';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('PostgreSQL stopped mid-load and started again: 503s, no 500, every event stored once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'nudge-relay-pg-'));
  const pg = await startPostgres();
  const hash = (key) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
  copyFileSync(join(ROOT, 'examples', 'storefront.json'), join(dir, 'storefront.json'));
  writeFileSync(join(dir, 'sites.toml'), [
    '[[site]]', 'id = "shop"', 'config = "storefront.json"', `keys = ["${hash(SK)}"]`,
    `site_keys = ["${hash(PK)}"]`, '',
  ].join('\n'));
  const server = await startServer(['--sites', join(dir, 'sites.toml'), '--store', pg.url,
    '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  const errors = [];
  const relay = createRelay({
    endpoint: `${server.base}/v1/events`, siteKey: PK, flushIntervalMs: 50, maxBatch: 20,
    maxQueue: 100_000, onError: (e) => errors.push(e),
  });
  try {
    // About 7 s of load, up to 200 events a second; PostgreSQL down from 1 s to 5.5 s, longer
    // than the server waits for a database connection (3 s), so requests get 503.
    let sent = 0;
    const load = (async () => {
      const end = Date.now() + 7000;
      while (Date.now() < end) {
        relay.pageView(`/products/item-${sent}`);
        sent += 1;
        await sleep(5);
      }
    })();
    await sleep(1000);
    const acceptedBefore = relay.stats().accepted;
    pg.stop();
    await sleep(4500);
    pg.start();
    await load;
    assert.ok(acceptedBefore > 0, 'events were stored before the outage');
    assert.ok(errors.some((e) => e.status === 503), `503s while PostgreSQL was down: ${errors.map((e) => e.status ?? e.code).join(', ')}`);
    // The client retries after Retry-After, then with backoff: wait until everything is in.
    const deadline = Date.now() + 60_000;
    const delivered = () => relay.stats().accepted + relay.stats().duplicates;
    while ((relay.stats().queued > 0 || delivered() < sent) && Date.now() < deadline) {
      await sleep(100);
      if (relay.stats().queued > 0) await relay.flush();
    }
    const stats = relay.stats();
    // A batch stored while its answer was lost (PostgreSQL stopping mid-answer, or a slow
    // answer past the client's time-out) comes back as duplicates when sent again: every event
    // is accepted or a duplicate, and the session below holds each exactly once.
    assert.equal(stats.accepted + stats.duplicates, sent, `accepted ${stats.accepted} + duplicates ${stats.duplicates} of ${sent}; ${JSON.stringify(stats)}`);
    assert.equal(stats.dropped, 0);
    // A read connection kept from before the outage costs one failed read, a 503, as the
    // server documents (server/src/store/lease.rs): a reader retries, as after any 503.
    let read = await readSession(server.base, relay.sessionId, SK);
    for (let tries = 1; read.status === 503 && tries < 20; tries += 1) {
      await sleep(250);
      read = await readSession(server.base, relay.sessionId, SK);
    }
    const { status, body } = read;
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.data.events.length, sent, 'each event stored once: none lost, none twice');
    assert.equal(body.data.page_count, sent);
    const metrics = await (await fetch(`${server.admin}/metrics`)).text();
    const fiveHundreds = metrics.split('\n').filter((l) => l.startsWith('nudge_http_requests_total') && /status="5(?!03)\d\d"/.test(l));
    assert.deepEqual(fiveHundreds, [], 'no 5xx but 503');
    assert.match(metrics, /nudge_http_requests_total\{route="\/v1\/events",status="503"\} [1-9]/);
  } finally {
    await relay.close();
    await server.stop();
    pg.remove();
    rmSync(dir, { recursive: true, force: true });
  }
});
