// The server binary in the browser tests (issue 22): start target/debug/nudge-rules-server on
// free ports, import sessions into its store, call it as another program would. Used by
// connected.test.mjs and backtest-perf.test.mjs; the start itself is pkg/test/server.mjs's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { startServer as startBinary } from '../../pkg/test/server.mjs';
import { ROOT } from './helpers.mjs';

export const BINARY = path.join(ROOT, 'target', 'debug', 'nudge-rules-server');
const DAY = 86_400_000;

/** A key's SHA-256 in hex, as the sites file lists it (`sha256:` before it). */
export const sha = (key) => createHash('sha256').update(key).digest('hex');

/**
 * Sessions (JSONL, API document 2.2) moved in time so that the latest ends `endAgoMs` before now;
 * `copies` > 1 repeats them with new ids, copy k `(k % 20) * spreadMs` further back (a bigger
 * store; the 250 samples span 7 days, so with a day's spread all are within the last 27 days).
 */
export function movedSessions(text, { endAgoMs, copies = 1, spreadMs = DAY }) {
  const sessions = text.trim().split('\n').map((l) => JSON.parse(l));
  const latest = Math.max(...sessions.map((s) => Date.parse(s.ended_at)));
  const out = [];
  for (let k = 0; k < copies; k++) {
    const shift = Date.now() - endAgoMs - latest - (k % 20) * spreadMs;
    const at = (iso) => new Date(Date.parse(iso) + shift).toISOString();
    sessions.forEach((s, i) => {
      const copy = {
        ...s,
        started_at: s.started_at && at(s.started_at),
        ended_at: at(s.ended_at),
        events: s.events.map((e) => ({ ...e, occurred_at: at(e.occurred_at) })),
        nudges: (s.nudges ?? []).map((n) => {
          const m = { ...n, shown_at: at(n.shown_at) };
          if (k > 0) delete m.nudge_id;
          return m;
        }),
      };
      if (k > 0) copy.id = `sess_${(k * 100_000 + i).toString(16).padStart(12, '0')}`;
      out.push(JSON.stringify(copy));
    });
  }
  return `${out.join('\n')}\n`;
}

/**
 * Starts `binary` with `args` on free loopback ports (pkg/test/server.mjs); resolves to
 * `{ base, admin, stop }` once /readyz says 200; `stop` drains it with SIGTERM.
 */
export function startServer(binary, args) {
  return startBinary([...args, '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], { binary, signal: 'SIGTERM' });
}

/** Runs the binary's `import` of `sessions` (JSONL text) into `site`'s test mode. */
export function importSessions(binary, { sites, store, site, sessions, dir }) {
  const file = path.join(dir, `${site}-sessions.jsonl`);
  writeFileSync(file, sessions);
  const r = spawnSync(binary, ['import', '--sites', sites, '--store', store, '--site', site, '--mode', 'test', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `import failed:\n${r.stdout}\n${r.stderr}`);
}

/** A call to the server as another program makes it: `{ status, json, headers }`. */
export async function api(base, method, route, { key, body, headers = {} }) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}
