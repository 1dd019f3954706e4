// Builds pkg/dist/storefront.js: the storefront runtime (pkg/storefront-tag.js, with
// pkg/storefront.js, pkg/storefront-ui.js, pkg/relay.js and the slim engine's wasm-bindgen glue)
// bundled by esbuild into one self-contained ES module, and the engine's .wasm copied beside it
// (the glue finds it next to the module). Run by scripts/build-wasm.sh after pkg/wasm/ is built;
// prints the sizes raw and gzip -9.
//
//   node scripts/build-storefront.mjs
import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PKG = join(ROOT, 'pkg');
const OUT = join(PKG, 'dist');
const WASM = join(PKG, 'wasm', 'slim', 'nudge_rules_bg.wasm');

try {
  statSync(WASM);
} catch {
  console.error(`build-storefront: ${WASM} is missing; run scripts/build-wasm.sh first`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
await build({
  entryPoints: [join(PKG, 'storefront-tag.js')],
  outfile: join(OUT, 'storefront.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(WASM, join(OUT, 'nudge_rules_bg.wasm'));
for (const name of ['storefront.js', 'nudge_rules_bg.wasm']) {
  const bytes = readFileSync(join(OUT, name));
  console.log(`== pkg/dist/${name}: ${bytes.length} bytes raw, ${gzipSync(bytes, { level: 9 }).length} bytes gzip -9`);
}
