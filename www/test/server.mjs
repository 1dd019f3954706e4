// The static file server of `make demo` and the browser tests: serves the repository root on
// 127.0.0.1 with correct MIME types (`.wasm` as application/wasm, which streaming compilation
// needs) and, for a client that accepts it, compressed: brotli or gzip, chosen from
// Accept-Encoding, with `Content-Encoding` and `Vary: Accept-Encoding`. Compressed copies are made
// once per file version (path, size, mtime) and kept in memory; the `.wasm` files under pkg/wasm/
// are compressed when the server starts, so the first visitor does not wait for brotli.

import { createReadStream, promises as fs } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

/** Types worth compressing (PNG is compressed already). */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.map', '.css', '.json', '.wasm', '.svg', '.ts', '.md']);

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

const ENCODERS = {
  // Quality 11 (the maximum): made once per file version, so the cost is paid once.
  br: (buf) => brotli(buf, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: buf.length,
    },
  }),
  gzip: (buf) => gzip(buf, { level: 9 }),
};

/**
 * The encoding to send for an Accept-Encoding header: `br` before `gzip`, neither when the client
 * lists it with q=0 or not at all.
 */
export function pickEncoding(acceptEncoding = '') {
  const accepted = new Map();
  for (const part of String(acceptEncoding).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name, q ? Number(q.slice(2)) : 1);
  }
  for (const enc of ['br', 'gzip']) {
    const q = accepted.has(enc) ? accepted.get(enc) : accepted.get('*');
    if (q !== undefined && q > 0) return enc;
  }
  return null;
}

/** Compressed copies, keyed by `${file}\0${encoding}`, valid for one size and mtime. */
class CompressionCache {
  constructor() {
    this.entries = new Map();
  }

  get(file, stat, encoding) {
    const key = `${file}\u0000${encoding}`;
    const version = `${stat.size}:${stat.mtimeMs}`;
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.promise;
    const promise = fs.readFile(file).then((buf) => ENCODERS[encoding](buf));
    this.entries.set(key, { version, promise });
    promise.catch(() => this.entries.delete(key));
    return promise;
  }
}

/**
 * Starts the server on `port` (0: a free one); resolves to `{ url, close }`.
 * `compress: false` serves every file as it is on disk (the baseline of the first-load figures).
 */
export function serve(root = REPO_ROOT, port = 0, { compress = true } = {}) {
  const cache = new CompressionCache();
  const server = http.createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url, 'http://localhost');
      let file = path.normalize(path.join(root, decodeURIComponent(pathname)));
      if (!file.startsWith(root)) {
        res.writeHead(403).end();
        return;
      }
      let stat = await fs.stat(file).catch(() => null);
      if (stat && stat.isDirectory()) {
        if (!pathname.endsWith('/')) {
          res.writeHead(301, { Location: pathname + '/' }).end();
          return;
        }
        file = path.join(file, 'index.html');
        stat = await fs.stat(file).catch(() => null);
      }
      if (!stat || !stat.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
        return;
      }
      const ext = path.extname(file);
      const headers = {
        'Content-Type': TYPES[ext] || 'application/octet-stream',
        'Cache-Control': 'no-store',
      };
      const encoding = compress && COMPRESSIBLE.has(ext) ? pickEncoding(req.headers['accept-encoding']) : null;
      if (compress && COMPRESSIBLE.has(ext)) headers.Vary = 'Accept-Encoding';
      if (encoding) {
        const body = await cache.get(file, stat, encoding);
        res.writeHead(200, { ...headers, 'Content-Encoding': encoding, 'Content-Length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      res.writeHead(200, { ...headers, 'Content-Length': stat.size });
      if (req.method === 'HEAD') res.end();
      else createReadStream(file).pipe(res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    }
  });
  if (compress) warm(root, cache);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => {
          server.closeAllConnections?.();
          server.close(() => done());
        }),
      });
    });
  });
}

/** Compresses the WASM package's `.wasm` files in the background (brotli 11 takes a few seconds). */
function warm(root, cache) {
  const dir = path.join(root, 'pkg', 'wasm');
  fs.readdir(dir).then(async (names) => {
    for (const name of names.filter((n) => n.endsWith('.wasm'))) {
      const file = path.join(dir, name);
      const stat = await fs.stat(file);
      for (const enc of Object.keys(ENCODERS)) await cache.get(file, stat, enc).catch(() => {});
    }
  }, () => {});
}

// `node www/test/server.mjs PORT`: serve the repository root until interrupted (make demo).
// Not when the test runner picks this file up (`node --test www/test/`): it would never exit.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && !process.env.NODE_TEST_CONTEXT) {
  const port = Number(process.argv[2] ?? 8000);
  serve(REPO_ROOT, port).then(
    ({ url }) => console.log(`serving ${REPO_ROOT} on ${url} (brotli or gzip where the browser accepts it)`),
    (err) => {
      console.error(`cannot listen on 127.0.0.1:${port}: ${err.message} (set PORT to another port)`);
      process.exit(1);
    },
  );
}
