#!/usr/bin/env node
// The `prepack` check of the nudge-rules package (pkg/package.json): `npm pack` and `npm publish`
// refuse to pack a package whose main entry cannot load. index.js imports the wasm-bindgen glue
// and modules in wasm/, which are generated (`make wasm`, scripts/build-wasm.sh) and not in git:
// without them the packed package would fail at its first import.
//
//   node scripts/check-wasm.mjs [WASM_DIR]    WASM_DIR defaults to this package's wasm/
//
// Exit 0 when every wasm/ file of package.json's "files" is there and not empty; otherwise 1,
// naming the missing files and `make wasm`.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const wasmDir = resolve(process.argv[2] ?? join(pkg, 'wasm'));
const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
const wanted = (manifest.files ?? []).filter((f) => f.startsWith('wasm/')).map((f) => f.slice('wasm/'.length));

const missing = wanted.filter((file) => {
  try {
    const stat = statSync(join(wasmDir, file));
    return !stat.isFile() || stat.size === 0;
  } catch {
    return true;
  }
});

if (wanted.length === 0 || missing.length > 0) {
  const list = (missing.length > 0 ? missing : ['(package.json "files" lists no wasm/ file)']).map((f) => `  wasm/${f}`).join('\n');
  process.stderr.write(
    `nudge-rules: the WebAssembly build is missing from ${wasmDir}:\n${list}\n`
    + 'The package\'s main entry (index.js) imports these files, so a package without them cannot load.\n'
    + 'Build them first with `make wasm` (scripts/build-wasm.sh) from the repository root, then pack again; nothing was packed.\n',
  );
  process.exit(1);
}
