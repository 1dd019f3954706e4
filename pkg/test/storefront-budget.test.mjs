// docs/contract/storefront.md's budget as a test: everything the storefront runtime downloads
// before its first decision, JavaScript and WASM, at most 90 KB gzip (the config aside), so that a
// build over it fails `make test`.
//
// Counted as scripts/bench-storefront.mjs counts it in Chromium (the responses' encoded bytes as
// transferred), without a browser: the two files the runtime loads, pkg/dist/storefront.js and its
// .wasm (a bundle of one module: nothing else is fetched before the first decision), requested
// from the test shop (examples/shop/serve.mjs, which serves them gzip -9 as a shop's CDN would)
// with a browser's Accept-Encoding, every byte read off the socket: status line, headers and
// compressed body. A KB is 1,024 bytes, as the benchmark prints it.
//
//   node --test pkg/test/storefront-budget.test.mjs   (after scripts/build-wasm.sh)
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startShop } from '../../examples/shop/serve.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = join(ROOT, 'pkg', 'dist');
/** docs/contract/storefront.md, "Budgets": 90 KB, a KB being 1,024 bytes. */
const BUDGET_BYTES = 90 * 1024;
const RUNTIME_FILES = ['/nudges/storefront.js', '/nudges/nudge_rules_bg.wasm'];

/** The bytes of one GET of `path` from `port` as they arrive, with `Accept-Encoding` as Chromium sends it. */
function transferred(port, path) {
  return new Promise((done, fail) => {
    const chunks = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', fail);
    socket.on('end', () => done(Buffer.concat(chunks)));
  });
}

test('the runtime\'s bytes before its first decision (JS and WASM, gzip, as transferred) are at most 90 KB', async (t) => {
  assert.ok(existsSync(join(DIST, 'storefront.js')), 'pkg/dist/storefront.js is missing: run scripts/build-wasm.sh');
  // A file more in dist/ would be a chunk the runtime loads too: it would have to be counted here.
  assert.deepEqual(readdirSync(DIST).sort(), ['nudge_rules_bg.wasm', 'storefront.js']);
  const shop = await startShop({ endpoint: 'http://127.0.0.1:9', siteKey: 'pk_test_storefrontBudgetKey1' });
  try {
    const port = Number(new URL(shop.url).port);
    let total = 0;
    for (const path of RUNTIME_FILES) {
      const bytes = await transferred(port, path);
      const head = bytes.subarray(0, bytes.indexOf('\r\n\r\n')).toString('latin1');
      assert.match(head, /^HTTP\/1\.1 200 /, `${path}: ${head}`);
      assert.match(head, /\r\ncontent-encoding: gzip\r\n/i, `${path} is served gzip: ${head}`);
      total += bytes.length;
      t.diagnostic(`${path}: ${bytes.length} bytes as transferred`);
    }
    t.diagnostic(`before the first decision: ${total} bytes, ${(total / 1024).toFixed(1)} KB of ${BUDGET_BYTES / 1024} KB`);
    assert.ok(total <= BUDGET_BYTES, `${total} bytes (${(total / 1024).toFixed(1)} KB) before the first decision, over docs/contract/storefront.md's ${BUDGET_BYTES / 1024} KB`);
  } finally {
    await shop.close();
  }
});
