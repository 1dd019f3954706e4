// The server binary (target/debug/nudge-rules-server, `cargo build -p nudge-rules-server`) and a
// PostgreSQL cluster of its own (Debian's postgresql, as the server's tests start it), for the
// relay client's tests against real parts.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The demo's secret key (`nudge-rules-server --demo`). */
export const SK = 'sk_test_nudgeRulesDemoKey0001';

const BINARY = join(ROOT, 'target', 'debug', process.platform === 'win32' ? 'nudge-rules-server.exe' : 'nudge-rules-server');

/** Starts the server; resolves with its API base and admin base once /readyz answers 200. */
export async function startServer(args, { binary = BINARY, signal = 'SIGKILL' } = {}) {
  assert.ok(
    existsSync(binary),
    `${binary} not found: run \`make server-bin\` first (make test-node and make test-browser do)`,
  );
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const addresses = await new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not print its addresses:\n${stdout}\n${stderr}`)), 30_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      const api = /API:\s+http:\/\/(\S+?)\/v1\/nudges\/preview/.exec(stdout);
      const admin = /admin:\s+http:\/\/(\S+)/.exec(stdout);
      if (api && admin) {
        clearTimeout(timer);
        resolvePromise({ api: api[1], admin: admin[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}):\n${stdout}\n${stderr}`));
    });
  });
  const base = `http://${addresses.api}`;
  const admin = `http://${addresses.admin}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${admin}/readyz`)).status === 200) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`/readyz never answered 200:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const stop = () => new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r(undefined);
    child.once('exit', () => r(undefined));
    child.kill(signal);
  });
  return { base, admin, address: addresses.api, child, stop, stderr: () => stderr };
}

/** `GET /v1/sessions/{id}` with the demo's secret key (or `key`). */
export async function readSession(base, id, key = SK) {
  const response = await fetch(`${base}/v1/sessions/${id}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

/** A free TCP port on the loopback. */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * A PostgreSQL cluster in a temp folder on a free port (initdb, pg_ctl), run as the `postgres`
 * user when this process is root: `{ url, stop(), start(), remove() }`.
 */
export async function startPostgres() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).map(Number).sort((a, b) => a - b) : [];
  assert.ok(versions.length > 0, 'PostgreSQL is not installed (no /usr/lib/postgresql/N): scripts/setup.sh installs it');
  const bin = join(root, String(versions.at(-1)), 'bin');
  const isRoot = process.getuid?.() === 0;
  const run = (program, args) => (isRoot
    ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { stdio: 'pipe' })
    : execFileSync(join(bin, program), args, { stdio: 'pipe' }));
  const dir = mkdtempSync(join(tmpdir(), 'nudge-pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  mkdirSync(data);
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(data, uid, gid);
  }
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=64MB`;
  const start = () => run('pg_ctl', ['-D', data, '-w', '-l', join(data, 'server.log'), '-o', options, 'start']);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  start();
  execFileSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'relay']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/relay`,
    start,
    stop,
    remove: () => {
      try { stop(); } catch { /* stopped already */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
