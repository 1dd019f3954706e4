// Builds pkg/dist/storefront.js: the storefront runtime (pkg/storefront/tag.js, with
// pkg/storefront.js and its parts in pkg/storefront/, pkg/relay.js and the slim engine's
// wasm-bindgen glue) bundled by esbuild into one self-contained ES module, and the engine's .wasm copied beside it
// (the glue finds it next to the module). Run by scripts/build-wasm.sh after pkg/wasm/ is built;
// prints the sizes raw and gzip -9.
//
// Every byte counts against docs/contract/storefront.md's 90 KB before the first decision
// (pkg/test/storefront-budget.test.mjs): esbuild bundles and minifies, then terser compresses the
// bundle again (two passes; about 4 % fewer gzip bytes than esbuild's minifier alone, which sees
// one module at a time), and the nudges' style sheet (the `CSS` template of pkg/storefront/ui.js)
// loses its layout whitespace on the way (`compactCss`: a minifier leaves the text of a string).
//
//   node scripts/build-storefront.mjs
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { build } from 'esbuild';
import { minify } from 'terser';

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
/**
 * `css` (the text of a CSS template literal, `${...}` expressions in it) without its layout
 * whitespace: runs of white space become one space, and none is kept around `{ } ; ,` or after
 * `:`. The expressions and the space beside them (`calc(${a} - 4px)`, `${a} ${b}`) stay as written.
 */
function compactCss(css) {
  return css.split(/(\$\{[^}]*\})/).map((part, i) => (i % 2 ? part : part
    .replace(/\s+/g, ' ')
    .replace(/ ?([{};,]) ?/g, '$1')
    .replace(/: /g, ':'))).join('').trim();
}

/** The esbuild plugin that compacts ui.js's `CSS` template (`const CSS = \`...\`;`). */
const compactStyles = {
  name: 'compact-css',
  setup(b) {
    b.onLoad({ filter: /[\\/]storefront[\\/]ui\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const open = 'const CSS = `';
      const at = source.indexOf(open);
      const end = source.indexOf('`;', at);
      if (at < 0 || end < 0) throw new Error(`build-storefront: no ${open}...\`; in ${args.path}`);
      return { contents: `${source.slice(0, at + open.length)}${compactCss(source.slice(at + open.length, end))}${source.slice(end)}`, loader: 'js' };
    });
  },
};

mkdirSync(OUT, { recursive: true });
const bundled = await build({
  entryPoints: [join(PKG, 'storefront', 'tag.js')],
  write: false,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [compactStyles],
});
const compressed = await minify(bundled.outputFiles[0].text, {
  module: true,
  ecma: 2020,
  compress: { passes: 2 },
  mangle: true,
  format: { comments: false },
});
writeFileSync(join(OUT, 'storefront.js'), compressed.code);
copyFileSync(WASM, join(OUT, 'nudge_rules_bg.wasm'));
for (const name of ['storefront.js', 'nudge_rules_bg.wasm']) {
  const bytes = readFileSync(join(OUT, name));
  console.log(`== pkg/dist/${name}: ${bytes.length} bytes raw, ${gzipSync(bytes, { level: 9 }).length} bytes gzip -9`);
}
