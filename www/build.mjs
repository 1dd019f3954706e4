// Bundles the editor with esbuild (npm): www/src/app.js and its Web Worker www/src/worker.js,
// with CodeMirror and the engine's JS glue, into www/dist/ (build output, gitignored). The `.wasm`
// itself stays in pkg/wasm/ and is fetched with streaming compilation by the worker.
//
//   node www/build.mjs            build once (make demo and the browser tests run this)
//   node www/build.mjs --watch    rebuild on every change while developing
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import * as esbuild from 'esbuild';

const WWW = path.dirname(fileURLToPath(import.meta.url));

export const OPTIONS = {
  entryPoints: { app: path.join(WWW, 'src/app.js'), worker: path.join(WWW, 'src/worker.js') },
  outdir: path.join(WWW, 'dist'),
  bundle: true,
  format: 'esm',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  minify: process.env.NUDGE_NO_MINIFY !== '1',
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
};

/** Builds www/dist/; resolves to esbuild's result (with its metafile). */
export async function build() {
  const glue = path.join(WWW, '..', 'pkg', 'wasm', 'nudge_rules.js');
  if (!existsSync(glue)) throw new Error(`${glue} is missing: build the WASM package first (make wasm)`);
  return esbuild.build(OPTIONS);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--watch')) {
    const ctx = await esbuild.context(OPTIONS);
    await ctx.watch();
    console.log('esbuild: watching www/src/ (Ctrl+C stops)');
  } else {
    const started = performance.now();
    const result = await build();
    const outputs = Object.entries(result.metafile.outputs)
      .filter(([file]) => file.endsWith('.js'))
      .map(([file, o]) => `${path.basename(file)} ${(o.bytes / 1024).toFixed(0)} KiB`);
    console.log(`== www/dist/: ${outputs.join(', ')} (${Math.round(performance.now() - started)} ms)`);
  }
}
